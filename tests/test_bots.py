"""The strong bots and their levels: legal play from a read-only view, and chosen decisions."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import pytest

from sahrat.bots import conquian_bot, konkan_bot, simple_conquian, simple_konkan
from sahrat.bots.konkan_view import KonkanSeat
from sahrat.bots.levels import LEVELS, bot_for
from sahrat.rules import conquian, konkan
from sahrat.rules.cards import parse_card, parse_cards
from sahrat.rules.options import ConquianOptions, KonkanOptions

Player = Callable[[Any], Any]


def frozen(data: Any) -> Any:
    """A deep read-only copy of a view: mappings become proxies, lists tuples."""
    if isinstance(data, Mapping):
        return MappingProxyType({key: frozen(value) for key, value in data.items()})
    if isinstance(data, list):
        return tuple(frozen(item) for item in data)
    return data


def play(engine: Any, state: Any, seats: list[Player], limit: int = 20_000) -> tuple[Any, int]:
    """Play to the end; every action must be legal (``apply`` raises otherwise)."""
    decisions = 0
    while not state.over and decisions < limit:
        seat = engine.to_act(state)
        view = engine.view(state, seat)
        assert "hands" not in view and "stock" not in view
        action = seats[seat](frozen(view))
        state, _ = engine.apply(state, action)
        decisions += 1
    assert state.over
    return state, decisions


# --- legality over whole matches ------------------------------------------------------------


@pytest.mark.parametrize(
    ("game", "values", "seed"),
    [
        ("konkan", {}, "bots-a"),
        ("konkan", {"players": 2, "rounds": 2}, "bots-b"),
        ("konkan71", {"players": 3, "rounds": 2}, "bots-c"),
        (
            "konkan",
            {
                "rounds": 2,
                "swapped_joker_must_be_laid": True,
                "escalating_opening": True,
                "hand_exempt_from_threshold": True,
                "ace_value": "low_1_else_10",
                "hand_values": "joker_10_ace_10",
            },
            "bots-d",
        ),
    ],
)
def test_konkan_bot_plays_legally_from_a_read_only_view(
    game: str, values: dict[str, Any], seed: str
) -> None:
    options = KonkanOptions.for_game(game, values)
    seats: list[Player] = [simple_konkan.act] * options.players
    seats[0] = konkan_bot.KonkanBot(strict=True).act
    seats[1] = konkan_bot.act  # stateless
    if options.players > 2:
        seats[2] = konkan_bot.KonkanBot(strict=True).act
    state, decisions = play(konkan, konkan.new_game(options, seed), seats)
    assert state.over  # whole matches: every round's decisions were legal
    assert decisions > 50
    assert not konkan.check_invariants(state)


def test_conquian_bot_plays_legally_from_a_read_only_view() -> None:
    decisions = 0
    for index in range(12):
        seats: list[Player] = [simple_conquian.act, simple_conquian.act]
        seats[index % 2] = conquian_bot.ConquianBot(strict=True).act
        if index % 3 == 0:
            seats[1 - index % 2] = conquian_bot.act  # stateless against the stateful one
        state = conquian.new_game(ConquianOptions(), f"bots-{index}")
        _, count = play(conquian, state, seats)
        decisions += count
    assert decisions > 300


def test_levels_give_a_fresh_player_per_seat() -> None:
    assert set(LEVELS) == {"simple", "strong", "expert"}
    for game in ("konkan", "konkan71", "conquian"):
        for level in LEVELS:
            assert callable(bot_for(game, level))
    one, two = bot_for("konkan", "strong"), bot_for("konkan", "strong")
    assert getattr(one, "__self__", None) is not getattr(two, "__self__", None)
    with pytest.raises(ValueError, match="'grandmaster'"):
        bot_for("konkan", "grandmaster")
    with pytest.raises(ValueError, match="'poker'"):
        bot_for("poker", "strong")


def test_fallback_is_legal_when_the_view_is_strange() -> None:
    state = konkan.new_game(KonkanOptions(), "fallback")
    seat = konkan.to_act(state)
    assert seat is not None
    action = konkan_bot.fallback(konkan.view(state, seat))
    assert konkan.check_action(state, action) is None


# --- Konkan scenarios ------------------------------------------------------------------------


def konkan_game(
    hands: dict[int, str], stock: str = "", *, players: int = 4, dealer: int = 3, **values: Any
) -> konkan.KonkanState:
    options = KonkanOptions.for_game("konkan", {"players": players, **values})
    order = konkan.stacked_deck(
        {seat: parse_cards(cards) for seat, cards in hands.items()},
        parse_cards(stock),
        players=players,
        dealer=dealer,
    )
    return konkan.new_game(options, "scenario", decks=[order], first_dealer=dealer)


def test_opens_when_the_opening_is_worth_it() -> None:
    # 60 in two sets and nine loose cards: far from a Hand, so it opens now
    state = konkan_game({0: "KS KH KD QS QH QD 2C 5H 9S 4D 7C JD 3S 8H TC"})
    action = konkan_bot.KonkanBot(strict=True).act(konkan.view(state, 0))
    assert isinstance(action, konkan.LayDown)
    assert sorted(len(meld) for meld in action.melds) == [3, 3]
    assert konkan.check_action(state, action) is None


def test_keeps_an_opening_back_when_a_hand_is_near() -> None:
    # 12 cards in melds, 3 loose, nobody open, deep stock: it waits for a Hand
    state = konkan_game({0: "2S 3S 4S 7H 7D 7C KS KH KD 8H 8D 8C 5C JH 2D"})
    action = konkan_bot.KonkanBot(strict=True).act(konkan.view(state, 0))
    assert isinstance(action, konkan.Discard)
    assert konkan.check_action(state, action) is None


def test_does_not_feed_the_next_player_a_lay_off() -> None:
    # two players: seat 0 opens with kings and queens; seat 1 (the bot) holds KC,
    # its only card without a partner, but seat 0 could take it onto the kings
    state = konkan_game(
        {
            0: "KS KH KD QS QH QD 4C 9D 3S 6H AD 7C JS TD 2D",
            1: "2H 3H 6D 7D 9C TC 5S 5H JH JD 8S 8H KC 2S",
        },
        "3D",
        players=2,
        dealer=1,
    )
    opening = (tuple(parse_cards("KS KH KD")), tuple(parse_cards("QS QH QD")))
    state, _ = konkan.apply(state, konkan.LayDown(0, opening))
    state, _ = konkan.apply(state, konkan.Discard(0, parse_card("4C")))
    bot = konkan_bot.KonkanBot(strict=True)
    draw = bot.act(konkan.view(state, 1))
    assert draw == konkan.Draw(1)
    state, _ = konkan.apply(state, draw)
    action = bot.act(konkan.view(state, 1))
    assert isinstance(action, konkan.Discard)
    assert action.card != parse_card("KC")
    assert konkan.check_action(state, action) is None
    # with nobody to feed, KC (no partner) is the card it lets go
    alone = KonkanSeat(konkan.view(state, 1))
    alone.opened[0] = False
    found = konkan_bot.best_melds(alone.hand)
    choice = konkan_bot.choose_discard(alone, konkan_bot.Memory(), found)
    assert choice == konkan.Discard(1, parse_card("KC"))


def test_commits_to_konkan_one_card_away_in_the_last_round_when_behind() -> None:
    konkan_hand = "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS AH AD AC 5D"
    round_two = "2H 3H 4H 5H 6H 8H 9H TH JH KS KD KC KH' 3C 9D"  # 7H missing
    options = KonkanOptions.for_game("konkan", {"rounds": 2})
    first = konkan.stacked_deck({0: parse_cards(konkan_hand)}, players=4, dealer=3)
    second = konkan.stacked_deck({1: parse_cards(round_two)}, players=4, dealer=0)
    state = konkan.new_game(options, "commit", decks=[first, second], first_dealer=3)
    melds = (tuple(parse_cards(konkan_hand)[:11]), tuple(parse_cards("AH AD AC")))
    state, _ = konkan.apply(state, konkan.LayDown(0, melds))
    state, _ = konkan.apply(state, konkan.Discard(0, parse_card("5D")))
    assert state.round == 2 and state.is_last_round and konkan.to_act(state) == 1
    assert state.totals[1] > state.totals[0]  # seat 1 is behind
    bot = konkan_bot.KonkanBot(strict=True)
    action = bot.act(konkan.view(state, 1))
    assert action == konkan.Commit(1)
    state, _ = konkan.apply(state, action)
    follow = bot.act(konkan.view(state, 1))  # committed: it discards a loose card
    assert isinstance(follow, konkan.Discard)
    assert follow.card in parse_cards("3C 9D")
    assert konkan.check_action(state, follow) is None


def test_konkan_distance() -> None:
    assert konkan_bot.konkan_distance(parse_cards("2S 3S 4S 5S 6S 7S 8S 9S TS JS KH KD KC KS")) == 0
    assert konkan_bot.konkan_distance(parse_cards("2S 3S 4S 5S 6S 8S 9S TS JS KH KD KC KS")) == 1
    assert konkan_bot.konkan_distance(parse_cards("2S 3S 4S 5S 6S JK 8S 9S TS JS KH KD KC KS")) == 0


def test_konkan_distance_counts_a_joker_standing_in_the_run_for_a_card_the_set_uses() -> None:
    # AC…8C JK TC JC beside 9H 9C' JK': the hand is a Konkan already
    hand = parse_cards("3C JK 7C 6C 4C' 2C 5C' 8C' AC' JC 9H TC 9C' JK'")
    assert konkan_bot.konkan_distance(hand) == 0


def lone_joker_and_a_fitting_discard() -> konkan.KonkanState:
    """Seat 0 has opened and holds only JK'; the card on the pile, 9S', fits its run."""
    state = konkan_game({0: "2S 3S 4S 5S 6S 7S 8S KH KD KC QH QD QC JK' 5D", 3: "9S'"}, "2D 3D 4D")
    opening = tuple(tuple(parse_cards(meld)) for meld in ("2S 3S 4S 5S 6S 7S 8S", "KH KD KC"))
    state, _ = konkan.apply(state, konkan.LayDown(0, (*opening, tuple(parse_cards("QH QD QC")))))
    state, _ = konkan.apply(state, konkan.Discard(0, parse_card("5D")))
    for seat in (1, 2, 3):  # the others draw and throw; seat 3 throws 9S'
        state, _ = konkan.apply(state, konkan.Draw(seat))
        thrown = parse_card("9S'") if seat == 3 else state.drawn
        assert thrown is not None
        state, _ = konkan.apply(state, konkan.Discard(seat, thrown))
    assert konkan.to_act(state) == 0 and state.phase is konkan.Phase.DRAW
    assert state.hands[0] == parse_cards("JK'") and state.discard[-1] == parse_card("9S'")
    return state


@pytest.mark.parametrize("level", sorted(LEVELS))
def test_a_lone_joker_does_not_take_a_card_it_can_only_lay_off(level: str) -> None:
    # taking 9S' onto the run would leave nothing but the joker to discard
    state = lone_joker_and_a_fitting_discard()
    action = bot_for("konkan", level)(konkan.view(state, 0))
    assert konkan.check_action(state, action) is None, action
    assert action == konkan.Draw(0)


KONKAN_NEEDING_A_STAND_IN = "3C JK 7C 6C 4C' 2C 5C' 8C' QD AC' JC 9H TC 9C' JK'"


@pytest.mark.parametrize(
    "player",
    [simple_konkan.act, konkan_bot.KonkanBot(strict=True).act, konkan_bot.act],
    ids=["simple", "strong", "strong-stateless"],
)
def test_a_committed_player_holding_a_konkan_lays_it(player: Player) -> None:
    # the last (only) round; the opener commits, then holds AC…8C JK TC JC + 9H 9C' JK' + QD
    state = konkan_game({0: KONKAN_NEEDING_A_STAND_IN}, rounds=1)
    state, _ = konkan.apply(state, konkan.Commit(0))
    action = player(konkan.view(state, 0))
    assert isinstance(action, konkan.LayDown), action
    state, _ = konkan.apply(state, action)
    assert state.hands[0] == parse_cards("QD")
    state, events = konkan.apply(state, konkan.Discard(0, parse_card("QD")))
    finish = [event for event in events if event.type == "round_end"]
    assert finish and finish[0].public["finish"] == "committed_konkan"
    assert state.over  # the last round: the Konkan wins the match


# --- Conquian scenarios ------------------------------------------------------------------------


def conquian_game(hand0: str, hand1: str, stock: str) -> conquian.ConquianState:
    order = conquian.stacked_deck(
        {0: parse_cards(hand0), 1: parse_cards(hand1)}, parse_cards(stock), dealer=1
    )
    return conquian.new_game(seed="bot", decks=[order], first_dealer=1)


def cstep(state: conquian.ConquianState, action: conquian.Action) -> conquian.ConquianState:
    new, _ = conquian.apply(state, action)
    return new


def test_conquian_bot_never_forces_a_winning_card() -> None:
    state = conquian_game("AS 2S 3S 4S 5S 6S 7S AH AD KD", "2H 3D 4C 6H 7D JC KS QC 5D 3C", "AC JS")
    state = cstep(
        state,
        conquian.Take(
            0, (tuple(parse_cards("AS AH AD AC")), tuple(parse_cards("2S 3S 4S 5S 6S 7S")))
        ),
    )
    state = cstep(state, conquian.Discard(0, parse_card("KD")))
    state = cstep(cstep(cstep(state, conquian.Refuse(1)), conquian.Pass(1)), conquian.Refuse(0))
    assert state.phase is conquian.Phase.FORCE
    action = conquian_bot.ConquianBot(strict=True).act(conquian.view(state, 1))
    assert action == conquian.DeclineForce(1)  # JS would be seat 0's eleventh card


def test_conquian_bot_takes_a_winning_card() -> None:
    state = conquian_game("AS 2S 3S 4S 5S 6S 7S AH AD AC", "2H 3D 4C 6H 7D JC KD QH 5H 3C", "JS")
    action = conquian_bot.ConquianBot(strict=True).act(conquian.view(state, 0))
    assert isinstance(action, conquian.Take)
    assert sum(len(meld) for meld in action.melds) == 11
    assert conquian.check_action(state, action) is None


def test_conquian_bot_forces_a_big_hand() -> None:
    state = conquian_game("5S 5H QS AS 3C 7C KD 2C JH 4C", "7S JS KS AH 3H 6D QC 2D 4H 6C", "5D 5C")
    state = cstep(state, conquian.Take(0, (tuple(parse_cards("5S 5H 5D")),)))
    state = cstep(state, conquian.Discard(0, parse_card("KD")))
    state = cstep(cstep(cstep(state, conquian.Refuse(1)), conquian.Pass(1)), conquian.Refuse(0))
    action = conquian_bot.ConquianBot(strict=True).act(conquian.view(state, 1))
    assert action == conquian.Force(1)  # seat 0 must lay 5C and break a 7-card hand
