"""The simple Conquian player, given only a seat's view."""

from __future__ import annotations

from sahrat.bots.simple_conquian import act, least_useful
from sahrat.rules.cards import parse_card, parse_cards
from sahrat.rules.conquian import (
    Action,
    ConquianState,
    DeclineForce,
    Discard,
    Force,
    Pass,
    Refuse,
    Take,
    apply,
    check_action,
    new_game,
    stacked_deck,
    view,
)


def game(hand0: str, hand1: str, stock: str) -> ConquianState:
    order = stacked_deck(
        {0: parse_cards(hand0), 1: parse_cards(hand1)}, parse_cards(stock), dealer=1
    )
    return new_game(seed="bot", decks=[order], first_dealer=1)


def step(state: ConquianState, action: Action) -> ConquianState:
    new, _ = apply(state, action)
    return new


QUIET = "2H 3D 4C 6H 7D JC KD QH 5H 3C"


def test_takes_a_winning_card_with_every_hand_card() -> None:
    state = game("AS 2S 3S 4S 5S 6S 7S AH AD AC", QUIET, "JS")
    action = act(view(state, 0))
    assert isinstance(action, Take)
    assert sum(len(m) for m in action.melds) == 11
    assert check_action(state, action) is None


def test_passes_what_it_cannot_meld_and_takes_what_it_can() -> None:
    state = game("4H 5H QS AS 3D 7C KD 2C 6S JD", "2S 5S 7S KS AH 3H JH 4D 6D QC", "KC 6H")
    assert act(view(state, 0)) == Pass(0)
    state = step(state, Pass(0))
    assert act(view(state, 1)) == Refuse(1)
    state = step(step(state, Refuse(1)), Pass(1))
    action = act(view(state, 0))
    assert action == Take(0, ((parse_card("4H"), parse_card("5H"), parse_card("6H")),))


def test_forces_only_when_it_hurts() -> None:
    # seat 0 holds 5S 5H 5D down and refuses 5C, which fits: seat 1 is asked.
    state = game("5S 5H QS AS 3C 7C KD 2C JH 4C", "7S JS KS AH 3H 6D QC 2D 4H 6C", "5D 5C")
    state = step(state, Take(0, (tuple(parse_cards("5S 5H 5D")),)))
    state = step(state, Discard(0, parse_card("KD")))
    state = step(step(step(state, Refuse(1)), Pass(1)), Refuse(0))
    assert act(view(state, 1)) == Force(1)  # seat 0 has 7 cards in hand: make it discard


def test_never_forces_a_win_or_a_tenth_card() -> None:
    state = game("AS 2S 3S 4S 5S 6S 7S AH AD KD", "2H 3D 4C 6H 7D JC KS QC 5D 3C", "AC JS")
    state = step(
        state, Take(0, (tuple(parse_cards("AS AH AD AC")), tuple(parse_cards("2S 3S 4S 5S 6S 7S"))))
    )
    state = step(state, Discard(0, parse_card("KD")))
    state = step(step(step(state, Refuse(1)), Pass(1)), Refuse(0))
    assert act(view(state, 1)) == DeclineForce(1)  # forcing JS would give seat 0 the win


def test_least_useful_keeps_partners_and_cards_the_opponent_wants() -> None:
    hand = parse_cards("4H 5H QS KC")
    # QS and KC have no partner; the higher rank goes first
    assert least_useful(hand, [], []) == parse_card("KC")
    # but KC would let the opponent lay it on their kings
    assert least_useful(hand, [], [parse_cards("KS KH KD")]) == parse_card("QS")
