"""The coin ledger (``sahrat.store.ledger``) against SQLite and PostgreSQL.

The schema comes from the Alembic migrations (as in production). PostgreSQL:
a database created for this test session on 127.0.0.1:5432 (user postgres),
dropped at the end; skipped if unreachable, unless ``CI`` is set.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker

from pgtest import fresh_database
from sahrat.server.migrate import migrate
from sahrat.store import ledger
from sahrat.store.db import make_engine, make_sessions
from sahrat.store.ledger import HOUSE, Movement, Overdraft, user_account
from sahrat.store.models import User

pytestmark = pytest.mark.asyncio

TABLES = "ledger_entries, balances, ledger_accounts, tokens, seats, users"


@pytest.fixture(scope="session")
def ledger_pg_url() -> Iterator[str]:
    """A fresh, migrated PostgreSQL database for this session (xdist worker)."""
    with fresh_database("sahrat_ledger", "the PostgreSQL ledger tests") as url:
        asyncio.run(migrate(url))
        yield url


@pytest.fixture(params=["sqlite", "postgres"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'ledger.db'}"
    return str(request.getfixturevalue("ledger_pg_url"))


@pytest_asyncio.fixture
async def engine(database: str) -> AsyncIterator[AsyncEngine]:
    if database.startswith("sqlite"):
        await migrate(database)
        db = make_engine(database)
    else:
        db = make_engine(database)
        async with db.begin() as conn:
            await conn.execute(text(f"TRUNCATE {TABLES} RESTART IDENTITY CASCADE"))
    try:
        yield db
    finally:
        await db.dispose()


async def _users(sessions: async_sessionmaker[Any], count: int) -> list[int]:
    async with sessions() as session, session.begin():
        users = [User(name=f"u{i}-{secrets.token_hex(3)}", guest=True) for i in range(count)]
        session.add_all(users)
        await session.flush()
        return [user.id for user in users]


async def _invariant(sessions: async_sessionmaker[Any]) -> ledger.InvariantReport:
    async with sessions() as session:
        report: ledger.InvariantReport = await ledger.check_invariant(session)
    assert report.ok, report
    return report


async def test_grant_and_transfer_keep_the_ledger_balanced(engine: AsyncEngine) -> None:
    sessions = make_sessions(engine)
    a, b = await _users(sessions, 2)
    async with sessions() as session, session.begin():
        assert await ledger.grant(session, a, 1000, f"welcome:{a}", "welcome")
        assert await ledger.grant(session, b, 500, f"welcome:{b}", "welcome")
    async with sessions() as session, session.begin():
        moved = await ledger.transfer(
            session, user_account(a), user_account(b), 300, "t1", "transfer"
        )
        assert moved
    async with sessions() as session:
        got = await ledger.balances(session, [user_account(a), user_account(b), HOUSE])
        assert got == {user_account(a): 700, user_account(b): 800, HOUSE: -1500}
        history = await ledger.entries_of(session, user_account(a))
        assert [(e.reason, e.amount) for e in history] == [("transfer", 300), ("welcome", 1000)]
    report = await _invariant(sessions)
    assert report.granted == report.held == 1500


async def test_an_overdraft_fails_and_changes_nothing(engine: AsyncEngine) -> None:
    sessions = make_sessions(engine)
    a, b = await _users(sessions, 2)
    async with sessions() as session, session.begin():
        await ledger.grant(session, a, 100, "g", "welcome")
    with pytest.raises(Overdraft) as caught:
        async with sessions() as session, session.begin():
            await ledger.transfer(session, user_account(a), user_account(b), 60, "x1", "t")
            await ledger.transfer(session, user_account(a), user_account(b), 60, "x2", "t")
    assert caught.value.account == user_account(a)
    async with sessions() as session:
        assert await ledger.balance(session, user_account(a)) == 100  # all or nothing
        assert await ledger.balance(session, user_account(b)) == 0
        assert await ledger.entries_of(session, user_account(b)) == []
    await _invariant(sessions)


async def test_the_database_check_refuses_a_negative_balance(engine: AsyncEngine) -> None:
    """Even a statement that bypasses the ledger cannot make a balance negative."""
    sessions = make_sessions(engine)
    (a,) = await _users(sessions, 1)
    async with sessions() as session, session.begin():
        await ledger.grant(session, a, 10, "g", "welcome")
    with pytest.raises((IntegrityError, DBAPIError)):
        async with sessions() as session, session.begin():
            await session.execute(
                text("UPDATE balances SET balance = balance - 11 WHERE account_id = :a"),
                {"a": user_account(a)},
            )
    with pytest.raises((IntegrityError, DBAPIError)):  # and no entry moves nothing
        async with sessions() as session, session.begin():
            await session.execute(
                text(
                    "INSERT INTO ledger_entries (idempotency_key, debit_account, "
                    "credit_account, amount, reason) VALUES ('z', 'house', :a, 0, 'x')"
                ),
                {"a": user_account(a)},
            )
    async with sessions() as session:
        assert await ledger.balance(session, user_account(a)) == 10
    await _invariant(sessions)


async def test_the_same_key_twice_is_one_movement(engine: AsyncEngine) -> None:
    sessions = make_sessions(engine)
    a, b = await _users(sessions, 2)
    async with sessions() as session, session.begin():
        assert await ledger.grant(session, a, 100, "welcome:a", "welcome")
        assert not await ledger.grant(session, a, 100, "welcome:a", "welcome")
    move = Movement("table:1:seq:1:stake:0", user_account(a), user_account(b), 40, "stake")
    for _ in range(3):  # a retried batch, in fresh transactions
        async with sessions() as session, session.begin():
            await ledger.post_all(session, [move])
    async with sessions() as session:
        assert await ledger.balance(session, user_account(a)) == 60
        assert await ledger.balance(session, user_account(b)) == 40
    report = await _invariant(sessions)
    assert report.granted == 100


async def test_concurrent_transfers_never_overdraw(engine: AsyncEngine) -> None:
    """Many transactions at once take from one account more than it holds: the ones
    that fit succeed, the rest fail with Overdraft, the balance never goes negative."""
    sessions = make_sessions(engine)
    payer, *payees = await _users(sessions, 6)
    async with sessions() as session, session.begin():
        await ledger.grant(session, payer, 1000, "g", "welcome")

    async def take(index: int) -> bool:
        async with sessions() as session, session.begin():
            return await ledger.transfer(
                session,
                user_account(payer),
                user_account(payees[index % len(payees)]),
                70,
                f"take:{index}",
                "transfer",
            )

    results = await asyncio.gather(*(take(i) for i in range(40)), return_exceptions=True)
    succeeded = [r for r in results if r is True]
    failed = [r for r in results if isinstance(r, Overdraft)]
    assert len(succeeded) == 1000 // 70, results
    assert len(failed) == 40 - len(succeeded), [r for r in results if r is not True]
    async with sessions() as session:
        assert await ledger.balance(session, user_account(payer)) == 1000 % 70
    report = await _invariant(sessions)
    assert report.granted == report.held == 1000


async def test_concurrent_replays_of_one_key_pay_once(engine: AsyncEngine) -> None:
    sessions = make_sessions(engine)
    (a,) = await _users(sessions, 1)

    async def pay() -> bool:
        async with sessions() as session, session.begin():
            return await ledger.grant(session, a, 25, "earn:table:7", "earnings")

    results = await asyncio.gather(*(pay() for _ in range(10)))
    assert results.count(True) == 1
    async with sessions() as session:
        assert await ledger.balance(session, user_account(a)) == 25
    await _invariant(sessions)


def _earning(user_id: int, key: str, amount: int = 10, cap: int = 25) -> Movement:
    return Movement(key, HOUSE, user_account(user_id), amount, "earnings", daily_cap=cap)


async def test_capped_earnings_pay_the_rest_up_to_the_cap(engine: AsyncEngine) -> None:
    """Free-table earnings of 10 with a daily cap of 25: 10, 10, then the 5 left, then
    nothing; another account has its own cap; earnings older than 24 hours no longer
    count against it, and other reasons never did."""
    sessions = make_sessions(engine)
    a, b = await _users(sessions, 2)
    async with sessions() as session, session.begin():
        await ledger.grant(session, a, 1000, "welcome:a", "welcome")  # not earnings
    paid = []
    for match in range(4):
        async with sessions() as session, session.begin():
            before = await ledger.balance(session, user_account(a))
            await ledger.post(session, _earning(a, f"earn:a:{match}"))
            paid.append(await ledger.balance(session, user_account(a)) - before)
    assert paid == [10, 10, 5, 0]
    async with sessions() as session, session.begin():
        assert await ledger.post(session, _earning(b, "earn:b:0"))
        assert await ledger.balance(session, user_account(b)) == 10
        # A day later: the first two earnings are out of the window.
        await session.execute(
            text(
                "UPDATE ledger_entries SET created_at = :then "
                "WHERE idempotency_key IN ('earn:a:0', 'earn:a:1')"
            ),
            {"then": datetime.now(UTC) - timedelta(hours=25)},
        )
    async with sessions() as session, session.begin():
        assert await ledger.post(session, _earning(a, "earn:a:4"))
        assert await ledger.balance(session, user_account(a)) == 1000 + 25 + 10
    report = await _invariant(sessions)
    assert report.granted == 1000 + 35 + 10


async def test_concurrent_capped_earnings_never_pass_the_cap(engine: AsyncEngine) -> None:
    """Many matches of one account finish at once, each in its own transaction: the
    account is paid its cap, not a coin more (the balance rows are locked before the
    day's earnings are summed)."""
    sessions = make_sessions(engine)
    (a,) = await _users(sessions, 1)

    async def earn(index: int) -> bool:
        async with sessions() as session, session.begin():
            return await ledger.post(session, _earning(a, f"earn:{index}", cap=55))

    results = await asyncio.gather(*(earn(i) for i in range(20)))
    assert results.count(True) == 6, results  # 5 times 10, then the 5 left
    async with sessions() as session:
        assert await ledger.balance(session, user_account(a)) == 55
    report = await _invariant(sessions)
    assert report.granted == 55


async def test_payout_shares() -> None:
    assert ledger.payout_shares(200, 2, [2, 1], 1) == {1: 200}
    assert ledger.payout_shares(300, 3, [2, 1, 3], 1) == {1: 210, 0: 90}
    assert ledger.payout_shares(401, 4, [3, 2, 4, 1], 3) == {3: 280, 1: 121}
    assert ledger.payout_shares(100, 2, None, 0) == {0: 100}  # Conquian
    # Tied places share their prizes (docs/rules.md §1.9): a finished match always pays.
    assert ledger.payout_shares(300, 3, [1, 2, 2], 0) == {0: 210, 1: 45, 2: 45}
    assert ledger.payout_shares(300, 3, [1, 1, 3], None) == {0: 150, 1: 150}
