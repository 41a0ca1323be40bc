"""Tournaments in the database: the tournaments and their entries, and their coins
(docs/tournaments.md, "Coins").

Each paid tournament has an escrow account ``tour:<id>`` in the ledger. A registration
moves the fee from the player into it (``tournament:<id>:fee:<entry>``) in the
transaction that adds the entry; a withdrawal before the start, or a cancel, moves
it back (``...:refund:<entry>``). The result's prizes (``...:prize:<entry>``) and the
house's share (``...:house``) leave the escrow in the one transaction that marks the
tournament finished, so the escrow ends at zero. Every movement has its idempotency
key: a retry, or a second process carrying the same step on, never pays twice.

A process carries a tournament on only while it holds its lease (:func:`claim`), as the
queue's former claims its entries: so no two processes run a step of one tournament
at once, and one that died is replaced once its lease is past.

Like the rest of the store, these functions work inside a caller's session (and, for a
write, the caller's transaction).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime, timedelta

from sqlalchemy import func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from . import ledger
from .queue import aware
from .tournament_models import Tournament, TournamentComplaint, TournamentEntry

ACTIVE = ("registering", "running", "complaints")  # the states the runner carries on
ENDED = ("finished", "cancelled")
FEE, REFUND, PRIZE, HOUSE_SHARE = (
    "tournament_fee",
    "tournament_refund",
    "tournament_prize",
    "tournament_house",
)


def escrow_account(tournament_id: int) -> str:
    """The ledger account that holds a tournament's fees until they are paid out."""
    return f"tour:{tournament_id}"


def _key(tournament_id: int, what: str) -> str:
    return f"tournament:{tournament_id}:{what}"


async def get(session: AsyncSession, tournament_id: int, lock: bool = False) -> Tournament | None:
    """A tournament (``lock``: its row locked for the transaction, on PostgreSQL)."""
    query = select(Tournament).where(Tournament.id == tournament_id)
    if lock:
        query = query.with_for_update()
    found: Tournament | None = (await session.scalars(query)).first()
    return found


async def add(session: AsyncSession, **fields: object) -> Tournament:
    """A new tournament, registering (its row comes back with its id)."""
    row = Tournament(state="registering", current_round=0, pool=0, version=1, **fields)
    session.add(row)
    await session.flush()
    return row


def bump(tournament: Tournament) -> None:
    """Something a page shows changed."""
    tournament.version = (tournament.version or 0) + 1


async def made_and_open(session: AsyncSession, user_id: int) -> int:
    """The tournaments this account made that have not ended."""
    count = await session.scalar(
        select(func.count())
        .select_from(Tournament)
        .where(Tournament.made_by == user_id, Tournament.state.in_(ACTIVE))
    )
    return int(count or 0)


async def listed(session: AsyncSession, states: Collection[str], limit: int) -> list[Tournament]:
    """Tournaments in ``states``: the coming and running soonest first, the ended ones
    latest first."""
    order = Tournament.starts_at.desc() if set(states) <= set(ENDED) else Tournament.starts_at
    rows = await session.scalars(
        select(Tournament)
        .where(Tournament.state.in_(list(states)))
        .order_by(order, Tournament.id)
        .limit(limit)
    )
    return list(rows.all())


async def registered_counts(session: AsyncSession, ids: Sequence[int]) -> dict[int, int]:
    """The registered people (not bots) of each tournament."""
    if not ids:
        return {}
    rows = await session.execute(
        select(TournamentEntry.tournament_id, func.count())
        .where(TournamentEntry.tournament_id.in_(list(ids)), TournamentEntry.bot.is_(False))
        .group_by(TournamentEntry.tournament_id)
    )
    found = {int(tid): int(count) for tid, count in rows.all()}
    return {tid: found.get(tid, 0) for tid in ids}


async def entries(session: AsyncSession, tournament_id: int) -> list[TournamentEntry]:
    """A tournament's entries, in the order they came (bots last: added at the start)."""
    rows = await session.scalars(
        select(TournamentEntry)
        .where(TournamentEntry.tournament_id == tournament_id)
        .order_by(TournamentEntry.id)
    )
    return list(rows.all())


