"""Invitations to a table (docs/social.md, "Friends", "Invitations"): a seated player
invites a friend (``POST /api/tables/{id}/invite``, tagged ``tables``); the invitee's
pages ask ``GET /api/me/invitations`` every few seconds (there is no channel to a player
who is not at a table), and ``POST /api/me/invitations/{id}/accept`` seats them, a
private table included (an invitation opens it as its invite code does);
``DELETE /api/me/invitations/{id}`` dismisses one. An invitation lasts ten minutes.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi import APIRouter, Request, Response, status
from pydantic import BaseModel

from sahrat.server.api.deps import (
    CurrentUser,
    HubDep,
    PlayerId,
    TableId,
    address,
    http_error,
    responses,
    table_errors,
)
from sahrat.server.api.friends import UserIdBody, need_account
from sahrat.server.api.models import table_info, utc
from sahrat.server.social.friends import INVITATION_SECONDS
from sahrat.server.table.errors import TableError
from sahrat.server.table.protocol import TableInfo
from sahrat.store import friends as rows
from sahrat.store.tables import in_session, in_transaction

router = APIRouter(tags=["players"])


class InvitationOut(BaseModel):
    """An invitation to a table, from a friend seated there."""

    id: int
    table_id: int
    game: str
    private: bool
    inviter_id: int
    inviter_name: str
    created_at: datetime
    expires_at: datetime


@router.post(
    "/api/tables/{table_id}/invite",
    tags=["tables"],
    status_code=status.HTTP_201_CREATED,
    response_model=InvitationOut,
    responses=responses(401, 403, 404, 409),
)
async def invite(
    table_id: TableId, body: UserIdBody, user: CurrentUser, hub: HubDep
) -> InvitationOut:
    """Invite a friend to the table I am seated at, for ten minutes (sent again, it is
    renewed). Refused: I am not seated there (409 ``not_seated``), the table has no free
    seat (409 ``table_full``), they are not my friend (403 ``not_friends``) or blocked me
    (403 ``blocked_by_player``)."""
    need_account(user)
    with table_errors():
        info = await hub.call(table_id, "info", viewer=user.id)
        seats = info["seats"]
        if not any(seat["user_id"] == user.id for seat in seats):
            raise TableError("not_seated", "invite friends to a table you are seated at")
        if info["status"] != "waiting" or all(seat["user_id"] is not None for seat in seats):
            raise TableError("table_full", "this table has no free seat to invite a friend to")

        async def make(session: Any) -> Any:
            if await rows.has_blocked(session, body.user_id, user.id):
                raise TableError("blocked_by_player", "this player does not take your invitations")
            if not await rows.are_friends(session, user.id, body.user_id):
                raise TableError("not_friends", "invite your friends only")
            return await rows.add_invitation(
                session,
                table_id=table_id,
                inviter=user.id,
                invitee=body.user_id,
                seconds=INVITATION_SECONDS,
            )

        row = await in_transaction(hub.sessions, make)
    return InvitationOut(
        id=row.id,
        table_id=table_id,
        game=str(info["game"]),
        private=bool(info["private"]),
        inviter_id=user.id,
        inviter_name=user.name,
        created_at=utc(row.created_at),
        expires_at=utc(row.expires_at),
    )


@router.get(
    "/api/me/invitations",
    response_model=list[InvitationOut],
    responses=responses(401),
)
async def my_invitations(user: CurrentUser, hub: HubDep) -> list[InvitationOut]:
    """The invitations to me not expired, to tables still waiting for players, newest
    first (the pages ask every few seconds: the lobby and a table alike)."""
    if user.guest:
        return []
    found = await in_session(hub.sessions, lambda s: rows.invitations_to(s, user.id))
    return [
        InvitationOut(
            id=inv.id,
            table_id=table.id,
            game=table.game,
            private=table.private,
            inviter_id=inv.inviter_id,
            inviter_name=name,
            created_at=utc(inv.created_at),
            expires_at=utc(inv.expires_at),
        )
        for inv, table, name in found
    ]


@router.post(
    "/api/me/invitations/{invitation_id}/accept",
    response_model=TableInfo,
    responses=responses(401, 403, 404, 409),
)
async def accept_invitation(
    invitation_id: PlayerId, user: CurrentUser, hub: HubDep, request: Request
) -> TableInfo:
    """Take a seat at the table I was invited to (a private one included: an invitation
    opens it as its invite code does). A seat of mine there already: the table as it
    is. An invitation expired, refused or unknown: 404 ``no_such_invitation``."""
    found = await in_session(hub.sessions, lambda s: rows.invitation_to(s, invitation_id, user.id))
    if found is None:
        raise http_error("no_such_invitation", "this invitation has expired or is not yours")
    invitation, table = found
    code = table.invite_code
    with table_errors():
        try:
            info = await hub.call(
                table.id,
                "join",
                user_id=user.id,
                seat=None,
                address=address(request),
                invite=code,
            )
        except TableError as error:
            if error.code != "already_seated":
                raise
            info = await hub.call(table.id, "info", viewer=user.id, invite=code)
    await in_transaction(hub.sessions, lambda s: rows.drop_invitation(s, invitation.id, user.id))
    return table_info(info)


@router.delete(
    "/api/me/invitations/{invitation_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    responses=responses(401),
)
async def drop_invitation(invitation_id: PlayerId, user: CurrentUser, hub: HubDep) -> Response:
    """Dismiss an invitation ("not now"): 204 whether or not it was there."""
    await in_transaction(hub.sessions, lambda s: rows.drop_invitation(s, invitation_id, user.id))
    return Response(status_code=status.HTTP_204_NO_CONTENT)
