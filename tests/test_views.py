"""``views`` gives every seat exactly what ``view`` gives it, whatever the moment of the
match: it only builds the part everyone sees once."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from sahrat.rules import conquian, konkan
from sahrat.rules.options import KonkanOptions


@pytest.mark.parametrize(
    ("engine", "state"),
    [
        (konkan, konkan.new_game(KonkanOptions(players=4), seed="views-4")),
        (konkan, konkan.new_game(KonkanOptions(players=2), seed="views-2")),
        (conquian, conquian.new_game(seed="views-c")),
    ],
    ids=["konkan-4", "konkan-2", "conquian"],
)
def test_each_seat_view_from_views_is_its_own_view(engine: Any, state: Any) -> None:
    seats = [None, *range(state.players)]
    steps = 0
    while not state.over and steps < 400:
        for history in (True, False):
            together = engine.views(state, seats, history=history)
            assert list(together) == seats
            for seat in seats:
                alone = engine.view(state, seat, history=history)
                # byte for byte: the same keys in the same order, the same values
                assert orjson.dumps(together[seat]) == orjson.dumps(alone), (steps, seat)
        assert "hand" not in together[None]
        for seat in seats[1:]:
            hand = [str(card) for card in state.hands[seat]]
            assert together[seat]["hand"] == hand
        state, _ = engine.apply(state, engine.timeout_action(state))
        steps += 1
    assert steps > 20
