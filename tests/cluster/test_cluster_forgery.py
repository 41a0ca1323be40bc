"""Messages written into Redis by someone who is not a process of the cluster are
refused: an ``attach`` naming any player, published on the table owner's channel
unsigned, with a wrong MAC, or copied from an earlier honest batch, never gets a
hand or a snapshot back; the owner logs and counts each refusal; the honest cluster
plays on. And a process does not start in a cluster without a long enough secret."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import secrets
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import redis.asyncio as aioredis
from pydantic import ValidationError

from sahrat.server.cluster.auth import MAC_BYTES, Signer
from sahrat.settings import Settings
from server.harness import REPO, Api, ServerProcess, WireClient, free_port, sahrat_command

pytestmark = pytest.mark.cluster

BARRIER_SECONDS = 10.0  # the owner answers a signed call well within this


def _messages(data: bytes) -> list[dict[str, Any]]:
    """The messages of a batch as read off Redis: signed (MAC, then the body) or, from
    a server that signs nothing, a bare JSON list."""
    with contextlib.suppress(orjson.JSONDecodeError):
        found = orjson.loads(data)
        if isinstance(found, list):
            return found
    with contextlib.suppress(orjson.JSONDecodeError):
        found = orjson.loads(data[MAC_BYTES:])
        if isinstance(found, dict) and isinstance(found.get("m"), list):
            return list(found["m"])
    return []


class Wiretap:
    """Everything published on the cluster's channels, as an attacker with Redis access
    reads it (PSUBSCRIBE): (channel, raw bytes) in arrival order."""

    def __init__(self, redis: aioredis.Redis, prefix: str) -> None:
        self.redis, self.prefix = redis, prefix
        self.heard: list[tuple[str, bytes]] = []
        self._new = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        pubsub = self.redis.pubsub()
        await pubsub.psubscribe(f"{self.prefix}:*")
        while (await pubsub.get_message(timeout=1.0)) is None:
            pass  # the subscription's confirmation
        self._task = asyncio.create_task(self._read(pubsub))

    async def _read(self, pubsub: Any) -> None:
        while True:
            message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
            if message is not None:
                self.heard.append((message["channel"].decode(), message["data"]))
                self._new.set()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    def envelopes(self, after: int = 0) -> list[tuple[str, dict[str, Any]]]:
        return [(channel, m) for channel, data in self.heard[after:] for m in _messages(data)]

    async def wait_for(self, pred: Callable[[str, dict[str, Any]], bool]) -> bool:
        """Whether a message satisfying ``pred`` arrives (False after BARRIER_SECONDS)."""
        deadline = asyncio.get_running_loop().time() + BARRIER_SECONDS
        while True:
            self._new.clear()
            if any(pred(channel, m) for channel, m in self.envelopes()):
                return True
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                return False
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._new.wait(), remaining)


def _attach(cid: str, origin: str, table_id: int, user_id: int) -> dict[str, Any]:
    """A forwarded socket's attach as cluster.py writes it: the owner then treats the
    connection as the player's own and sends its snapshot to ``origin``'s channel."""
    return {"k": "attach", "c": cid, "o": origin, "t": table_id, "u": user_id, "n": "x", "s": None}


async def _disconnected(api: Api, table_id: int, seat: int) -> bool:
    """Whether the table soon shows ``seat`` with no connection (False: not within
    BARRIER_SECONDS)."""
    deadline = asyncio.get_running_loop().time() + BARRIER_SECONDS
    while asyncio.get_running_loop().time() < deadline:
        info = await api.get(f"/api/tables/{table_id}")
        if not info["seats"][seat]["connected"]:
            return True
        await asyncio.sleep(0.05)
    return False


async def _refused(p1: ServerProcess, p2: ServerProcess, redis_url: str) -> dict[str, Any]:
    api1, api2 = Api(p1), Api(p2)
    victim, victim_user = await api1.guest()
    other, _ = await api2.guest()
    table_id = int((await api1.create_table(victim, "conquian", {}))["id"])
    assert (await api2.join(other, table_id))["status"] == "playing"
    prefix = p1.extra_env["SAHRAT_CLUSTER_PREFIX"]
    redis = aioredis.from_url(redis_url)
    lease = await redis.get(f"{prefix}:lease:{table_id}")  # the lease names the owner
    assert isinstance(lease, bytes)
    owner = lease.decode()
    owner_channel = f"{prefix}:to:{owner}"
    tap = Wiretap(redis, prefix)
    await tap.start()

    # An honest socket through process 2: its attach is signed; the attacker keeps a copy.
    honest = await WireClient.connect(p2, table_id, victim, name="honest")
    assert honest.view is not None and honest.seat is not None

    def attaching(channel: str, message: dict[str, Any]) -> bool:
        return channel == owner_channel and message.get("k") == "attach"

    assert await tap.wait_for(attaching)
    copied = next(data for c, data in tap.heard if any(attaching(c, m) for m in _messages(data)))
    honest_cid = next(m["c"] for m in _messages(copied) if m.get("k") == "attach")
    await honest.close()
    # The owner has dropped the honest connection once the seat shows nobody connected:
    # nothing is sent to its id any more.
    found: dict[str, Any] = {"detached": await _disconnected(api1, table_id, honest.seat)}

    # A process of the cluster (it has the secret) asks the owner for the table: the
    # answer comes after everything the owner did with what it read before.
    probe = Signer(p1.extra_env["SAHRAT_CLUSTER_SECRET"].encode(), f"probe-{secrets.token_hex(3)}")
    barriers = iter(range(1, 100))

    async def barrier() -> bool:
        call_id = f"barrier-{next(barriers)}"
        call = {"k": "call", "id": call_id, "o": probe.node, "op": "info", "t": table_id, "a": {}}
        await redis.publish(owner_channel, probe.seal(owner_channel, [call]))
        return await tap.wait_for(lambda _c, m: m.get("k") == "result" and m.get("id") == call_id)

    found["flushed"] = await barrier()  # what the owner sent before has arrived
    mark = len(tap.heard)
    attacker = f"attacker-{secrets.token_hex(3)}"
    forged = [_attach("forged-plain", attacker, table_id, victim_user["id"])]
    await redis.publish(owner_channel, orjson.dumps(forged))  # unsigned
    wrong = Signer(secrets.token_bytes(32), attacker)  # the secret guessed
    forged = [_attach("forged-mac", attacker, table_id, victim_user["id"])]
    await redis.publish(owner_channel, wrong.seal(owner_channel, forged))
    await redis.publish(owner_channel, copied)  # the honest attach, published again
    found["answered"] = await barrier()
    cids = {"forged-plain", "forged-mac", honest_cid}
    found["sent back"] = [  # e.g. ("out", "snapshot"): the victim's hand, to the attacker
        (m.get("k"), orjson.loads(m["x"])["type"] if m.get("k") == "out" else None)
        for channel, m in tap.envelopes(mark)
        if channel != owner_channel and m.get("c") in cids
    ]

    # The honest cluster still works: the player reconnects through process 2.
    again = await WireClient.connect(p2, table_id, victim, name="again")
    found["honest again"] = again.seat == honest.seat and again.view is not None
    await again.close()
    await tap.stop()
    await redis.aclose()
    metrics = httpx.get(f"{p1.base_url}/metrics", timeout=10).text
    found["counted"] = {
        reason: float(value)
        for reason, value in re.findall(
            r'^sahrat_cluster_refused_total\{reason="(\w+)"\} (\S+)$', metrics, re.M
        )
        if float(value) > 0
    }
    log = p1.log_path.read_text(errors="replace")
    found["logged"] = sorted(set(re.findall(r"refused a message from Redis \((\w+)\)", log)))
    await api1.aclose()
    await api2.aclose()
    return found


def test_forged_and_replayed_messages_get_no_hand(
    start_node: Callable[..., ServerProcess], redis_url: str
) -> None:
    p1, p2 = start_node(), start_node()
    assert asyncio.run(_refused(p1, p2, redis_url)) == {
        "detached": True,
        "flushed": True,
        "answered": True,
        "sent back": [],
        "honest again": True,
        "counted": {"bad_mac": 2.0, "replayed": 1.0},
        "logged": ["bad_mac", "replayed"],
    }


# --- no cluster without a secret ---------------------------------------------------------

REDIS = {"SAHRAT_REDIS_URL": "redis://127.0.0.1:6379/0"}


@pytest.mark.parametrize(
    "secret", [None, "", "x" * 31, "\u0628" * 15], ids=["unset", "empty", "31 bytes", "30 bytes"]
)
def test_the_settings_of_a_cluster_need_a_secret_of_32_bytes(secret: str | None) -> None:
    given = {} if secret is None else {"SAHRAT_CLUSTER_SECRET": secret}
    with pytest.raises(ValidationError, match="SAHRAT_CLUSTER_SECRET must be set to at least 32"):
        Settings(**REDIS, **given)  # type: ignore[arg-type]  # by alias, as from the env
    Settings(**REDIS, SAHRAT_CLUSTER_SECRET="x" * 32)  # type: ignore[arg-type]
    Settings()  # alone, no secret needed


def test_a_cluster_process_does_not_start_without_a_secret(tmp_path: Path) -> None:
    base = {k: v for k, v in os.environ.items() if not k.startswith("SAHRAT_")}
    base.pop("DATABASE_URL", None)
    settings = {
        "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'never.db'}",
        "SAHRAT_CLUSTER_PREFIX": f"test-{secrets.token_hex(4)}",
        **REDIS,
    }
    result = subprocess.run(
        [*sahrat_command(), "serve", "--port", str(free_port())],
        cwd=REPO,
        env={**base, **settings},
        capture_output=True,
        text=True,
        timeout=30,  # refused at once; a server that starts is stopped here
        check=False,
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith("sahrat: cannot start: SAHRAT_CLUSTER_SECRET must be set")
    assert "secrets.token_urlsafe(32)" in result.stderr  # how to make one
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "never.db").exists()  # nothing was touched
