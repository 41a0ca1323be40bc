"""What 10,000 idle, authenticated WebSockets cost one server process in memory.

Not a test. Starts ``sahrat serve`` on a free port of 127.0.0.1 with its own SQLite
database in a temporary folder (``local_server.py``) and:

1. makes ``--sockets / 8`` guests (1,250) and ``--tables`` (100) waiting Conquian
   tables, one opened by each of the first guests (its creator is seated there);
2. fetches one ticket per socket (``POST /api/tables/{id}/ticket``);
3. opens the sockets, ``--concurrency`` (200) handshakes at a time: socket ``i``
   belongs to guest ``i // 8`` and goes to table ``i % tables``, so every account
   holds 8 sockets (the default ``SAHRAT_MAX_SOCKETS_PER_ACCOUNT``) on 8 different
   tables and every table has ``sockets / tables`` (100) of them, nearly all
   spectators (under the default ``SAHRAT_MAX_SPECTATORS_PER_TABLE``, 200). A
   socket counts as open once its first message (the snapshot) came;
   The client offers permessage-deflate, as browsers do (``--compression none``: not);
4. holds them open ``--hold`` (45) seconds, with no traffic but the server's
   protocol pings (``SAHRAT_WS_PING_SECONDS``, set to 15 so the hold sees at least
   two rounds; the client sends none and answers them), reading whatever comes;
5. closes them.

The server process's ``VmRSS`` (``/proc/PID/status``) is read when it is ready,
once the set-up is done (just before the first socket), once every socket is open
and at the end of the hold (and its peak over the hold). Printed per run: those,
RSS per socket (the growth from before the first socket to the end of the hold,
divided by the sockets open), the time the tickets and the sockets took, and how
many sockets were refused or closed during the hold.

Only the set-up is eased: the new-account limits are raised so the guests come at
once, tickets live 15 minutes, and ``SAHRAT_MAX_CONNECTIONS`` (uvicorn's
``limit_concurrency``, 4096 by default, which every open socket counts against) is
raised to 20,000 — with its default the 4,097th socket gets a 503. The open-files
limit of this process and of the server (its child) is raised to the hard limit.

    .venv/bin/python bench/bench_idle_sockets.py                 # 3 runs
    .venv/bin/python bench/bench_idle_sockets.py --runs 1 --sockets 2000 --hold 20
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import websockets
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed, InvalidStatus

from local_server import LocalServer, free_port

SRC = Path(__file__).resolve().parent.parent / "src"
TARGET_MIB = 600.0  # the target for 10,000 idle sockets on one process
PER_ACCOUNT = 8  # the default SAHRAT_MAX_SOCKETS_PER_ACCOUNT
STEP_SECONDS = 60.0  # one REST call or handshake, at most
SAMPLE_SECONDS = 5.0
ENV = {
    "SAHRAT_NEW_ACCOUNTS_PER_ADDRESS_HOUR": "1000000",
    "SAHRAT_NEW_ACCOUNTS_PER_MINUTE": "1000000",
    "SAHRAT_TICKET_SECONDS": "900",
    "SAHRAT_MAX_CONNECTIONS": "20000",
    "SAHRAT_WS_PING_SECONDS": "15",
}
SETUP_CONCURRENCY = 16


def _mib(kib: int) -> float:
    return kib / 1024.0


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


async def _post(http: httpx.AsyncClient, path: str, token: str | None, body: Any = None) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    response = await http.post(path, json=body, headers=headers)
    if response.status_code not in (200, 201):
        raise RuntimeError(f"{path}: {response.status_code} {response.text[:200]}")
    return response.json()


async def _bounded(n: int, make: Any, count: int) -> list[Any]:
    """``make(i)`` for i in range(count), at most ``n`` at a time, in order."""
    limit = asyncio.Semaphore(n)

    async def one(i: int) -> Any:
        async with limit:
            return await make(i)

    return list(await asyncio.gather(*(one(i) for i in range(count))))


class Holder:
    """The open sockets, each drained by one reader so the server never waits on us."""

    def __init__(self, deflate: bool) -> None:
        self.deflate = deflate
        self.open: list[ClientConnection] = []
        self.readers: list[asyncio.Task[None]] = []
        self.refused: Counter[str] = Counter()
        self.dropped: Counter[str] = Counter()  # closed by the server during the hold
        self.holding = False

    async def connect(self, url: str) -> None:
        try:
            ws = await websockets.connect(
                url,
                open_timeout=STEP_SECONDS,
                ping_interval=None,
                max_size=2**22,
                compression="deflate" if self.deflate else None,
            )
        except InvalidStatus as error:
            self.refused[f"http {error.response.status_code}"] += 1
            return
        except (OSError, TimeoutError) as error:
            self.refused[type(error).__name__] += 1
            return
        try:
            await asyncio.wait_for(ws.recv(), STEP_SECONDS)
        except ConnectionClosed:
            self.refused[f"close {ws.close_code}"] += 1
            return
        except TimeoutError:
            self.refused["no snapshot"] += 1
            await ws.close()
            return
        self.open.append(ws)
        self.readers.append(asyncio.create_task(self._drain(ws)))

    async def _drain(self, ws: ClientConnection) -> None:
        try:
            async for _ in ws:
                pass
        except ConnectionClosed:
            pass
        if self.holding:
            self.dropped[str(ws.close_code)] += 1

    async def close_all(self) -> None:
        self.holding = False
        await _bounded(500, lambda i: self.open[i].close(), len(self.open))
        for reader in self.readers:
            reader.cancel()
        await asyncio.gather(*self.readers, return_exceptions=True)


async def measure(
    server: LocalServer,
    sockets: int,
    tables: int,
    concurrency: int,
    hold: float,
    deflate: bool,
    socket_port: int | None,
) -> dict[str, Any]:
    result: dict[str, Any] = {"rss_ready_mib": round(_mib(server.rss_kib()), 1)}
    accounts = -(-sockets // PER_ACCOUNT)
    if tables > accounts:
        raise ValueError(f"{tables} tables need at least as many guests ({accounts})")
    limits = httpx.Limits(max_connections=SETUP_CONCURRENCY * 2)
    async with httpx.AsyncClient(base_url=server.url, timeout=STEP_SECONDS, limits=limits) as http:
        began = time.monotonic()

        async def guest(_: int) -> str:
            return str((await _post(http, "/api/guests", None))["token"])

        tokens = await _bounded(SETUP_CONCURRENCY, guest, accounts)

        async def table(i: int) -> int:
            made = await _post(http, "/api/tables", tokens[i], {"game": "conquian", "options": {}})
            return int(made["id"])

        ids = await _bounded(SETUP_CONCURRENCY, table, tables)
        result["setup_s"] = round(time.monotonic() - began, 1)

        began = time.monotonic()

        async def ticket(i: int) -> str:
            table_id = ids[i % tables]
            got = await _post(http, f"/api/tables/{table_id}/ticket", tokens[i // PER_ACCOUNT])
            query = urlencode({"ticket": got["ticket"]})
            return f"ws://127.0.0.1:{socket_port or server.port}/ws/tables/{table_id}?{query}"

        urls = await _bounded(SETUP_CONCURRENCY, ticket, sockets)
        result["tickets_s"] = round(time.monotonic() - began, 1)
    await asyncio.to_thread(server.wait_idle)
    before = server.rss_kib()
    result["rss_before_mib"] = round(_mib(before), 1)

    holder = Holder(deflate)
    began = time.monotonic()
    cpu0 = server.cpu()
    await _bounded(concurrency, lambda i: holder.connect(urls[i]), sockets)
    result["open_s"] = round(time.monotonic() - began, 1)
    result["server_cpu_open_s"] = round(server.cpu() - cpu0, 1)
    result["opened"] = len(holder.open)
    result["refused"] = dict(holder.refused)
    result["rss_open_mib"] = round(_mib(server.rss_kib()), 1)

    holder.holding = True
    peak = 0
    deadline = time.monotonic() + hold
    while time.monotonic() < deadline:
        await asyncio.sleep(min(SAMPLE_SECONDS, max(0.0, deadline - time.monotonic())))
        peak = max(peak, server.rss_kib())
    after = server.rss_kib()
    result["rss_held_mib"] = round(_mib(after), 1)
    result["rss_peak_mib"] = round(_mib(max(peak, after)), 1)
    result["kib_per_socket"] = round((after - before) / max(1, len(holder.open)), 1)
    result["dropped"] = dict(holder.dropped)
    result["still_open"] = sum(1 for ws in holder.open if ws.close_code is None)
    result["load"] = _load()
    await holder.close_all()
    return result


def run_once(
    sockets: int, tables: int, concurrency: int, hold: float, deflate: bool, picows: bool
) -> dict[str, Any]:
    """One run; ``picows``: the sockets open on the server's socket port
    (``SAHRAT_SOCKET_PORT``), REST staying on uvicorn's."""
    socket_port = free_port() if picows else None
    env = {**ENV, "SAHRAT_SOCKET_PORT": str(socket_port)} if socket_port else ENV
    server = LocalServer(SRC, env, ("--log-level", "warning"))
    try:
        server.wait_ready()
        return asyncio.run(
            measure(server, sockets, tables, concurrency, hold, deflate, socket_port)
        )
    finally:
        server.stop()


