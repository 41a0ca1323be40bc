"""Event-loop lag of a server whose tables are played by bots.

    .venv/bin/python bench/bench_bot_lag.py                    # 3 runs × (simple, expert)
    .venv/bin/python bench/bench_bot_lag.py --tables 50 --seconds 60 --runs 3

Each run starts a local server (``bench/local_server.py``, SQLite, no bot delay:
``SAHRAT_BOT_DELAY_SECONDS=0``) once per bot level and opens ``--tables`` free Konkan
tables of 4 seats with the table option ``bot_level`` at that level: a guest creates
each table, starts it with bots (three of them) and drops its connection, so after the
grace period (0.1 s here) a fourth bot takes the guest's seat and every seat is a bot's.
(Leaving instead would abandon the match: a bot game its only person leaves is closed.)
A finished table is replaced by a new one, so the server plays ``--tables`` matches at
once for the whole window. Meanwhile:

* from outside, ``GET /healthz`` every 20 ms, one at a time: its round trip
  (p50 / p99 / max) is what any request waits behind the busy loop;
* from inside, the ``sahrat_event_loop_lag_seconds`` histogram of ``/metrics`` (a
  probe every quarter second records how late the loop ran it): its mean, and the
  upper bound of the bucket holding its p99;
* the bots' decisions (``sahrat_bot_decision_seconds_count``) and the server's CPU.

Prints one markdown row per level and run, then the median [min–max] over the runs.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import os
import platform
import statistics
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
from websockets.sync.client import connect

sys.path.insert(0, str(Path(__file__).resolve().parent))
from local_server import LocalServer

SRC = Path(__file__).resolve().parent.parent / "src"
LEVELS = ("simple", "expert")
PROBE_SECONDS = 0.02
ENV = {
    "SAHRAT_BOT_DELAY_SECONDS": "0",
    "SAHRAT_GRACE_SECONDS": "0.1",
    "SAHRAT_NEW_ACCOUNTS_PER_ADDRESS_HOUR": "100000",
    "SAHRAT_NEW_ACCOUNTS_PER_MINUTE": "100000",
    "SAHRAT_LOG_LEVEL": "WARNING",
}
TABLE = {"game": "konkan", "options": {"players": 4, "rounds": 20, "break_seconds": 0}}


@dataclass
class Result:
    level: str
    tables_opened: int
    decisions: float
    cpu_seconds: float
    seconds: float
    rtt_ms: list[float]
    lag_mean_ms: float
    lag_p99_bound_ms: float

    def quantile(self, q: float) -> float:
        ordered = sorted(self.rtt_ms)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def headers(token: str) -> dict[str, str]:
    """The token, and an address of the guest's own (documentation range)."""
    digest = hashlib.sha256(token.encode()).hexdigest()
    address = "2001:db8:" + ":".join(digest[i : i + 4] for i in range(0, 24, 4))
    return {"Authorization": f"Bearer {token}", "X-Forwarded-For": address}


def open_table(http: httpx.Client, level: str, serial: int) -> int:
    """A Konkan table of 4 bots at ``level``: created, started with bots, left by its guest."""
    address = f"2001:db8:ffff::{serial:x}"
    made = http.post("/api/guests", headers={"X-Forwarded-For": address})
    made.raise_for_status()
    auth = headers(str(made.json()["token"]))
    body = {**TABLE, "options": {**TABLE["options"], "bot_level": level}}  # type: ignore[dict-item]
    table = http.post("/api/tables", json=body, headers=auth)
    table.raise_for_status()
    table_id = int(table.json()["id"])
    started = http.post(f"/api/tables/{table_id}/start", json={"bots": True}, headers=auth)
    started.raise_for_status()
    ticket = http.post(f"/api/tables/{table_id}/ticket", headers=auth).json()["ticket"]
    socket_url = str(http.base_url).replace("http", "ws", 1).rstrip("/")
    with connect(f"{socket_url}/ws/tables/{table_id}?ticket={ticket}", max_size=2**23) as ws:
        ws.recv()  # in, and out again
    deadline = time.monotonic() + 10
    while True:
        seats = http.get(f"/api/tables/{table_id}").json()["seats"]
        if all(seat["bot"] and seat["bot_level"] == level for seat in seats):
            return table_id
        assert time.monotonic() < deadline, seats
        time.sleep(0.05)


def scrape(http: httpx.Client) -> dict[str, float]:
    """The few /metrics samples this bench reads (summed over label sets)."""
    text = http.get("/metrics").text
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name, _, value = line.rpartition(" ")
        if name.startswith(("sahrat_event_loop_lag_seconds", "sahrat_bot_decision_seconds")):
            out[name] = out.get(name, 0.0) + float(value)
    return out


