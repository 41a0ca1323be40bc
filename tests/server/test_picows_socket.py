"""The table sockets on their own port (``SAHRAT_SOCKET_PORT``, ``socket/picows_server.py``)
answer exactly as uvicorn's: a whole Conquian match between two clients, the refusal
codes (Origin 4403, tickets and ``?token=`` 4401, an unknown table 4404), binary and
oversized messages, bad commands, and a SIGKILL with a resume from ``since``.

The tests of the other modules that take a server are run here against a server whose
clients connect to the socket port (the harness's ``socket_port``): their expectations
are the socket endpoint's, whichever transport carries it."""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
import websockets
from picows import WSMsgType
from picows.picows import _make_test_ws_frame
from websockets.exceptions import InvalidStatus

from sahrat.server.socket.picows_server import INBOX_HIGH, INBOX_LOW, PicowsSocket
from sahrat.server.socket.ws import _send_loop
from sahrat.server.table.connection import Connection

from .harness import (
    Api,
    ServerProcess,
    WireClient,
    assert_no_leaks,
    assert_seqs_consecutive,
    play,
    seated_table,
)
from .test_access import _close_code, _rates, _tokens
from .test_commands import _bad_commands, _binary_frame, _refusals
from .test_recovery import _restart
from .test_socket_caps import _per_account, _per_table

ONE_DATABASE = "the transport under test never reaches the database differently"


