"""A table's chat, wired to its connections: the rules are ``social/chat.py``'s.

A ``chat`` message from a connection (``socket/dispatch.py``; forwarded ones from
another process of a cluster end here too, on the process that serves the table) is
checked and kept by the table's :class:`ChatRoom`, then sent to every connection that
may read it, as it is seated now. A connection that opens gets the kept messages it may
read (``chat_history``), after its snapshot. Nothing here waits: chat takes no lock and
never holds up a move.
"""

from __future__ import annotations

from typing import Any

import orjson

from sahrat.server.social.chat import (
    Blocked,
    ChatRoom,
    may_report,
    nobody_blocked,
    players_read_spectators,
    reads,
    report_fields,
)
from sahrat.server.table.audience import Audience
from sahrat.server.table.connection import Connection
from sahrat.server.table.errors import TableError
from sahrat.server.table.match import Match
from sahrat.server.table.messages import error_message, message
from sahrat.server.table.services import TableServices


class TableChat:
    """The chat of one table: on or off (the table's ``chat`` setting), its room."""

    def __init__(
        self,
        services: TableServices,
        audience: Audience,
        match: Match,
        *,
        enabled: bool = True,
        blocked: Blocked = nobody_blocked,
    ) -> None:
        self._services = services
        self._audience = audience
        self._match = match
        self.enabled = enabled
        self.blocked = blocked  # the friends' blocks, once they exist (social/chat.py)
        self.room = ChatRoom()

    @property
    def spectators_open(self) -> bool:
        """Whether the players read the spectators' messages now."""
        match = self._match
        return players_read_spectators(
            coin_table=bool(match.options.coin_table), playing=match.status == "playing"
        )

    def say(self, conn: Connection, body: Any) -> None:
        """A connection's ``chat`` payload: refused (an ``error`` to it alone), or kept and
        sent to everyone at the table who may read it."""
        seq = self._match.seq
        if not self.enabled:
            conn.send(error_message(seq, "chat_off", "chat is off at this table"))
            return
        if conn.user_id in self._services.suspended:
            conn.send(error_message(seq, "suspended", "a suspended account cannot chat"))
            return
        if not isinstance(body, dict):
            body = {"payload": body}  # refused by the room as not a chat payload
        self._audience.follow(conn)
        open_now = self.spectators_open
        said = self.room.say(
            user_id=conn.user_id,
            name=self._services.names.get(conn.user_id),
            seat=conn.seat,
            body=body,
            spectators_open=open_now,
        )
        if isinstance(said, dict):
            conn.send(message("error", seq, said))
            return
        text = orjson.dumps(message("chat", seq, said.payload())).decode()
        for other in list(self._audience.connections):
            if other.closed:
                continue
            player = other.seat is not None
            if reads(
                said, other.user_id, player=player, spectators_open=open_now, blocked=self.blocked
            ):
                other.send_text(text)

    def greet(self, conn: Connection) -> None:
        """A connection that just opened: the kept messages it may read, if any."""
        if not self.enabled:
            return
        kept = self.room.readable(
            conn.user_id,
            player=conn.seat is not None,
            spectators_open=self.spectators_open,
            blocked=self.blocked,
        )
        if kept:
            payload = {"messages": [m.payload() for m in kept]}
            conn.send(message("chat_history", self._match.seq, payload))

    def reported(self, user_id: int, message_id: str) -> dict[str, Any]:
        """What a report by ``user_id`` of message ``message_id`` keeps; refused if the
        table no longer keeps the message, or the user was not sent it, or said it."""
        found = self.room.find(message_id)
        seated = self._audience.seat_for(user_id) is not None
        present = seated or any(
            c.user_id == user_id and not c.closed for c in self._audience.connections
        )
        if found is None or not present or not may_report(found, user_id, seated=seated):
            if found is not None and found.user_id == user_id:
                raise TableError("chat_own_message", "you cannot report your own message")
            raise TableError(
                "no_such_message", f"this table keeps no message {message_id!r} sent to you"
            )
        return report_fields(found)
