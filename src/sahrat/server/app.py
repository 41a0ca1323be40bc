"""The FastAPI application: REST routers, the WebSocket endpoint, and start-up.

At start-up the database is migrated (Alembic, unless a one-off ``sahrat
migrate`` does it), then the hub reloads every unfinished table from its
event log (or, in a cluster, joins the others and takes the tables nobody
serves). With ``SAHRAT_SOCKET_PORT`` the table sockets are served on that port too,
in the same loop (``socket/picows_server.py``).

``/metrics`` serves Prometheus metrics to whoever may read them: with
``SAHRAT_METRICS_PORT`` only on that port (of ``SAHRAT_METRICS_HOST``, loopback
by default); with ``SAHRAT_METRICS_TOKEN`` to requests bearing that token; with
neither, to clients on this machine (loopback) only. Everyone else gets 404, as
for a page that does not exist. Every HTTP response carries the security headers
of ``edge.py``.

A shutdown (SIGTERM or Ctrl-C) first hands every table over — leases
released, clients told to reconnect — and only then closes the sockets, so
the other processes take the tables at once instead of after a lease time.
"""

from __future__ import annotations

import gc
import ipaddress
import os
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest, start_http_server
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

from sahrat import __version__
from sahrat.server import addresses, logs, metrics
from sahrat.server.analysis_pool import AnalysisPool
from sahrat.server.api import (
    accounts,
    admin,
    analysis,
    chat,
    docs,
    friends,
    health,
    invitations,
    leaderboards,
    matches,
    me,
    queue,
    ratings,
    tables,
    tickets,
    tournaments,
)
from sahrat.server.assets import ClientFiles
from sahrat.server.cluster.cluster import placement_for
from sahrat.server.edge import SameSiteWrites, SecurityHeaders, slow_request_guard
from sahrat.server.hub import RUNNING, Hub
from sahrat.server.matchmaking.former import Former
from sahrat.server.migrate import migrate
from sahrat.server.rated_seats import seat_from_queue
from sahrat.server.socket import ws
from sahrat.server.socket.dispatch import handle_text
from sahrat.server.socket.picows_server import start_socket_server
from sahrat.server.tournaments.runner import Runner
from sahrat.server.tournaments.service import Tournaments
from sahrat.settings import Settings, get_settings
from sahrat.store.db import make_engine


