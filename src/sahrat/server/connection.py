"""What a table and its transports share: a connection, a refused operation, and the
shape of the messages sent down a socket.

The transports (``ws.py`` for a local socket, ``cluster.py`` for one forwarded from
another process) make connections; the table decides what each one sees. Nothing
here knows about either.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import orjson


class TableError(Exception):
    """A refused table operation (join a full seat, leave a running match...)."""

    def __init__(self, code: str, message: str, status: int = 409) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status


@dataclass(eq=False)
class Connection:
    """One WebSocket: who it is, which seat it was last shown, and its outgoing queue.

    ``seat`` is never decided by the transport: the table sets it from its seating
    (:meth:`Table.follow_seating`) before anything is sent to or accepted from the
    connection, so a socket never outlives its user's seat."""

    user_id: int
    seat: int | None = None
    outbox: asyncio.Queue[str | None] = field(default_factory=lambda: asyncio.Queue(1024))
    closed: bool = False
    last_reaction: float = -1e9
    last_hint: float = -1e9
    close_code: int = 1000  # the WebSocket close code once closed (4503: reconnect)
    close_reason: str = ""

    def send(self, message: dict[str, Any]) -> None:
        """Queue a message; a client too slow to keep up is dropped (it can resume)."""
        self.send_text(orjson.dumps(message).decode())

    def send_text(self, text: str) -> None:
        if self.closed:
            return
        try:
            self.outbox.put_nowait(text)
        except asyncio.QueueFull:
            self.close(4503, "too slow to keep up; reconnect to catch up")

    def close(self, code: int = 1000, reason: str = "") -> None:
        if not self.closed:
            self.closed = True
            self.close_code, self.close_reason = code, reason
            while True:
                try:
                    self.outbox.put_nowait(None)
                    break
                except asyncio.QueueFull:
                    self.outbox.get_nowait()


def message(kind: str, seq: int, payload: dict[str, Any]) -> dict[str, Any]:
    """A server message: its type, the table's seq when it was sent, its payload."""
    return {"type": kind, "seq": seq, "payload": payload}


def refusal(cid: str, code: str, message: str) -> dict[str, Any]:
    """The payload of a ``reply`` refusing command ``cid``."""
    return {"cid": cid, "ok": False, "error": {"code": code, "message": message}}
