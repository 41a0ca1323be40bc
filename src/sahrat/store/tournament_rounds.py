"""The tables of a tournament's rounds, what their game tables left behind, and the
admins' schedules of system tournaments (docs/tournaments.md).

A round's tables are written once, all together, when the round is seated (the
``(tournament, round, table)`` key is unique: a second writer fails, it cannot seat
the round twice). Each then gets its game table's id as soon as that table exists,
and its result (places, the match's totals, who a bot finished for) in the
transaction that reads the finished match.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from .models import GameTable, Match, MatchPlayer
from .queue import aware
from .tournament_models import Tournament, TournamentSchedule, TournamentTable


async def tables(session: AsyncSession, tournament_id: int) -> list[TournamentTable]:
    rows = await session.scalars(
        select(TournamentTable)
        .where(TournamentTable.tournament_id == tournament_id)
        .order_by(TournamentTable.round_no, TournamentTable.table_no)
    )
    return list(rows.all())


async def seat_round(
    session: AsyncSession, tournament_id: int, round_no: int, seats: Sequence[Sequence[int]]
) -> None:
    """The tables of a round, none opened yet."""
    for table_no, table_seats in enumerate(seats, start=1):
        session.add(
            TournamentTable(
                tournament_id=tournament_id,
                round_no=round_no,
                table_no=table_no,
                seats=list(table_seats),
                state="waiting",
            )
        )
    await session.flush()


async def opened(session: AsyncSession, row_id: int, tournament_id: int, table_id: int) -> None:
    """The round's table is played at game table ``table_id`` (marked as the
    tournament's, so that it knows)."""
    await session.execute(
        update(TournamentTable)
        .where(TournamentTable.id == row_id, TournamentTable.table_id.is_(None))
        .values(table_id=table_id),
        execution_options={"synchronize_session": False},
    )
    await session.execute(
        update(GameTable).where(GameTable.id == table_id).values(tournament_id=tournament_id),
        execution_options={"synchronize_session": False},
    )


async def table_status(session: AsyncSession, table_id: int) -> str | None:
    status: str | None = await session.scalar(
        select(GameTable.status).where(GameTable.id == table_id)
    )
    return status


async def first_match(
    session: AsyncSession, table_id: int
) -> tuple[Match, list[MatchPlayer]] | None:
    """The first finished match of a game table (the tournament's; a rematch its
    players may play after it is theirs), with its people's rows."""
    match = (
        await session.scalars(select(Match).where(Match.table_id == table_id).order_by(Match.id))
    ).first()
    if match is None:
        return None
    players = await session.scalars(select(MatchPlayer).where(MatchPlayer.match_id == match.id))
    return match, list(players.all())


def finish(
    row: TournamentTable,
    places: Mapping[int, int],
    totals: Mapping[int, int],
    dropped: Collection[int],
    match_id: int | None,
) -> None:
    """A table's result (JSON keys are strings: entry ids as text)."""
    row.places = {str(entry): int(place) for entry, place in places.items()}
    row.totals = {str(entry): int(total) for entry, total in totals.items()}
    row.dropped = sorted(dropped)
    row.match_id = match_id
    row.state = "finished"


def places_of(row: TournamentTable) -> dict[int, int] | None:
    return None if row.places is None else {int(k): int(v) for k, v in row.places.items()}


def totals_of(row: TournamentTable) -> dict[int, int]:
    return {int(k): int(v) for k, v in (row.totals or {}).items()}


# --- schedules -------------------------------------------------------------------------


async def schedules(session: AsyncSession) -> list[TournamentSchedule]:
    rows = await session.scalars(select(TournamentSchedule).order_by(TournamentSchedule.id))
    return list(rows.all())


async def add_schedule(session: AsyncSession, **fields: Any) -> TournamentSchedule:
    row = TournamentSchedule(**fields)
    session.add(row)
    await session.flush()
    return row


async def delete_schedule(session: AsyncSession, schedule_id: int) -> bool:
    """Stop a schedule (the tournaments it made go on)."""
    done = await session.execute(
        delete(TournamentSchedule).where(TournamentSchedule.id == schedule_id)
    )
    return bool(done.rowcount)  # type: ignore[attr-defined]


async def due_schedules(session: AsyncSession, now: datetime) -> list[TournamentSchedule]:
    """Schedules whose next tournament opens for registration by ``now`` (locked on
    PostgreSQL, so that two processes do not both make it)."""
    rows = await session.scalars(
        select(TournamentSchedule).order_by(TournamentSchedule.id).with_for_update()
    )
    return [
        row for row in rows.all() if aware(row.next_at) - timedelta(minutes=row.open_minutes) <= now
    ]


async def made_from(session: AsyncSession, schedule_id: int, starts_at: datetime) -> bool:
    """Whether the schedule's tournament starting then exists already."""
    found = await session.scalar(
        select(Tournament.id).where(
            Tournament.schedule_id == schedule_id, Tournament.starts_at == starts_at
        )
    )
    return found is not None


def advance_schedule(row: TournamentSchedule, now: datetime) -> None:
    """The schedule's next start after the one just made (starts missed while no
    process ran are skipped, not made late)."""
    step = timedelta(minutes=row.every_minutes)
    next_at = aware(row.next_at) + step
    while next_at <= now:
        next_at += step
    row.next_at = next_at
