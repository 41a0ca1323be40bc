"""Bot levels, chosen per table: ``bot_for(game, level)`` gives a fresh player
(``view -> action``) for one seat."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sahrat.bots import simple_conquian, simple_konkan

Player = Callable[[dict[str, Any]], Any]

LEVELS = ("simple", "strong")


def bot_for(game: str, level: str) -> Player:
    if level not in LEVELS:
        raise ValueError(f"unknown bot level {level!r}; known levels: {list(LEVELS)}")
    if game == "conquian":
        return simple_conquian.act
    if game in ("konkan", "konkan71"):
        return simple_konkan.act
    raise ValueError(f"unknown game {game!r}")