async def network_taken(session: AsyncSession, tournament_id: int, network: str) -> bool:
    """Whether an entrant of the tournament registered from ``network``."""
    found = await session.scalar(
        select(TournamentEntry.id).where(
            TournamentEntry.tournament_id == tournament_id, TournamentEntry.network == network
        )
    )
    return found is not None


async def entry_of(
    session: AsyncSession, tournament_id: int, user_id: int
) -> TournamentEntry | None:
    found: TournamentEntry | None = (
        await session.scalars(
            select(TournamentEntry).where(
                TournamentEntry.tournament_id == tournament_id,
                TournamentEntry.user_id == user_id,
            )
        )
    ).first()
    return found


async def register(
    session: AsyncSession,
    tournament: Tournament,
    user_id: int,
    name: str,
    rating: int,
    network: str | None = None,
) -> TournamentEntry:
    """Enter a player (the tournament's row locked by the caller, its seats checked):
    the entry, and its fee into the escrow, in the caller's transaction. Raises
    ``ledger.Overdraft`` if the player cannot pay (the caller rolls back)."""
    entry = TournamentEntry(
        tournament_id=tournament.id,
        user_id=user_id,
        name=name,
        bot=False,
        rating=rating,
        fee_paid=tournament.fee,
        prize=0,
        network=network,
    )
    session.add(entry)
    await session.flush()
    if tournament.fee > 0:
        await ledger.post(
            session,
            ledger.Movement(
                _key(tournament.id, f"fee:{entry.id}"),
                ledger.user_account(user_id),
                escrow_account(tournament.id),
                tournament.fee,
                FEE,
            ),
        )
    bump(tournament)
    return entry


async def _refund(session: AsyncSession, tournament: Tournament, entry: TournamentEntry) -> None:
    if entry.fee_paid > 0 and entry.user_id is not None:
        await ledger.post(
            session,
            ledger.Movement(
                _key(tournament.id, f"refund:{entry.id}"),
                escrow_account(tournament.id),
                ledger.user_account(entry.user_id),
                entry.fee_paid,
                REFUND,
            ),
        )


async def withdraw(session: AsyncSession, tournament: Tournament, entry: TournamentEntry) -> None:
    """Take a player's entry back before the start: the fee refunded, the entry gone."""
    await _refund(session, tournament, entry)
    await session.delete(entry)
    bump(tournament)


async def add_bots(session: AsyncSession, tournament: Tournament, count: int, rating: int) -> None:
    """Bots for the seats nobody took (a knock-out that starts short)."""
    for number in range(1, count + 1):
        session.add(
            TournamentEntry(
                tournament_id=tournament.id,
                user_id=None,
                name=f"Bot {number}",
                bot=True,
                rating=rating,
                fee_paid=0,
                prize=0,
            )
        )
    await session.flush()


async def mark_dropped(
    session: AsyncSession,
    entry_ids: Collection[int],
    round_no: int,
    no_shows: Collection[int] = (),
) -> None:
    """Entrants a bot finished a table for: out of the later rounds; ``no_shows`` (of
    them) never came, and have no standing."""
    if entry_ids:
        await session.execute(
            update(TournamentEntry)
            .where(TournamentEntry.id.in_(list(entry_ids)), TournamentEntry.dropped.is_(False))
            .values(dropped=True, dropped_in_round=round_no),
            execution_options={"synchronize_session": False},
        )
    if no_shows:
        await session.execute(
            update(TournamentEntry)
            .where(TournamentEntry.id.in_(list(no_shows)))
            .values(no_show=True),
            execution_options={"synchronize_session": False},
        )


async def cancel(session: AsyncSession, tournament: Tournament, now: datetime) -> None:
    """Cancel a tournament that has not ended: every entry's fee back from the escrow
    (nothing was paid out of it before the end)."""
    for entry in await entries(session, tournament.id):
        await _refund(session, tournament, entry)
    tournament.state = "cancelled"
    tournament.ended_at = now
    tournament.lease_by = tournament.lease_until = None
    bump(tournament)


async def set_result(
    session: AsyncSession,
    tournament: Tournament,
    places: Mapping[int, int],
    prizes: Mapping[int, int],
    pool: int,
    complaint_until: datetime,
) -> None:
    """The result (each entrant's place and prize; the prizes still held) and the
    complaint window."""
    for entry in await entries(session, tournament.id):
        entry.place = places.get(entry.id)
        entry.prize = int(prizes.get(entry.id, 0))
    tournament.pool = pool
    tournament.state = "complaints"
    tournament.complaint_until = complaint_until
    bump(tournament)


