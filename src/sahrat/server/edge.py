"""What the server does at its edge, for when it faces the internet without a proxy.

``SecurityHeaders``: every HTTP response says what a browser may do with it — the
page runs only its own scripts and styles and talks only to its own origin (a
Content-Security-Policy fitting the static client: no inline script or style, the
favicon a ``data:`` image, the WebSocket same-origin), may not be framed
(clickjacking), is never content-sniffed and sends no referrer.

``SameSiteWrites``: a page of another site can make its visitor's browser send
requests here (a form, a ``fetch``); a request that changes something and that no
bearer token authenticates (a guest, a sign-up, a login) would then act for the
visitor — make guests for them, sign them in to an account of the page's choosing. So
every POST, PUT, PATCH or DELETE without ``Authorization: Bearer`` is refused, 403
``bad_origin``, when the browser says another site sent it: its ``Origin`` is not one
this server serves (:func:`origin_allowed`, the WebSocket's own rule and setting,
``SAHRAT_ALLOWED_ORIGINS``), or, without an ``Origin``, ``Sec-Fetch-Site`` names
another site. A request with neither header is no browser's cross-site request
(current browsers send ``Origin`` with every POST, ``Sec-Fetch-Site`` with every
request): programs — curl, the ``sahrat`` terminal client — pass. A bearer token is never sent
by a browser on its own, and to another site only after a CORS approval this server
never gives, so requests that carry one are the token holder's and are not checked.

``slow_request_guard``: uvicorn times out idle keep-alive connections but not a
request that arrives slowly — a client that opens a connection and sends half a
request line, a byte now and then, holds a connection (and a file descriptor)
forever (slowloris). The guarded protocol closes a connection whose request (line,
headers and body) has not fully arrived within ``SAHRAT_REQUEST_TIMEOUT_SECONDS``
of the connection's opening or of its previous response, or whose request line and
headers pass ``SAHRAT_MAX_REQUEST_HEAD_BYTES``. Once a WebSocket is open, its pings
(``SAHRAT_WS_PING_SECONDS``) find dead clients instead.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
_COMMON = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),  # frame-ancestors for browsers without CSP level 2
    (b"cross-origin-opener-policy", b"same-origin"),
]
_PAGE = [*_COMMON, (b"content-security-policy", CONTENT_SECURITY_POLICY.encode())]
# The API explorer (/docs, /redoc: api/docs.py) loads the scripts the package ships and
# runs one inline script of FastAPI's; ReDoc styles inline and searches in a blob worker.
# Nothing from another origin, as on the game's pages.
EXPLORER_POLICY = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; "
    "style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; "
    "connect-src 'self'; worker-src 'self' blob:; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
_EXPLORER = [*_COMMON, (b"content-security-policy", EXPLORER_POLICY.encode())]
_EXPLORER_PATHS = frozenset({"/docs", "/docs/oauth2-redirect", "/redoc"})


class SecurityHeaders:
    """Pure ASGI middleware adding the headers above to each HTTP response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = _EXPLORER if scope["path"] in _EXPLORER_PATHS else _PAGE

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), *extra]
            await send(message)

        await self.app(scope, receive, send_with_headers)


def origin_allowed(origin: str | None, host: str | None, allowed: str) -> bool:
    """A browser page may act here (open a WebSocket, send a request that changes
    something) if it comes from an allowed origin: those ``allowed`` lists
    (``SAHRAT_ALLOWED_ORIGINS``; ``*`` any), or with none listed the server's own (the
    ``Host`` it was asked for). A program that sends no Origin is not a page."""
    if origin is None:
        return True
    listed = {item.strip().rstrip("/") for item in allowed.split(",") if item.strip()}
    if "*" in listed or origin.rstrip("/") in listed:
        return True
    return not listed and host is not None and urlsplit(origin).netloc == host


STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# what Sec-Fetch-Site says of a request the page's own origin (or the user) made
OWN_FETCH_SITES = frozenset({"same-origin", "none"})
MAX_ORIGIN_SHOWN = 100


def foreign_page(headers: Headers, allowed: str) -> str | None:
    """Why the browser says another site's page sent this request, or None: its Origin
    is not allowed, or without an Origin its Sec-Fetch-Site is not the server's own."""
    origin = headers.get("origin")
    if origin is not None:
        if origin_allowed(origin, headers.get("host"), allowed):
            return None
        return f"pages from {origin[:MAX_ORIGIN_SHOWN]} may not do this here"
    site = headers.get("sec-fetch-site")
    if site is not None and site.lower() not in OWN_FETCH_SITES:
        return "pages of another site may not do this here"
    return None


def _bearer(headers: Headers) -> bool:
    scheme, _, token = headers.get("authorization", "").partition(" ")
    return scheme.lower() == "bearer" and bool(token.strip())


class SameSiteWrites:
    """Pure ASGI middleware: a state-changing HTTP request that no bearer token
    authenticates is refused 403 ``bad_origin`` when another site's page sent it (see
    the module's docstring), before any route sees it."""

    def __init__(self, app: ASGIApp, allowed_origins: str = "") -> None:
        self.app = app
        self.allowed = allowed_origins

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in STATE_CHANGING:
            headers = Headers(scope=scope)
            why = None if _bearer(headers) else foreign_page(headers, self.allowed)
            if why is not None:
                await _refuse(send, why)
                return
        await self.app(scope, receive, send)


async def _refuse(send: Send, message: str) -> None:
    body = json.dumps({"detail": {"code": "bad_origin", "message": message}}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 403,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def slow_request_guard(base: type[Any], timeout: float, max_head_bytes: int) -> type[Any]:
    """uvicorn's HTTP protocol class ``base`` (httptools or h11: both keep the request
    in progress as ``cycle``), closing connections whose request arrives too slowly."""

    class SlowRequestGuard(base):  # type: ignore[misc]
        _deadline: asyncio.TimerHandle | None = None
        _head_bytes = 0

        def connection_made(self, transport: asyncio.Transport) -> None:
            super().connection_made(transport)
            self._arm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._arm()  # the next request on this connection gets as long

        def connection_lost(self, exc: Exception | None) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            waiting = self._awaiting_head()
            super().data_received(data)
            if waiting and self._awaiting_head():
                self._head_bytes += len(data)
                if self._head_bytes > max_head_bytes:
                    self.transport.close()

        def _awaiting_head(self) -> bool:
            """No request on this connection has its line and headers complete since
            the last response."""
            return self.cycle is None or bool(self.cycle.response_complete)

        def _arm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
            self._head_bytes = 0
            self._deadline = self.loop.call_later(timeout, self._expire)

        def _expire(self) -> None:
            self._deadline = None
            transport = self.transport
            if transport.is_closing() or transport.get_protocol() is not self:
                return  # closed, or upgraded to a WebSocket
            if self._awaiting_head() or self.cycle.more_body:
                transport.close()

    return SlowRequestGuard
