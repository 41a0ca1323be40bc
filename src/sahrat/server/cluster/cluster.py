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
  (``auth.py``): writing to Redis is not enough to act as a player.

The :class:`Cluster` is the hub's ``Placement`` (``placement.py``) when
``SAHRAT_REDIS_URL`` is set; its messages travel on the bus of ``bus.py``, and its
forwarded sockets are ``forwarding.py``'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
import time
from collections.abc import Callable
from typing import Any, Protocol

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from sahrat.server import metrics
from sahrat.server.cluster import catalog
from sahrat.server.cluster.bus import Bus, text_of
from sahrat.server.cluster.catalog import CatalogHost
from sahrat.server.cluster.forwarding import Forwarding, ForwardingHost
from sahrat.server.cluster.placement import (
    MOVED,
    Link,
    Moved,
    Placement,
    Solo,
    TableQuery,
    TextHandler,
    no_such_table,
)
from sahrat.server.table.connection import Connection
from sahrat.server.table.errors import TableError
from sahrat.server.table.table import Table
from sahrat.settings import Settings


class ClusterHost(ForwardingHost, CatalogHost, Protocol):
    """What the cluster needs from the process it links (``Hub`` provides it): besides
    the tables, the operations and changes other processes forward to it."""

    def drop(self, table_id: int, reason: str) -> None: ...
    def apply_rename(self, user_id: int, name: str) -> None: ...
    async def refresh_names(self) -> None: ...
    async def run_op(self, table: Table, op: str, args: dict[str, Any]) -> Any: ...
    async def apply_suspended(self, user_id: int, suspended: bool) -> None: ...
    def apply_defaults(self, values: dict[str, int]) -> None: ...
    def apply_block(self, blocker: int, blocked: int, on: bool) -> None: ...


log = logging.getLogger("sahrat.cluster")
hub_log = logging.getLogger("sahrat.hub")  # taking a table over, as it was always logged

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


def placement_for(settings: Settings, on_text: TextHandler) -> Callable[[ClusterHost], Placement]:
    """The placement the settings ask for, to be built around its host: ``Solo`` alone;
    with ``SAHRAT_REDIS_URL`` a ``Cluster`` (``on_text`` runs a forwarded socket's text
    at its table)."""
    url = settings.redis_url
    if not url:
        return Solo
    secret = settings.cluster_secret  # required with redis_url (settings.py)
    assert secret is not None

    def cluster(host: ClusterHost) -> Placement:
        key = secret.get_secret_value().encode()
        return Cluster(host, url, settings.cluster_prefix, settings.lease_seconds, key, on_text)

    return cluster


