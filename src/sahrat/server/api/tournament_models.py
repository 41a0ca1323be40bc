"""The tournaments' REST shapes (docs/tournaments.md, "REST"), and the check of the
bodies that make a tournament or a schedule: each field is read by hand, so that every
bad one is answered with a code of its own and ``field`` naming it (as the queue's
body is), never a generic validation error.
"""

from __future__ import annotations

import math
import unicodedata
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from fastapi import HTTPException
from pydantic import BaseModel, ConfigDict

from sahrat import tournaments as rules
from sahrat.server.api.deps import http_error

NAME_MOST = 60
FEE_MOST = 1_000_000
AHEAD_DAYS = 30  # a tournament starts within this many days
EVERY_MOST = 7 * 24 * 60  # a schedule makes one at least once a week
CREATE_FIELDS = (
    "name",
    "game",
    "format",
    "seats",
    "rounds",
    "advance",
    "starts_at",
    "fee",
    "min_fill",
)
SCHEDULE_FIELDS = (
    *(f for f in CREATE_FIELDS if f != "starts_at"),
    "first_at",
    "every_minutes",
    "open_minutes",
)


class PlanBody(BaseModel):
    """The fields a tournament's body and a schedule's share: the plan and the entry
    terms (documented shapes only: the routes read the body by hand, ``plan_fields``)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    name: str
    game: Literal["konkan", "conquian"]
    format: Literal["knockout", "swiss"]
    seats: int
    rounds: int | None = None
    advance: int | None = None
    fee: int = 0
    min_fill: int | None = None


class Create(PlanBody):
    """A tournament to make (the documented shape; the route checks each field)."""

    starts_at: str


class ScheduleBody(PlanBody):
    """A schedule of system tournaments (the documented shape)."""

    first_at: str
    every_minutes: int
    open_minutes: int = 60


class ComplaintBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    text: str


class DecisionBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    decision: Literal["dismissed", "upheld"]


class Common(BaseModel):
    """What the list and the page both show of a tournament."""

    id: int
    name: str
    game: str
    format: str
    seats: int
    advance: int
    fee: int
    pool: int
    starts_at: str
    state: str
    registered: int
    made_by: str
    version: int


class Summary(Common):
    rounds: int  # the rounds it plays


class Listing(BaseModel):
    tournaments: list[Summary]


class Me(BaseModel):
    registered: bool
    may_register: bool
    refusal: str | None


class EntrantOut(BaseModel):
    entry: int
    user_id: int | None
    name: str
    bot: bool
    rating: int
    dropped: bool
    no_show: bool  # never came: no standing (docs/tournaments.md)


class StandingOut(BaseModel):
    place: int
    entry: int
    name: str
    points: str
    match_total: int
    opponents_strength: str
    rounds_played: int
    out_in_round: int | None
    prize: int | None


class TableOut(BaseModel):
    table_no: int
    table_id: int | None
    seats: list[int]
    state: str
    places: dict[str, int] | None


class RoundOut(BaseModel):
    round: int
    tables: list[TableOut]


class PrizeOut(BaseModel):
    place: int
    coins: int


class Detail(Common):
    """A Summary whose ``rounds`` is the list of the rounds' tables; the rounds it plays
    are ``round_count``."""

    round_count: int
    me: Me
    entrants: list[EntrantOut]
    standings: list[StandingOut]
    rounds: list[RoundOut]
    prizes: list[PrizeOut]
    complaint_until: str | None
    complaints_open: int


class ComplaintOut(BaseModel):
    id: int
    entry: int
    user_id: int
    text: str
    state: str
    created_at: str


class Complaints(BaseModel):
    complaints: list[ComplaintOut]


class ScheduleOut(BaseModel):
    id: int
    name: str
    game: str
    format: str
    seats: int
    rounds: int
    advance: int
    fee: int
    min_fill: int
    every_minutes: int
    open_minutes: int
    next_at: str


class Schedules(BaseModel):
    schedules: list[ScheduleOut]


# --- reading a body, field by field ------------------------------------------------------


def bad_field(code: str, field: str, message: str) -> HTTPException:
    error = http_error(code, message)
    error.detail["field"] = field  # type: ignore[index]
    return error


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _whole(body: dict[str, Any], field: str, code: str, least: int, most: int) -> int:
    value = body.get(field)
    if not isinstance(value, int) or isinstance(value, bool) or not least <= value <= most:
        raise bad_field(code, field, f"{field} must be a whole number from {least} to {most}")
    return value


def _name(body: dict[str, Any]) -> str:
    raw = body.get("name")
    if not isinstance(raw, str):
        raise bad_field("tournament_name", "name", "name must be text")
    name = " ".join(raw.split())
    hidden = any(unicodedata.category(char) in ("Cc", "Cf", "Co", "Cs") for char in name)
    if not 3 <= len(name) <= NAME_MOST or hidden:
        raise bad_field(
            "tournament_name", "name", f"name must be 3 to {NAME_MOST} visible characters"
        )
    return name


def moment(body: dict[str, Any], field: str, code: str, now: datetime) -> datetime:
    """An ISO time with its offset, from now to ``AHEAD_DAYS`` ahead."""
    raw = body.get(field)
    try:
        if not isinstance(raw, str):
            raise ValueError(raw)
        when = datetime.fromisoformat(raw)
    except ValueError:
        raise bad_field(
            code, field, f"{field} must be an ISO time such as 2026-12-24T18:00:00Z"
        ) from None
    if when.tzinfo is None:
        raise bad_field(code, field, f"{field} must say its offset from UTC (Z or +03:00)")
    when = when.astimezone(UTC)
    if not now - timedelta(minutes=1) <= when <= now + timedelta(days=AHEAD_DAYS):
        raise bad_field(code, field, f"{field} must be from now to {AHEAD_DAYS} days ahead")
    return when


def plan_fields(body: dict[str, Any], known: tuple[str, ...]) -> tuple[rules.Plan, dict[str, Any]]:
    """The plan, name, fee and min_fill of a body (a 422 naming the first bad field)."""
    for key in body:
        if key not in known:
            raise bad_field(
                "tournament_unknown_field", str(key), f"unknown field {key!r}; known: {list(known)}"
            )
    name = _name(body)
    for field in ("game", "format"):
        if not isinstance(body.get(field), str):
            raise bad_field(f"tournament_{field}", field, f"{field} must be text")
    if not _is_int(body.get("seats")):
        raise bad_field("tournament_seats", "seats", "seats must be a whole number")
    for field in ("rounds", "advance"):
        if body.get(field) is not None and not _is_int(body[field]):
            raise bad_field(f"tournament_{field}", field, f"{field} must be a whole number")
    try:
        plan = rules.make_plan(
            body["game"], body["format"], body["seats"], body.get("rounds"), body.get("advance")
        )
    except rules.PlanError as refused:
        raise bad_field(
            refused.code, refused.code.removeprefix("tournament_"), refused.message
        ) from refused
    fee = _whole(body, "fee", "tournament_fee", 0, FEE_MOST) if "fee" in body else 0
    default_fill = max(2, math.ceil(plan.seats / 2)) if plan.format == "knockout" else 2
    min_fill = (
        _whole(body, "min_fill", "tournament_min_fill", 2, plan.seats)
        if body.get("min_fill") is not None
        else min(default_fill, plan.seats)
    )
    return plan, {"name": name, "fee": fee, "min_fill": min_fill}
