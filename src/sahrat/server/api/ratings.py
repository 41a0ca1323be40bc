"""Ratings (``/api/ratings``, ``/api/users/{id}/ratings``, tagged ``players``): the
rating leaderboard of a pool and a player's public ratings (docs/rating.md).

The leaderboard shows settled ratings (not provisional) of registered accounts that
played rated in the pool in the last 30 days; a guest plays rated but is not ranked.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Query
from sqlalchemy.ext.asyncio import AsyncSession

from sahrat.server.api.deps import HubDep, PlayerId, http_error, responses
from sahrat.server.api.models import Pool, PoolRating, utc
from sahrat.server.api.rating_models import BoardRow, HistoryPoint, ProfilePool, ProfileRatings
from sahrat.store import ratings
from sahrat.store.models import User

BOARD_MAX = 200
HISTORY_SHOWN = 100

router = APIRouter(prefix="/api", tags=["players"])


@router.get("/ratings", response_model=list[BoardRow])
async def leaderboard(
    hub: HubDep,
    pool: Annotated[Pool, Query(description="konkan51, konkan71 or conquian")] = "konkan51",
    limit: Annotated[int, Query(ge=1, le=BOARD_MAX)] = 50,
) -> list[BoardRow]:
    """The best settled ratings of a pool played in the last 30 days, highest first
    (equal ratings share a rank)."""
    now = datetime.now(UTC)
    async with hub.sessions() as session:
        rows = await ratings.leaderboard(session, pool, now, limit)
    return [
        BoardRow(rank=r.rank, user_id=r.user_id, name=r.name, rating=r.rating, games=r.games)
        for r in rows
    ]


async def pool_ratings(session: AsyncSession, user_id: int) -> dict[str, PoolRating]:
    """A user's rating in each pool they played rated (for ``/api/me``)."""
    return {
        row.pool: PoolRating(rating=row.shown, provisional=row.provisional, games=row.games)
        for row in await ratings.ratings_of(session, user_id)
    }


async def profile_pools(session: AsyncSession, user_id: int) -> list[ProfilePool]:
    """Each pool's rating with its latest history (public, and an admin's view)."""
    out = []
    for row in await ratings.ratings_of(session, user_id):
        history = await ratings.history_of(session, user_id, row.pool, HISTORY_SHOWN)
        out.append(
            ProfilePool(
                pool=row.pool,  # type: ignore[arg-type]  # a pool of POOLS, as written
                rating=row.shown,
                provisional=row.provisional,
                games=row.games,
                history=[
                    HistoryPoint(
                        match_id=point.match_id,
                        at=utc(point.at),
                        rating=point.shown,
                        provisional=point.provisional,
                    )
                    for point in history
                ],
            )
        )
    return out


@router.get("/users/{user_id}/ratings", response_model=ProfileRatings, responses=responses(404))
async def user_ratings(user_id: PlayerId, hub: HubDep) -> ProfileRatings:
    """A player's ratings, one per pool played rated, each with its last 100 changes."""
    async with hub.sessions() as session:
        user = await session.get(User, user_id)
        if user is None:
            raise http_error("no_such_player", f"there is no player {user_id}")
        pools = await profile_pools(session, user_id)
    return ProfileRatings(user_id=user.id, name=user.name, pools=pools)
