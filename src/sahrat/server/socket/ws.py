"""The WebSocket endpoint: one per table, ``/ws/tables/{id}?ticket=...&since=N``.

The connection's seat is the user's seat at the table (a spectator has
none). A message is written at once when the socket can take it; otherwise it
waits in the connection's outbox for its sender task, so a slow client never
blocks the table (``table/connection.py``); every command gets exactly one
``reply``.

In a cluster, a connection to a table that another process serves is
forwarded to it (``cluster/forwarding.py``): this process only checks the
ticket and the message size and passes text both ways. Close code 4503 asks
the client to reconnect (with ``since``): the table moved, or updates were
missed.

The checks and the serving loop (:func:`serve`) know a socket only as a
:class:`SocketIO`: its query and headers, receive, send text, close. Two transports
serve it: uvicorn's, here (the route below), and, with ``SAHRAT_SOCKET_PORT``, the
socket port's (``picows_server.py``). Whichever it is, a client sees the same close
codes, reasons and answers.

A table socket's messages skip the framework's per-message layers: ``SocketChannels``,
the outermost middleware, hands the endpoint the server's own ASGI ``receive`` and
``send``, and text frames go through them directly (the framework's ``WebSocket`` still
accepts and closes the socket). A move's four messages (one in, three out) each skip
the framework's state checks and its exception-handling wrappers.

Access: a page from another origin may not open the socket (``Origin``
against ``SAHRAT_ALLOWED_ORIGINS``, 4403 — cross-site WebSocket hijacking);
the socket opens with a one-time ticket (issued by ``api/tickets.py``, redeemed
here through ``store/tickets.py``: a bearer token in the URL would be written to
access logs, so ``?token=`` is refused with 4401), and
closes (4401) when the token the ticket was issued for expires or is revoked;
messages beyond the rate limits are answered ``rate_limited``, and only
persistent abuse closes the socket (4429).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Protocol

from fastapi import APIRouter, WebSocket, WebSocketDisconnect
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocketState

from sahrat.server import metrics
from sahrat.server.edge import origin_allowed  # one rule for pages' sockets and their requests
from sahrat.server.errors import socket_close
from sahrat.server.hub import Hub
from sahrat.server.limits import ConnectionLimit
from sahrat.server.socket.decode import cid_of
from sahrat.server.socket.dispatch import handle_text, refuse
from sahrat.server.table.connection import Connection
from sahrat.server.table.errors import TableError
from sahrat.server.table.messages import error_message
from sahrat.server.table.table import Table
from sahrat.store.tables import MAX_TABLE_ID
from sahrat.store.tickets import redeem_ticket

log = logging.getLogger("sahrat.ws")
router = APIRouter()

CHANNELS = "sahrat.channels"  # the scope key of the server's own receive and send


class SocketIO(Protocol):
    """A table socket as :func:`serve` uses it, whichever server carries it."""

    @property
    def query(self) -> Mapping[str, str]: ...  # the URL's query (the last of a repeated name)
    @property
    def headers(self) -> Mapping[str, str]: ...  # the request's headers, any case

    async def accept(self) -> None: ...  # before any close: a close code needs an open socket
    async def receive(self) -> str | bytes | None: ...  # a message; None: the client left
    async def send_text(self, text: str) -> None: ...  # waits while the client reads slowly
    async def close(self, code: int, reason: str) -> None: ...


class SocketChannels:
    """Pure ASGI middleware, the outermost: a WebSocket's scope carries the server's own
    ``receive`` and ``send`` for the endpoint to use for its text frames."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            scope[CHANNELS] = (receive, send)
        await self.app(scope, receive, send)


class Channels:
    """uvicorn's socket as a :class:`SocketIO`: text frames through the server's own ASGI
    callables when ``SocketChannels`` gave them, else through the framework's
    ``WebSocket``, which also accepts and closes it."""

    def __init__(self, websocket: WebSocket) -> None:
        self.websocket = websocket
        self.query = websocket.query_params
        self.headers = websocket.headers
        own: tuple[Receive, Send] | None = websocket.scope.get(CHANNELS)
        self._receive: Receive = own[0] if own else websocket.receive
        self._send: Send = own[1] if own else websocket.send

    async def accept(self) -> None:
        await self.websocket.accept()

    async def receive(self) -> str | bytes | None:
        message = await self._receive()
        if message["type"] == "websocket.disconnect":  # as the framework keeps it
            self.websocket.client_state = WebSocketState.DISCONNECTED
            return None
        text: str | None = message.get("text")
        return text if text is not None else message.get("bytes") or b""

    async def send_text(self, text: str) -> None:
        await self._send({"type": "websocket.send", "text": text})

    async def close(self, code: int, reason: str) -> None:
        await self.websocket.close(code=code, reason=reason)


@router.websocket("/ws/tables/{table_id}")
async def table_socket(websocket: WebSocket, table_id: int) -> None:
    await serve(Channels(websocket), websocket.app.state.hub, table_id)


async def _refuse_socket(io: SocketIO, code: int, reason: str) -> None:
    await io.accept()  # closing before accept is an HTTP 403, not our close code
    await io.close(code, reason)


