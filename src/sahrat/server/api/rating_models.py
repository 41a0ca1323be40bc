"""The HTTP edge's models of rated play (docs/rating.md): the rating board, a player's
public ratings, and what admins see of them."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from sahrat.server.api.models import Pool, PoolRating


class BoardRow(BaseModel):
    rank: int = Field(description="1 the best; equal ratings share a rank")
    user_id: int
    name: str
    rating: int
    games: int


class HistoryPoint(BaseModel):
    match_id: int | None = Field(description="the rated match; null: an admin's reset")
    at: datetime
    rating: int
    provisional: bool


class ProfilePool(PoolRating):
    pool: Pool
    history: list[HistoryPoint] = Field(description="the last 100 changes, oldest first")


class ProfileRatings(BaseModel):
    user_id: int
    name: str
    pools: list[ProfilePool] = Field(description="every pool the player played rated")


# --- admin -------------------------------------------------------------------------------


class AdminHistoryRow(BaseModel):
    pool: Pool
    match_id: int | None = Field(description="null: a reset")
    at: datetime
    rating: int
    provisional: bool
    mu: float
    sigma: float
    place: int | None = Field(description="the place the update used (a leaver: last)")
    reason: Literal["match", "reset"]


class AdminLeave(BaseModel):
    """A rated match the player left, or whose seat the timer forfeited."""

    table_id: int
    start_seq: int = Field(description="the match's start entry in the table's log")
    reason: Literal["left", "forfeit"]
    at: datetime


class AdminCooldown(BaseModel):
    score: float = Field(description="the leave score (decays with time and good matches)")
    leaves: int = Field(description="every leave ever counted")
    until: datetime | None = Field(description="the end of the bar; null: none")
    seconds_left: int
    changed_at: datetime | None


class AdminRatings(BaseModel):
    user_id: int
    name: str
    pools: list[ProfilePool]
    history: list[AdminHistoryRow] = Field(description="the last 200 changes, oldest first")
    leaves: list[AdminLeave] = Field(description="newest first")
    cooldown: AdminCooldown
