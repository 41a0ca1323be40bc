"""The WebSocket endpoint: one per table, ``/ws/tables/{id}?token=...&since=N``.

The connection's seat is the user's seat at the table (a spectator has
none). Each connection has a sender task draining its outbox, so a slow
client never blocks the table; every command gets exactly one ``reply``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

from fastapi import APIRouter, WebSocket, WebSocketDisconnect
from pydantic import ValidationError

from .auth import user_for_token
from .protocol import REACTIONS, Command, Ping, React
from .table import Connection, TableError

log = logging.getLogger("sahrat.ws")
router = APIRouter()


def _error(seq: int, code: str, message: str) -> dict[str, Any]:
    return {"type": "error", "seq": seq, "payload": {"code": code, "message": message}}


@router.websocket("/ws/tables/{table_id}")
async def table_socket(websocket: WebSocket, table_id: int) -> None:
    hub = websocket.app.state.hub
    settings = hub.settings
    token = websocket.query_params.get("token", "")
    since_text = websocket.query_params.get("since")
    async with hub.sessions() as session:
        user = await user_for_token(session, token) if token else None
    if user is None:
        await websocket.accept()  # closing before accept is an HTTP 403, not our close code
        await websocket.close(code=4401, reason="unknown, expired or revoked token")
        return
    try:
        table = hub.table(table_id)
    except TableError as error:
        await websocket.accept()
        await websocket.close(code=4404, reason=error.message)
        return
    since = int(since_text) if since_text and since_text.isdigit() else None
    await websocket.accept()
    hub.remember_name(user.id, user.name)
    conn = Connection(user_id=user.id, seat=table.seat_of(user.id))
    sender = asyncio.create_task(_send_loop(websocket, conn))
    table.connect(conn, since)
    try:
        while not conn.closed:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                break
            text = message.get("text")
            if text is None:
                conn.send(_error(table.seq, "bad_message", "send JSON as text frames, not binary"))
                continue
            if len(text.encode("utf-8")) > settings.max_message_bytes:
                conn.send(
                    _error(
                        table.seq,
                        "message_too_large",
                        f"messages are limited to {settings.max_message_bytes} bytes",
                    )
                )
                continue
            await _handle(table, conn, text)
    except WebSocketDisconnect:
        pass
    except RuntimeError:  # the socket closed under us
        pass
    finally:
        table.disconnect(conn)
        await asyncio.gather(sender, return_exceptions=True)


async def _handle(table: Any, conn: Connection, text: str) -> None:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        conn.send(_error(table.seq, "bad_json", f"not JSON: {error.msg}"))
        return
    kind = data.get("type") if isinstance(data, dict) else None
    if kind == "ping":
        with contextlib.suppress(ValidationError):
            Ping.model_validate(data)
        conn.send({"type": "pong", "seq": table.seq, "payload": {}})
        return
    if kind == "react":
        try:
            react = React.model_validate(data)
        except ValidationError:
            conn.send(_error(table.seq, "bad_reaction", f"a reaction is one of {list(REACTIONS)}"))
            return
        table.react(conn, react.reaction)
        return
    if kind != "command":
        conn.send(
            _error(table.seq, "bad_message", "expected a message of type command, react or ping")
        )
        return
    try:
        command = Command.model_validate(data)
    except ValidationError as error:
        cid = data.get("cid") if isinstance(data.get("cid"), str) else None
        problem = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in error.errors()
        )
        if cid:
            conn.send(
                {
                    "type": "reply",
                    "seq": table.seq,
                    "payload": {
                        "cid": cid,
                        "ok": False,
                        "error": {"code": "bad_command", "message": problem},
                    },
                }
            )
        else:
            conn.send(_error(table.seq, "bad_command", problem))
        return
    await table.command(conn, command)


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
            await websocket.close()
