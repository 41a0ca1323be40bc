"""What many spectator sockets to one table cost the server process.

Not a test. Starts ``sahrat serve`` on a free port of 127.0.0.1 with its own
SQLite database in a temporary folder; a guest opens a Conquian table and one
account (or several) opens ``--sockets`` (400) spectator WebSockets to it at
once, waits for each socket's first message (or its close), then closes them
all. Meanwhile ``/healthz`` is polled every 100 ms. Prints the server
process's CPU time (``/proc/PID/stat``) from the first open to every socket
opened, and to every socket closed (once the process is idle again), the wall
time, how many sockets got in and the close codes of the refused ones, and
the ``/healthz`` answer times.

The server caps sockets per account (``SAHRAT_MAX_SOCKETS_PER_ACCOUNT``) and
spectators per table (``SAHRAT_MAX_SPECTATORS_PER_TABLE``); the ``caps``
scenario raises both to 1000 to measure the cost of the sockets themselves.

A socket opens with a one-time ticket (``POST /api/tables/{id}/ticket``, fetched
before the measured window); a checkout without that route (404) is sent the
bearer token as ``?token=`` instead (``--auth`` forces one or the other).

    .venv/bin/python bench/bench_sockets.py                       # 3 runs of each
    .venv/bin/python bench/bench_sockets.py --before /tmp/old/src --only one
    .venv/bin/python bench/bench_sockets.py --runs 1 --sockets 200 --json

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
from urllib.parse import urlencode

import httpx
import websockets
from websockets.exceptions import ConnectionClosed, InvalidStatus

from local_server import LocalServer, run_alternating

SRC = Path(__file__).resolve().parent.parent / "src"
OPEN_SECONDS = 120.0  # a socket not open (or refused) by then counts as "timeout"
HEALTH_POLL_SECONDS = 0.1
RAISED_CAP = "1000"
# Only the setup is eased: tickets fetched before the window must outlive it, and
# the guests are made faster than the new-accounts limit allows.
SETUP_ENV = {"SAHRAT_TICKET_SECONDS": "600", "SAHRAT_NEW_ACCOUNTS_PER_MINUTE": "1000000"}


@dataclass(frozen=True)
class Scenario:
    name: str
    accounts: int
    env: dict[str, str] = field(default_factory=dict)


SCENARIOS = {
    "one": Scenario("1 account", 1),
    "many": Scenario("50 accounts", 50),
    "caps": Scenario(
        "1 account, caps raised to 1000",
        1,
        {
            "SAHRAT_MAX_SOCKETS_PER_ACCOUNT": RAISED_CAP,
            "SAHRAT_MAX_SPECTATORS_PER_TABLE": RAISED_CAP,
        },
    ),
}


# --- the server ---------------------------------------------------------------------------


class Server(LocalServer):
    """The server with the set-up eased (SETUP_ENV) and its log kept short."""

    def __init__(self, src: Path, env: dict[str, str]) -> None:
        super().__init__(src, {**SETUP_ENV, **env}, ("--log-level", "warning"))


# --- one run -------------------------------------------------------------------------------


async def _guest(http: httpx.AsyncClient, index: int) -> str:
    # one address each: the server trusts X-Forwarded-For from 127.0.0.1
    response = await http.post("/api/guests", headers={"X-Forwarded-For": f"10.0.2.{index}"})
    if response.status_code != 201:
        raise RuntimeError(f"guest: {response.status_code} {response.text[:200]}")
    return str(response.json()["token"])


async def _socket_urls(
    http: httpx.AsyncClient, ws_base: str, table: int, tokens: list[str], n: int, auth: str
) -> tuple[list[str], str]:
    """The URL of each socket, and how they authenticate ("ticket" or "token")."""
    urls: list[str] = []
    for i in range(n):
        token = tokens[i % len(tokens)]
        if auth != "token":
            response = await http.post(
                f"/api/tables/{table}/ticket", headers={"Authorization": f"Bearer {token}"}
            )
            if response.status_code == 200:
                urls.append(f"{ws_base}?{urlencode({'ticket': response.json()['ticket']})}")
                auth = "ticket"
                continue
            if auth == "ticket" or response.status_code not in (404, 405):
                raise RuntimeError(f"ticket: {response.status_code} {response.text[:200]}")
            auth = "token"  # a checkout from before tickets
        urls.append(f"{ws_base}?{urlencode({'token': token})}")
    return urls, auth


async def _poll_health(http: httpx.AsyncClient, samples: list[float], stop: asyncio.Event) -> None:
    deadline = time.monotonic() + OPEN_SECONDS * 2
    while not stop.is_set() and time.monotonic() < deadline:
        began = time.perf_counter()
        await http.get("/healthz")
        samples.append(time.perf_counter() - began)
        await asyncio.sleep(HEALTH_POLL_SECONDS)


async def _measure(server: Server, scenario: Scenario, n: int, auth: str) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=server.url, timeout=OPEN_SECONDS) as http:
        host = await _guest(http, 0)
        made = await http.post(
            "/api/tables",
            json={"game": "conquian", "options": {}},
            headers={"Authorization": f"Bearer {host}"},
        )
        if made.status_code != 201:
            raise RuntimeError(f"create table: {made.status_code} {made.text[:200]}")
        table = int(made.json()["id"])
        tokens = [await _guest(http, i + 1) for i in range(scenario.accounts)]
        ws_base = f"ws://127.0.0.1:{server.port}/ws/tables/{table}"
        urls, used = await _socket_urls(http, ws_base, table, tokens, n, auth)

        opened: list[Any] = []
        refused: Counter[str] = Counter()

        async def open_one(url: str) -> None:
            try:
                ws = await websockets.connect(url, open_timeout=OPEN_SECONDS, max_size=2**24)
            except InvalidStatus as error:
                refused[f"http {error.response.status_code}"] += 1
                return
            except (OSError, TimeoutError) as error:
                refused[type(error).__name__] += 1
                return
            try:
                await asyncio.wait_for(ws.recv(), OPEN_SECONDS)
                opened.append(ws)
            except ConnectionClosed:
                refused[str(ws.close_code)] += 1
            except TimeoutError:
                refused["timeout"] += 1
                await ws.close()

        health: list[float] = []
        stop = asyncio.Event()
        poller = asyncio.create_task(_poll_health(http, health, stop))
        cpu0, wall0 = server.cpu(), time.monotonic()
        try:
            await asyncio.gather(*(open_one(url) for url in urls))
            cpu_open, wall_open = server.cpu() - cpu0, time.monotonic() - wall0
            await asyncio.gather(*(ws.close() for ws in opened))
            wall = time.monotonic() - wall0
        finally:
            stop.set()
            await poller
    await asyncio.to_thread(server.wait_idle)
    ms = sorted(s * 1000 for s in health)
    return {
        "auth": used,
        "opened": len(opened),
        "refused": dict(sorted(refused.items())),
        "cpu_open_s": round(cpu_open, 2),
        "cpu_s": round(server.cpu() - cpu0, 2),
        "wall_open_s": round(wall_open, 2),
        "wall_s": round(wall, 2),
        "healthz_ms": {
            "median": round(statistics.median(ms), 1) if ms else None,
            "max": round(ms[-1], 1) if ms else None,
            "n": len(ms),
        },
    }


def run_once(src: Path, scenario: Scenario, n: int, auth: str) -> dict[str, Any]:
    server = Server(src, scenario.env)
    try:
        server.wait_ready()
        return asyncio.run(_measure(server, scenario, n, auth))
    except Exception:
        print(server.log_tail(), file=sys.stderr)
        raise
    finally:
        server.stop()


# --- the report ----------------------------------------------------------------------------


def _spread(values: list[float], digits: int = 1) -> str:
    fmt = f"{{:,.{digits}f}}"
    median = fmt.format(statistics.median(values))
    if min(values) == max(values):
        return median
    return f"{median} [{fmt.format(min(values))}–{fmt.format(max(values))}]"


def _counts(runs: list[dict[str, int]]) -> str:
    """Each close code's count per run: "392 × 4409" or, when runs differ, "390–392 × 4409"."""
    kinds = sorted({kind for run in runs for kind in run})
    parts = []
    for kind in kinds:
        counts = [run.get(kind, 0) for run in runs]
        low, high = min(counts), max(counts)
        parts.append(f"{low} × {kind}" if low == high else f"{low}–{high} × {kind}")
    return ", ".join(parts)


