"""Rated quick play's queue (``/api/queue``, tagged ``tables``: it leads to one):
queue for a rated table, poll it, leave it.

A player queues for a game, a Konkan threshold, a number of seats and a speed; the
queue (``store/queue.py``, in the database: any process seats anyone) remembers their
rating then and the network they queued from, and the former
(``server/matchmaking/``) seats them at a rated table with players close to their
rating, or with bots after ``SAHRAT_QUEUE_BOT_WAIT_SECONDS``. The client polls GET
about once a second: each poll is the heartbeat that keeps the entry, and says the
table once seated. An entry not polled for ``SAHRAT_QUEUE_STALE_SECONDS`` is dropped,
so leaving the page leaves the queue.

Refused: a player in a rated cool-down (403 ``rated_cooldown``, with ``seconds_left``),
a suspended one (403 ``suspended``), one still in the rated match the queue last gave
them (409 ``queue_in_match``), and a body that is not one of the queue's choices (422,
a code per field, ``field`` naming it). Guests may queue.
"""

from __future__ import annotations

import asyncio
import math
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from fastapi import APIRouter, Body, HTTPException, Request, Response, status
from pydantic import BaseModel

from sahrat.ratings import pool_of
from sahrat.server.api.deps import CurrentUser, HubDep, address, check_limits, http_error, responses
from sahrat.server.hub import Hub
from sahrat.server.limits import Throttle
from sahrat.server.matchmaking.pairing import SPEEDS
from sahrat.store import queue
from sahrat.store.models import QueueEntry
from sahrat.store.ratings import cooldown_left, shown_ratings

JOIN_WINDOW = 60.0
JOIN_WAVE_WAIT = 2.0  # seconds a queueing waits for the wave it asked for

router = APIRouter(prefix="/api/queue", tags=["tables"])

GAMES = ("konkan", "conquian")
THRESHOLDS = (51, 71)
KONKAN_PLAYERS = (2, 3, 4)
FIELDS = ("game", "threshold", "players", "speed")


class QueueBody(BaseModel):
    """What a player queues for (the documented shape; the route checks each field
    itself, to answer a code that names it)."""

    game: Literal["konkan", "conquian"]
    threshold: Literal[51, 71] | None = None
    players: Literal[2, 3, 4] | None = None
    speed: Literal["fast", "normal", "slow"] = "normal"


class QueueOut(BaseModel):
    """Where the caller stands in the queue."""

    status: Literal["waiting", "seated", "none"]
    table_id: int | None = None
    waited_seconds: int = 0
    game: str | None = None
    pool: str | None = None
    players: int | None = None
    threshold: int | None = None
    speed: str | None = None
    turn_seconds: int | None = None
    rating: int | None = None


def bad_field(code: str, field: str, message: str) -> HTTPException:
    error = http_error(code, message)
    error.detail["field"] = field  # type: ignore[index]
    return error


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def wanted_of(body: dict[str, Any]) -> tuple[str, int | None, int, str]:
    """(game, threshold, players, speed) from a queue body, or a 422 naming the field."""
    for key in body:
        if key not in FIELDS:
            raise bad_field(
                "queue_unknown_field", str(key), f"unknown field {key!r}; known: {list(FIELDS)}"
            )
    game = body.get("game")
    if game not in GAMES:
        raise bad_field("queue_bad_game", "game", f"game must be one of {list(GAMES)}")
    threshold, players = body.get("threshold"), body.get("players")
    if game == "konkan":
        if threshold is None:
            threshold = 51
        elif not _is_int(threshold) or threshold not in THRESHOLDS:
            raise bad_field(
                "queue_bad_threshold", "threshold", f"threshold must be one of {list(THRESHOLDS)}"
            )
        if players is None:
            players = 4
        elif not _is_int(players) or players not in KONKAN_PLAYERS:
            raise bad_field(
                "queue_bad_players", "players", f"Konkan seats {list(KONKAN_PLAYERS)} players"
            )
    else:
        if threshold is not None:
            raise bad_field("queue_bad_threshold", "threshold", "Conquian has no threshold")
        if players is not None and (not _is_int(players) or players != 2):
            raise bad_field("queue_bad_players", "players", "Conquian is played by 2")
        players = 2
    speed = body.get("speed", "normal")
    if not isinstance(speed, str) or speed not in SPEEDS:
        raise bad_field("queue_bad_speed", "speed", f"speed must be one of {list(SPEEDS)}")
    return game, threshold, players, speed


def entry_out(entry: QueueEntry | None, now: datetime) -> QueueOut:
    if entry is None:
        return QueueOut(status="none")
    seated = entry.table_id is not None
    until = entry.seated_at if seated and entry.seated_at is not None else now
    return QueueOut(
        status="seated" if seated else "waiting",
        table_id=entry.table_id,
        waited_seconds=max(0, int(queue.seconds_between(entry.joined_at, until))),
        game=entry.game,
        pool=entry.pool,
        players=entry.players,
        threshold=entry.threshold,
        speed=entry.speed,
        turn_seconds=entry.turn_seconds,
        rating=entry.rating,
    )


