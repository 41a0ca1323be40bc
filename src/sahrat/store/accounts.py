"""Accounts as the server reads them around its tables: names, suspensions, whether
an account is a guest, how many counted matches it played, and the server-wide
defaults an admin set.

Like ``ledger.py``, every function works inside a caller's session (and, for a
write, the caller's transaction).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from .models import MatchPlayer, ServerSetting, User

NAME_CHUNK = 200  # user ids per IN list: a restart reads the names of every seat


async def names_of(session: AsyncSession, user_ids: Sequence[int]) -> dict[int, str]:
    """The display names of these users (an unknown id is left out)."""
    found: dict[int, str] = {}
    for first in range(0, len(user_ids), NAME_CHUNK):
        chunk = list(user_ids[first : first + NAME_CHUNK])
        for user_id, name in await session.execute(
            select(User.id, User.name).where(User.id.in_(chunk))
        ):
            found[user_id] = name
    return found


async def suspended_ids(session: AsyncSession) -> set[int]:
    """Every suspended user."""
    return set((await session.scalars(select(User.id).where(User.suspended.is_(True)))).all())


async def set_suspended(session: AsyncSession, user_id: int, suspended: bool) -> bool:
    """Suspend (or restore) a user; False if there is no such user."""
    user = await session.get(User, user_id)
    if user is None:
        return False
    user.suspended = suspended
    return True


async def is_guest(session: AsyncSession, user_id: int) -> bool:
    """Whether the user is a guest (False for an unknown id)."""
    user = await session.get(User, user_id)
    return user is not None and user.guest


async def counted_matches(session: AsyncSession, user_id: int) -> int:
    """The user's counted matches (``match_players.counted``: the rule of
    docs/economy.md, "What counts"), wherever they were played and whether or not the
    user still sits at those tables."""
    found = await session.scalar(
        select(func.count())
        .select_from(MatchPlayer)
        .where(MatchPlayer.user_id == user_id, MatchPlayer.counted.is_(True))
    )
    return int(found or 0)


async def server_settings(session: AsyncSession) -> dict[str, int]:
    """The defaults an admin set (``server_settings``), by key."""
    return {row.key: row.value for row in (await session.scalars(select(ServerSetting))).all()}


async def write_server_settings(session: AsyncSession, values: Mapping[str, int]) -> None:
    """Set these defaults (each key written or replaced)."""
    for key, value in values.items():
        row = await session.get(ServerSetting, key)
        if row is None:
            session.add(ServerSetting(key=key, value=value))
        else:
            row.value = value
