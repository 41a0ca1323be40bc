"""WebSocket compression is off unless the operator turns it on: a client that offers
permessage-deflate (browsers always do) gets a plain socket, which costs the server
about 45 KiB less memory per open socket (bench/bench_idle_sockets.py)."""

from __future__ import annotations

import asyncio

import websockets

from .harness import Api, ServerProcess, seated_table

# why this module runs on SQLite only in make test (conftest.py)
ONE_DATABASE = "compression is the WebSocket handshake's"

MODULE_SERVER_ENV: dict[str, str] = {}


async def _extensions(server: ServerProcess) -> str | None:
    api = Api(server)
    try:
        table_id, tokens, _info = await seated_table(api, "conquian", {}, 2)
        url = await server.ws_url_async(table_id, tokens[0])
        # The client offers permessage-deflate, as a browser does.
        async with websockets.connect(url, compression="deflate") as ws:
            await ws.recv()  # the snapshot: the socket works
            return ws.response.headers.get("Sec-WebSocket-Extensions")
    finally:
        await api.aclose()


def test_the_server_declines_websocket_compression_by_default(
    module_server: ServerProcess,
) -> None:
    assert asyncio.run(_extensions(module_server)) is None


def test_an_operator_may_turn_websocket_compression_on(start_server: object) -> None:
    server = start_server(SAHRAT_WS_COMPRESSION="true")  # type: ignore[operator]
    assert "permessage-deflate" in (asyncio.run(_extensions(server)) or "")
