"""Admin REST (``/api/admin/...``, tagged ``admin``): tables and their options, the
server's defaults, players, their coins, suspension, their ratings and cool-downs from
rated play (docs/rating.md).

Every endpoint needs an admin's token: none (or a bad one) is a 401, a
player's a 403. No endpoint sets a balance: coins only move through the
ledger (welcome grants, free-table earnings, stakes and payouts).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, status
from sqlalchemy import func, select

from sahrat.ratings import Cooldown, seconds_left
from sahrat.server.api.deps import (
    HubDep,
    Limit,
    Offset,
    PlayerId,
    TableId,
    current_user,
    http_error,
    responses,
    table_errors,
)
from sahrat.server.api.me import ledger_of
from sahrat.server.api.models import (
    AdminNewTable,
    Defaults,
    DefaultsBody,
    LedgerCheck,
    LedgerOut,
    OptionsBody,
    PlayerOut,
    Pool,
    SuspendBody,
    table_info,
    utc,
)
from sahrat.server.api.rating_models import AdminCooldown, AdminHistoryRow, AdminLeave, AdminRatings
from sahrat.server.api.ratings import profile_pools
from sahrat.server.hub import Hub
from sahrat.server.table.protocol import TableInfo
from sahrat.store import ledger
from sahrat.store import ratings as store_ratings
from sahrat.store.models import Balance, LedgerAccount, User


async def require_admin(user: Annotated[User, Depends(current_user)]) -> User:
    if not user.is_admin:
        raise http_error("not_admin", "this needs an admin account")
    return user


Admin = Annotated[User, Depends(require_admin)]

router = APIRouter(prefix="/api/admin", tags=["admin"], responses=responses(401, 403))


# --- tables -------------------------------------------------------------------------------


@router.post(
    "/tables",
    status_code=status.HTTP_201_CREATED,
    response_model=TableInfo,
    responses=responses(409),
)
async def create_table(body: AdminNewTable, admin: Admin, hub: HubDep) -> TableInfo:
    """Open a table with any options (a coin table: a positive ``stake``)."""
    with table_errors():
        info = await hub.create_table(
            admin.id,
            body.game,
            body.options,
            body.private,
            body.sit,
            capped=False,
            rated=body.rated,
            chat=body.chat,
        )
    return table_info(info)


@router.get("/tables", response_model=list[TableInfo])
async def list_tables(admin: Admin, hub: HubDep) -> list[TableInfo]:
    """Every open table, private ones too, oldest first."""
    return [table_info(info) for info in await hub.list_tables(admin.id, private=True)]


@router.patch("/tables/{table_id}", response_model=TableInfo, responses=responses(404, 409))
async def update_table(
    table_id: TableId, body: OptionsBody, admin: Admin, hub: HubDep
) -> TableInfo:
    """Change a waiting table's options. Refused (409 ``match_in_progress``) while its
    match is being played."""
    with table_errors():
        info = await hub.update_options(table_id, body.options, admin.id)
    return table_info(info)


@router.delete("/tables/{table_id}", response_model=TableInfo, responses=responses(404, 409))
async def close_table(table_id: TableId, admin: Admin, hub: HubDep) -> TableInfo:
    """Close a table that is not playing (409 ``match_in_progress`` while it is)."""
    with table_errors():
        info = await hub.close_table(table_id, admin.id)
    return table_info(info)


# --- server defaults ---------------------------------------------------------------------


@router.get("/settings", response_model=Defaults)
async def get_defaults(admin: Admin, hub: HubDep) -> Defaults:
    return Defaults(**hub.defaults.to_json())


@router.patch("/settings", response_model=Defaults)
async def set_defaults(body: DefaultsBody, admin: Admin, hub: HubDep) -> Defaults:
    """Change the welcome grant, the free-table earnings (and their daily cap) or the
    default turn time."""
    values = {k: v for k, v in body.model_dump().items() if v is not None}
    defaults = await hub.set_defaults(values)
    return Defaults(**defaults.to_json())


# --- players -------------------------------------------------------------------------------


def _player_query() -> Any:
    return (
        select(User, func.coalesce(Balance.balance, 0))
        .outerjoin(LedgerAccount, LedgerAccount.user_id == User.id)
        .outerjoin(Balance, Balance.account_id == LedgerAccount.id)
    )


def _player_out(user: User, balance: int) -> PlayerOut:
    return PlayerOut(
        id=user.id,
        name=user.name,
        guest=user.guest,
        is_admin=user.is_admin,
        suspended=user.suspended,
        balance=int(balance),
    )


@router.get("/players", response_model=list[PlayerOut])
async def list_players(
    admin: Admin,
    hub: HubDep,
    name: Annotated[str | None, Query(description="names containing this")] = None,
    limit: Limit = 100,
    offset: Offset = 0,
) -> list[PlayerOut]:
    query = _player_query().order_by(User.id).limit(limit).offset(offset)
    if name:
        query = query.where(User.name.contains(name, autoescape=True))
    async with hub.sessions() as session:
        rows = (await session.execute(query)).all()
    return [_player_out(user, balance) for user, balance in rows]


async def _player(hub: Hub, player_id: int) -> PlayerOut:
    async with hub.sessions() as session:
        row = (await session.execute(_player_query().where(User.id == player_id))).first()
    if row is None:
        raise http_error("no_such_player", f"there is no player {player_id}")
    return _player_out(row[0], row[1])


@router.get("/players/{player_id}", response_model=PlayerOut, responses=responses(404))
async def get_player(player_id: PlayerId, admin: Admin, hub: HubDep) -> PlayerOut:
    return await _player(hub, player_id)


@router.get("/players/{player_id}/ledger", response_model=LedgerOut, responses=responses(404))
async def player_ledger(
    player_id: PlayerId, admin: Admin, hub: HubDep, limit: Limit = 100, offset: Offset = 0
) -> LedgerOut:
    """A player's balance and coin movements, newest first."""
    await _player(hub, player_id)
    async with hub.sessions() as session:
        return await ledger_of(session, player_id, limit, offset)


