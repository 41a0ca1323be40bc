"""The tables' event log, written with group commit.

Every accepted action is appended to the log **before** anything about it is
sent to a client. Appends from all tables are queued to one writer task,
which writes everything waiting in a single transaction and then wakes the
tables it wrote for. A table only broadcasts after its append is durable, so
a crash never loses an acknowledged move; batching many tables' moves into
one commit is what lets a single process sustain thousands of durable moves
per second.

A batch of plain moves (no match ends, no coins: nearly every batch) is written as
two ``executemany`` driver calls, with statements compiled once and values converted
by the columns' own types, rather than through an ORM session, on a connection the
writer keeps for itself: on a SQLite file in a thread of its own, which takes the
whole batch at once (one thread hop per batch instead of one per statement); on
PostgreSQL an asyncpg connection (no pool checkout and ping per batch). The group
commits of a busy server are small, a few moves each, so the per-batch cost is what
counts (``bench/bench_log_writer.py``). A batch with a match's row or coins takes the
session, where the ledger's checks live: a finished match's row, its players' rows
(``match_players``), its coins and a rated match's ratings are written in one
transaction with its last step.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Column, and_, bindparam, func, insert, select, update
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from .ledger import Movement, post_all
from .models import Base, GameTable, LogEntry, Match, MatchPlayer
from .ratings import RatedMatch, settle_match

QUERY_CHUNK = 500  # ids in one IN (...) list, well under any database's bound

log = logging.getLogger("sahrat.log")

MAX_BATCH = 1000

_tables = Base.metadata.tables[GameTable.__tablename__]
_log = Base.metadata.tables[LogEntry.__tablename__]
_matches = Base.metadata.tables[Match.__tablename__]
_match_players = Base.metadata.tables[MatchPlayer.__tablename__]
_UPDATE_TABLE = (
    update(_tables)
    .where(_tables.c.id == bindparam("b_id"))
    .values(
        seq=bindparam("b_seq"), status=bindparam("b_status"), deadline_at=bindparam("b_deadline")
    )
)


@dataclass
class Append:
    """What one table writes for one accepted step, all or nothing."""

    table_id: int
    entries: list[dict[str, Any]]  # seq, kind, seat, client_id, data
    seq: int
    status: str
    deadline_at: datetime | None
    match: dict[str, Any] | None = None  # a finished match's row
    # ...and its ``match_players`` rows (without ``match_id``: the match's new id)
    match_players: list[dict[str, Any]] = field(default_factory=list)
    # coin movements written in the same transaction (stakes at the start, the payout
    # with the match row); their idempotency keys make a retried batch a no-op
    ledger: list[Movement] = field(default_factory=list)
    # a rated match's ratings, moved with its rows (``ratings.settle_match`` fills in
    # the changes, read once the append is durable)
    rated: RatedMatch | None = None
    done: asyncio.Future[None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


_LOG_COLUMNS = ("table_id", "seq", "kind", "seat", "client_id", "data")


class PlainBatchStatements:
    """The two statements of a plain batch, compiled once for one database, with the
    columns' value conversions (JSON and dates exactly as the ORM would write them)."""

    def __init__(self, dialect: Dialect) -> None:
        # inline: no RETURNING of the new ids (PostgreSQL would send each one back)
        insert_log = insert(_log).inline().values({name: bindparam(name) for name in _LOG_COLUMNS})
        self.insert_sql, insert_order = self._compiled(insert_log, dialect)
        self.update_sql, self.update_order = self._compiled(_UPDATE_TABLE, dialect)
        if insert_order != list(_LOG_COLUMNS):
            raise ValueError(f"unexpected parameter order {insert_order}")
        self.data = self._converter(_log.c.data, dialect)
        self.deadline = self._converter(_tables.c.deadline_at, dialect)

    @staticmethod
    def _compiled(statement: Any, dialect: Dialect) -> tuple[str, list[str]]:
        compiled = statement.compile(dialect=dialect)
        order = list(compiled.positiontup or ())
        if not order:  # a named paramstyle: not one this project's drivers use
            raise ValueError(f"{dialect.name}: positional parameters expected")
        return str(compiled), order

    @staticmethod
    def _converter(column: Column[Any], dialect: Dialect) -> Callable[[Any], Any]:
        process = column.type.dialect_impl(dialect).bind_processor(dialect)
        return process if process is not None else (lambda value: value)

    def log_rows(self, batch: list[Append]) -> list[tuple[Any, ...]]:
        data = self.data
        return [
            (
                item.table_id,
                entry["seq"],
                entry["kind"],
                entry["seat"],
                entry["client_id"],
                data(entry["data"]),
            )
            for item in batch
            for entry in item.entries
        ]

    def table_rows(self, batch: list[Append]) -> list[tuple[Any, ...]]:
        latest = {item.table_id: item for item in batch}  # a table's last append wins
        deadline, order = self.deadline, self.update_order
        rows = []
        for item in latest.values():
            values = {
                "b_id": item.table_id,
                "b_seq": item.seq,
                "b_status": item.status,
                "b_deadline": deadline(item.deadline_at),
            }
            rows.append(tuple(values[name] for name in order))
        return rows