def _joins_allowed(request: Request, user_id: int) -> None:
    """Each queueing costs a wave of the former: an account may queue
    ``SAHRAT_SEAT_CHANGES_PER_MINUTE`` times a minute (this process's own count)."""
    throttle: Throttle | None = getattr(request.app.state, "queue_joins", None)
    per_minute = request.app.state.hub.settings.seat_changes_per_minute
    if throttle is None:
        throttle = request.app.state.queue_joins = Throttle(per_minute, JOIN_WINDOW)
    check_limits(
        "too_many_seat_changes",
        f"an account may queue {per_minute} times a minute; try again later",
        (throttle, str(user_id)),
    )


async def _wave_after_join(
    request: Request, hub: Hub, user_id: int, now: datetime
) -> QueueOut | None:
    """Ask this process's former for a wave now and wait for it (a moment, at most
    ``JOIN_WAVE_WAIT``): the player whose tap fills a table is answered seated at
    once instead of at their next poll. None if no wave came in time."""
    former = getattr(request.app.state, "former", None)
    if former is None:
        return None
    try:
        await asyncio.wait_for(asyncio.shield(former.poke()), JOIN_WAVE_WAIT)
    except TimeoutError:
        return None
    async with hub.sessions() as session:
        # still waiting: the time waited as of the tap (0 for a new entry)
        return entry_out(await queue.entry_of(session, user_id), now)


@router.post(
    "",
    response_model=QueueOut,
    responses=responses(401, 403, 409, 422, 429),
    openapi_extra={
        "requestBody": {"content": {"application/json": {"schema": QueueBody.model_json_schema()}}}
    },
)
async def join_queue(
    user: CurrentUser,
    hub: HubDep,
    request: Request,
    body: dict[str, Any] = Body(...),  # noqa: B008 (FastAPI's way to read a JSON object)
) -> QueueOut:
    """Queue for a rated table: ``game`` (``konkan`` or ``conquian``), Konkan's
    ``threshold`` (51 or 71, default 51) and ``players`` (2, 3 or 4, default 4;
    Conquian is 2), ``speed`` (``fast`` 15 s a turn, ``normal`` 30 s, ``slow`` 60 s).
    Queueing again for the same while waiting keeps the place; for something else,
    the entry is replaced. The answer comes after the wave this queueing starts: the
    player whose tap fills a table is answered ``seated`` at once, with its id."""
    game, threshold, players, speed = wanted_of(body)
    if user.suspended or user.id in hub.suspended:
        raise http_error("suspended", "your account is suspended; you cannot sit down")
    _joins_allowed(request, user.id)
    now = datetime.now(UTC)
    options = {"threshold": threshold} if threshold is not None else {}
    pool = pool_of(game, options)
    async with hub.sessions() as session, session.begin():
        left = await cooldown_left(session, user.id, now)
        if left > 0:
            minutes = math.ceil(left / 60)
            error = http_error(
                "rated_cooldown",
                f"you left rated matches: you may queue again in {minutes} "
                f"minute{'s' if minutes != 1 else ''}",
            )
            error.detail["seconds_left"] = math.ceil(left)  # type: ignore[index]
            raise error
        old = await queue.entry_of(session, user.id)
        if old is not None and old.claimed_by is not None and old.table_id is None:
            return entry_out(old, now)  # a table is being formed for them this moment
        if (
            old is not None
            and old.table_id is not None
            and await queue.playing_at(session, user.id, old.table_id)
        ):
            raise http_error(
                "queue_in_match",
                f"you are still playing at table {old.table_id}; finish or leave it first",
            )
        rating, _provisional = (await shown_ratings(session, [user.id], pool))[user.id]
        wanted = queue.Wanted(
            game=game,
            pool=pool,
            players=players,
            threshold=threshold,
            speed=speed,
            turn_seconds=SPEEDS[speed],
            rating=rating,
            network=address(request),
        )
        entry = await queue.put_entry(session, user.id, wanted, now)
        answer = entry_out(entry, now)
    after = await _wave_after_join(request, hub, user.id, now)
    return after if after is not None else answer


@router.get("", response_model=QueueOut, responses=responses(401))
async def queue_status(user: CurrentUser, hub: HubDep) -> QueueOut:
    """Where the caller stands: ``waiting`` (for ``waited_seconds``), ``seated`` (at
    ``table_id``: open it) or ``none``. Each call is also the heartbeat that keeps a
    waiting entry (poll about once a second)."""
    now = datetime.now(UTC)
    stale_before = now - timedelta(seconds=hub.settings.queue_stale_seconds)
    async with hub.sessions() as session, session.begin():
        await queue.heartbeat(session, user.id, now, stale_before)
        entry = await queue.entry_of(session, user.id)
        return entry_out(entry, now)


@router.delete("", status_code=status.HTTP_204_NO_CONTENT, responses=responses(401, 409))
async def leave_queue(user: CurrentUser, hub: HubDep) -> Response:
    """Leave the queue (nothing to leave is no error). A table being formed for the
    caller at this very moment cannot be left: 409 ``queue_forming`` (it is there in
    a moment: leave it then)."""
    async with hub.sessions() as session, session.begin():
        removed = await queue.remove_entry(session, user.id)
    if not removed:
        raise http_error("queue_forming", "your table is being formed; leave it once seated")
    return Response(status_code=status.HTTP_204_NO_CONTENT)
