"""Sockets forwarded between the processes of a cluster.

A player may be connected to any process. The process that holds the socket (the
*origin*) and does not serve its table *attaches* it to the table's owner: it keeps a
:class:`Link` and passes the client's text on. The owner treats the socket like one of
its own, as a :class:`RemoteConnection` (same greeting, same replies, same grace
period), and its messages travel back on the origin's channel. The origin checks that
the updates arrive with consecutive ``seq`` (``Link.deliver``).
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable
from typing import Any, Protocol

from sahrat.server.cluster.bus import Bus, Handler
from sahrat.server.cluster.placement import MOVED, Host, Link, TextHandler
from sahrat.server.sockets import OpenSockets
from sahrat.server.table.connection import Connection


class ForwardingHost(Host, Protocol):
    """What forwarding needs of the process (``Hub``): its tables, its socket counts
    (the owner counts every spectator, forwarded ones too), its names."""

    sockets: OpenSockets

    def remember_name(self, user_id: int, name: str) -> None: ...
    def background(self, task: asyncio.Task[None]) -> None: ...


class RemoteConnection(Connection):
    """On the owner: a connection held by another process, reached through Redis."""

    def __init__(self, bus: Bus, origin: str, cid: str, user_id: int):
        super().__init__(user_id=user_id)
        self.bus = bus
        self.origin = origin
        self.cid = cid

    def send_text(self, text: str) -> None:
        if not self.closed:
            self.bus.send(self.origin, {"k": "out", "c": self.cid, "x": text})

    def close(self, code: int = 1000, reason: str = "") -> None:
        if not self.closed:
            self.closed = True
            self.bus.send(self.origin, {"k": "close", "c": self.cid, "code": code, "r": reason})


class Forwarding:
    """This process's forwarded sockets: its links (as origin) and the connections
    other processes attached to its tables (as owner)."""

    def __init__(
        self,
        host: ForwardingHost,
        bus: Bus,
        serves: Callable[[int], bool],
        on_text: TextHandler,
    ) -> None:
        self.host = host
        self.bus = bus
        self.node = bus.node
        self.serves = serves  # whether this process holds the table's lease
        self.on_text = on_text
        self.links: dict[str, Link] = {}  # origin side, by connection id
        self.attached: dict[tuple[str, str], tuple[int, RemoteConnection]] = {}  # owner side

    @property
    def handlers(self) -> dict[str, Handler]:
        """The bus messages forwarding answers, by kind."""
        return {
            "out": self._on_out,
            "close": self._on_close,
            "attach": self._on_attach,
            "detach": self._on_detach,
            "cmd": self._on_cmd,
        }

    def close_links(self, reason: str) -> None:
        """Close every forwarded socket of this process (its client reconnects)."""
        for link in list(self.links.values()):
            link.conn.close(MOVED, reason)

    def detach_all(self, origin: str | None = None) -> None:
        """Drop the connections attached here (by ``origin``, or by every process)."""
        for key in [k for k in self.attached if origin is None or k[0] == origin]:
            self.detach(*key)

    # --- origin side: links ----------------------------------------------------------

    def attach(
        self, table_id: int, owner: str, conn: Connection, name: str, since: int | None
    ) -> Link:
        link = Link(secrets.token_hex(8), table_id, owner, conn, conn.user_id)
        self.links[link.cid] = link
        self.bus.send(
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
        self.bus.send(link.owner, {"k": "cmd", "c": link.cid, "o": self.node, "x": text})

    def unlink(self, link: Link) -> None:
        if self.links.pop(link.cid, None) is not None:
            self.bus.send(link.owner, {"k": "detach", "c": link.cid, "o": self.node})

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
        table = self.host.tables.get(table_id)
        if table is None or not self.serves(table_id):
            self.bus.send(origin, {"k": "close", "c": cid, "code": MOVED, "r": "table moved"})
            return
        user_id = int(envelope["u"])
        refusal = self.host.sockets.spectator_refusal(table, user_id)  # the owner counts all
        if refusal is not None:
            self.bus.send(origin, {"k": "close", "c": cid, "code": refusal[0], "r": refusal[1]})
            return
        self.host.remember_name(user_id, str(envelope.get("n", "")))
        conn = RemoteConnection(self.bus, origin, cid, user_id)  # seated by table.connect
        self.attached[(origin, cid)] = (table_id, conn)
        since = envelope.get("s")
        table.connect(conn, since if isinstance(since, int) else None)

    def detach(self, origin: str, cid: str) -> None:
        found = self.attached.pop((origin, cid), None)
        if found is None:
            return
        table_id, conn = found
        conn.closed = True  # the origin already knows
        table = self.host.tables.get(table_id)
        if table is not None:
            table.disconnect(conn)

    def _on_detach(self, envelope: dict[str, Any]) -> None:
        self.detach(envelope["o"], envelope["c"])

    def _on_cmd(self, envelope: dict[str, Any]) -> None:
        origin, cid = envelope["o"], envelope["c"]
        found = self.attached.get((origin, cid))
        table = self.host.tables.get(found[0]) if found is not None else None
        if found is None or table is None:
            self.bus.send(origin, {"k": "close", "c": cid, "code": MOVED, "r": "table moved"})
            return
        self.host.background(asyncio.create_task(self.on_text(table, found[1], envelope["x"])))
