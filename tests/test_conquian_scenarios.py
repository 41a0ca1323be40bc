"""RULES.md Part 2 (Conquian), line by line, as games on stacked decks.

Every scenario deals known hands (seat 1 deals, so seat 0 starts and has
already turned up the first stock card), plays the actions and checks the
outcome RULES.md gives. Every rejected move is also checked to leave the
state, and every view of it, exactly as it was.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest

from sahrat.rules.cards import Card, parse_card, parse_cards
from sahrat.rules.conquian import (
    DECK,
    Action,
    ConquianState,
    DeclineForce,
    Discard,
    FaceUp,
    Finish,
    Force,
    Pass,
    Phase,
    Refuse,
    Take,
    action_from_json,
    action_to_json,
    apply,
    check_action,
    check_invariants,
    describe,
    new_game,
    score_sheet,
    simple_actions,
    stacked_deck,
    timeout_action,
    timeout_discard,
    to_act,
    view,
)
from sahrat.rules.errors import (
    BadAction,
    BadRecord,
    CannotForce,
    CardNotInHand,
    DuplicateCard,
    GameOver,
    InvalidMeld,
    MeldCardsChanged,
    NoFaceUpCard,
    NotYourTurn,
    RuleError,
    TakenCardNotMelded,
    WrongPhase,
)
from sahrat.rules.options import ConquianOptions

# --- helpers ---------------------------------------------------------------------------


def cards(text: str) -> list[Card]:
    return parse_cards(text)


def card(text: str) -> Card:
    return parse_card(text)


def melds(*groups: str) -> tuple[tuple[Card, ...], ...]:
    """``melds("4H 5H 6H", "QS QH QD")``: the arrangement a Take carries."""
    return tuple(tuple(parse_cards(group)) for group in groups)


def deck(hand0: str, hand1: str, stock: str = "", *, dealer: int = 1) -> list[Card]:
    return stacked_deck({0: cards(hand0), 1: cards(hand1)}, cards(stock), dealer=dealer)


def game(
    hand0: str,
    hand1: str,
    stock: str = "",
    *,
    dealer: int = 1,
    options: ConquianOptions | None = None,
    more_decks: Sequence[Sequence[Card]] = (),
) -> ConquianState:
    """A match whose first deal gives these hands and puts ``stock`` on top of the stock.
    With dealer 1, seat 0 starts and has already turned up the first stock card."""
    first = deck(hand0, hand1, stock, dealer=dealer)
    return new_game(options, seed="scenario", decks=[first, *more_decks], first_dealer=dealer)


def play(state: ConquianState, *actions: Action) -> ConquianState:
    """Apply the actions in order, checking the invariants after each."""
    for action in actions:
        state, _events = apply(state, action)
        problems = check_invariants(state)
        assert not problems, problems
    return state


def rejected(
    state: ConquianState, action: Action, error: type[RuleError], match: str | None = None
) -> RuleError:
    """The action is refused with ``error`` and nothing changes, in the state or any view."""
    before = copy.deepcopy(state)
    views = [view(state, seat) for seat in (0, 1, None)]
    with pytest.raises(error, match=match) as caught:
        apply(state, action)
    assert state == before
    assert [view(state, seat) for seat in (0, 1, None)] == views
    assert isinstance(check_action(state, action), error)
    return caught.value


def hand(state: ConquianState, seat: int) -> str:
    return " ".join(str(c) for c in state.hands[seat])


def table(state: ConquianState, seat: int) -> list[str]:
    return [" ".join(str(c) for c in meld) for meld in state.melds[seat]]


def timer_until_deal_ends(state: ConquianState) -> ConquianState:
    """Let the turn timer play both seats until the current deal is over."""
    deals = len(state.results)
    while len(state.results) == deals and not state.over:
        state = play(state, timeout_action(state))
    return state


# Hands with no meld in them, used where a seat's cards do not matter.
QUIET_1 = "2H 3D 4C 6H 7D JC KD QH 5H 3C"
WIN_HAND = "AS 2S 3S 4S 5S 6S 7S AH AD AC"  # JS completes 11: AS..JS (8) + AH AD AC
WIN_MELDS = melds("AS 2S 3S 4S 5S 6S 7S JS", "AH AD AC")


def win_deck(winner: int, dealer: int) -> list[Card]:
    """A deal ``winner`` wins with JS at once: turned up by them, or passed to them."""
    other = 1 - winner
    hands = {winner: cards(WIN_HAND), other: cards(QUIET_1)}
    return stacked_deck(hands, cards("JS"), dealer=dealer)


def win_now(state: ConquianState, winner: int) -> ConquianState:
    """Play a win_deck deal: the non-dealer passes JS to the winner if it is not theirs."""
    if state.turn != winner:
        state = play(state, Pass(state.turn))
    return play(state, Take(winner, WIN_MELDS))


# --- §2.1 deck and deal -----------------------------------------------------------------


def test_the_deck_is_40_cards_without_8_9_10() -> None:
    assert len(DECK) == 40
    assert {c.rank.symbol for c in DECK if c.rank} == set("A234567JQK")
    assert Counter(c.suit for c in DECK) == Counter({s: 10 for s in {c.suit for c in DECK}})


def test_explicit_decks_must_be_the_40_cards_once() -> None:
    good = list(DECK)
    with pytest.raises(BadRecord, match="deck 0"):
        new_game(decks=[good[:-1]])
    with pytest.raises(BadRecord, match="deck 1"):
        new_game(decks=[good, [*good[:-1], good[0]]])
    with pytest.raises(BadRecord):
        new_game(decks=[[*good[:-1], card("8H")]])
    with pytest.raises(BadRecord, match="first dealer"):
        new_game(first_dealer=2)


def test_deal_10_each_20_stock_no_initial_discard_non_dealer_turns_up() -> None:
    # Seat 1 deals: the first 10 cards go to seat 0, the next 10 to seat 1, and seat 0
    # starts by turning up the top of the stock; there is no discard pile to start.
    order = list(DECK)
    state = new_game(decks=[order], first_dealer=1)
    assert sorted(state.hands[0], key=DECK.index) == order[:10]
    assert sorted(state.hands[1], key=DECK.index) == order[10:20]
    assert state.face_up == order[20]
    assert (state.phase, to_act(state), state.face_up_how) == (Phase.TURNED_UP, 0, FaceUp.TURNED_UP)
    seen = view(state, None)
    assert seen["stock_count"] == 19 and seen["dead_count"] == 0
    assert seen["hand_counts"] == [10, 10]
    assert seen["face_up"] == str(order[20]) and seen["face_up_from"] == 0
    # With seat 0 dealing, seat 1 is dealt first and starts.
    state = new_game(decks=[order], first_dealer=0)
    assert sorted(state.hands[1], key=DECK.index) == order[:10]
    assert to_act(state) == 1


def test_first_dealer_is_drawn_from_the_seed_and_deals_are_shuffled_by_it() -> None:
    dealers = {new_game(seed=str(i)).dealer for i in range(40)}
    assert dealers == {0, 1}
    a, b = new_game(seed="same"), new_game(seed="same")
    assert a == b
    assert new_game(seed="other").hands != a.hands


def test_the_deal_alternates_draws_included() -> None:
    state = new_game(seed="alternate", first_dealer=0)
    dealers = [state.dealer]
    for _ in range(3):
        state = timer_until_deal_ends(state)  # the timer never takes: every deal is drawn
        dealers.append(state.dealer)
    assert dealers == [0, 1, 0, 1]
    assert [r.finish for r in state.results] == [Finish.DRAW] * 3
    # each deal is a fresh shuffle of the whole deck
    assert len({tuple(r.hands[0]) for r in state.results}) == 3


# --- §2.3 the turn: taking, the worked example of 003 §09 ----------------------------------

EXAMPLE_0 = "4H 5H QS AS 3D 7C KD 2C 6S JD"  # 4H 5H and a useless QS, no meld
EXAMPLE_1 = "2S 5S 7S KS AH 3H JH 4D 6D QC"


def test_worked_example_take_6h_lay_4h_5h_6h_discard_qs() -> None:
    # Seat 0 turns up KC and passes it; seat 1 refuses it, turns up 6H and passes it:
    # the opponent has left 6H. Seat 0 takes it, lays 4H 5H 6H and discards QS.
    state = game(EXAMPLE_0, EXAMPLE_1, "KC 6H")
    state = play(state, Pass(0), Refuse(1))
    assert (state.face_up, state.phase, to_act(state)) == (card("6H"), Phase.TURNED_UP, 1)
    state = play(state, Pass(1))
    assert (state.face_up_how, state.face_up_from) == (FaceUp.PASSED, 1)
    state = play(state, Take(0, melds("4H 5H 6H")))
    assert table(state, 0) == ["4H 5H 6H"]
    assert state.phase is Phase.DISCARD and state.face_up is None
    assert simple_actions(state) == [Discard(0, c) for c in state.hands[0]]
    state = play(state, Discard(0, card("QS")))
    # QS is now seat 1's face-up card; seat 0 keeps 7 cards in hand
    assert (state.face_up, state.face_up_how, to_act(state)) == (card("QS"), FaceUp.DISCARDED, 1)
    assert hand(state, 0) == "AS 6S 3D JD KD 2C 7C"  # sorted S H D C
    assert state.phase is Phase.CHOOSE


def test_worked_example_7h_cannot_go_into_the_hand() -> None:
    # Offered 7H instead, 4H 5H cannot use it: taking it into the hand is not a move,
    # and 4H 5H cannot be laid on their own.
    state = play(game(EXAMPLE_0, EXAMPLE_1, "KC 7H"), Pass(0), Refuse(1), Pass(1))
    assert state.face_up == card("7H") and to_act(state) == 0
    rejected(state, Take(0, ()), TakenCardNotMelded, "never goes to the hand")
    rejected(state, Take(0, melds("4H 5H")), TakenCardNotMelded, "7H")
    rejected(state, Take(0, melds("4H 5H 7H")), InvalidMeld, "consecutive")
    rejected(state, Take(0, melds("4H 5H", "7H")), InvalidMeld, "at least 3")
    assert simple_actions(state) == [Refuse(0)]
    state = play(state, Refuse(0))
    assert "4H 5H" in hand(state, 0) and state.melds[0] == ()


def test_hand_cards_are_laid_only_with_a_take() -> None:
    # There is no action that lays hand cards alone.
    with pytest.raises(BadAction, match="unknown action type"):
        action_from_json({"seat": 0, "type": "lay_down", "melds": [["4H", "5H", "6H"]]})
    # And after a take, the discard is owed: no second take of anything.
    state = play(game(EXAMPLE_0, EXAMPLE_1, "KC 6H"), Pass(0), Refuse(1), Pass(1))
    state = play(state, Take(0, melds("4H 5H 6H")))
    rejected(state, Take(0, melds("4H 5H 6H")), NoFaceUpCard)


def test_a_take_may_add_hand_cards_in_new_melds() -> None:
    # Taking 6H, seat 0 may also lay a meld made only of hand cards in the same action.
    state = game("4H 5H 3S 3D 3C QS 7C KD 2C JD", EXAMPLE_1, "KC 6H")
    state = play(state, Pass(0), Refuse(1), Pass(1))
    state = play(state, Take(0, melds("3S 3D 3C", "6H 5H 4H")))
    assert table(state, 0) == ["3S 3D 3C", "4H 5H 6H"]  # stored in table order
    assert len(state.hands[0]) == 5


def test_refusing_the_opponents_card_buries_it_and_turns_up_the_next() -> None:
    state = game(EXAMPLE_0, EXAMPLE_1, "KC 6H")
    state = play(state, Pass(0))
    assert (state.phase, to_act(state), state.face_up_how) == (Phase.CHOOSE, 1, FaceUp.PASSED)
    state = play(state, Refuse(1))
    seen = view(state, None)
    assert seen["dead_count"] == 1 and seen["stock_count"] == 18
    assert (state.face_up, state.face_up_from, to_act(state)) == (card("6H"), 1, 1)


def test_a_passed_card_stays_face_up_for_the_opponent_with_no_discard() -> None:
    state = game(EXAMPLE_0, EXAMPLE_1, "KC")
    hands_before = [list(h) for h in state.hands]
    state = play(state, Pass(0))
    assert state.face_up == card("KC") and state.face_up_from == 0
    assert state.hands == hands_before  # no discard: the turn simply ends


def test_rejected_turn_moves_leave_the_state_unchanged() -> None:
    state = game(EXAMPLE_0, EXAMPLE_1, "KC 6H")
    rejected(state, Refuse(0), WrongPhase, "take or pass KC")  # own card: pass, not refuse
    rejected(state, Pass(1), NotYourTurn)
    rejected(state, Discard(0, card("QS")), WrongPhase, "discarding")
    rejected(state, Force(1), NotYourTurn)
    rejected(state, Force(0), CannotForce)
    rejected(state, DeclineForce(0), WrongPhase)
    state = play(state, Pass(0))
    rejected(state, Pass(1), WrongPhase, "take or refuse KC")  # opponent's card: refuse
    state = play(state, Refuse(1), Pass(1))
    rejected(state, Take(0, melds("4H 5H 6H 6S")), InvalidMeld)
    rejected(state, Take(0, melds("4H 5H 6H", "6H 6S 6D")), DuplicateCard, "6H")
    rejected(state, Take(0, melds("4H 5H 6H", "6S 6D 6C")), CardNotInHand, "6D 6C")
    rejected(state, Take(0, melds("4H 5H 6H 7H")), CardNotInHand, "7H")
    rejected(state, Take(0, melds("4H 5H 6H", "8S 8D 8C")), RuleError, "8S")
    rejected(state, Take(1, melds("4H 5H 6H")), NotYourTurn)
    state = play(state, Take(0, melds("4H 5H 6H")))
    rejected(state, Discard(0, card("KC")), CardNotInHand, "KC")
    rejected(state, Discard(0, card("4H")), CardNotInHand, "4H")  # now on the table
    rejected(state, Refuse(0), WrongPhase, "discard a card")
    rejected(state, Pass(0), WrongPhase)


# --- §2.2 melds are the player's own; open cards never go back ------------------------------


def test_open_cards_never_return_and_the_opponents_melds_are_untouchable() -> None:
    # Seat 0 lays 4H 5H 6H. Offered 7H, seat 1 may not use seat 0's 5H 6H; seat 0 may
    # add 7H to its run but may not leave 4H out of its melds.
    state = game(EXAMPLE_0, EXAMPLE_1, "KC 6H 7H")
    state = play(state, Pass(0), Refuse(1), Pass(1), Take(0, melds("4H 5H 6H")))
    state = play(state, Discard(0, card("QS")), Refuse(1))
    assert state.face_up == card("7H") and to_act(state) == 1
    rejected(state, Take(1, melds("5H 6H 7H")), MeldCardsChanged, "seat 0's melds")
    # seat 1 passes 7H; seat 0 may extend but not shorten its run
    state = play(state, Pass(1))
    rejected(state, Take(0, melds("5H 6H 7H")), MeldCardsChanged, "4H")
    state = play(state, Take(0, melds("4H 5H 6H 7H")))
    assert table(state, 0) == ["4H 5H 6H 7H"]


# --- §2.3 rearranging (003 §03, 004) ------------------------------------------------------


REARRANGE_1 = "7S JS KS AH 3H JH 4D 5D QC 2D"


def test_rearranging_3s_4s_5s_6s_and_6h_take_6d() -> None:
    # Seat 0 lays 3S 4S 5S 6S (taking the 6S it turned up), keeps 6H in hand, and later
    # takes 6D by splitting the run: 3S 4S 5S and 6S 6H 6D.
    state = game("3S 4S 5S 6H KD 2C 7C JD QH AD", REARRANGE_1, "6S KC 6D")
    state = play(state, Take(0, melds("3S 4S 5S 6S")), Discard(0, card("KD")))
    state = play(state, Refuse(1), Pass(1), Refuse(0))
    assert state.face_up == card("6D") and to_act(state) == 0
    state = play(state, Take(0, melds("3S 4S 5S", "6S 6H 6D")))
    assert table(state, 0) == ["3S 4S 5S", "6S 6H 6D"]


def test_rearranging_from_4s_5s_6s_is_illegal() -> None:
    # With only 4S 5S 6S down, 4S 5S would be left as a two-card meld.
    state = game("4S 5S 6H KD 2C 7C JD QH AD 3C", REARRANGE_1, "6S KC 6D")
    state = play(state, Take(0, melds("4S 5S 6S")), Discard(0, card("KD")))
    state = play(state, Refuse(1), Pass(1), Refuse(0))
    assert state.face_up == card("6D")
    rejected(state, Take(0, melds("4S 5S", "6S 6H 6D")), InvalidMeld, "4S 5S is not a meld")
    rejected(state, Take(0, melds("6S 6H 6D")), MeldCardsChanged, "4S 5S")


# --- §2.4 forcing (004: a 5 forced onto 5 5 5) ----------------------------------------------

FORCE_0 = "5S 5H QS AS 3C 7C KD 2C JH 4C"  # 2C 3C 4C in hand
FORCE_1 = "7S JS KS AH 3H 6D QC 2D 4H 6C"


def five_set_down(stock: str) -> ConquianState:
    """Seat 0 has 5S 5H 5D on the table (taking the 5D it turned up, discarding KD)."""
    state = game(FORCE_0, FORCE_1, "5D " + stock)
    return play(state, Take(0, melds("5S 5H 5D")), Discard(0, card("KD")))


def test_romanian_example_a_5_is_forced_onto_5_5_5() -> None:
    # Seat 1 refuses KD, turns up 5C and passes it. Seat 0 wants to refuse it, but 5C fits
    # 5S 5H 5D without any hand card, so seat 1 is asked at once and forces it.
    state = play(five_set_down("5C"), Refuse(1), Pass(1))
    state = play(state, Refuse(0))
    assert (state.phase, to_act(state), state.face_up) == (Phase.FORCE, 1, card("5C"))
    assert view(state, 1)["question"] == {"about": 0, "after": "refuse"}
    assert simple_actions(state) == [Force(1), DeclineForce(1)]
    state = play(state, Force(1))
    assert (state.phase, to_act(state)) == (Phase.FORCED, 0)
    rejected(state, Refuse(0), WrongPhase, "forced")
    rejected(state, Pass(0), WrongPhase, "forced")
    rejected(state, Discard(0, card("QS")), WrongPhase, "forced")
    rejected(state, Take(0, melds("5S 5H 5D")), TakenCardNotMelded)
    assert timeout_action(state) == Take(0, melds("5S 5H 5D 5C"))
    state = play(state, Take(0, melds("5S 5H 5D 5C")), Discard(0, card("QS")))
    assert table(state, 0) == ["5S 5H 5D 5C"]
    assert (state.face_up, to_act(state)) == (card("QS"), 1)


def test_a_forced_take_may_also_lay_hand_cards() -> None:
    # Decision (docs/conquian.md): a forced take is an ordinary take.
    state = play(five_set_down("5C"), Refuse(1), Pass(1), Refuse(0), Force(1))
    state = play(state, Take(0, melds("5S 5H 5D", "2C 3C 4C 5C")))
    assert table(state, 0) == ["5S 5H 5D", "2C 3C 4C 5C"]


def test_declining_lets_the_refusal_stand() -> None:
    state = play(five_set_down("5C KH"), Refuse(1), Pass(1), Refuse(0), DeclineForce(1))
    assert view(state, None)["dead_count"] == 2  # KD and 5C
    assert (state.face_up, state.phase, to_act(state)) == (card("KH"), Phase.TURNED_UP, 0)


def test_forcing_applies_to_a_card_the_player_turned_up() -> None:
    # Seat 0 turns up 5C itself and passes it: seat 1 may force it all the same.
    state = play(five_set_down("KH 5C"), Refuse(1), Pass(1), Refuse(0))
    assert state.face_up == card("5C") and state.phase is Phase.TURNED_UP
    forcing = play(state, Pass(0))
    assert (forcing.phase, to_act(forcing)) == (Phase.FORCE, 1)
    assert view(forcing, None)["question"] == {"about": 0, "after": "pass"}
    forced = play(forcing, Force(1))
    assert forced.phase is Phase.FORCED and to_act(forced) == 0
    # declined, the pass stands: 5C is now seat 1's to take or refuse
    declined = play(forcing, DeclineForce(1))
    assert (declined.phase, to_act(declined)) == (Phase.CHOOSE, 1)
    assert (declined.face_up, declined.face_up_how, declined.face_up_from) == (
        card("5C"),
        FaceUp.PASSED,
        0,
    )


def test_a_card_needing_hand_cards_can_never_be_forced() -> None:
    # AC fits only with 2C 3C from the hand: refusing it asks nobody anything.
    state = play(five_set_down("AC KH"), Refuse(1), Pass(1))
    assert check_action(state, Take(0, melds("5S 5H 5D", "AC 2C 3C"))) is None
    state = play(state, Refuse(0))
    assert (state.phase, to_act(state), state.face_up) == (Phase.TURNED_UP, 0, card("KH"))
    rejected(state, Force(1), NotYourTurn)


def test_force_only_when_asked() -> None:
    state = play(five_set_down("5C"), Refuse(1), Pass(1))
    rejected(state, Force(1), NotYourTurn)  # seat 0 has not refused yet
    state = play(state, Refuse(0))
    rejected(state, Refuse(1), WrongPhase, "force seat 0")
    rejected(state, Take(1, melds("5S 5H 5D 5C")), WrongPhase)
    rejected(state, Force(0), NotYourTurn)


def test_forcing_by_rearranging_the_open_melds() -> None:
    # 3D fits 3S 4S 5S 6S + 3H 4H 5H 6H only by splitting both runs: 3S 3H 3D.
    hand0 = "3S 4S 5S 3H 4H 5H QC 2D KD 7C"
    state = game(hand0, "7S JS KS AH 2H JH 4D 5D QD 2C", "6S KH 6H KC 3D")
    state = play(state, Take(0, melds("3S 4S 5S 6S")), Discard(0, card("KD")))
    state = play(state, Refuse(1), Pass(1), Refuse(0))
    state = play(state, Take(0, melds("3S 4S 5S 6S", "3H 4H 5H 6H")))
    state = play(state, Discard(0, card("QC")), Refuse(1), Pass(1), Refuse(0))
    assert state.face_up == card("3D") and state.phase is Phase.TURNED_UP
    state = play(state, Pass(0))
    assert state.phase is Phase.FORCE
    state = play(state, Force(1))
    assert timeout_action(state) == Take(0, melds("3S 3H 3D", "4S 5S 6S", "4H 5H 6H"))


# --- §2.5 end of a deal ---------------------------------------------------------------------


def test_exactly_11_in_melds_wins_at_once_without_a_discard() -> None:
    state = game(WIN_HAND, QUIET_1, "JS")
    state, events = apply(state, Take(0, WIN_MELDS))
    assert [r.winner for r in state.results] == [0] and state.points == [1, 0]
    assert state.results[0].melds[0] == WIN_MELDS  # the 8-card run and the set
    kinds = [e.type for e in events]
    assert "discard" not in kinds and kinds[:2] == ["take", "deal_end"]
    # the next deal is dealt at once, the other seat dealing
    assert state.deals == 2 and state.dealer == 0 and to_act(state) == 1
    assert state.phase is Phase.TURNED_UP


def test_ten_down_and_an_empty_hand_is_not_a_win() -> None:
    # Seat 0 lays 10 cards and discards its last one: no win, play goes on; then the
    # 11th card that fits (JS) wins.
    state = game("AS 2S 3S 4S 5S 6S 7S AH AD KD", "2H 3D 4C 6H 7D JC KS QC 5D 3C", "AC QH JS")
    state = play(state, Take(0, melds("AS AH AD AC", "2S 3S 4S 5S 6S 7S")))
    assert state.phase is Phase.DISCARD
    state = play(state, Discard(0, card("KD")))
    assert state.hands[0] == [] and state.results == []
    assert (state.phase, to_act(state)) == (Phase.CHOOSE, 1)
    state = play(state, Refuse(1), Pass(1))
    rejected(state, Take(0, melds("AS AH AD AC", "2S 3S 4S 5S 6S 7S", "QH")), InvalidMeld)
    state = play(state, Refuse(0))
    assert state.face_up == card("JS") and to_act(state) == 0
    state = play(state, Take(0, melds("AS AH AD AC", "2S 3S 4S 5S 6S 7S JS")))
    assert [(r.finish, r.winner) for r in state.results] == [(Finish.WIN, 0)]


def test_a_forced_card_that_makes_11_wins() -> None:
    # Seat 0 has 10 down and refuses JS, which fits: forced, it wins (no discard).
    state = game("AS 2S 3S 4S 5S 6S 7S AH AD KD", "2H 3D 4C 6H 7D JC KS QC 5D 3C", "AC JS")
    state = play(state, Take(0, melds("AS AH AD AC", "2S 3S 4S 5S 6S 7S")))
    state = play(state, Discard(0, card("KD")), Refuse(1), Pass(1), Refuse(0), Force(1))
    state = play(state, timeout_action(state))
    assert [r.winner for r in state.results] == [0]


def test_stock_empty_and_the_face_up_card_refused_is_a_draw() -> None:
    # The timer never takes, so all 20 stock cards are turned up, passed and refused.
    state = new_game(seed="draw", first_dealer=1)
    while not (state.phase is Phase.CHOOSE and not state.stock):
        state = play(state, timeout_action(state))
    seen = view(state, None)
    assert seen["stock_count"] == 0 and seen["dead_count"] == 19  # the dead pile stays dead
    state, events = apply(state, Refuse(state.turn))
    assert [e.type for e in events][:3] == ["refuse", "stock_exhausted", "deal_end"]
    assert [(r.finish, r.winner, r.points) for r in state.results] == [(Finish.DRAW, None, 0)]
    assert state.points == [0, 0] and state.dealer == 0


def test_a_declined_force_on_an_empty_stock_is_a_draw() -> None:
    # 5C is the last stock card and fits seat 0's 5S 5H 5D. Whoever turns it up, it is
    # passed or refused by seat 0, seat 1 is asked, declines, and the deal is drawn.
    dealt = cards(FORCE_0) + cards(FORCE_1)
    middle = [c for c in DECK if c not in dealt and c not in cards("5D 5C")]
    order = [*dealt, card("5D"), *middle, card("5C")]
    state = new_game(seed="x", decks=[order], first_dealer=1)
    state = play(state, Take(0, melds("5S 5H 5D")), Discard(0, card("KD")))
    asked_on_empty_stock = False
    while not state.results:
        if state.phase is Phase.FORCE and not state.stock:
            asked_on_empty_stock = True
        state = play(state, timeout_action(state))
    assert asked_on_empty_stock
    assert [r.finish for r in state.results] == [Finish.DRAW]


# --- §2.6 scoring and the match -------------------------------------------------------------


def test_match_to_3_wins_one_point_each() -> None:
    decks = [win_deck(0, dealer=1), win_deck(0, dealer=0), win_deck(0, dealer=1)]
    state = new_game(seed="match", decks=decks, first_dealer=1)
    for expected in ([1, 0], [2, 0]):
        state = win_now(state, 0)
        assert state.points == expected and not state.over
    state, events = apply(state, Take(0, WIN_MELDS))  # seat 0 turned JS up itself
    assert state.over and state.match_winner == 0 and state.points == [3, 0]
    assert events[-1].type == "match_end" and events[-1].public["seed"] == "match"
    assert to_act(state) is None and simple_actions(state) == []
    rejected(state, Refuse(0), GameOver)
    sheet = score_sheet(state)
    assert sheet["totals"] == [3, 0] and sheet["winner"] == 0 and sheet["over"]
    assert sheet["deals"][0]["hands"][1]  # hands are shown once the match is over
    assert check_invariants(state) == []


def test_wins_needed_option() -> None:
    options = ConquianOptions(wins_needed=1)
    state = new_game(options, seed="one", decks=[win_deck(1, dealer=1)], first_dealer=1)
    state = win_now(state, 1)
    assert state.over and state.match_winner == 1


def test_draws_do_not_double_by_default() -> None:
    state = new_game(seed="plain", decks=[list(DECK), win_deck(1, dealer=0)], first_dealer=1)
    state = timer_until_deal_ends(state)
    assert state.deal_value == 1
    state = win_now(state, 1)
    assert state.points == [0, 1]


def test_double_after_draw_does_not_compound() -> None:
    # Two drawn deals, then seat 0 wins: 2 points, not 4; the deal after a win is worth 1.
    options = ConquianOptions(double_after_draw=True)
    decks = [list(DECK), list(DECK), win_deck(0, dealer=1)]
    state = new_game(options, seed="double", decks=decks, first_dealer=1)
    assert state.deal_value == 1
    state = timer_until_deal_ends(state)
    assert state.deal_value == 2
    state = timer_until_deal_ends(state)
    assert state.deal_value == 2 and view(state, 0)["deal_value"] == 2
    state = win_now(state, 0)
    assert state.points == [2, 0] and state.results[-1].points == 2
    assert state.deal_value == 1


# --- the turn timer -------------------------------------------------------------------------


def test_timeout_actions() -> None:
    state = game(EXAMPLE_0, EXAMPLE_1, "KC 6H")
    assert timeout_action(state) == Pass(0)
    state = play(state, Pass(0))
    assert timeout_action(state) == Refuse(1)
    state = play(state, Refuse(1), Pass(1), Take(0, melds("4H 5H 6H")))
    # hand AS 6S QS 3D JD KD 2C 7C: JD and KD are partners (J Q K); of the cards with
    # no partner, QS has the highest rank
    assert timeout_action(state) == Discard(0, card("QS"))
    forcing = play(five_set_down("5C"), Refuse(1), Pass(1), Refuse(0))
    assert timeout_action(forcing) == DeclineForce(1)


def test_timeout_discard_rule() -> None:
    assert timeout_discard(cards("4H 5H QS")) == card("QS")
    assert timeout_discard(cards("2C 3C QS QD")) in cards("2C 3C QS QD")
    assert timeout_discard(cards("2C 3C QS KD")) == card("KD")  # higher rank first
    assert timeout_discard(cards("KS KC 5H")) == card("5H")
    assert timeout_discard(cards("AS AC 4H 4D")) == card("4D")  # then the later suit


# --- views, JSON, describe ------------------------------------------------------------------


def _strings(data: Any) -> list[str]:
    if isinstance(data, str):
        return [data]
    if isinstance(data, dict):
        return [s for value in data.values() for s in _strings(value)]
    if isinstance(data, list):
        return [s for value in data for s in _strings(value)]
    return []


def test_views_show_only_what_the_seat_may_know() -> None:
    state = play(game(EXAMPLE_0, EXAMPLE_1, "KC 6H"), Pass(0), Refuse(1), Pass(1))
    state = play(state, Take(0, melds("4H 5H 6H")))
    for seat in (0, 1, None):
        seen = view(state, seat)
        json.dumps(seen)  # JSON-ready
        shown = set(_strings(seen))
        other_hands = [c for s in (0, 1) if s != seat for c in state.hands[s]]
        hidden = [*other_hands, *state.stock, *state.dead]
        assert not shown & {str(c) for c in hidden}
        assert seen["melds"] == [[["4H", "5H", "6H"]], []]
        assert seen["stock_count"] == len(state.stock) and seen["dead_count"] == 1
    assert view(state, 0)["hand"] == [str(c) for c in state.hands[0]]
    assert "simple_actions" in view(state, 0) and "simple_actions" not in view(state, 1)
    assert "hand" not in view(state, None)
    with pytest.raises(BadAction):
        view(state, 2)


def test_action_json_round_trip_and_rejections() -> None:
    actions: list[Action] = [
        Take(0, melds("4H 5H 6H", "QS QH QD")),
        Refuse(1),
        Pass(0),
        Discard(1, card("7C")),
        Force(0),
        DeclineForce(1),
    ]
    for action in actions:
        data = action_to_json(action)
        assert action_from_json(json.loads(json.dumps(data))) == action
    assert action_to_json(actions[0]) == {
        "seat": 0,
        "type": "take",
        "melds": [["4H", "5H", "6H"], ["QS", "QH", "QD"]],
    }
    bad: list[dict[str, Any]] = [
        {"seat": 0, "type": "draw"},
        {"seat": 0, "type": "take"},
        {"seat": 0, "type": "take", "melds": "4H 5H 6H"},
        {"seat": 0, "type": "take", "melds": [["4H", "XX", "6H"]]},
        {"seat": 0, "type": "refuse", "card": "4H"},
        {"seat": True, "type": "pass"},
        {"type": "pass"},
        {"seat": 0, "type": "discard"},
        {"seat": 0, "type": "discard", "card": "ZZ"},
    ]
    for data in bad:
        with pytest.raises(BadAction):
            action_from_json(data)


def test_non_conquian_actions_are_refused() -> None:
    state = game(EXAMPLE_0, EXAMPLE_1, "KC")
    rejected(state, "pass", BadAction)  # type: ignore[arg-type]


def test_describe_mentions_the_table() -> None:
    state = play(game(EXAMPLE_0, EXAMPLE_1, "KC 6H"), Pass(0), Refuse(1), Pass(1))
    text = describe(state)
    assert "6H" in text and "deal 1" in text and "choose" in text
