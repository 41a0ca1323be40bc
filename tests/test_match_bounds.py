"""Every match ends, and its pot is paid out whole (docs/rules.md §1.3, §1.9, §2.6).

Matches whose seats are all played by the turn timer used to run forever: nobody
opens in Konkan, so every round is void, the totals stay tied and extra rounds
follow one another; in Conquian the timer refuses every card, so every deal is a
draw. Two committed Konkan players who take the discard back and throw it again
never touch the stock. The bounds: ``max_round_turns`` turns a round,
``max_extra_rounds`` extra rounds, ``max_drawn_deals`` drawn deals; then tied
places share their prizes (``sahrat.store.ledger.payout_shares``).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from match_bounds_support import play, problems
from sahrat.rules import conquian, konkan
from sahrat.rules.cards import parse_cards
from sahrat.rules.errors import RedealRefused
from sahrat.rules.konkan import ClaimRedeal, Commit, Discard, Finish, TakeDiscard
from sahrat.rules.options import ConquianOptions, KonkanOptions
from sahrat.store.ledger import payout_shares

# --- the turn timer alone ------------------------------------------------------------------


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("stake", [0, 10])
def test_a_konkan_match_of_timers_alone_ends_after_its_extra_rounds(
    players: int, stake: int
) -> None:
    """Nobody opens: every round is void and everybody scores 100, so every total is
    tied. After ``rounds`` + ``max_extra_rounds`` rounds the match ends, all tied first,
    with no winner; a coin table's pot is split evenly."""
    values = {"players": players, "rounds": 1, "max_extra_rounds": 2, "stake": stake}
    played = play("konkan", values, f"timers-{players}-{stake}", [True] * players)
    assert problems(played) == []
    assert played.rounds == 3
    assert played.places == [1] * players
    assert played.winner is None
    if stake:
        assert played.shares == dict.fromkeys(range(players), stake)


def test_a_conquian_match_of_timers_alone_ends_at_its_last_drawn_deal() -> None:
    """The timer refuses and passes every card: every deal is drawn. The match ends with
    its ``max_drawn_deals``-th draw, 0 to 0: a tie, the pot split."""
    played = play("conquian", {"max_drawn_deals": 4, "stake": 25}, "timers", [True, True])
    assert problems(played) == []
    assert played.rounds == 4
    assert played.winner is None
    assert played.shares == {0: 25, 1: 25}


def test_conquian_leader_wins_at_the_last_drawn_deal() -> None:
    """A simple player against the timer wins deals; if the drawn deals run out first,
    the player with more points wins the match (never a tie when points differ)."""
    for seed in range(20):
        options = {"max_drawn_deals": 1, "wins_needed": 5, "stake": 7}
        played = play("conquian", options, f"lead-{seed}", [False, True])
        assert problems(played) == []
        if played.winner is not None:
            assert played.shares == {played.winner: 14}
        else:
            assert played.shares == {0: 7, 1: 7}


# --- the turn limit of a Konkan round ----------------------------------------------------


def _last_round(options: KonkanOptions) -> konkan.KonkanState:
    return konkan.new_game(options, "turn-limit", first_dealer=1)


def test_committed_players_recycling_the_discard_hit_the_turn_limit() -> None:
    """Two committed players (§1.7) may take the discard alone and throw it back: the
    stock never moves, so the reshuffle limit never comes. The round ends void at its
    ``max_round_turns``-th turn, scored like a stock exhaustion: both never opened, 100."""
    options = KonkanOptions(players=2, rounds=1, max_round_turns=100, max_extra_rounds=0)
    state = _last_round(options)
    opener = state.turn
    stock = len(state.stock)
    state, _ = konkan.apply(state, Commit(opener))
    state, _ = konkan.apply(state, Discard(opener, state.hands[opener][0]))
    state, _ = konkan.apply(state, Commit(state.turn))
    turns, events = 1, []
    while not state.over:
        seat = state.turn
        top = state.discard[-1]
        state, _ = konkan.apply(state, TakeDiscard(seat))
        state, events = konkan.apply(state, Discard(seat, top))
        turns += 1
        assert len(state.stock) == stock or state.over
    assert turns == 100
    assert [e.type for e in events][:3] == ["discard", "turn_limit", "round_end"]
    result = state.results[-1]
    assert (result.finish, result.winner, result.scores) == (Finish.VOID, None, (100, 100))
    assert state.places == (1, 1) and state.match_winner is None


def test_redeals_count_as_turns() -> None:
    """A redeal (option) counts as a turn, and none is allowed once the round has no turn
    left: stacked deals that always give the opener a redeal hand cannot loop."""
    pairs = parse_cards("AS AS' 2S 2S' 3S 3S' 4S 4S'")  # 4 identical pairs
    options = KonkanOptions(players=2, redeal=True, max_round_turns=100)
    deck = konkan.stacked_deck({0: pairs}, players=2, dealer=1)
    state = konkan.new_game(options, "redeal", decks=[deck] * 120, first_dealer=1)
    claims = 0
    while True:
        try:
            state, _ = konkan.apply(state, ClaimRedeal(0))
        except RedealRefused as refused:
            assert "turn limit" in str(refused)
            break
        claims += 1
    assert claims == 99 and state.round_turns == 99
    assert konkan.check_invariants(state) == []


