"""Accounts and bearer tokens: passwords, names, tokens (the HTTP edge reads a request's
token with these, in ``api/deps.py``).

Passwords are hashed with Argon2id (argon2-cffi), which costs about a third
of a second of CPU and 64 MiB each time: the REST endpoints hash only in a
:class:`HashPool` of a few threads, which refuses (503) rather than queue
without end. A token is 32 random bytes shown once to the client; the
database keeps only its SHA-256, with an expiry, and can revoke it.

Account names are compared in one form (:func:`sahrat.names.name_key`): the
Unicode confusables skeleton of their NFKC form, whatever the case. A new name must be
visible letters, digits, '_' and '-' only (:func:`check_name`), and each of its words
in one alphabet (:func:`sahrat.names.script_problem`), so that no two names look alike.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import secrets
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import TypeVar

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from sahrat.names import clean_name
from sahrat.store.models import Token, User

_hasher = PasswordHasher()

T = TypeVar("T")


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(password_hash: str, password: str) -> bool:
    try:
        return _hasher.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


class PoolFull(Exception):
    """Every hashing thread is busy and the queue is full: try again shortly."""


def _lower_priority() -> None:
    """A hashing thread (and the threads Argon2 starts from it, which inherit it) yields
    the CPU to the event loop: a flood of logins waits, the lobby does not."""
    with contextlib.suppress(AttributeError, OSError):  # Linux: a thread has its own nice
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)


class HashPool:
    """A few threads for password hashing, and a bounded queue in front of them."""

    def __init__(self, threads: int, queue: int) -> None:
        self._executor = ThreadPoolExecutor(
            threads, thread_name_prefix="hash", initializer=_lower_priority
        )
        self.capacity = threads + queue
        self.busy = 0  # running and waiting jobs (changed on the event loop only)

    async def run(self, work: Callable[..., T], *args: object) -> T:
        if self.busy >= self.capacity:
            raise PoolFull
        self.busy += 1
        try:
            return await asyncio.get_running_loop().run_in_executor(self._executor, work, *args)
        finally:
            self.busy -= 1

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)


def check_name(raw: str) -> str:
    """The display name as it is kept (``sahrat.names.clean_name``: NFKC, trimmed,
    spaces collapsed), or ``NameRefused`` (a ValueError) saying what is wrong with it."""
    return clean_name(raw)


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
    found = (
        await session.execute(
            select(Token, User)
            .join(User, User.id == Token.user_id)
            .where(Token.digest == _digest(token))
        )
    ).first()  # one query: every authenticated request makes it
    if found is None:
        return None
    row, user = found
    if row.revoked:
        return None
    expires = row.expires_at
    if expires.tzinfo is None:  # SQLite returns naive datetimes
        expires = expires.replace(tzinfo=UTC)
    if expires < datetime.now(UTC):
        return None
    return user, expires


def token_digest(token: str) -> str:
    """What the server keeps of a token (and uses to find its open WebSockets)."""
    return _digest(token)
