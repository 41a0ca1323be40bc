"""One text message from a player's connection, decoded and passed to its table.

A message is a JSON object whose ``type`` picks what the table does with it
(docs/protocol.md, "Client messages"); ``decode.py`` reads and checks it in one pass
into its typed struct, and each way it can be refused keeps its code here. The same
code serves a local WebSocket and one forwarded from another process
(``cluster/forwarding.py``): both end here, on the process that owns the table.
"""

from __future__ import annotations

from sahrat.server.socket.decode import (
    Chat,
    Command,
    Continue,
    Hint,
    Invalid,
    NotJSON,
    Ping,
    React,
    Rematch,
    Resync,
    decode,
)
from sahrat.server.table.connection import Connection
from sahrat.server.table.messages import error_message, refusal
from sahrat.server.table.protocol import REACTIONS
from sahrat.server.table.table import Table

# Messages that are their type alone (their schemas in protocol.py: Ping, Continue,
# Hint, Rematch, Resync): anything more is refused, as their schemas say.
BARE_MESSAGES = ("ping", "continue", "hint", "rematch", "resync")


def refuse(conn: Connection, seq: int, cid: str | None, code: str, message: str) -> None:
    """Refuse a message: a command with a usable ``cid`` gets its one ``reply``, anything
    else an ``error``."""
    if cid:
        conn.send({"type": "reply", "seq": seq, "payload": refusal(cid, code, message)})
    else:
        conn.send(error_message(seq, code, message))


async def handle_text(table: Table, conn: Connection, text: str) -> None:
    try:
        message = decode(text)
    except NotJSON as error:
        conn.send(error_message(table.seq, "bad_json", f"not JSON: {error}"))
        return
    except Invalid as error:
        _refuse_invalid(table, conn, error)
        return
    match message:
        case Command():
            await table.command(conn, message)
        case React():
            table.react(conn, message.reaction)
        case Chat():  # free text or a quick phrase, checked by the table's chat
            table.chat.say(conn, message.payload)
        case Ping():
            conn.send({"type": "pong", "seq": table.seq, "payload": {}})
        case Continue():
            table.continue_play(conn)
        case Hint():
            await table.hint(conn)
        case Rematch():
            await table.ask_rematch(conn)
        case Resync():  # the table whole, as on connect (docs/protocol.md, "Updates")
            conn.send({"type": "snapshot", "seq": table.seq, "payload": table.snapshot(conn)})


def _refuse_invalid(table: Table, conn: Connection, error: Invalid) -> None:
    seq, kind = table.seq, error.kind
    if kind == "command":
        refuse(conn, seq, error.cid, "bad_command", error.problem)
    elif kind == "react":
        conn.send(error_message(seq, "bad_reaction", f"a reaction is one of {list(REACTIONS)}"))
    elif kind == "chat":
        conn.send(
            error_message(seq, "bad_chat", 'a chat message is {"type": "chat", "payload": {...}}')
        )
    elif kind in BARE_MESSAGES:
        conn.send(error_message(seq, "bad_message", f'{kind} is {{"type": "{kind}"}}'))
    else:
        conn.send(
            error_message(
                seq,
                "bad_message",
                "expected a message of type command, continue, rematch, resync, hint, react, "
                "chat or ping",
            )
        )
