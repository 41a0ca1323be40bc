"""The live tables of a cluster, as the database lists them.

Alone, a process serves every live table, and the lobby and the invite codes are
answered from its memory (``Solo``). In a cluster each process serves only some, so
the lobby and the invite codes come from the database, which has them all; presence
is not kept there (``store/tables.lobby_page`` says what the lobby shows instead). A
table this process serves is shown as it is here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import async_sessionmaker

from sahrat.server.cluster.placement import Host, TableQuery
from sahrat.server.table.table import Table
from sahrat.store import tables as rows
from sahrat.store.models import GameTable, Seat
from sahrat.store.tables import in_session


class CatalogHost(Host, Protocol):
    """What listing needs of the process (``Hub``): its database, its tables and names,
    and how a table is made from its rows."""

    sessions: async_sessionmaker[Any]
    names: dict[int, str]

    def remember_name(self, user_id: int, name: str) -> None: ...
    def table_from_row(self, row: GameTable, seats: Sequence[Seat]) -> Table: ...


async def list_tables(host: CatalogHost, query: TableQuery) -> list[dict[str, Any]]:
    """The tables ``query`` shows, each as ``query.viewer`` sees it."""
    found = await in_session(
        host.sessions,
        lambda session: rows.lobby_page(
            session,
            statuses=query.statuses,
            after=query.after,
            private=query.private,
            game=query.game,
            lobby=query.lobby,
            limit=query.limit,
            known=host.names,
        ),
    )
    for user_id, name in found.names.items():
        host.remember_name(user_id, name)
    shown = (
        host.tables.get(row.id) or host.table_from_row(row, found.seats[row.id])
        for row in found.rows
    )
    return [table.info(query.viewer) for table in shown]


async def by_invite(host: CatalogHost, code: str) -> int | None:
    """The id of the live table with this invite code."""
    return await in_session(host.sessions, lambda session: rows.live_id_by_invite(session, code))
