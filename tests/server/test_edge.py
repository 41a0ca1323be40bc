"""The server's edge, attacked as if it faced the internet without a proxy: clients that
send a request slowly (slowloris) are disconnected, every response carries the headers
that keep the page from being framed, sniffed or made to run foreign script, and
``/metrics`` answers only whom the settings allow."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable

import httpx
import pytest

from .harness import Api, ServerProcess, WireClient, free_port

# why this module runs on SQLite only in make test (conftest.py)
ONE_DATABASE = (
    "the edge (slow clients, headers, /metrics access) is the HTTP server's, before any query"
)

REQUEST_TIMEOUT = 1.0
GIVE_UP = 20.0  # far beyond the timeout: an old server never closes these at all


async def _seconds_until_closed(port: int, chunks: list[bytes], drip: float = 0.0) -> float:
    """Connect, send ``chunks`` (``drip`` seconds apart, then a byte every ``drip``
    seconds as long as the server listens), and read until the server closes the
    connection: how long that took (``GIVE_UP`` if it never did)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    start = time.monotonic()
    try:
        for chunk in chunks:
            writer.write(chunk)
            await writer.drain()
            if drip:
                await asyncio.sleep(drip)
        while time.monotonic() - start < GIVE_UP:
            try:
                data = await asyncio.wait_for(reader.read(65536), drip or GIVE_UP)
            except TimeoutError:
                writer.write(b"X")  # a byte now and then keeps a naive timer happy
                await writer.drain()
                continue
            except ConnectionError:
                break
            if not data:
                break
        return time.monotonic() - start
    except ConnectionError:
        return time.monotonic() - start
    finally:
        writer.close()


SLOW_CLIENTS = {
    "silent": ([b""], 0.0),
    "half a request line": ([b"GET /api/tables HT"], 0.0),
    "headers never ended": ([b"GET / HTTP/1.1\r\nHost: x\r\n"], 0.0),
    "a header byte at a time": ([b"GET / HTTP/1.1\r\n", b"X"], 0.3),
    "body never finished": (
        [b"POST /api/guests HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789"],
        0.0,
    ),
    "endless headers": ([b"GET / HTTP/1.1\r\n" + b"X-Pad: " + b"a" * 40_000], 0.0),
    "second request left half-sent": (
        [b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", b"GET /healthz HTTP/1.1\r\nHo"],
        0.2,
    ),
}


async def _slow_clients(server: ServerProcess) -> dict[str, float]:
    return dict(
        zip(
            SLOW_CLIENTS,
            await asyncio.gather(
                *(
                    _seconds_until_closed(server.port, chunks, drip)
                    for chunks, drip in SLOW_CLIENTS.values()
                )
            ),
            strict=True,
        )
    )


def test_slow_clients_are_disconnected(module_servers: Callable[..., ServerProcess]) -> None:
    server = module_servers(SAHRAT_REQUEST_TIMEOUT_SECONDS=str(REQUEST_TIMEOUT))
    taken = asyncio.run(_slow_clients(server))
    print("seconds until closed:", {k: round(v, 2) for k, v in taken.items()})
    never = [name for name, seconds in taken.items() if seconds >= GIVE_UP]
    assert not never, f"still connected after {GIVE_UP}s: {never}"
    assert httpx.get(f"{server.base_url}/healthz", timeout=10).status_code == 200


async def _patient_socket(server: ServerProcess) -> None:
    api = Api(server)
    token, _ = await api.guest()
    info = await api.create_table(token, "conquian", {})
    client = await WireClient.connect(server, info["id"], token, name="patient")
    await asyncio.sleep(REQUEST_TIMEOUT * 2.5)
    await client.roundtrip()
    assert not client.closed
    await client.close()
    await api.aclose()


def test_an_open_websocket_outlasts_the_request_timeout(
    module_servers: Callable[..., ServerProcess],
) -> None:
    """The request timeout is for requests arriving; a WebSocket past its handshake is
    left to its pings."""
    server = module_servers(SAHRAT_REQUEST_TIMEOUT_SECONDS=str(REQUEST_TIMEOUT))
    asyncio.run(_patient_socket(server))


def test_pages_and_api_carry_security_headers(module_server: ServerProcess) -> None:
    server = module_server
    for path in ("/", "/index.html", "/api/tables", "/healthz", "/no-such-page"):
        response = httpx.get(f"{server.base_url}{path}", timeout=10)
        headers = response.headers
        assert headers.get("x-content-type-options") == "nosniff", path
        assert headers.get("referrer-policy") == "no-referrer", path
        assert headers.get("x-frame-options") == "DENY", path
        policy = headers.get("content-security-policy", "")
        assert "frame-ancestors 'none'" in policy, path
        assert "script-src 'self'" in policy and "'unsafe-inline'" not in policy, path
    # The policy fits the page: it runs no inline script or style (which it would block).
    page = httpx.get(f"{server.base_url}/", timeout=10).text
    scripts = re.findall(r"<script\b[^>]*>", page)
    assert scripts and all(" src=" in tag for tag in scripts), scripts
    assert "<style" not in page and not re.search(r"<[^>]*\s(style|on[a-z]+)\s*=", page)


def _metrics(server: ServerProcess, port: int | None = None, **headers: str) -> int:
    url = f"http://127.0.0.1:{port or server.port}/metrics"
    return httpx.get(url, headers=headers, timeout=10).status_code


@pytest.mark.parametrize("guard", ["default", "token", "port"])
def test_metrics_answer_only_whom_the_settings_allow(
    module_servers: Callable[..., ServerProcess], guard: str
) -> None:
    # From elsewhere: through a proxy on this machine that names the real client (uvicorn
    # trusts X-Forwarded-For from 127.0.0.1).
    stranger = {"X-Forwarded-For": "203.0.113.7"}
    if guard == "default":  # the machine itself (a local Prometheus) may read them
        server = module_servers()
        assert _metrics(server) == 200
        assert _metrics(server, **stranger) == 404
    elif guard == "token":
        server = module_servers(SAHRAT_METRICS_TOKEN="scrape-me")
        assert _metrics(server) == 404
        assert _metrics(server, Authorization="Bearer wrong") == 404
        assert _metrics(server, Authorization="Bearer scrape-me", **stranger) == 200
    else:
        port = free_port()
        server = module_servers(SAHRAT_METRICS_PORT=str(port))
        assert _metrics(server) == 404
        text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
        assert "sahrat_connections" in text
