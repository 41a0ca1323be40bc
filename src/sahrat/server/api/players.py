"""Player REST: my coin ledger, my match history, the leaderboard.

(``GET /api/me`` with the balance is in ``routes.py``, beside the accounts.)
A player's matches are their ``match_players`` rows, written with each finished
match and kept for ever: leaving the table, or a rematch at it, changes none of
them. Each says whether the match counted for the player (docs/economy.md, "What
counts"); the leaderboard ranks and counts wins by counted matches only.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import defer

from sahrat.server.api.routes import MAX_ID, HubDep, MatchSummary, _match_fields, _responses, _utc
from sahrat.server.auth import CurrentUser
from sahrat.server.table.settlement import seat_place
from sahrat.store import ledger
from sahrat.store.models import Balance, LedgerAccount, LedgerEntry, Match, MatchPlayer, User


class EntryOut(BaseModel):
    """One coin movement, as seen from one account."""

    id: int
    amount: int = Field(description="positive: coins in; negative: coins out")
    reason: str = Field(description="welcome | earnings | stake | payout")
    counterparty: str = Field(description="the other account: house, pot:<table>:<seq>, user:<id>")
    table_id: int | None
    created_at: datetime


class LedgerOut(BaseModel):
    balance: int
    entries: list[EntryOut] = Field(description="newest first")


class MyMatch(MatchSummary):
    seat: int = Field(description="my seat in the match")
    won: bool
    place: int | None = Field(
        description="my place, 1 the first (tied places share one); null if the sheet has none"
    )
    total: int | None = Field(
        description="my total: Konkan points (fewer is better), Conquian deals won"
    )
    totals: list[int] = Field(description="every seat's total, by seat")
    names: list[str | None] = Field(description="the players' names today, by seat; null: a bot")
    counted: bool = Field(
        description="the match counted for me (docs/economy.md, 'What counts'): it earned "
        "free-table coins, counts towards a coin table's required matches and on the "
        "leaderboard"
    )


class LeaderRow(BaseModel):
    user_id: int
    name: str
    coins: int
    wins: int


def entry_out(entry: LedgerEntry, account: str) -> EntryOut:
    incoming = entry.credit_account == account
    return EntryOut(
        id=entry.id,
        amount=entry.amount if incoming else -entry.amount,
        reason=entry.reason,
        counterparty=entry.debit_account if incoming else entry.credit_account,
        table_id=entry.table_id,
        created_at=_utc(entry.created_at),
    )


async def ledger_of(session: AsyncSession, user_id: int, limit: int, offset: int) -> LedgerOut:
    account = ledger.user_account(user_id)
    entries = await ledger.entries_of(session, account, limit, offset)
    return LedgerOut(
        balance=await ledger.balance(session, account),
        entries=[entry_out(entry, account) for entry in entries],
    )


Limit = Annotated[int, Query(ge=1, le=500)]
Offset = Annotated[int, Query(ge=0, le=MAX_ID)]

router = APIRouter(prefix="/api", tags=["players"])


@router.get("/me/ledger", response_model=LedgerOut, responses=_responses(401))
async def my_ledger(
    user: CurrentUser, hub: HubDep, limit: Limit = 100, offset: Offset = 0
) -> LedgerOut:
    """My balance and my coin movements, newest first."""
    async with hub.sessions() as session:
        return await ledger_of(session, user.id, limit, offset)


@router.get("/me/matches", response_model=list[MyMatch], responses=_responses(401))
async def my_matches(
    user: CurrentUser, hub: HubDep, limit: Limit = 50, offset: Offset = 0
) -> list[MyMatch]:
    """Every finished match I sat in, newest first (also at tables I have left since),
    with its score sheet, my place and total, every seat's total, the players' names as
    they are today, and whether it counted for me."""
    async with hub.sessions() as session:
        rows = (
            await session.execute(
                select(Match, MatchPlayer)
                .options(defer(Match.record))  # the list needs no game record (large)
                .join(MatchPlayer, MatchPlayer.match_id == Match.id)
                .where(MatchPlayer.user_id == user.id)
                .order_by(Match.id.desc())
                .limit(limit)
                .offset(offset)
            )
        ).all()
        ids = {uid for match, _ in rows for uid in match.players or [] if uid is not None}
        names: dict[int, str] = {}
        if ids:
            found = await session.execute(select(User.id, User.name).where(User.id.in_(ids)))
            names = dict(found.tuples().all())
    out = []
    for match, mine in rows:
        fields: dict[str, Any] = _match_fields(match)
        totals = _totals(match.score_sheet)
        seat = mine.seat
        out.append(
            MyMatch(
                **fields,
                seat=seat,
                won=mine.won,
                place=mine.place if mine.place is not None else _place(match, seat),
                total=totals[seat] if seat < len(totals) else None,
                totals=totals,
                names=[names.get(uid) if uid is not None else None for uid in match.players or []],
                counted=mine.counted,
            )
        )
    return out


def _totals(sheet: Any) -> list[int]:
    found = sheet.get("totals") if isinstance(sheet, dict) else None
    if not isinstance(found, list) or not all(isinstance(x, int) for x in found):
        return []
    return list(found)


def _place(match: Match, seat: int) -> int | None:
    sheet = match.score_sheet if isinstance(match.score_sheet, dict) else {}
    return seat_place(match.game, sheet, match.winner_seat, seat)


def _counted_a_match() -> Any:
    """The user has a counted match (docs/economy.md, "What counts")."""
    return (
        select(MatchPlayer.match_id)
        .where(MatchPlayer.user_id == User.id, MatchPlayer.counted.is_(True))
        .exists()
    )


@router.get("/leaderboard", response_model=list[LeaderRow])
async def leaderboard(
    hub: HubDep,
    by: Annotated[Literal["coins", "wins"], Query(description="rank by coins or by wins")] = (
        "coins"
    ),
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
) -> list[LeaderRow]:
    """The best players by coins held or by counted matches won (ties: the older
    account). Only registered accounts with at least one counted match are ranked: not
    guests, not fresh accounts sitting on their welcome coins, not accounts whose
    matches bots played, not suspended ones, not admins (docs/economy.md)."""
    wins = (
        select(MatchPlayer.user_id.label("user_id"), func.count().label("wins"))
        .where(MatchPlayer.counted.is_(True), MatchPlayer.won.is_(True))
        .group_by(MatchPlayer.user_id)
        .subquery()
    )
    coins = (
        select(LedgerAccount.user_id.label("user_id"), Balance.balance.label("coins"))
        .join(Balance, Balance.account_id == LedgerAccount.id)
        .where(LedgerAccount.user_id.is_not(None))
        .subquery()
    )
    coins_col = func.coalesce(coins.c.coins, 0)
    wins_col = func.coalesce(wins.c.wins, 0)
    order = (
        (coins_col.desc(), wins_col.desc())
        if by == "coins"
        else (wins_col.desc(), coins_col.desc())
    )
    query = (
        select(User.id, User.name, coins_col, wins_col)
        .outerjoin(coins, coins.c.user_id == User.id)
        .outerjoin(wins, wins.c.user_id == User.id)
        .where(
            User.is_admin.is_(False),
            User.guest.is_(False),
            User.suspended.is_(False),
            _counted_a_match(),
        )
        .order_by(*order, User.id)
        .limit(limit)
    )
    async with hub.sessions() as session:
        rows = (await session.execute(query)).all()
    return [
        LeaderRow(user_id=uid, name=name, coins=int(c), wins=int(w)) for uid, name, c, w in rows
    ]
