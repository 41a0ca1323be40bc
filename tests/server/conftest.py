"""Fixtures for the server tests: a real server process on SQLite and on PostgreSQL.

Every test here is marked ``server``. ``database`` is parametrised over a SQLite
file in the test's tmp_path and a PostgreSQL database created for the test
session (``sahrat_test_<random>`` on 127.0.0.1:5432, user postgres, dropped at the
end). Without a reachable PostgreSQL the PostgreSQL cases are skipped — unless
``CI`` is set, where they fail instead. ``start_server`` starts ``sahrat serve``
on a free port and kills every server it started at teardown.

A module whose subject never reaches the database (the edge, in-memory limits, socket
accounting, message merging) says so in ``ONE_DATABASE`` (why, in words): ``make test``
runs it on SQLite only, and ``make hardening`` (``SAHRAT_TEST_EVERY_DATABASE=1``) on
both.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from pgtest import fresh_database

from .harness import ServerProcess

HERE = Path(__file__).resolve().parent


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "server: starts a real sahrat server process (SQLite and PostgreSQL)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    every = os.environ.get("SAHRAT_TEST_EVERY_DATABASE") == "1"
    kept, dropped = [], []
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.server)
        if not every and _postgres_twin(item):
            dropped.append(item)
        else:
            kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def _postgres_twin(item: pytest.Item) -> bool:
    """The PostgreSQL case of a test whose module runs on one database (ONE_DATABASE)."""
    module = getattr(item, "module", None)
    params = getattr(getattr(item, "callspec", None), "params", {})
    on_postgres = "postgres" in (params.get("database"), params.get("module_servers"))
    return on_postgres and bool(getattr(module, "ONE_DATABASE", ""))


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A fresh PostgreSQL database for this session (this xdist worker), dropped after."""
    with fresh_database("sahrat_test", "the PostgreSQL server tests") as url:
        yield url


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


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def module_servers(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[..., ServerProcess]]:
    """``module_servers(**env)``: a ready server with that environment, shared by the
    tests of one module that ask for the same environment (on SQLite, then PostgreSQL).

    Each server is started the first time it is asked for, on a database of its own (a
    SQLite file, a fresh PostgreSQL database), and stopped after the module. For tests
    that make their own tables and accounts, never stop the server and need no fresh
    one; a test that kills, restarts or reads the whole log of a server starts its own."""
    kind = str(request.param)
    folder = tmp_path_factory.mktemp(f"module-servers-{kind}")
    servers: dict[tuple[tuple[str, str], ...], ServerProcess] = {}
    with ExitStack() as stack:

        def get(**env: str) -> ServerProcess:
            key = tuple(sorted(env.items()))
            server = servers.get(key)
            if server is None:
                log_dir = folder / f"server-{len(servers)}"
                log_dir.mkdir()
                if kind == "sqlite":
                    url = f"sqlite+aiosqlite:///{log_dir / 'sahrat.db'}"
                else:
                    url = stack.enter_context(
                        fresh_database("sahrat_test", "the PostgreSQL server tests")
                    )
                server = ServerProcess(url, log_dir, env)
                stack.callback(server.stop)
                servers[key] = server.start()
            assert server.proc is not None and server.proc.poll() is None, "stopped"
            return server

        yield get


@pytest.fixture(scope="module")
def module_server(
    request: pytest.FixtureRequest, module_servers: Callable[..., ServerProcess]
) -> ServerProcess:
    """One server for a whole test module (on SQLite, then PostgreSQL), for modules whose
    tests each make their own tables and accounts; the module may set its environment
    in ``MODULE_SERVER_ENV``."""
    return module_servers(**getattr(request.module, "MODULE_SERVER_ENV", {}))