async def _database_unavailable(_request: Request, error: Exception) -> JSONResponse:
    """A request that needed the database while it was unreachable: 503, retry."""
    if isinstance(error, DBAPIError) and not (
        error.connection_invalidated or isinstance(error, OperationalError | InterfaceError)
    ):
        raise error  # not an outage: a bug, and a 500
    return JSONResponse(
        {"detail": {"code": "unavailable", "message": "the database is unreachable; try again"}},
        status_code=503,
        headers={"Retry-After": "2"},
    )


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    addresses.use_ipv6_prefix(settings.ipv6_network_prefix)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        logs.install(settings.log_format)  # uvicorn's loggers exist by now
        if settings.migrate_on_start:
            await migrate(settings.database_url)
        engine = make_engine(settings.database_url)
        # Alone, every table is served here; with Redis, where its lease says. A socket
        # forwarded from another process is read by the same dispatcher as a local one.
        hub = Hub(settings, engine, placement_for(settings, handle_text))
        await hub.start()
        # Rated quick play: this process's waves of the queue, seating through the hub.
        former = Former(settings, hub.sessions, partial(seat_from_queue, hub))
        former.start()
        app.state.former = former
        # Tournaments: this process's runner (leases: one process steps a tournament).
        runner = Runner(hub, hub.sessions, settings)
        runner.start()
        app.state.tournaments = Tournaments(hub, hub.sessions, settings, runner.poke)
        # Finished matches' analyses: worker processes, started at the first request.
        analyses = AnalysisPool(settings.analysis_workers, settings.analysis_queue, hub.sessions)
        app.state.analysis = analyses
        metrics_server = (
            start_http_server(settings.metrics_port, addr=settings.metrics_host)[0]
            if settings.metrics_port is not None
            else None
        )
        # What start-up built (modules, reloaded tables) lives as long as the process:
        # freeze it out of the collector, and collect the young generation less often.
        # Full collections of a large heap were the server's long latency tail.
        gc.collect()
        gc.freeze()
        gc.set_threshold(20_000, 50, 50)
        app.state.hub = hub
        # The table sockets on a port of their own too, in this loop (picows_server.py).
        socket_server = (
            await start_socket_server(hub, settings.host, settings.socket_port)
            if settings.socket_port is not None
            else None
        )
        metrics.watch_event_loop()  # the event loop's lag, at /metrics
        app.state.ready = True
        try:
            yield
        finally:
            app.state.ready = False
            if socket_server is not None:
                await socket_server.stop()
            if metrics_server is not None:
                metrics_server.shutdown()
            await analyses.close()
            await runner.stop()
            await former.stop()
            await hub.stop()
            await engine.dispose()

    # /docs and /redoc are api/docs.py's pages, whose scripts the package ships (no CDN).
    app = FastAPI(
        title="Sahrat", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None
    )
    # The database out of reach (refused, reset, timed out): a 503 to retry, not a 500.
    app.add_exception_handler(ConnectionError, _database_unavailable)
    app.add_exception_handler(TimeoutError, _database_unavailable)
    app.add_exception_handler(DBAPIError, _database_unavailable)
    app.state.ready = False
    routers = (health, accounts, me, tables, queue, tickets, matches, leaderboards, ratings)
    for api in (*routers, analysis, admin, chat, friends, invitations, tournaments):
        app.include_router(api.router)  # the REST API, one router per resource (api/)
    app.include_router(tournaments.admin_router)
    app.include_router(ws.router)
    docs.install(app)
    # Other sites' pages may not sign their visitors up or in (edge.py); inside
    # SecurityHeaders, so that its refusals carry the headers too.
    app.add_middleware(SameSiteWrites, allowed_origins=settings.allowed_origins)
    app.add_middleware(SecurityHeaders)
    app.add_middleware(ws.SocketChannels)  # added last: the outermost

    @app.get("/metrics", include_in_schema=False)
    async def prometheus_metrics(request: Request) -> Response:
        if not metrics_readable(request, settings):
            return JSONResponse({"detail": "Not Found"}, status_code=404)
        return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)

    static = static_dir()
    if static is not None:
        # The browser client: plain files, no build step, served at versioned paths and
        # compressed (assets.py). Mounted last so the API wins.
        app.mount("/", ClientFiles(static), name="static")
    return app


def metrics_readable(request: Request, settings: Settings) -> bool:
    """May this request read /metrics on the public port (see the module's docstring)?"""
    if settings.metrics_port is not None:
        return False
    if settings.metrics_token:
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        return scheme.lower() == "bearer" and secrets.compare_digest(
            given.strip().encode(), settings.metrics_token.encode()
        )
    try:  # the client's address, as uvicorn took it from a trusted proxy's header
        return ipaddress.ip_address(request.client.host if request.client else "").is_loopback
    except ValueError:
        return False


def uvicorn_config(
    settings: Settings, host: str, port: int, log_level: str | None
) -> uvicorn.Config:
    """``sahrat serve``'s uvicorn: the app, with the limits and timeouts a server exposed
    to the internet needs (a reverse proxy in front adds its own: docs/operations.md)."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    return uvicorn.Config(
        "sahrat.server.app:create_app",
        factory=True,
        host=host,
        port=port,
        log_level=log_level,
        log_config=None if settings.log_format == "json" else uvicorn.config.LOGGING_CONFIG,
        http=slow_request_guard(
            AutoHTTPProtocol, settings.request_timeout_seconds, settings.max_request_head_bytes
        ),
        h11_max_incomplete_event_size=settings.max_request_head_bytes,
        timeout_keep_alive=settings.keep_alive_seconds,
        limit_concurrency=settings.max_connections,
        ws_max_size=settings.max_frame_bytes,
        ws_ping_interval=settings.ws_ping_seconds,
        ws_ping_timeout=settings.ws_ping_seconds,
        ws_per_message_deflate=settings.ws_compression,
    )


def static_dir() -> Path | None:
    """The browser client's folder: ``SAHRAT_STATIC_DIR``, or ``static/`` of the checkout."""
    override = os.environ.get("SAHRAT_STATIC_DIR")
    if override:
        return Path(override)
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "static"
        if (candidate / "index.html").is_file():
            return candidate
    return None


class GracefulServer(uvicorn.Server):
    """uvicorn, handing the tables over before it closes the connections."""

    async def shutdown(self, sockets: list[Any] | None = None) -> None:
        for hub in list(RUNNING):
            await hub.hand_over()
        await super().shutdown(sockets)
