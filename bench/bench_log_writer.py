"""The event log's group-commit writer alone: CPU per durable append.

Not a test. ``--tables`` tasks each append one action after another (each waits
until its append is durable, as a table does before it sends an update) to the
process's one ``LogWriter``, for ``--seconds``; it prints appends per second,
the process's CPU per append (the writer's own thread included: SQLite's driver
runs in a thread) and the mean batch size, on SQLite (a file in a temporary
folder) or on a fresh PostgreSQL database that is dropped afterwards.

    .venv/bin/python bench/bench_log_writer.py --db sqlite --runs 3
    .venv/bin/python bench/bench_log_writer.py --db postgres --runs 3
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import insert, text

from sahrat.store.db import make_engine, make_sessions
from sahrat.store.log import Append, LogWriter
from sahrat.store.models import Base, GameTable, User

PG = "postgresql+asyncpg://postgres@127.0.0.1:5432"


async def one_run(url: str, tables: int, seconds: float) -> tuple[float, float, float]:
    engine = make_engine(url)
    async with engine.begin() as conn:
        await conn.run_sync(Base.metadata.create_all)
        await conn.execute(insert(User.__table__), [{"name": "bench", "name_key": "bench"}])
        await conn.execute(
            insert(GameTable.__table__),
            [
                {"game": "conquian", "options": {}, "creator_id": 1, "status": "playing"}
                for _ in range(tables)
            ],
        )
    writer = LogWriter(make_sessions(engine))
    writer.start()
    try:
        return await _appends(writer, tables, seconds)
    finally:
        await writer.stop()
        await engine.dispose()


async def _appends(writer: LogWriter, tables: int, seconds: float) -> tuple[float, float, float]:
    stop = time.perf_counter() + seconds
    done = 0

    async def table(table_id: int) -> None:
        nonlocal done
        seq = 0
        while time.perf_counter() < stop:
            seq += 1
            entry = {
                "seq": seq,
                "kind": "action",
                "seat": seq % 2,
                "client_id": f"c{seq}",
                "data": {
                    "action": {"type": "discard", "seat": seq % 2, "card": "7H"},
                    "by": "player",
                },
            }
            deadline = datetime.now(UTC)
            await writer.append(Append(table_id, [entry], seq, "playing", deadline))
            done += 1

    cpu0, wall0, batches0 = time.process_time(), time.perf_counter(), writer.batches
    await asyncio.gather(*(table(i + 1) for i in range(tables)))
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    batches = writer.batches - batches0
    return done / wall, cpu / done * 1e6, done / max(batches, 1)


async def with_database(db: str, tables: int, seconds: float) -> tuple[float, float, float]:
    if db == "sqlite":
        with tempfile.TemporaryDirectory() as folder:
            return await one_run(f"sqlite+aiosqlite:///{Path(folder) / 'log.db'}", tables, seconds)
    name = f"sahrat_bench_{secrets.token_hex(4)}"
    admin = make_engine(f"{PG}/postgres")
    async with admin.connect() as conn:
        await conn.execution_options(isolation_level="AUTOCOMMIT")
        await conn.execute(text(f"CREATE DATABASE {name}"))
    try:
        return await one_run(f"{PG}/{name}", tables, seconds)
    finally:
        async with admin.connect() as conn:
            await conn.execution_options(isolation_level="AUTOCOMMIT")
            await conn.execute(text(f"DROP DATABASE {name} WITH (FORCE)"))
        await admin.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    results = [
        asyncio.run(with_database(args.db, args.tables, args.seconds)) for _ in range(args.runs)
    ]

    def spread(values: list[float]) -> str:
        return f"{statistics.median(values):,.1f} [{min(values):,.1f}–{max(values):,.1f}]"

    print("| db | tables | appends/s | CPU µs per append | appends per batch |")
    print("|---|---:|---|---|---|")
    columns = list(zip(*results, strict=True))
    print(
        f"| {args.db} | {args.tables} | {spread(list(columns[0]))} | "
        f"{spread(list(columns[1]))} | {spread(list(columns[2]))} |"
    )


if __name__ == "__main__":
    main()
