"""The async database engine: SQLite embedded by default, PostgreSQL in production."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker, create_async_engine


def json_text(value: Any) -> str:
    """JSON columns' text: orjson is several times faster than the standard library's
    encoder on the log's actions (integer keys become strings, as json.dumps does)."""
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


def make_engine(url: str) -> AsyncEngine:
    parsed = make_url(url)
    json_options: dict[str, Any] = {"json_serializer": json_text, "json_deserializer": orjson.loads}
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_async_engine(url, connect_args={"timeout": 30}, **json_options)

        @event.listens_for(engine.sync_engine, "connect")
        def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
            # WAL: readers never block the writer; a committed transaction survives a
            # crash of the process (synchronous=NORMAL syncs at checkpoints).
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()

        return engine
    return create_async_engine(
        url, pool_size=10, max_overflow=10, pool_pre_ping=True, **json_options
    )


def make_sessions(engine: AsyncEngine) -> async_sessionmaker[Any]:
    return async_sessionmaker(engine, expire_on_commit=False)
