"""Moves nobody types: a bot's, and the hint a person asks for.

A bot sees exactly what a person in its seat would see (the seat's view) and thinks
off the event loop, so a searching bot never holds up the other tables' moves. All
of a process's bots think in one thread, one decision at a time: a decision is pure
Python holding the interpreter lock, so more threads would decide no faster, and each
one more would take the lock from the event loop more often (measured with
``bench/bench_bot_lag.py``: the loop's lag behind 50 tables of searching bots).
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sahrat.server import metrics

_THINKING = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bot")


async def think(player: Any, view: Any) -> Any:
    """``player(view)`` in the bots' thread."""
    return await asyncio.get_running_loop().run_in_executor(_THINKING, player, view)


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
        action = await think(player, view)
        metrics.BOT_DECISION_SECONDS.observe(time.perf_counter() - thinking)
        return action


async def suggest(game: str, level: str, view: Any) -> Any:
    """The move a bot of ``level`` would make from ``view`` (a hint for a person): a
    fresh bot, remembering nothing of earlier views, so a hint tells nothing the
    seat's own view does not. The one way a hint is made."""
    return await think(make_bot(game, level), view)
