"""Friends, blocks, invitations to a table and presence (docs/social.md, "Friends").

A pair of players has at most one ``friendships`` row, whoever asked: ``pending`` (a
request from ``requester_id`` to ``addressee_id``) or ``accepted``. A block is one way
(``blocker_id`` blocked ``blocked_id``); making it removes the pair's row and the
invitations between them. An invitation names a table, who invited and who is invited,
and expires. ``users.last_seen_at`` is when a player last made an authenticated request
(written at most once a minute), shared by every process of a cluster. Like the rest of
the store, these functions work inside a caller's session.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from .models import Block, Friendship, GameTable, Seat, TableInvitation, User

PENDING = "pending"
ACCEPTED = "accepted"
LIVE_TABLES = ("waiting", "playing")


def pair_of(a: int, b: int) -> str:
    """The key of a pair of players, whatever its order."""
    low, high = sorted((a, b))
    return f"{low}:{high}"


def aware(moment: datetime) -> datetime:
    """A stored time as UTC (SQLite gives naive UTC datetimes, asyncpg aware ones)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


# --- friendships -------------------------------------------------------------------------


async def between(session: AsyncSession, a: int, b: int) -> Friendship | None:
    """The pair's row (a request either way, or their friendship), if any."""
    return await session.scalar(select(Friendship).where(Friendship.pair == pair_of(a, b)))


async def are_friends(session: AsyncSession, a: int, b: int) -> bool:
    row = await between(session, a, b)
    return row is not None and row.status == ACCEPTED


async def add_request(
    session: AsyncSession, requester: int, addressee: int, now: datetime | None = None
) -> Friendship:
    row = Friendship(
        pair=pair_of(requester, addressee),
        requester_id=requester,
        addressee_id=addressee,
        status=PENDING,
        created_at=now or datetime.now(UTC),
    )
    session.add(row)
    await session.flush()
    return row


async def request_to(session: AsyncSession, request_id: int, addressee: int) -> Friendship | None:
    """A pending request sent to ``addressee``."""
    return await session.scalar(
        select(Friendship).where(
            Friendship.id == request_id,
            Friendship.addressee_id == addressee,
            Friendship.status == PENDING,
        )
    )


async def remove_pair(session: AsyncSession, a: int, b: int) -> bool:
    """Remove the pair's row (a friendship or a request either way); whether there was one."""
    result = await session.execute(delete(Friendship).where(Friendship.pair == pair_of(a, b)))
    return bool(getattr(result, "rowcount", 0))


async def friends_of(session: AsyncSession, user_id: int) -> Sequence[tuple[User, Friendship]]:
    """The user's friendships and requests either way, each with the other player."""
    rows = (
        await session.scalars(
            select(Friendship).where(
                or_(Friendship.requester_id == user_id, Friendship.addressee_id == user_id)
            )
        )
    ).all()
    others = {r.addressee_id if r.requester_id == user_id else r.requester_id for r in rows}
    users = await users_by_id(session, others)
    found: list[tuple[User, Friendship]] = []
    for row in rows:
        other = row.addressee_id if row.requester_id == user_id else row.requester_id
        if other in users:
            found.append((users[other], row))
    found.sort(key=lambda item: item[0].name.casefold())
    return found


async def friend_ids(session: AsyncSession, user_id: int) -> set[int]:
    return {user.id for user, row in await friends_of(session, user_id) if row.status == ACCEPTED}


async def users_by_id(session: AsyncSession, ids: Iterable[int]) -> dict[int, User]:
    wanted = list(set(ids))
    if not wanted:
        return {}
    return {u.id: u for u in (await session.scalars(select(User).where(User.id.in_(wanted))))}


async def user_named(session: AsyncSession, key: str) -> User | None:
    """The player whose name has this key (``names.name_key``)."""
    return await session.scalar(select(User).where(User.name_key == key))


# --- blocks ------------------------------------------------------------------------------


async def has_blocked(session: AsyncSession, blocker: int, blocked: int) -> bool:
    return (
        await session.scalar(
            select(Block.blocker_id).where(Block.blocker_id == blocker, Block.blocked_id == blocked)
        )
    ) is not None


async def add_block(
    session: AsyncSession, blocker: int, blocked: int, now: datetime | None = None
) -> bool:
    """Block a player: the pair's friendship or requests and the invitations between
    them go. Whether the block is new."""
    await remove_pair(session, blocker, blocked)
    await session.execute(
        delete(TableInvitation).where(
            or_(
                (TableInvitation.inviter_id == blocker) & (TableInvitation.invitee_id == blocked),
                (TableInvitation.inviter_id == blocked) & (TableInvitation.invitee_id == blocker),
            )
        )
    )
    if await has_blocked(session, blocker, blocked):
        return False
    session.add(Block(blocker_id=blocker, blocked_id=blocked, created_at=now or datetime.now(UTC)))
    await session.flush()
    return True


async def remove_block(session: AsyncSession, blocker: int, blocked: int) -> bool:
    result = await session.execute(
        delete(Block).where(Block.blocker_id == blocker, Block.blocked_id == blocked)
    )
    return bool(getattr(result, "rowcount", 0))


