"""The rows a table keeps besides its log (``sahrat.store.tables``) and the account
reads around them (``sahrat.store.accounts``), against SQLite and PostgreSQL.

The schema comes from the Alembic migrations (as in production). PostgreSQL: a
database created for this test session on 127.0.0.1:5432 (user postgres), dropped
at the end; skipped if unreachable, unless ``CI`` is set (then it fails).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from pgtest import fresh_database
from sahrat.server.migrate import migrate
from sahrat.store import accounts
from sahrat.store import tables as rows
from sahrat.store.db import make_engine, make_sessions
from sahrat.store.models import GameTable, LogEntry, Match, MatchPlayer, Seat, User

pytestmark = pytest.mark.asyncio

EMPTIED = "users, game_tables, server_settings"  # and, by CASCADE, what refers to them


@pytest.fixture(scope="session")
def tables_pg_url() -> Iterator[str]:
    """A fresh, migrated PostgreSQL database for this session (xdist worker)."""
    with fresh_database("sahrat_store_tables", "the PostgreSQL store tests") as url:
        asyncio.run(migrate(url))
        yield url


@pytest.fixture(params=["sqlite", "postgres"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'tables.db'}"
    return str(request.getfixturevalue("tables_pg_url"))


@pytest_asyncio.fixture
async def sessions(database: str) -> AsyncIterator[async_sessionmaker[Any]]:
    if database.startswith("sqlite"):
        await migrate(database)
        engine: AsyncEngine = make_engine(database)
    else:
        engine = make_engine(database)
        async with engine.begin() as conn:
            await conn.execute(text(f"TRUNCATE {EMPTIED} RESTART IDENTITY CASCADE"))
    try:
        yield make_sessions(engine)
    finally:
        await engine.dispose()


async def _users(sessions: async_sessionmaker[Any], *names: str) -> list[int]:
    async with sessions() as session, session.begin():
        users = [User(name=name, guest=name.startswith("guest")) for name in names]
        session.add_all(users)
        await session.flush()
        return [user.id for user in users]


async def _table(
    session: AsyncSession, creator_id: int, *, private: bool = False, game: str = "konkan"
) -> GameTable:
    return await rows.add_table(
        session,
        game=game,
        options={"players": 2},
        private=private,
        invite_code="code-" + str(creator_id) + str(private) + game if private else None,
        creator_id=creator_id,
    )


async def test_a_new_table_waits_with_no_seat_and_is_live(
    sessions: async_sessionmaker[Any],
) -> None:
    (ann,) = await _users(sessions, "ann")
    row = await rows.in_transaction(sessions, lambda s: _table(s, ann))
    assert row.id > 0 and row.status == "waiting" and row.seq == 0
    assert await rows.in_session(sessions, rows.live_table_ids) == [row.id]
    assert await rows.in_session(sessions, lambda s: rows.open_tables_of(s, ann)) == 1
    await rows.in_transaction(sessions, lambda s: rows.write_status(s, row.id, "finished"))
    assert await rows.in_session(sessions, rows.live_table_ids) == []
    assert await rows.in_session(sessions, lambda s: rows.open_tables_of(s, ann)) == 0


async def test_a_transaction_that_raises_writes_nothing(sessions: async_sessionmaker[Any]) -> None:
    (ann,) = await _users(sessions, "ann")

    async def half(session: AsyncSession) -> None:
        await _table(session, ann)
        raise RuntimeError("after the insert")

    with pytest.raises(RuntimeError):
        await rows.in_transaction(sessions, half)
    assert await rows.in_session(sessions, rows.live_table_ids) == []


async def test_seats_are_written_replaced_and_freed(sessions: async_sessionmaker[Any]) -> None:
    ann, bob = await _users(sessions, "ann", "bob")
    table = await rows.in_transaction(sessions, lambda s: _table(s, ann))

    async def seats() -> list[tuple[int, int | None, str | None, bool, str | None]]:
        async with sessions() as session:
            found = await session.scalars(
                select(Seat).where(Seat.table_id == table.id).order_by(Seat.seat)
            )
            return [(s.seat, s.user_id, s.bot_level, s.left, s.address) for s in found]

    await rows.in_transaction(
        sessions, lambda s: rows.write_seat(s, table.id, 0, ann, None, False, "net-a")
    )
    await rows.in_transaction(
        sessions, lambda s: rows.write_seat(s, table.id, 1, bob, None, False, "net-b")
    )
    assert await seats() == [(0, ann, None, False, "net-a"), (1, bob, None, False, "net-b")]
    # bob leaves and a bot takes over: no address given keeps the stored one
    await rows.in_transaction(
        sessions, lambda s: rows.write_seat(s, table.id, 1, bob, "expert", True)
    )
    assert (await seats())[1] == (1, bob, "expert", True, "net-b")
    await rows.in_transaction(sessions, lambda s: rows.delete_seat(s, table.id, 0))
    assert [seat[0] for seat in await seats()] == [1]
    await rows.in_transaction(sessions, lambda s: rows.write_closed(s, table.id, True))
    assert await seats() == []
    async with sessions() as session:
        stored = await session.get(GameTable, table.id)
        assert stored is not None and stored.status == "closed"


async def test_closing_a_playing_table_keeps_its_seats_and_options_are_written(
    sessions: async_sessionmaker[Any],
) -> None:
    (ann,) = await _users(sessions, "ann")
    table = await rows.in_transaction(sessions, lambda s: _table(s, ann))
    await rows.in_transaction(sessions, lambda s: rows.write_seat(s, table.id, 0, ann, None, False))
    await rows.in_transaction(
        sessions, lambda s: rows.write_options(s, table.id, {"players": 3, "stake": 5})
    )
    await rows.in_transaction(sessions, lambda s: rows.write_closed(s, table.id, False))
    async with sessions() as session:
        stored = await session.get(GameTable, table.id)
        assert stored is not None and stored.options == {"players": 3, "stake": 5}
        left = await session.scalars(select(Seat.user_id).where(Seat.table_id == table.id))
        assert list(left) == [ann]
    # writing a table that is not there is no error
    await rows.in_transaction(sessions, lambda s: rows.write_status(s, 999, "waiting"))
    await rows.in_transaction(sessions, lambda s: rows.write_options(s, 999, {}))


async def test_loading_reads_live_tables_their_seats_names_and_current_match(
    sessions: async_sessionmaker[Any],
) -> None:
    ann, bob = await _users(sessions, "ann", "bob")
    async with sessions() as session, session.begin():
        waiting = await _table(session, ann)
        playing = await _table(session, bob)
        finished = await _table(session, ann)
        finished.status = "finished"
        playing.status = "playing"
        for seat, user in enumerate((ann, bob)):
            await rows.write_seat(session, playing.id, seat, user, None, False)
        await rows.write_seat(session, waiting.id, 1, None, "expert", False)
        # two matches in the log: the current one starts at seq 5
        for seq, kind in ((1, "start"), (2, "action"), (5, "start"), (6, "action")):
            session.add(
                LogEntry(
                    table_id=playing.id, seq=seq, kind=kind, seat=None, client_id=None, data={}
                )
            )
    found = await rows.in_session(
        sessions, lambda s: rows.load_live(s, [waiting.id, playing.id, finished.id], known={bob})
    )
    assert sorted(row.id for row in found.rows) == [waiting.id, playing.id]
    assert [(s.seat, s.user_id) for s in found.seats[playing.id]] == [(0, ann), (1, bob)]
    assert [(s.seat, s.bot_level) for s in found.seats[waiting.id]] == [(1, "expert")]
    assert found.names == {ann: "ann"}  # bob's name was known already
    assert [entry.seq for entry in found.entries[playing.id]] == [5, 6]
    assert waiting.id not in found.entries  # a waiting table has no match to replay


async def test_the_lobby_page_is_the_in_memory_listing_as_a_query(
    sessions: async_sessionmaker[Any],
) -> None:
    ann, bob = await _users(sessions, "ann", "bob")
    async with sessions() as session, session.begin():
        public = await _table(session, ann)
        private = await _table(session, ann, private=True)
        conquian = await _table(session, bob, game="conquian")
        watched = await _table(session, bob)  # playing, a person in it
        deserted = await _table(session, bob)  # playing, every person left
        for row in (watched, deserted):
            row.status = "playing"
        await rows.write_seat(session, watched.id, 0, bob, None, False)
        await rows.write_seat(session, deserted.id, 0, bob, "expert", True)
        await rows.write_seat(session, deserted.id, 1, None, "expert", False)

    async def page(**given: Any) -> list[int]:
        query: dict[str, Any] = {
            "statuses": rows.LIVE,
            "after": 0,
            "private": False,
            "game": None,
            "lobby": False,
            "limit": None,
        } | given
        found = await rows.in_session(sessions, lambda s: rows.lobby_page(s, **query))
        return [row.id for row in found.rows]

    assert await page() == [public.id, conquian.id, watched.id, deserted.id]
    assert await page(private=True) == [
        public.id,
        private.id,
        conquian.id,
        watched.id,
        deserted.id,
    ]
    assert await page(game="conquian") == [conquian.id]
    assert await page(statuses=("playing",)) == [watched.id, deserted.id]
    assert await page(lobby=True) == [public.id, conquian.id, watched.id]
    assert await page(after=conquian.id, limit=1) == [watched.id]
    found = await rows.in_session(
        sessions,
        lambda s: rows.lobby_page(
            s, statuses=rows.LIVE, after=0, private=False, game=None, lobby=False, limit=None
        ),
    )
    assert found.names == {bob: "bob"} and len(found.seats[deserted.id]) == 2


async def test_an_invite_code_finds_only_a_live_table(sessions: async_sessionmaker[Any]) -> None:
    (ann,) = await _users(sessions, "ann")
    table = await rows.in_transaction(sessions, lambda s: _table(s, ann, private=True))
    code = table.invite_code
    assert code is not None
    assert await rows.in_session(sessions, lambda s: rows.live_id_by_invite(s, code)) == table.id
    assert await rows.in_session(sessions, lambda s: rows.live_id_by_invite(s, code + "x")) is None
    await rows.in_transaction(sessions, lambda s: rows.write_status(s, table.id, "closed"))
    assert await rows.in_session(sessions, lambda s: rows.live_id_by_invite(s, code)) is None
    assert rows.invite_matches(code, code) and not rows.invite_matches(code, None)
    assert not rows.invite_matches(None, code) and not rows.invite_matches(code, code[:-1])


async def test_who_may_see_a_stored_table(sessions: async_sessionmaker[Any]) -> None:
    ann, bob, cat, dan = await _users(sessions, "ann", "bob", "cat", "dan")
    async with sessions() as session, session.begin():
        public = await _table(session, ann)
        private = await _table(session, ann, private=True)
        await rows.write_seat(session, private.id, 1, bob, None, False)
        match = Match(
            table_id=private.id, game="konkan", winner_seat=0, players=[ann, cat],
            score_sheet={}, record={},
        )  # fmt: skip
        session.add(match)

    async def sees(table_id: int, user_id: int | None, invite: str | None = None) -> bool:
        return await rows.in_session(sessions, lambda s: rows.seen_by(s, table_id, user_id, invite))

    assert await sees(public.id, None) and await sees(public.id, dan)
    assert await sees(private.id, ann)  # its creator
    assert await sees(private.id, bob)  # seated
    assert await sees(private.id, cat)  # played a match there
    assert await sees(private.id, dan, private.invite_code)  # holds the invite
    assert not await sees(private.id, dan)
    assert not await sees(private.id, dan, "wrong")
    assert not await sees(private.id, None)
    assert not await sees(999, ann)


async def test_account_reads_and_writes(sessions: async_sessionmaker[Any]) -> None:
    ids = await _users(sessions, *(f"user{i}" for i in range(accounts.NAME_CHUNK + 3)))
    guest, member = await _users(sessions, "guest-1", "member")
    names = await rows.in_session(sessions, lambda s: accounts.names_of(s, [*ids, 10**6]))
    assert len(names) == len(ids) and names[ids[-1]] == f"user{len(ids) - 1}"  # in chunks
    assert await rows.in_session(sessions, lambda s: accounts.is_guest(s, guest))
    assert not await rows.in_session(sessions, lambda s: accounts.is_guest(s, member))
    assert not await rows.in_session(sessions, lambda s: accounts.is_guest(s, 10**6))

    assert await rows.in_session(sessions, accounts.suspended_ids) == set()
    assert await rows.in_transaction(sessions, lambda s: accounts.set_suspended(s, member, True))
    assert not await rows.in_transaction(sessions, lambda s: accounts.set_suspended(s, 10**6, True))
    assert await rows.in_session(sessions, accounts.suspended_ids) == {member}

    await rows.in_transaction(
        sessions, lambda s: accounts.write_server_settings(s, {"welcome_grant": 7})
    )
    await rows.in_transaction(
        sessions,
        lambda s: accounts.write_server_settings(s, {"welcome_grant": 9, "free_table_earnings": 2}),
    )
    assert await rows.in_session(sessions, accounts.server_settings) == {
        "welcome_grant": 9,
        "free_table_earnings": 2,
    }


async def test_counted_matches_are_those_the_rule_counted(
    sessions: async_sessionmaker[Any],
) -> None:
    ann, bob = await _users(sessions, "ann", "bob")
    async with sessions() as session, session.begin():
        table = await _table(session, ann)
        for counted in (True, True, False):
            match = Match(
                table_id=table.id, game="konkan", winner_seat=0, players=[ann, bob],
                score_sheet={}, record={},
            )  # fmt: skip
            session.add(match)
            await session.flush()
            for seat, user in enumerate((ann, bob)):
                session.add(
                    MatchPlayer(
                        match_id=match.id, seat=seat, user_id=user, own_turns=5,
                        in_seat_at_end=True, place=seat + 1, won=seat == 0,
                        counted=counted and user == ann,
                    )
                )  # fmt: skip
    assert await rows.in_session(sessions, lambda s: accounts.counted_matches(s, ann)) == 2
    assert await rows.in_session(sessions, lambda s: accounts.counted_matches(s, bob)) == 0
