"""Friends and blocks (docs/social.md, "Friends"; tagged ``players``).

* ``GET /api/friends``: my friends, each with their presence (online, at a table, and
  which one when that table is open to me), and the requests sent to me and by me.
* ``POST /api/friends/requests`` (``{"name"}`` or ``{"user_id"}``), then
  ``.../{id}/accept`` or ``.../{id}/refuse`` by the one asked; ``DELETE
  /api/friends/{user_id}`` ends a friendship or withdraws a request either way.
* ``POST /api/blocks``, ``DELETE /api/blocks/{user_id}``, ``GET /api/blocks``: a blocked
  player cannot send me a request or invite me, and their chat messages are not sent to
  me; blocking ends our friendship and requests.

Invitations to a table are ``api/invitations.py``'s.

Guests have no friends (403 ``friends_need_account``): a guest's account lives in one
browser and is made in one call, so friendships with it would be lost with a cleared
browser and requests from it cost nothing to send. A guest may block.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Request, Response, status
from pydantic import BaseModel, ConfigDict, Field

from sahrat.names import name_key
from sahrat.server.api.deps import (
    MAX_ID,
    CurrentUser,
    HubDep,
    PlayerId,
    check_limits,
    http_error,
    responses,
    table_errors,
)
from sahrat.server.api.models import utc
from sahrat.server.limits import Throttle
from sahrat.server.social.friends import (
    ONLINE_SECONDS,
    REQUESTS_PER_HOUR,
    online,
)
from sahrat.server.table.errors import TableError
from sahrat.store import friends as rows
from sahrat.store.models import GameTable, User
from sahrat.store.tables import in_session, in_transaction

router = APIRouter(tags=["players"])

Id = Annotated[int, Field(ge=1, le=MAX_ID)]


# --- bodies and answers ------------------------------------------------------------------


class FriendRequestBody(BaseModel):
    """Whom to ask: a player's name (as shown, any case or spacing) or their id."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: str | None = Field(default=None, min_length=1, max_length=100)
    user_id: Id | None = None


class UserIdBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    user_id: Id


class FriendRequestOut(BaseModel):
    """A friend request, sent or received (or the friendship it became)."""

    id: int = Field(description="the request's id (accept or refuse it by this)")
    user_id: int = Field(description="the other player")
    name: str
    status: Literal["pending", "accepted"]
    created_at: datetime


class FriendOut(BaseModel):
    """A friend and where they are now."""

    user_id: int
    name: str
    online: bool = Field(
        description=f"made a request in the last {ONLINE_SECONDS:g} seconds (an open page "
        "asks every few seconds), or holds a table's socket"
    )
    at_table: bool = Field(description="seated at an open table (waiting or playing)")
    table_id: int | None = Field(
        description="that table, when it is open to me: public, mine, or private with its "
        "creator's friends allowed to watch (null otherwise)"
    )
    game: str | None = Field(description="that table's game (null with table_id)")


class FriendsOut(BaseModel):
    friends: list[FriendOut] = Field(description="online ones first, then by name")
    incoming: list[FriendRequestOut] = Field(description="requests sent to me")
    outgoing: list[FriendRequestOut] = Field(description="requests I sent, not yet answered")


class BlockOut(BaseModel):
    user_id: int
    name: str
    created_at: datetime


# --- helpers -----------------------------------------------------------------------------


def need_account(user: User) -> None:
    if user.guest:
        raise http_error(
            "friends_need_account",
            "guests have no friends list: sign up (a name and a password) to add friends",
        )


def _request_out(row: Any, other: User) -> FriendRequestOut:
    return FriendRequestOut(
        id=row.id,
        user_id=other.id,
        name=other.name,
        status="accepted" if row.status == rows.ACCEPTED else "pending",
        created_at=utc(row.created_at),
    )


def _request_throttle(request: Request) -> Throttle:
    throttle: Throttle | None = getattr(request.app.state, "friend_requests", None)
    if throttle is None:
        throttle = request.app.state.friend_requests = Throttle(REQUESTS_PER_HOUR, 3600.0)
    return throttle


def _open_to(table: GameTable, viewer: int, friends: set[int], mine: set[int]) -> bool:
    """Whether ``viewer`` may see ``table`` (public; or private and theirs, or theirs to
    sit at, or with its creator's friends allowed to watch)."""
    if not table.private:
        return True
    if table.creator_id == viewer or table.id in mine:
        return True
    return table.friends_watch and table.creator_id in friends


