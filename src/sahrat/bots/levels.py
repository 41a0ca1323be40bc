"""Bot strengths per table: ``simple`` (the engine's simple players), ``strong`` and
``expert`` (the strong player's candidates weighed by Monte Carlo over the hidden
cards, :mod:`sahrat.bots.expert`).

:func:`bot_for` returns a fresh player for one seat: a callable taking that
seat's view and returning the action. Strong and expert players keep a memory of
what their seat has seen, so every seat needs its own instance. A hint at a table
is a fresh player's move (``sahrat.server.table.autoplay.suggest``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sahrat.bots import conquian_bot, expert, konkan_bot, simple_conquian, simple_konkan

Player = Callable[[dict[str, Any]], Any]
GAMES = ("konkan", "konkan71", "conquian")


def _simple(game: str, seed: str) -> Player:
    return simple_conquian.act if game == "conquian" else simple_konkan.act


def _strong(game: str, seed: str) -> Player:
    if game == "conquian":
        return conquian_bot.ConquianBot().act
    return konkan_bot.KonkanBot().act


def _expert(game: str, seed: str) -> Player:
    return expert.ExpertBot(game, seed=seed).act


LEVELS: dict[str, Callable[[str, str], Player]] = {
    "simple": _simple,
    "strong": _strong,
    "expert": _expert,
}


def bot_for(game: str, level: str, *, seed: str = "") -> Player:
    """A new player for one seat of a ``game`` table at strength ``level``; ``seed``
    fixes the expert's samples (one seed, one line of play)."""
    if game not in GAMES:
        raise ValueError(f"unknown game {game!r}; bots play {', '.join(GAMES)}")
    make = LEVELS.get(level)
    if make is None:
        raise ValueError(f"unknown bot level {level!r}; levels are {', '.join(LEVELS)}")
    return make(game, seed)


def pause_factor(game: str, view: Any) -> float:
    """How much of the table's bot pause a decision takes, 0.5 to 2: a plain draw is
    quick, an opening to weigh takes longer (a bot should look like a person thinking).
    Read from the seat's view alone, before the bot decides."""
    if game == "conquian":
        phase = str(view.get("phase")) if isinstance(view, dict) else ""
        return {"choose": 1.2, "turned_up": 1.0, "force": 0.8, "discard": 1.3}.get(phase, 1.0)
    from sahrat.bots.konkan_expert import difficulty

    return min(2.0, max(0.5, difficulty(view)))
