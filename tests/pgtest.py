"""A fresh PostgreSQL database for a test session (one per xdist worker).

PostgreSQL is expected at 127.0.0.1:5432 as ``postgres`` (override with
``SAHRAT_TEST_PG_HOST``/``_PORT``/``_USER``). When it is unreachable the tests
that need it skip with the reason — except when ``CI`` is set: then they fail,
so CI never passes without having run them.
"""

from __future__ import annotations

import asyncio
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

PG_HOST = os.environ.get("SAHRAT_TEST_PG_HOST", "127.0.0.1")
PG_PORT = int(os.environ.get("SAHRAT_TEST_PG_PORT", "5432"))
PG_USER = os.environ.get("SAHRAT_TEST_PG_USER", "postgres")


async def _execute(sql: str) -> None:
    import asyncpg  # type: ignore[import-untyped]

    conn = await asyncpg.connect(
        host=PG_HOST, port=PG_PORT, user=PG_USER, database="postgres", timeout=5
    )
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


@contextmanager
def fresh_database(prefix: str, what: str) -> Iterator[str]:
    """Create a database named ``prefix_<random>``, yield its URL, drop it after."""
    name = f"{prefix}_{secrets.token_hex(6)}"
    try:
        asyncio.run(_execute(f'CREATE DATABASE "{name}"'))
    except Exception as error:  # unreachable, refused, no such role...
        reason = f"PostgreSQL at {PG_USER}@{PG_HOST}:{PG_PORT} is not usable: {error!r}"
        if os.environ.get("CI"):
            pytest.fail(f"{reason} (CI is set: {what} must run)")
        pytest.skip(reason)
    try:
        yield f"postgresql+asyncpg://{PG_USER}@{PG_HOST}:{PG_PORT}/{name}"
    finally:
        asyncio.run(_execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@contextmanager
def store_url(kind: str, folder: Path, prefix: str, what: str) -> Iterator[str]:
    """A fresh store of ``kind``: a SQLite file in ``folder``, or a fresh PostgreSQL
    database named after ``prefix`` (dropped after)."""
    if kind == "sqlite":
        yield f"sqlite+aiosqlite:///{folder / 'store.db'}"
        return
    with fresh_database(prefix, what) as url:
        yield url
