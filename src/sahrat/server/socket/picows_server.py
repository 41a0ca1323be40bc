"""The table sockets on a port of their own (``SAHRAT_SOCKET_PORT``), served by picows.

uvicorn still serves everything else, its own ``/ws/tables/{id}`` included; this
server listens on the socket port in the same event loop (started and stopped in the
app's lifespan) and takes only ``/ws/tables/{id}?ticket=..&since=..&invite=..``.
Behind a reverse proxy, ``/ws/`` goes to this port and the rest to uvicorn's
(docs/operations.md). The checks and the serving loop are the endpoint's own
(``ws.serve``): a client sees the same close codes and reasons, the same Origin rule,
the same limits and the same answers to binary and oversized messages.

picows (a WebSocket protocol written in Cython) parses frames and writes them without
the ASGI layers. What it changes here:

* Writes: nothing in a write waits while the client keeps up, so a direct write
  (``Connection.direct``) finishes at once and never yields to the loop. The texts a
  socket is sent in one turn of the loop leave together at its end, in one write (a
  move's reply and its update to the mover: one segment, one system call). Once the
  transport is over its high-water mark (``pause_writing``: the kernel's buffer is
  full), writes wait until ``resume_writing``; meanwhile messages queue in the
  connection's bounded outbox and a client that does not catch up is closed with
  4503, as on uvicorn, instead of having its messages buffered without bound.
* Reads: picows calls ``on_ws_frame`` synchronously for each frame. A frame's text is
  put in the connection's inbox (a deque) and wakes the connection's one reader task
  (the serving loop), which runs ``handle_text`` for each message in order; there is
  no task per message. (Running ``handle_text`` inline in the callback would save a
  wake-up only until a message has to wait, and a move waits for its durable write:
  the rest of it, and every later message of the connection, would need a task then.)
  Past ``INBOX_HIGH`` unread messages the socket stops reading, as uvicorn's does.
* A fragmented message is put together up to ``SAHRAT_MAX_FRAME_BYTES`` (beyond: 1009);
  text that is not UTF-8 closes with 1007; pings are answered and sent
  (``SAHRAT_WS_PING_SECONDS``); no compression is offered.
"""

from __future__ import annotations

import asyncio
import logging
import re
import struct
from collections import deque
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from picows import (
    WSAutoPingStrategy,
    WSCloseCode,
    WSFrame,
    WSListener,
    WSMsgType,
    WSTransport,
    WSUpgradeRequest,
    WSUpgradeResponse,
    WSUpgradeResponseWithListener,
    ws_create_server,
)

from sahrat.server.hub import Hub
from sahrat.server.socket.ws import serve
from sahrat.store.tables import MAX_TABLE_ID

log = logging.getLogger("sahrat.ws")

PATH = re.compile(r"/ws/tables/([0-9]+)")
INBOX_HIGH = 32  # unread messages at which the socket stops reading (uvicorn's queue: 32)
INBOX_LOW = 8
CLOSE_WAIT_SECONDS = 5.0  # after our close frame, how long the client has to answer it
SHUTDOWN_SECONDS = 5.0


class _Gone(ConnectionError):
    """A write to a socket whose client has gone."""