def _raise_open_files(needed: int) -> None:
    """Up to the hard limit, for this process and the server it spawns (inherited)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if hard != resource.RLIM_INFINITY and hard < needed:
        raise SystemExit(f"the open-files hard limit is {hard}; {needed} are needed")


def _spread(values: list[float], digits: int = 0) -> str:
    return (
        f"{statistics.median(values):.{digits}f} "
        f"[{min(values):.{digits}f}–{max(values):.{digits}f}]"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs (3)")
    parser.add_argument("--sockets", type=int, default=10_000, help="sockets held open (10000)")
    parser.add_argument("--tables", type=int, default=100, help="tables they go to (100)")
    parser.add_argument(
        "--concurrency", type=int, default=200, help="handshakes in flight at once (200)"
    )
    parser.add_argument("--hold", type=float, default=45.0, help="seconds held open (45)")
    parser.add_argument(
        "--compression",
        choices=("deflate", "none"),
        default="deflate",
        help="whether the client offers permessage-deflate, as browsers do (deflate)",
    )
    parser.add_argument(
        "--socket",
        choices=("uvicorn", "picows"),
        default="uvicorn",
        help="the sockets on uvicorn's port, or on the picows socket port (uvicorn)",
    )
    parser.add_argument("--json", action="store_true", help="print each run as JSON")
    args = parser.parse_args()
    if min(args.runs, args.sockets, args.tables, args.concurrency) < 1 or args.hold < 0:
        parser.error("--runs, --sockets, --tables and --concurrency must be at least 1")
    _raise_open_files(args.sockets + 1000)
    runs = []
    for index in range(args.runs):
        deflate = args.compression == "deflate"
        picows = args.socket == "picows"
        run = run_once(args.sockets, args.tables, args.concurrency, args.hold, deflate, picows)
        runs.append(run)
        print(json.dumps(run) if args.json else f"run {index + 1}: {run}", flush=True)
    complete = [r for r in runs if r["opened"] == args.sockets and r["still_open"] == args.sockets]
    held = [r["rss_held_mib"] for r in runs]
    met = len(complete) == len(runs) and max(r["rss_peak_mib"] for r in runs) <= TARGET_MIB
    print()
    print(
        "| sockets (tables), compression, socket | RSS before (MiB) | RSS held (MiB) "
        "| RSS peak (MiB) | KiB per socket | opening (s) | tickets (s) | complete runs "
        f"| ≤ {TARGET_MIB:g} MiB | load (1 5 15) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    print(
        f"| {args.sockets} ({args.tables}), {args.compression}, {args.socket} "
        f"| {_spread([r['rss_before_mib'] for r in runs])} "
        f"| {_spread(held)} | {_spread([r['rss_peak_mib'] for r in runs])} "
        f"| {_spread([r['kib_per_socket'] for r in runs], 1)} "
        f"| {_spread([r['open_s'] for r in runs], 1)} "
        f"| {_spread([r['tickets_s'] for r in runs], 1)} | {len(complete)}/{len(runs)} "
        f"| {'met' if met else 'NOT met'} | {'; '.join(r['load'] for r in runs)} |"
    )
    return 0 if len(complete) == len(runs) else 1


if __name__ == "__main__":
    sys.exit(main())
