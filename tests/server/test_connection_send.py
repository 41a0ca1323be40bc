"""A connection writes a message at once when the socket can take it, and otherwise
through its sender task — in order, whatever the socket's pace."""

from __future__ import annotations

import asyncio

from sahrat.server.socket.ws import _send_loop
from sahrat.server.table.connection import Connection


class FakeSocket:
    """A socket whose writes wait while ``writable`` is clear, as uvicorn's do when the
    client reads slowly (flow control)."""

    def __init__(self) -> None:
        self.writable = asyncio.Event()
        self.writable.set()
        self.written: list[str] = []
        self.closed_with: int | None = None
        self.broken = False

    async def send_text(self, text: str) -> None:
        await self.writable.wait()
        if self.broken:
            raise RuntimeError("the client went away")
        self.written.append(text)

    async def close(self, code: int = 1000, reason: str = "") -> None:
        self.closed_with = code


def _connected(socket: FakeSocket) -> tuple[Connection, asyncio.Task[None]]:
    conn = Connection(user_id=1)
    sender = asyncio.create_task(_send_loop(socket, conn))  # type: ignore[arg-type]
    conn.direct = socket.send_text
    return conn, sender


def test_a_writable_socket_is_written_at_once_without_the_sender_task() -> None:
    asyncio.run(_a_writable_socket_is_written_at_once_without_the_sender_task())


async def _a_writable_socket_is_written_at_once_without_the_sender_task() -> None:
    socket = FakeSocket()
    conn, sender = _connected(socket)
    conn.send_text("a")
    conn.send_text("b")
    # no await in between: nothing could have run the sender task
    assert socket.written == ["a", "b"]
    assert conn.outbox.empty()
    conn.close()
    await sender
    assert socket.closed_with == 1000


def test_a_slow_socket_gets_every_message_in_order_through_the_sender() -> None:
    asyncio.run(_a_slow_socket_gets_every_message_in_order_through_the_sender())


async def _a_slow_socket_gets_every_message_in_order_through_the_sender() -> None:
    socket = FakeSocket()
    conn, sender = _connected(socket)
    conn.send_text("1")
    socket.writable.clear()  # the client stops reading
    for text in ("2", "3", "4"):
        conn.send_text(text)
    assert socket.written == ["1"]
    assert conn.outbox.qsize() == 3  # the unfinished write, then the two behind it
    await asyncio.sleep(0.01)
    assert socket.written == ["1"]  # still waiting: nothing skipped ahead
    socket.writable.set()
    for _ in range(100):
        if len(socket.written) == 4:
            break
        await asyncio.sleep(0.001)
    assert socket.written == ["1", "2", "3", "4"]
    conn.send_text("5")  # caught up: written at once again
    assert socket.written[-1] == "5"
    conn.close()
    await sender


def test_a_socket_gone_while_writing_closes_the_connection() -> None:
    asyncio.run(_a_socket_gone_while_writing_closes_the_connection())


async def _a_socket_gone_while_writing_closes_the_connection() -> None:
    socket = FakeSocket()
    conn, sender = _connected(socket)
    socket.broken = True
    conn.send_text("lost")
    assert conn.closed
    await asyncio.wait_for(sender, 1)
    assert socket.written == []
    conn.send_text("after")  # ignored, no error
    assert socket.written == []


def test_a_socket_gone_during_a_waiting_write_ends_the_sender() -> None:
    asyncio.run(_a_socket_gone_during_a_waiting_write_ends_the_sender())


async def _a_socket_gone_during_a_waiting_write_ends_the_sender() -> None:
    socket = FakeSocket()
    conn, sender = _connected(socket)
    socket.writable.clear()
    conn.send_text("x")
    socket.broken = True
    socket.writable.set()
    await asyncio.wait_for(sender, 1)
    assert conn.closed
    assert socket.written == []
