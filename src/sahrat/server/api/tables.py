"""Live tables (``/api/tables``, tagged ``tables``): the lobby's list, a new table, a
seat taken or given up, a start with bots, and the table's finished matches.

Every table operation goes to the table's actor through the hub (``Hub.call``, which
runs it on the process serving the table); the routes decide no rule themselves.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Body, Query, Request, status
from sqlalchemy import select
from sqlalchemy.orm import defer

from sahrat.server.api.deps import (
    MAX_ID,
    CurrentUser,
    HubDep,
    Invite,
    MaybeUser,
    TableId,
    address,
    check_limits,
    http_error,
    responses,
    table_errors,
)
from sahrat.server.api.models import (
    InviteBody,
    JoinBody,
    MatchSummary,
    NewTable,
    StartBody,
    match_fields,
    table_info,
)
from sahrat.server.limits import Throttle
from sahrat.server.table.errors import TableError
from sahrat.server.table.protocol import TableInfo
from sahrat.store.models import Match, User

TABLES_PAGE = 50  # tables in a page of the list by default (the lobby's page)
TABLES_PAGE_MAX = 200
SEAT_CHANGE_WINDOW = 60.0

router = APIRouter(prefix="/api/tables", tags=["tables"])


def _seat_change_allowed(request: Request, user: User) -> None:
    """A seat taken, given up or filled with bots over REST is news for everyone at the
    table: an account may make only ``SAHRAT_SEAT_CHANGES_PER_MINUTE`` of them a minute
    (this process's own count), beyond which 429 ``too_many_seat_changes`` with
    Retry-After. Every request counts, refused or not: each costs the table a turn."""
    throttle: Throttle | None = getattr(request.app.state, "seat_changes", None)
    per_minute = request.app.state.hub.settings.seat_changes_per_minute
    if throttle is None:
        throttle = request.app.state.seat_changes = Throttle(per_minute, SEAT_CHANGE_WINDOW)
    check_limits(
        "too_many_seat_changes",
        f"an account may take or give up seats {per_minute} times a minute; try again later",
        (throttle, str(user.id)),
    )


@router.get("", response_model=list[TableInfo])
async def list_tables(
    hub: HubDep,
    game: Annotated[
        str | None, Query(max_length=32, description="only tables of this game")
    ] = None,
    status_: Annotated[
        Literal["waiting", "playing"] | None,
        Query(alias="status", description="only tables in this state"),
    ] = None,
    after: Annotated[
        int, Query(ge=0, le=MAX_ID, description="the next page: the last id of this one")
    ] = 0,
    limit: Annotated[int, Query(ge=1, le=TABLES_PAGE_MAX, description="tables in a page")] = (
        TABLES_PAGE
    ),
) -> list[TableInfo]:
    """The public tables that are waiting for players, or playing with a person in the
    match (a match its every person left, bots alone playing on, is not listed), oldest
    first, a page at a time: a full page (``limit`` tables) may have a next one,
    ``after`` its last id."""
    found = await hub.list_tables(
        None, private=False, game=game, status=status_, after=after, limit=limit, lobby=True
    )
    return [table_info(info) for info in found]


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    response_model=TableInfo,
    responses=responses(401, 403, 409),
)
async def create_table(
    body: NewTable, user: CurrentUser, hub: HubDep, request: Request
) -> TableInfo:
    """Open a table; its creator takes the first seat. A private table has an invite code.
    An account may have only so many open tables (409 ``too_many_tables``). A rated
    table (``rated``) is an admin's to open (403 ``rated_by_queue``): players get rated
    play from the queue (docs/rating.md)."""
    if body.rated and not user.is_admin:
        raise http_error("rated_by_queue", "rated tables come from the queue: POST /api/queue")
    with table_errors():
        info = await hub.create_table(
            user.id,
            body.game,
            body.options,
            body.private,
            address=address(request),
            rated=body.rated,
            chat=body.chat,
            friends_watch=body.friends_watch,
        )
    return table_info(info)


@router.post("/join", response_model=TableInfo, responses=responses(401, 403, 404, 409, 429))
async def join_by_invite(
    body: InviteBody, user: CurrentUser, hub: HubDep, request: Request
) -> TableInfo:
    """Take the first free seat at the table with this invite code. A player already
    seated there gets the table as it is: an invite link opened again (a second tap, a
    page that sent it twice) leads back to their seat, not to an error."""
    _seat_change_allowed(request, user)
    with table_errors():
        table_id = await hub.by_invite(body.invite_code)
        try:
            info = await hub.call(
                table_id,
                "join",
                user_id=user.id,
                seat=None,
                address=address(request),
                invite=body.invite_code,
            )
        except TableError as error:
            if error.code != "already_seated":
                raise
            info = await hub.call(table_id, "info", viewer=user.id, invite=body.invite_code)
    return table_info(info)


@router.get("/{table_id}", response_model=TableInfo, responses=responses(401, 404))
async def get_table(
    table_id: TableId, viewer: MaybeUser, hub: HubDep, invite: Invite = None
) -> TableInfo:
    """A live table. A private one is a 404 to anyone but its creator, its players and
    a holder of its invite code."""
    with table_errors():
        info = await hub.call(
            table_id, "info", viewer=viewer.id if viewer is not None else None, invite=invite
        )
    return table_info(info)


@router.post(
    "/{table_id}/join",
    response_model=TableInfo,
    responses=responses(401, 403, 404, 409, 422, 429),
)
async def join_table(
    table_id: TableId,
    user: CurrentUser,
    hub: HubDep,
    request: Request,
    body: Annotated[JoinBody | None, Body()] = None,
) -> TableInfo:
    """Take a seat; the match starts by itself when the last seat fills. At a coin
    table, a second account from the same network address is refused (409
    ``same_address``). A private table takes only a player with its invite code. Seat
    changes are limited per account (429 ``too_many_seat_changes``)."""
    _seat_change_allowed(request, user)
    with table_errors():
        info = await hub.call(
            table_id,
            "join",
            user_id=user.id,
            seat=body.seat if body is not None else None,
            address=address(request),
            invite=body.invite_code if body is not None else None,
        )
    return table_info(info)


@router.post("/{table_id}/leave", response_model=TableInfo, responses=responses(401, 404, 409, 429))
async def leave_table(
    table_id: TableId, user: CurrentUser, hub: HubDep, request: Request
) -> TableInfo:
    """Give up a seat. During a match the seat stays yours: a bot plays your hand at a
    free table (the turn timer at a coin table, at a left seat's short turn time) until
    you come back; but a free match whose last person leaves while bots alone play on is
    abandoned, and the table closed (status ``closed``)."""
    _seat_change_allowed(request, user)
    with table_errors():
        info = await hub.call(table_id, "leave", user_id=user.id)
    return table_info(info)


@router.post(
    "/{table_id}/start", response_model=TableInfo, responses=responses(401, 403, 404, 409, 429)
)
async def start_with_bots(
    table_id: TableId,
    user: CurrentUser,
    hub: HubDep,
    request: Request,
    body: Annotated[StartBody | None, Body()] = None,
) -> TableInfo:
    """The creator starts a free table now, with bots in the empty seats."""
    _seat_change_allowed(request, user)
    options = body or StartBody()
    with table_errors():
        if not options.bots:
            raise http_error(
                "seats_empty",
                "the match starts by itself when every seat is taken; start now with bots",
            )
        info = await hub.call(table_id, "start", user_id=user.id, level=options.level)
    return table_info(info)


@router.get(
    "/{table_id}/matches",
    response_model=list[MatchSummary],
    tags=["matches"],
    responses=responses(404),
)
async def table_matches(
    table_id: TableId, viewer: MaybeUser, hub: HubDep, invite: Invite = None
) -> list[MatchSummary]:
    """The table's finished matches, oldest first (a private table's: as for its info)."""
    if not await hub.admits_stored(table_id, viewer.id if viewer is not None else None, invite):
        raise http_error("no_such_table", f"there is no table {table_id}")
    async with hub.sessions() as session:
        rows = (
            await session.scalars(
                select(Match)
                .where(Match.table_id == table_id)
                .order_by(Match.id)
                .options(defer(Match.record))  # a summary: the records stay in the database
            )
        ).all()
    return [MatchSummary.model_validate(match_fields(row)) for row in rows]
