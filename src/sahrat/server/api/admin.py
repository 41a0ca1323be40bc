"""Admin REST (``/api/admin/...``, tagged ``admin``): tables and their options, the
server's defaults, players, their coins, suspension.

Every endpoint needs an admin's token: none (or a bad one) is a 401, a
player's a 403. No endpoint sets a balance: coins only move through the
ledger (welcome grants, free-table earnings, stakes and payouts).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, status
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import func, select

from sahrat.server.api.players import LedgerOut, Limit, Offset, ledger_of
from sahrat.server.api.routes import (
    MAX_ID,
    HubDep,
    NewTable,
    TableId,
    _error,
    _info,
    _responses,
    _table_errors,
)
from sahrat.server.auth import current_user
from sahrat.server.table.protocol import TableInfo
from sahrat.store import ledger
from sahrat.store.models import Balance, LedgerAccount, User


async def require_admin(user: Annotated[User, Depends(current_user)]) -> User:
    if not user.is_admin:
        raise _error(status.HTTP_403_FORBIDDEN, "not_admin", "this needs an admin account")
    return user


Admin = Annotated[User, Depends(require_admin)]
PlayerId = Annotated[int, Path(ge=1, le=MAX_ID)]

router = APIRouter(prefix="/api/admin", tags=["admin"], responses=_responses(401, 403))


# --- models --------------------------------------------------------------------------------


class AdminNewTable(NewTable):
    sit: bool = Field(default=False, description="the admin takes the first seat")


class OptionsBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    options: dict[str, Any] = Field(
        description="options to change (RULES.md §1.11, §2.6); the others are kept",
        examples=[{"stake": 100, "players": 3}],
    )


class Defaults(BaseModel):
    welcome_grant: int = Field(description="coins a new account gets")
    free_table_earnings: int = Field(
        description="coins per player of a counted free-table match (docs/economy.md)"
    )
    default_turn_seconds: int = Field(description="a new table's turn time unless it sets one")
    free_table_earnings_per_day: int = Field(
        description="the most free-table earnings one account is paid in any 24 hours"
    )


class DefaultsBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    welcome_grant: int | None = Field(default=None, ge=0, le=1_000_000)
    free_table_earnings: int | None = Field(default=None, ge=0, le=1_000_000)
    default_turn_seconds: int | None = Field(default=None, ge=10, le=300)
    free_table_earnings_per_day: int | None = Field(default=None, ge=0, le=1_000_000_000)


class PlayerOut(BaseModel):
    id: int
    name: str
    guest: bool
    is_admin: bool
    suspended: bool
    balance: int


class SuspendBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    suspended: bool = Field(default=True, description="false lifts a suspension")


# --- tables -------------------------------------------------------------------------------


@router.post(
    "/tables",
    status_code=status.HTTP_201_CREATED,
    response_model=TableInfo,
    responses=_responses(409),
)
async def create_table(body: AdminNewTable, admin: Admin, hub: HubDep) -> TableInfo:
    """Open a table with any options (a coin table: a positive ``stake``)."""
    with _table_errors():
        info = await hub.create_table(
            admin.id, body.game, body.options, body.private, body.sit, capped=False
        )
    return _info(info)


@router.get("/tables", response_model=list[TableInfo])
async def list_tables(admin: Admin, hub: HubDep) -> list[TableInfo]:
    """Every open table, private ones too, oldest first."""
    return [_info(info) for info in await hub.list_tables(admin.id, private=True)]


@router.patch("/tables/{table_id}", response_model=TableInfo, responses=_responses(404, 409))
async def update_table(
    table_id: TableId, body: OptionsBody, admin: Admin, hub: HubDep
) -> TableInfo:
    """Change a waiting table's options. Refused (409 ``match_in_progress``) while its
    match is being played."""
    with _table_errors():
        info = await hub.update_options(table_id, body.options, admin.id)
    return _info(info)


@router.delete("/tables/{table_id}", response_model=TableInfo, responses=_responses(404, 409))
async def close_table(table_id: TableId, admin: Admin, hub: HubDep) -> TableInfo:
    """Close a table that is not playing (409 ``match_in_progress`` while it is)."""
    with _table_errors():
        info = await hub.close_table(table_id, admin.id)
    return _info(info)


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


async def _player(hub: Any, player_id: int) -> PlayerOut:
    async with hub.sessions() as session:
        row = (await session.execute(_player_query().where(User.id == player_id))).first()
    if row is None:
        raise _error(404, "no_such_player", f"there is no player {player_id}")
    return _player_out(row[0], row[1])


@router.get("/players/{player_id}", response_model=PlayerOut, responses=_responses(404))
async def get_player(player_id: PlayerId, admin: Admin, hub: HubDep) -> PlayerOut:
    return await _player(hub, player_id)


@router.get("/players/{player_id}/ledger", response_model=LedgerOut, responses=_responses(404))
async def player_ledger(
    player_id: PlayerId, admin: Admin, hub: HubDep, limit: Limit = 100, offset: Offset = 0
) -> LedgerOut:
    """A player's balance and coin movements, newest first."""
    await _player(hub, player_id)
    async with hub.sessions() as session:
        return await ledger_of(session, player_id, limit, offset)


@router.post(
    "/players/{player_id}/suspend", response_model=PlayerOut, responses=_responses(404, 409)
)
async def suspend_player(
    player_id: PlayerId, admin: Admin, hub: HubDep, body: SuspendBody | None = None
) -> PlayerOut:
    """Suspend a player (or lift it with ``{"suspended": false}``). A suspended player
    cannot sit down; their seats are left as if they had walked away."""
    suspended = body.suspended if body is not None else True
    if player_id == admin.id and suspended:
        raise _error(409, "self_suspend", "an admin cannot suspend themself")
    with _table_errors():
        await hub.set_suspended(player_id, suspended)
    return await _player(hub, player_id)


class LedgerCheck(BaseModel):
    ok: bool = Field(description="no coin appeared or vanished, no balance below zero")
    total: int = Field(description="the sum of every balance: 0")
    granted: int = Field(description="everything the house ever gave")
    held: int = Field(description="the players' and pots' balances: equal to granted")
    negative: list[str] = Field(description="accounts below zero")
    mismatched: list[str] = Field(description="accounts whose balance is not their entries'")


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
