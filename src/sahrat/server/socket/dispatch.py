"""One text message from a player's connection, parsed and passed to its table.

The same code serves a local WebSocket and one forwarded from another
process (``cluster.py``): both end here, on the process that owns the table.
"""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import ValidationError

from sahrat.server.table.connection import Connection, refusal
from sahrat.server.table.protocol import REACTIONS, Command, React
from sahrat.server.table.table import Table


def error_message(seq: int, code: str, message: str) -> dict[str, Any]:
    return {"type": "error", "seq": seq, "payload": {"code": code, "message": message}}


def refuse(conn: Connection, seq: int, cid: str | None, code: str, message: str) -> None:
    """Refuse a message: a command with a usable ``cid`` gets its one ``reply``, anything
    else an ``error``."""
    if cid:
        conn.send({"type": "reply", "seq": seq, "payload": refusal(cid, code, message)})
    else:
        conn.send(error_message(seq, code, message))


# Messages that are their type alone (their schemas in protocol.py: Ping, Continue,
# Hint, Rematch), and what each does.
BARE_MESSAGES = ("ping", "continue", "hint", "rematch")


async def _bare(table: Table, conn: Connection, kind: str) -> None:
    if kind == "ping":
        conn.send({"type": "pong", "seq": table.seq, "payload": {}})
    elif kind == "continue":
        table.continue_play(conn)
    elif kind == "hint":
        await table.hint(conn)
    else:
        await table.ask_rematch(conn)


async def handle_text(table: Table, conn: Connection, text: str) -> None:
    try:
        # orjson bounds nesting and numbers and refuses lone surrogates, so no message
        # can make the parse (or the echo of its cid) fail.
        data = orjson.loads(text)
    except orjson.JSONDecodeError as error:
        conn.send(error_message(table.seq, "bad_json", f"not JSON: {error}"))
        return
    kind = data.get("type") if isinstance(data, dict) else None
    if kind in BARE_MESSAGES:
        # A message that is its type alone: anything more is refused, as its schema says.
        if set(data) != {"type"}:
            conn.send(error_message(table.seq, "bad_message", f'{kind} is {{"type": "{kind}"}}'))
            return
        await _bare(table, conn, kind)
        return
    if kind == "react":
        try:
            react = React.model_validate(data)
        except ValidationError:
            conn.send(
                error_message(table.seq, "bad_reaction", f"a reaction is one of {list(REACTIONS)}")
            )
            return
        table.react(conn, react.reaction)
        return
    if kind != "command":
        conn.send(
            error_message(
                table.seq,
                "bad_message",
                "expected a message of type command, continue, rematch, hint, react or ping",
            )
        )
        return
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
