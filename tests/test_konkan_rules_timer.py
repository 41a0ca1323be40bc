"""The turn timer's move (RULES.md §1.10): when the time runs out the server
draws from the stock, then discards the card drawn, or, if it is a joker, the
highest-valued card that is not a joker."""

from __future__ import annotations

from sahrat.rules import konkan
from sahrat.rules.cards import parse_card, parse_cards
from sahrat.rules.konkan import Discard, Draw, KonkanState
from sahrat.rules.options import KonkanOptions

H0 = parse_cards("7H 8H 9H TH JH QH KH 2S 3S 4S 5D 7C 9D JS KC")
# AD (11, §1.8) is the one highest-valued card of seat 1.
H1 = parse_cards("2D 3D 4D 8S 9S' TS 6S 6H' 2C 3H' AD 5C 7C' KS")


def _seat1_to_draw(stock: str) -> KonkanState:
    deck = konkan.stacked_deck({0: H0, 1: H1}, parse_cards(stock), players=2, dealer=1)
    state = konkan.new_game(KonkanOptions(players=2), "timer", [deck], first_dealer=1)
    state, _ = konkan.apply(state, Discard(0, parse_card("5D")))
    return state


def test_timer_draws_from_the_stock() -> None:
    state = _seat1_to_draw("QD'")
    assert konkan.timeout_action(state) == Draw(1)
    state, _ = konkan.apply(state, konkan.timeout_action(state))
    assert parse_card("QD'") in state.hands[1]
    assert state.discard[-1] == parse_card("5D")  # not the discard pile


def test_timer_discards_the_card_drawn() -> None:
    state = _seat1_to_draw("QD'")
    state, _ = konkan.apply(state, konkan.timeout_action(state))
    assert konkan.timeout_action(state) == Discard(1, parse_card("QD'"))
    state, _ = konkan.apply(state, konkan.timeout_action(state))
    assert state.turn == 0
    assert state.discard[-1] == parse_card("QD'")
    assert sorted(state.hands[1]) == sorted(H1)


def test_timer_keeps_a_drawn_joker_and_discards_the_highest_card() -> None:
    state = _seat1_to_draw("JK")
    state, _ = konkan.apply(state, konkan.timeout_action(state))
    assert state.drawn == parse_card("JK")
    assert konkan.timeout_action(state) == Discard(1, parse_card("AD"))
    state, _ = konkan.apply(state, konkan.timeout_action(state))
    assert parse_card("JK") in state.hands[1]
    assert state.discard[-1] == parse_card("AD")
