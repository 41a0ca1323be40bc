"""Fixtures for the server tests: a real server process on SQLite and on PostgreSQL.

Every test here is marked ``server``. ``database`` is parametrised over a SQLite
file in the test's tmp_path and a PostgreSQL database created for the test
session (``sahrat_test_<random>`` on 127.0.0.1:5432, user postgres, dropped at the
end). Without a reachable PostgreSQL the PostgreSQL cases are skipped — unless
``CI`` is set, where they fail instead. ``start_server`` starts ``sahrat serve``
on a free port and kills every server it started at teardown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
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
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.server)


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
def module_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    """One server for a whole test module (on SQLite, then PostgreSQL), for modules whose
    tests each make their own tables and accounts; the module may set its environment
    in ``MODULE_SERVER_ENV``."""
    folder = tmp_path_factory.mktemp("module-server")
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{folder / 'sahrat.db'}"
    else:
        url = str(request.getfixturevalue("postgres_url"))
    env = getattr(request.module, "MODULE_SERVER_ENV", {})
    server = ServerProcess(url, folder, env).start()
    yield server
    server.stop()
