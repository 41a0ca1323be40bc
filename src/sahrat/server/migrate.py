"""Bring the database schema up to date (Alembic), programmatically, at start-up.

:func:`migrate` opens one async connection, begins a transaction and hands
the connection's sync face to Alembic (``config.attributes["connection"]``,
the connection-sharing recipe of Alembic's cookbook), so the upgrade runs in
the server's own event loop through ``AsyncConnection.run_sync`` — no
second loop, no thread.

On PostgreSQL the upgrade first takes a transaction-level advisory lock:
when several server processes start together, one migrates and the others
wait for its commit, then find the schema at head and do nothing. DDL is
transactional on PostgreSQL, so a failed upgrade leaves nothing behind.
SQLite is the embedded single-process store; its writers are serialized
by the database file's lock. Its foreign keys are not enforced during an
upgrade (a batch migration drops and rebuilds tables that other rows refer
to) and are checked once it is done.

The migration scripts live in ``migrations/`` at the repository root (the
package is installed in editable mode); ``SAHRAT_MIGRATIONS`` may point
elsewhere. ``alembic.ini`` is only for the ``alembic`` command line: the
``script_location`` is set here in code.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, text
from sqlalchemy.engine import make_url

from sahrat.store.db import make_engine

log = logging.getLogger("sahrat.migrate")

# Any constant will do, as long as nothing else in the database uses it:
# int.from_bytes(b"sahrat", "big").
ADVISORY_LOCK_KEY = 0x736168726174


def migrations_dir() -> Path:
    """The folder holding ``env.py`` and ``versions/``."""
    override = os.environ.get("SAHRAT_MIGRATIONS")
    if override:
        return Path(override).resolve()
    here = Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent / "migrations"
        if (candidate / "env.py").is_file():
            return candidate
    raise RuntimeError(
        f"cannot find the migrations folder above {here}; set SAHRAT_MIGRATIONS to its path"
    )


def alembic_config(url: str) -> Config:
    """An Alembic config for ``url`` that needs no ``alembic.ini``."""
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    # Passed as an attribute, not a main option: a URL may hold '%' characters
    # that the ini parser would try to interpolate.
    config.attributes["url"] = url
    config.attributes["configure_logger"] = False
    return config


def head_revision() -> str | None:
    script = ScriptDirectory.from_config(alembic_config("sqlite://"))
    return script.get_current_head()


def current_revision(connection: Connection) -> str | None:
    return MigrationContext.configure(connection).get_current_revision()


async def migrate(url: str) -> None:
    """Upgrade the database at ``url`` to the latest revision."""
    config = alembic_config(url)
    head = head_revision()
    engine = make_engine(url)
    backend = make_url(url).get_backend_name()
    try:
        async with engine.connect() as connection:
            if backend == "sqlite":
                # A batch migration rebuilds a SQLite table (copy, DROP, rename): while
                # foreign keys are enforced, dropping a table that other rows refer to
                # fails. They are checked once, after the upgrade, in its transaction.
                await connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
                await connection.commit()
            async with connection.begin():
                if backend == "postgresql":
                    await connection.execute(
                        text("SELECT pg_advisory_xact_lock(:key)"), {"key": ADVISORY_LOCK_KEY}
                    )
                before = await connection.run_sync(current_revision)
                if before == head:
                    log.info("database schema is at head (%s)", head)
                    return

                def upgrade(sync_connection: Connection) -> None:
                    config.attributes["connection"] = sync_connection
                    command.upgrade(config, "head")

                await connection.run_sync(upgrade)
                if backend == "sqlite":
                    broken = (await connection.exec_driver_sql("PRAGMA foreign_key_check")).all()
                    if broken:
                        raise RuntimeError(f"the upgrade broke foreign keys: {broken[:5]}")
                log.info("database schema upgraded from %s to %s", before, head)
    finally:
        await engine.dispose()
