"""The terminal client reads typed moves as engine actions."""

from __future__ import annotations

import pytest

from sahrat.client import describe_view, parse_move
from sahrat.rules import konkan


@pytest.mark.parametrize(
    ("text", "game", "action"),
    [
        ("draw", "konkan", {"type": "draw"}),
        ("discard 7H'", "konkan", {"type": "discard", "card": "7H'"}),
        (
            "lay 7H 8H 9H / 2S 3S 4S",
            "konkan",
            {"type": "lay_down", "melds": [["7H", "8H", "9H"], ["2S", "3S", "4S"]]},
        ),
        ("take 7H 8H 9H", "konkan", {"type": "take_discard", "melds": [["7H", "8H", "9H"]]}),
        ("layoff 3 TH", "konkan", {"type": "lay_down", "lay_offs": [{"meld": 3, "cards": ["TH"]}]}),
        ("swap 2 6H", "konkan", {"type": "swap_joker", "meld": 2, "cards": ["6H"]}),
        ("take 4H 5H 6H", "conquian", {"type": "take", "melds": [["4H", "5H", "6H"]]}),
        ("decline", "conquian", {"type": "decline_force"}),
        ('{"type": "refuse"}', "conquian", {"type": "refuse"}),
    ],
)
def test_typed_moves(text: str, game: str, action: dict[str, object]) -> None:
    assert parse_move(text, game) == action


def test_unclear_moves_are_refused() -> None:
    with pytest.raises(ValueError, match="cannot read"):
        parse_move("jump", "konkan")


def test_describe_shows_only_the_viewers_hand() -> None:
    state = konkan.new_game(seed="client")
    text = describe_view(konkan.view(state, 1), 1)
    assert " ".join(str(c) for c in state.hands[1]) in text
    assert " ".join(str(c) for c in state.hands[0]) not in text
