"""The FastAPI application: REST routers, the WebSocket endpoint, and start-up.

At start-up the database is migrated (Alembic), then the hub reloads every
unfinished table from its event log.
"""

from __future__ import annotations

import gc
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from sahrat import __version__
from sahrat.settings import Settings, get_settings
from sahrat.store.db import make_engine

from . import admin, logs, players, routes, ws
from .hub import Hub
from .migrate import migrate


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        logs.install()  # uvicorn's loggers exist by now: keep tokens out of them
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
    app.state.ready = False
    app.include_router(routes.router)
    app.include_router(players.router)
    app.include_router(admin.router)
    app.include_router(ws.router)
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
