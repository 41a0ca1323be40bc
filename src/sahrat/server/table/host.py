"""What a table's operations use of the table (``lifecycle.py``, ``seat_control.py``):
:class:`Host`, written as a protocol so that those modules act on the ``Table`` without
importing it."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any, Protocol

from sahrat.rules.engine import Engine
from sahrat.server.table.audience import Audience
from sahrat.server.table.bots import BotDriver
from sahrat.server.table.match import Match
from sahrat.server.table.pace import Pace
from sahrat.server.table.seating import Seating
from sahrat.server.table.services import TableServices


class Host(Protocol):
    """What these operations use of a table: its parts, and the moves it makes."""

    id: int
    services: TableServices
    engine: Engine
    game: str
    creator_id: int
    log: logging.LoggerAdapter[logging.Logger]
    seating: Seating
    match: Match
    pace: Pace
    audience: Audience
    bots: BotDriver
    rated: bool
    ratings: dict[int, tuple[int, bool]]
    rating_changes: dict[str, Any] | None

    @property
    def players(self) -> int: ...

    @property
    def pool(self) -> str: ...

    @property
    def bots_allowed(self) -> bool: ...

    @property
    def bot_level(self) -> str: ...

    def check_lease(self) -> None: ...

    def arm(self) -> None: ...

    def schedule_bot(self) -> None: ...

    def break_changed(self) -> None: ...

    def close(self, code: int = 1000, reason: str = "") -> None: ...


def as_datetime(timestamp: float | None) -> datetime | None:
    return None if timestamp is None else datetime.fromtimestamp(timestamp, UTC)
