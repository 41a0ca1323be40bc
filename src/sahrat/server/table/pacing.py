"""The table's clock: the turn timer and the break between rounds.

A table has one timer at a time. While a round is played it fires when the turn's
deadline passes (the timer's move is the engine's ``timeout_action``); during the
break after a round it fires when the break ends. Both deadlines are wall-clock
times stored with the table, so a restarted or taken-over table keeps them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

ROUND_ENDS = frozenset({"round_end", "deal_end"})  # a Konkan round's, a Conquian deal's


@dataclass
class RoundBreak:
    """The pause after a round (deal) ends and before the next one is played: the next
    round is dealt, but no turn timer runs and nobody moves until every connected player
    has continued or ``until`` has passed (the table option ``break_seconds``)."""

    until: float
    waiting: set[int]


def new_break(seconds: int, readers: set[int]) -> RoundBreak | None:
    """The break that follows a round's end, if anyone is there to read its summary:
    a table of bots, timers and absent players plays straight on."""
    if seconds <= 0 or not readers:
        return None
    return RoundBreak(time.time() + seconds, set(readers))


def ends_round(event_types: Any) -> bool:
    return any(kind in ROUND_ENDS for kind in event_types)


class Clock:
    """One pending wake-up: ``at(when, fire)`` replaces any earlier one.

    Every move sets a new deadline, nearly always later than the last. So the loop's
    timer is not replaced on each move: a timer that fires before the wake-up now due
    finds it not yet due and sets itself again for the rest. Only a wake-up earlier
    than the timer (a shorter deadline, a break's end) replaces it. The task that runs
    ``fire`` is made when the wake-up is due."""

    def __init__(self) -> None:
        self._handle: asyncio.TimerHandle | None = None
        self._handle_at = 0.0  # the wall-clock time the loop's timer was set for
        self._when = 0.0  # the wake-up due: its wall-clock time and what it runs
        self._fire: Callable[[], Coroutine[Any, Any, None]] | None = None
        self._firing: set[asyncio.Task[None]] = set()  # held until done (tasks are weak)

    def at(self, when: float, fire: Callable[[], Coroutine[Any, Any, None]]) -> None:
        self._when, self._fire = when, fire
        if self._handle is not None and self._handle_at <= when:
            return  # the timer comes first and sets itself again for the rest
        self._set_timer(when)

    def _set_timer(self, when: float) -> None:
        if self._handle is not None:
            self._handle.cancel()
        self._handle_at = when
        delay = max(0.0, when - time.time())
        self._handle = asyncio.get_running_loop().call_later(delay, self._timer)

    def _timer(self) -> None:
        self._handle = None
        fire = self._fire
        if fire is None:
            return
        if self._when > time.time():  # the wake-up moved later since the timer was set
            self._set_timer(self._when)
            return
        self._fire = None  # fired: a new wake-up may be set while this one runs
        task = asyncio.get_running_loop().create_task(fire())
        self._firing.add(task)
        task.add_done_callback(self._firing.discard)

    def cancel(self) -> None:
        self._fire = None
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