class SqliteBatchWriter:
    """The writer's own connection to a SQLite file, used from one thread: a plain batch
    is one call there (BEGIN IMMEDIATE, two executemany, COMMIT). Its pragmas are the
    engine's (db.py): WAL, synchronous=NORMAL, foreign keys."""

    def __init__(self, path: str, plain: PlainBatchStatements) -> None:
        self._path = path
        self._plain = plain
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="log-writer")
        self._conn: sqlite3.Connection | None = None

    async def write(self, batch: list[Append]) -> None:
        log_rows, table_rows = self._plain.log_rows(batch), self._plain.table_rows(batch)
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._thread, self._write, log_rows, table_rows)

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            conn = sqlite3.connect(self._path, timeout=30, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            self._conn = conn
        return self._conn

    def _write(self, log_rows: list[tuple[Any, ...]], table_rows: list[tuple[Any, ...]]) -> None:
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            if log_rows:
                conn.executemany(self._plain.insert_sql, log_rows)
            conn.executemany(self._plain.update_sql, table_rows)
        except BaseException as error:
            conn.execute("ROLLBACK")
            if isinstance(error, sqlite3.IntegrityError):  # as the ORM path raises it
                raise IntegrityError(self._plain.insert_sql, None, error) from error
            raise
        conn.execute("COMMIT")

    async def close(self) -> None:
        """Close the connection in its thread, after any write still running there (the
        loop is not blocked meanwhile: that write may wait for a lock the loop's own
        connections hold)."""

        def close_connection() -> None:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

        await asyncio.get_running_loop().run_in_executor(self._thread, close_connection)
        self._thread.shutdown(wait=False)


class PostgresBatchWriter:
    """The writer's own asyncpg connection: a plain batch is one transaction of two
    ``executemany``. A connection that failed is dropped; the next batch opens another
    (a database outage refuses moves while it lasts, as on the pool's connections)."""

    CONNECT_SECONDS = 5.0
    RETRY_SECONDS = 0.5  # after a failed connect, appends fail at once for this long

    def __init__(self, engine: AsyncEngine, plain: PlainBatchStatements) -> None:
        args, kwargs = engine.dialect.create_connect_args(engine.url)
        self._args, self._kwargs = list(args), dict(kwargs)
        self._plain = plain
        self._conn: Any = None
        self._retry_at = 0.0

    async def write(self, batch: list[Append]) -> None:
        import asyncpg  # type: ignore[import-untyped]

        log_rows, table_rows = self._plain.log_rows(batch), self._plain.table_rows(batch)
        if self._conn is None or self._conn.is_closed():
            if time.monotonic() < self._retry_at:  # the database was just unreachable:
                raise ConnectionError("the database is unreachable")  # fail the batch now
            try:
                self._conn = await asyncpg.connect(
                    *self._args, **self._kwargs, timeout=self.CONNECT_SECONDS
                )
            except Exception:
                self._retry_at = time.monotonic() + self.RETRY_SECONDS
                raise
        conn = self._conn
        try:
            async with conn.transaction():
                if log_rows:
                    await conn.executemany(self._plain.insert_sql, log_rows)
                await conn.executemany(self._plain.update_sql, table_rows)
        except asyncpg.IntegrityConstraintViolationError as error:  # as the ORM path raises it
            raise IntegrityError(self._plain.insert_sql, None, error) from error
        except (OSError, asyncpg.PostgresConnectionError, asyncpg.InterfaceError):
            self._conn = None
            conn.terminate()
            raise

    async def close(self) -> None:
        if self._conn is not None:
            conn, self._conn = self._conn, None
            with contextlib.suppress(Exception):
                await asyncio.wait_for(conn.close(), 5)


def _sqlite_file(engine: AsyncEngine) -> str | None:
    """The database file of a SQLite engine (not an in-memory one)."""
    url = engine.url
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return None
    if url.database.startswith("file:"):  # a URI filename: leave it to the engine
        return None
    return url.database


class LogWriter:
    """One writer task for the whole process; ``append`` returns once durable."""

    def __init__(
        self,
        sessions: async_sessionmaker[Any],
        on_batch: Callable[[float], None] | None = None,
    ) -> None:
        self._sessions = sessions
        engine = sessions.kw.get("bind")
        self._engine: AsyncEngine | None = engine if isinstance(engine, AsyncEngine) else None
        self._plain = (
            PlainBatchStatements(self._engine.dialect) if self._engine is not None else None
        )
        sqlite_file = _sqlite_file(self._engine) if self._engine is not None else None
        self._sqlite = (
            SqliteBatchWriter(sqlite_file, self._plain)
            if sqlite_file is not None and self._plain is not None
            else None
        )
        self._postgres = (
            PostgresBatchWriter(self._engine, self._plain)
            if self._engine is not None
            and self._plain is not None
            and self._engine.dialect.driver == "asyncpg"
            else None
        )
        self._on_batch = on_batch  # told each committed batch's seconds (for metrics)
        self._queue: asyncio.Queue[Append] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self.batches = 0
        self.written = 0
        self.last_batch_ms = 0.0

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="log-writer")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._sqlite is not None:
            await self._sqlite.close()
            self._sqlite = None
        if self._postgres is not None:
            await self._postgres.close()

    async def append(self, item: Append) -> None:
        """Queue ``item`` and wait until it is committed (raises if it could not be)."""
        await self._queue.put(item)
        await item.done

    async def _run(self) -> None:
        while True:
            first = await self._queue.get()
            batch = [first]
            while len(batch) < MAX_BATCH and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            started = time.perf_counter()
            try:
                await self._write(batch)
            except Exception:  # one bad append must not sink the others: retry alone
                log.warning("log batch of %d failed; retrying one by one", len(batch))
                for item in batch:
                    try:
                        await self._write([item])
                    except Exception as error:
                        if not item.done.done():
                            item.done.set_exception(error)
                    else:
                        if not item.done.done():
                            item.done.set_result(None)
                continue
            self.batches += 1
            self.written += len(batch)
            seconds = time.perf_counter() - started
            self.last_batch_ms = seconds * 1000
            if self._on_batch is not None:
                self._on_batch(seconds)
            for item in batch:
                if not item.done.done():
                    item.done.set_result(None)

    async def _write(self, batch: list[Append]) -> None:
        plain = not any(item.match or item.ledger for item in batch)
        if plain and self._sqlite is not None:
            await self._sqlite.write(batch)
            return
        if plain and self._postgres is not None:
            await self._postgres.write(batch)
            return
        if plain and self._engine is not None and self._plain is not None:
            await self._write_plain(self._engine, self._plain, batch)
            return
        await self._write_with_session(batch)

    async def _write_plain(
        self, engine: AsyncEngine, plain: PlainBatchStatements, batch: list[Append]
    ) -> None:
        """Moves only: two driver calls in one transaction."""
        log_rows, table_rows = plain.log_rows(batch), plain.table_rows(batch)
        async with engine.begin() as conn:
            if log_rows:
                await conn.exec_driver_sql(plain.insert_sql, log_rows)
            await conn.exec_driver_sql(plain.update_sql, table_rows)

    async def _write_with_session(self, batch: list[Append]) -> None:
        rows = [{"table_id": item.table_id, **entry} for item in batch for entry in item.entries]
        async with self._sessions() as session, session.begin():
            # Core statements executed as executemany: no ORM unit of work per row.
            if rows:
                await session.execute(insert(_log), rows)
            for item in batch:
                if item.match:
                    await _insert_match(
                        session, item.table_id, item.match, item.match_players, item.rated
                    )
            latest = {
                item.table_id: {
                    "b_id": item.table_id,
                    "b_seq": item.seq,
                    "b_status": item.status,
                    "b_deadline": item.deadline_at,
                }
                for item in batch
            }
            await session.execute(_UPDATE_TABLE, list(latest.values()))
            for item in batch:
                await post_all(session, item.ledger)


