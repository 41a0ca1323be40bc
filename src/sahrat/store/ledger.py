"""The coin ledger: double entry, idempotent, never overdrawn.

Every movement of coins is one ``ledger_entries`` row: ``amount`` leaves the
*debit* account and arrives in the *credit* account. Each movement carries an
idempotency key (``UNIQUE``): posting the same key again changes nothing, so a
retried write can never pay twice. The ``balances`` table holds every
account's balance and is updated in the same transaction as the entry; its
``CHECK (balance >= 0 OR account_id = 'house')`` makes an overdraft fail in
the database itself, and each debit is also guarded (``... WHERE balance >=
:amount``) so that it fails as :class:`Overdraft` rather than as a constraint
error. On PostgreSQL the ``UPDATE`` locks the row, so concurrent debits of one
account are serialised and re-checked.

The house is the only account allowed below zero: it is where coins come
from, and its balance is minus everything it ever granted. So the invariant is

    sum of all balances == 0, i.e. players + pots == -house == granted,

and every account's balance equals its credits minus its debits
(:func:`check_invariant`).

Accounts: ``user:<id>`` (a player), ``pot:<table>:<seq>`` (the pot of a
table's match, ``seq`` being the match's ``start`` entry), ``house``. All the
functions here work inside a caller's session and transaction.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from .models import HOUSE_ACCOUNT, Balance, LedgerAccount, LedgerEntry

HOUSE = HOUSE_ACCOUNT


class LedgerError(Exception):
    """A movement that cannot be made."""


class Overdraft(LedgerError):
    """The debit account does not hold the amount."""

    def __init__(self, account: str, amount: int) -> None:
        super().__init__(f"account {account} cannot pay {amount}")
        self.account = account
        self.amount = amount


def user_account(user_id: int) -> str:
    return f"user:{user_id}"


def pot_account(table_id: int, start_seq: int) -> str:
    return f"pot:{table_id}:{start_seq}"


def user_of(account: str) -> int | None:
    kind, _, rest = account.partition(":")
    return int(rest) if kind == "user" else None


@dataclass(frozen=True)
class Movement:
    """One movement to post: ``amount`` from ``debit`` to ``credit``.

    With ``daily_cap`` the movement is capped (free-table earnings): the credit account
    is paid at most what keeps its credits of this ``reason`` over the last
    :data:`CAP_WINDOW` within ``daily_cap`` — a movement that would pass it pays the
    rest up to it, and one past it pays nothing (:func:`post`)."""

    key: str
    debit: str
    credit: str
    amount: int
    reason: str
    table_id: int | None = None
    match_seq: int | None = None
    daily_cap: int | None = None


CAP_WINDOW = timedelta(hours=24)  # a capped movement's window: rolling, not a calendar day


def _insert(session: AsyncSession, model: Any) -> Any:
    dialect = session.get_bind().dialect.name
    return (postgresql.insert if dialect == "postgresql" else sqlite.insert)(model)


def _account_row(account: str) -> dict[str, Any]:
    kind, _, rest = account.partition(":")
    user_id = int(rest) if kind == "user" else None
    table_id = int(rest.split(":")[0]) if kind == "pot" else None
    return {"id": account, "kind": kind, "user_id": user_id, "table_id": table_id}


async def ensure_accounts(session: AsyncSession, *accounts: str) -> None:
    """Create the accounts (balance 0) that do not exist yet."""
    rows = [_account_row(account) for account in sorted(set(accounts))]
    await session.execute(_insert(session, LedgerAccount).on_conflict_do_nothing(), rows)
    await session.execute(
        _insert(session, Balance).on_conflict_do_nothing(),
        [{"account_id": row["id"], "balance": 0} for row in rows],
    )


async def post(session: AsyncSession, movement: Movement) -> bool:
    """Post one movement; False if its key was posted before (then nothing changes), or
    if it is capped and its account has had its cap already. Raises :class:`Overdraft`
    if the debit account cannot pay (the caller's transaction must then be rolled
    back)."""
    if movement.amount <= 0:
        raise LedgerError(f"{movement.key}: the amount must be positive, not {movement.amount}")
    if movement.debit == movement.credit:
        raise LedgerError(f"{movement.key}: an account cannot pay itself")
    await ensure_accounts(session, movement.debit, movement.credit)
    if movement.daily_cap is not None:
        amount = await _within_cap(session, movement, movement.daily_cap)
        if amount <= 0:
            return False
        movement = replace(movement, amount=amount)
    inserted = await session.execute(
        _insert(session, LedgerEntry)
        .values(
            idempotency_key=movement.key,
            debit_account=movement.debit,
            credit_account=movement.credit,
            amount=movement.amount,
            reason=movement.reason,
            table_id=movement.table_id,
            match_seq=movement.match_seq,
        )
        .on_conflict_do_nothing(index_elements=["idempotency_key"])
        .returning(LedgerEntry.id)
    )
    if inserted.scalar() is None:
        return False  # posted before: a replay
    # Lock the two balance rows in a fixed order, so two opposite transfers cannot deadlock.
    for account in sorted((movement.debit, movement.credit)):
        if account == movement.debit:
            stmt = update(Balance).where(Balance.account_id == account)
            if account != HOUSE:
                stmt = stmt.where(Balance.balance >= movement.amount)
            done = await session.execute(
                stmt.values(balance=Balance.balance - movement.amount),
                execution_options={"synchronize_session": False},
            )
            if done.rowcount != 1:  # type: ignore[attr-defined]
                raise Overdraft(account, movement.amount)
        else:
            await session.execute(
                update(Balance)
                .where(Balance.account_id == account)
                .values(balance=Balance.balance + movement.amount),
                execution_options={"synchronize_session": False},
            )
    return True


async def _within_cap(session: AsyncSession, movement: Movement, cap: int) -> int:
    """What of a capped movement may be paid now: the rest of the credit account's cap.

    The two balance rows are locked first, in the order :func:`post` locks them (on
    PostgreSQL ``FOR UPDATE``; SQLite has one writer at a time): a concurrent capped
    payment to the same account waits for this transaction and then counts what it
    paid, so no two of them can pay past the cap together."""
    accounts = sorted((movement.debit, movement.credit))
    await session.execute(
        select(Balance.account_id)
        .where(Balance.account_id.in_(accounts))
        .order_by(Balance.account_id)
        .with_for_update()
    )
    since = datetime.now(UTC) - CAP_WINDOW
    paid = await session.scalar(
        select(func.coalesce(func.sum(LedgerEntry.amount), 0)).where(
            LedgerEntry.credit_account == movement.credit,
            LedgerEntry.reason == movement.reason,
            LedgerEntry.created_at >= since,
        )
    )
    return min(movement.amount, cap - int(paid or 0))


async def post_all(session: AsyncSession, movements: list[Movement]) -> int:
    """Post several movements in order; the number actually applied (not replays)."""
    applied = 0
    for movement in movements:
        applied += await post(session, movement)
    return applied


async def grant(session: AsyncSession, user_id: int, amount: int, key: str, reason: str) -> bool:
    """The house gives a player ``amount`` new coins (a welcome grant, free-table earnings)."""
    return await post(session, Movement(key, HOUSE, user_account(user_id), amount, reason))


async def transfer(
    session: AsyncSession, debit: str, credit: str, amount: int, key: str, reason: str
) -> bool:
    return await post(session, Movement(key, debit, credit, amount, reason))


def stake_movements(
    table_id: int, start_seq: int, players: list[int | None], stake: int
) -> list[Movement]:
    """Every seated player's stake into the pot of the match that starts at ``start_seq``."""
    pot = pot_account(table_id, start_seq)
    return [
        Movement(
            f"table:{table_id}:seq:{start_seq}:stake:{seat}",
            user_account(user_id),
            pot,
            stake,
            "stake",
            table_id,
            start_seq,
        )
        for seat, user_id in enumerate(players)
        if user_id is not None and stake > 0
    ]


