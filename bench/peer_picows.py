"""A bare peer of ``bench_server.py``: a minimal WebSocket ping-pong on picows.

The same answers as ``peer_uvicorn.py`` (every text message gets at once a small JSON
pong carrying the message's ``n``; no state, no database), on the WebSocket library
that serves ``SAHRAT_SOCKET_PORT``, in a uvloop event loop as ``sahrat serve`` runs:
the most a Python server on picows can do per message. A plain HTTP GET (no upgrade)
gets 200, for the benchmark's readiness probe.

    .venv/bin/python bench/peer_picows.py --port 8101
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
from typing import Any

from picows import (
    WSFrame,
    WSListener,
    WSMsgType,
    WSTransport,
    WSUpgradeRequest,
    WSUpgradeResponse,
    WSUpgradeResponseWithListener,
    ws_create_server,
)


class PingPong(WSListener):
    def on_ws_frame(self, transport: WSTransport, frame: WSFrame) -> None:
        if frame.msg_type in (WSMsgType.TEXT, WSMsgType.BINARY):
            data = json.loads(frame.get_payload_as_bytes() or b"{}")
            reply = json.dumps({"type": "pong", "n": data.get("n")}, separators=(",", ":"))
            transport.send(WSMsgType.TEXT, reply)
        elif frame.msg_type == WSMsgType.CLOSE:
            transport.send_close(frame.get_close_code())
            transport.disconnect()


def route(request: WSUpgradeRequest) -> Any:
    if "upgrade" not in request.headers.get("connection", "").lower():  # readiness probe
        ready = WSUpgradeResponse.create_ok_response(
            b'{"ready":true}', {"Content-Type": "application/json"}
        )
        return WSUpgradeResponseWithListener(ready, None)
    return PingPong()


async def serve(host: str, port: int) -> None:
    server = await ws_create_server(route, host, port)
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8101)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    try:
        import uvloop

        run: Any = uvloop.run
    except ImportError:
        run = asyncio.run
    with contextlib.suppress(KeyboardInterrupt):
        run(serve(args.host, args.port))


if __name__ == "__main__":
    main()
