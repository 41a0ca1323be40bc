"""What a table and its transports share: a connection, with its outgoing queue.

The transports (``socket/ws.py`` for a local socket, ``cluster/forwarding.py`` for
one forwarded from another process) make connections; the table decides what each
one sees (the messages themselves are built in ``protocol.py``). Nothing here knows
about either.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

import orjson

Write = Callable[[str], Coroutine[Any, Any, None]]


class UnfinishedWrite:
    """A direct write that had to wait for the socket (the client reads slowly): the
    sender task finishes it, before any later message."""

    def __init__(self, write: Coroutine[Any, Any, None], waiting_on: Any) -> None:
        self.write = write
        self.waiting_on = waiting_on

    async def finish(self) -> None:
        waiting_on = self.waiting_on
        while True:
            try:
                if waiting_on is None:  # a bare yield: one turn of the loop
                    await asyncio.sleep(0)
                else:  # a future: wait for it as the write's own task would have
                    waiting_on._asyncio_future_blocking = False
                    await waiting_on
            except asyncio.CancelledError:
                self.write.close()
                raise
            except Exception:  # the write sees it when resumed (Future.result raises)
                pass
            try:
                waiting_on = self.write.send(None)
            except StopIteration:
                return


@dataclass(eq=False)
class Connection:
    """One WebSocket: who it is, which seat it was last shown, and its outgoing queue.

    ``seat`` is never decided by the transport: the table sets it from its seating
    (:meth:`Audience.follow`) before anything is sent to or accepted from the
    connection, so a socket never outlives its user's seat.

    A local socket's transport gives ``direct``, the socket's own write: a message is
    then written at once when nothing is queued before it and the socket can take it
    (nearly always), without a hop through the sender task (a queue put, a task wake-up
    and a loop turn per message). A write the socket cannot take at once, and every
    message behind it, go through ``outbox`` and the sender task, in order."""

    user_id: int
    seat: int | None = None
    outbox: asyncio.Queue[str | UnfinishedWrite | None] = field(
        default_factory=lambda: asyncio.Queue(1024)
    )
    direct: Write | None = None
    sending: bool = False  # the sender task is writing a message it took from the outbox
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
        if self.direct is not None and not self.sending and self.outbox.empty():
            self._write_now(self.direct, text)
            return
        try:
            self.outbox.put_nowait(text)
        except asyncio.QueueFull:
            self.close(4503, "too slow to keep up; reconnect to catch up")

    def _write_now(self, direct: Write, text: str) -> None:
        write = direct(text)
        try:
            waiting_on = write.send(None)
        except StopIteration:
            return  # written
        except Exception:  # the socket is gone: the receive loop notices too
            self.close()
            return
        self.outbox.put_nowait(UnfinishedWrite(write, waiting_on))  # the outbox was empty

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
