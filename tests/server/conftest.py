"""Fixtures for the server tests: a real server process on SQLite and on PostgreSQL.

Every test here is marked ``server``. ``database`` is parametrised over a SQLite
file in the test's tmp_path and a PostgreSQL database created for the test
session (``sahrat_test_<random>`` on 127.0.0.1:5432, user postgres, dropped at the
end). Without a reachable PostgreSQL the PostgreSQL cases are skipped — unless
``CI`` is set, where they fail instead. ``start_server`` starts ``sahrat serve``
on a free port and kills every server it started at teardown.
"""

from __future__ import annotations

import asyncio
import os
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from .harness import ServerProcess

HERE = Path(__file__).resolve().parent
PG_HOST = os.environ.get("SAHRAT_TEST_PG_HOST", "127.0.0.1")
PG_PORT = int(os.environ.get("SAHRAT_TEST_PG_PORT", "5432"))
PG_USER = os.environ.get("SAHRAT_TEST_PG_USER", "postgres")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "server: starts a real sahrat server process (SQLite and PostgreSQL)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.server)


async def _pg_execute(sql: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(
        host=PG_HOST, port=PG_PORT, user=PG_USER, database="postgres", timeout=5
    )
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A fresh PostgreSQL database for this session (this xdist worker), dropped after."""
    name = f"sahrat_test_{secrets.token_hex(6)}"
    try:
        asyncio.run(_pg_execute(f'CREATE DATABASE "{name}"'))
    except Exception as error:  # unreachable, refused, no such role...
        reason = f"PostgreSQL at {PG_USER}@{PG_HOST}:{PG_PORT} is not usable: {error!r}"
        if os.environ.get("CI"):
            pytest.fail(f"{reason} (CI is set: the PostgreSQL server tests must run)")
        pytest.skip(reason)
    try:
        yield f"postgresql+asyncpg://{PG_USER}@{PG_HOST}:{PG_PORT}/{name}"
    finally:
        asyncio.run(_pg_execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture(params=["sqlite", "postgres"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'sahrat.db'}"
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture
def start_server(database: str, tmp_path: Path) -> Iterator[Callable[..., ServerProcess]]:
    """``start_server(**env)``: a ready server on ``database``; all killed at teardown."""
    started: list[ServerProcess] = []

    def start(**env: str) -> ServerProcess:
        server = ServerProcess(database, tmp_path, env)
        started.append(server)
        return server.start()

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def server(start_server: Callable[..., ServerProcess]) -> ServerProcess:
    return start_server()
