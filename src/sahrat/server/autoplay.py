"""Moves nobody types: a bot's, and the hint a person asks for.

A bot sees exactly what a person in its seat would see (the seat's view) and thinks
in a worker thread, so a searching bot never holds up the other tables' moves.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from . import metrics


def make_bot(game: str, level: str) -> Any:
    """A fresh bot player for one seat: ``view -> action``."""
    from sahrat.bots.levels import bot_for

    return bot_for(game, level)


class BotSeats:
    """One bot player per seat (a bot may remember what it saw), made when first needed."""

    def __init__(self, game: str) -> None:
        self.game = game
        self._players: dict[int, Any] = {}

    def forget(self, seat: int) -> None:
        self._players.pop(seat, None)

    async def decide(self, seat: int, level: str, view: Any) -> Any:
        player = self._players.get(seat)
        if player is None:
            player = self._players[seat] = make_bot(self.game, level)
        thinking = time.perf_counter()
        action = await asyncio.to_thread(player, view)
        metrics.BOT_DECISION_SECONDS.observe(time.perf_counter() - thinking)
        return action


async def suggest(game: str, level: str, view: Any) -> Any:
    """The move a bot of ``level`` would make from ``view`` (a hint for a person)."""
    return await asyncio.to_thread(make_bot(game, level), view)