class PicowsSocket(WSListener):
    """One table socket on the socket port: picows's callbacks on one side, a
    ``ws.SocketIO`` for ``ws.serve`` on the other."""

    def __init__(
        self, server: SocketServer, table_id: int, query: Mapping[str, str], headers: Any
    ) -> None:
        self.server = server
        self.table_id = table_id
        self.query = query
        self.headers: Mapping[str, str] = headers
        self.transport: WSTransport | None = None
        self.inbox: deque[str | bytes | None] = deque()  # None: the client left
        self.waiter: asyncio.Future[None] | None = None  # the reader waits for the inbox
        self.reading = True
        self.paused = False  # over the transport's high-water mark: writes wait
        self.resumed: asyncio.Future[None] | None = None
        self.fragments: list[bytes] = []
        self.fragment_type = WSMsgType.TEXT
        self.fragment_bytes = 0
        self.pending: list[str] = []  # written at the end of this turn of the loop
        self.flush_due = False
        self.gone = False
        self.closing = False

    # --- picows's side -----------------------------------------------------------------

    def on_ws_connected(self, transport: WSTransport) -> None:
        self.transport = transport
        self.server.started(self, serve(self, self.server.hub, self.table_id))

    def on_ws_frame(self, transport: WSTransport, frame: WSFrame) -> None:
        kind = frame.msg_type
        if kind is WSMsgType.TEXT or kind is WSMsgType.BINARY:
            if self.fragments:
                self._fail(WSCloseCode.PROTOCOL_ERROR, "expected a continuation frame")
            elif frame.fin:
                if kind is WSMsgType.TEXT:
                    try:
                        self._put(frame.get_payload_as_utf8_text())
                    except UnicodeDecodeError:
                        self._fail(WSCloseCode.INVALID_TEXT, "invalid UTF-8")
                else:
                    self._put(frame.get_payload_as_bytes())
            else:
                self.fragment_type = kind
                self._fragment(frame)
        elif kind is WSMsgType.CONTINUATION:
            if not self.fragments:
                self._fail(WSCloseCode.PROTOCOL_ERROR, "a continuation of nothing")
            else:
                self._fragment(frame)
        elif kind is WSMsgType.CLOSE:
            if not transport.is_close_frame_sent:  # the client began: answer, as RFC 6455
                code = frame.get_close_code()
                self._send_close(WSCloseCode.OK if code == WSCloseCode.NO_INFO else code)
            transport.disconnect()
            self._left()
        # a ping is answered by picows, a pong is picows's

    def _fragment(self, frame: WSFrame) -> None:
        self.fragment_bytes += frame.payload_size
        if self.fragment_bytes > self.server.hub.settings.max_frame_bytes:
            self._fail(WSCloseCode.MESSAGE_TOO_BIG, "message too big")
            return
        self.fragments.append(frame.get_payload_as_bytes())
        if frame.fin:
            payload = b"".join(self.fragments)
            self.fragments, self.fragment_bytes = [], 0
            if self.fragment_type is WSMsgType.BINARY:
                self._put(payload)
                return
            try:
                self._put(payload.decode("utf-8"))
            except UnicodeDecodeError:
                self._fail(WSCloseCode.INVALID_TEXT, "invalid UTF-8")

    def on_ws_disconnected(self, transport: WSTransport) -> None:
        self._left()

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self.paused = False
        self._wake_writer()

    def _put(self, message: str | bytes | None) -> None:
        self.inbox.append(message)
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
        if self.reading and len(self.inbox) >= INBOX_HIGH and self.transport is not None:
            self.reading = False
            self.transport.underlying_transport.pause_reading()

    def _fail(self, code: WSCloseCode, reason: str) -> None:
        """A protocol error: close as the RFC says, and stop reading this client."""
        assert self.transport is not None
        self._send_close(code, reason.encode())
        self.transport.disconnect()
        self._left()

    def _left(self) -> None:
        if not self.gone:
            self.gone = True
            self._put(None)
            self._wake_writer()

    def _wake_writer(self) -> None:
        resumed = self.resumed
        if resumed is not None and not resumed.done():
            resumed.set_result(None)

    # --- ws.serve's side (ws.SocketIO) ------------------------------------------------

    async def accept(self) -> None:
        """Already accepted: the checks run once the socket is open, as on uvicorn."""

    async def receive(self) -> str | bytes | None:
        inbox = self.inbox
        while not inbox:
            self.waiter = asyncio.get_running_loop().create_future()
            await self.waiter
        message = inbox.popleft()
        if message is None:
            inbox.append(None)  # the end stays the end
        elif not self.reading and len(inbox) <= INBOX_LOW and self.transport is not None:
            self.reading = True
            self.transport.underlying_transport.resume_reading()
        return message

    async def send_text(self, text: str) -> None:
        while self.paused and not self.gone:
            self.resumed = asyncio.get_running_loop().create_future()
            await self.resumed
        if self.gone or self.transport is None or self.transport.is_close_frame_sent:
            raise _Gone("the client went away")
        self.pending.append(text)
        if not self.flush_due:
            self.flush_due = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        """Write what this turn of the loop sent, in one write: a move's reply and
        update to its player leave in one segment."""
        self.flush_due = False
        pending, self.pending = self.pending, []
        transport = self.transport
        if not pending or transport is None or self.gone or transport.is_close_frame_sent:
            return
        if len(pending) == 1:
            transport.send(WSMsgType.TEXT, pending[0])
        else:
            transport.underlying_transport.write(b"".join(_text_frame(t) for t in pending))

    def _send_close(self, code: WSCloseCode, reason: bytes = b"") -> None:
        """The close frame, after what was sent before it."""
        assert self.transport is not None
        self._flush()
        self.transport.send_close(code, reason)

    async def close(self, code: int, reason: str) -> None:
        transport = self.transport
        if transport is None or self.closing or self.gone:
            return
        self.closing = True
        self._send_close(WSCloseCode(code), reason.encode())
        # The client answers with its close frame (on_ws_frame disconnects then); one
        # that does not is cut off, unsent data and all (it may have stopped reading).
        asyncio.get_running_loop().call_later(CLOSE_WAIT_SECONDS, transport.disconnect, False)


