"""What every router of the REST API shares: its dependencies and how it refuses.

The dependencies: the hub (``HubDep``), the caller (``CurrentUser`` from a bearer
token, ``MaybeUser`` when a token is optional), and the ids a path or a query may
carry (``TableId``, ``MatchId``, ``PlayerId``, pages' ``Limit`` and ``Offset``), each
bounded to what the database's 32-bit integers hold, so that a larger one is a 422
and not a database error.

The refusals: an error is ``{"detail": {"code", "message"}}``
(:func:`http_error`). A table's, the hub's or the cluster's refusal carries a code
and no status: :func:`table_errors` reads its status in ``server/errors.py``. An
invalid table option is a 422 in FastAPI's validation shape, naming the option.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

from fastapi import Depends, HTTPException, Path, Query, Request, status
from sqlalchemy.ext.asyncio import AsyncSession

from sahrat.names import NameRefused, clean_name, script_problem
from sahrat.rules.errors import BadOption
from sahrat.server.addresses import client_network
from sahrat.server.api.models import ErrorResponse, ValidationErrorResponse
from sahrat.server.auth import user_for_token
from sahrat.server.errors import http_status
from sahrat.server.hub import Hub
from sahrat.server.limits import Check, admit
from sahrat.server.table.errors import TableError
from sahrat.store.models import User

MAX_ID = 2**31 - 1  # ids are 32-bit integers in the database: a larger one is a 422, not a 500
TableId = Annotated[int, Path(ge=1, le=MAX_ID)]
MatchId = Annotated[int, Path(ge=1, le=MAX_ID)]
PlayerId = Annotated[int, Path(ge=1, le=MAX_ID)]
Limit = Annotated[int, Query(ge=1, le=500)]
Offset = Annotated[int, Query(ge=0, le=MAX_ID)]
Invite = Annotated[str | None, Query(max_length=64, description="a private table's invite code")]


# --- refusals ----------------------------------------------------------------------------


def http_error(code: str, message: str) -> HTTPException:
    """A refusal as an HTTP error, with the status its code has in ``server/errors.py``;
    a 401 says which scheme to authenticate with."""
    code_status = http_status(code)
    headers = {"WWW-Authenticate": "Bearer"} if code_status == 401 else None
    return HTTPException(code_status, detail={"code": code, "message": message}, headers=headers)


@contextmanager
def table_errors() -> Iterator[None]:
    """Turn the hub's and tables' refusals into HTTP errors, each with the status its
    code has in ``server/errors.py``."""
    try:
        yield
    except TableError as error:
        raise http_error(error.code, error.message) from error
    except BadOption as error:
        loc = ["body", "game"] if error.option == "game" else ["body", "options", error.option]
        raise HTTPException(
            422,
            detail=[{"loc": loc, "msg": error.message, "type": "bad_option"}],
        ) from error


def responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """Error statuses with their body, for a route's ``responses=``; a 422 is either
    shape (a refusal, or FastAPI's own validation error)."""
    return {
        code: {"model": ErrorResponse | ValidationErrorResponse if code == 422 else ErrorResponse}
        for code in codes
    }


def too_many(code: str, message: str, wait: float) -> HTTPException:
    """A 429 that says when to retry (whole seconds, at least one)."""
    return HTTPException(
        status.HTTP_429_TOO_MANY_REQUESTS,
        detail={"code": code, "message": message},
        headers={"Retry-After": str(max(1, math.ceil(wait)))},
    )


def check_limits(code: str, message: str, *checks: Check) -> None:
    """A 429 with Retry-After unless every throttle has a request left for its key;
    then one is taken from each (and a refused request takes nothing from any)."""
    wait = admit(checks)
    if wait > 0:
        raise too_many(code, message, wait)


def checked_name(raw: str) -> str:
    """A display name as it is kept (``names.clean_name``), or a 422: ``name_hidden_chars``
    for a control, format or bidi character; any other fault in FastAPI's validation
    shape, naming ``name`` (as a body's own validation would)."""
    try:
        return clean_name(raw)
    except NameRefused as refused:
        if refused.code == "name_hidden_chars":
            raise http_error(refused.code, refused.message) from refused
        raise HTTPException(
            422, detail=[{"loc": ["body", "name"], "msg": refused.message, "type": "value_error"}]
        ) from refused


def refuse_mixed_scripts(name: str) -> None:
    """422 ``name_mixes_scripts`` if a word of ``name`` imitates one in another alphabet."""
    problem = script_problem(name)
    if problem is not None:
        raise http_error("name_mixes_scripts", problem)


# --- the request -------------------------------------------------------------------------


def get_hub(request: Request) -> Hub:
    hub: Hub = request.app.state.hub
    return hub


HubDep = Annotated[Hub, Depends(get_hub)]


def address(request: Request) -> str | None:
    """The client's network, as ``addresses.network_key`` gives it (an IPv6 address as
    its /56), or None if unknown. Behind a proxy that uvicorn trusts
    (``FORWARDED_ALLOW_IPS``) it is the address the proxy saw."""
    return client_network(request)


def network(request: Request) -> str:
    """The client's network as a throttle counts it: unknown addresses are one network."""
    return address(request) or "unknown"


# --- the caller --------------------------------------------------------------------------


def bearer_token(request: Request) -> str:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token:
        raise http_error("no_token", "send Authorization: Bearer <token>")
    return token.strip()


BearerToken = Annotated[str, Depends(bearer_token)]


async def authenticate(request: Request, session: AsyncSession, token: str) -> User:
    """The user of a bearer token, read in ``session`` (a route that writes may use its
    own session for both); 401 ``bad_token`` if it is unknown, expired or revoked."""
    user = await user_for_token(session, token)
    if user is None:
        raise http_error("bad_token", "the token is unknown, expired or revoked")
    hub = get_hub(request)
    hub.remember_name(user.id, user.name)
    hub.social.seen(user.id)  # friends' presence (docs/social.md, "Friends")
    if not user.guest:  # the network the owner uses: strangers' login floods spare it
        hub.account_limits.signed_in(user.id, client_network(request))
    return user


async def current_user(request: Request, token: BearerToken) -> User:
    async with get_hub(request).sessions() as session:
        return await authenticate(request, session, token)


CurrentUser = Annotated[User, Depends(current_user)]


async def optional_user(request: Request, hub: HubDep) -> User | None:
    """The caller if it sent a bearer token (a bad one is still a 401), else None."""
    if not request.headers.get("authorization"):
        return None
    token = bearer_token(request)
    async with hub.sessions() as session:
        user = await user_for_token(session, token)
    if user is None:
        raise http_error("bad_token", "the token is unknown, expired or revoked")
    hub.remember_name(user.id, user.name)
    return user


MaybeUser = Annotated[User | None, Depends(optional_user)]
