"""The rows a table keeps besides its event log: the table itself (game, options,
status, invite code), its seats, and what a restart or a lobby reads of them.

Like ``ledger.py``, every function works inside a caller's session (and, for a
write, the caller's transaction); :func:`in_session` and :func:`in_transaction`
give a caller that holds only a session factory one of each.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sqlalchemy import delete, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from .accounts import names_of
from .friends import are_friends
from .log import current_match_entries
from .models import GameTable, LogEntry, Match, Seat

LIVE = ("waiting", "playing")  # the statuses of a table that is served
MAX_TABLE_ID = 2**31 - 1  # ids are 32-bit integers in the database
LOAD_CHUNK = 200  # tables read per query at a start (their seats in one IN list)

T = TypeVar("T")


async def in_session(
    sessions: async_sessionmaker[Any], work: Callable[[AsyncSession], Awaitable[T]]
) -> T:
    """Run ``work`` (reads) in a session of its own."""
    async with sessions() as session:
        return await work(session)


async def in_transaction(
    sessions: async_sessionmaker[Any], work: Callable[[AsyncSession], Awaitable[T]]
) -> T:
    """Run ``work`` in a session and a transaction of its own (committed if it returns)."""
    async with sessions() as session, session.begin():
        return await work(session)


def invite_matches(code: str | None, given: str | None) -> bool:
    """Whether ``given`` is the table's invite ``code``, compared in constant time (a
    guess learns nothing from how long the comparison took)."""
    return (
        code is not None
        and given is not None
        and secrets.compare_digest(code.encode(), given.encode())  # str: ASCII only
    )


@dataclass
class StoredTables:
    """Tables as their rows describe them, with what rebuilding or showing them needs."""

    rows: list[GameTable]
    seats: dict[int, list[Seat]]  # by table id, in the order the database gave them
    names: dict[int, str]  # of the seats' owners, but those the caller knew already
    entries: dict[int, list[LogEntry]] = field(default_factory=dict)  # a playing table's


async def live_table_ids(session: AsyncSession) -> list[int]:
    """Every table that is waiting or playing."""
    return list(
        (await session.scalars(select(GameTable.id).where(GameTable.status.in_(LIVE)))).all()
    )


async def _with_seats(
    session: AsyncSession, rows: Sequence[GameTable], known: Collection[int]
) -> StoredTables:
    seats: dict[int, list[Seat]] = {row.id: [] for row in rows}
    for seat in (await session.scalars(select(Seat).where(Seat.table_id.in_(list(seats))))).all():
        seats[seat.table_id].append(seat)
    owners = [s.user_id for found in seats.values() for s in found if s.user_id is not None]
    missing = [uid for uid in owners if uid not in known]
    return StoredTables(list(rows), seats, await names_of(session, missing) if missing else {})


async def load_live(
    session: AsyncSession, table_ids: Sequence[int], known: Collection[int] = ()
) -> StoredTables:
    """The live ones of ``table_ids`` (at most ``LOAD_CHUNK`` of them), with their
    seats, their owners' names (but the ``known`` ones) and, for a playing table, its
    current match's log: all a restore needs, in four queries."""
    rows = (
        await session.scalars(
            select(GameTable).where(GameTable.id.in_(list(table_ids)), GameTable.status.in_(LIVE))
        )
    ).all()
    found = await _with_seats(session, rows, known)
    found.entries = await current_match_entries(
        session, [row.id for row in rows if row.status == "playing"]
    )
    return found


async def lobby_page(
    session: AsyncSession,
    *,
    statuses: Sequence[str],
    after: int,
    private: bool,
    game: str | None,
    lobby: bool,
    limit: int | None,
    known: Collection[int] = (),
) -> StoredTables:
    """A page of tables in ``statuses``, oldest first, from the first with an id above
    ``after``: public ones only unless ``private``; of one ``game`` if given; for the
    ``lobby``, the waiting ones and those where a person still sits (``Table.in_lobby``
    as a query, so that a page stays a full page)."""
    query = select(GameTable).where(GameTable.status.in_(list(statuses)), GameTable.id > after)
    if not private:
        query = query.where(GameTable.private.is_(False))
    if game is not None:
        query = query.where(GameTable.game == game)
    if lobby:
        person = (
            select(Seat.id)
            .where(Seat.table_id == GameTable.id, Seat.user_id.is_not(None), Seat.left.is_(False))
            .exists()
        )
        query = query.where(or_(GameTable.status == "waiting", person))
    rows = (await session.scalars(query.order_by(GameTable.id).limit(limit))).all()
    return await _with_seats(session, rows, known)


