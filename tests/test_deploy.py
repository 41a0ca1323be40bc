"""The production topology of docker-compose.yml: PostgreSQL, Redis, migrations run
once, two server processes sharing both, and nginx in front of both. Docker does not
run here; the compose file is checked by ``docker compose config`` (or the older
``docker-compose config``) where one is installed, and its shape is checked always."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]


def _compose() -> dict[str, Any]:
    data = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    assert isinstance(data, dict)
    return data


def test_two_server_processes_share_postgres_and_redis() -> None:
    services = _compose()["services"]
    apps = {name: s for name, s in services.items() if name.startswith("app")}
    assert len(apps) == 2
    urls = {s["environment"]["DATABASE_URL"] for s in apps.values()}
    redis = {s["environment"]["SAHRAT_REDIS_URL"] for s in apps.values()}
    assert len(urls) == 1 and next(iter(urls)).startswith("postgresql+asyncpg://")
    assert "@postgres:5432/" in next(iter(urls))
    assert redis == {"redis://redis:6379/0"}
    for app in apps.values():
        # the migrations run once, before any server starts
        assert app["environment"]["SAHRAT_MIGRATE_ON_START"] == "false"
        assert app["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert services["migrate"]["command"] == ["sahrat", "migrate"]
    assert services["migrate"]["environment"]["DATABASE_URL"] in urls


def test_the_load_balancer_sends_to_every_server_process() -> None:
    services = _compose()["services"]
    apps = sorted(name for name in services if name.startswith("app"))
    conf = (REPO / "deploy" / "nginx.conf").read_text()
    upstream = re.search(r"upstream sahrat \{(.*?)\}", conf, re.S)
    assert upstream is not None
    assert sorted(re.findall(r"server (\w+):8000", upstream.group(1))) == apps
    assert "proxy_set_header Upgrade $http_upgrade;" in conf  # WebSockets pass through
    mounted = services["proxy"]["volumes"][0]
    assert mounted.startswith("./deploy/nginx.conf:")


def _compose_command() -> list[str] | None:
    docker = shutil.which("docker")
    if docker is not None:
        probe = subprocess.run([docker, "compose", "version"], capture_output=True, check=False)
        if probe.returncode == 0:
            return [docker, "compose"]
    legacy = shutil.which("docker-compose")
    return [legacy] if legacy is not None else None


def test_compose_config_accepts_the_file() -> None:
    command = _compose_command()
    if command is None:
        pytest.skip("neither `docker compose` nor `docker-compose` is installed")
    result = subprocess.run(
        [*command, "-f", str(REPO / "docker-compose.yml"), "config", "--quiet"],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stderr
