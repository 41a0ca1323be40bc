"""The load client of ``bench_server.py``: one worker process drives a share of the tables.

A worker sets its tables up over REST (guests, a table, joins), opens one
WebSocket per seat and, once told to go, plays every seat as soon as it is
that seat's turn:

* Conquian: the simple player, ``sahrat.bots.simple_conquian.act(view)``, on the
  view of each update (it takes, melds and discards, so matches end);
* Konkan: a cheap legal choice from ``view["simple_actions"]`` (draw, then a
  random discard; nobody opens), because the simple Konkan player's meld search
  (about 170 µs an action) would make the client the bottleneck.

A table whose match ends is replaced by a new table with the same guests, so
the load stays steady. The latency of a step is measured from the command
sent to its update received by **every** seat of the table.

``mode="peer"`` drives the bare uvicorn peer (``peer_uvicorn.py``) with the same
machinery: the same number of connections per table, one message in flight
per table, the seats taking turns; a move is a ping answered by a pong.

The WebSocket client is a small hand-written asyncio protocol (no
permessage-deflate, unfragmented frames, the all-zero mask key, which every
server accepts): the ``websockets`` client costs several times more CPU per
message and would measure itself, not the server.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sahrat.view_changes import apply_update

MAX_SETUP_CONCURRENCY = 8
CONNECT_TIMEOUT = 30.0
DRAIN_STEPS = 100  # × 0.1 s


@dataclass
class WorkerConfig:
    mode: str  # "sahrat" or "peer"
    host: str
    port: int
    game: str  # "conquian" or "konkan"
    players: int
    tables: int
    worker: int
    core: int | None = 1
    ports: tuple[int, ...] = ()  # every server process (a cluster); empty: just ``port``
    spread: str = "sticky"  # "sticky": a table's seats on its owner; "cross": spread out
    # After a match: "rematch" (every seat asks for another at the same table, over its
    # socket, as players who stay do) or "new_table" (a new table over REST, new sockets).
    after_match: str = "new_table"
    # The table-socket port of each of ``ports`` (SAHRAT_SOCKET_PORT), in the same order;
    # empty: the sockets open on the REST port, as the tables were made.
    socket_ports: tuple[int, ...] = ()

    def socket_port(self, port: int) -> int:
        """Where a socket to the server on ``port`` opens."""
        if not self.socket_ports:
            return port
        ports = self.ports or (self.port,)
        return self.socket_ports[ports.index(port)]


@dataclass
class Stats:
    moves: int = 0
    latencies: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    matches_finished: int = 0
    tables_started: int = 0


# --- a minimal WebSocket client -------------------------------------------------------


def _frame(payload: bytes, opcode: int = 0x1) -> bytes:
    """A final, masked (all-zero key: the payload is sent as is) client frame."""
    n = len(payload)
    if n < 126:
        head = bytes((0x80 | opcode, 0x80 | n))
    elif n < 65536:
        head = bytes((0x80 | opcode, 0x80 | 126)) + n.to_bytes(2, "big")
    else:
        head = bytes((0x80 | opcode, 0x80 | 127)) + n.to_bytes(8, "big")
    return head + b"\x00\x00\x00\x00" + payload


class RawSocket(asyncio.Protocol):
    """One client WebSocket; ``on_text`` is called with each text message."""

    def __init__(
        self,
        host: str,
        port: int,
        path: str,
        on_text: Callable[[str], None],
        on_close: Callable[[], None],
    ) -> None:
        self.host, self.port, self.path = host, port, path
        self.on_text = on_text
        self.on_close = on_close
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.open: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.upgraded = False
        self.closed = False
        self.fragments: list[bytes] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        key = base64.b64encode(os.urandom(16)).decode()
        transport.write(
            (
                f"GET {self.path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
                "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )

    def data_received(self, data: bytes) -> None:
        buf = self.buffer
        buf += data
        if not self.upgraded:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                return
            status = bytes(buf[: buf.find(b"\r\n")])
            del buf[: end + 4]
            if b" 101 " not in status:
                if not self.open.done():
                    self.open.set_exception(ConnectionError(status.decode(errors="replace")))
                self.close()
                return
            self.upgraded = True
            self.open.set_result(None)
        pos = 0
        size = len(buf)
        while size - pos >= 2:
            b1 = buf[pos]
            n = buf[pos + 1] & 0x7F
            head = 2
            if n == 126:
                if size - pos < 4:
                    break
                n = int.from_bytes(buf[pos + 2 : pos + 4], "big")
                head = 4
            elif n == 127:
                if size - pos < 10:
                    break
                n = int.from_bytes(buf[pos + 2 : pos + 10], "big")
                head = 10
            if size - pos < head + n:
                break
            payload = bytes(buf[pos + head : pos + head + n])
            pos += head + n
            opcode = b1 & 0x0F
            if opcode in (0x1, 0x2, 0x0):
                if not b1 & 0x80:
                    self.fragments.append(payload)
                    continue
                if self.fragments:
                    payload = b"".join(self.fragments) + payload
                    self.fragments = []
                if self.closed:
                    continue
                self.on_text(payload.decode())
            elif opcode == 0x9:  # ping: answer with a pong
                self.write(payload, 0xA)
            elif opcode == 0x8:
                self.close()
        if pos:
            del buf[:pos]

    def write(self, payload: bytes, opcode: int = 0x1) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(_frame(payload, opcode))

    def send_text(self, text: str) -> None:
        self.write(text.encode())

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            if self.transport is not None and not self.transport.is_closing():
                if self.upgraded:
                    self.transport.write(_frame(b"\x03\xe8", 0x8))
                self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.open.done():
            self.open.set_exception(ConnectionError("connection lost during the handshake"))
        was_closed = self.closed
        self.closed = True
        if not was_closed:
            self.on_close()


async def open_socket(
    host: str,
    port: int,
    path: str,
    on_text: Callable[[str], None],
    on_close: Callable[[], None],
    bind: Callable[[RawSocket], None] | None = None,
) -> RawSocket:
    """Connect and upgrade; ``bind`` gets the socket first (messages may come at once)."""
    loop = asyncio.get_running_loop()

    def factory() -> RawSocket:
        sock = RawSocket(host, port, path, on_text, on_close)
        if bind is not None:
            bind(sock)
        return sock

    _, proto = await loop.create_connection(factory, host, port)
    await asyncio.wait_for(proto.open, CONNECT_TIMEOUT)
    return proto


# --- the players ----------------------------------------------------------------------


def _conquian_move(view: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    from sahrat.bots import simple_conquian
    from sahrat.rules import conquian

    action = conquian.action_to_json(simple_conquian.act(view))
    action.pop("seat", None)
    return action


def _konkan_move(view: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    actions = view["simple_actions"]
    for action in actions:
        if action["type"] == "draw":
            chosen = action
            break
    else:
        discards = [a for a in actions if a["type"] == "discard"]
        chosen = rng.choice(discards) if discards else actions[-1]
    chosen = dict(chosen)
    chosen.pop("seat", None)
    return chosen


MOVERS = {"conquian": _conquian_move, "konkan": _konkan_move}


# --- Sahrat tables --------------------------------------------------------------------


class Worker:
    """The tables of one worker process and what it measured."""

    def __init__(self, config: WorkerConfig) -> None:
        self.config = config
        self.stats = Stats()
        self.playing = False
        self.window = (float("inf"), float("inf"))
        self.rng = random.Random(config.worker)
        self.tables: list[Any] = []
        self.background: set[asyncio.Task[Any]] = set()
        self.http: Any = None
        self.https: dict[int, Any] = {}  # by port, for a cluster
        self.made = 0

    def placement(self, players: int) -> tuple[int, list[int]]:
        """The port a new table is created on and the port of each of its seats."""
        ports = self.config.ports or (self.config.port,)
        self.made += 1
        home = (self.config.worker + self.made) % len(ports)
        if self.config.spread == "cross":
            return ports[home], [ports[(home + seat) % len(ports)] for seat in range(players)]
        return ports[home], [ports[home]] * players

    def in_window(self, t: float) -> bool:
        return self.window[0] <= t < self.window[1]

    def spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self.background.add(task)
        task.add_done_callback(self.background.discard)


class SahratSeat:
    def __init__(self, table: SahratTable, seat: int, token: str) -> None:
        self.table = table
        self.seat = seat
        self.token = token
        self.seq = 0
        self.acted_seq = -1
        self.view: dict[str, Any] | None = None
        self.socket: RawSocket | None = None
        self.cids = 0
        self.asked_rematch = False

    def bind(self, socket: RawSocket) -> None:
        self.socket = socket

    def on_text(self, text: str) -> None:
        t = time.monotonic()
        table = self.table
        worker = table.worker
        message = json.loads(text)
        kind = message["type"]
        seq = message["seq"]
        payload = message["payload"]
        if kind == "update":
            self.seq = seq
            pending = table.pending.get(seq)
            if pending is not None:
                pending[1] -= 1
                if pending[1] == 0:
                    del table.pending[seq]
                    if worker.in_window(pending[0]):
                        worker.stats.latencies.append(t - pending[0])
            self.consider(apply_update(self.view, payload))
        elif kind == "reply":
            if payload["ok"]:
                if worker.in_window(t):
                    worker.stats.moves += 1
            else:
                code = payload["error"]["code"]
                if worker.in_window(t) or not worker.playing:
                    worker.stats.errors[code] += 1
                snapshot = payload.get("snapshot")
                if snapshot is not None:  # stale: act again on the fresh view
                    self.seq = snapshot["table"]["seq"]
                    self.consider(snapshot["view"])
        elif kind == "snapshot":
            self.skip_to(seq)
            self.consider(payload["view"])
        elif kind == "resume":
            self.skip_to(seq)
            self.consider(payload["snapshot"]["view"])
        elif kind == "error":
            worker.stats.errors[payload["code"]] += 1

    def ask_rematch(self) -> None:
        """The match is over: count it once per table, and ask for another."""
        worker = self.table.worker
        if self.asked_rematch or not worker.playing:
            return
        self.asked_rematch = True
        if self.table.counted_end != self.seq:
            self.table.counted_end = self.seq
            worker.stats.matches_finished += 1
        assert self.socket is not None
        self.socket.send_text('{"type":"rematch"}')

    def skip_to(self, seq: int) -> None:
        """A snapshot took this seat to ``seq``: the updates in between will never come
        to it (a seat connected through another process may be greeted after the other
        seat's first move), so they stop waiting for it."""
        pending = self.table.pending
        for step in [s for s in pending if self.seq < s <= seq]:
            pending[step][1] -= 1
            if pending[step][1] <= 0:
                del pending[step]
        self.seq = seq

    def consider(self, view: dict[str, Any] | None) -> None:
        """Play if it is this seat's turn (once per seq), or end the table's match."""
        self.view = view
        if view is None or self.table.done:
            return
        worker = self.table.worker
        if view["match_over"]:
            if worker.config.after_match == "rematch":
                self.ask_rematch()
            else:
                self.table.finish()
            return
        self.asked_rematch = False
        if not worker.playing or view["turn"] != self.seat or self.acted_seq == self.seq:
            return
        self.acted_seq = self.seq
        action = MOVERS[worker.config.game](view, worker.rng)
        self.cids += 1
        text = json.dumps(
            {
                "type": "command",
                "cid": f"{self.seat}.{self.cids}",
                "seq": self.seq,
                "action": action,
            },
            separators=(",", ":"),
        )
        self.table.pending[self.seq + 1] = [time.monotonic(), self.table.players]
        assert self.socket is not None
        self.socket.send_text(text)

    def on_close(self) -> None:
        if not self.table.done and self.table.worker.playing:
            self.table.worker.stats.errors["disconnected"] += 1


class SahratTable:
    def __init__(self, worker: Worker, tokens: list[str]) -> None:
        self.worker = worker
        self.tokens = tokens
        self.players = len(tokens)
        self.id = 0
        self.seats: list[SahratSeat] = []
        self.pending: dict[int, list[Any]] = {}
        self.done = False
        self.counted_end = -1  # the seq of the last match end counted (rematches)

    async def start(self) -> None:
        """Create a table, fill its seats over REST, and open one WebSocket per seat."""
        cfg = self.worker.config
        home, seat_ports = self.worker.placement(self.players)
        http = self.worker.https.get(home, self.worker.http)
        # no pause between rounds: the load measures moves, not reading time
        options: dict[str, Any] = {"turn_seconds": 300, "break_seconds": 0}
        if cfg.game == "konkan":
            options["players"] = cfg.players
        r = await http.post(
            "/api/tables",
            json={"game": cfg.game, "options": options},
            headers={"Authorization": f"Bearer {self.tokens[0]}"},
        )
        r.raise_for_status()
        self.id = r.json()["id"]
        for token in self.tokens[1:]:
            r = await http.post(
                f"/api/tables/{self.id}/join", json={}, headers={"Authorization": f"Bearer {token}"}
            )
            r.raise_for_status()
        self.seats = [SahratSeat(self, s, token) for s, token in enumerate(self.tokens)]
        for seat, port in zip(self.seats, seat_ports, strict=True):
            # A one-time ticket (any process of a cluster takes it): tokens stay out of URLs.
            r = await http.post(
                f"/api/tables/{self.id}/ticket", headers={"Authorization": f"Bearer {seat.token}"}
            )
            r.raise_for_status()
            await open_socket(
                cfg.host,
                cfg.socket_port(port),
                f"/ws/tables/{self.id}?ticket={r.json()['ticket']}",
                seat.on_text,
                seat.on_close,
                seat.bind,
            )
        self.worker.stats.tables_started += 1

    def kick(self) -> None:
        for seat in self.seats:
            seat.consider(seat.view)

    def finish(self) -> None:
        """The match is over: close this table later (its last reply is on the way) and
        start a new one with the same guests."""
        if self.done:
            return
        self.done = True
        self.worker.stats.matches_finished += 1
        loop = asyncio.get_running_loop()
        loop.call_later(0.2, self.close)
        if self.worker.playing:
            self.worker.spawn(self.worker_replace())

    async def worker_replace(self) -> None:
        table = SahratTable(self.worker, self.tokens)
        try:
            await table.start()
        except Exception as error:  # counted; the run goes on
            self.worker.stats.errors[f"replace: {type(error).__name__}"] += 1
            return
        self.worker.tables.append(table)
        table.kick()

    def close(self) -> None:
        for seat in self.seats:
            if seat.socket is not None:
                seat.socket.close()


async def _guest(http: Any) -> str:
    r = await http.post("/api/guests")
    r.raise_for_status()
    return str(r.json()["token"])


# --- bare peer tables -------------------------------------------------------------------


class PeerTable:
    """Seats take turns sending a ping to the peer; a move is the pong that answers it."""

    def __init__(self, worker: Worker, players: int) -> None:
        self.worker = worker
        self.players = players
        self.sockets: list[RawSocket] = []
        self.turn = 0
        self.sent_at = 0.0
        self.n = 0

    async def start(self) -> None:
        cfg = self.worker.config
        for seat in range(self.players):
            self.sockets.append(
                await open_socket(
                    cfg.host,
                    cfg.port,
                    f"/ws/{seat}",
                    lambda text, s=seat: self.on_text(s, text),
                    self.on_close,
                )
            )

    def on_text(self, seat: int, text: str) -> None:
        t = time.monotonic()
        message = json.loads(text)
        worker = self.worker
        if message.get("n") != self.n:
            worker.stats.errors["bad_pong"] += 1
        if worker.in_window(t):
            worker.stats.moves += 1
        if worker.in_window(self.sent_at):
            worker.stats.latencies.append(t - self.sent_at)
        self.turn = (self.turn + 1) % self.players
        self.kick()

    def kick(self) -> None:
        if not self.worker.playing:
            return
        self.n += 1
        self.sent_at = time.monotonic()
        self.sockets[self.turn].send_text(
            json.dumps({"type": "ping", "n": self.n, "seat": self.turn}, separators=(",", ":"))
        )

    def on_close(self) -> None:
        if self.worker.playing:
            self.worker.stats.errors["disconnected"] += 1

    def close(self) -> None:
        for sock in self.sockets:
            sock.close()


# --- the worker process -----------------------------------------------------------------


async def _setup(worker: Worker) -> None:
    cfg = worker.config
    limit = asyncio.Semaphore(MAX_SETUP_CONCURRENCY)

    async def one() -> None:
        async with limit:
            if cfg.mode == "peer":
                table: Any = PeerTable(worker, cfg.players)
            else:
                tokens = [await _guest(worker.http) for _ in range(cfg.players)]
                table = SahratTable(worker, tokens)
            await table.start()
            worker.tables.append(table)

    await asyncio.gather(*(one() for _ in range(cfg.tables)))


async def _main(cfg: WorkerConfig, pipe: Any) -> None:
    import httpx

    worker = Worker(cfg)
    loop = asyncio.get_running_loop()
    async with httpx.AsyncClient(base_url=f"http://{cfg.host}:{cfg.port}", timeout=60) as http:
        worker.http = http
        others = [
            httpx.AsyncClient(base_url=f"http://{cfg.host}:{port}", timeout=60)
            for port in cfg.ports
        ]
        worker.https = {port: client for port, client in zip(cfg.ports, others, strict=True)}
        await _setup(worker)
        pipe.send(("ready", len(worker.tables)))
        _, go, t0, t1 = await loop.run_in_executor(None, pipe.recv)
        await asyncio.sleep(max(0.0, go - time.monotonic()))
        worker.window = (t0, t1)
        worker.playing = True
        for table in list(worker.tables):
            table.kick()
        await asyncio.sleep(max(0.0, t1 - time.monotonic()))
        worker.playing = False
        stalled = 0
        for _ in range(DRAIN_STEPS):  # let the steps in flight arrive; what never does stalled
            await asyncio.sleep(0.1)
            stalled = sum(
                1
                for table in worker.tables
                if isinstance(table, SahratTable) and not table.done and table.pending
            )
            if not stalled:
                break
        for table in worker.tables:
            table.close()
        for task in list(worker.background):
            task.cancel()
        for client in others:
            await client.aclose()
    pipe.send(
        (
            "result",
            {
                "moves": worker.stats.moves,
                "latencies": worker.stats.latencies,
                "errors": dict(worker.stats.errors),
                "matches_finished": worker.stats.matches_finished,
                "tables_started": worker.stats.tables_started,
                "stalled": stalled,
            },
        )
    )


def run_worker(cfg: WorkerConfig, pipe: Any) -> None:
    """The entry point of a worker process (``multiprocessing``)."""
    if cfg.core is not None:
        os.sched_setaffinity(0, {cfg.core})
    try:
        import uvloop

        run: Any = uvloop.run
    except ImportError:
        run = asyncio.run
    try:
        run(_main(cfg, pipe))
    except Exception as error:
        pipe.send(("failed", f"{type(error).__name__}: {error}"))
        raise
