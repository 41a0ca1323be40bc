"""REST fuzzing with schemathesis against a live ``sahrat serve`` (SQLite).

The OpenAPI schema is read from the running server; every operation is called
with requests generated from it (valid ones, then invalid ones), with a guest's
bearer token, or an admin's under ``/api/admin``. Every response must be a
non-5xx with a status the schema declares, the declared content type and a
body that validates against the declared response model; invalid requests must
be refused with a 4xx.

``SAHRAT_REST_FUZZ_EXAMPLES`` sets the examples per operation and mode (default 15,
under 30 s on two cores; the examples are derandomized, so a run is repeatable);
a longer run: ``SAHRAT_REST_FUZZ_EXAMPLES=300``. Counts go to
``test-artifacts/hardening/rest_fuzz.json``.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.result import Ok
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)

from server.harness import ServerProcess, make_admin

from .conftest import env_count, write_results

EXAMPLES = env_count("SAHRAT_REST_FUZZ_EXAMPLES", 8)  # make hardening: 300


def documented_status_or_unparsable_body(ctx: Any, response: Any, case: Any) -> bool | None:
    """``status_code_conformance``, except for the 400 that the framework answers to a
    body it cannot even decode (not UTF-8): invalid requests may get it on any route."""
    if response.status_code == 400:
        return None
    return status_code_conformance(ctx, response, case)


POSITIVE_CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
NEGATIVE_CHECKS = [
    not_a_server_error,
    documented_status_or_unparsable_body,
    content_type_conformance,
    response_schema_conformance,
    negative_data_rejection,
]

# The health probes take no input worth fuzzing.
SKIPPED_PATHS = ("/healthz", "/readyz")


@dataclass
class Target:
    server: ServerProcess
    guest: str
    admin: str
    table_id: int
    match_id: int | None


def _guest(base_url: str) -> str:
    response = httpx.post(f"{base_url}/api/guests", timeout=10)
    assert response.status_code == 201, response.text
    return str(response.json()["token"])


def _finished_match(base_url: str, token: str) -> tuple[int, int | None]:
    """A Conquian table started with a bot; the turn timer plays the guest's seat, so
    the match ends by itself: a finished match to replay."""
    auth = {"Authorization": f"Bearer {token}"}
    created = httpx.post(
        f"{base_url}/api/tables",
        json={"game": "conquian", "options": {"wins_needed": 1}},
        headers=auth,
        timeout=10,
    )
    assert created.status_code == 201, created.text
    table_id = int(created.json()["id"])
    started = httpx.post(
        f"{base_url}/api/tables/{table_id}/start", json={"level": "simple"}, headers=auth
    )
    assert started.status_code == 200, started.text
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        matches = httpx.get(f"{base_url}/api/tables/{table_id}/matches", timeout=10).json()
        if matches:
            return table_id, int(matches[0]["id"])
        time.sleep(0.2)
    return table_id, None


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    tmp = tmp_path_factory.mktemp("fuzz")
    database = f"sqlite+aiosqlite:///{tmp / 'sahrat.db'}"
    name, password = make_admin(database, "fuzz")
    server = ServerProcess(
        database,
        tmp,
        {"SAHRAT_BOT_DELAY_SECONDS": "0", "SAHRAT_TURN_SECONDS_OVERRIDE": "0.05"},
    )
    server.start()
    try:
        login = httpx.post(
            f"{server.base_url}/api/login", json={"name": name, "password": password}, timeout=10
        )
        assert login.status_code == 200, login.text
        guest = _guest(server.base_url)
        table_id, match_id = _finished_match(server.base_url, guest)
        yield Target(server, guest, str(login.json()["token"]), table_id, match_id)
    finally:
        server.stop()


def _headers(target: Target, path: str, method: str) -> dict[str, str]:
    if path.startswith("/api/admin"):
        token = target.admin
    elif path == "/api/logout" and method.upper() == "POST":
        token = _guest(target.server.base_url)  # logging out must not revoke the shared one
    else:
        token = target.guest
    return {"Authorization": f"Bearer {token}"}


def _run_operation(
    target: Target, operation: Any, mode: GenerationMode, session: requests.Session
) -> tuple[int, list[str]]:
    """Fuzz one operation in one mode; the number of calls and the failures found."""
    calls = 0
    checks = POSITIVE_CHECKS if mode == GenerationMode.POSITIVE else NEGATIVE_CHECKS

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,
        phases=[Phase.explicit, Phase.generate],  # report, do not shrink: keeps CI bounded
        suppress_health_check=list(HealthCheck),
    )
    def run(case: Any) -> None:
        nonlocal calls
        calls += 1
        headers = _headers(target, operation.path, operation.method)
        case.call_and_validate(
            base_url=target.server.base_url, session=session, headers=headers, checks=checks
        )

    try:
        run()
    except Unsatisfiable:  # no invalid request exists (an operation without parameters)
        return calls, []
    except (Exception, BaseExceptionGroup) as error:  # schemathesis groups its failures
        text = "".join(traceback.format_exception_only(type(error), error)).strip()
        return calls, [text[:2000]]
    return calls, []


def test_rest_api_survives_fuzzing(target: Target, request: pytest.FixtureRequest) -> None:
    base = target.server.base_url
    schema = schemathesis.openapi.from_url(f"{base}/openapi.json")
    started = time.monotonic()
    failures: dict[str, list[str]] = {}
    calls: dict[str, int] = {}
    with requests.Session() as session:
        for result in schema.get_all_operations():
            assert isinstance(result, Ok), f"the schema has an invalid operation: {result}"
            operation = result.ok()
            if operation.path in SKIPPED_PATHS:
                continue
            for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
                key = f"{operation.method.upper()} {operation.path} [{mode.value}]"
                count, found = _run_operation(target, operation, mode, session)
                calls[key] = count
                if found:
                    failures[key] = found
    seconds = time.monotonic() - started
    # The server is still healthy after all of it.
    assert httpx.get(f"{base}/readyz", timeout=5).status_code == 200
    write_results(
        "rest_fuzz",
        {
            "examples_per_operation_and_mode": EXAMPLES,
            "operations": len({k.rsplit(" [", 1)[0] for k in calls}),
            "calls": sum(calls.values()),
            "operation_modes_without_invalid_requests": sorted(
                k for k, n in calls.items() if not n
            ),
            "failures": failures,
            "seconds": round(seconds, 1),
            "had_finished_match": target.match_id is not None,
        },
        request.node,
    )
    report = [f"{key}:\n" + "\n".join(found) for key, found in failures.items()]
    assert not failures, "\n\n".join(report)


def test_server_log_has_no_tracebacks(target: Target) -> None:
    """Runs after the fuzzing (same module server): no unhandled exception was logged."""
    text = Path(target.server.log_path).read_text(errors="replace")
    assert "Traceback" not in text, target.server.log_tail(80)
