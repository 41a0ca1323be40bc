"""A table built from its database rows (``store/tables.py``'s ``load_live``, or a row
just added): the options, the seats and who plays them, the stored deadline. Its match
is replayed from the log afterwards (``Table.restore``)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC

from sahrat.rules.record import options_for
from sahrat.server.table.services import TableServices
from sahrat.server.table.table import Table
from sahrat.store.models import GameTable, Seat


def from_rows(services: TableServices, row: GameTable, seats: Sequence[Seat]) -> Table:
    """A table as its database rows describe it (its match not yet replayed)."""
    players = int(options_for(row.game, row.options).players)
    owners: list[int | None] = [None] * players
    bots: list[str | None] = [None] * players
    left: set[int] = set()
    for seat in seats:
        owners[seat.seat] = seat.user_id
        bots[seat.seat] = seat.bot_level
        if seat.left:
            left.add(seat.seat)
    return Table(
        services,
        table_id=row.id,
        game=row.game,
        options=row.options,
        private=row.private,
        invite_code=row.invite_code,
        creator_id=row.creator_id,
        status=row.status,
        seq=row.seq,
        seats=owners,
        # SQLite gives naive UTC datetimes (asyncpg aware UTC ones), not local time
        deadline=row.deadline_at.replace(tzinfo=UTC).timestamp() if row.deadline_at else None,
        bots=bots,
        left=left,
        addresses={seat.seat: seat.address for seat in seats if seat.address is not None},
        rated=row.rated,
        chat=row.chat,
        friends_watch=row.friends_watch,
        spectator_delay=row.spectator_delay,
        tournament_id=row.tournament_id,
    )
