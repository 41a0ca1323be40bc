"""One-time tickets for a table's WebSocket, so that no bearer token travels in a URL.

A browser cannot set headers on a WebSocket, and whatever is in the URL ends up in
access logs (nginx's, a load balancer's, the browser's history). So a client asks
``POST /api/tables/{id}/ticket`` with its bearer token and opens
``/ws/tables/{id}?ticket=…`` within ``SAHRAT_TICKET_SECONDS``. A ticket opens one
socket to that table for that user, once: using it deletes it, in one ``DELETE …
RETURNING``, so two sockets racing with one ticket cannot both win, on any process of
a cluster (the tickets live in the shared database). The ticket remembers the digest
of the token it was issued for, so the socket still closes when that token expires or
is revoked.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from datetime import UTC, datetime, timedelta
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel
from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from sahrat.server.api.routes import ErrorResponse, TableId, ValidationErrorResponse
from sahrat.server.auth import authenticate, bearer_token, token_digest
from sahrat.store.models import SocketTicket, Token, User

router = APIRouter(tags=["tables"])


# Expired tickets are swept by an issue at most this often (per process), not by every
# issue: a crowd reconnecting at once (after a restart) pays for one sweep, not one each.
SWEEP_SECONDS = 30.0


class TicketOut(BaseModel):
    ticket: str
    expires_in: float


def _digest(ticket: str) -> str:
    return hashlib.sha256(ticket.encode("utf-8")).hexdigest()


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)  # SQLite


@router.post(
    "/api/tables/{table_id}/ticket",
    response_model=TicketOut,
    responses={401: {"model": ErrorResponse}, 422: {"model": ValidationErrorResponse}},
)
async def issue_ticket(
    table_id: TableId, token: Annotated[str, Depends(bearer_token)], request: Request
) -> TicketOut:
    """A ticket to open this table's WebSocket once, within a few seconds. Whether the
    user may see the table is decided when the socket opens, as for any socket; an id
    no table can have (out of 1 to 2³¹−1, as every route's) is a 422. The
    token is checked in the ticket's own transaction: a crowd reconnecting after a
    restart costs one session each."""
    hub = request.app.state.hub
    seconds = hub.settings.ticket_seconds
    ticket = secrets.token_urlsafe(24)
    now = datetime.now(UTC)
    async with hub.sessions() as session:
        user = await authenticate(request, session, token)
        # Unused tickets are swept by an issue now and then: the table holds few dead ones.
        if time.monotonic() >= hub.next_ticket_sweep:
            hub.next_ticket_sweep = time.monotonic() + SWEEP_SECONDS
            await session.execute(delete(SocketTicket).where(SocketTicket.expires_at < now))
        session.add(
            SocketTicket(
                digest=_digest(ticket),
                user_id=user.id,
                table_id=table_id,
                token_digest=token_digest(token),
                expires_at=now + timedelta(seconds=seconds),
            )
        )
        await session.commit()
    return TicketOut(ticket=ticket, expires_in=seconds)


async def redeem_ticket(
    session: AsyncSession, ticket: str, table_id: int
) -> tuple[User, datetime, str] | None:
    """Use up a ticket for ``table_id``: its user, when the token behind it expires and
    that token's digest — or None if the ticket is unknown, used, expired, for another
    table, or its token has expired or been revoked since."""
    used = (
        await session.execute(
            delete(SocketTicket)
            .where(SocketTicket.digest == _digest(ticket))
            .returning(
                SocketTicket.user_id,
                SocketTicket.table_id,
                SocketTicket.token_digest,
                SocketTicket.expires_at,
            )
        )
    ).first()
    await session.commit()
    if used is None or used.table_id != table_id:
        return None
    now = datetime.now(UTC)
    if _aware(used.expires_at) < now:
        return None
    found = (
        await session.execute(
            select(Token, User)
            .join(User, User.id == Token.user_id)
            .where(Token.digest == used.token_digest, User.id == used.user_id)
        )
    ).first()
    if found is None:
        return None
    token, user = found
    if token.revoked or _aware(token.expires_at) < now:
        return None
    return user, _aware(token.expires_at), used.token_digest
