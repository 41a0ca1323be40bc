"""The REST API: players (accounts and tokens), tables, finished matches, health.

Errors are ``{"detail": {"code", "message"}}`` with a fitting status. An
invalid table option is a 422 in FastAPI's validation shape, naming the
option: ``{"detail": [{"loc": ["body", "options", NAME], "msg", "type":
"bad_option"}]}``. Every table operation goes to the table's actor through
the hub (``request.app.state.hub``); the routes decide no rule themselves.
"""

from __future__ import annotations

import asyncio
import math
import os
import secrets
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import cache
from typing import Annotated, Any, Literal, TypeVar

from fastapi import (
    APIRouter,
    Body,
    Depends,
    HTTPException,
    Path,
    Query,
    Request,
    Response,
    status,
)
from pydantic import BaseModel, ConfigDict, Field, field_validator
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import defer

from sahrat.names import name_key, script_problem
from sahrat.rules.errors import BadOption, RuleError
from sahrat.rules.record import GAMES, GameRecord, Replayer
from sahrat.server.addresses import client_network
from sahrat.server.auth import (
    NAME_CHARS,
    CurrentUser,
    PoolFull,
    bearer_token,
    check_name,
    hash_password,
    issue_token,
    revoke_token,
    token_digest,
    user_for_token,
    verify_password,
)
from sahrat.server.errors import http_status
from sahrat.server.hub import Hub
from sahrat.server.limits import Check, Throttle, admit, give_back, waiting
from sahrat.server.table.errors import TableError
from sahrat.server.table.protocol import ErrorInfo, TableInfo
from sahrat.store import ledger
from sahrat.store.models import Match, User

GUEST_ATTEMPTS = 8
MAX_ID = 2**31 - 1  # ids are 32-bit integers in the database: a larger one is a 422, not a 500
TableId = Annotated[int, Path(ge=1, le=MAX_ID)]
MatchId = Annotated[int, Path(ge=1, le=MAX_ID)]
T = TypeVar("T")


@cache
def _dummy_hash() -> str:
    """Verified against when a login names no account (or a guest), so that a wrong
    name costs as long as a wrong password and the timing does not tell which."""
    return hash_password(secrets.token_urlsafe(16))


# --- dependencies ------------------------------------------------------------------------


def get_hub(request: Request) -> Hub:
    hub: Hub = request.app.state.hub
    return hub


HubDep = Annotated[Hub, Depends(get_hub)]
Token = Annotated[str, Depends(bearer_token)]


async def optional_user(request: Request, hub: HubDep) -> User | None:
    """The caller if it sent a bearer token (a bad one is still a 401), else None."""
    if not request.headers.get("authorization"):
        return None
    token = bearer_token(request)
    async with hub.sessions() as session:
        user = await user_for_token(session, token)
    if user is None:
        raise _error(
            status.HTTP_401_UNAUTHORIZED, "bad_token", "the token is unknown, expired or revoked"
        )
    hub.remember_name(user.id, user.name)
    return user


MaybeUser = Annotated[User | None, Depends(optional_user)]


# --- models ------------------------------------------------------------------------------


class ErrorResponse(BaseModel):
    detail: ErrorInfo


class ValidationErrorItem(BaseModel):
    loc: list[str | int]
    msg: str
    type: str


class ValidationErrorResponse(BaseModel):
    """FastAPI's shape for an invalid request (and for a bad table option)."""

    detail: list[ValidationErrorItem]


class UserOut(BaseModel):
    id: int
    name: str
    guest: bool


class MeOut(UserOut):
    balance: int = Field(description="coins")
    is_admin: bool = False
    suspended: bool = False


class AuthOut(BaseModel):
    token: str = Field(description="send it as `Authorization: Bearer <token>`")
    user: UserOut


