"""The bare peer of ``bench_server.py``: a minimal ASGI WebSocket app on uvicorn.

Every text message is answered at once by a small JSON pong carrying the
message's ``n`` (no state, no database): the most a Python ASGI server on
uvicorn can do per message, with the same uvicorn, event loop and WebSocket
implementation that ``sahrat serve`` uses.

    .venv/bin/python bench/peer_uvicorn.py --port 8100
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import uvicorn


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] == "http":  # readiness probe
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await send({"type": "http.response.body", "body": b'{"ready":true}'})
        return
    if scope["type"] != "websocket":
        return
    message = await receive()
    if message["type"] != "websocket.connect":
        return
    await send({"type": "websocket.accept"})
    while True:
        message = await receive()
        if message["type"] != "websocket.receive":
            return
        data = json.loads(message.get("text") or message.get("bytes") or b"{}")
        reply = json.dumps({"type": "pong", "n": data.get("n")}, separators=(",", ":"))
        await send({"type": "websocket.send", "text": reply})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8100)
    args = parser.parse_args()
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