async def pay_out(session: AsyncSession, tournament: Tournament, now: datetime) -> None:
    """The window is over with no complaint open: each prize from the escrow to its
    winner, the rest (the house's share, and a bot's prize) to the house, and the
    tournament finished, in the caller's one transaction."""
    rows = await entries(session, tournament.id)
    paid_in = sum(entry.fee_paid for entry in rows)
    movements = [
        ledger.Movement(
            _key(tournament.id, f"prize:{entry.id}"),
            escrow_account(tournament.id),
            ledger.user_account(entry.user_id),
            entry.prize,
            PRIZE,
        )
        for entry in rows
        if entry.prize > 0 and entry.user_id is not None
    ]
    house = paid_in - sum(movement.amount for movement in movements)
    if house > 0:
        movements.append(
            ledger.Movement(
                _key(tournament.id, "house"),
                escrow_account(tournament.id),
                ledger.HOUSE,
                house,
                HOUSE_SHARE,
            )
        )
    await ledger.post_all(session, movements)
    tournament.state = "finished"
    tournament.ended_at = now
    tournament.lease_by = tournament.lease_until = None
    bump(tournament)


# --- who carries a tournament on -------------------------------------------------------


async def active_ids(session: AsyncSession) -> list[int]:
    rows = await session.scalars(
        select(Tournament.id).where(Tournament.state.in_(ACTIVE)).order_by(Tournament.id)
    )
    return list(rows.all())


async def claim(
    session: AsyncSession, tournament_id: int, owner: str, now: datetime, seconds: float
) -> bool:
    """Take (or renew) a tournament's lease for ``owner``: False if another process
    holds one that is not past."""
    done = await session.execute(
        update(Tournament)
        .where(
            Tournament.id == tournament_id,
            Tournament.state.in_(ACTIVE),
            or_(
                Tournament.lease_by.is_(None),
                Tournament.lease_by == owner,
                Tournament.lease_until < now,
            ),
        )
        .values(lease_by=owner, lease_until=now + timedelta(seconds=seconds)),
        execution_options={"synchronize_session": False},
    )
    return bool(done.rowcount == 1)  # type: ignore[attr-defined]


async def release(session: AsyncSession, tournament_id: int, owner: str) -> None:
    await session.execute(
        update(Tournament)
        .where(Tournament.id == tournament_id, Tournament.lease_by == owner)
        .values(lease_by=None, lease_until=None),
        execution_options={"synchronize_session": False},
    )


# --- complaints ------------------------------------------------------------------------


async def complaints(session: AsyncSession, tournament_id: int) -> list[TournamentComplaint]:
    rows = await session.scalars(
        select(TournamentComplaint)
        .where(TournamentComplaint.tournament_id == tournament_id)
        .order_by(TournamentComplaint.id)
    )
    return list(rows.all())


async def open_complaints(session: AsyncSession, tournament_id: int) -> int:
    count = await session.scalar(
        select(func.count())
        .select_from(TournamentComplaint)
        .where(
            TournamentComplaint.tournament_id == tournament_id,
            TournamentComplaint.state == "open",
        )
    )
    return int(count or 0)


async def complain(
    session: AsyncSession, tournament: Tournament, entry: TournamentEntry, text: str, now: datetime
) -> TournamentComplaint:
    row = TournamentComplaint(
        tournament_id=tournament.id,
        entry_id=entry.id,
        user_id=entry.user_id,
        text=text,
        state="open",
        created_at=now,
    )
    session.add(row)
    await session.flush()
    bump(tournament)
    return row


async def complaint(
    session: AsyncSession, tournament_id: int, complaint_id: int
) -> TournamentComplaint | None:
    found: TournamentComplaint | None = (
        await session.scalars(
            select(TournamentComplaint).where(
                TournamentComplaint.id == complaint_id,
                TournamentComplaint.tournament_id == tournament_id,
            )
        )
    ).first()
    return found


def window_over(tournament: Tournament, now: datetime) -> bool:
    until = tournament.complaint_until
    return until is not None and aware(until) <= now
