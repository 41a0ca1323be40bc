"""The rating leaderboard's query (``GET /api/ratings``) with 100,000 rated players.

A fresh database (a SQLite file, and a fresh PostgreSQL database on 127.0.0.1:5432 as
``postgres``, as the tests use), migrated to head, filled with ``--players`` accounts
(one in ten a guest) rated in ``konkan51``, and half of them in ``konkan71`` too: a
shown number drawn around 1900, one in five still provisional, last played within the
last 60 days (so about half are on the board). Then ``sahrat.store.ratings.leaderboard``
— the query the endpoint runs — is timed ``--repeats`` times for the top 50, after two
unmeasured runs, on a session of its own each time (a request's own session).

The peer, in the same run: the same query once ``ix_ratings_board`` is dropped (the
database must then read and sort the pool's rows). The plan of each is printed. On
PostgreSQL the query's own execution time (``EXPLAIN ANALYZE``) is reported too: the
database server is not pinned, and on a shared machine the round trip varies most.

    .venv/bin/python bench/bench_rating_board.py --players 100000 --repeats 30
    .venv/bin/python bench/bench_rating_board.py --db sqlite
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import secrets
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import insert, select, text

from sahrat.server.migrate import migrate
from sahrat.store import ratings
from sahrat.store.db import make_engine, make_sessions
from sahrat.store.models import Rating, User

PG = "postgresql+asyncpg://postgres@127.0.0.1:5432"
CHUNK = 5000


async def _pg(sql: str) -> None:
    import asyncpg  # type: ignore[import-untyped]

    conn = await asyncpg.connect(host="127.0.0.1", port=5432, user="postgres", database="postgres")
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


@asynccontextmanager
async def database(kind: str) -> AsyncIterator[str]:
    if kind == "sqlite":
        with tempfile.TemporaryDirectory() as folder:
            yield f"sqlite+aiosqlite:///{Path(folder) / 'board.db'}"
        return
    name = f"sahrat_bench_{secrets.token_hex(4)}"
    await _pg(f'CREATE DATABASE "{name}"')
    try:
        yield f"{PG}/{name}"
    finally:
        await _pg(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


async def fill(url: str, players: int, now: datetime, seed: int) -> None:
    rng = random.Random(seed)
    engine = make_engine(url)
    sessions = make_sessions(engine)
    try:
        for first in range(0, players, CHUNK):
            ids = range(first + 1, min(players, first + CHUNK) + 1)
            users = [
                {
                    "id": i,
                    "name": f"p{i}",
                    "name_key": f"p{i}",
                    "guest": rng.random() < 0.1,
                    "password_hash": None,
                }
                for i in ids
            ]
            rows = []
            for i in ids:
                for pool in ("konkan51", "konkan71") if i % 2 else ("konkan51",):
                    sigma = rng.uniform(2.0, 8.4)
                    provisional = rng.random() < 0.2
                    if not provisional:
                        sigma = min(sigma, 5.9)
                    mu = rng.gauss(25 + 3 * sigma, 6)
                    rows.append(
                        {
                            "user_id": i,
                            "pool": pool,
                            "mu": mu,
                            "sigma": sigma,
                            "games": rng.randint(1, 400),
                            "shown": round(1500 + 25 * (mu - 3 * sigma)),
                            "provisional": provisional,
                            "last_played_at": now - timedelta(seconds=rng.uniform(0, 60 * 86400)),
                        }
                    )
            async with sessions() as session, session.begin():
                await session.execute(insert(User), users)
                await session.execute(insert(Rating), rows)
        async with engine.begin() as conn:
            await conn.execute(text("ANALYZE"))
    finally:
        await engine.dispose()


def board_query(now: datetime) -> Any:
    """The leaderboard's query as ``ratings.leaderboard`` builds it (its ids only)."""
    return (
        select(Rating.user_id)
        .join(User, User.id == Rating.user_id)
        .where(
            Rating.pool == "konkan51",
            Rating.provisional.is_(False),
            Rating.last_played_at >= now - timedelta(days=30),
            User.guest.is_(False),
        )
        .order_by(Rating.shown.desc(), Rating.user_id.desc())
        .limit(50)
    )


async def server_side(url: str, now: datetime, repeats: int) -> list[float]:
    """PostgreSQL's own execution time of the query (``EXPLAIN ANALYZE``): the query
    alone, without the round trip, the driver or the session."""
    engine = make_engine(url)
    compiled = board_query(now).compile(engine, compile_kwargs={"literal_binds": True})
    times = []
    try:
        async with engine.connect() as conn:
            for run in range(repeats + 2):
                rows = (await conn.execute(text(f"EXPLAIN (ANALYZE) {compiled}"))).all()
                found = [r[0] for r in rows if str(r[0]).startswith("Execution Time")]
                if run >= 2:
                    times.append(float(found[0].split(":")[1].split()[0]))
    finally:
        await engine.dispose()
    return times


async def plan(url: str, now: datetime) -> str:
    engine = make_engine(url)
    try:
        compiled = board_query(now).compile(engine, compile_kwargs={"literal_binds": True})
        explain = "EXPLAIN QUERY PLAN " if url.startswith("sqlite") else "EXPLAIN "
        async with engine.connect() as conn:
            rows = (await conn.execute(text(explain + str(compiled)))).all()
        return "\n".join("    " + " | ".join(str(c) for c in row) for row in rows)
    finally:
        await engine.dispose()


async def timed(url: str, now: datetime, repeats: int) -> list[float]:
    engine = make_engine(url)
    sessions = make_sessions(engine)
    times = []
    try:
        for run in range(repeats + 2):
            started = time.perf_counter()
            async with sessions() as session:
                board = await ratings.leaderboard(session, "konkan51", now, 50)
            elapsed = time.perf_counter() - started
            assert len(board) == 50 and board[0].rating >= board[-1].rating
            if run >= 2:
                times.append(elapsed * 1000)
    finally:
        await engine.dispose()
    return times


def row(label: str, times: list[float]) -> str:
    return (
        f"| {label} | {statistics.median(times):.2f} "
        f"[{min(times):.2f}–{max(times):.2f}] | {len(times)} |"
    )


async def bench(kind: str, players: int, repeats: int) -> list[str]:
    now = datetime.now(UTC)
    out = []
    async with database(kind) as url:
        await migrate(url)
        started = time.perf_counter()
        await fill(url, players, now, seed=7)
        print(f"{kind}: filled in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        print(f"{kind} plan with ix_ratings_board:\n{await plan(url, now)}", file=sys.stderr)
        out.append(row(f"{kind}, ix_ratings_board", await timed(url, now, repeats)))
        if kind == "postgres":
            times = await server_side(url, now, repeats)
            out.append(row(f"{kind}, ix_ratings_board, server-side execution", times))
        engine = make_engine(url)
        async with engine.begin() as conn:
            await conn.execute(text("DROP INDEX ix_ratings_board"))
        await engine.dispose()
        print(f"{kind} plan without it:\n{await plan(url, now)}", file=sys.stderr)
        out.append(row(f"{kind}, no index (peer)", await timed(url, now, repeats)))
        if kind == "postgres":
            times = await server_side(url, now, repeats)
            out.append(row(f"{kind}, no index (peer), server-side execution", times))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--db", default="sqlite,postgres", help="sqlite, postgres or both")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    lines = [
        f"| top 50 of {args.players:,} rated players | ms, median [min–max] | runs |",
        "|---|---|---|",
    ]
    for kind in args.db.split(","):
        lines += asyncio.run(bench(kind.strip(), args.players, args.repeats))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
