"""Accounts and bearer tokens.

Passwords are hashed with Argon2id (argon2-cffi). A token is 32 random bytes
shown once to the client; the database keeps only its SHA-256, with an
expiry, and can revoke it.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime, timedelta
from typing import Annotated

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from fastapi import Depends, HTTPException, Request, status
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from sahrat.store.models import Token, User

_hasher = PasswordHasher()


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(password_hash: str, password: str) -> bool:
    try:
        return _hasher.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


async def issue_token(session: AsyncSession, user_id: int, hours: float) -> str:
    token = secrets.token_urlsafe(32)
    expires = datetime.now(UTC) + timedelta(hours=hours)
    session.add(Token(digest=_digest(token), user_id=user_id, expires_at=expires, revoked=False))
    return token


async def revoke_token(session: AsyncSession, token: str) -> None:
    row = await session.get(Token, _digest(token))
    if row is not None:
        row.revoked = True


async def user_for_token(session: AsyncSession, token: str) -> User | None:
    """The user a token belongs to, or None if it is unknown, expired or revoked."""
    found = await token_session(session, token)
    return found[0] if found is not None else None


async def token_session(session: AsyncSession, token: str) -> tuple[User, datetime] | None:
    """The user of a valid token and when the token expires (None if it is unknown,
    expired or revoked)."""
    row = await session.get(Token, _digest(token))
    if row is None or row.revoked:
        return None
    expires = row.expires_at
    if expires.tzinfo is None:  # SQLite returns naive datetimes
        expires = expires.replace(tzinfo=UTC)
    if expires < datetime.now(UTC):
        return None
    user = await session.scalar(select(User).where(User.id == row.user_id))
    return (user, expires) if user is not None else None


def token_digest(token: str) -> str:
    """What the server keeps of a token (and uses to find its open WebSockets)."""
    return _digest(token)


def bearer_token(request: Request) -> str:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token:
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            detail={"code": "no_token", "message": "send Authorization: Bearer <token>"},
            headers={"WWW-Authenticate": "Bearer"},
        )
    return token.strip()


async def current_user(request: Request, token: Annotated[str, Depends(bearer_token)]) -> User:
    hub = request.app.state.hub
    async with hub.sessions() as session:
        user = await user_for_token(session, token)
    if user is None:
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            detail={"code": "bad_token", "message": "the token is unknown, expired or revoked"},
            headers={"WWW-Authenticate": "Bearer"},
        )
    hub.remember_name(user.id, user.name)
    return user


CurrentUser = Annotated[User, Depends(current_user)]
