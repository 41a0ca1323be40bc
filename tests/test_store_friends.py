"""The friends' rows (``sahrat.store.friends``) on a migrated SQLite database: one row
per pair whoever asked, a block that ends the pair's friendship and invitations, and
invitations that expire after their time and leave the list when their table starts.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import async_sessionmaker

from sahrat.server.migrate import migrate
from sahrat.server.social.friends import INVITATION_SECONDS
from sahrat.store import friends
from sahrat.store import tables as rows
from sahrat.store.db import make_engine, make_sessions
from sahrat.store.models import Friendship, User

pytestmark = pytest.mark.asyncio


@pytest_asyncio.fixture
async def sessions(tmp_path: Path) -> AsyncIterator[async_sessionmaker[Any]]:
    url = f"sqlite+aiosqlite:///{tmp_path / 'friends.db'}"
    await migrate(url)
    engine = make_engine(url)
    try:
        yield make_sessions(engine)
    finally:
        await engine.dispose()


async def _users(sessions: async_sessionmaker[Any], count: int) -> list[int]:
    async with sessions() as session, session.begin():
        users = [User(name=f"player {n}", guest=False) for n in range(count)]
        session.add_all(users)
        await session.flush()
        return [user.id for user in users]


async def test_one_row_per_pair_whoever_asked(sessions: async_sessionmaker[Any]) -> None:
    a, b = await _users(sessions, 2)
    async with sessions() as session, session.begin():
        await friends.add_request(session, a, b)
    with pytest.raises(IntegrityError):
        async with sessions() as session, session.begin():
            session.add(
                Friendship(
                    pair=friends.pair_of(b, a),
                    requester_id=b,
                    addressee_id=a,
                    status=friends.PENDING,
                    created_at=datetime.now(UTC),
                )
            )


async def test_a_block_ends_the_friendship_and_the_invitations(
    sessions: async_sessionmaker[Any],
) -> None:
    a, b = await _users(sessions, 2)
    async with sessions() as session, session.begin():
        row = await friends.add_request(session, a, b)
        row.status = friends.ACCEPTED
        table = await rows.add_table(
            session, game="konkan", options={}, private=True, invite_code="c0de", creator_id=a
        )
        await friends.add_invitation(
            session, table_id=table.id, inviter=a, invitee=b, seconds=INVITATION_SECONDS
        )
    async with sessions() as session, session.begin():
        assert await friends.are_friends(session, a, b)
        assert len(await friends.invitations_to(session, b)) == 1
        assert await friends.add_block(session, b, a) is True
        assert await friends.add_block(session, b, a) is False  # blocked already
    async with sessions() as session:
        assert await friends.between(session, a, b) is None
        assert await friends.invitations_to(session, b) == []
        assert await friends.has_blocked(session, b, a)
        assert not await friends.has_blocked(session, a, b)  # one way


async def test_invitations_expire_and_leave_when_the_table_starts(
    sessions: async_sessionmaker[Any],
) -> None:
    a, b = await _users(sessions, 2)
    now = datetime.now(UTC)
    async with sessions() as session, session.begin():
        table = await rows.add_table(
            session, game="konkan", options={}, private=False, invite_code=None, creator_id=a
        )
        made = await friends.add_invitation(
            session, table_id=table.id, inviter=a, invitee=b, seconds=600, now=now
        )
    async with sessions() as session:
        just_before = now + timedelta(seconds=599)
        assert [i.id for i, _t, _n in await friends.invitations_to(session, b, just_before)] == [
            made.id
        ]
        assert await friends.invitations_to(session, b, now + timedelta(seconds=600)) == []
        assert (
            await friends.invitation_to(session, made.id, b, now + timedelta(seconds=601)) is None
        )
        assert await friends.invitation_to(session, made.id, a, now) is None  # not a's
    async with sessions() as session, session.begin():
        await rows.write_status(session, table.id, "playing")
    async with sessions() as session:
        assert await friends.invitations_to(session, b, now) == []
