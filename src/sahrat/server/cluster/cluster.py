"""Several server processes behind one load balancer, joined through Redis.

PostgreSQL stays the one source of truth (every table's event log); Redis only
says who serves what and carries messages between the processes:

* **Leases.** Each live table is served by exactly one process, the holder of
  the Redis key ``{prefix}:lease:{table}`` (``SET NX PX``). The holder renews all
  its leases every third of the lease time; a process that cannot renew stops
  writing for the table once its own lease time has passed, and the event log's
  unique ``(table, seq)`` refuses a step from a stale holder in any case.
  Another process takes a table whose lease expired within about one lease
  time (a scan every third of it), rebuilding it from the event log, turn
  deadlines included — that is failover.
* **Forwarding.** A player may be connected to any process. A process that
  does not own the table *attaches* the connection to the owner; the owner
  treats it like one of its own (same greeting, same replies, same grace
  period) and its messages travel back over the origin process's channel
  (``{prefix}:to:{node}``, Redis pub/sub), batched per flush. Table operations
  of the REST API (join, leave, start...) are forwarded the same way as calls
  with a reply.
* **Gaps.** The origin checks that each forwarded connection's updates arrive
  with consecutive ``seq``; a gap (a lost pub/sub message, a new owner) never
  passes silently: the client is told to reconnect (close code 4503), and its
  reconnect with ``since`` is answered by the owner from the table's log.
* **Liveness.** Each process keeps a heartbeat key; an owner drops the attached
  connections of a process whose heartbeat is gone, so their seats get the
  usual grace period, and an origin re-routes connections whose table changed
  owner.
* **Signatures.** Every batch is signed with the cluster's shared secret, and a
  batch that is unsigned, forged, copied or old is refused before it is read
  (``cluster_auth.py``): writing to Redis is not enough to act as a player.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import orjson
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from sahrat.rules.errors import BadOption
from sahrat.server import metrics
from sahrat.server.cluster.auth import Refused, Signer
from sahrat.server.socket.dispatch import handle_text
from sahrat.server.table.connection import Connection
from sahrat.server.table.errors import TableError
from sahrat.server.table.table import Table


class Host(Protocol):
    """What the cluster needs from the process it links (``Hub`` provides it): the
    tables it serves, and the operations other processes forward to it."""

    tables: dict[int, Table]

    def drop(self, table_id: int, reason: str) -> None: ...
    async def take_over(self, table_id: int) -> Table | None: ...
    async def live_table_ids(self) -> list[int]: ...
    def spectator_refusal(self, table: Table, user_id: int) -> tuple[int, str] | None: ...
    def remember_name(self, user_id: int, name: str) -> None: ...
    def apply_rename(self, user_id: int, name: str) -> None: ...
    async def refresh_names(self) -> None: ...
    def background(self, task: asyncio.Task[None]) -> None: ...
    async def run_op(self, table: Table, op: str, args: dict[str, Any]) -> Any: ...
    async def apply_suspended(self, user_id: int, suspended: bool) -> None: ...
    def apply_defaults(self, values: dict[str, int]) -> None: ...
    def close_sockets(self, digest: str) -> None: ...


log = logging.getLogger("sahrat.cluster")

MOVED = 4503  # close code: the table is served elsewhere now; reconnect (with since)
RPC_SECONDS = 5.0
REFUSAL_LOG_SECONDS = 10.0  # one warning per reason this often: a flood fills no disk

_RENEW = """
local out = {}
for i, key in ipairs(KEYS) do
  if redis.call('get', key) == ARGV[1] then
    redis.call('pexpire', key, ARGV[2])
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
"""

_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0
"""


def new_node_id() -> str:
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"


_KINDS = frozenset(
    (
        "out",
        "close",
        "attach",
        "detach",
        "cmd",
        "call",
        "result",
        "suspend",
        "defaults",
        "revoked",
        "rename",
    )
)


class Moved(Exception):
    """The process asked no longer serves the table; look its owner up again."""


class RemoteConnection(Connection):
    """On the owner: a connection held by another process, reached through Redis."""

    def __init__(self, cluster: Cluster, origin: str, cid: str, user_id: int):
        super().__init__(user_id=user_id)
        self.cluster = cluster
        self.origin = origin
        self.cid = cid

    def send_text(self, text: str) -> None:
        if not self.closed:
            self.cluster.send(self.origin, {"k": "out", "c": self.cid, "x": text})

    def close(self, code: int = 1000, reason: str = "") -> None:
        if not self.closed:
            self.closed = True
            self.cluster.send(self.origin, {"k": "close", "c": self.cid, "code": code, "r": reason})


