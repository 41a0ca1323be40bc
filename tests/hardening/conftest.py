"""Fixtures for the hardening tests: a real server on SQLite, counts from the
environment, and result files under ``test-artifacts/hardening/``.

Every test here is marked ``hardening`` (and ``server``: it starts a real
``sahrat serve`` process). They run in ``make test`` with small counts; the
full counts are one command away (``docs/hardening.md``). ``start_server``
starts servers on a fresh SQLite database in the test's ``tmp_path`` and kills
every server it started at teardown; ``postgres_database`` gives a fresh
PostgreSQL database (skipped without one, failed under ``CI``) to tests that
want it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pgtest import fresh_database
from server.harness import MACHINE_SPEED, REPO, ServerProcess

HERE = Path(__file__).resolve().parent
ARTIFACTS = REPO / "test-artifacts" / "hardening"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "hardening: fuzzing, fault and leak tests against a real server process"
    )
    config.addinivalue_line(
        "markers", "server: starts a real sahrat server process (SQLite and PostgreSQL)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.hardening)
            item.add_marker(pytest.mark.server)


# Test clients send far faster than people: the rate limiter (tested on its own) is
# lifted by the harness for every server it starts, so every message reaches the
# parser and the table; the tests still name it where they rely on it.
NO_RATE_LIMITS = dict(MACHINE_SPEED)


def env_count(name: str, default: int) -> int:
    """A positive count from the environment (``name``), else ``default``."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    value = int(text)
    if value <= 0:
        raise ValueError(f"{name} must be a positive integer, not {text!r}")
    return value


def env_seed(name: str) -> int:
    """A seed from the environment (``name``), else a fresh one; always printed."""
    text = os.environ.get(name, "").strip()
    return int(text) if text else int.from_bytes(os.urandom(4), "big")


def write_results(name: str, results: dict[str, Any], node: pytest.Item | None = None) -> Path:
    """Write ``results`` to ``test-artifacts/hardening/<name>.json``, print them (seen
    with ``-s``) and attach them to the test's report: a run of ``tests/hardening``
    lists them in a "hardening results" section even under ``-q`` and ``-n``."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.json"
    path.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    line = f"{name}: {json.dumps(results, sort_keys=True)} ({path.relative_to(REPO)})"
    print(f"\n[hardening] {line}")
    if node is not None:
        node.user_properties.append(("hardening", line))
    return path


_RESULTS: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call":
        _RESULTS.extend(str(value) for key, value in report.user_properties if key == "hardening")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _RESULTS:
        terminalreporter.section("hardening results")
        for line in _RESULTS:
            terminalreporter.write_line(line)


@pytest.fixture
def sqlite_database(tmp_path: Path) -> str:
    return f"sqlite+aiosqlite:///{tmp_path / 'sahrat.db'}"


@pytest.fixture(scope="session")
def postgres_database() -> Iterator[str]:
    """A fresh PostgreSQL database for this session (this xdist worker), dropped after."""
    with fresh_database("sahrat_hardening", "the PostgreSQL hardening tests") as url:
        yield url


@pytest.fixture
def start_server(sqlite_database: str, tmp_path: Path) -> Iterator[Callable[..., ServerProcess]]:
    """``start_server(database=None, **env)``: a ready server (SQLite unless a database
    URL is given); every server started is stopped at teardown."""
    started: list[ServerProcess] = []

    def start(database: str | None = None, **env: str) -> ServerProcess:
        server = ServerProcess(database or sqlite_database, tmp_path, env)
        started.append(server)
        return server.start()

    yield start
    for server in started:
        server.stop()