def test_the_bounds_are_table_options_with_ranges() -> None:
    assert KonkanOptions().max_extra_rounds == 3
    assert KonkanOptions().max_round_turns == 1000
    assert ConquianOptions().max_drawn_deals == 5
    for bad in (
        {"max_extra_rounds": 6},
        {"max_round_turns": 99},
        {"max_round_turns": 1001},
        {"rounds": 21},
    ):
        with pytest.raises(Exception, match=repr(next(iter(bad)))):
            KonkanOptions.from_dict(bad)
    for bad in ({"max_drawn_deals": 0}, {"max_drawn_deals": 21}):
        with pytest.raises(Exception, match="max_drawn_deals"):
            ConquianOptions.from_dict(bad)


# --- random mixes of timers and players -----------------------------------------------------


@st.composite
def tables(draw: st.DrawFn) -> tuple[str, dict[str, Any], list[bool]]:
    game = draw(st.sampled_from(["konkan", "konkan71", "conquian"]))
    stake = draw(st.sampled_from([0, 1, 7, 10, 33]))
    if game == "conquian":
        values: dict[str, Any] = {
            "stake": stake,
            "wins_needed": draw(st.integers(1, 3)),
            "max_drawn_deals": draw(st.integers(1, 3)),
            "double_after_draw": draw(st.booleans()),
        }
        players = 2
    else:
        players = draw(st.integers(2, 4))
        values = {
            "players": players,
            "stake": stake,
            "rounds": draw(st.integers(1, 2)),
            "max_extra_rounds": draw(st.integers(0, 2)),
            "max_reshuffles": draw(st.integers(0, 2)),
            "max_round_turns": draw(st.integers(100, 250)),
        }
    timers = draw(st.lists(st.booleans(), min_size=players, max_size=players))
    return game, values, timers


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table=tables(), seed=st.integers(0, 10**6))
def test_every_match_of_timers_and_players_ends_within_its_bound(
    table: tuple[str, dict[str, Any], list[bool]], seed: int
) -> None:
    game, values, timers = table
    played = play(game, values, f"mix-{seed}", timers)
    assert problems(played) == [], (game, values, timers, seed)


# --- payouts --------------------------------------------------------------------------------


def test_tied_places_share_their_prizes() -> None:
    """docs/rules.md §1.9: tied seats share the prizes of the positions they take; the
    odd coins go one each to the tied seats in seat order."""
    assert payout_shares(30, 3, [1, 2, 2], 0) == {0: 21, 1: 5, 2: 4}  # 70 % + 30 % / 2
    assert payout_shares(30, 3, [1, 1, 3], None) == {0: 15, 1: 15}  # 100 % / 2
    assert payout_shares(40, 4, [1, 1, 3, 4], None) == {0: 20, 1: 20}
    assert payout_shares(40, 4, [2, 1, 2, 2], 1) == {1: 28, 0: 4, 2: 4, 3: 4}
    assert payout_shares(40, 4, [1, 1, 1, 1], None) == {0: 10, 1: 10, 2: 10, 3: 10}
    assert payout_shares(33, 3, [1, 1, 1], None) == {0: 11, 1: 11, 2: 11}
    assert payout_shares(31, 3, [1, 1, 1], None) == {0: 11, 1: 10, 2: 10}
    assert payout_shares(20, 2, [1, 1], None) == {0: 10, 1: 10}
    assert payout_shares(20, 2, None, None) == {0: 10, 1: 10}  # a tied Conquian match
    assert payout_shares(20, 2, None, 1) == {1: 20}


def test_a_committed_konkan_with_tied_seconds_pays_out() -> None:
    """A completed committed Konkan ends the match at once (§1.7), so a tie for second
    cannot be played off: the winner takes first prize, the tied seconds share second."""
    options = KonkanOptions(players=3, rounds=1, stake=10)
    state = konkan.new_game(options, "konkan")
    state.places, state.match_winner = (2, 1, 2), 1  # as _end_match ranks it
    assert payout_shares(30, 3, list(state.places), state.match_winner) == {1: 21, 0: 5, 2: 4}


@settings(max_examples=300, deadline=None)
@given(
    stake=st.integers(0, 10**6),
    places=st.lists(st.integers(1, 4), min_size=2, max_size=4),
    data=st.data(),
)
def test_shares_always_add_up_to_the_pot(
    stake: int, places: list[int], data: st.DataObject
) -> None:
    """Any ranking, any pot (every seat's stake), any winner: the pot is paid out whole."""
    players = len(places)
    pot = stake * players
    winner = data.draw(st.sampled_from([None, *range(players)]))
    for given_places in (places, None):
        shares = payout_shares(pot, players, given_places, winner)
        assert sum(shares.values()) == pot
        assert all(amount > 0 and 0 <= seat < players for seat, amount in shares.items())
    shares = payout_shares(pot, players, places, winner)
    for a in range(players):
        for b in range(players):
            if places[a] < places[b]:  # a better place never gets less
                assert shares.get(a, 0) >= shares.get(b, 0)
            if places[a] == places[b]:  # tied seats differ by at most the odd coin
                assert abs(shares.get(a, 0) - shares.get(b, 0)) <= 1


def test_conquian_state_over_without_winner_is_sound() -> None:
    played = conquian.new_game(ConquianOptions(max_drawn_deals=1), "sound")
    while not played.over:
        played, _ = conquian.apply(played, conquian.timeout_action(played))
        assert conquian.check_invariants(played) == []
    assert played.match_winner is None and played.points == [0, 0]