def lag_figures(before: dict[str, float], after: dict[str, float]) -> tuple[float, float]:
    """Mean lag and the upper bound of the bucket holding the p99, in ms, of the window."""
    base = "sahrat_event_loop_lag_seconds"
    count = after.get(f"{base}_count", 0.0) - before.get(f"{base}_count", 0.0)
    total = after.get(f"{base}_sum", 0.0) - before.get(f"{base}_sum", 0.0)
    if count <= 0:
        return float("nan"), float("nan")
    buckets = []
    for name, value in after.items():
        if name.startswith(f"{base}_bucket"):
            label = name.split('le="', 1)[1].split('"', 1)[0]
            upper = float("inf") if label == "+Inf" else float(label)
            buckets.append((upper, value - before.get(name, 0.0)))
    p99 = next(upper for upper, seen in sorted(buckets) if seen >= 0.99 * count)
    return 1000 * total / count, 1000 * p99


def one_run(level: str, tables: int, seconds: float, src: Path = SRC) -> Result:
    server = LocalServer(src, ENV)
    try:
        server.wait_ready()
        with httpx.Client(base_url=server.url, timeout=30) as http:
            serial = 0
            live: list[int] = []
            for _ in range(tables):
                serial += 1
                live.append(open_table(http, level, serial))
            rtts: list[float] = []
            stop = threading.Event()

            def probe() -> None:
                with httpx.Client(base_url=server.url, timeout=30) as own:
                    while not stop.is_set():
                        began = time.perf_counter()
                        own.get("/healthz").raise_for_status()
                        rtts.append(1000 * (time.perf_counter() - began))
                        stop.wait(PROBE_SECONDS)

            before, cpu_before, began = scrape(http), server.cpu(), time.monotonic()
            prober = threading.Thread(target=probe, daemon=True)
            prober.start()
            opened = 0
            while time.monotonic() - began < seconds:
                time.sleep(2.0)
                for index, table_id in enumerate(live):
                    status = http.get(f"/api/tables/{table_id}").json()["status"]
                    if status == "finished":
                        serial += 1
                        opened += 1
                        live[index] = open_table(http, level, serial)
            stop.set()
            prober.join()
            after, cpu_after, took = scrape(http), server.cpu(), time.monotonic() - began
        decisions = after.get("sahrat_bot_decision_seconds_count", 0.0) - before.get(
            "sahrat_bot_decision_seconds_count", 0.0
        )
        mean, p99_bound = lag_figures(before, after)
        return Result(level, opened, decisions, cpu_after - cpu_before, took, rtts, mean, p99_bound)
    finally:
        server.stop()


def row(run: int, result: Result) -> str:
    return (
        f"| {run} | {result.level} | {result.quantile(0.5):.1f} / {result.quantile(0.99):.1f} / "
        f"{max(result.rtt_ms):.0f} ms | {result.lag_mean_ms:.1f} ms / ≤ "
        f"{result.lag_p99_bound_ms:.0f} ms | {result.decisions / result.seconds:.0f}/s "
        f"| {result.cpu_seconds / result.seconds:.2f} | {result.tables_opened} |"
    )


def summary(level: str, results: list[Result]) -> str:
    def spread(values: list[float], digits: int = 1) -> str:
        return (
            f"{statistics.median(values):.{digits}f} "
            f"[{min(values):.{digits}f}–{max(values):.{digits}f}]"
        )

    return (
        f"| {level} | {spread([r.quantile(0.5) for r in results])} "
        f"| {spread([r.quantile(0.99) for r in results])} "
        f"| {spread([max(r.rtt_ms) for r in results], 0)} "
        f"| {spread([r.lag_mean_ms for r in results])} "
        f"| {spread([r.lag_p99_bound_ms for r in results], 0)} "
        f"| {spread([r.decisions / r.seconds for r in results], 0)} "
        f"| {spread([r.cpu_seconds / r.seconds for r in results], 2)} |"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tables", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--levels", default=",".join(LEVELS))
    parser.add_argument(
        "--src",
        type=Path,
        default=SRC,
        help="the src folder to serve from (another checkout's, for a before/after)",
    )
    args = parser.parse_args(argv)
    levels = [level for level in args.levels.split(",") if level]
    print(
        f"Measured {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC on "
        f"{platform.machine()}, {os.cpu_count()} cores, CPython {platform.python_version()}; "
        f"{args.tables} Konkan tables of 4 bots, {args.seconds:.0f} s per run.\n",
        flush=True,
    )
    print(
        "| run | bots | /healthz p50 / p99 / max | loop lag mean / p99 bucket "
        "| bot decisions | server CPU (cores) | tables replaced |"
    )
    print("|---|---|---|---|---|---|---|", flush=True)
    results: dict[str, list[Result]] = {level: [] for level in levels}
    for run in range(1, args.runs + 1):
        for level in levels:
            result = one_run(level, args.tables, args.seconds, args.src)
            results[level].append(result)
            print(row(run, result), flush=True)
    print("\nMedian [min–max] over the runs:\n")
    print(
        "| bots | /healthz p50 ms | p99 ms | max ms | loop lag mean ms | lag p99 bucket ms "
        "| decisions/s | server CPU |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for level in levels:
        print(summary(level, results[level]), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