@dataclass(eq=False)
class Link:
    """On the origin: a local WebSocket whose table another process owns."""

    cid: str
    table_id: int
    owner: str
    conn: Connection
    user_id: int
    last_seq: int | None = None

    def deliver(self, text: str) -> None:
        """Pass an owner's message on, unless it shows that updates were missed."""
        head = orjson.loads(text)
        kind, seq = head.get("type"), head.get("seq")
        if isinstance(seq, int):
            if kind == "update" and self.last_seq is not None:
                if seq <= self.last_seq:
                    return  # already delivered
                if seq != self.last_seq + 1:
                    metrics.GAPS.inc()
                    self.conn.close(MOVED, "updates were missed; reconnect to catch up")
                    return
            if kind in ("update", "snapshot", "resume"):
                self.last_seq = seq
        self.conn.send_text(text)


class Cluster:
    """This process's part of the cluster: its leases, links and message bus."""

    def __init__(
        self, hub: Host, url: str, prefix: str, lease_seconds: float, secret: bytes
    ) -> None:
        self.hub = hub
        self.node = new_node_id()
        self.signer = Signer(secret, self.node)
        self._refusals: dict[str, tuple[float, int]] = {}  # reason -> last warning, since
        self.redis: aioredis.Redis = aioredis.from_url(url)
        self.prefix = prefix
        self.lease_seconds = lease_seconds
        self.lease_ms = max(1, int(lease_seconds * 1000))
        self.tick = lease_seconds / 3
        self.held: dict[int, float] = {}  # table -> monotonic time our lease runs until
        self.links: dict[str, Link] = {}  # origin side, by connection id
        self.attached: dict[tuple[str, str], tuple[int, RemoteConnection]] = {}  # owner side
        self.taking = True
        self._outgoing: dict[str, list[dict[str, Any]]] = {}
        self._wake = asyncio.Event()
        self._calls: dict[str, asyncio.Future[Any]] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._renew = self.redis.register_script(_RENEW)
        self._release = self.redis.register_script(_RELEASE)
        self._subscribed = asyncio.Event()
        self._publishing = asyncio.Lock()  # batches leave in the order they are signed

    # --- keys ----------------------------------------------------------------------

    def _lease_key(self, table_id: int) -> str:
        return f"{self.prefix}:lease:{table_id}"

    def _node_key(self, node: str) -> str:
        return f"{self.prefix}:node:{node}"

    def _channel(self, node: str) -> str:
        return f"{self.prefix}:to:{node}"

    @property
    def _everyone(self) -> str:
        return f"{self.prefix}:all"

    # --- life -------------------------------------------------------------------------

    async def start(self) -> None:
        await self.redis.set(self._node_key(self.node), "1", px=self.lease_ms)
        for name, loop in (
            ("cluster-listen", self._listen),
            ("cluster-flush", self._flush),
            ("cluster-renew", self._renew_loop),
            ("cluster-scan", self._scan_loop),
        ):
            self._tasks.append(asyncio.create_task(loop(), name=name))
        await asyncio.wait_for(self._subscribed.wait(), timeout=10)
        log.info("node %s joined the cluster", self.node)

    async def stop(self) -> None:
        """Leave: release what is still held, tell the others, stop the loops."""
        self.taking = False
        for table_id in list(self.held):
            await self.release(table_id)
        for link in list(self.links.values()):
            link.conn.close(MOVED, "this server is shutting down; reconnect")
        await self._drain()
        with contextlib.suppress(RedisError):
            await self.redis.delete(self._node_key(self.node))
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.redis.aclose()

    # --- leases ------------------------------------------------------------------------

    def holds(self, table_id: int) -> bool:
        return self.held.get(table_id, 0.0) > time.monotonic()

    async def acquire(self, table_id: int) -> bool:
        if not self.taking:
            return False
        started = time.monotonic()
        if await self.redis.set(self._lease_key(table_id), self.node, nx=True, px=self.lease_ms):
            self.held[table_id] = started + self.lease_seconds * 0.9
            metrics.LEASE_CHANGES.labels("acquired").inc()
            return True
        return False

    async def release(self, table_id: int) -> None:
        if self.held.pop(table_id, None) is None:
            return
        with contextlib.suppress(RedisError):
            await self._release(keys=[self._lease_key(table_id)], args=[self.node])
        metrics.LEASE_CHANGES.labels("released").inc()

    async def owner(self, table_id: int) -> str | None:
        return _text(await self.redis.get(self._lease_key(table_id)))

    async def _renew_loop(self) -> None:
        while True:
            await asyncio.sleep(self.tick)
            try:
                await self._renew_once()
            except RedisError as error:
                log.warning("cannot reach Redis to renew leases: %s", error)
            except Exception:
                log.exception("lease renewal failed")
            self.signer.forget_quiet()
            # A lease not renewed in time is lost whatever Redis says later.
            now = time.monotonic()
            for table_id, until in list(self.held.items()):
                if until <= now:
                    self._lost(table_id)

    async def _renew_once(self) -> None:
        started = time.monotonic()
        await self.redis.set(self._node_key(self.node), "1", px=self.lease_ms)
        tables = list(self.held)
        if tables:
            keys = [self._lease_key(t) for t in tables]
            results = await self._renew(keys=keys, args=[self.node, self.lease_ms])
            for table_id, renewed in zip(tables, results, strict=True):
                if renewed:
                    if table_id in self.held:
                        self.held[table_id] = started + self.lease_seconds * 0.9
                else:
                    self._lost(table_id)
        await self._check_origins()
        await self._check_owners()

    def _lost(self, table_id: int) -> None:
        if self.held.pop(table_id, None) is not None:
            metrics.LEASE_CHANGES.labels("lost").inc()
            log.warning("lost the lease of table %s", table_id, extra={"table_id": table_id})
        self.hub.drop(table_id, "this table moved to another server; reconnect")

    async def _check_origins(self) -> None:
        """Drop attached connections of processes that are gone."""
        origins = {origin for origin, _ in self.attached}
        for origin in origins:
            if not await self.redis.exists(self._node_key(origin)):
                log.warning("node %s is gone; dropping its connections", origin)
                for key in [k for k in self.attached if k[0] == origin]:
                    self._detach(*key)

    async def _check_owners(self) -> None:
        """Re-route links whose table has a new owner (or none: take it over)."""
        by_table: dict[int, list[Link]] = {}
        for link in self.links.values():
            by_table.setdefault(link.table_id, []).append(link)
        if not by_table:
            return
        tables = list(by_table)
        owners = await self.redis.mget([self._lease_key(t) for t in tables])
        for table_id, value in zip(tables, owners, strict=True):
            owner = _text(value)
            links = by_table[table_id]
            if owner is not None and owner == links[0].owner:
                continue
            if owner is None:
                await self.hub.take_over(table_id)
            for link in links:
                link.conn.close(MOVED, "this table moved to another server; reconnect")

    async def _scan_loop(self) -> None:
        """Take over live tables nobody holds (their process died)."""
        while True:
            await asyncio.sleep(self.tick)
            if not self.taking:
                continue
            try:
                live = [t for t in await self.hub.live_table_ids() if t not in self.held]
                if not live:
                    continue
                owners = await self.redis.mget([self._lease_key(t) for t in live])
                for table_id, owner in zip(live, owners, strict=True):
                    if owner is None:
                        await self.hub.take_over(table_id)
            except RedisError as error:
                log.warning("cannot reach Redis to look for orphan tables: %s", error)
            except Exception:
                log.exception("the orphan-table scan failed")

    # --- the message bus ------------------------------------------------------------

    def send(self, node: str, envelope: dict[str, Any]) -> None:
        """Queue a message for ``node``; all queued messages go out in one round trip."""
        self._outgoing.setdefault(node, []).append(envelope)
        self._wake.set()

    def broadcast(self, envelope: dict[str, Any]) -> None:
        self.send("*", envelope)

    async def _flush(self) -> None:
        while True:
            await self._wake.wait()
            await self._drain()

    async def _drain(self) -> None:
        """Publish what is queued: one signed batch per channel, in one round trip.
        One drain at a time, so that every receiver sees a sender's sequence numbers
        grow (a smaller one is refused as a replay)."""
        async with self._publishing:
            self._wake.clear()
            if not self._outgoing:
                return
            outgoing, self._outgoing = self._outgoing, {}
            try:
                async with self.redis.pipeline(transaction=False) as pipe:
                    for node, envelopes in outgoing.items():
                        channel = self._everyone if node == "*" else self._channel(node)
                        pipe.publish(channel, self.signer.seal(channel, envelopes))
                    await pipe.execute()
            except RedisError as error:
                log.warning("could not publish %d batches: %s", len(outgoing), error)

    async def _listen(self) -> None:
        while True:
            pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(self._channel(self.node), self._everyone)
                self._subscribed.set()
                while True:
                    message = await pubsub.get_message(timeout=1.0)
                    if message is not None:
                        self._receive(_text(message["channel"]) or "", message["data"])
            except asyncio.CancelledError:
                raise
            except Exception as error:
                log.warning("lost the Redis subscription (%s); resubscribing", error)
                # Messages may have been lost: every forwarded connection starts again.
                for link in list(self.links.values()):
                    link.conn.close(MOVED, "the server lost touch with the table; reconnect")
                for key in list(self.attached):
                    self._detach(*key)
                # ...and a rename announced meanwhile: the names are read again.
                self.hub.background(asyncio.create_task(self.hub.refresh_names()))
                await asyncio.sleep(0.5)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()  # type: ignore[no-untyped-call]

    def _receive(self, channel: str, data: bytes) -> None:
        """Act on one batch read from Redis, if a process of this cluster signed it."""
        try:
            sender, envelopes = self.signer.open(channel, data)
        except Refused as refused:
            self._refused(channel, refused)
            return
        if sender == self.node and channel == self._everyone:
            return  # a broadcast of ours, already applied here
        for envelope in envelopes:
            self._dispatch(envelope)

    def _refused(self, channel: str, refused: Refused) -> None:
        """Count a refused batch, and say so in the log (at most once every
        ``REFUSAL_LOG_SECONDS`` per reason, with how many went unsaid meanwhile)."""
        metrics.CLUSTER_REFUSED.labels(refused.reason).inc()
        now = time.monotonic()
        last, unsaid = self._refusals.get(refused.reason, (-REFUSAL_LOG_SECONDS, 0))
        if now - last < REFUSAL_LOG_SECONDS:
            self._refusals[refused.reason] = (last, unsaid + 1)
            return
        self._refusals[refused.reason] = (now, 0)
        log.warning(
            "refused a message from Redis (%s) on %s: %s%s; is someone else writing to "
            "Redis, or does a process have another SAHRAT_CLUSTER_SECRET?",
            refused.reason,
            channel,
            refused.detail,
            f" (and {unsaid} more since the last warning)" if unsaid else "",
        )

    def _dispatch(self, envelope: dict[str, Any]) -> None:
        kind = envelope.get("k")
        if kind not in _KINDS:
            log.warning("unknown cluster message %r", kind)
            return
        try:
            getattr(self, f"_on_{kind}")(envelope)
        except Exception:
            log.exception("cluster message %r failed", kind)

    # --- origin side: links ----------------------------------------------------------

    def attach(
        self, table_id: int, owner: str, conn: Connection, name: str, since: int | None
    ) -> Link:
        link = Link(secrets.token_hex(8), table_id, owner, conn, conn.user_id)
        self.links[link.cid] = link
        self.send(
            owner,
            {
                "k": "attach",
                "c": link.cid,
                "o": self.node,
                "t": table_id,
                "u": conn.user_id,
                "n": name,
                "s": since,
            },
        )
        return link

    def forward(self, link: Link, text: str) -> None:
        self.send(link.owner, {"k": "cmd", "c": link.cid, "o": self.node, "x": text})

    def unlink(self, link: Link) -> None:
        if self.links.pop(link.cid, None) is not None:
            self.send(link.owner, {"k": "detach", "c": link.cid, "o": self.node})

    def _on_out(self, envelope: dict[str, Any]) -> None:
        link = self.links.get(envelope["c"])
        if link is not None:
            link.deliver(envelope["x"])

    def _on_close(self, envelope: dict[str, Any]) -> None:
        link = self.links.get(envelope["c"])
        if link is not None:
            link.conn.close(int(envelope.get("code", 1000)), str(envelope.get("r", "")))

    # --- owner side: attached connections ------------------------------------------

    def _on_attach(self, envelope: dict[str, Any]) -> None:
        origin, cid, table_id = envelope["o"], envelope["c"], int(envelope["t"])
        table = self.hub.tables.get(table_id)
        if table is None or not self.holds(table_id):
            self.send(origin, {"k": "close", "c": cid, "code": MOVED, "r": "table moved"})
            return
        user_id = int(envelope["u"])
        refusal = self.hub.spectator_refusal(table, user_id)  # the owner counts them all
        if refusal is not None:
            self.send(origin, {"k": "close", "c": cid, "code": refusal[0], "r": refusal[1]})
            return
        self.hub.remember_name(user_id, str(envelope.get("n", "")))
        conn = RemoteConnection(self, origin, cid, user_id)  # seated by table.connect
        self.attached[(origin, cid)] = (table_id, conn)
        since = envelope.get("s")
        table.connect(conn, since if isinstance(since, int) else None)

    def _detach(self, origin: str, cid: str) -> None:
        found = self.attached.pop((origin, cid), None)
        if found is None:
            return
        table_id, conn = found
        conn.closed = True  # the origin already knows
        table = self.hub.tables.get(table_id)
        if table is not None:
            table.disconnect(conn)

    def _on_detach(self, envelope: dict[str, Any]) -> None:
        self._detach(envelope["o"], envelope["c"])

    def _on_cmd(self, envelope: dict[str, Any]) -> None:
        origin, cid = envelope["o"], envelope["c"]
        found = self.attached.get((origin, cid))
        table = self.hub.tables.get(found[0]) if found is not None else None
        if found is None or table is None:
            self.send(origin, {"k": "close", "c": cid, "code": MOVED, "r": "table moved"})
            return
        self.hub.background(asyncio.create_task(handle_text(table, found[1], envelope["x"])))

    # --- calls ---------------------------------------------------------------------------

    async def call(self, node: str, op: str, table_id: int, args: dict[str, Any]) -> Any:
        """Run a table operation on the process that owns the table."""
        call_id = secrets.token_hex(8)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._calls[call_id] = future
        self.send(
            node, {"k": "call", "id": call_id, "o": self.node, "op": op, "t": table_id, "a": args}
        )
        try:
            return await asyncio.wait_for(future, RPC_SECONDS)
        except TimeoutError:
            raise TableError(
                "unavailable", "the table's server did not answer in time; try again"
            ) from None
        finally:
            self._calls.pop(call_id, None)

    def _on_call(self, envelope: dict[str, Any]) -> None:
        self.hub.background(asyncio.create_task(self._answer(envelope)))

    async def _answer(self, envelope: dict[str, Any]) -> None:
        origin, call_id, table_id = envelope["o"], envelope["id"], int(envelope["t"])
        reply: dict[str, Any] = {"k": "result", "id": call_id}
        table = self.hub.tables.get(table_id)
        if table is None or not self.holds(table_id):
            reply["moved"] = True
        else:
            try:
                reply["v"] = await self.hub.run_op(table, envelope["op"], envelope["a"])
            except TableError as error:
                reply["e"] = {"code": error.code, "message": error.message}
            except BadOption as error:
                reply["e"] = {"option": error.option, "reason": error.reason}
            except Exception as error:
                log.exception("call %s on table %s failed", envelope["op"], table_id)
                reply["e"] = {"code": "server_error", "message": str(error)}
        self.send(origin, reply)

    def _on_result(self, envelope: dict[str, Any]) -> None:
        future = self._calls.get(envelope["id"])
        if future is None or future.done():
            return
        if envelope.get("moved"):
            future.set_exception(Moved())
        elif "e" in envelope:
            error = envelope["e"]
            if "option" in error:
                future.set_exception(BadOption(error["option"], error["reason"]))
            else:
                future.set_exception(TableError(error["code"], error["message"]))
        else:
            future.set_result(envelope.get("v"))

    # --- settings shared by every process ----------------------------------------------

    def _on_suspend(self, envelope: dict[str, Any]) -> None:
        self.hub.background(
            asyncio.create_task(self.hub.apply_suspended(int(envelope["u"]), bool(envelope["v"])))
        )

    def _on_defaults(self, envelope: dict[str, Any]) -> None:
        self.hub.apply_defaults(envelope["v"])

    def _on_revoked(self, envelope: dict[str, Any]) -> None:
        self.hub.close_sockets(str(envelope["d"]))

    def _on_rename(self, envelope: dict[str, Any]) -> None:
        self.hub.apply_rename(int(envelope["u"]), str(envelope["n"]))


async def retrying(attempts: int, run: Callable[[], Awaitable[Any]]) -> Any:
    """Run ``run`` again when the table moved between looking its owner up and asking."""
    for attempt in range(attempts):
        try:
            return await run()
        except Moved:
            if attempt == attempts - 1:
                break
            await asyncio.sleep(0.05)
    raise TableError("unavailable", "the table is moving between servers; try again")


def _text(value: bytes | str | None) -> str | None:
    return value.decode() if isinstance(value, bytes) else value
