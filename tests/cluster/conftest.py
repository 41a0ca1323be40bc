"""Fixtures for the cluster tests: several ``sahrat serve`` processes sharing the
machine's PostgreSQL and Redis, as a load balancer would put them behind one name.

Each test gets a fresh PostgreSQL database and its own Redis key prefix, so tests
never see each other's leases or messages. Without PostgreSQL or Redis the tests
skip with the reason — unless ``CI`` is set: then they fail.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pgtest import fresh_database
from server.harness import ServerProcess

REDIS_URL = os.environ.get("SAHRAT_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "cluster: starts several server processes on PostgreSQL and Redis"
    )


@pytest.fixture(scope="session")
def redis_url() -> str:
    import redis

    try:
        redis.Redis.from_url(REDIS_URL, socket_timeout=2).ping()
    except redis.RedisError as error:
        message = f"Redis at {REDIS_URL} is needed for the cluster tests: {error}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return REDIS_URL


@pytest.fixture(scope="session")
def cluster_database() -> Iterator[str]:
    with fresh_database("sahrat_cluster", "the cluster tests") as url:
        yield url


@pytest.fixture
def start_node(
    redis_url: str, cluster_database: str, tmp_path: Path
) -> Iterator[Callable[..., ServerProcess]]:
    """``start_node(**env)``: one more ready server process of this test's cluster."""
    prefix = f"test-{secrets.token_hex(4)}"
    secret = secrets.token_urlsafe(32)  # the cluster's shared key: every process has it
    started: list[ServerProcess] = []

    def start(**env: str) -> ServerProcess:
        log_dir = tmp_path / f"node{len(started)}"
        log_dir.mkdir()
        settings = {
            "SAHRAT_REDIS_URL": redis_url,
            "SAHRAT_CLUSTER_PREFIX": prefix,
            "SAHRAT_CLUSTER_SECRET": secret,
            "SAHRAT_BOT_DELAY_SECONDS": "0.02",
            **env,
        }
        server = ServerProcess(cluster_database, log_dir, settings)
        started.append(server)
        return server.start()

    yield start
    for server in started:
        server.kill()
