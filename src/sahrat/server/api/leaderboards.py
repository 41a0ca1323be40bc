"""The leaderboard (``GET /api/leaderboard``, tagged ``players``).

It ranks and counts wins by counted matches only (docs/economy.md, "What counts"):
a match a player's bot played, a drawn one or one they left earns no place on it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from sqlalchemy import func, select

from sahrat.server.api.deps import HubDep
from sahrat.server.api.models import LeaderRow
from sahrat.store.models import Balance, LedgerAccount, MatchPlayer, User

router = APIRouter(prefix="/api", tags=["players"])


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
