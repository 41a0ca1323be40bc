"""The Alembic environment of Sahrat's database.

Two ways in:

* The server calls :func:`sahrat.server.migrate.migrate`, which opens an
  async connection, takes the migration lock, and hands the *sync* face of
  that connection to this script in ``config.attributes["connection"]`` (the
  "connection sharing" recipe of Alembic's cookbook). The upgrade then runs
  inside the caller's transaction and no second event loop is needed.
* The ``alembic`` command line (``alembic upgrade head``, ``alembic revision
  --autogenerate``) reads ``alembic.ini``; this script then makes its own
  async engine and drives it with ``asyncio.run``.

The database URL is ``config.attributes["url"]`` if given, else
``sqlalchemy.url`` from the config, else ``DATABASE_URL`` from
:mod:`sahrat.settings`.
"""

from __future__ import annotations

import asyncio
from logging.config import fileConfig
from pathlib import Path

from alembic import context
from sqlalchemy import pool
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.ext.asyncio import create_async_engine

from sahrat.settings import get_settings
from sahrat.store.models import Base

config = context.config

if config.config_file_name is not None and config.attributes.get("configure_logger", True):
    fileConfig(config.config_file_name, disable_existing_loggers=False)

target_metadata = Base.metadata


def database_url() -> str:
    url = config.attributes.get("url") or config.get_main_option("sqlalchemy.url")
    return str(url) if url else get_settings().database_url


def _configure(**kwargs: object) -> None:
    url = make_url(database_url())
    context.configure(
        target_metadata=target_metadata,
        compare_type=True,
        # SQLite cannot ALTER most things: later revisions use batch mode there.
        render_as_batch=url.get_backend_name() == "sqlite",
        **kwargs,  # type: ignore[arg-type]
    )


def run_migrations_offline() -> None:
    """Emit the SQL to stdout (``alembic upgrade head --sql``)."""
    _configure(url=database_url(), literal_binds=True, dialect_opts={"paramstyle": "named"})
    with context.begin_transaction():
        context.run_migrations()


def do_run_migrations(connection: Connection) -> None:
    _configure(connection=connection)
    with context.begin_transaction():
        context.run_migrations()


async def run_async_migrations() -> None:
    url = make_url(database_url())
    if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:":
        Path(url.database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_async_engine(url, poolclass=pool.NullPool)
    try:
        async with engine.begin() as connection:
            await connection.run_sync(do_run_migrations)
    finally:
        await engine.dispose()


def run_migrations_online() -> None:
    shared = config.attributes.get("connection")
    if shared is not None:
        do_run_migrations(shared)
    else:
        asyncio.run(run_async_migrations())


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