@router.post(
    "/players/{player_id}/suspend", response_model=PlayerOut, responses=responses(404, 409)
)
async def suspend_player(
    player_id: PlayerId, admin: Admin, hub: HubDep, body: SuspendBody | None = None
) -> PlayerOut:
    """Suspend a player (or lift it with ``{"suspended": false}``). A suspended player
    cannot sit down; their seats are left as if they had walked away."""
    suspended = body.suspended if body is not None else True
    if player_id == admin.id and suspended:
        raise http_error("self_suspend", "an admin cannot suspend themself")
    with table_errors():
        await hub.set_suspended(player_id, suspended)
    return await _player(hub, player_id)


@router.get("/ledger/check", response_model=LedgerCheck)
async def check_ledger(admin: Admin, hub: HubDep) -> dict[str, Any]:
    """Recompute every balance from the ledger: ``ok`` when no coin appeared or vanished."""
    async with hub.sessions() as session:
        report = await ledger.check_invariant(session)
    return {
        "ok": report.ok,
        "total": report.total,
        "granted": report.granted,
        "held": report.held,
        "negative": report.negative,
        "mismatched": report.mismatched,
    }


# --- ratings and cool-downs (docs/rating.md) ---------------------------------------------


def _cooldown_out(state: Cooldown, now: datetime) -> AdminCooldown:
    left = seconds_left(state, now)
    return AdminCooldown(
        score=state.score,
        leaves=state.leaves,
        until=utc(state.until) if state.until is not None and left > 0 else None,
        seconds_left=math.ceil(left),
        changed_at=utc(state.changed_at) if state.changed_at is not None else None,
    )


async def _admin_ratings(hub: Hub, player_id: int) -> AdminRatings:
    now = datetime.now(UTC)
    async with hub.sessions() as session:
        user = await session.get(User, player_id)
        if user is None:
            raise http_error("no_such_player", f"there is no player {player_id}")
        pools = await profile_pools(session, player_id)
        history = await store_ratings.history_of(session, player_id, None, 200)
        leaves = await store_ratings.leaves_of(session, player_id)
        cooldown = await store_ratings.cooldown_of(session, player_id)
    return AdminRatings(
        user_id=user.id,
        name=user.name,
        pools=pools,
        history=[
            AdminHistoryRow(
                pool=row.pool,  # type: ignore[arg-type]  # a pool of POOLS, as written
                match_id=row.match_id,
                at=utc(row.at),
                rating=row.shown,
                provisional=row.provisional,
                mu=row.mu,
                sigma=row.sigma,
                place=row.place,
                reason=row.reason,  # type: ignore[arg-type]  # match or reset, as written
            )
            for row in history
        ],
        leaves=[
            AdminLeave(
                table_id=leave.table_id,
                start_seq=leave.start_seq,
                reason=leave.reason,  # type: ignore[arg-type]  # left or forfeit
                at=utc(leave.at),
            )
            for leave in leaves
        ],
        cooldown=_cooldown_out(cooldown, now),
    )


@router.get("/players/{player_id}/ratings", response_model=AdminRatings, responses=responses(404))
async def player_ratings(player_id: PlayerId, admin: Admin, hub: HubDep) -> AdminRatings:
    """A player's ratings with their recent history (mu, sigma and the place each rated
    match gave), the rated matches they left and their cool-down."""
    return await _admin_ratings(hub, player_id)


@router.post(
    "/players/{player_id}/ratings/{pool}/reset",
    response_model=AdminRatings,
    responses=responses(404),
)
async def reset_rating(player_id: PlayerId, pool: Pool, admin: Admin, hub: HubDep) -> AdminRatings:
    """Put a player's rating in ``pool`` back to a new player's (1500, provisional, no
    games), with a history row saying so."""
    now = datetime.now(UTC)
    async with hub.sessions() as session, session.begin():
        if await session.get(User, player_id) is None:
            raise http_error("no_such_player", f"there is no player {player_id}")
        await store_ratings.reset_rating(session, player_id, pool, now)
    return await _admin_ratings(hub, player_id)


async def _cooldown(hub: Hub, player_id: int, lift: bool) -> AdminCooldown:
    now = datetime.now(UTC)
    async with hub.sessions() as session, session.begin():
        if await session.get(User, player_id) is None:
            raise http_error("no_such_player", f"there is no player {player_id}")
        if lift:
            state = await store_ratings.lift_cooldown(session, player_id, now)
        else:
            state = await store_ratings.cooldown_of(session, player_id)
    return _cooldown_out(state, now)


@router.get("/players/{player_id}/cooldown", response_model=AdminCooldown, responses=responses(404))
async def get_cooldown(player_id: PlayerId, admin: Admin, hub: HubDep) -> AdminCooldown:
    """A player's leave record and cool-down from rated play."""
    return await _cooldown(hub, player_id, lift=False)


@router.delete(
    "/players/{player_id}/cooldown", response_model=AdminCooldown, responses=responses(404)
)
async def lift_cooldown(player_id: PlayerId, admin: Admin, hub: HubDep) -> AdminCooldown:
    """End a player's cool-down now. Their leave score stays: a next leave escalates as
    it would have."""
    return await _cooldown(hub, player_id, lift=True)