def _row(code: str, scenario: Scenario, n: int, runs: list[dict[str, Any]]) -> str:
    each = _counts([r["refused"] for r in runs])
    opened = _spread([r["opened"] for r in runs], 0)
    health = [r["healthz_ms"]["max"] for r in runs if r["healthz_ms"]["max"] is not None]
    return (
        f"| {code} | {scenario.name} | {n} | {opened}{f' ({each})' if each else ''} "
        f"| {_spread([r['cpu_open_s'] for r in runs])} | {_spread([r['cpu_s'] for r in runs])} "
        f"| {_spread([r['wall_s'] for r in runs])} "
        f"| {_spread(health, 0) if health else ''} |"
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
    parser.add_argument("--sockets", type=int, default=400)
    parser.add_argument(
        "--auth",
        choices=("auto", "ticket", "token"),
        default="auto",
        help="how sockets authenticate (auto: a ticket, or ?token= if there is no ticket route)",
    )
    parser.add_argument("--json", action="store_true", help="print every run as JSON")
    args = parser.parse_args()
    codes = [("before", args.before.resolve()), ("after", SRC)] if args.before else [("now", SRC)]
    chosen = [SCENARIOS[name] for name in args.only.split(",")]
    by_name = {scenario.name: scenario for scenario in chosen}
    results = run_alternating(
        args.runs,
        codes,
        list(by_name),
        lambda src, name: run_once(src, by_name[name], args.sockets, args.auth),
    )
    if args.json:
        print(
            json.dumps(
                [
                    {"code": code, "scenario": name, "sockets": args.sockets, "runs": runs}
                    for (code, name), runs in results.items()
                ],
                indent=1,
            )
        )
        return 0
    print(
        f"{args.runs} run(s); server CPU and wall time in s, /healthz in ms; "
        "median [min–max] over the runs"
    )
    print()
    print(
        "| code | sockets from | sockets | admitted (refused per run) | server CPU, to all open "
        "| server CPU, to all closed | wall | /healthz max |"
    )
    print("| --- | --- | ---: | --- | ---: | ---: | ---: | ---: |")
    for code, _src in codes:
        for scenario in chosen:
            print(_row(code, scenario, args.sockets, results[(code, scenario.name)]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