FIRST_PRIZE_PERCENT = 70  # RULES.md §1.10: at 3-4 seats first takes 70 %, second the rest


def prizes(pot: int, players: int) -> list[int]:
    """The prize of each finishing position, best first: the whole pot with 2 players
    (and in Conquian); with 3-4, ``floor(pot*70/100)`` and the rest (RULES.md §1.10)."""
    if players <= 2:
        return [pot]
    first = pot * FIRST_PRIZE_PERCENT // 100
    return [first, pot - first]


def payout_shares(
    pot: int, players: int, places: list[int] | None, winner: int | None
) -> dict[int, int]:
    """Seat -> coins out of ``pot`` for a finished match; the shares always add up to
    the pot, whatever ``places`` holds (docs/rules.md §1.9, docs/economy.md).

    ``places`` ranks the seats (lower is better, equal numbers are tied, e.g.
    ``[1, 2, 2]`` or ``[1, 1, 3, 4]``). Seats tied for a place take the positions that
    place spans and share the prizes of those positions: two tied firsts of three share
    first and second prize. A share is split evenly, rounded down; the coins left over
    go one each to the tied seats in seat order (the order of play), so no coin stays
    in the pot. Without ``places`` (Conquian, or 2 players), ``winner`` takes the pot,
    and a match without a winner (a tie) is split between all the seats.
    """
    if pot <= 0:
        return {}
    table = prizes(pot, players)
    if not places:
        if winner is not None and not 0 <= winner < players:
            raise LedgerError(f"the winner {winner} is not one of {players} seats")
        table = [pot]
        places = [1 if winner in (None, seat) else 2 for seat in range(players)]
    if not places:
        raise LedgerError("a match without seats")
    seats = sorted(range(len(places)), key=lambda seat: places[seat])
    if len(table) > len(seats):  # more prizes than seats: the last seat keeps the rest
        table = [*table[: len(seats) - 1], sum(table[len(seats) - 1 :])]
    table += [0] * (len(seats) - len(table))
    shares: dict[int, int] = {}
    position = 0
    while position < len(seats):
        tied = [seat for seat in seats if places[seat] == places[seats[position]]]
        prize = sum(table[position : position + len(tied)])
        each, left_over = divmod(prize, len(tied))
        for index, seat in enumerate(sorted(tied)):
            shares[seat] = each + (1 if index < left_over else 0)
        position += len(tied)
    return {seat: amount for seat, amount in shares.items() if amount > 0}


