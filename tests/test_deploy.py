"""The production topology of docker-compose.yml: PostgreSQL, Redis, migrations run
once, two server processes sharing both, and nginx in front of both.

Docker does not run here. The file is validated against the Compose specification's
JSON schema always (the copy check-jsonschema ships, with its licence, as
``--builtin-schema vendor.compose-spec``), and also by ``docker compose config`` (or
the older ``docker-compose config``) where one is installed. Nothing here skips."""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
COMPOSE = REPO / "docker-compose.yml"
DOCKERFILE = REPO / "Dockerfile"


def _compose() -> dict[str, Any]:
    data = yaml.safe_load(COMPOSE.read_text())
    assert isinstance(data, dict)
    return data


@cache
def _schema() -> dict[str, Any]:
    text = (
        resources.files("check_jsonschema.builtin_schemas.vendor")
        .joinpath("compose-spec.json")
        .read_text(encoding="utf-8")
    )
    schema = json.loads(text)
    assert schema["title"] == "Compose Specification"
    return dict(schema)


def _schema_errors(document: dict[str, Any]) -> list[str]:
    schema = _schema()
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    validator = validator_class(schema, format_checker=validator_class.FORMAT_CHECKER)
    return [
        f"{'/'.join(map(str, error.absolute_path))}: {error.message}"
        for error in validator.iter_errors(document)
    ]


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
    # the table sockets go to every process's socket port, which each one serves
    sockets = re.search(r"upstream sahrat_sockets \{(.*?)\}", conf, re.S)
    assert sockets is not None
    ports = {services[app]["environment"]["SAHRAT_SOCKET_PORT"] for app in apps}
    assert ports == {"8001"}
    assert sorted(re.findall(r"server (\w+):8001", sockets.group(1))) == apps
    ws = re.search(r"location /ws/ \{(.*?)\}", conf, re.S)
    assert ws is not None and "proxy_pass http://sahrat_sockets;" in ws.group(1)
    mounted = services["proxy"]["volumes"][0]
    assert mounted.startswith("./deploy/nginx.conf:")


# -- no default password ------------------------------------------------------------

PASSWORD_USE = re.compile(r"\$\{POSTGRES_PASSWORD([^}]*)\}")


def test_nothing_starts_without_a_database_password() -> None:
    text = COMPOSE.read_text()
    uses = PASSWORD_USE.findall(text)
    # the database itself, the migrations and the apps (one anchor shared by both)
    assert len(uses) == 3, uses
    for modifier in uses:
        # ${VAR:?message}: compose refuses to start when VAR is unset or empty
        assert modifier.startswith(":?"), f"${{POSTGRES_PASSWORD{modifier}}} has a fallback"
        assert modifier[2:].strip(), "the refusal says what is missing"
    # no other spelling of it ($POSTGRES_PASSWORD without braces takes no check)
    assert "$POSTGRES_PASSWORD" not in text
    services = _compose()["services"]
    password = services["postgres"]["environment"]["POSTGRES_PASSWORD"]
    assert PASSWORD_USE.fullmatch(password)
    for name, service in services.items():
        url = service.get("environment", {}).get("DATABASE_URL")
        if url is not None:
            assert f":{password}@postgres:5432/" in url, name


SECRET_USE = re.compile(r"\$\{SAHRAT_CLUSTER_SECRET([^}]*)\}")


def test_the_apps_sign_their_messages_with_a_secret_that_has_no_default() -> None:
    text = COMPOSE.read_text()
    uses = SECRET_USE.findall(text)
    assert len(uses) == 1, uses  # in the anchor both apps share: one secret for both
    assert uses[0].startswith(":?") and uses[0][2:].strip(), "a fallback, or no refusal"
    assert "$SAHRAT_CLUSTER_SECRET" not in text
    services = _compose()["services"]
    apps = [s for name, s in services.items() if name.startswith("app")]
    secrets = {app["environment"]["SAHRAT_CLUSTER_SECRET"] for app in apps}
    assert len(secrets) == 1 and SECRET_USE.fullmatch(next(iter(secrets)))
    for name, service in services.items():  # the secret goes only where Redis is used
        environment = service.get("environment", {})
        uses_redis = "SAHRAT_REDIS_URL" in environment
        assert ("SAHRAT_CLUSTER_SECRET" in environment) == uses_redis, name


# -- health checks and start order --------------------------------------------------


def _healthcheck(service: dict[str, Any]) -> list[str]:
    check = service.get("healthcheck")
    assert check is not None and not check.get("disable", False)
    test = check["test"]
    assert isinstance(test, list) and test[0] in ("CMD", "CMD-SHELL")
    return [str(part) for part in test]


def test_postgres_and_redis_report_their_health() -> None:
    services = _compose()["services"]
    assert "pg_isready" in " ".join(_healthcheck(services["postgres"]))
    assert _healthcheck(services["redis"])[1:] == ["redis-cli", "ping"]


