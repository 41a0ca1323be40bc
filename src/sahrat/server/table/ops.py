"""The operations a process runs on a table it serves, by name (``hub.OPS`` adds the
hub's own): each takes the table and the call's arguments, the same for a call made
here and one forwarded from another process, and answers with the table's info as the
acting user (or ``viewer``) sees it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from sahrat.server.table.table import Table


async def info(table: Table, args: dict[str, Any]) -> dict[str, Any]:
    return table.info(args.get("viewer"))


async def mine(table: Table, args: dict[str, Any]) -> dict[str, Any]:
    """A seated player's line of "my games" (``api/me.py``): the table as they see it,
    and the seat whose move it is (none between rounds or once it is over)."""
    state = table.match.state
    playing = table.status == "playing" and state is not None
    turn = table.engine.to_act(state) if playing and table.pace.round_break is None else None
    return {"table": table.info(args.get("user_id")), "turn": turn}


async def join(table: Table, args: dict[str, Any]) -> dict[str, Any]:
    await table.join(int(args["user_id"]), args.get("seat"), args.get("address"))
    return table.info(args["user_id"])


async def leave(table: Table, args: dict[str, Any]) -> dict[str, Any]:
    await table.leave(int(args["user_id"]))
    return table.info(args["user_id"])


async def start(table: Table, args: dict[str, Any]) -> dict[str, Any]:
    await table.start_with_bots(int(args["user_id"]), args.get("level"))
    return table.info(args["user_id"])


async def options(table: Table, args: dict[str, Any]) -> dict[str, Any]:
    await table.update_options(args["options"])
    return table.info(args.get("viewer"))


async def chat_report(table: Table, args: dict[str, Any]) -> dict[str, Any]:
    """What a report of a chat message keeps (``TableChat.reported``)."""
    return table.chat.reported(int(args["user_id"]), str(args["message_id"]))


TABLE_OPS: dict[str, Callable[[Table, dict[str, Any]], Awaitable[Any]]] = {
    "info": info,
    "mine": mine,
    "join": join,
    "leave": leave,
    "start": start,
    "options": options,
    "chat_report": chat_report,
}
