"""The WebSocket endpoint: one per table, ``/ws/tables/{id}?token=...&since=N``.

The connection's seat is the user's seat at the table (a spectator has
none). Each connection has a sender task draining its outbox, so a slow
client never blocks the table; every command gets exactly one ``reply``.

In a cluster, a connection to a table that another process serves is
forwarded to it (``cluster.py``): this process only checks the token and the
message size and passes text both ways. Close code 4503 asks the client to
reconnect (with ``since``): the table moved, or updates were missed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable

from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from . import metrics
from .auth import user_for_token
from .dispatch import error_message
from .hub import Hub
from .table import Connection, Table, TableError

log = logging.getLogger("sahrat.ws")
router = APIRouter()


@router.websocket("/ws/tables/{table_id}")
async def table_socket(websocket: WebSocket, table_id: int) -> None:
    hub: Hub = websocket.app.state.hub
    token = websocket.query_params.get("token", "")
    since_text = websocket.query_params.get("since")
    async with hub.sessions() as session:
        user = await user_for_token(session, token) if token else None
    if user is None:
        await websocket.accept()  # closing before accept is an HTTP 403, not our close code
        await websocket.close(code=4401, reason="unknown, expired or revoked token")
        return
    try:
        where = await hub.locate(table_id)
    except TableError as error:
        await websocket.accept()
        await websocket.close(code=4404 if error.status == 404 else 4503, reason=error.message)
        return
    since = int(since_text) if since_text and since_text.isdigit() else None
    await websocket.accept()
    hub.remember_name(user.id, user.name)
    metrics.CONNECTIONS.inc()
    try:
        if isinstance(where, Table):
            await _serve_local(websocket, hub, where, user.id, since)
        else:
            await _serve_forwarded(websocket, hub, table_id, where, user.id, user.name, since)
    finally:
        metrics.CONNECTIONS.dec()


async def _serve_local(
    websocket: WebSocket, hub: Hub, table: Table, user_id: int, since: int | None
) -> None:
    conn = Connection(user_id=user_id, seat=table.seat_of(user_id))
    sender = asyncio.create_task(_send_loop(websocket, conn))
    table.connect(conn, since)
    try:
        async for text in _texts(websocket, conn, hub, lambda: table.seq):
            await hub.handle(table, conn, text)
    finally:
        table.disconnect(conn)
        await asyncio.gather(sender, return_exceptions=True)


async def _serve_forwarded(
    websocket: WebSocket,
    hub: Hub,
    table_id: int,
    owner: str,
    user_id: int,
    name: str,
    since: int | None,
) -> None:
    assert hub.cluster is not None
    conn = Connection(user_id=user_id, seat=None)
    sender = asyncio.create_task(_send_loop(websocket, conn))
    link = hub.cluster.attach(table_id, owner, conn, name, since)
    try:
        async for text in _texts(websocket, conn, hub, lambda: link.last_seq or 0):
            hub.cluster.forward(link, text)
    finally:
        hub.cluster.unlink(link)
        conn.close()
        await asyncio.gather(sender, return_exceptions=True)


async def _texts(
    websocket: WebSocket, conn: Connection, hub: Hub, current: Callable[[], int]
) -> AsyncIterator[str]:
    """The client's text messages; binary and oversized ones are answered here
    (``current`` gives the table's seq as this process knows it)."""
    limit = hub.settings.max_message_bytes
    try:
        while not conn.closed:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            text = message.get("text")
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


async def _send_loop(websocket: WebSocket, conn: Connection) -> None:
    try:
        while True:
            message = await conn.outbox.get()
            if message is None:
                break
            await websocket.send_text(message)
    except Exception:  # the client went away; the receive loop notices too
        conn.closed = True
    finally:
        with contextlib.suppress(RuntimeError):
            await websocket.close(code=conn.close_code, reason=conn.close_reason)
