"""Tournaments (``/api/tournaments``, tagged ``tables`` as the queue is: each leads to
tables; the admins' routes under ``/api/admin``): the list, one tournament's page
(polled: ``version`` grows with every change), making one, registering, withdrawing,
complaining; an admin's schedules of system tournaments, cancel, and complaint
decisions. docs/tournaments.md, "REST", has every route, body and refusal.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Path, Query, Request, Response, status

from sahrat.server.api.admin import Admin
from sahrat.server.api.deps import (
    MAX_ID,
    CurrentUser,
    HubDep,
    MaybeUser,
    address,
    http_error,
    responses,
    table_errors,
)
from sahrat.server.api.tournament_models import (
    CREATE_FIELDS,
    SCHEDULE_FIELDS,
    ComplaintBody,
    ComplaintOut,
    Complaints,
    Create,
    DecisionBody,
    Detail,
    Listing,
    ScheduleBody,
    ScheduleOut,
    Schedules,
    bad_field,
    moment,
    plan_fields,
)
from sahrat.server.hub import Hub
from sahrat.server.tournaments import views
from sahrat.server.tournaments.service import Tournaments, plan_columns
from sahrat.store import tournament_rounds
from sahrat.store import tournaments as store
from sahrat.store.models import User
from sahrat.store.tournament_models import TournamentSchedule

TournamentId = Annotated[int, Path(ge=1, le=MAX_ID)]
ComplaintId = Annotated[int, Path(ge=1, le=MAX_ID)]
ScheduleId = Annotated[int, Path(ge=1, le=MAX_ID)]
LIST_MOST = 100
TEXT_MOST = 1000

router = APIRouter(prefix="/api/tournaments", tags=["tables"])
admin_router = APIRouter(prefix="/api/admin", tags=["admin"], responses=responses(401, 403))


def get_tournaments(request: Request) -> Tournaments:
    service: Tournaments = request.app.state.tournaments
    return service


Service = Annotated[Tournaments, Depends(get_tournaments)]


def _body_schema(model: Any) -> dict[str, Any]:
    return {"requestBody": {"content": {"application/json": {"schema": model.model_json_schema()}}}}


async def _detail(hub: Hub, service: Tournaments, tournament_id: int, user: User | None) -> Detail:
    async with hub.sessions() as session:
        row = await store.get(session, tournament_id)
        if row is None:
            raise http_error("no_such_tournament", f"there is no tournament {tournament_id}")
        registered = (await store.registered_counts(session, [row.id]))[row.id]
        entry = None if user is None else await store.entry_of(session, row.id, user.id)
        refusal = None if entry is not None else await service.refusal(row, user, registered)
        me = {
            "registered": entry is not None,
            "may_register": entry is None and refusal is None,
            "refusal": None if entry is not None else refusal,
        }
        return Detail.model_validate(await views.detail(session, row, me))


@router.get("", response_model=Listing, responses=responses(422))
async def list_tournaments(
    hub: HubDep, state: Annotated[str | None, Query(max_length=16)] = None
) -> Listing:
    """The tournaments ``coming`` (registering), ``running``, or ``finished`` (in their
    complaint window, finished or cancelled); without ``state``, coming and running."""
    if state is not None and state not in views.LISTS:
        raise bad_field(
            "tournament_bad_state", "state", f"state must be one of {list(views.LISTS)}"
        )
    states = views.LISTS[state] if state else (*views.LISTS["coming"], *views.LISTS["running"])
    async with hub.sessions() as session:
        rows = await store.listed(session, states, LIST_MOST)
        return Listing.model_validate({"tournaments": await views.summaries(session, rows)})


@router.post(
    "",
    response_model=Detail,
    status_code=status.HTTP_201_CREATED,
    responses=responses(401, 403, 409, 422),
    openapi_extra=_body_schema(Create),
)
async def make_tournament(
    user: CurrentUser,
    hub: HubDep,
    service: Service,
    body: dict[str, Any] = Body(...),  # noqa: B008 (FastAPI's way to read a JSON object)
) -> Detail:
    """Make a tournament (any signed-in account but a guest, at most
    ``SAHRAT_TOURNAMENTS_PER_ACCOUNT`` not ended). Each bad field: 422 with its code and
    ``field``."""
    plan, fields = plan_fields(body, CREATE_FIELDS)
    fields["starts_at"] = moment(body, "starts_at", "tournament_starts_at", datetime.now(UTC))
    with table_errors():
        tournament_id = await service.make(user, plan, fields)
    return await _detail(hub, service, tournament_id, user)


@router.get("/{tournament_id}", response_model=Detail, responses=responses(401, 404))
async def get_tournament(
    tournament_id: TournamentId, hub: HubDep, service: Service, user: MaybeUser
) -> Detail:
    """One tournament, as its page shows it (poll it: ``version`` grows with each change)."""
    return await _detail(hub, service, tournament_id, user)


@router.post(
    "/{tournament_id}/entries", response_model=Detail, responses=responses(401, 403, 404, 409)
)
async def register(
    tournament_id: TournamentId,
    request: Request,
    user: CurrentUser,
    hub: HubDep,
    service: Service,
) -> Detail:
    """Register the caller (a paid tournament's fee moves into its escrow)."""
    with table_errors():
        await service.register(tournament_id, user, address(request))
    return await _detail(hub, service, tournament_id, user)


@router.delete(
    "/{tournament_id}/entries/me", response_model=Detail, responses=responses(401, 404, 409)
)
async def withdraw(
    tournament_id: TournamentId, user: CurrentUser, hub: HubDep, service: Service
) -> Detail:
    """Withdraw before the start; the fee comes back."""
    with table_errors():
        await service.withdraw(tournament_id, user)
    return await _detail(hub, service, tournament_id, user)


def _complaint_out(row: Any) -> ComplaintOut:
    return ComplaintOut(
        id=row.id,
        entry=row.entry_id,
        user_id=row.user_id,
        text=row.text,
        state=row.state,
        created_at=views.iso(row.created_at) or "",
    )


@router.post(
    "/{tournament_id}/complaints",
    response_model=ComplaintOut,
    status_code=status.HTTP_201_CREATED,
    responses=responses(401, 403, 404, 409, 422),
    openapi_extra=_body_schema(ComplaintBody),
)
async def complain(
    tournament_id: TournamentId,
    user: CurrentUser,
    hub: HubDep,
    service: Service,
    body: dict[str, Any] = Body(...),  # noqa: B008
) -> ComplaintOut:
    """An entrant's complaint in the window after the last table: the prizes are held
    until an admin decides it."""
    for key in body:
        if key != "text":
            raise bad_field("tournament_unknown_field", str(key), "a complaint has only text")
    text = body.get("text")
    if not isinstance(text, str) or not 1 <= len(text.strip()) <= TEXT_MOST:
        raise bad_field(
            "tournament_complaint_text", "text", f"text must be 1 to {TEXT_MOST} characters"
        )
    with table_errors():
        complaint_id = await service.complain(tournament_id, user, text.strip())
    async with hub.sessions() as session:
        row = await store.complaint(session, tournament_id, complaint_id)
    return _complaint_out(row)


# --- the admins' ------------------------------------------------------------------------


def _schedule_out(row: TournamentSchedule) -> ScheduleOut:
    return ScheduleOut(
        id=row.id,
        name=row.name,
        game=row.game,
        format=row.format,
        seats=row.seats,
        rounds=row.rounds,
        advance=row.advance,
        fee=row.fee,
        min_fill=row.min_fill,
        every_minutes=row.every_minutes,
        open_minutes=row.open_minutes,
        next_at=views.iso(row.next_at) or "",
    )


@admin_router.get("/tournament-schedules", response_model=Schedules)
async def list_schedules(admin: Admin, hub: HubDep) -> Schedules:
    async with hub.sessions() as session:
        rows = await tournament_rounds.schedules(session)
    return Schedules(schedules=[_schedule_out(row) for row in rows])


@admin_router.post(
    "/tournament-schedules",
    response_model=ScheduleOut,
    status_code=status.HTTP_201_CREATED,
    responses=responses(422),
    openapi_extra=_body_schema(ScheduleBody),
)
async def add_schedule(
    admin: Admin,
    hub: HubDep,
    body: dict[str, Any] = Body(...),  # noqa: B008
) -> ScheduleOut:
    """A system tournament of this plan every ``every_minutes`` from ``first_at``, each
    open for registration ``open_minutes`` before its start."""
    plan, fields = plan_fields(body, SCHEDULE_FIELDS)
    first_at = moment(body, "first_at", "tournament_first_at", datetime.now(UTC))
    every = body.get("every_minutes")
    if not isinstance(every, int) or isinstance(every, bool) or not 10 <= every <= 7 * 24 * 60:
        raise bad_field(
            "tournament_every_minutes", "every_minutes", "every_minutes must be 10 to 10080"
        )
    opens = body.get("open_minutes", 60)
    if not isinstance(opens, int) or isinstance(opens, bool) or not 0 <= opens <= 7 * 24 * 60:
        raise bad_field(
            "tournament_open_minutes", "open_minutes", "open_minutes must be 0 to 10080"
        )
    async with hub.sessions() as session, session.begin():
        row = await tournament_rounds.add_schedule(
            session,
            **plan_columns(plan, fields),
            every_minutes=every,
            open_minutes=opens,
            next_at=first_at,
            created_by=admin.id,
        )
        out = _schedule_out(row)
    return out


@admin_router.delete(
    "/tournament-schedules/{schedule_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    responses=responses(404),
)
async def delete_schedule(schedule_id: ScheduleId, admin: Admin, hub: HubDep) -> Response:
    """Stop a schedule; the tournaments it made go on."""
    async with hub.sessions() as session, session.begin():
        if not await tournament_rounds.delete_schedule(session, schedule_id):
            raise http_error("no_such_schedule", f"there is no schedule {schedule_id}")
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@admin_router.post(
    "/tournaments/{tournament_id}/cancel", response_model=Detail, responses=responses(404, 409)
)
async def cancel(
    tournament_id: TournamentId, admin: Admin, hub: HubDep, service: Service
) -> Detail:
    """Cancel a tournament that has not ended: every entry refunded."""
    with table_errors():
        await service.cancel(tournament_id)
    return await _detail(hub, service, tournament_id, admin)


@admin_router.get(
    "/tournaments/{tournament_id}/complaints", response_model=Complaints, responses=responses(404)
)
async def complaints(tournament_id: TournamentId, admin: Admin, hub: HubDep) -> Complaints:
    async with hub.sessions() as session:
        if await store.get(session, tournament_id) is None:
            raise http_error("no_such_tournament", f"there is no tournament {tournament_id}")
        rows = await store.complaints(session, tournament_id)
    return Complaints(complaints=[_complaint_out(row) for row in rows])


@admin_router.post(
    "/tournaments/{tournament_id}/complaints/{complaint_id}",
    response_model=Detail,
    responses=responses(404, 409, 422),
    openapi_extra=_body_schema(DecisionBody),
)
async def decide(
    tournament_id: TournamentId,
    complaint_id: ComplaintId,
    admin: Admin,
    hub: HubDep,
    service: Service,
    body: dict[str, Any] = Body(...),  # noqa: B008
) -> Detail:
    """Dismiss a complaint (the prizes are paid once none is open and the window is
    over) or uphold it (the tournament is cancelled, every entry refunded)."""
    for key in body:
        if key != "decision":
            raise bad_field("tournament_unknown_field", str(key), "a decision has only decision")
    decision = body.get("decision")
    if decision not in ("dismissed", "upheld"):
        raise bad_field("tournament_decision", "decision", "decision must be dismissed or upheld")
    with table_errors():
        await service.decide(tournament_id, complaint_id, str(decision), admin)
    return await _detail(hub, service, tournament_id, admin)
