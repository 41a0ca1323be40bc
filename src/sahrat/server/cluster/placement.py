"""Where a table is served: the interface the hub asks, and its single-process answer.

The hub never asks whether it runs alone. It holds a :class:`Placement` and asks it
where a table lives, whether it may write for one, and to tell the other processes of
a change; :class:`Solo`, the placement of a process that runs alone, answers so that
the single-process path falls out: every live table is here, every lease is held,
there is nobody to tell and no call ever leaves. ``cluster.py`` is the placement of
several processes over Redis (leases, take-over, forwarding).

The choice between them is made once, by the composition root (``app.py``, through
``cluster.placement_for``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

import orjson

from sahrat.server import metrics
from sahrat.server.table.connection import Connection
from sahrat.server.table.errors import TableError
from sahrat.server.table.table import Table
from sahrat.store.tables import invite_matches

log = logging.getLogger("sahrat.hub")  # the hub's loading, as it was always logged

MOVED = 4503  # close code: the table is served elsewhere now; reconnect (with since)

# What a forwarded socket's text is handed to on the table's process: the socket
# edge's dispatcher (``socket/dispatch.py``), passed in by the composition root, as
# the placement is below the socket edge.
TextHandler = Callable[[Table, Connection, str], Coroutine[Any, Any, None]]


class Moved(Exception):
    """The process asked no longer serves the table; look its owner up again."""


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


def no_such_table(table_id: int) -> TableError:
    return TableError("no_such_table", f"there is no open table {table_id}")


@dataclass(frozen=True)
class TableQuery:
    """Which live tables a listing shows (``Hub.list_tables``): public ones only unless
    ``private``; of one ``game`` and in the ``statuses`` given; for the ``lobby`` only
    those others can join or watch a person play (``Table.in_lobby``); at most ``limit``
    of them, oldest first, from the first with an id above ``after``; each as
    ``viewer`` sees it."""

    viewer: int | None
    private: bool
    statuses: tuple[str, ...]
    game: str | None = None
    after: int = 0
    limit: int | None = None
    lobby: bool = False

    def shows(self, table: Table) -> bool:
        return (
            table.id > self.after
            and table.status in self.statuses
            and (self.private or not table.private)
            and (self.game is None or table.game == self.game)
            and (not self.lobby or table.in_lobby)
        )


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


class Host(Protocol):
    """What every placement needs from the process it places tables for (``Hub``):
    the tables it serves, and how to rebuild live ones from the database."""

    tables: dict[int, Table]

    async def live_table_ids(self) -> list[int]: ...
    async def load_tables(self, table_ids: Iterable[int]) -> dict[int, Table]: ...


class Placement(Protocol):
    """Where each table is served, and what the processes tell each other."""

    async def start(self) -> None:
        """Begin serving: take (and load) the tables this process is to serve."""

    def stop_taking(self) -> None:
        """Take no more tables (the process is shutting down)."""

    async def stop(self) -> None:
        """Leave: give up what is still held and stop."""

    def holds(self, table_id: int) -> bool:
        """Whether this process may write for the table (it holds its lease)."""

    async def acquire(self, table_id: int) -> bool:
        """Take a new table's lease (False: another process took it first)."""

    async def release(self, table_id: int) -> None:
        """Give a table up (it closed, finished or moved)."""

    def release_soon(self, table_id: int) -> None:
        """Give a table up, from code that cannot wait."""

    async def locate(self, table_id: int) -> Table | str:
        """The live table if it is served here, else the process that serves it;
        raises ``TableError`` (``no_such_table``) if it is not live."""

    async def call(self, node: str, op: str, table_id: int, args: dict[str, Any]) -> Any:
        """Run a table operation on the process ``node`` (raises ``Moved``)."""

    def broadcast(self, envelope: dict[str, Any]) -> None:
        """Tell every other process of a change this one already applied."""

    def attach(
        self, table_id: int, owner: str, conn: Connection, name: str, since: int | None
    ) -> Link:
        """Forward a local socket to the table's owner."""

    def forward(self, link: Link, text: str) -> None:
        """Pass a forwarded socket's text on to the table's owner."""

    def unlink(self, link: Link) -> None:
        """Stop forwarding a socket (it closed)."""

    async def list_tables(self, query: TableQuery) -> list[dict[str, Any]]:
        """The live tables ``query`` shows, wherever they are served."""

    async def by_invite(self, code: str) -> int | None:
        """The id of the live table with this invite code, wherever it is served."""


class Solo:
    """The placement of a process that runs alone: every live table is here, loaded at
    start-up from its event log; every lease is held; there is nobody to tell, and a
    call never leaves the process."""

    def __init__(self, host: Host) -> None:
        self.host = host

    async def start(self) -> None:
        loaded = await self.host.load_tables(await self.host.live_table_ids())
        log.info("loaded %d unfinished tables", len(loaded))

    def stop_taking(self) -> None:
        pass

    async def stop(self) -> None:
        pass

    def holds(self, table_id: int) -> bool:
        return True

    async def acquire(self, table_id: int) -> bool:
        return True

    async def release(self, table_id: int) -> None:
        pass

    def release_soon(self, table_id: int) -> None:
        pass

    async def locate(self, table_id: int) -> Table | str:
        table = self.host.tables.get(table_id)
        if table is None:
            raise no_such_table(table_id)
        return table

    async def call(self, node: str, op: str, table_id: int, args: dict[str, Any]) -> Any:
        raise LookupError(f"no process {node}: every table is served here")

    def broadcast(self, envelope: dict[str, Any]) -> None:
        pass  # nobody else to tell: the change is applied here already

    def attach(
        self, table_id: int, owner: str, conn: Connection, name: str, since: int | None
    ) -> Link:
        raise LookupError(f"no process {owner}: every table is served here")

    def forward(self, link: Link, text: str) -> None:
        raise LookupError(f"no process {link.owner}: every table is served here")

    def unlink(self, link: Link) -> None:
        pass

    async def list_tables(self, query: TableQuery) -> list[dict[str, Any]]:
        found = sorted((t for t in self.host.tables.values() if query.shows(t)), key=_table_id)
        return [table.info(query.viewer) for table in found[: query.limit]]

    async def by_invite(self, code: str) -> int | None:
        for table in self.host.tables.values():
            if invite_matches(table.invite_code, code):
                return table.id
        return None


def _table_id(table: Table) -> int:
    return table.id
