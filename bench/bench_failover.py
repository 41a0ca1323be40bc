"""Failover time of a two-process cluster (PostgreSQL + Redis), over several tries.

Not a test. Two ``sahrat serve`` processes share a fresh PostgreSQL database
and the local Redis. Each try opens a Conquian table on one process (its
owner), connects both seats through the *other* process (forwarded), plays a
few moves, then stops the owner — ``SIGKILL`` (a crash: the lease must run
out) or ``SIGTERM`` (a graceful shutdown: the lease is handed over) — and
keeps trying to move, reconnecting whenever the connection is closed. The
failover time is from the signal to the first command accepted by the new
owner (a move accepted while the table's lease still names the old owner —
a graceful shutdown finishes what is in flight — does not count). A new
process then replaces the stopped one for the next try.

    .venv/bin/python bench/bench_failover.py --tries 10 --signal kill,term
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import websockets

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_server import _create_pg, _drop_pg, _free_port, _wait_ready
from sahrat.bots import simple_conquian
from sahrat.rules import conquian
from sahrat.view_changes import apply_update

REDIS_URL = os.environ.get("SAHRAT_BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")
GIVE_UP = 30.0


class Node:
    def __init__(self, env: dict[str, str], workdir: Path) -> None:
        self.env, self.workdir = env, workdir
        self.port = _free_port()
        sahrat = str(Path(sys.executable).with_name("sahrat"))
        self.log = open(workdir / f"node-{self.port}.log", "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sahrat, "serve", "--host", "127.0.0.1", "--port", str(self.port)],
            env=env,
            cwd=workdir,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        _wait_ready(self.port, "/readyz", self.proc)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def signal(self, sig: int) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)

    def stop(self, sig: int) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(30)
        self.log.close()


async def _guest(http: httpx.AsyncClient) -> tuple[str, int]:
    body = (await http.post("/api/guests")).raise_for_status().json()
    return str(body["token"]), int(body["user"]["id"])


class SeatSocket:
    """One seat's WebSocket through ``node``: keeps its latest view and seq, and the
    replies by cid; reconnects (with ``since``) whenever it is closed."""

    def __init__(self, node: Node, table_id: int, token: str) -> None:
        self.node, self.table_id, self.token = node, table_id, token
        self.ws: Any = None
        self.view: dict[str, Any] | None = None
        self.seq = -1
        self.replies: dict[str, dict[str, Any]] = {}
        self.reader: asyncio.Task[None] | None = None

    async def ensure(self) -> bool:
        if self.ws is not None and self.reader is not None and not self.reader.done():
            return True
        since = f"&since={self.seq}" if self.seq >= 0 else ""
        try:
            async with httpx.AsyncClient(base_url=self.node.url, timeout=5) as http:
                ticket = await http.post(
                    f"/api/tables/{self.table_id}/ticket",
                    headers={"Authorization": f"Bearer {self.token}"},
                )
            ticket.raise_for_status()
            url = (
                f"ws://127.0.0.1:{self.node.port}/ws/tables/{self.table_id}"
                f"?ticket={ticket.json()['ticket']}"
            )
            self.ws = await websockets.connect(url + since, open_timeout=5)
        except Exception:
            self.ws = None
            return False
        self.reader = asyncio.create_task(self._read(self.ws))
        return True

    async def _read(self, ws: Any) -> None:
        try:
            async for text in ws:
                message = json.loads(text)
                kind, payload = message["type"], message["payload"]
                if kind in ("snapshot", "resume"):
                    snap = payload if kind == "snapshot" else payload["snapshot"]
                    self.view, self.seq = snap["view"], snap["table"]["seq"]
                elif kind == "update":
                    self.view, self.seq = apply_update(self.view, payload), message["seq"]
                elif kind == "reply":
                    self.replies[payload["cid"]] = payload
        except Exception:
            pass
        finally:
            self.ws = None

    async def command(self, cid: str, action: dict[str, Any], timeout: float = 5) -> str:
        """'ok', a refusal code, or 'lost' when the connection went first."""
        ws = self.ws
        if ws is None:
            return "lost"
        message = {"type": "command", "cid": cid, "seq": self.seq, "action": action}
        try:
            await ws.send(json.dumps(message))
        except Exception:
            return "lost"
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            reply = self.replies.pop(cid, None)
            if reply is not None:
                return "ok" if reply["ok"] else str(reply["error"]["code"])
            if self.ws is None:
                return "lost"
            await asyncio.sleep(0.005)
        return "lost"

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()


async def one_try(owner: Node, other: Node, sig: int, redis: Any, prefix: str) -> float:
    async with (
        httpx.AsyncClient(base_url=owner.url, timeout=10) as h1,
        httpx.AsyncClient(base_url=other.url, timeout=10) as h2,
    ):
        (t1, u1), (t2, _u2) = await _guest(h1), await _guest(h2)
        created = await h1.post(
            "/api/tables",
            json={"game": "conquian", "options": {"break_seconds": 0}},
            headers={"Authorization": f"Bearer {t1}"},
        )
        table_id = int(created.raise_for_status().json()["id"])
        joined = await h2.post(
            f"/api/tables/{table_id}/join", json={}, headers={"Authorization": f"Bearer {t2}"}
        )
        info = joined.raise_for_status().json()
    seat_of_u1 = next(s["seat"] for s in info["seats"] if s["user_id"] == u1)
    tokens = [t1, t2] if seat_of_u1 == 0 else [t2, t1]
    seats = [SeatSocket(other, table_id, token) for token in tokens]
    lease = f"{prefix}:lease:{table_id}"
    old_owner = None
    stopped_at: float | None = None
    moves = 0
    end = time.monotonic() + GIVE_UP
    pending: tuple[str, dict[str, Any]] | None = None
    cids = 0
    try:
        while time.monotonic() < end:
            if not all([await seat.ensure() for seat in seats]):
                await asyncio.sleep(0.02)
                continue
            newest = max(seats, key=lambda seat: seat.seq)
            if newest.view is None:
                await asyncio.sleep(0.005)
                continue
            actor = seats[int(newest.view["turn"])]
            if actor.seq < newest.seq or actor.view is None:
                await asyncio.sleep(0.005)
                continue
            if pending is None:
                cids += 1
                action = dict(conquian.action_to_json(simple_conquian.act(actor.view)))
                action.pop("seat", None)
                pending = (f"c{cids}", action)
            outcome = await actor.command(*pending)
            if outcome == "ok":
                pending = None
                moves += 1
                if stopped_at is not None:
                    accepted_at = time.monotonic()
                    holder = await redis.get(lease)
                    if holder is not None and holder != old_owner:
                        return accepted_at - stopped_at
                if moves == 6:
                    await asyncio.sleep(0.2)  # both seats have the latest update
                    old_owner = await redis.get(lease)
                    assert old_owner is not None
                    stopped_at = time.monotonic()
                    owner.signal(sig)  # waited for after the try, not during it
            elif outcome == "stale":
                pending = None
            else:  # unavailable or a lost connection: the same command again
                await asyncio.sleep(0.02)
        raise RuntimeError("no move was accepted after the owner stopped")
    finally:
        for seat in seats:
            await seat.close()


async def main_async(url: str, tries: int, signals: list[str], lease: float) -> int:
    workdir = Path(tempfile.mkdtemp(prefix="sahrat_failover_"))
    import redis.asyncio as aioredis

    redis = aioredis.from_url(REDIS_URL)
    prefix = f"failover-{secrets.token_hex(4)}"
    env = dict(os.environ)
    env.update(
        {
            "DATABASE_URL": url,
            "SAHRAT_REDIS_URL": REDIS_URL,
            "SAHRAT_CLUSTER_PREFIX": prefix,
            "SAHRAT_CLUSTER_SECRET": secrets.token_urlsafe(32),
            "SAHRAT_LEASE_SECONDS": str(lease),
        }
    )
    nodes: list[Node] = []
    results: dict[str, list[float]] = {}
    try:
        nodes = [Node(env, workdir), Node(env, workdir)]
        for name in signals:
            sig = signal.SIGKILL if name == "kill" else signal.SIGTERM
            times = results.setdefault(name, [])
            for attempt in range(tries):
                owner, other = nodes[attempt % 2], nodes[1 - attempt % 2]
                took = await one_try(owner, other, sig, redis, prefix)
                times.append(took)
                owner.stop(sig)
                print(f"{name} try {attempt + 1}: {took:.2f} s", file=sys.stderr, flush=True)
                nodes[attempt % 2] = Node(env, workdir)
    finally:
        for node in nodes:
            node.stop(signal.SIGTERM)
        await redis.aclose()
    print()
    print(f"lease {lease:g} s, {tries} tries each; failover = signal → first accepted move")
    print()
    print("| stop | tries | median s | min s | max s |")
    print("|---|---:|---:|---:|---:|")
    for name, times in results.items():
        print(
            f"| SIG{name.upper()} | {len(times)} | {statistics.median(times):.2f} "
            f"| {min(times):.2f} | {max(times):.2f} |"
        )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tries", type=int, default=10)
    parser.add_argument("--signal", default="kill,term", help="kill and/or term")
    parser.add_argument("--lease", type=float, default=3.0, help="SAHRAT_LEASE_SECONDS")
    args = parser.parse_args()
    dbname, url = _create_pg()
    try:
        return asyncio.run(main_async(url, args.tries, args.signal.split(","), args.lease))
    finally:
        _drop_pg(dbname)


if __name__ == "__main__":
    raise SystemExit(main())
