"""One text message from a player's connection, parsed and passed to its table.

A message is a JSON object whose ``type`` picks its handler in :data:`HANDLERS`
(docs/protocol.md, "Client messages"); any other type is answered ``bad_message``.
The same code serves a local WebSocket and one forwarded from another process
(``cluster/forwarding.py``): both end here, on the process that owns the table.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from pydantic import ValidationError

from sahrat.server.table.connection import Connection
from sahrat.server.table.messages import error_message, refusal
from sahrat.server.table.protocol import REACTIONS, Command, React
from sahrat.server.table.table import Table

Handler = Callable[[Table, Connection, dict[str, Any]], Awaitable[None]]


def refuse(conn: Connection, seq: int, cid: str | None, code: str, message: str) -> None:
    """Refuse a message: a command with a usable ``cid`` gets its one ``reply``, anything
    else an ``error``."""
    if cid:
        conn.send({"type": "reply", "seq": seq, "payload": refusal(cid, code, message)})
    else:
        conn.send(error_message(seq, code, message))


async def _command(table: Table, conn: Connection, data: dict[str, Any]) -> None:
    try:
        command = Command.model_validate(data)
    except ValidationError as error:
        cid = data.get("cid") if isinstance(data.get("cid"), str) else None
        problem = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in error.errors()
        )
        refuse(conn, table.seq, cid, "bad_command", problem)
        return
    await table.command(conn, command)


async def _react(table: Table, conn: Connection, data: dict[str, Any]) -> None:
    try:
        react = React.model_validate(data)
    except ValidationError:
        conn.send(
            error_message(table.seq, "bad_reaction", f"a reaction is one of {list(REACTIONS)}")
        )
        return
    table.react(conn, react.reaction)


async def _chat(table: Table, conn: Connection, data: dict[str, Any]) -> None:
    """Free text or a quick phrase, checked by the table's chat (``table/chat.py``)."""
    if set(data) != {"type", "payload"}:
        conn.send(
            error_message(
                table.seq, "bad_chat", 'a chat message is {"type": "chat", "payload": {...}}'
            )
        )
        return
    table.chat.say(conn, data["payload"])


async def _ping(table: Table, conn: Connection) -> None:
    conn.send({"type": "pong", "seq": table.seq, "payload": {}})


async def _continue(table: Table, conn: Connection) -> None:
    table.continue_play(conn)


async def _hint(table: Table, conn: Connection) -> None:
    await table.hint(conn)


async def _rematch(table: Table, conn: Connection) -> None:
    await table.ask_rematch(conn)


def _alone(kind: str, act: Callable[[Table, Connection], Awaitable[None]]) -> Handler:
    """The handler of a message that is its type alone (its schema in protocol.py:
    Ping, Continue, Hint, Rematch): anything more is refused, as its schema says."""

    async def handle(table: Table, conn: Connection, data: dict[str, Any]) -> None:
        if set(data) != {"type"}:
            conn.send(error_message(table.seq, "bad_message", f'{kind} is {{"type": "{kind}"}}'))
            return
        await act(table, conn)

    return handle


# Messages that are their type alone.
BARE_MESSAGES = ("ping", "continue", "hint", "rematch")

HANDLERS: dict[str, Handler] = {
    "command": _command,
    "ping": _alone("ping", _ping),
    "react": _react,
    "chat": _chat,
    "hint": _alone("hint", _hint),
    "rematch": _alone("rematch", _rematch),
    "continue": _alone("continue", _continue),
}


async def handle_text(table: Table, conn: Connection, text: str) -> None:
    try:
        # orjson bounds nesting and numbers and refuses lone surrogates, so no message
        # can make the parse (or the echo of its cid) fail.
        data = orjson.loads(text)
    except orjson.JSONDecodeError as error:
        conn.send(error_message(table.seq, "bad_json", f"not JSON: {error}"))
        return
    kind = data.get("type") if isinstance(data, dict) else None
    handler = HANDLERS.get(kind) if isinstance(kind, str) else None
    if handler is None:
        conn.send(
            error_message(
                table.seq,
                "bad_message",
                "expected a message of type command, continue, rematch, hint, react, chat or ping",
            )
        )
        return
    await handler(table, conn, data)
