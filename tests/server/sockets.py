"""Opening a table's WebSocket as an attacker would, and reading how it ends."""

from __future__ import annotations

import asyncio
from typing import Any

import websockets
from websockets.exceptions import ConnectionClosed

from .harness import ServerProcess


async def socket_url(server: ServerProcess, table_id: int, token: str, **query: str) -> str:
    """The URL a client with ``token`` opens, with extra query parameters."""
    url = await server.ws_url_async(table_id, token)
    extra = "&".join(f"{key}={value}" for key, value in query.items())
    if not extra:
        return url
    return f"{url}{'&' if '?' in url else '?'}{extra}"


async def greeting_or_close(url: str, keep: list[Any] | None = None) -> int | None:
    """Open a socket and wait for its first message: None if the server greeted it
    (the socket is kept open in ``keep``, or closed), else the close code."""
    ws = await websockets.connect(url, open_timeout=10, max_size=2**23)
    try:
        await asyncio.wait_for(ws.recv(), 10)
    except ConnectionClosed:
        return ws.close_code
    if keep is not None:
        keep.append(ws)
    else:
        await ws.close()
    return None