# --- friends -----------------------------------------------------------------------------


@router.get("/api/friends", response_model=FriendsOut, responses=responses(401, 403))
async def list_friends(user: CurrentUser, hub: HubDep) -> FriendsOut:
    """My friends with their presence, and the requests to me and from me."""
    need_account(user)
    me = user.id

    async def read(session: Any) -> tuple[Any, dict[int, list[GameTable]], set[int]]:
        pairs = await rows.friends_of(session, me)
        accepted = [other.id for other, row in pairs if row.status == rows.ACCEPTED]
        seats = await rows.live_seats(session, accepted)
        tables = {t.id for found in seats.values() for t in found}
        mine = await rows.seated_at(session, me, tables)
        return pairs, seats, mine

    pairs, seats, mine = await in_session(hub.sessions, read)
    friend_ids = {other.id for other, row in pairs if row.status == rows.ACCEPTED}
    now = datetime.now(UTC)
    friends: list[FriendOut] = []
    incoming: list[FriendRequestOut] = []
    outgoing: list[FriendRequestOut] = []
    for other, row in pairs:
        if row.status != rows.ACCEPTED:
            (incoming if row.addressee_id == me else outgoing).append(_request_out(row, other))
            continue
        age = (now - utc(other.last_seen_at)).total_seconds() if other.last_seen_at else None
        tables = seats.get(other.id, [])
        shown = next((t for t in tables if _open_to(t, me, friend_ids, mine)), None)
        friends.append(
            FriendOut(
                user_id=other.id,
                name=other.name,
                online=online(age, hub.sockets.of_user.get(other.id, 0)),
                at_table=bool(tables),
                table_id=shown.id if shown is not None else None,
                game=shown.game if shown is not None else None,
            )
        )
    friends.sort(key=lambda f: (not f.online, f.name.casefold()))
    return FriendsOut(friends=friends, incoming=incoming, outgoing=outgoing)


@router.post(
    "/api/friends/requests",
    status_code=status.HTTP_201_CREATED,
    response_model=FriendRequestOut,
    responses={200: {"model": FriendRequestOut}, **responses(401, 403, 404, 409, 422, 429)},
)
async def send_request(
    body: FriendRequestBody,
    user: CurrentUser,
    hub: HubDep,
    request: Request,
    response: Response,
) -> FriendRequestOut:
    """Ask a player (by ``name`` or ``user_id``) to be friends (201). A request already
    sent is 200 with it; when they had asked me, this accepts theirs (200, ``accepted``).
    Refused: guests either way (403 ``friends_need_account``, 409 ``friend_is_guest``),
    myself (409 ``friend_self``), friends already (409 ``already_friends``), a player I
    blocked (409 ``player_blocked``) or who blocked me (403 ``blocked_by_player``), and
    more than 30 requests an hour (429 ``too_many_friend_requests``)."""
    need_account(user)
    if (body.name is None) == (body.user_id is None):
        raise http_error("bad_friend_request", 'send {"name": ...} or {"user_id": ...}')
    check_limits(
        "too_many_friend_requests",
        f"an account may send {REQUESTS_PER_HOUR} friend requests an hour; try again later",
        (_request_throttle(request), str(user.id)),
    )
    me = user.id

    async def ask(session: Any) -> tuple[Any, User, bool]:
        if body.user_id is not None:
            other = await session.get(User, body.user_id)
        else:
            other = await rows.user_named(session, name_key(body.name or ""))
        if other is None:
            raise TableError("no_such_player", "there is no player of that name or id")
        if other.id == me:
            raise TableError("friend_self", "you cannot be your own friend")
        if other.guest:
            raise TableError(
                "friend_is_guest", f"{other.name} is a guest: guests have no friends list"
            )
        if await rows.has_blocked(session, me, other.id):
            raise TableError("player_blocked", f"you blocked {other.name}: unblock them first")
        if await rows.has_blocked(session, other.id, me):
            raise TableError("blocked_by_player", f"{other.name} does not take your requests")
        found = await rows.between(session, me, other.id)
        if found is not None:
            if found.status == rows.ACCEPTED:
                raise TableError("already_friends", f"{other.name} is your friend already")
            if found.addressee_id == me:  # they had asked me: now we are friends
                found.status = rows.ACCEPTED
            return found, other, False
        return await rows.add_request(session, me, other.id), other, True

    with table_errors():
        row, other, new = await in_transaction(hub.sessions, ask)
    if not new:
        response.status_code = status.HTTP_200_OK
    return _request_out(row, other)


