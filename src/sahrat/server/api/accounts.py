"""Accounts and their tokens (tagged ``players``): a guest, a sign-up, a login, a logout.

A password is hashed only in the hub's few hashing threads (``auth.HashPool``): a
request that finds them all taken is a 503 at once, and gives back what it took
from the account limits. A login that names no account still checks a password,
so that a wrong name costs as long as a wrong password.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Body, HTTPException, Request, Response, status
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from sahrat.names import guest_name, name_key
from sahrat.server.api.deps import (
    BearerToken,
    CurrentUser,
    HubDep,
    address,
    check_limits,
    checked_name,
    http_error,
    network,
    refuse_mixed_scripts,
    responses,
    too_many,
)
from sahrat.server.api.models import AuthOut, Credentials, GuestBody, LoginBody, user_out
from sahrat.server.auth import (
    PoolFull,
    hash_password,
    issue_token,
    revoke_token,
    token_digest,
    verify_password,
)
from sahrat.server.hub import Hub
from sahrat.server.limits import Check, give_back, waiting
from sahrat.store import ledger
from sahrat.store.models import User

GUEST_ATTEMPTS = 8
TOO_MANY_LOGINS = "too many logins from your network, or to this name; try again later"
T = TypeVar("T")

router = APIRouter(prefix="/api", tags=["players"])


@cache
def _dummy_hash() -> str:
    """Verified against when a login names no account (or a guest), so that a wrong
    name costs as long as a wrong password and the timing does not tell which."""
    return hash_password(secrets.token_urlsafe(16))


def _password_matches(stored: str | None, password: str) -> bool:
    """(In a hashing thread.) Without a stored hash a dummy one is checked all the same."""
    return verify_password(stored or _dummy_hash(), password) and stored is not None


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


def _new_account_allowed(hub: Hub, request: Request) -> list[Check]:
    """Take a new account from the limits (429 if refused); what it took."""
    checks = hub.account_limits.new_account(network(request))
    check_limits(
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


async def _welcome(session: Any, hub: Hub, user_id: int) -> None:
    """A new account's welcome grant, in the transaction that creates the account."""
    amount = hub.defaults.welcome_grant
    if amount > 0:
        await ledger.grant(session, user_id, amount, f"welcome:{user_id}", "welcome")


@router.post(
    "/guests",
    status_code=status.HTTP_201_CREATED,
    response_model=AuthOut,
    responses=responses(429, 503),
)
async def create_guest(
    hub: HubDep, request: Request, body: Annotated[GuestBody | None, Body()] = None
) -> AuthOut:
    """A fresh guest account (no password) and a token for it, named in the page's
    language (``lang``): ``صقر سريع 347``, ``Swift Falcon 347`` (a rename on the first
    visit makes it the guest's own: ``PATCH /api/me``). A guest plays at free tables
    only (docs/economy.md)."""
    lang = body.lang if body is not None else None
    with _given_back_if_busy(_new_account_allowed(hub, request)):
        for attempt in range(GUEST_ATTEMPTS):
            name = guest_name(lang, secrets.randbelow)
            if attempt == GUEST_ATTEMPTS - 1:  # the words are all taken: a longer number
                name = f"{name}{secrets.randbelow(1000):03d}"
            try:
                async with hub.sessions() as session, session.begin():
                    user = User(name=name, name_key=name_key(name), password_hash=None, guest=True)
                    session.add(user)
                    await session.flush()
                    await _welcome(session, hub, user.id)
                    token = await issue_token(session, user.id, hub.settings.token_hours)
            except IntegrityError:  # the name is taken: draw another
                continue
            hub.remember_name(user.id, user.name)
            return AuthOut(token=token, user=user_out(user))
        raise http_error("busy", "could not find a free guest name; try again")


@router.post(
    "/users",
    status_code=status.HTTP_201_CREATED,
    response_model=AuthOut,
    responses=responses(409, 422, 429, 503),
)
async def sign_up(body: Credentials, hub: HubDep, request: Request) -> AuthOut:
    """Create an account with a name and a password, and sign in. The name is taken in
    NFKC and compared whatever its case and by its look (the UTS #39 skeleton): ``Boss``
    and ``b0ss`` are taken once ``boss`` is (409 ``name_taken``). A word of the name that
    mixes alphabets or kinds of digits, like ``b٥ss``, is refused (422
    ``name_mixes_scripts``). Spaces are trimmed and collapsed (``أبو فهد``); a control,
    format or bidi character is refused (422 ``name_hidden_chars``)."""
    name = checked_name(body.name)
    refuse_mixed_scripts(name)
    taken = http_error("name_taken", f"the name {name!r} is taken")
    key = name_key(name)
    async with hub.sessions() as session:  # before hashing: a taken name costs nothing
        if await session.scalar(select(User.id).where(User.name_key == key)) is not None:
            raise taken
    with _given_back_if_busy(_new_account_allowed(hub, request)):
        password_hash = await _hashing(hub, hash_password, body.password)
    try:
        async with hub.sessions() as session, session.begin():
            user = User(name=name, name_key=key, password_hash=password_hash, guest=False)
            session.add(user)
            await session.flush()
            await _welcome(session, hub, user.id)
            token = await issue_token(session, user.id, hub.settings.token_hours)
    except IntegrityError as error:  # a simultaneous sign-up took it first
        raise taken from error
    hub.remember_name(user.id, user.name)
    hub.account_limits.signed_in(user.id, address(request))
    return AuthOut(token=token, user=user_out(user))


@router.post("/login", response_model=AuthOut, responses=responses(401, 429, 503))
async def log_in(body: LoginBody, hub: HubDep, request: Request) -> AuthOut:
    """Sign in with a name and a password; a new token each time. Tries are limited
    (429 ``too_many_logins``, Retry-After) per network, per network and name, and, for a
    network that never signed in to the account (and unless it is an admin's), per
    name and overall: a stranger's flood cannot lock the owner out. A busy server
    answers 503 at once."""
    limits = hub.account_limits
    from_network, key = network(request), name_key(body.name)
    wait = waiting(limits.own_logins(from_network, key))  # before the database: nothing taken
    if wait > 0:
        raise too_many("too_many_logins", TOO_MANY_LOGINS, wait)
    async with hub.sessions() as session:
        # the exact name first: accounts older than the unique keys may share one
        user = await session.scalar(select(User).where(User.name == body.name))
        if user is None:
            user = await session.scalar(select(User).where(User.name_key == key))
        stored = user.password_hash if user is not None else None
    trusted = user is not None and limits.trusts(user.id, user.is_admin, address(request))
    checks = limits.login(from_network, key, trusted)
    check_limits("too_many_logins", TOO_MANY_LOGINS, *checks)
    with _given_back_if_busy(checks):  # even if no user, as long as for a wrong password
        ok = await _hashing(hub, _password_matches, stored, body.password)
    if user is None or not ok:
        raise http_error("bad_login", "wrong name or password")
    async with hub.sessions() as session, session.begin():
        token = await issue_token(session, user.id, hub.settings.token_hours)
    hub.remember_name(user.id, user.name)
    limits.signed_in(user.id, address(request))
    return AuthOut(token=token, user=user_out(user))


@router.post("/logout", status_code=status.HTTP_204_NO_CONTENT, responses=responses(401))
async def log_out(user: CurrentUser, token: BearerToken, hub: HubDep) -> Response:
    """Revoke the token this request was sent with."""
    async with hub.sessions() as session, session.begin():
        await revoke_token(session, token)
    hub.token_revoked(token_digest(token))  # its open WebSockets close too
    return Response(status_code=status.HTTP_204_NO_CONTENT)
