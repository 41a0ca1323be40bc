"""The FastAPI application: REST routers, the WebSocket endpoint, and start-up.

At start-up the database is migrated (Alembic, unless a one-off ``sahrat
migrate`` does it), then the hub reloads every unfinished table from its
event log (or, in a cluster, joins the others and takes the tables nobody
serves). ``/metrics`` serves Prometheus metrics.

A shutdown (SIGTERM or Ctrl-C) first hands every table over — leases
released, clients told to reconnect — and only then closes the sockets, so
the other processes take the tables at once instead of after a lease time.
"""

from __future__ import annotations

import gc
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

from sahrat import __version__
from sahrat.settings import Settings, get_settings
from sahrat.store.db import make_engine

from . import admin, logs, players, routes, ws
from .hub import RUNNING, Hub
from .migrate import migrate


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

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        logs.install(settings.log_format)  # uvicorn's loggers exist by now
        if settings.migrate_on_start:
            await migrate(settings.database_url)
        engine = make_engine(settings.database_url)
        hub = Hub(settings, engine)
        await hub.start()
        # What start-up built (modules, reloaded tables) lives as long as the process:
        # freeze it out of the collector, and collect the young generation less often.
        # Full collections of a large heap were the server's long latency tail.
        gc.collect()
        gc.freeze()
        gc.set_threshold(20_000, 50, 50)
        app.state.hub = hub
        app.state.ready = True
        try:
            yield
        finally:
            app.state.ready = False
            await hub.stop()
            await engine.dispose()

    app = FastAPI(title="Sahrat", version=__version__, lifespan=lifespan)
    # The database out of reach (refused, reset, timed out): a 503 to retry, not a 500.
    app.add_exception_handler(ConnectionError, _database_unavailable)
    app.add_exception_handler(TimeoutError, _database_unavailable)
    app.add_exception_handler(DBAPIError, _database_unavailable)
    app.state.ready = False
    app.include_router(routes.router)
    app.include_router(players.router)
    app.include_router(admin.router)
    app.include_router(ws.router)

    @app.get("/metrics", include_in_schema=False)
    async def prometheus_metrics() -> Response:
        return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)

    static = static_dir()
    if static is not None:
        # The browser client: plain files, no build step. Mounted last so the API wins.
        app.mount("/", StaticFiles(directory=static, html=True), name="static")
    return app


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