@pytest.fixture(scope="module")
def picows(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One server for the module, its clients on the socket port."""
    folder = tmp_path_factory.mktemp("picows")
    server = ServerProcess(f"sqlite+aiosqlite:///{folder / 'sahrat.db'}", folder, socket_port=True)
    server.start()
    yield server
    server.stop()


# test_socket_caps.py's and test_access.py's limits, on one server
LIMITS = {
    "SAHRAT_MAX_SOCKETS_PER_ACCOUNT": "3",
    "SAHRAT_MAX_SPECTATORS_PER_TABLE": "2",
    "SAHRAT_MESSAGE_RATE": "5",
    "SAHRAT_MESSAGE_BURST": "10",
    "SAHRAT_ACCOUNT_RATE": "100",
    "SAHRAT_ACCOUNT_BURST": "100",
    "SAHRAT_ABUSE_LIMIT": "50",
}


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    folder = tmp_path_factory.mktemp("picows-limited")
    url = f"sqlite+aiosqlite:///{folder / 'sahrat.db'}"
    server = ServerProcess(url, folder, LIMITS, socket_port=True)
    server.start()
    yield server
    server.stop()


def test_the_harness_connects_to_the_socket_port(picows: ServerProcess) -> None:
    assert picows.socket_port is not None and picows.socket_port != picows.port
    url = picows.ws_url(1, "not-a-token")
    assert url.startswith(f"ws://127.0.0.1:{picows.socket_port}/ws/tables/1")


async def _whole_match(server: ServerProcess) -> None:
    api = Api(server)
    table_id, tokens, info = await seated_table(
        api, "conquian", {"wins_needed": 2, "break_seconds": 0}, 2
    )
    await api.aclose()
    seats = [
        await WireClient.connect(server, table_id, token, name=f"seat{seat}")
        for seat, token in enumerate(tokens)
    ]
    moves = await play("conquian", seats, until=lambda view: False)
    assert moves > 10
    for client in seats:
        await client.wait_seq(info["seq"] + moves)
        assert client.view is not None and client.view["match_over"] is True
        assert client.seq == info["seq"] + moves  # every move acknowledged, one seq each
        assert_seqs_consecutive(client)
    points = seats[0].view["points"] if seats[0].view else None
    assert points is not None and max(points) >= 2, points
    assert assert_no_leaks(seats) > moves
    for client in seats:
        await client.close()


def test_a_whole_conquian_match_over_the_socket_port(picows: ServerProcess) -> None:
    asyncio.run(_whole_match(picows))


async def _origins(server: ServerProcess) -> dict[str, int | None]:
    api = Api(server)
    token, _ = await api.guest()
    info = await api.create_table(token, "conquian", {})
    await api.aclose()
    codes: dict[str, int | None] = {}
    for name, origin in (
        ("own", f"http://127.0.0.1:{server.socket_port}"),  # the Host a client asked for
        ("foreign", "https://evil.example"),
        ("none", None),
    ):
        codes[name] = await _close_code(await server.ws_url_async(info["id"], token), origin)
    return codes


def test_only_the_servers_own_origin_opens_a_socket(picows: ServerProcess) -> None:
    assert asyncio.run(_origins(picows)) == {"own": None, "foreign": 4403, "none": None}


async def _tokens_and_paths(server: ServerProcess) -> None:
    api = Api(server)
    token, _ = await api.guest()
    info = await api.create_table(token, "conquian", {})
    await api.aclose()
    base = f"ws://127.0.0.1:{server.socket_port}/ws/tables/{info['id']}"
    assert await _close_code(f"{base}?{urlencode({'token': token})}") == 4401
    assert await _close_code(f"{base}?ticket=forged") == 4401
    assert await _close_code(base) == 4401  # no ticket at all
    # A valid ticket with a token beside it: refused all the same (and the ticket kept
    # out of the logs is spent only by a socket that opens).
    url = await server.ws_url_async(info["id"], token)
    assert await _close_code(f"{url}&token={token}") == 4401
    too_far = f"ws://127.0.0.1:{server.socket_port}/ws/tables/{'9' * 40}?ticket=x"
    assert await _close_code(too_far) == 4404
    with pytest.raises(InvalidStatus) as refused:  # no socket at another path
        async with websockets.connect(f"ws://127.0.0.1:{server.socket_port}/ws/elsewhere"):
            pass
    assert refused.value.response.status_code == 403


def test_tokens_in_urls_bad_tickets_and_other_paths_are_refused(picows: ServerProcess) -> None:
    asyncio.run(_tokens_and_paths(picows))


def test_refusal_codes_as_on_uvicorn(picows: ServerProcess) -> None:
    asyncio.run(_refusals(picows))


def test_a_binary_frame_is_answered_bad_message(picows: ServerProcess) -> None:
    asyncio.run(_binary_frame(picows))


def test_bad_and_oversized_commands_are_answered(picows: ServerProcess) -> None:
    asyncio.run(_bad_commands(picows))  # message_too_large among them, and still open


async def _fragments_and_frames(server: ServerProcess) -> None:
    """A message in fragments is put together; a frame beyond SAHRAT_MAX_FRAME_BYTES
    closes with 1009; text that is not UTF-8 with 1007."""
    api = Api(server)
    token, _ = await api.guest()
    info = await api.create_table(token, "conquian", {})
    await api.aclose()
    client = await WireClient.connect(server, info["id"], token, name="fragments")
    index = len(client.messages)
    await client.ws.send(iter(['{"type":', ' "ping"}']))  # two frames, one message
    await client.wait_for(lambda m: m["type"] == "pong", after=index)
    await client.close()
    async with websockets.connect(await server.ws_url_async(info["id"], token)) as ws:
        await ws.recv()
        await ws.send("x" * 1_048_577)  # over the default frame limit
        await ws.wait_closed()
        assert ws.close_code == 1009
    raw = await server.ws_url_async(info["id"], token)
    async with websockets.connect(raw) as ws:
        await ws.recv()
        # websockets would not send invalid text: write the frame (FIN, text, masked) by hand
        payload = b"\xff\xfe"
        frame = struct.pack("!BB", 0x81, 0x80 | len(payload)) + b"\x00\x00\x00\x00" + payload
        ws.transport.write(frame)  # type: ignore[attr-defined]
        await ws.wait_closed()
        assert ws.close_code == 1007


def test_socket_limits_per_account_and_per_table(limited: ServerProcess) -> None:
    assert asyncio.run(_per_account(limited)) == {
        "opened": [None] * 3,
        "fourth": 4409,
        "others": None,
        "again": None,
    }
    assert asyncio.run(_per_table(limited)) == {"watching": [None, None, 4410]}


def test_rate_limits_answer_then_close_persistent_abuse(limited: ServerProcess) -> None:
    result = asyncio.run(_rates(limited))
    assert result["replies"] == 30  # every command had exactly one reply
    assert 15 <= result["limited"] <= 20, result  # 10 from the burst, ~1 refilled
    assert result["close_code"] == 4429


def test_a_revoked_token_closes_its_sockets(picows: ServerProcess) -> None:
    asyncio.run(_tokens(picows))  # 4401 for the open socket and for a new one


def test_fragments_and_bad_frames(picows: ServerProcess) -> None:
    asyncio.run(_fragments_and_frames(picows))


def test_the_main_port_still_serves_sockets_and_rest(picows: ServerProcess) -> None:
    response = httpx.get(f"{picows.base_url}/readyz", timeout=5)
    assert response.status_code == 200
    own = ServerProcess(picows.database_url, picows.log_dir)
    own.port = picows.port  # the same process, its clients on the main port
    asyncio.run(_binary_frame(own))


def test_a_sigkill_and_a_resume_from_since_lose_no_acknowledged_move(tmp_path: Path) -> None:
    server = ServerProcess(
        f"sqlite+aiosqlite:///{tmp_path / 'sahrat.db'}", tmp_path, {"TZ": "UTC"}, socket_port=True
    )
    try:
        asyncio.run(_restart(server.start()))  # test_recovery's, over the socket port
    finally:
        server.stop()


class FakeTransport:
    """A picows transport that records what is written (frames or whole buffers)."""

    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.is_close_frame_sent = False
        self.closed_with: int | None = None
        self.underlying_transport = self

    def send(self, kind: Any, text: str) -> None:
        self.written.append(_frame(text))

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def send_close(self, code: int, reason: bytes = b"") -> None:
        self.is_close_frame_sent = True
        self.closed_with = int(code)

    def disconnect(self, graceful: bool = True) -> None:
        pass


def _frame(text: str) -> bytes:
    data = text.encode()
    assert len(data) < 126
    return bytes((0x81, len(data))) + data


def _texts(written: list[bytes]) -> list[str]:
    """The text frames in what was written, in order."""
    out, stream = [], b"".join(written)
    while stream:
        assert stream[0] == 0x81 and stream[1] < 126, stream[:2]
        out.append(stream[2 : 2 + stream[1]].decode())
        stream = stream[2 + stream[1] :]
    return out


def _socket() -> tuple[PicowsSocket, FakeTransport, Connection, asyncio.Task[None]]:
    sock = PicowsSocket(None, 1, {}, {})  # type: ignore[arg-type]
    fake = FakeTransport()
    sock.transport = fake  # type: ignore[assignment]
    conn = Connection(user_id=1)
    sender = asyncio.create_task(_send_loop(sock, conn))
    conn.direct = sock.send_text
    return sock, fake, conn, sender


async def _writes_in_order_and_batched() -> None:
    sock, fake, conn, sender = _socket()
    conn.send_text("a")
    conn.send_text("b")
    assert conn.outbox.empty()  # written directly, not through the sender task
    await asyncio.sleep(0)
    assert fake.written == [_frame("a") + _frame("b")]  # one write for the loop's turn
    sock.pause_writing()  # the client reads slowly: the transport is over its mark
    for text in ("c", "d", "e"):
        conn.send_text(text)
    await asyncio.sleep(0.01)
    assert _texts(fake.written) == ["a", "b"]  # nothing more while paused
    sock.resume_writing()
    await asyncio.sleep(0.01)
    assert _texts(fake.written) == ["a", "b", "c", "d", "e"]
    conn.close(4401, "bye")
    await sender
    assert fake.closed_with == 4401


def test_writes_wait_while_paused_and_keep_their_order() -> None:
    asyncio.run(_writes_in_order_and_batched())


async def _slow_client_dropped() -> None:
    sock, fake, conn, sender = _socket()
    sock.pause_writing()
    for n in range(conn.outbox.maxsize + 10):
        conn.send_text(f"m{n}")
    # the outbox is bounded: a client that does not catch up is dropped, told to resume
    assert conn.closed and conn.close_code == 4503
    assert fake.written == []
    sock.on_ws_disconnected(fake)  # type: ignore[arg-type]  (the client goes, at last)
    await asyncio.wait_for(sender, 5)
    assert await sock.receive() is None


def test_a_client_that_does_not_read_is_dropped_with_4503() -> None:
    asyncio.run(_slow_client_dropped())


class FakeReader(FakeTransport):
    """...that also records whether it reads the client."""

    def __init__(self) -> None:
        super().__init__()
        self.reading = True

    def pause_reading(self) -> None:
        self.reading = False

    def resume_reading(self) -> None:
        self.reading = True


async def _frames_in() -> None:
    server = SimpleNamespace(hub=SimpleNamespace(settings=SimpleNamespace(max_frame_bytes=100)))
    sock = PicowsSocket(server, 1, {}, {})  # type: ignore[arg-type]
    fake = FakeReader()
    sock.transport = fake  # type: ignore[assignment]
    frame = _make_test_ws_frame
    sock.on_ws_frame(fake, frame(WSMsgType.TEXT, b'{"type":', False, False))  # type: ignore[arg-type]
    sock.on_ws_frame(fake, frame(WSMsgType.CONTINUATION, b' "ping"}', True, False))  # type: ignore[arg-type]
    sock.on_ws_frame(fake, frame(WSMsgType.BINARY, b"\x01", True, False))  # type: ignore[arg-type]
    assert await sock.receive() == '{"type": "ping"}'
    assert await sock.receive() == b"\x01"  # binary stays binary: ws.serve answers it
    # A client that sends faster than it is served is no longer read (as on uvicorn).
    for n in range(INBOX_HIGH):
        sock.on_ws_frame(fake, frame(WSMsgType.TEXT, str(n).encode(), True, False))  # type: ignore[arg-type]
    assert not fake.reading
    while len(sock.inbox) > INBOX_LOW + 1:
        await sock.receive()
    assert not fake.reading
    await sock.receive()  # read again once no more than INBOX_LOW wait
    assert fake.reading and len(sock.inbox) == INBOX_LOW
    # Text that is not UTF-8 closes with 1007, and the reader is told the client left.
    sock.inbox.clear()
    sock.on_ws_frame(fake, frame(WSMsgType.TEXT, b"\xff", True, False))  # type: ignore[arg-type]
    assert fake.closed_with == 1007
    assert await sock.receive() is None
    # A message in fragments is bounded as a frame is (SAHRAT_MAX_FRAME_BYTES): 1009.
    big = PicowsSocket(server, 1, {}, {})  # type: ignore[arg-type]
    fake = FakeReader()
    big.transport = fake  # type: ignore[assignment]
    big.on_ws_frame(fake, frame(WSMsgType.TEXT, b"x" * 60, False, False))  # type: ignore[arg-type]
    big.on_ws_frame(fake, frame(WSMsgType.CONTINUATION, b"x" * 60, True, False))  # type: ignore[arg-type]
    assert fake.closed_with == 1009
    assert await big.receive() is None


def test_frames_are_put_together_and_a_flood_is_no_longer_read() -> None:
    asyncio.run(_frames_in())
