"""The former: forms rated tables from the queue, in waves.

Every process runs one. A wave (every ``SAHRAT_QUEUE_WAVE_SECONDS``, and at once
after a player queues on this process) sweeps the queue — entries not heard of for
``SAHRAT_QUEUE_STALE_SECONDS`` are dropped — reads the waiting entries, asks
``pairing.pair`` which tables to form, and claims their entries, all in one short
transaction (``store/queue.py``: on PostgreSQL the entries are read ``FOR UPDATE
SKIP LOCKED`` and marked claimed before the commit, so that no entry is ever read by
two processes' waves, nor seated at two tables). Then, outside any transaction, each
table is formed through the hub (``seat``, given by the composition root: a rated
table, its players seated, bots in the seats nobody took, the hand dealt at once),
and its entries are marked seated at it. A player a table refuses (suspended since
they queued) leaves the queue; the others of that table go back to it, their place
kept. A process that dies while forming leaves claimed entries behind: a later wave
of any process gives them back to the queue after ``CLAIM_SECONDS``.

A base module: it knows no hub and no table, only the ``Seat`` callable it is given.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from sahrat.server.matchmaking.pairing import SPEEDS, Entry, Formation, Rules, pair
from sahrat.settings import Settings
from sahrat.store import queue
from sahrat.store import ratings as store_ratings
from sahrat.store.models import QueueEntry

log = logging.getLogger("sahrat.queue")

CLAIM_SECONDS = 120.0  # a claim older than this belongs to a process that died forming
SEATED_KEEP_SECONDS = 3600.0  # a seated entry answers GET /api/queue this long


class SeatRefused(Exception):
    """The table refused a player of a formation (``code`` is the table's refusal);
    the table formed so far is closed."""

    def __init__(self, user_id: int, code: str, message: str) -> None:
        super().__init__(message)
        self.user_id = user_id
        self.code = code


@dataclass(frozen=True)
class QueuedTable:
    """A table to open for a formation: what ``Seat`` is given."""

    game: str
    options: Mapping[str, Any]  # players, threshold, turn_seconds
    seats: Sequence[tuple[int, str | None]]  # (user id, network), the creator first
    bots: int  # seats left to bots


# Opens the table, seats its players and starts it; returns its id (raises SeatRefused).
Seat = Callable[[QueuedTable], Awaitable[int]]


def table_options(entry: QueueEntry) -> dict[str, Any]:
    """The options of the table an entry waits for (the rest are the defaults)."""
    options: dict[str, Any] = {"turn_seconds": entry.turn_seconds}
    if entry.game == "konkan":
        options["players"] = entry.players
        options["threshold"] = entry.threshold
    return options


def entry_view(row: QueueEntry) -> Entry:
    return Entry(
        user_id=row.user_id,
        game=row.game,
        pool=row.pool,
        players=row.players,
        speed=row.speed,
        rating=row.rating,
        network=row.network,
        joined_at=queue.aware(row.joined_at).timestamp(),
    )


class Former:
    """This process's former: waves on a timer and on demand (``poke``)."""

    def __init__(
        self,
        settings: Settings,
        sessions: async_sessionmaker[Any],
        seat: Seat,
        rules: Rules | None = None,
    ) -> None:
        self.settings = settings
        self.sessions = sessions
        self.seat = seat
        self.rules = rules or Rules(bot_wait=settings.queue_bot_wait_seconds)
        self.name = secrets.token_hex(8)  # this process, in the claims it makes
        self._wake = asyncio.Event()
        self._next: asyncio.Future[None] | None = None  # done when the asked-for wave is
        self._lock = asyncio.Lock()  # one wave at a time in this process
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="queue-former")

    async def stop(self) -> None:
        if self._next is not None and not self._next.done():
            self._next.set_result(None)  # nobody waits for a wave that will not come
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    def poke(self) -> asyncio.Future[None]:
        """Run a wave now (a player just queued here): a future done once a wave that
        began after this call has ended. Joins at once share one wave."""
        if self._next is None:
            self._next = asyncio.get_running_loop().create_future()
        self._wake.set()
        return self._next

    async def _run(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):  # the timer's wave
                await asyncio.wait_for(self._wake.wait(), self.settings.queue_wave_seconds)
            self._wake.clear()
            asked, self._next = self._next, None
            try:
                await self.wave()
            except asyncio.CancelledError:
                raise
            except Exception:  # the database out of reach, say: the next wave tries again
                log.exception("a queue wave failed")
            finally:
                if asked is not None and not asked.done():
                    asked.set_result(None)

    async def wave(self) -> list[int]:
        """One wave: the ids of the tables it formed."""
        async with self._lock:
            now = datetime.now(UTC)
            stale_before = now - timedelta(seconds=self.settings.queue_stale_seconds)
            async with self.sessions() as session, session.begin():
                await queue.sweep(
                    session,
                    stale_before,
                    now - timedelta(seconds=SEATED_KEEP_SECONDS),
                    now - timedelta(seconds=CLAIM_SECONDS),
                )
            async with self.sessions() as session, session.begin():
                rows = {
                    row.user_id: row for row in await queue.waiting_locked(session, stale_before)
                }
                formations = pair(
                    [entry_view(row) for row in rows.values()],
                    now.timestamp(),
                    self.rules,
                    await self._repeats(session, list(rows), now),
                )
                wanted = [entry.user_id for formed in formations for entry in formed.entries]
                claimed = await queue.claim(session, wanted, self.name, now)
                # Every entry read here is claimed here (the rows are locked), but if
                # another wave got one first, its formation is not formed by this one.
                whole = [f for f in formations if {e.user_id for e in f.entries} <= claimed]
                await queue.release(
                    session, claimed - {e.user_id for f in whole for e in f.entries}, self.name
                )
                formations = whole
            formed = []
            for formation in formations:
                table_id = await self._form(formation, [rows[e.user_id] for e in formation.entries])
                if table_id is not None:
                    formed.append(table_id)
            return formed

    async def _repeats(
        self, session: AsyncSession, user_ids: list[int], now: datetime
    ) -> set[frozenset[int]]:
        """The waiting players met too often lately (docs/rating.md: a match of theirs
        together would move neither's rating), pair by pair."""
        limit = self.settings.rated_repeat_limit
        if limit <= 0 or len(user_ids) < 2:
            return set()
        since = now - timedelta(hours=self.settings.rated_repeat_hours)
        met = await store_ratings.met_lately(session, user_ids, since, match_id=0)
        return {pair for pair, times in met.items() if times >= limit}

    async def _form(self, formation: Formation, rows: list[QueueEntry]) -> int | None:
        users = [row.user_id for row in rows]
        table = QueuedTable(
            game=rows[0].game,
            options=table_options(rows[0]),
            seats=[(row.user_id, row.network) for row in rows],
            bots=formation.bots,
        )
        try:
            table_id = await self.seat(table)
        except SeatRefused as refused:
            log.info("queue: %s refused at a new table (%s)", refused.user_id, refused.code)
            async with self.sessions() as session, session.begin():
                await queue.drop(session, [refused.user_id])
                await queue.release(session, users, self.name)
            return None
        except Exception:
            log.exception("queue: a table could not be formed; its players wait on")
            async with self.sessions() as session, session.begin():
                await queue.release(session, users, self.name)
            return None
        async with self.sessions() as session, session.begin():
            await queue.seat(session, users, self.name, table_id, datetime.now(UTC))
        log.info("queue: table %s formed for %s (%s bots)", table_id, users, formation.bots)
        return table_id


def turn_seconds(speed: str) -> int:
    return SPEEDS[speed]
