"""Lobby latency while a flood of bad logins arrives (password hashing on demand).

Not a test. Starts ``sahrat serve`` on a free port of 127.0.0.1 with its own
SQLite database in a temporary folder, signs up one account (``victim``) and
puts 10 waiting tables in the lobby. Then ``GET /api/tables`` is polled every
50 ms: for 2 s with nothing else going on ("quiet"), then while 60 bad logins
arrive 12 at a time, half of them on the real name ("flood"). Prints the
median, p95 and max of the lobby's answer time in both phases, how long the
flood took and the answer codes of the logins.

The logins come from one address (127.0.0.1), or from one address each
(``X-Forwarded-For``: the server trusts it from 127.0.0.1 by default).

    .venv/bin/python bench/bench_login_flood.py                       # 3 runs of each
    .venv/bin/python bench/bench_login_flood.py --before /tmp/old/src  # and another checkout's
    .venv/bin/python bench/bench_login_flood.py --runs 1 --only one --json

``--before`` runs the same measure against another checkout's ``src`` (e.g. made
with ``git worktree add /tmp/old 0b2af60``); a setting it does not know is ignored.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from local_server import LocalServer, run_alternating

SRC = Path(__file__).resolve().parent.parent / "src"
QUIET_SECONDS = 2.0
POLL_SECONDS = 0.05
FLOOD_LIMIT_SECONDS = 300.0  # a flood that takes longer than this is a failed run
LOBBY_TABLES = 10


@dataclass(frozen=True)
class Scenario:
    name: str
    many_addresses: bool
    env: dict[str, str] = field(default_factory=dict)


SCENARIOS = {
    "one": Scenario("one address", False),
    "many": Scenario("one address per login", True),
    # the hashing pool alone: the per-name limit would otherwise answer half with 429
    "many-pool": Scenario(
        "one address per login, name limit lifted",
        True,
        {"SAHRAT_LOGINS_PER_NAME_HOUR": "1000000"},
    ),
}


# --- the server ---------------------------------------------------------------------------


# --- one run -------------------------------------------------------------------------------


async def _poll_lobby(http: httpx.AsyncClient, samples: list[float], stop: asyncio.Event) -> None:
    deadline = time.monotonic() + FLOOD_LIMIT_SECONDS
    while not stop.is_set() and time.monotonic() < deadline:
        began = time.perf_counter()
        response = await http.get("/api/tables")
        samples.append(time.perf_counter() - began)
        if response.status_code != 200:
            raise RuntimeError(f"the lobby answered {response.status_code}")
        await asyncio.sleep(POLL_SECONDS)


async def _fill_lobby(http: httpx.AsyncClient) -> None:
    made = await http.post("/api/users", json={"name": "victim", "password": "right password"})
    if made.status_code != 201:
        raise RuntimeError(f"sign-up: {made.status_code} {made.text[:200]}")
    for i in range(LOBBY_TABLES):
        address = {"X-Forwarded-For": f"10.0.1.{i}"}
        guest = await http.post("/api/guests", headers=address)
        token = guest.json()["token"]
        table = await http.post(
            "/api/tables",
            json={"game": "konkan", "options": {}},
            headers={"Authorization": f"Bearer {token}", **address},
        )
        if table.status_code != 201:
            raise RuntimeError(f"create table: {table.status_code} {table.text[:200]}")


async def _measure(url: str, scenario: Scenario, logins: int, batch: int) -> dict[str, Any]:
    # each login on a connection of its own, as from many clients (and no idle
    # keep-alive connection for the server to close under a request)
    one_shot = httpx.Limits(max_keepalive_connections=0)
    async with (
        httpx.AsyncClient(base_url=url, timeout=FLOOD_LIMIT_SECONDS) as http,
        httpx.AsyncClient(
            base_url=url, timeout=FLOOD_LIMIT_SECONDS, limits=one_shot
        ) as logins_http,
    ):
        await _fill_lobby(http)
        quiet: list[float] = []
        stop = asyncio.Event()
        poller = asyncio.create_task(_poll_lobby(http, quiet, stop))
        await asyncio.sleep(QUIET_SECONDS)
        stop.set()
        await poller

        codes: Counter[str] = Counter()

        async def bad_login(i: int) -> None:
            headers = {"X-Forwarded-For": f"10.9.{i // 250}.{i % 250}"}
            name = "victim" if i % 2 else f"nobody{i}"
            try:
                response = await logins_http.post(
                    "/api/login",
                    json={"name": name, "password": "wrong"},
                    headers=headers if scenario.many_addresses else {},
                )
            except httpx.TransportError as error:
                codes[type(error).__name__] += 1
            else:
                codes[str(response.status_code)] += 1

        busy: list[float] = []
        stop = asyncio.Event()
        poller = asyncio.create_task(_poll_lobby(http, busy, stop))
        began = time.perf_counter()
        try:
            for first in range(0, logins, batch):
                await asyncio.gather(
                    *(bad_login(i) for i in range(first, min(logins, first + batch)))
                )
        finally:
            flood = time.perf_counter() - began
            stop.set()
            await poller
    return {
        "quiet_ms": _summary(quiet),
        "flood_ms": _summary(busy),
        "flood_s": round(flood, 2),
        "answers": dict(sorted(codes.items())),
    }


def _summary(samples: list[float]) -> dict[str, float]:
    ms = sorted(s * 1000 for s in samples)
    return {
        "median": round(statistics.median(ms), 1),
        "p95": round(ms[max(0, int(len(ms) * 0.95) - 1)], 1),
        "max": round(ms[-1], 1),
        "n": len(ms),
    }


def run_once(src: Path, scenario: Scenario, logins: int, batch: int) -> dict[str, Any]:
    server = LocalServer(src, scenario.env)
    try:
        server.wait_ready()
        return asyncio.run(_measure(server.url, scenario, logins, batch))
    except Exception:
        print(server.log_tail(), file=sys.stderr)
        raise
    finally:
        server.stop()


# --- the report ----------------------------------------------------------------------------


def _spread(values: list[float]) -> str:
    median = f"{statistics.median(values):,.0f}"
    if min(values) == max(values):
        return median
    return f"{median} [{min(values):,.0f}–{max(values):,.0f}]"


def _counts(runs: list[dict[str, int]]) -> str:
    """Each answer's count per run: "12 × 401" or, when runs differ, "12–14 × 401"."""
    kinds = sorted({kind for run in runs for kind in run})
    parts = []
    for kind in kinds:
        counts = [run.get(kind, 0) for run in runs]
        low, high = min(counts), max(counts)
        parts.append(f"{low} × {kind}" if low == high else f"{low}–{high} × {kind}")
    return ", ".join(parts)


