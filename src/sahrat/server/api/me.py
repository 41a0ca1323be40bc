"""The caller's own account (``/api/me*``, tagged ``players``): the account and its
coins, a new name, the coin ledger, the match history, and the tables I am seated at
(the lobby's "my games").

A player's matches are their ``match_players`` rows, written with each finished
match and kept for ever: leaving the table, or a rematch at it, changes none of
them. Each says whether the match counted for the player (docs/economy.md, "What
counts").
"""

from __future__ import annotations

import asyncio
import math
from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi import APIRouter, Request
from sqlalchemy import or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import defer

from sahrat.names import name_key
from sahrat.ratings import seconds_left
from sahrat.server.api.deps import (
    CurrentUser,
    HubDep,
    Limit,
    Offset,
    check_limits,
    checked_name,
    http_error,
    refuse_mixed_scripts,
    responses,
)
from sahrat.server.api.models import (
    CooldownOut,
    LedgerOut,
    MeOut,
    MyMatch,
    MyTable,
    RenameBody,
    entry_out,
    match_fields,
    table_info,
    user_out,
)
from sahrat.server.api.ratings import pool_ratings
from sahrat.server.hub import Hub
from sahrat.server.limits import Throttle
from sahrat.server.table.errors import TableError
from sahrat.server.table.settlement import seat_place
from sahrat.store import ledger
from sahrat.store import ratings as store_ratings
from sahrat.store.models import GameTable, Match, MatchPlayer, Seat, User

RENAMES = 3  # renames an account may make per RENAME_WINDOW (this process's own count)
RENAME_WINDOW = 3600.0

router = APIRouter(prefix="/api", tags=["players"])


async def ledger_of(session: AsyncSession, user_id: int, limit: int, offset: int) -> LedgerOut:
    """A player's balance and a page of their coin movements, newest first (theirs to
    see, and an admin's)."""
    account = ledger.user_account(user_id)
    entries = await ledger.entries_of(session, account, limit, offset)
    return LedgerOut(
        balance=await ledger.balance(session, account),
        entries=[entry_out(entry, account) for entry in entries],
    )


@router.get("/me", response_model=MeOut, responses=responses(401))
async def me(user: CurrentUser, hub: HubDep) -> MeOut:
    """My account and my coins, my ratings (the pools I played rated) and my cool-down
    from rated play, if any (docs/rating.md)."""
    now = datetime.now(UTC)
    async with hub.sessions() as session:
        balance = await ledger.balance(session, ledger.user_account(user.id))
        pools = await pool_ratings(session, user.id)
        cooldown = await store_ratings.cooldown_of(session, user.id)
    left = seconds_left(cooldown, now)
    return MeOut(
        **user_out(user).model_dump(),
        balance=balance,
        is_admin=user.is_admin,
        suspended=user.suspended,
        ratings=pools,
        cooldown=(
            CooldownOut(until=cooldown.until, seconds_left=math.ceil(left))
            if cooldown.until is not None and left > 0
            else None
        ),
    )


def _renames(request: Request) -> Throttle:
    throttle: Throttle | None = getattr(request.app.state, "renames", None)
    if throttle is None:
        throttle = request.app.state.renames = Throttle(RENAMES, RENAME_WINDOW)
    return throttle


@router.patch("/me", response_model=MeOut, responses=responses(401, 409, 422, 429))
async def rename(body: RenameBody, user: CurrentUser, hub: HubDep, request: Request) -> MeOut:
    """Change my display name (a guest's too). The name is checked as at sign-up: taken
    in NFKC, trimmed and its spaces collapsed, refused if it holds a control, format or
    bidi character (422 ``name_hidden_chars``), is not made of letters, digits, spaces
    and ``_ - . '`` (422 naming ``name``) or mixes alphabets in a word (422
    ``name_mixes_scripts``), and 409 ``name_taken`` if another account has it in any
    case, form or look-alike. A registered account then logs in with the new name. An
    account may rename itself ``RENAMES`` times an hour (429 ``too_many_renames`` with
    Retry-After); a refused name does not count."""
    name = checked_name(body.name)
    refuse_mixed_scripts(name)
    key = name_key(name)
    taken = http_error("name_taken", f"the name {name!r} is taken")
    async with hub.sessions() as session:
        holder = await session.scalar(select(User.id).where(User.name_key == key))
    if holder is not None and holder != user.id:
        raise taken
    if name != user.name:
        check_limits(
            "too_many_renames",
            f"an account may change its name {RENAMES} times an hour; try later",
            (_renames(request), str(user.id)),
        )
        try:
            async with hub.sessions() as session, session.begin():
                row = await session.get(User, user.id)
                if row is None:  # deleted meanwhile: as for a revoked token
                    raise http_error("bad_token", "the account is gone")
                row.name, row.name_key = name, key
        except IntegrityError as error:  # a simultaneous sign-up or rename took it first
            raise taken from error
        user.name = name
        hub.renamed(user.id, user.name)  # every process's tables show it (the cluster's too)
    return await me(user, hub)


