"""How fast a server killed with SIGKILL serves its live tables again.

Not a test. For each database (a SQLite file in a temporary folder, and a fresh
PostgreSQL database ``sahrat_bench_<random>`` on 127.0.0.1:5432 as ``postgres``,
dropped afterwards) and each run:

1. ``sahrat serve`` on 127.0.0.1 on a fresh database; ``--tables`` (200) Conquian
   tables of 2 seats, each opened by one guest and joined by another (the match
   starts when the second seat fills); on each table ``--moves`` (4) moves are
   played over WebSocket (the seat to act sends the first of its
   ``simple_actions``), so the event log has a start and a few actions;
2. the server is killed with SIGKILL, its players' sockets still open;
3. a new ``sahrat serve`` starts on the same database. From its spawn, ``/readyz``
   is polled every 20 ms; once the port answers, for every table at once the
   player whose turn it is does what a reconnecting client does — a ticket
   (``POST /api/tables/{id}/ticket``), the socket, its snapshot, then the first
   of its ``simple_actions`` as a command — and the time from the spawn to that
   command's ``ok`` reply is that table's time.

Printed per run: seconds from spawn to ``/readyz`` 200, each table's time
(p50, max), and whether every table came back at the seq it had when it was
killed (an acknowledged move lost would show here). The turn timer and the
grace period are set to an hour so that nothing moves by itself, and the account
limits are raised so that the set-up can make its 400 guests at once.

    .venv/bin/python bench/bench_recovery.py                      # 3 runs of each database
    .venv/bin/python bench/bench_recovery.py --runs 1 --db sqlite --tables 50
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import secrets
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from shutil import rmtree
from typing import Any
from urllib.parse import urlencode

import httpx
import websockets
from websockets.asyncio.client import ClientConnection

from local_server import LocalServer
from sahrat.view_changes import apply_update

SRC = Path(__file__).resolve().parent.parent / "src"
PG_DSN: dict[str, Any] = {"user": "postgres", "host": "127.0.0.1", "port": 5432}
TARGET_SECONDS = 3.0
STEP_SECONDS = 30.0  # one REST call, socket or command, at most
RESTART_SECONDS = 120.0  # a table not serving a move by then counts as failed
POLL_SECONDS = 0.02
SETUP_CONCURRENCY = 16
HOUR = "3600"
ENV = {
    # nothing moves by itself while the server is down or the tables wait
    "SAHRAT_TURN_SECONDS_OVERRIDE": HOUR,
    "SAHRAT_GRACE_SECONDS": HOUR,
    "SAHRAT_TICKET_SECONDS": "600",
    # the set-up makes 2 guests a table at once, from one address
    "SAHRAT_NEW_ACCOUNTS_PER_ADDRESS_HOUR": "1000000",
    "SAHRAT_NEW_ACCOUNTS_PER_MINUTE": "1000000",
}


# --- the database ----------------------------------------------------------------------------


async def _pg(sql: str) -> None:
    import asyncpg  # type: ignore[import-untyped]

    conn = await asyncpg.connect(database="postgres", timeout=10, **PG_DSN)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


class Database:
    """A fresh database of one kind; ``drop()`` removes it."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.folder: Path | None = None
        self.name = ""
        if kind == "sqlite":
            self.folder = Path(tempfile.mkdtemp(prefix="sahrat_recovery_"))
            self.url = f"sqlite+aiosqlite:///{self.folder / 'sahrat.db'}"
        else:
            self.name = f"sahrat_bench_{secrets.token_hex(6)}"
            asyncio.run(_pg(f'CREATE DATABASE "{self.name}"'))
            self.url = (
                f"postgresql+asyncpg://{PG_DSN['user']}@{PG_DSN['host']}:{PG_DSN['port']}"
                f"/{self.name}"
            )

    def drop(self) -> None:
        if self.folder is not None:
            rmtree(self.folder, ignore_errors=True)
        if self.name:
            asyncio.run(_pg(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)'))


# --- a player's socket ------------------------------------------------------------------------


class SeatSocket:
    """One player's WebSocket: keeps the table's seq and this seat's latest view, and
    hands each command's reply to whoever waits for it."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.seq = 0
        self.view: dict[str, Any] | None = None
        self.seat: int | None = None
        self.snapshot = asyncio.Event()
        self.replies: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.reader = asyncio.create_task(self._read())
        self.cids = itertools.count()

    async def _read(self) -> None:
        try:
            async for raw in self.ws:
                message = json.loads(raw)
                kind, payload = message.get("type"), message.get("payload") or {}
                if isinstance(message.get("seq"), int):
                    self.seq = max(self.seq, message["seq"])
                if kind == "snapshot":
                    self.seat = payload.get("seat")
                    self.view = payload.get("view")
                    self.snapshot.set()
                elif kind == "update":
                    self.view = apply_update(self.view, payload)
                elif kind == "reply":
                    if payload.get("snapshot"):
                        self.view = payload["snapshot"].get("view")
                    waiter = self.replies.pop(str(payload.get("cid")), None)
                    if waiter is not None and not waiter.done():
                        waiter.set_result(payload)
        except websockets.ConnectionClosed:
            pass

    def my_turn(self) -> bool:
        view = self.view
        return bool(view and view.get("turn") == self.seat and view.get("simple_actions"))

    async def move(self) -> dict[str, Any]:
        """Send the first simple action at the current seq; its reply."""
        assert self.view is not None
        action = {k: v for k, v in self.view["simple_actions"][0].items() if k != "seat"}
        cid = f"c{next(self.cids)}-{secrets.token_hex(3)}"
        waiter: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.replies[cid] = waiter
        command = {"type": "command", "cid": cid, "seq": self.seq, "action": action}
        await self.ws.send(json.dumps(command))
        return await asyncio.wait_for(waiter, STEP_SECONDS)

    async def close(self) -> None:
        self.reader.cancel()
        await asyncio.gather(self.reader, return_exceptions=True)
        await self.ws.close()


async def _open(
    http: httpx.AsyncClient, port: int, table: int, token: str, marks: list[float] | None = None
) -> SeatSocket:
    """The socket of ``token``'s user to ``table``, once its snapshot came (``marks`` gets
    the moments the ticket came, the socket opened and the snapshot came)."""
    response = await http.post(
        f"/api/tables/{table}/ticket", headers={"Authorization": f"Bearer {token}"}
    )
    if response.status_code != 200:
        raise RuntimeError(f"ticket: {response.status_code} {response.text[:200]}")
    if marks is not None:
        marks.append(time.monotonic())
    query = urlencode({"ticket": response.json()["ticket"]})
    ws = await websockets.connect(
        f"ws://127.0.0.1:{port}/ws/tables/{table}?{query}",
        open_timeout=STEP_SECONDS,
        ping_interval=None,
    )
    if marks is not None:
        marks.append(time.monotonic())
    sock = SeatSocket(ws)
    await asyncio.wait_for(sock.snapshot.wait(), STEP_SECONDS)
    if marks is not None:
        marks.append(time.monotonic())
    return sock


# --- the set-up: tables in play ---------------------------------------------------------------


@dataclass
class PlayedTable:
    id: int
    tokens: list[str]  # by seat
    seq: int = 0  # the table's seq when the server was killed
    turn: int = 0  # the seat to act then
    sockets: list[SeatSocket] = field(default_factory=list)


async def _post(http: httpx.AsyncClient, path: str, token: str | None, body: Any) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    response = await http.post(path, json=body, headers=headers)
    if response.status_code not in (200, 201):
        raise RuntimeError(f"{path}: {response.status_code} {response.text[:200]}")
    return response.json()


async def _set_up_table(http: httpx.AsyncClient, port: int, moves: int) -> PlayedTable:
    host = (await _post(http, "/api/guests", None, None))["token"]
    guest = (await _post(http, "/api/guests", None, None))["token"]
    info = await _post(http, "/api/tables", host, {"game": "conquian", "options": {}})
    table = PlayedTable(int(info["id"]), [host, guest])
    await _post(http, f"/api/tables/{table.id}/join", guest, {})
    table.sockets = [await _open(http, port, table.id, token) for token in table.tokens]
    deadline = time.monotonic() + STEP_SECONDS
    for _ in range(moves):
        # the seat to act, once its socket has seen the last step
        while time.monotonic() < deadline:
            top = max(s.seq for s in table.sockets)
            actor = next((s for s in table.sockets if s.seq == top and s.my_turn()), None)
            if actor is not None:
                break
            await asyncio.sleep(POLL_SECONDS)
        else:
            raise RuntimeError(f"table {table.id}: no seat to act")
        reply = await actor.move()
        if not reply.get("ok"):
            raise RuntimeError(f"table {table.id}: move refused: {reply}")
    while time.monotonic() < deadline:  # both seats have seen the last step
        top = max(s.seq for s in table.sockets)
        actor = next((s for s in table.sockets if s.seq == top and s.my_turn()), None)
        if actor is not None and all(s.seq == top for s in table.sockets):
            table.seq, table.turn = top, int(actor.seat or 0)
            return table
        await asyncio.sleep(POLL_SECONDS)
    raise RuntimeError(f"table {table.id}: the seats do not agree on the last step")


async def set_up(url: str, port: int, tables: int, moves: int) -> list[PlayedTable]:
    limit = asyncio.Semaphore(SETUP_CONCURRENCY)

    async def one(http: httpx.AsyncClient) -> PlayedTable:
        async with limit:
            return await _set_up_table(http, port, moves)

    async with httpx.AsyncClient(base_url=url, timeout=STEP_SECONDS) as http:
        return list(await asyncio.gather(*(one(http) for _ in range(tables))))


# --- the restart ------------------------------------------------------------------------------


@dataclass
class TableResult:
    seconds: float | None = None
    marks: list[float] = field(default_factory=list)  # since the spawn: go, ticket, open, snap
    same_seq: bool = False
    error: str = ""


async def _back_in_play(
    http: httpx.AsyncClient, port: int, table: PlayedTable, spawn: float, go: asyncio.Event
) -> TableResult:
    result = TableResult()
    await go.wait()
    marks = [time.monotonic()]
    try:
        sock = await _open(http, port, table.id, table.tokens[table.turn], marks)
    except Exception as error:  # refused, timed out: this table failed
        result.error = f"open: {error!r}"[:200]
        return result
    try:
        result.same_seq = sock.seq == table.seq
        for _ in range(3):  # a stale seq is answered with a snapshot: try again
            if not sock.my_turn():
                result.error = f"not this seat's turn at seq {sock.seq}"
                return result
            reply = await sock.move()
            if reply.get("ok"):
                result.seconds = time.monotonic() - spawn
                result.marks = [m - spawn for m in marks]
                result.error = ""
                return result
            result.error = f"refused: {reply.get('error')}"[:200]
    except Exception as error:
        result.error = f"move: {error!r}"[:200]
    finally:
        await sock.close()
    return result


async def restart(
    make_server: Any, tables: list[PlayedTable]
) -> tuple[LocalServer, list[float], list[TableResult]]:
    """Spawn the new server and bring every table back: (the server, [seconds to /readyz
    and the server's CPU seconds by then] or [] if it never got ready, each table)."""
    spawn = time.monotonic()
    server: LocalServer = make_server()
    go = asyncio.Event()
    ready: list[float] = []

    async def poll_ready(http: httpx.AsyncClient) -> None:
        deadline = spawn + RESTART_SECONDS
        while time.monotonic() < deadline and server.proc.poll() is None:
            try:
                response = await http.get("/readyz", timeout=1)
                go.set()  # the port is open: lifespan start-up is over
                if response.status_code == 200:
                    ready.append(time.monotonic() - spawn)
                    ready.append(server.cpu())
                    return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(POLL_SECONDS)
        go.set()  # let the tables fail rather than wait for ever

    limits = httpx.Limits(max_connections=len(tables) + 1)
    async with httpx.AsyncClient(base_url=server.url, timeout=STEP_SECONDS, limits=limits) as http:
        poller = asyncio.create_task(poll_ready(http))
        results = await asyncio.wait_for(
            asyncio.gather(*(_back_in_play(http, server.port, t, spawn, go) for t in tables)),
            RESTART_SECONDS,
        )
        await poller
    return server, ready, list(results)


# --- one run ----------------------------------------------------------------------------------


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def run_once(kind: str, tables: int, moves: int, src: Path = SRC) -> dict[str, Any]:
    db = Database(kind)
    servers: list[LocalServer] = []

    def make_server() -> LocalServer:
        server = LocalServer(src, ENV, ("--log-level", "warning"), database_url=db.url)
        servers.append(server)
        return server

    try:
        first = make_server()
        first.wait_ready()

        async def setup_then_kill() -> list[PlayedTable]:
            played = await set_up(first.url, first.port, tables, moves)
            first.kill()  # the players' sockets are still open
            await asyncio.gather(*(s.close() for t in played for s in t.sockets))
            return played

        began = time.monotonic()
        played = asyncio.run(setup_then_kill())
        setup_s = time.monotonic() - began
        load = _load()
        client0 = time.process_time()
        second, ready, results = asyncio.run(restart(make_server, played))
        ready_s = ready[0] if ready else None
        client_cpu = time.process_time() - client0
        server_cpu = second.cpu()  # from its spawn to the last table's move and a little
        times = sorted(r.seconds for r in results if r.seconds is not None)
        errors = sorted({r.error for r in results if r.error})
        done = [r for r in results if r.seconds is not None and len(r.marks) == 4]

        def p50(values: list[float]) -> float | None:
            return round(statistics.median(values), 2) if values else None

        return {
            "db": kind,
            "tables": tables,
            "moves": moves,
            "setup_s": round(setup_s, 1),
            "readyz_s": round(ready_s, 2) if ready_s is not None else None,
            "served": len(times),
            "p50_s": round(statistics.median(times), 2) if times else None,
            "max_s": round(times[-1], 2) if times else None,
            "same_seq": sum(r.same_seq for r in results),
            # p50 of each step, since the spawn: port open, ticket, socket, snapshot
            "steps_p50_s": [p50([r.marks[i] for r in done]) for i in range(4)],
            # CPU seconds: the server's by /readyz and in all, this client's
            "cpu_s": {
                "server_ready": round(ready[1], 2) if ready else None,
                "server": round(server_cpu, 2),
                "client": round(client_cpu, 2),
            },
            "errors": errors[:5],
            "load": load,
            "server_log": second.log_tail()[-600:] if errors else "",
        }
    finally:
        for server in servers:
            server.stop()
        db.drop()


def _spread(values: list[float]) -> str:
    if not values:
        return "n/a"
    return f"{statistics.median(values):.2f} [{min(values):.2f}–{max(values):.2f}]"


def _raise_open_files() -> None:
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of each database (3)")
    parser.add_argument("--tables", type=int, default=200, help="tables in play (200)")
    parser.add_argument("--moves", type=int, default=4, help="moves played on each (4)")
    parser.add_argument(
        "--db", choices=("sqlite", "postgres", "both"), default="both", help="(both)"
    )
    parser.add_argument("--json", action="store_true", help="print each run as JSON")
    parser.add_argument(
        "--src", type=Path, default=SRC, help="the src folder to serve (another checkout's)"
    )
    args = parser.parse_args()
    if args.runs < 1 or args.tables < 1 or args.moves < 0:
        parser.error("--runs and --tables must be at least 1, --moves at least 0")
    _raise_open_files()
    kinds = ["sqlite", "postgres"] if args.db == "both" else [args.db]
    rows: list[str] = []
    failed = False
    for kind in kinds:
        runs = []
        for index in range(args.runs):
            run = run_once(kind, args.tables, args.moves, args.src)
            runs.append(run)
            print(json.dumps(run) if args.json else f"{kind} run {index + 1}: {run}", flush=True)
        complete = [r for r in runs if r["served"] == args.tables and r["readyz_s"] is not None]
        failed = failed or len(complete) < len(runs)
        ready = [r["readyz_s"] for r in complete]
        p50 = [r["p50_s"] for r in complete]
        worst = [r["max_s"] for r in complete]
        met = bool(complete) and len(complete) == len(runs) and max(worst) <= TARGET_SECONDS
        rows.append(
            f"| {kind} | {args.tables} × {args.moves} moves | {_spread(ready)} | {_spread(p50)} "
            f"| {_spread(worst)} | {len(complete)}/{len(runs)} | "
            f"{'met' if met else 'NOT met'} | {'; '.join(r['load'] for r in runs)} |"
        )
    print()
    print(
        "| database | tables | spawn → /readyz (s) | spawn → move ok, p50 (s) "
        f"| spawn → move ok, max (s) | complete runs | ≤ {TARGET_SECONDS:g} s | load (1 5 15) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(row)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