async def serve(io: SocketIO, hub: Hub, table_id: int) -> None:
    """One table socket, from its checks to its end, over any transport."""
    query = io.query
    ticket = query.get("ticket", "")
    since_text = query.get("since")
    origin = io.headers.get("origin")
    if not origin_allowed(origin, io.headers.get("host"), hub.settings.allowed_origins):
        await _refuse_socket(io, 4403, f"pages from {origin} may not play here")
        return
    if not 1 <= table_id <= MAX_TABLE_ID:  # as REST's TableId: never a database error
        await _refuse_socket(io, 4404, f"there is no table {table_id}")
        return
    if "token" in query:  # a long-lived secret in a URL: never
        await _refuse_socket(
            io,
            4401,
            "tokens are not taken in URLs: POST /api/tables/{id}/ticket with the "
            "token, then connect with ?ticket=",
        )
        return
    async with hub.sessions() as session:
        found = await redeem_ticket(session, ticket, table_id) if ticket else None
    if found is None:
        await _refuse_socket(
            io, 4401, "unknown, used or expired ticket (POST /api/tables/{id}/ticket)"
        )
        return
    user, expires, digest = found  # digest: of the token behind the ticket
    try:
        where = await hub.locate(table_id)
        if not await _may_see(hub, where, table_id, user.id, query.get("invite")):
            raise TableError("no_such_table", f"there is no open table {table_id}")
    except TableError as error:
        await _refuse_socket(io, socket_close(error.code), error.message)
        return
    since = (
        int(since_text)
        if since_text and since_text.isascii() and since_text.isdigit() and len(since_text) < 19
        else None
    )
    await io.accept()
    here = where if isinstance(where, Table) else None  # elsewhere: its owner counts spectators
    refusal = hub.sockets.refusal(user.id, here)  # checked and counted with no await between
    if refusal is not None:
        await io.close(refusal[0], refusal[1])
        return
    hub.sockets.opened(user.id)
    hub.remember_name(user.id, user.name)
    metrics.CONNECTIONS.inc()
    conn = Connection(user_id=user.id)  # its seat is the table's to give (Table.connect)
    hub.sockets.track(digest, conn)
    expiry = asyncio.get_running_loop().call_later(
        max(0.0, expires.timestamp() - time.time()), conn.close, 4401, "the token expired"
    )
    try:
        if isinstance(where, Table):
            await _serve_local(io, hub, where, conn, since)
        else:
            await _serve_forwarded(io, hub, table_id, where, conn, user.name, since)
    finally:
        expiry.cancel()
        hub.sockets.untrack(digest, conn)
        metrics.CONNECTIONS.dec()
        hub.sockets.closed(user.id)


async def _may_see(
    hub: Hub, where: Table | str, table_id: int, user_id: int, invite: str | None
) -> bool:
    """Whether the user may watch the table (a private one: docs/protocol.md); a table
    served by another process is judged from the database."""
    if isinstance(where, Table):
        return await hub.may_watch(where, user_id, invite)
    return await hub.admits_stored(table_id, user_id, invite)


async def _serve_local(
    io: SocketIO, hub: Hub, table: Table, conn: Connection, since: int | None
) -> None:
    sender = asyncio.create_task(_send_loop(io, conn))
    conn.direct = io.send_text
    table.connect(conn, since)
    try:
        async for text in _texts(io, conn, hub, lambda: table.seq):
            await handle_text(table, conn, text)
    finally:
        table.disconnect(conn)
        await asyncio.gather(sender, return_exceptions=True)


async def _serve_forwarded(
    io: SocketIO,
    hub: Hub,
    table_id: int,
    owner: str,
    conn: Connection,
    name: str,
    since: int | None,
) -> None:
    sender = asyncio.create_task(_send_loop(io, conn))
    link = hub.placement.attach(table_id, owner, conn, name, since)
    try:
        async for text in _texts(io, conn, hub, lambda: link.last_seq or 0):
            hub.placement.forward(link, text)
    finally:
        hub.placement.unlink(link)
        conn.close()
        await asyncio.gather(sender, return_exceptions=True)


async def _texts(
    io: SocketIO, conn: Connection, hub: Hub, current: Callable[[], int]
) -> AsyncIterator[str]:
    """The client's text messages; binary, oversized and too frequent ones are
    answered here (``current`` gives the table's seq as this process knows it)."""
    limit = hub.settings.max_message_bytes
    rate = hub.limits.connection(conn.user_id)
    try:
        while not conn.closed:
            message = await io.receive()
            if message is None:
                return
            text = message if isinstance(message, str) else None
            if not rate.allow():
                _refuse(conn, rate, text, current())
                continue
            if text is None:
                conn.send(
                    error_message(current(), "bad_message", "send JSON as text frames, not binary")
                )
                continue
            if len(text.encode("utf-8")) > limit:
                conn.send(
                    error_message(
                        current(),
                        "message_too_large",
                        f"messages are limited to {limit} bytes",
                    )
                )
                continue
            yield text
    except WebSocketDisconnect:
        return
    except RuntimeError:  # the socket closed under us
        return


def _refuse(conn: Connection, rate: ConnectionLimit, text: str | None, seq: int) -> None:
    """Answer a message beyond the rate limits (a command gets its one reply)."""
    if rate.abusive:
        conn.close(4429, "too many messages; slow down before reconnecting")
        return
    cid = cid_of(text) if text is not None and len(text) < 4096 else None
    refuse(conn, seq, cid, "rate_limited", "too many messages; slow down")


async def _send_loop(io: SocketIO, conn: Connection) -> None:
    try:
        while True:
            message = await conn.outbox.get()
            if message is None:
                break
            conn.sending = True
            if isinstance(message, str):
                await io.send_text(message)
            else:
                await message.finish()
            conn.sending = False
    except Exception:  # the client went away; the receive loop notices too
        conn.closed = True
    finally:
        conn.direct = None
        with contextlib.suppress(RuntimeError):
            await io.close(conn.close_code, conn.close_reason)