async def _insert_match(
    session: AsyncSession,
    table_id: int,
    match: dict[str, Any],
    players: list[dict[str, Any]],
    rated: RatedMatch | None = None,
) -> None:
    """A finished match's row and its players' rows (matches are rare: one at a time),
    and a rated match's ratings."""
    match_id = (
        await session.execute(
            insert(_matches).values(table_id=table_id, **match).returning(_matches.c.id)
        )
    ).scalar_one()
    if players:
        await session.execute(
            insert(_match_players), [{"match_id": match_id, **row} for row in players]
        )
    if rated is not None:
        await settle_match(session, match_id, rated)


async def current_match_entries(
    session: AsyncSession, table_ids: Sequence[int]
) -> dict[int, list[LogEntry]]:
    """Each table's log from its current match's ``start`` on, in order: what a restore
    replays. The log keeps every match a table played; a table where players asked for
    rematch after rematch is read from its last start only, so restoring it costs one
    match whatever its history. A table with no start has no entries."""
    found: dict[int, list[LogEntry]] = {table_id: [] for table_id in table_ids}
    starts = (
        select(LogEntry.table_id, func.max(LogEntry.seq).label("seq"))
        .where(LogEntry.table_id.in_(bindparam("ids", expanding=True)), LogEntry.kind == "start")
        .group_by(LogEntry.table_id)
        .subquery()
    )
    query = (
        select(LogEntry)
        .join(starts, and_(LogEntry.table_id == starts.c.table_id, LogEntry.seq >= starts.c.seq))
        .order_by(LogEntry.table_id, LogEntry.seq)
    )
    ids = list(found)
    for first in range(0, len(ids), QUERY_CHUNK):
        rows = await session.scalars(query, {"ids": ids[first : first + QUERY_CHUNK]})
        for row in rows:
            found[row.table_id].append(row)
    return found
