"""What a move is at a table: an accepted step, the position a move is made from, and
how a move nobody typed is handed to the table.

A command, the timer's timeout and a bot's choice all end as :class:`Step` values
that the table commits in one way. A move nobody typed is handed over as a
:data:`MakeSteps`: the table calls it under its lock with the :class:`Position` it
is at then, so a move asked for at one seq is never played at another.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from sahrat.rules.events import Event
from sahrat.server.table.pacing import ROUND_ENDS


@dataclass
class Step:
    """One accepted action with what it caused."""

    seq: int
    action: dict[str, Any]
    events: list[Event]
    by: str  # "player", "timer" or "bot"
    seat: int
    cid: str | None

    def entry(self) -> dict[str, Any]:
        """The step as the table's event log keeps it (an ``action`` entry)."""
        return {
            "seq": self.seq,
            "kind": "action",
            "seat": self.seat,
            "client_id": self.cid,
            "data": {"action": self.action, "by": self.by},
        }

    @property
    def ends_round(self) -> bool:
        """The step ended a Konkan round or a Conquian deal."""
        return any(event.type in ROUND_ENDS for event in self.events)


Steps = list[tuple[Step, Any]]  # each step with the match state it leads to


@dataclass(frozen=True)
class Position:
    """Where the table is when a move nobody typed is played: its seq, whether a
    match is being played, the match's state, and whether it pauses between rounds."""

    seq: int
    playing: bool
    state: Any
    paused: bool

    def at(self, seq: int) -> bool:
        """A move asked for at ``seq`` may still be played: nothing moved since."""
        return self.seq == seq and self.playing and self.state is not None


MakeSteps = Callable[[Position], Awaitable[Steps]]
"""A move nobody typed: from the table's position, the steps to commit (none: no move)."""

Submit = Callable[[str, MakeSteps], Coroutine[Any, Any, None]]
"""The table's one entry for a move nobody typed: ``submit(by, make)``, ``by`` the
timer or a bot."""