def test_the_apps_report_readiness_with_a_command_their_image_has() -> None:
    services = _compose()["services"]
    apps = [s for name, s in services.items() if name.startswith("app")]
    dockerfile = DOCKERFILE.read_text()
    base = re.search(r"^FROM (\S+)", dockerfile, re.M)
    # a python image without curl or wget: the check is Python's own urllib
    assert base is not None and base.group(1).startswith("python:")
    assert not re.search(r"apt-get install[^\n]*\b(curl|wget)\b", dockerfile)
    for app in apps:
        assert app["build"] == "." and app["image"] == services["migrate"]["image"]
        test = _healthcheck(app)
        assert test[:3] == ["CMD", "python", "-c"], test
        program = test[3]
        compile(program, "healthcheck", "exec")  # valid Python
        assert "http://127.0.0.1:8000/readyz" in program
        assert "urllib.request" in program


def _waits_for(service: dict[str, Any]) -> dict[str, str]:
    depends = service.get("depends_on", {})
    assert isinstance(depends, dict), "depends_on lists conditions, not bare names"
    return {name: spec["condition"] for name, spec in depends.items()}


def test_each_service_starts_after_what_it_needs_is_healthy() -> None:
    services = _compose()["services"]
    apps = sorted(name for name in services if name.startswith("app"))
    for name in apps:
        assert _waits_for(services[name]) == {
            "postgres": "service_healthy",
            "redis": "service_healthy",
            "migrate": "service_completed_successfully",
        }
    assert _waits_for(services["migrate"]) == {"postgres": "service_healthy"}
    assert _waits_for(services["proxy"]) == dict.fromkeys(apps, "service_healthy")
    # every service waited for as healthy has a health check
    for service in services.values():
        for needed, condition in _waits_for(service).items():
            if condition == "service_healthy":
                _healthcheck(services[needed])


# -- the Compose specification --------------------------------------------------------


def _compose_command() -> list[str] | None:
    docker = shutil.which("docker")
    if docker is not None:
        probe = subprocess.run([docker, "compose", "version"], capture_output=True, check=False)
        if probe.returncode == 0:
            return [docker, "compose"]
    legacy = shutil.which("docker-compose")
    return [legacy] if legacy is not None else None


SCHEMA_NAME = "vendor.compose-spec"
CHECK_JSONSCHEMA = [sys.executable, "-m", "check_jsonschema", "--builtin-schema", SCHEMA_NAME]


def _check_jsonschema(path: Path) -> subprocess.CompletedProcess[str]:
    """The check-jsonschema command on a file, with its copy of the Compose schema."""
    return subprocess.run(
        [*CHECK_JSONSCHEMA, str(path)],
        capture_output=True,
        text=True,
        check=False,
    )


def test_compose_config_accepts_the_file(tmp_path: Path) -> None:
    assert _schema_errors(_compose()) == []
    result = _check_jsonschema(COMPOSE)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ok -- validation done" in result.stdout
    command = _compose_command()
    if command is None:
        return  # no compose tool here: the schema above is the check
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("POSTGRES_PASSWORD", "SAHRAT_CLUSTER_SECRET")
    }
    no_env_file = tmp_path / "empty.env"  # not a .env that may lie beside the file
    no_env_file.write_text("")
    config = [*command, "--env-file", str(no_env_file), "-f", str(COMPOSE), "config", "--quiet"]
    result = subprocess.run(config, capture_output=True, text=True, check=False, cwd=REPO, env=env)
    assert result.returncode != 0, "compose started without POSTGRES_PASSWORD"
    assert "POSTGRES_PASSWORD" in result.stderr
    result = subprocess.run(
        config,
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
        env={**env, "POSTGRES_PASSWORD": "test-only"},
    )
    assert result.returncode != 0, "compose started without SAHRAT_CLUSTER_SECRET"
    assert "SAHRAT_CLUSTER_SECRET" in result.stderr
    result = subprocess.run(
        config,
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
        env={**env, "POSTGRES_PASSWORD": "test-only", "SAHRAT_CLUSTER_SECRET": "x" * 43},
    )
    assert result.returncode == 0, result.stderr


def _set(path: str, value: object) -> Callable[[dict[str, Any]], None]:
    def mutate(document: dict[str, Any]) -> None:
        *parents, last = path.split("/")
        node: Any = document
        for key in parents:
            node = node[key]
        node[last] = value

    return mutate


BREAKAGES: dict[str, Callable[[dict[str, Any]], None]] = {
    "misspelt service key": _set("services/app1/healthchek", {"test": ["CMD", "true"]}),
    "unknown depends_on condition": _set(
        "services/proxy/depends_on/app1", {"condition": "service_ready"}
    ),
    "health check test not a list or string": _set("services/redis/healthcheck/test", 7),
    "ports not a list": _set("services/proxy/ports", {"8080": 80}),
    "restart not a string": _set("services/app2/restart", ["always"]),
    "services not a mapping": _set("services", ["postgres", "redis"]),
}


@pytest.mark.parametrize("breakage", sorted(BREAKAGES))
def test_the_schema_refuses_a_broken_compose_file(breakage: str) -> None:
    broken = copy.deepcopy(_compose())
    BREAKAGES[breakage](broken)
    assert _schema_errors(broken), f"{breakage}: accepted"


def test_check_jsonschema_fails_on_a_broken_compose_file(tmp_path: Path) -> None:
    text = COMPOSE.read_text()
    broken = text.replace("    healthcheck:\n      test: [", "    healthchek:\n      test: [", 1)
    assert broken != text
    path = tmp_path / "docker-compose.yml"
    path.write_text(broken)
    result = _check_jsonschema(path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "healthchek" in result.stdout + result.stderr