class Credentials(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(
        max_length=100,
        description=f"{NAME_CHARS}; taken in NFKC, and unique whatever its case",
        examples=["layla"],
    )
    password: str = Field(min_length=8, max_length=1024, examples=["correct horse"])

    @field_validator("name")
    @classmethod
    def _visible_name(cls, name: str) -> str:
        return check_name(name)


class RenameBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(
        max_length=100,
        description=f"{NAME_CHARS}; taken in NFKC, and unique whatever its case",
        examples=["layla"],
    )

    @field_validator("name")
    @classmethod
    def _visible_name(cls, name: str) -> str:
        return check_name(name)


class LoginBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(max_length=100)
    password: str = Field(max_length=1024)


class NewTable(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    game: str = Field(description=f"one of {', '.join(GAMES)}", examples=["konkan"])
    options: dict[str, Any] = Field(
        default_factory=dict,
        description="table options (docs: RULES.md §1.11, §2.6); omitted ones take defaults",
        examples=[{"players": 2}],
    )
    private: bool = Field(default=False, description="unlisted; joined with its invite code")


class JoinBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    seat: int | None = Field(default=None, description="a free seat; the first free by default")
    invite_code: str | None = Field(
        default=None, max_length=64, description="a private table's invite code"
    )


class InviteBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    invite_code: str = Field(min_length=1, max_length=64)


class StartBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    bots: bool = Field(default=True, description="fill the empty seats with bots")
    level: Literal["simple", "strong", "expert"] | None = Field(
        default=None,
        description="how well the bots play; overrides the table's `bot_level` option "
        "for this match (its bots and those taking over a leaver's seat) if given",
    )


class MatchSummary(BaseModel):
    id: int
    table_id: int
    game: str
    winner_seat: int | None
    players: list[int | None] = Field(description="user ids by seat")
    score_sheet: dict[str, Any]
    finished_at: datetime


class MatchDetail(MatchSummary):
    record: dict[str, Any] = Field(description="a game record: `sahrat replay` plays it back")


class Health(BaseModel):
    ok: bool


class Ready(BaseModel):
    ready: bool
    pid: int = Field(
        description="the answering process's id: which process a supervisor (or a test that "
        "started one) reached on this port"
    )


# --- errors ------------------------------------------------------------------------------


def _error(code_status: int, code: str, message: str) -> HTTPException:
    headers = {"WWW-Authenticate": "Bearer"} if code_status == 401 else None
    return HTTPException(code_status, detail={"code": code, "message": message}, headers=headers)


@contextmanager
def _table_errors() -> Iterator[None]:
    """Turn the hub's and tables' refusals into HTTP errors."""
    try:
        yield
    except TableError as error:
        raise _error(http_status(error.code), error.code, error.message) from error
    except BadOption as error:
        loc = ["body", "game"] if error.option == "game" else ["body", "options", error.option]
        raise HTTPException(
            422,
            detail=[{"loc": loc, "msg": error.message, "type": "bad_option"}],
        ) from error


def _responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """Error statuses with their body; a 422 is either shape (a refusal, or FastAPI's own
    validation error)."""
    return {
        code: {"model": ErrorResponse | ValidationErrorResponse if code == 422 else ErrorResponse}
        for code in codes
    }


def _one_alphabet(name: str) -> None:
    """422 ``name_mixes_scripts`` if a word of ``name`` imitates one in another alphabet."""
    problem = script_problem(name)
    if problem is not None:
        raise _error(status.HTTP_422_UNPROCESSABLE_ENTITY, "name_mixes_scripts", problem)


def _utc(moment: datetime) -> datetime:
    """SQLite gives naive UTC datetimes (asyncpg aware ones): always send an offset."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _user_out(user: User) -> UserOut:
    return UserOut(id=user.id, name=user.name, guest=user.guest)


def _address(request: Request) -> str | None:
    """The client's network, as ``addresses.network_key`` gives it (an IPv6 address as
    its /56), or None if unknown. Behind a proxy that uvicorn trusts
    (``FORWARDED_ALLOW_IPS``) it is the address the proxy saw."""
    return client_network(request)


def _network(request: Request) -> str:
    """The client's network as a throttle counts it: unknown addresses are one network."""
    return _address(request) or "unknown"


def _too_many(code: str, message: str, wait: float) -> HTTPException:
    return HTTPException(
        status.HTTP_429_TOO_MANY_REQUESTS,
        detail={"code": code, "message": message},
        headers={"Retry-After": str(max(1, math.ceil(wait)))},
    )


def _throttle(code: str, message: str, *checks: Check) -> None:
    """A 429 with Retry-After unless every throttle has a request left for its key;
    then one is taken from each (and a refused request takes nothing from any)."""
    wait = admit(checks)
    if wait > 0:
        raise _too_many(code, message, wait)


def _new_account_allowed(hub: Hub, request: Request) -> list[Check]:
    """Take a new account from the limits (429 if refused); what it took."""
    checks = hub.account_limits.new_account(_network(request))
    _throttle(
        "too_many_accounts",
        "too many new accounts from your network, or from everywhere at once; try later",
        *checks,
    )
    return checks


@contextmanager
def _given_back_if_busy(checks: list[Check]) -> Iterator[None]:
    """A request turned away as busy (503) gives back what it took from the limits:
    it was not served, and a flood that fills the hashing threads drains nothing."""
    try:
        yield
    except HTTPException as error:
        if error.status_code == status.HTTP_503_SERVICE_UNAVAILABLE:
            give_back(checks)
        raise


async def _hashing(hub: Hub, work: Callable[..., T], *args: object) -> T:
    """Password work in the hub's few hashing threads; a 503 when they are all taken."""
    try:
        return await hub.passwords.run(work, *args)
    except PoolFull as error:
        raise HTTPException(
            status.HTTP_503_SERVICE_UNAVAILABLE,
            detail={"code": "busy", "message": "the server is busy checking passwords; retry"},
            headers={"Retry-After": "1"},
        ) from error


def _password_matches(stored: str | None, password: str) -> bool:
    """(In a hashing thread.) Without a stored hash a dummy one is checked all the same."""
    return verify_password(stored or _dummy_hash(), password) and stored is not None


def _info(data: dict[str, Any]) -> TableInfo:
    return TableInfo.model_validate(data)


# --- players -----------------------------------------------------------------------------


async def _welcome(session: Any, hub: Hub, user_id: int) -> None:
    """A new account's welcome grant, in the transaction that creates the account."""
    amount = hub.defaults.welcome_grant
    if amount > 0:
        await ledger.grant(session, user_id, amount, f"welcome:{user_id}", "welcome")


players = APIRouter(prefix="/api", tags=["players"])


@players.post(
    "/guests",
    status_code=status.HTTP_201_CREATED,
    response_model=AuthOut,
    responses=_responses(429, 503),
)
async def create_guest(hub: HubDep, request: Request) -> AuthOut:
    """A fresh guest account (no password) and a token for it. A guest plays at free
    tables only (docs/economy.md)."""
    with _given_back_if_busy(_new_account_allowed(hub, request)):
        for _ in range(GUEST_ATTEMPTS):
            name = f"guest-{secrets.token_hex(3)}"
            try:
                async with hub.sessions() as session, session.begin():
                    user = User(name=name, password_hash=None, guest=True)
                    session.add(user)
                    await session.flush()
                    await _welcome(session, hub, user.id)
                    token = await issue_token(session, user.id, hub.settings.token_hours)
            except IntegrityError:  # the name is taken: draw another
                continue
            hub.remember_name(user.id, user.name)
            return AuthOut(token=token, user=_user_out(user))
        raise _error(503, "busy", "could not find a free guest name; try again")


@players.post(
    "/users",
    status_code=status.HTTP_201_CREATED,
    response_model=AuthOut,
    responses=_responses(409, 422, 429, 503),
)
async def sign_up(body: Credentials, hub: HubDep, request: Request) -> AuthOut:
    """Create an account with a name and a password, and sign in. The name is taken in
    NFKC and compared whatever its case and by its look (the UTS #39 skeleton): ``Boss``
    and ``b0ss`` are taken once ``boss`` is (409 ``name_taken``). A word of the name that
    mixes alphabets or kinds of digits, like ``b٥ss``, is refused (422
    ``name_mixes_scripts``)."""
    _one_alphabet(body.name)
    taken = _error(status.HTTP_409_CONFLICT, "name_taken", f"the name {body.name!r} is taken")
    key = name_key(body.name)
    async with hub.sessions() as session:  # before hashing: a taken name costs nothing
        if await session.scalar(select(User.id).where(User.name_key == key)) is not None:
            raise taken
    with _given_back_if_busy(_new_account_allowed(hub, request)):
        password_hash = await _hashing(hub, hash_password, body.password)
    try:
        async with hub.sessions() as session, session.begin():
            user = User(name=body.name, name_key=key, password_hash=password_hash, guest=False)
            session.add(user)
            await session.flush()
            await _welcome(session, hub, user.id)
            token = await issue_token(session, user.id, hub.settings.token_hours)
    except IntegrityError as error:  # a simultaneous sign-up took it first
        raise taken from error
    hub.remember_name(user.id, user.name)
    hub.account_limits.signed_in(user.id, _address(request))
    return AuthOut(token=token, user=_user_out(user))


TOO_MANY_LOGINS = "too many logins from your network, or to this name; try again later"


@players.post("/login", response_model=AuthOut, responses=_responses(401, 429, 503))
async def log_in(body: LoginBody, hub: HubDep, request: Request) -> AuthOut:
    """Sign in with a name and a password; a new token each time. Tries are limited
    (429 ``too_many_logins``, Retry-After) per network, per network and name, and, for a
    network that never signed in to the account (and unless it is an admin's), per
    name and overall: a stranger's flood cannot lock the owner out. A busy server
    answers 503 at once."""
    limits = hub.account_limits
    network, key = _network(request), name_key(body.name)
    wait = waiting(limits.own_logins(network, key))  # before the database: nothing taken
    if wait > 0:
        raise _too_many("too_many_logins", TOO_MANY_LOGINS, wait)
    async with hub.sessions() as session:
        # the exact name first: accounts older than the unique keys may share one
        user = await session.scalar(select(User).where(User.name == body.name))
        if user is None:
            user = await session.scalar(select(User).where(User.name_key == key))
        stored = user.password_hash if user is not None else None
    trusted = user is not None and limits.trusts(user.id, user.is_admin, _address(request))
    checks = limits.login(network, key, trusted)
    _throttle("too_many_logins", TOO_MANY_LOGINS, *checks)
    with _given_back_if_busy(checks):  # even if no user, as long as for a wrong password
        ok = await _hashing(hub, _password_matches, stored, body.password)
    if user is None or not ok:
        raise _error(status.HTTP_401_UNAUTHORIZED, "bad_login", "wrong name or password")
    async with hub.sessions() as session, session.begin():
        token = await issue_token(session, user.id, hub.settings.token_hours)
    hub.remember_name(user.id, user.name)
    limits.signed_in(user.id, _address(request))
    return AuthOut(token=token, user=_user_out(user))


@players.post("/logout", status_code=status.HTTP_204_NO_CONTENT, responses=_responses(401))
async def log_out(user: CurrentUser, token: Token, hub: HubDep) -> Response:
    """Revoke the token this request was sent with."""
    async with hub.sessions() as session, session.begin():
        await revoke_token(session, token)
    hub.token_revoked(token_digest(token))  # its open WebSockets close too
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@players.get("/me", response_model=MeOut, responses=_responses(401))
async def me(user: CurrentUser, hub: HubDep) -> MeOut:
    """My account and my coins."""
    async with hub.sessions() as session:
        balance = await ledger.balance(session, ledger.user_account(user.id))
    return MeOut(
        **_user_out(user).model_dump(),
        balance=balance,
        is_admin=user.is_admin,
        suspended=user.suspended,
    )


RENAMES = 3  # renames an account may make per RENAME_WINDOW (this process's own count)
RENAME_WINDOW = 3600.0


def _renames(request: Request) -> Throttle:
    throttle: Throttle | None = getattr(request.app.state, "renames", None)
    if throttle is None:
        throttle = request.app.state.renames = Throttle(RENAMES, RENAME_WINDOW)
    return throttle


@players.patch("/me", response_model=MeOut, responses=_responses(401, 409, 422, 429))
async def rename(body: RenameBody, user: CurrentUser, hub: HubDep, request: Request) -> MeOut:
    """Change my display name (a guest's too). The name is checked as at sign-up: taken
    in NFKC, refused if it holds format, bidi or invisible characters (422 naming
    ``name``) or mixes alphabets in a word (422 ``name_mixes_scripts``), and 409
    ``name_taken`` if another account has it in any case, form or look-alike.
    A registered account then logs in with the new name. An account may rename itself
    ``RENAMES`` times an hour (429 ``too_many_renames`` with Retry-After); a refused
    name does not count."""
    _one_alphabet(body.name)
    key = name_key(body.name)
    taken = _error(status.HTTP_409_CONFLICT, "name_taken", f"the name {body.name!r} is taken")
    async with hub.sessions() as session:
        holder = await session.scalar(select(User.id).where(User.name_key == key))
    if holder is not None and holder != user.id:
        raise taken
    if body.name != user.name:
        _throttle(
            "too_many_renames",
            f"an account may change its name {RENAMES} times an hour; try later",
            (_renames(request), str(user.id)),
        )
        try:
            async with hub.sessions() as session, session.begin():
                row = await session.get(User, user.id)
                if row is None:  # deleted meanwhile: as for a revoked token
                    raise _error(status.HTTP_401_UNAUTHORIZED, "bad_token", "the account is gone")
                row.name, row.name_key = body.name, key
        except IntegrityError as error:  # a simultaneous sign-up or rename took it first
            raise taken from error
        user.name = body.name
        hub.renamed(user.id, user.name)  # every process's tables show it (the cluster's too)
    return await me(user, hub)


# --- tables ------------------------------------------------------------------------------

tables = APIRouter(prefix="/api/tables", tags=["tables"])


TABLES_PAGE = 50  # tables in a page of the list by default (the lobby's page)
TABLES_PAGE_MAX = 200
Invite = Annotated[str | None, Query(max_length=64, description="a private table's invite code")]

SEAT_CHANGE_WINDOW = 60.0


def _seat_change_allowed(request: Request, user: User) -> None:
    """A seat taken, given up or filled with bots over REST is news for everyone at the
    table: an account may make only ``SAHRAT_SEAT_CHANGES_PER_MINUTE`` of them a minute
    (this process's own count), beyond which 429 ``too_many_seat_changes`` with
    Retry-After. Every request counts, refused or not: each costs the table a turn."""
    throttle: Throttle | None = getattr(request.app.state, "seat_changes", None)
    per_minute = request.app.state.hub.settings.seat_changes_per_minute
    if throttle is None:
        throttle = request.app.state.seat_changes = Throttle(per_minute, SEAT_CHANGE_WINDOW)
    _throttle(
        "too_many_seat_changes",
        f"an account may take or give up seats {per_minute} times a minute; try again later",
        (throttle, str(user.id)),
    )


@tables.get("", response_model=list[TableInfo])
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
    return [_info(info) for info in found]


@tables.post(
    "",
    status_code=status.HTTP_201_CREATED,
    response_model=TableInfo,
    responses=_responses(401, 403, 409),
)
async def create_table(
    body: NewTable, user: CurrentUser, hub: HubDep, request: Request
) -> TableInfo:
    """Open a table; its creator takes the first seat. A private table has an invite code.
    An account may have only so many open tables (409 ``too_many_tables``)."""
    with _table_errors():
        info = await hub.create_table(
            user.id, body.game, body.options, body.private, address=_address(request)
        )
    return _info(info)


@tables.post("/join", response_model=TableInfo, responses=_responses(401, 403, 404, 409, 429))
async def join_by_invite(
    body: InviteBody, user: CurrentUser, hub: HubDep, request: Request
) -> TableInfo:
    """Take the first free seat at the table with this invite code. A player already
    seated there gets the table as it is: an invite link opened again (a second tap, a
    page that sent it twice) leads back to their seat, not to an error."""
    _seat_change_allowed(request, user)
    with _table_errors():
        table_id = await hub.by_invite(body.invite_code)
        try:
            info = await hub.call(
                table_id,
                "join",
                user_id=user.id,
                seat=None,
                address=_address(request),
                invite=body.invite_code,
            )
        except TableError as error:
            if error.code != "already_seated":
                raise
            info = await hub.call(table_id, "info", viewer=user.id, invite=body.invite_code)
    return _info(info)


@tables.get("/{table_id}", response_model=TableInfo, responses=_responses(401, 404))
async def get_table(
    table_id: TableId, viewer: MaybeUser, hub: HubDep, invite: Invite = None
) -> TableInfo:
    """A live table. A private one is a 404 to anyone but its creator, its players and
    a holder of its invite code."""
    with _table_errors():
        info = await hub.call(
            table_id, "info", viewer=viewer.id if viewer is not None else None, invite=invite
        )
    return _info(info)


@tables.post(
    "/{table_id}/join",
    response_model=TableInfo,
    responses=_responses(401, 403, 404, 409, 422, 429),
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
    with _table_errors():
        info = await hub.call(
            table_id,
            "join",
            user_id=user.id,
            seat=body.seat if body is not None else None,
            address=_address(request),
            invite=body.invite_code if body is not None else None,
        )
    return _info(info)


@tables.post(
    "/{table_id}/leave", response_model=TableInfo, responses=_responses(401, 404, 409, 429)
)
async def leave_table(
    table_id: TableId, user: CurrentUser, hub: HubDep, request: Request
) -> TableInfo:
    """Give up a seat. During a match the seat stays yours: a bot plays your hand at a
    free table (the turn timer at a coin table, at a left seat's short turn time) until
    you come back; but a free match whose last person leaves while bots alone play on is
    abandoned, and the table closed (status ``closed``)."""
    _seat_change_allowed(request, user)
    with _table_errors():
        info = await hub.call(table_id, "leave", user_id=user.id)
    return _info(info)


@tables.post(
    "/{table_id}/start", response_model=TableInfo, responses=_responses(401, 403, 404, 409, 429)
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
    with _table_errors():
        if not options.bots:
            raise _error(
                status.HTTP_409_CONFLICT,
                "seats_empty",
                "the match starts by itself when every seat is taken; start now with bots",
            )
        info = await hub.call(table_id, "start", user_id=user.id, level=options.level)
    return _info(info)


@tables.get(
    "/{table_id}/matches",
    response_model=list[MatchSummary],
    tags=["matches"],
    responses=_responses(404),
)
async def table_matches(
    table_id: TableId, viewer: MaybeUser, hub: HubDep, invite: Invite = None
) -> list[MatchSummary]:
    """The table's finished matches, oldest first (a private table's: as for its info)."""
    if not await hub.admits_stored(table_id, viewer.id if viewer is not None else None, invite):
        raise _error(status.HTTP_404_NOT_FOUND, "no_such_table", f"there is no table {table_id}")
    async with hub.sessions() as session:
        rows = (
            await session.scalars(
                select(Match)
                .where(Match.table_id == table_id)
                .order_by(Match.id)
                .options(defer(Match.record))  # a summary: the records stay in the database
            )
        ).all()
    return [MatchSummary.model_validate(_match_fields(row)) for row in rows]


# --- matches -----------------------------------------------------------------------------

matches = APIRouter(prefix="/api/matches", tags=["matches"])


def _match_fields(row: Match) -> dict[str, Any]:
    return {
        "id": row.id,
        "table_id": row.table_id,
        "game": row.game,
        "winner_seat": row.winner_seat,
        "players": row.players,
        "score_sheet": row.score_sheet,
        "finished_at": _utc(row.finished_at),
    }


def _record_of(row: Match) -> dict[str, Any]:
    """A finished match's game record for the replay. A record of a match with bots
    names only the players' seats (docs/hardening.md, known bug 3, a table.py fix):
    the bots' seats are named here, so that it replays."""
    record = dict(row.record)
    names = list(record.get("seats") or [])
    owners = list(row.players or [])
    if names and len(names) != len(owners) and len(names) == sum(o is not None for o in owners):
        given = iter(names)
        record["seats"] = [
            next(given) if owner is not None else f"bot {seat}" for seat, owner in enumerate(owners)
        ]
    return record


async def _visible_match(
    match_id: int, viewer: User | None, invite: str | None, hub: Hub
) -> Match | None:
    """A finished match (its record not loaded), or None when there is none or the viewer
    may not see its table: a public table's matches are anyone's to see, a private
    table's only its creator's, its players' and an invite holder's (as the table)."""
    async with hub.sessions() as session:
        row = await session.scalar(
            select(Match).where(Match.id == match_id).options(defer(Match.record))
        )
    if not isinstance(row, Match):
        return None
    if not await hub.admits_stored(row.table_id, viewer.id if viewer else None, invite):
        return None
    return row


def _no_match(match_id: int) -> HTTPException:
    return _error(status.HTTP_404_NOT_FOUND, "no_such_match", f"there is no match {match_id}")


@matches.get("/{match_id}", response_model=MatchDetail, responses=_responses(401, 404))
async def get_match(
    match_id: MatchId, viewer: MaybeUser, hub: HubDep, invite: Invite = None
) -> MatchDetail:
    """A finished match with its whole game record (a private table's: as for its info)."""
    if await _visible_match(match_id, viewer, invite, hub) is None:
        raise _no_match(match_id)
    async with hub.sessions() as session:
        row = await session.get(Match, match_id)
    if row is None:
        raise _no_match(match_id)
    return MatchDetail.model_validate({**_match_fields(row), "record": row.record})


REPLAY_PAGE = 200  # steps in a page of a replay by default
REPLAY_PAGE_MAX = 500
REPLAYS_KEPT = 8  # replayed matches a process keeps ready for their next pages


class ReplayStep(BaseModel):
    """The table after a step of a finished match, every hand face up."""

    view: dict[str, Any] = Field(description="the spectator view (without options and scores)")
    hands: list[list[str]] = Field(description="every seat's hand")


class ReplayOut(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    start: int = Field(alias="from", description="the step this page starts at")
    total: int = Field(description="the steps of the whole match: the deal, then one per action")
    next: int | None = Field(description="where the next page starts; null after the last step")
    steps: list[ReplayStep] = Field(description="at most `limit` steps, from `from` on")


class Replays:
    """The matches a process has replayed, kept (the last few) for their next pages, and
    a bound on how many it replays at once: replaying a whole match through the engine
    is the cost (linear in its length); a page from a kept match costs little."""

    def __init__(self, builds: int) -> None:
        self.kept: OrderedDict[int, Replayer] = OrderedDict()
        self.running = asyncio.Semaphore(builds)

    def get(self, match_id: int) -> Replayer | None:
        replayer: Replayer | None = self.kept.get(match_id)
        if replayer is not None:
            self.kept.move_to_end(match_id)
        return replayer

    def keep(self, match_id: int, replayer: Replayer) -> None:
        self.kept[match_id] = replayer
        while len(self.kept) > REPLAYS_KEPT:
            self.kept.popitem(last=False)


def _replays(request: Request) -> Replays:
    replays: Replays | None = getattr(request.app.state, "replays", None)
    if replays is None:
        replays = request.app.state.replays = Replays(request.app.state.hub.settings.replay_builds)
    return replays


def replay_page(replayer: Replayer, start: int, limit: int) -> list[ReplayStep]:
    """Steps ``start`` on: the spectator view without the match's history (which grows
    with the match) and every hand, so that a step costs the same in any round."""
    engine = replayer.engine
    return [
        ReplayStep(
            view=engine.view(state, None, history=False),
            hands=[[str(card) for card in hand] for hand in state.hands],
        )
        for state in replayer.states(start, limit)
    ]


@matches.get(
    "/{match_id}/replay", response_model=ReplayOut, responses=_responses(401, 404, 409, 503)
)
async def get_replay(
    match_id: MatchId,
    request: Request,
    viewer: MaybeUser,
    hub: HubDep,
    invite: Invite = None,
    start: Annotated[
        int, Query(alias="from", ge=0, le=MAX_ID, description="the first step of the page")
    ] = 0,
    limit: Annotated[
        int, Query(ge=1, le=REPLAY_PAGE_MAX, description="steps in the page")
    ] = REPLAY_PAGE,
) -> ReplayOut:
    """A finished match step by step with every hand face up (the match is over: nothing
    in it is hidden any more), a page at a time. Who may see it: as ``GET
    /api/matches/{id}``. A process replays only so many matches at once (503 ``busy``
    with Retry-After beyond them)."""
    if await _visible_match(match_id, viewer, invite, hub) is None:
        raise _no_match(match_id)
    replays = _replays(request)
    if replays.running.locked():
        raise HTTPException(
            status.HTTP_503_SERVICE_UNAVAILABLE,
            detail={"code": "busy", "message": "too many replays at once; try again"},
            headers={"Retry-After": "2"},
        )
    async with replays.running:
        replayer = replays.get(match_id)
        if replayer is None:
            async with hub.sessions() as session:
                row = await session.get(Match, match_id)
            if row is None:
                raise _no_match(match_id)
            try:
                record = GameRecord.from_json(_record_of(row))
                replayer = await asyncio.to_thread(Replayer, record)
            except RuleError as error:  # e.g. an option an older version allowed
                raise _error(
                    status.HTTP_409_CONFLICT,
                    "not_replayable",
                    f"this match's record does not replay here: {error}",
                ) from error
            replays.keep(match_id, replayer)
        steps = await asyncio.to_thread(replay_page, replayer, start, limit)
    after = start + len(steps)
    return ReplayOut.model_validate(
        {
            "from": start,
            "total": replayer.steps,
            "next": after if after < replayer.steps else None,
            "steps": steps,
        }
    )


# --- health ------------------------------------------------------------------------------

health = APIRouter(tags=["health"])


@health.get("/healthz", response_model=Health)
async def healthz() -> Health:
    """The process is up."""
    return Health(ok=True)


@health.get("/readyz", response_model=Ready, responses={503: {"model": Ready}})
async def readyz(request: Request, response: Response) -> Ready:
    """The database is migrated and the tables are loaded."""
    ready = bool(getattr(request.app.state, "ready", False))
    if not ready:
        response.status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    return Ready(ready=ready, pid=os.getpid())


router = APIRouter()
router.include_router(health)
router.include_router(players)
router.include_router(tables)
router.include_router(matches)