class SocketServer:
    """The socket port's listener and the sockets it serves."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self.listener: asyncio.Server | None = None
        self.sockets: dict[PicowsSocket, asyncio.Task[None]] = {}

    async def start(self, host: str, port: int) -> None:
        settings = self.hub.settings
        self.listener = await ws_create_server(
            self.route,
            host,
            port,
            websocket_handshake_timeout=settings.request_timeout_seconds,
            enable_auto_ping=True,
            auto_ping_idle_timeout=settings.ws_ping_seconds,
            auto_ping_reply_timeout=settings.ws_ping_seconds,
            auto_ping_strategy=WSAutoPingStrategy.PING_WHEN_IDLE,
            max_frame_size=settings.max_frame_bytes,
            logger_name=_quiet_logger(),
        )

    def route(self, request: WSUpgradeRequest) -> Any:
        """The listener of an upgrade request to a table's path; any other path is
        refused 403, as uvicorn refuses a socket no route takes."""
        url = urlsplit(request.path.decode("latin-1"))
        found = PATH.fullmatch(unquote(url.path))  # as the ASGI path: decoded
        if found is None:
            return _refusal(403, b"no socket here")
        if len(self.sockets) >= self.hub.settings.max_connections:
            return _refusal(503, b"too many connections")
        digits = found.group(1)
        table_id = int(digits) if len(digits) <= 18 else MAX_TABLE_ID + 1  # out of range
        query = dict(parse_qsl(url.query, keep_blank_values=True))
        return PicowsSocket(self, table_id, query, request.headers)

    def started(self, socket: PicowsSocket, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self.sockets[socket] = task
        task.add_done_callback(lambda done: self._ended(socket, done))

    def _ended(self, socket: PicowsSocket, task: asyncio.Task[None]) -> None:
        self.sockets.pop(socket, None)
        if not task.cancelled() and task.exception() is not None:
            log.error("table socket failed", exc_info=task.exception())
        transport = socket.transport
        if transport is not None and not socket.gone and not transport.is_close_frame_sent:
            # the serving loop ended without closing (it failed): close, as close() does
            socket._send_close(WSCloseCode.INTERNAL_ERROR)
            asyncio.get_running_loop().call_later(CLOSE_WAIT_SECONDS, transport.disconnect, False)

    async def stop(self) -> None:
        """Stop listening, close what is still open (1012: the service restarts) and wait
        for the serving loops to finish."""
        if self.listener is not None:
            self.listener.close()
        for socket in list(self.sockets):
            if socket.transport is not None and not socket.gone:
                socket._send_close(WSCloseCode.SERVICE_RESTART)
                socket.transport.disconnect()
                socket._left()
        tasks = list(self.sockets.values())
        if tasks:
            await asyncio.wait(tasks, timeout=SHUTDOWN_SECONDS)


def _text_frame(text: str) -> bytes:
    """A whole text frame from the server (unmasked, RFC 6455 section 5.2)."""
    data = text.encode()
    size = len(data)
    if size < 126:
        return bytes((0x81, size)) + data
    if size < 65536:
        return struct.pack("!BBH", 0x81, 126, size) + data
    return struct.pack("!BBQ", 0x81, 127, size) + data


def _quiet_logger() -> logging.Logger:
    """picows's logger: it logs every connection and disconnection at INFO, which
    uvicorn does not; left at WARNING unless configured."""
    logger = logging.getLogger("sahrat.ws.picows")
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.WARNING)
    return logger


def _refusal(status: int, body: bytes) -> WSUpgradeResponseWithListener:
    return WSUpgradeResponseWithListener(
        WSUpgradeResponse.create_error_response(status, body), None
    )


async def start_socket_server(hub: Hub, host: str, port: int) -> SocketServer:
    server = SocketServer(hub)
    await server.start(host, port)
    return server