async def live_id_by_invite(session: AsyncSession, code: str) -> int | None:
    """The id of the live table with this invite code, if there is one."""
    found = await session.scalar(
        select(GameTable.id).where(GameTable.invite_code == code, GameTable.status.in_(LIVE))
    )
    return None if found is None else int(found)


async def open_tables_of(session: AsyncSession, creator_id: int) -> int:
    """How many live tables this user opened."""
    found = await session.scalar(
        select(func.count())
        .select_from(GameTable)
        .where(GameTable.creator_id == creator_id, GameTable.status.in_(LIVE))
    )
    return int(found or 0)


async def add_table(
    session: AsyncSession,
    *,
    game: str,
    options: dict[str, Any],
    private: bool,
    invite_code: str | None,
    creator_id: int,
    rated: bool = False,
    chat: bool = True,
    friends_watch: bool = False,
    spectator_delay: bool = False,
    tournament_id: int | None = None,
) -> GameTable:
    """A new waiting table with no seat taken; the row comes back with its id."""
    row = GameTable(
        game=game,
        options=options,
        private=private,
        invite_code=invite_code,
        creator_id=creator_id,
        status="waiting",
        seq=0,
        rated=rated,
        chat=chat,
        friends_watch=friends_watch,
        spectator_delay=spectator_delay,
        tournament_id=tournament_id,
    )
    session.add(row)
    await session.flush()  # the row gets its id and its defaults
    return row


async def seen_by(
    session: AsyncSession, table_id: int, user_id: int | None, invite: str | None
) -> bool:
    """Whether a player may see a table, by its rows (a table not served here, or no
    longer: a finished one): any public one and any tournament's; a private one its
    creator, anyone who had a seat or played a match there, a holder of the invite code,
    and a friend of its creator if the table's ``friends_watch`` is on."""
    row = await session.get(GameTable, table_id)
    if row is None:
        return False
    if not row.private or row.tournament_id is not None:
        return True
    if user_id == row.creator_id or invite_matches(row.invite_code, invite):
        return True
    if user_id is None:
        return False
    seated = await session.scalar(
        select(Seat.seat).where(Seat.table_id == table_id, Seat.user_id == user_id)
    )
    if seated is not None:
        return True
    if row.friends_watch and await are_friends(session, user_id, row.creator_id):
        return True  # the creator lets their friends watch (docs/social.md, "Friends")
    players = (await session.scalars(select(Match.players).where(Match.table_id == table_id))).all()
    return any(user_id in (seats or []) for seats in players)


async def write_seat(
    session: AsyncSession,
    table_id: int,
    seat: int,
    user_id: int | None,
    bot_level: str | None,
    left: bool,
    address: str | None = None,
) -> None:
    """Write who owns and who controls a seat (and, when it is taken, from where: an
    address given replaces the stored one, none keeps it)."""
    row = await session.scalar(select(Seat).where(Seat.table_id == table_id, Seat.seat == seat))
    if row is None:
        session.add(
            Seat(
                table_id=table_id,
                seat=seat,
                user_id=user_id,
                bot_level=bot_level,
                left=left,
                address=address,
            )
        )
        return
    row.user_id, row.bot_level, row.left = user_id, bot_level, left
    if address is not None:
        row.address = address


async def delete_seat(session: AsyncSession, table_id: int, seat: int) -> None:
    """Free a seat."""
    await session.execute(delete(Seat).where(Seat.table_id == table_id, Seat.seat == seat))


async def write_status(session: AsyncSession, table_id: int, status: str) -> None:
    """Write a table's status."""
    row = await session.get(GameTable, table_id)
    if row is not None:
        row.status = status


async def write_options(session: AsyncSession, table_id: int, options: dict[str, Any]) -> None:
    """Write a table's (validated) options."""
    row = await session.get(GameTable, table_id)
    if row is not None:
        row.options = options


async def write_closed(session: AsyncSession, table_id: int, free_seats: bool) -> None:
    """Write that a table is closed (and, if it was waiting, free its seats)."""
    row = await session.get(GameTable, table_id)
    if row is not None:
        row.status = "closed"
    if free_seats:
        await session.execute(delete(Seat).where(Seat.table_id == table_id))