def _row(code: str, scenario: Scenario, runs: list[dict[str, Any]]) -> str:
    def pick(phase: str, stat: str) -> str:
        return _spread([r[phase][stat] for r in runs])

    each = _counts([r["answers"] for r in runs])
    return (
        f"| {code} | {scenario.name} | {pick('quiet_ms', 'median')} / {pick('quiet_ms', 'p95')} "
        f"| {pick('flood_ms', 'median')} / {pick('flood_ms', 'p95')} / {pick('flood_ms', 'max')} "
        f"| {_spread([r['flood_s'] for r in runs])} | {each} |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--before", type=Path, help="the src folder of the code to compare with")
    parser.add_argument(
        "--only", default=",".join(SCENARIOS), help=f"scenarios: {', '.join(SCENARIOS)}"
    )
    parser.add_argument("--logins", type=int, default=60)
    parser.add_argument("--batch", type=int, default=12, help="logins sent at once")
    parser.add_argument("--json", action="store_true", help="print every run as JSON")
    args = parser.parse_args()
    codes = [("before", args.before.resolve()), ("after", SRC)] if args.before else [("now", SRC)]
    chosen = [SCENARIOS[name] for name in args.only.split(",")]
    by_name = {scenario.name: scenario for scenario in chosen}
    results = run_alternating(
        args.runs,
        codes,
        list(by_name),
        lambda src, name: run_once(src, by_name[name], args.logins, args.batch),
    )
    if args.json:
        print(
            json.dumps(
                [
                    {"code": code, "scenario": name, "runs": runs}
                    for (code, name), runs in results.items()
                ],
                indent=1,
            )
        )
        return 0
    print(
        f"{args.runs} run(s), {args.logins} bad logins {args.batch} at a time; "
        "lobby answer times in ms, median [min–max] over the runs"
    )
    print()
    print(
        "| code | logins from | quiet lobby (median / p95) "
        "| lobby during the flood (median / p95 / max) | flood (s) | answers per run |"
    )
    print("| --- | --- | --- | --- | ---: | --- |")
    for code, _src in codes:
        for scenario in chosen:
            print(_row(code, scenario, results[(code, scenario.name)]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