def payout_movements(
    table_id: int,
    start_seq: int,
    players: list[int | None],
    shares: dict[int, int],
) -> list[Movement]:
    pot = pot_account(table_id, start_seq)
    out = []
    for seat, amount in sorted(shares.items()):
        user_id = players[seat]
        if amount <= 0 or user_id is None:
            continue
        out.append(
            Movement(
                f"table:{table_id}:seq:{start_seq}:payout:{seat}",
                pot,
                user_account(user_id),
                amount,
                "payout",
                table_id,
                start_seq,
            )
        )
    return out


async def balance(session: AsyncSession, account: str) -> int:
    value = await session.scalar(select(Balance.balance).where(Balance.account_id == account))
    return int(value or 0)


async def balances(session: AsyncSession, accounts: list[str]) -> dict[str, int]:
    rows = await session.execute(
        select(Balance.account_id, Balance.balance).where(Balance.account_id.in_(accounts))
    )
    found = {account: int(value) for account, value in rows.all()}
    return {account: found.get(account, 0) for account in accounts}


async def entries_of(
    session: AsyncSession, account: str, limit: int = 100, offset: int = 0
) -> list[LedgerEntry]:
    """An account's movements, newest first."""
    rows = await session.scalars(
        select(LedgerEntry)
        .where((LedgerEntry.debit_account == account) | (LedgerEntry.credit_account == account))
        .order_by(LedgerEntry.id.desc())
        .limit(limit)
        .offset(offset)
    )
    return list(rows.all())


@dataclass
class InvariantReport:
    total: int  # sum of every balance (0 when the ledger balances)
    granted: int  # everything the house ever gave (-its balance)
    held: int  # sum of the players' and pots' balances
    negative: list[str] = field(default_factory=list)  # accounts below zero (not the house)
    mismatched: list[str] = field(default_factory=list)  # balance != credits - debits

    @property
    def ok(self) -> bool:
        return (
            self.total == 0
            and self.held == self.granted
            and not self.negative
            and not self.mismatched
        )


async def check_invariant(session: AsyncSession) -> InvariantReport:
    """Recompute every balance from the entries and compare (read in one transaction)."""
    stored = {
        account: int(value)
        for account, value in (await session.execute(select(Balance.account_id, Balance.balance)))
    }
    computed: dict[str, int] = dict.fromkeys(stored, 0)
    credits = await session.execute(
        select(LedgerEntry.credit_account, func.sum(LedgerEntry.amount)).group_by(
            LedgerEntry.credit_account
        )
    )
    for account, amount in credits:
        computed[account] = computed.get(account, 0) + int(amount)
    debits = await session.execute(
        select(LedgerEntry.debit_account, func.sum(LedgerEntry.amount)).group_by(
            LedgerEntry.debit_account
        )
    )
    for account, amount in debits:
        computed[account] = computed.get(account, 0) - int(amount)
    house = stored.get(HOUSE, 0)
    return InvariantReport(
        total=sum(stored.values()),
        granted=-house,
        held=sum(value for account, value in stored.items() if account != HOUSE),
        negative=sorted(a for a, v in stored.items() if v < 0 and a != HOUSE),
        mismatched=sorted(a for a in computed if computed[a] != stored.get(a, 0)),
    )
