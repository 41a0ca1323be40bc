"""Rated quick play's queue: its entries in the database, shared by every process.

One entry per player (``queue_entries``): what they wait for, their rating when they
joined, the network they joined from, when they joined and were last heard of (the
client's poll is the heartbeat), and, once seated, the table. A wave of the former
(``sahrat.server.matchmaking``) *claims* the entries it will seat in one short
transaction: on PostgreSQL the waiting entries are read ``FOR UPDATE SKIP LOCKED``, so
that two processes' waves never read one entry both, and those it forms a table from
are marked with the claiming process before the commit, so that no later wave reads
them either; the table is formed after the commit and the entries marked seated.
SQLite is one process, whose waves take turns.

Like the rest of the store, these functions work inside a caller's session.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from .models import GameTable, QueueEntry, Seat


def aware(moment: datetime) -> datetime:
    """A stored time as an aware UTC one (SQLite gives naive UTC datetimes)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


@dataclass(frozen=True)
class Wanted:
    """What a player queues for, with what the queue remembers of them."""

    game: str
    pool: str
    players: int
    threshold: int | None
    speed: str
    turn_seconds: int
    rating: int
    network: str | None


async def entry_of(session: AsyncSession, user_id: int) -> QueueEntry | None:
    found: QueueEntry | None = await session.get(QueueEntry, user_id)
    return found


async def put_entry(
    session: AsyncSession, user_id: int, wanted: Wanted, now: datetime
) -> QueueEntry:
    """Queue ``user_id`` for ``wanted`` (replacing an entry they had: a new queueing).
    Queueing again for the same thing while still waiting keeps the place in the queue
    (a second tap must not send anyone to the back)."""
    old = await entry_of(session, user_id)
    if old is not None and old.table_id is None and _same(old, wanted):
        old.seen_at = now
        old.rating, old.network = wanted.rating, wanted.network
        return old
    if old is not None:
        await session.delete(old)
        await session.flush()
    entry = QueueEntry(
        user_id=user_id,
        game=wanted.game,
        pool=wanted.pool,
        players=wanted.players,
        threshold=wanted.threshold,
        speed=wanted.speed,
        turn_seconds=wanted.turn_seconds,
        rating=wanted.rating,
        network=wanted.network,
        joined_at=now,
        seen_at=now,
    )
    session.add(entry)
    return entry


def _same(entry: QueueEntry, wanted: Wanted) -> bool:
    return (entry.game, entry.pool, entry.players, entry.threshold, entry.speed) == (
        wanted.game,
        wanted.pool,
        wanted.players,
        wanted.threshold,
        wanted.speed,
    )


async def heartbeat(
    session: AsyncSession, user_id: int, now: datetime, stale_before: datetime
) -> None:
    """The player is still there (their client polled): a waiting entry lives on,
    unless it went stale before this poll (not heard of since ``stale_before``): it is
    dropped then, as the next wave would, whether or not one has run since."""
    await session.execute(
        delete(QueueEntry).where(
            QueueEntry.user_id == user_id,
            QueueEntry.table_id.is_(None),
            QueueEntry.claimed_by.is_(None),
            QueueEntry.seen_at < stale_before,
        )
    )
    await session.execute(
        update(QueueEntry)
        .where(QueueEntry.user_id == user_id, QueueEntry.table_id.is_(None))
        .values(seen_at=now)
    )


async def remove_entry(session: AsyncSession, user_id: int) -> bool:
    """Take the player out of the queue, unless a wave is forming their table now
    (then False: the entry stays, and is seated in a moment)."""
    entry = await entry_of(session, user_id)
    if entry is None:
        return True
    if entry.claimed_by is not None and entry.table_id is None:
        return False
    await session.delete(entry)
    return True