async def _answer(hub: Any, user: User, request_id: int, accept: bool) -> FriendRequestOut | None:
    need_account(user)

    async def answer(session: Any) -> FriendRequestOut | None:
        found = await rows.request_to(session, request_id, user.id)
        if found is None:
            raise TableError("no_such_request", f"no friend request {request_id} waits for you")
        other = await session.get(User, found.requester_id)
        if not accept:
            await session.delete(found)
            return None
        found.status = rows.ACCEPTED
        return _request_out(found, other)

    with table_errors():
        return await in_transaction(hub.sessions, answer)


@router.post(
    "/api/friends/requests/{request_id}/accept",
    response_model=FriendRequestOut,
    responses=responses(401, 403, 404),
)
async def accept_request(request_id: PlayerId, user: CurrentUser, hub: HubDep) -> FriendRequestOut:
    """Accept a request sent to me (404 ``no_such_request`` for any other)."""
    accepted = await _answer(hub, user, request_id, True)
    assert accepted is not None
    return accepted


@router.post(
    "/api/friends/requests/{request_id}/refuse",
    status_code=status.HTTP_204_NO_CONTENT,
    responses=responses(401, 403, 404),
)
async def refuse_request(request_id: PlayerId, user: CurrentUser, hub: HubDep) -> Response:
    """Refuse a request sent to me: it goes (the sender may ask again later)."""
    await _answer(hub, user, request_id, False)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.delete(
    "/api/friends/{user_id}", status_code=status.HTTP_204_NO_CONTENT, responses=responses(401, 404)
)
async def remove_friend(user_id: PlayerId, user: CurrentUser, hub: HubDep) -> Response:
    """End a friendship, or withdraw a request either way (404 ``no_such_request`` if
    there is none)."""
    removed = await in_transaction(hub.sessions, lambda s: rows.remove_pair(s, user.id, user_id))
    if not removed:
        raise http_error("no_such_request", f"you and player {user_id} are not friends")
    return Response(status_code=status.HTTP_204_NO_CONTENT)


# --- blocks ------------------------------------------------------------------------------


@router.get("/api/blocks", response_model=list[BlockOut], responses=responses(401))
async def list_blocks(user: CurrentUser, hub: HubDep) -> list[BlockOut]:
    """The players I blocked, oldest first."""
    found = await in_session(hub.sessions, lambda s: rows.blocks_of(s, user.id))
    return [BlockOut(user_id=u.id, name=u.name, created_at=utc(b.created_at)) for u, b in found]


@router.post(
    "/api/blocks",
    status_code=status.HTTP_201_CREATED,
    response_model=BlockOut,
    responses={200: {"model": BlockOut}, **responses(401, 404, 409)},
)
async def block(body: UserIdBody, user: CurrentUser, hub: HubDep, response: Response) -> BlockOut:
    """Block a player (201; 200 if blocked already): our friendship, our requests and
    our invitations go; they cannot ask me again or invite me, and their chat messages
    are not sent to me at any table. Myself: 409 ``block_self``."""
    if body.user_id == user.id:
        raise http_error("block_self", "you cannot block yourself")

    async def make(session: Any) -> tuple[User, bool]:
        other = await session.get(User, body.user_id)
        if other is None:
            raise TableError("no_such_player", f"there is no player {body.user_id}")
        return other, await rows.add_block(session, user.id, other.id)

    with table_errors():
        other, new = await in_transaction(hub.sessions, make)
    hub.blocked(user.id, other.id, True)
    if not new:
        response.status_code = status.HTTP_200_OK
    return BlockOut(user_id=other.id, name=other.name, created_at=datetime.now(UTC))


@router.delete(
    "/api/blocks/{user_id}", status_code=status.HTTP_204_NO_CONTENT, responses=responses(401)
)
async def unblock(user_id: PlayerId, user: CurrentUser, hub: HubDep) -> Response:
    """Lift a block (204, whether there was one or not)."""
    await in_transaction(hub.sessions, lambda s: rows.remove_block(s, user.id, user_id))
    hub.blocked(user.id, user_id, False)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