@router.get("/me/ledger", response_model=LedgerOut, responses=responses(401))
async def my_ledger(
    user: CurrentUser, hub: HubDep, limit: Limit = 100, offset: Offset = 0
) -> LedgerOut:
    """My balance and my coin movements, newest first."""
    async with hub.sessions() as session:
        return await ledger_of(session, user.id, limit, offset)


@router.get("/me/matches", response_model=list[MyMatch], responses=responses(401))
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
        totals = _totals(match.score_sheet)
        seat = mine.seat
        out.append(
            MyMatch(
                **match_fields(match),
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


# --- my games ----------------------------------------------------------------------------

MY_TABLES = 20  # the newest tables of mine a list looks at
FINISHED_HOURS = 12.0  # a finished table looked for if its match ended this recently
MY_STATUSES = ("waiting", "playing", "finished")
_ORDER = {"playing": 1, "waiting": 2, "finished": 3}


@router.get("/me/tables", response_model=list[MyTable], responses=responses(401))
async def my_tables(user: CurrentUser, hub: HubDep) -> list[MyTable]:
    """The tables I am seated at (private ones too), as the lobby's "my games" shows
    them: those where it is my move first, then those playing, those waiting for
    players, and those whose match is over while the table is still open (a rematch may
    be asked there), each newest first. A seat I walked away from during a match is
    still mine (``left``): a bot or the timer plays it until I am back.

    The tables are found in the database (every process's), and each is asked of the
    process serving it: a table that closed, or left memory once its finished match
    had nobody watching, is not listed."""
    since = datetime.now(UTC) - timedelta(hours=FINISHED_HOURS)
    recent = (
        select(Match.id).where(Match.table_id == GameTable.id, Match.finished_at > since).exists()
    )
    async with hub.sessions() as session:
        ids = (
            await session.scalars(
                select(GameTable.id)
                .join(Seat, Seat.table_id == GameTable.id)
                .where(
                    Seat.user_id == user.id,
                    GameTable.status.in_(MY_STATUSES),
                    or_(GameTable.status != "finished", recent),
                )
                .order_by(GameTable.id.desc())
                .limit(MY_TABLES)
            )
        ).all()
    found = await asyncio.gather(*(_mine(hub, table_id, user.id) for table_id in ids))
    mine = [line for line in found if line is not None]
    mine.sort(key=lambda line: (not line.yours, _ORDER[line.table.status], -line.table.id))
    return mine


async def _mine(hub: Hub, table_id: int, user_id: int) -> MyTable | None:
    """My line for one table, from the process serving it; None if it is not open (or
    not mine) any more."""
    try:
        found = await hub.call(table_id, "mine", user_id=user_id)
    except TableError:  # closed, forgotten, or moving between processes this instant
        return None
    table = table_info(found["table"])
    seat = next((s for s in table.seats if s.user_id == user_id), None)
    if seat is None or table.status == "closed":
        return None
    turn: int | None = found["turn"]
    turn_seat = table.seats[turn] if turn is not None and 0 <= turn < len(table.seats) else None
    return MyTable(
        table=table,
        seat=seat.seat,
        turn=turn,
        turn_name=turn_seat.name if turn_seat is not None else None,
        yours=turn == seat.seat,
        finished=table.status == "finished",
        left=seat.left,
    )
