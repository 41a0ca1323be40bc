"""What a table needs from the process that serves it, and nothing more.

A table is written against this protocol, never against the hub itself, so the
imports run one way: the transports and the hub know tables; a table knows only its
engine, the store and these services. ``Hub`` (``hub.py``) provides them.
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from sahrat.settings import Settings
from sahrat.store.log import LogWriter


@dataclass
class ServerDefaults:
    """The defaults an admin may change at run time (stored in ``server_settings``;
    the environment's settings are used until an admin sets one)."""

    welcome_grant: int
    free_table_earnings: int
    default_turn_seconds: int
    free_table_earnings_per_day: int

    def to_json(self) -> dict[str, int]:
        return asdict(self)


class TableServices(Protocol):
    """The process around a table: its settings, the log writer, the names and the
    rows it keeps in the database besides the log."""

    settings: Settings
    defaults: ServerDefaults
    writer: LogWriter
    names: dict[int, str]  # display names by user id
    suspended: set[int]  # users who may not sit down (they may watch)

    async def store_seat(
        self,
        table_id: int,
        seat: int,
        user_id: int | None,
        bot_level: str | None,
        left: bool,
        address: str | None = None,
    ) -> None:
        """Write who owns and who controls a seat (and, when it is taken, from where)."""

    async def remove_seat(self, table_id: int, seat: int) -> None:
        """Free a seat of a table that is not playing."""

    async def store_status(self, table_id: int, status: str) -> None:
        """Write a table's status."""

    async def store_options(self, table_id: int, options: dict[str, Any]) -> None:
        """Write a table's (validated) options."""

    async def store_closed(self, table_id: int, free_seats: bool) -> None:
        """Write that a table is closed (and, if it was waiting, free its seats)."""

    async def check_can_sit(self, user_id: int, stake: int) -> None:
        """Raise ``TableError`` if the user may not sit at a table of this stake."""

    async def coin_balances(self, user_ids: list[int]) -> dict[int, int]:
        """Each user's coins now."""

    async def check_rated(self, user_id: int) -> None:
        """Raise ``TableError`` ``rated_cooldown`` if the user may not play rated now."""

    async def seat_ratings(self, user_ids: list[int], pool: str) -> dict[int, tuple[int, bool]]:
        """Each user's shown rating and provisional flag in ``pool``."""

    async def record_rated_leave(
        self, user_id: int, table_id: int, start_seq: int, reason: str
    ) -> None:
        """A player left a rated match (or was forfeited): their cool-down, once per match."""

    def background(self, task: asyncio.Task[None]) -> None:
        """Keep a task alive until it ends, and log it if it fails."""

    def drop(self, table_id: int, reason: str) -> None:
        """Stop serving a table another process now owns."""

    def may_write(self, table_id: int) -> bool:
        """Whether this process still holds the table's lease."""

    def forget_later(self, table_id: int) -> None:
        """A finished table leaves memory once its players are gone."""

    def forget_closed(self, table_id: int) -> None:
        """A table that closed itself (a match of bots its last person left) leaves
        memory at once, and its lease with it."""
