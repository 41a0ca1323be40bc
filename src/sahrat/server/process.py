"""What this process gives its tables and its edges, wherever the tables live.

A table is handed ``TableServices`` (``table/services.py``). Many of them do not
depend on which tables this process serves, nor on the rules of who may sit: the
settings, the event-log writer, the names shown, the rows a table keeps besides its
log (``store/tables.py``). :class:`ProcessServices` holds those, with what the HTTP
and WebSocket edges use (rate limits, password hashing, socket counts); the hub
(``hub.py``) builds on it with the registry of the tables it serves, their
placement, and who may sit (``policy.py``). A base module: it knows no table.
"""

from __future__ import annotations

import asyncio
import logging
from functools import partial
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from sahrat.server import metrics
from sahrat.server.auth import HashPool
from sahrat.server.limits import AccountLimits, Limits
from sahrat.server.sockets import OpenSockets
from sahrat.settings import Settings
from sahrat.store import accounts
from sahrat.store import tables as rows
from sahrat.store.db import make_sessions
from sahrat.store.log import LogWriter
from sahrat.store.tables import MAX_TABLE_ID, in_session, in_transaction

log = logging.getLogger("sahrat.hub")


class ProcessServices:
    """The services of this process that do not depend on where tables live."""

    def __init__(self, settings: Settings, engine: AsyncEngine) -> None:
        self.settings = settings
        self.db = engine
        self.sessions = make_sessions(engine)  # the API runs its own queries in these too
        self.writer = LogWriter(self.sessions, metrics.LOG_WRITE_SECONDS.observe)
        self.names: dict[int, str] = {}  # every name a table shows comes from here
        self.sockets = OpenSockets(settings)
        self.limits = Limits(
            settings.message_rate,
            settings.message_burst,
            settings.account_rate,
            settings.account_burst,
            settings.abuse_limit,
        )
        self.account_limits = AccountLimits(settings)
        self.passwords = HashPool(settings.hash_threads, settings.hash_queue)
        self._background: set[asyncio.Task[None]] = set()

    def background(self, task: asyncio.Task[None]) -> None:
        """Keep a fire-and-forget task alive and log its failure."""
        self._background.add(task)

        def done(finished: asyncio.Task[None]) -> None:
            self._background.discard(finished)
            if not finished.cancelled() and finished.exception() is not None:
                log.error("background task failed", exc_info=finished.exception())

        task.add_done_callback(done)

    # --- names -------------------------------------------------------------------------

    def remember_name(self, user_id: int, name: str) -> None:
        """Remember the name of a user not known yet. A known name changes only by a
        rename (``Hub.apply_rename``): a name read before a rename and remembered after
        it must not bring the old name back."""
        self.names.setdefault(user_id, name)

    def remember_names(self, names: dict[int, str]) -> None:
        for user_id, name in names.items():
            self.remember_name(user_id, name)

    async def learn_names(self, user_ids: list[int]) -> None:
        """Read the names of these users that are not known yet."""
        missing = [uid for uid in user_ids if uid not in self.names]
        if missing:
            self.remember_names(
                await in_session(self.sessions, partial(accounts.names_of, user_ids=missing))
            )

    # --- the rows a table keeps besides its log (TableServices) ------------------------

    async def store_seat(
        self,
        table_id: int,
        seat: int,
        user_id: int | None,
        bot_level: str | None,
        left: bool,
        address: str | None = None,
    ) -> None:
        await in_transaction(
            self.sessions,
            lambda s: rows.write_seat(s, table_id, seat, user_id, bot_level, left, address),
        )
        if user_id is not None:
            await self.learn_names([user_id])  # a seat forwarded from another process

    async def remove_seat(self, table_id: int, seat: int) -> None:
        await in_transaction(self.sessions, lambda s: rows.delete_seat(s, table_id, seat))

    async def store_status(self, table_id: int, status: str) -> None:
        await in_transaction(self.sessions, lambda s: rows.write_status(s, table_id, status))

    async def store_options(self, table_id: int, options: dict[str, Any]) -> None:
        await in_transaction(self.sessions, lambda s: rows.write_options(s, table_id, options))

    async def store_closed(self, table_id: int, free_seats: bool) -> None:
        await in_transaction(self.sessions, lambda s: rows.write_closed(s, table_id, free_seats))

    async def live_table_ids(self) -> list[int]:
        return await in_session(self.sessions, rows.live_table_ids)

    async def admits_stored(self, table_id: int, user_id: int | None, invite: str | None) -> bool:
        """Whether a player may see a table, from the database (for a table this
        process does not serve, or no longer: a finished one): ``store/tables.seen_by``."""
        if not 1 <= table_id <= MAX_TABLE_ID:
            return False
        return await in_session(self.sessions, lambda s: rows.seen_by(s, table_id, user_id, invite))