async def blocks_of(session: AsyncSession, blocker: int) -> Sequence[tuple[User, Block]]:
    rows = (
        await session.scalars(
            select(Block).where(Block.blocker_id == blocker).order_by(Block.created_at)
        )
    ).all()
    users = await users_by_id(session, [r.blocked_id for r in rows])
    return [(users[r.blocked_id], r) for r in rows if r.blocked_id in users]


async def all_blocks(session: AsyncSession) -> list[tuple[int, int]]:
    """Every block, as (blocker, blocked): each process keeps them for the chat."""
    return [(a, b) for a, b in (await session.execute(select(Block.blocker_id, Block.blocked_id)))]


# --- invitations -------------------------------------------------------------------------


async def add_invitation(
    session: AsyncSession,
    *,
    table_id: int,
    inviter: int,
    invitee: int,
    seconds: float,
    now: datetime | None = None,
) -> TableInvitation:
    """Invite a player to a table (an invitation sent again is renewed); the expired
    invitations are forgotten on the way."""
    now = now or datetime.now(UTC)
    await sweep_invitations(session, now)
    row = await session.scalar(
        select(TableInvitation).where(
            TableInvitation.table_id == table_id,
            TableInvitation.inviter_id == inviter,
            TableInvitation.invitee_id == invitee,
        )
    )
    if row is None:
        row = TableInvitation(table_id=table_id, inviter_id=inviter, invitee_id=invitee)
        session.add(row)
    row.created_at = now
    row.expires_at = now + timedelta(seconds=seconds)
    await session.flush()
    return row


async def invitations_to(
    session: AsyncSession, invitee: int, now: datetime | None = None
) -> Sequence[tuple[TableInvitation, GameTable, str]]:
    """The invitations to ``invitee`` not expired, to tables still waiting for players,
    newest first: each with its table and its inviter's name."""
    now = now or datetime.now(UTC)
    found = await session.execute(
        select(TableInvitation, GameTable, User.name)
        .join(GameTable, GameTable.id == TableInvitation.table_id)
        .join(User, User.id == TableInvitation.inviter_id)
        .where(
            TableInvitation.invitee_id == invitee,
            TableInvitation.expires_at > now,
            GameTable.status == "waiting",
        )
        .order_by(TableInvitation.created_at.desc(), TableInvitation.id.desc())
    )
    return [(inv, table, name) for inv, table, name in found]


async def invitation_to(
    session: AsyncSession, invitation_id: int, invitee: int, now: datetime | None = None
) -> tuple[TableInvitation, GameTable] | None:
    """One invitation to ``invitee``, not expired, with its table."""
    now = now or datetime.now(UTC)
    found = (
        await session.execute(
            select(TableInvitation, GameTable)
            .join(GameTable, GameTable.id == TableInvitation.table_id)
            .where(
                TableInvitation.id == invitation_id,
                TableInvitation.invitee_id == invitee,
                TableInvitation.expires_at > now,
            )
        )
    ).first()
    return None if found is None else (found[0], found[1])


async def drop_invitation(session: AsyncSession, invitation_id: int, invitee: int) -> bool:
    result = await session.execute(
        delete(TableInvitation).where(
            TableInvitation.id == invitation_id, TableInvitation.invitee_id == invitee
        )
    )
    return bool(getattr(result, "rowcount", 0))


async def sweep_invitations(session: AsyncSession, now: datetime | None = None) -> None:
    """Forget the expired invitations."""
    now = now or datetime.now(UTC)
    await session.execute(delete(TableInvitation).where(TableInvitation.expires_at <= now))


# --- presence ----------------------------------------------------------------------------


async def mark_seen(session: AsyncSession, user_ids: Iterable[int], now: datetime) -> None:
    wanted = list(set(user_ids))
    if wanted:
        await session.execute(update(User).where(User.id.in_(wanted)).values(last_seen_at=now))


async def live_seats(session: AsyncSession, user_ids: Iterable[int]) -> dict[int, list[GameTable]]:
    """The open tables (waiting or playing) each of these players is seated at."""
    wanted = list(set(user_ids))
    if not wanted:
        return {}
    found = await session.execute(
        select(Seat.user_id, GameTable)
        .join(GameTable, GameTable.id == Seat.table_id)
        .where(Seat.user_id.in_(wanted), GameTable.status.in_(LIVE_TABLES))
        .order_by(GameTable.id)
    )
    seats: dict[int, list[GameTable]] = {}
    for user_id, table in found:
        if user_id is not None:
            seats.setdefault(int(user_id), []).append(table)
    return seats


async def seated_at(session: AsyncSession, user_id: int, table_ids: Iterable[int]) -> set[int]:
    """Those of ``table_ids`` where ``user_id`` holds a seat."""
    wanted = list(set(table_ids))
    if not wanted:
        return set()
    found = await session.scalars(
        select(Seat.table_id).where(Seat.user_id == user_id, Seat.table_id.in_(wanted))
    )
    return set(found)