async def playing_at(session: AsyncSession, user_id: int, table_id: int) -> bool:
    """Whether the player still sits in a match at ``table_id`` (seated, not left)."""
    found = await session.scalar(
        select(Seat.id)
        .join(GameTable, GameTable.id == Seat.table_id)
        .where(
            Seat.table_id == table_id,
            Seat.user_id == user_id,
            Seat.left.is_(False),
            GameTable.status.in_(("waiting", "playing")),
        )
    )
    return found is not None


async def sweep(
    session: AsyncSession, stale_before: datetime, seated_before: datetime, claim_before: datetime
) -> None:
    """Drop the waiting entries not heard of since ``stale_before`` (the player left the
    page), forget seated ones older than ``seated_before``, and give back to the queue
    the entries a process claimed before ``claim_before`` and never seated (it died
    while forming)."""
    await session.execute(
        delete(QueueEntry).where(
            QueueEntry.table_id.is_(None),
            QueueEntry.claimed_by.is_(None),
            QueueEntry.seen_at < stale_before,
        )
    )
    await session.execute(
        delete(QueueEntry).where(
            QueueEntry.table_id.is_not(None), QueueEntry.seated_at < seated_before
        )
    )
    await session.execute(
        update(QueueEntry)
        .where(
            QueueEntry.table_id.is_(None),
            QueueEntry.claimed_by.is_not(None),
            QueueEntry.claimed_at < claim_before,
        )
        .values(claimed_by=None, claimed_at=None)
    )


async def waiting_locked(session: AsyncSession, stale_before: datetime) -> Sequence[QueueEntry]:
    """The waiting entries nobody claimed, heard of since ``stale_before``, oldest
    first, locked for this transaction: on PostgreSQL ``FOR UPDATE SKIP LOCKED``, so a
    concurrent wave of another process reads none of them."""
    query = (
        select(QueueEntry)
        .where(
            QueueEntry.table_id.is_(None),
            QueueEntry.claimed_by.is_(None),
            QueueEntry.seen_at >= stale_before,
        )
        .order_by(QueueEntry.joined_at, QueueEntry.user_id)
        .with_for_update(skip_locked=True)
    )
    return (await session.scalars(query)).all()


async def claim(
    session: AsyncSession, user_ids: Collection[int], by: str, now: datetime
) -> set[int]:
    """Mark entries as being seated by process ``by``: those still waiting and claimed
    by nobody (the ids returned; on PostgreSQL, those locked in this transaction)."""
    if not user_ids:
        return set()
    claimed = await session.scalars(
        update(QueueEntry)
        .where(
            QueueEntry.user_id.in_(list(user_ids)),
            QueueEntry.table_id.is_(None),
            QueueEntry.claimed_by.is_(None),
        )
        .values(claimed_by=by, claimed_at=now)
        .returning(QueueEntry.user_id)
    )
    return set(claimed.all())


async def release(session: AsyncSession, user_ids: Collection[int], by: str) -> None:
    """Give claimed entries back to the queue, their place kept (the table could not
    be formed)."""
    if user_ids:
        await session.execute(
            update(QueueEntry)
            .where(QueueEntry.user_id.in_(list(user_ids)), QueueEntry.claimed_by == by)
            .values(claimed_by=None, claimed_at=None)
        )


async def drop(session: AsyncSession, user_ids: Collection[int]) -> None:
    """Take entries out of the queue (a player the table refused: suspended, say)."""
    if user_ids:
        await session.execute(delete(QueueEntry).where(QueueEntry.user_id.in_(list(user_ids))))


async def seat(
    session: AsyncSession, user_ids: Collection[int], by: str, table_id: int, now: datetime
) -> None:
    """Mark claimed entries seated at ``table_id``."""
    if user_ids:
        await session.execute(
            update(QueueEntry)
            .where(QueueEntry.user_id.in_(list(user_ids)), QueueEntry.claimed_by == by)
            .values(table_id=table_id, seated_at=now, claimed_by=None, claimed_at=None)
        )


def seconds_between(earlier: datetime, later: datetime) -> float:
    return (aware(later) - aware(earlier)) / timedelta(seconds=1)
