"""One-time tickets for a table's WebSocket: issued, swept and redeemed.

A ticket opens one socket to one table for one user, once. Only its SHA-256 is
stored; redeeming it deletes it in one ``DELETE … RETURNING``, so two sockets racing
with one ticket cannot both win, on any process of a cluster (the tickets live in the
shared database). A ticket remembers the digest of the token it was issued for, so
that the socket can close when that token expires or is revoked.

Like the rest of the store, these functions work inside a caller's session.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from .models import SocketTicket, Token, User


def _digest(ticket: str) -> str:
    return hashlib.sha256(ticket.encode("utf-8")).hexdigest()


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)  # SQLite


async def sweep_expired(session: AsyncSession, now: datetime) -> None:
    """Delete the tickets that expired unused before ``now``."""
    await session.execute(delete(SocketTicket).where(SocketTicket.expires_at < now))


def add_ticket(
    session: AsyncSession,
    user_id: int,
    table_id: int,
    token_digest: str,
    expires_at: datetime,
) -> str:
    """A new ticket (added to ``session``, for the caller to commit): the text to give
    the client, of which only the digest is stored."""
    ticket = secrets.token_urlsafe(24)
    session.add(
        SocketTicket(
            digest=_digest(ticket),
            user_id=user_id,
            table_id=table_id,
            token_digest=token_digest,
            expires_at=expires_at,
        )
    )
    return ticket


async def redeem_ticket(
    session: AsyncSession, ticket: str, table_id: int
) -> tuple[User, datetime, str] | None:
    """Use up a ticket for ``table_id`` (committed at once): its user, when the token
    behind it expires and that token's digest — or None if the ticket is unknown, used,
    expired, for another table, or its token has expired or been revoked since."""
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
