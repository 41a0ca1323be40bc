"""One-time tickets for a table's WebSocket, so that no bearer token travels in a URL.

A browser cannot set headers on a WebSocket, and whatever is in the URL ends up in
access logs (nginx's, a load balancer's, the browser's history). So a client asks
``POST /api/tables/{id}/ticket`` with its bearer token and opens
``/ws/tables/{id}?ticket=…`` within ``SAHRAT_TICKET_SECONDS``. A ticket opens one
socket to that table for that user, once: using it deletes it, in one ``DELETE …
RETURNING``, so two sockets racing with one ticket cannot both win, on any process of
a cluster (the tickets live in the shared database; ``store/tickets.py``). The ticket
remembers the digest of the token it was issued for, so the socket still closes when
that token expires or is revoked.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from fastapi import APIRouter, Request

from sahrat.server.api.deps import BearerToken, TableId, authenticate, get_hub
from sahrat.server.api.models import ErrorResponse, TicketOut, ValidationErrorResponse
from sahrat.server.auth import token_digest
from sahrat.store.tickets import add_ticket, sweep_expired

router = APIRouter(tags=["tables"])


# Expired tickets are swept by an issue at most this often (per process), not by every
# issue: a crowd reconnecting at once (after a restart) pays for one sweep, not one each.
SWEEP_SECONDS = 30.0


def _sweep_due(request: Request) -> bool:
    """Whether this issue sweeps the expired tickets (then the next is due later)."""
    now = time.monotonic()
    if now < getattr(request.app.state, "next_ticket_sweep", 0.0):
        return False
    request.app.state.next_ticket_sweep = now + SWEEP_SECONDS
    return True


@router.post(
    "/api/tables/{table_id}/ticket",
    response_model=TicketOut,
    responses={401: {"model": ErrorResponse}, 422: {"model": ValidationErrorResponse}},
)
async def issue_ticket(table_id: TableId, token: BearerToken, request: Request) -> TicketOut:
    """A ticket to open this table's WebSocket once, within a few seconds. Whether the
    user may see the table is decided when the socket opens, as for any socket; an id
    no table can have (out of 1 to 2³¹−1, as every route's) is a 422. The
    token is checked in the ticket's own transaction: a crowd reconnecting after a
    restart costs one session each."""
    hub = get_hub(request)
    seconds = hub.settings.ticket_seconds
    now = datetime.now(UTC)
    async with hub.sessions() as session:
        user = await authenticate(request, session, token)
        # Unused tickets are swept by an issue now and then: the table holds few dead ones.
        if _sweep_due(request):
            await sweep_expired(session, now)
        ticket = add_ticket(
            session, user.id, table_id, token_digest(token), now + timedelta(seconds=seconds)
        )
        await session.commit()
    return TicketOut(ticket=ticket, expires_in=seconds)