class Cluster:
    """This process's part of the cluster, the hub's placement when several processes
    serve the tables: its leases, its forwarded sockets and its message bus."""

    def __init__(
        self,
        host: ClusterHost,
        url: str,
        prefix: str,
        lease_seconds: float,
        secret: bytes,
        on_text: TextHandler,
    ) -> None:
        self.host = host
        self.node = new_node_id()
        self.redis: aioredis.Redis = aioredis.from_url(url)
        self.prefix = prefix
        self.lease_seconds = lease_seconds
        self.lease_ms = max(1, int(lease_seconds * 1000))
        self.tick = lease_seconds / 3
        self.held: dict[int, float] = {}  # table -> monotonic time our lease runs until
        self.taking = True
        self._loading: dict[int, asyncio.Future[Table | None]] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._renew = self.redis.register_script(_RENEW)
        self._release = self.redis.register_script(_RELEASE)
        self.bus = Bus(
            self.redis, prefix, self.node, secret, self._answer, host.background, self._lost_touch
        )
        self.forwarding = Forwarding(host, self.bus, self.holds, on_text)
        self.bus.handle(self.forwarding.handlers)
        self.bus.handle(
            {
                "suspend": self._on_suspend,
                "defaults": self._on_defaults,
                "revoked": self._on_revoked,
                "rename": self._on_rename,
                "block": self._on_block,
            }
        )

    def _lease_key(self, table_id: int) -> str:
        return f"{self.prefix}:lease:{table_id}"

    def _node_key(self, node: str) -> str:
        return f"{self.prefix}:node:{node}"

    # --- life -------------------------------------------------------------------------

    async def start(self) -> None:
        await self.redis.set(self._node_key(self.node), "1", px=self.lease_ms)
        for name, loop in (("cluster-renew", self._renew_loop), ("cluster-scan", self._scan_loop)):
            self._tasks.append(asyncio.create_task(loop(), name=name))
        await self.bus.start()  # the scan takes the tables nobody serves
        log.info("node %s joined the cluster", self.node)

    def stop_taking(self) -> None:
        self.taking = False

    async def stop(self) -> None:
        """Leave: release what is still held, tell the others, stop the loops."""
        self.taking = False
        for table_id in list(self.held):
            await self.release(table_id)
        self.forwarding.close_links("this server is shutting down; reconnect")
        await self.bus.drain()
        with contextlib.suppress(RedisError):
            await self.redis.delete(self._node_key(self.node))
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.bus.stop()
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

    def release_soon(self, table_id: int) -> None:
        if table_id in self.held:
            self.host.background(asyncio.create_task(self.release(table_id)))

    async def owner(self, table_id: int) -> str | None:
        return text_of(await self.redis.get(self._lease_key(table_id)))

    async def _renew_loop(self) -> None:
        while True:
            await asyncio.sleep(self.tick)
            try:
                await self._renew_once()
            except RedisError as error:
                log.warning("cannot reach Redis to renew leases: %s", error)
            except Exception:
                log.exception("lease renewal failed")
            self.bus.signer.forget_quiet()
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
        self.host.drop(table_id, "this table moved to another server; reconnect")

    async def _check_origins(self) -> None:
        """Drop attached connections of processes that are gone."""
        origins = {origin for origin, _ in self.forwarding.attached}
        for origin in origins:
            if not await self.redis.exists(self._node_key(origin)):
                log.warning("node %s is gone; dropping its connections", origin)
                self.forwarding.detach_all(origin)

    async def _check_owners(self) -> None:
        """Re-route links whose table has a new owner (or none: take it over)."""
        by_table: dict[int, list[Link]] = {}
        for link in self.forwarding.links.values():
            by_table.setdefault(link.table_id, []).append(link)
        if not by_table:
            return
        tables = list(by_table)
        owners = await self.redis.mget([self._lease_key(t) for t in tables])
        for table_id, value in zip(tables, owners, strict=True):
            owner = text_of(value)
            links = by_table[table_id]
            if owner is not None and owner == links[0].owner:
                continue
            if owner is None:
                await self.take_over(table_id)
            for link in links:
                link.conn.close(MOVED, "this table moved to another server; reconnect")

    async def _scan_loop(self) -> None:
        """Take over live tables nobody holds (their process died)."""
        while True:
            await asyncio.sleep(self.tick)
            if not self.taking:
                continue
            try:
                live = [t for t in await self.host.live_table_ids() if t not in self.held]
                if not live:
                    continue
                owners = await self.redis.mget([self._lease_key(t) for t in live])
                for table_id, owner in zip(live, owners, strict=True):
                    if owner is None:
                        await self.take_over(table_id)
            except RedisError as error:
                log.warning("cannot reach Redis to look for orphan tables: %s", error)
            except Exception:
                log.exception("the orphan-table scan failed")

    # --- where a table is -----------------------------------------------------------

    async def take_over(self, table_id: int) -> Table | None:
        """Take the lease of a table nobody serves and load it from its log."""
        if table_id in self.host.tables:
            return self.host.tables[table_id]
        pending = self._loading.get(table_id)
        if pending is not None:
            return await pending
        future: asyncio.Future[Table | None] = asyncio.get_running_loop().create_future()
        self._loading[table_id] = future
        try:
            table = None
            if await self.acquire(table_id):
                table = (await self.host.load_tables([table_id])).get(table_id)
                if table is None:
                    await self.release(table_id)
                else:
                    hub_log.info("took table %s over", table_id, extra={"table_id": table_id})
            future.set_result(table)
            return table
        except BaseException as error:
            future.set_exception(error)
            future.exception()  # retrieved: nobody else may be waiting
            if self.held.get(table_id) is not None:
                await self.release(table_id)
            raise
        finally:
            self._loading.pop(table_id, None)

    async def locate(self, table_id: int) -> Table | str:
        """The table if this process holds its lease, else the process that does
        (taking a table that nobody serves)."""
        table = self.host.tables.get(table_id)
        if table is not None and self.holds(table_id):
            return table
        try:
            for _ in range(3):
                owner = await self.owner(table_id)
                if owner is not None and owner != self.node:
                    return owner
                taken = await self.take_over(table_id)
                if taken is not None:
                    return taken
                if owner is None and await self.owner(table_id) is None:
                    raise no_such_table(table_id)  # not live: finished, closed or unknown
                await asyncio.sleep(0.05)
        except RedisError as error:
            hub_log.warning("cannot reach Redis to find table %s: %s", table_id, error)
        raise TableError("unavailable", "the table is moving between servers; try again")

    async def list_tables(self, query: TableQuery) -> list[dict[str, Any]]:
        return await catalog.list_tables(self.host, query)  # other processes' tables too

    async def by_invite(self, code: str) -> int | None:
        return await catalog.by_invite(self.host, code)

    # --- calls and news ---------------------------------------------------------------

    async def call(self, node: str, op: str, table_id: int, args: dict[str, Any]) -> Any:
        """Run a table operation on the process that owns the table."""
        return await self.bus.call(node, op, table_id, args)

    async def _answer(self, table_id: int, op: str, args: dict[str, Any]) -> Any:
        table = self.host.tables.get(table_id)
        if table is None or not self.holds(table_id):
            raise Moved()
        return await self.host.run_op(table, op, args)

    def broadcast(self, envelope: dict[str, Any]) -> None:
        self.bus.broadcast(envelope)

    def attach(
        self, table_id: int, owner: str, conn: Connection, name: str, since: int | None
    ) -> Link:
        return self.forwarding.attach(table_id, owner, conn, name, since)

    def forward(self, link: Link, text: str) -> None:
        self.forwarding.forward(link, text)

    def unlink(self, link: Link) -> None:
        self.forwarding.unlink(link)

    def _lost_touch(self) -> None:
        """The subscription was lost, and messages with it: every forwarded connection
        starts again, and the names are read again (a rename may have been missed)."""
        self.forwarding.close_links("the server lost touch with the table; reconnect")
        self.forwarding.detach_all()
        self.host.background(asyncio.create_task(self.host.refresh_names()))

    # --- settings shared by every process ----------------------------------------------

    def _on_suspend(self, envelope: dict[str, Any]) -> None:
        self.host.background(
            asyncio.create_task(self.host.apply_suspended(int(envelope["u"]), bool(envelope["v"])))
        )

    def _on_block(self, envelope: dict[str, Any]) -> None:
        self.host.apply_block(int(envelope["a"]), int(envelope["b"]), bool(envelope["v"]))

    def _on_defaults(self, envelope: dict[str, Any]) -> None:
        self.host.apply_defaults(envelope["v"])

    def _on_revoked(self, envelope: dict[str, Any]) -> None:
        self.host.sockets.close_token(str(envelope["d"]))

    def _on_rename(self, envelope: dict[str, Any]) -> None:
        self.host.apply_rename(int(envelope["u"]), str(envelope["n"]))
