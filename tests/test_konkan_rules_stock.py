"""Stock exhaustion (RULES.md §1.3, §1.8, §1.11 'stock reshuffles per round').

When a player must draw and the stock is empty, the discard pile except its
top card becomes the new stock; this happens at most ``max_reshuffles`` times
(3 by default) and the next exhaustion ends the round void, scored as if no
one went out. A round of draws is long, so the record is built in a loop.
"""

from __future__ import annotations

import pytest

from sahrat.rules import konkan
from sahrat.rules.cards import parse_cards
from sahrat.rules.konkan import Discard, Draw, Finish, KonkanState, LayDown
from sahrat.rules.options import KonkanOptions

H0 = parse_cards("7H 8H 9H TH JH QH KH 2S 3S 4S 5D 7C 9D JS KC")
# Both jokers stay in seat 1's hand, so every card drawn can be discarded.
H1 = parse_cards("JK JK' AC' 3C' 5C' 7C' 9C' JC' KC' 2D' 4D' 6D' 8D' TD'")


def _start(options: KonkanOptions) -> KonkanState:
    deck = konkan.stacked_deck({0: H0, 1: H1}, players=2, dealer=1)
    state = konkan.new_game(options, "stock", [deck], first_dealer=1)
    state, _ = konkan.apply(state, LayDown(0, (tuple(H0[:7]),)))  # 7H..KH, 64: seat 0 opens
    state, _ = konkan.apply(state, Discard(0, parse_cards("5D")[0]))
    return state


def _draw_until_void(state: KonkanState) -> tuple[KonkanState, int, list[int]]:
    """Every player draws and discards the card drawn until the round ends."""
    draws = 0
    reshuffle_sizes: list[int] = []
    while state.round == 1:
        seat = state.turn
        before = len(state.discard)
        empty = not state.stock
        state, events = konkan.apply(state, Draw(seat))
        if state.round != 1:
            assert empty
            assert before >= 2, "the void comes from the reshuffle limit, not an empty pile"
            break
        if empty:
            # §1.3: the discard pile except its top card is the new stock (one now drawn).
            assert events[0].type == "reshuffle"
            assert len(state.discard) == 1
            assert len(state.stock) == before - 2
            reshuffle_sizes.append(before - 1)
        draws += 1
        drawn = state.drawn
        assert drawn is not None and not drawn.is_joker
        state, _ = konkan.apply(state, Discard(seat, drawn))
    return state, draws, reshuffle_sizes


@pytest.mark.parametrize("limit", [0, 1, 3, 10])
def test_round_is_void_after_the_reshuffles_allowed(limit: int) -> None:
    state, draws, sizes = _draw_until_void(_start(KonkanOptions(players=2, max_reshuffles=limit)))
    # 77 stock cards, then `limit` new stocks of the 78 discards less the top one.
    assert sizes == [77] * limit
    assert draws == 77 * (limit + 1)
    result = state.results[0]
    assert result.finish is Finish.VOID
    assert result.winner is None
    assert result.reshuffles == limit
    # §1.8: hand sums for opened players (2+3+4+7+9+10+10), 100 for never opened, no doubling.
    assert result.scores == (45, 100)
    assert state.round == 2


def test_default_table_reshuffles_three_times() -> None:
    """§1.3: 'at most 3 times in a round. The 4th time the round ends at once'."""
    state, draws, sizes = _draw_until_void(_start(KonkanOptions(players=2)))
    assert len(sizes) == 3
    assert draws == 77 * 4
    assert state.results[0].finish is Finish.VOID
    assert state.results[0].reshuffles == 3
