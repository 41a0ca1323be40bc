"""This process's open WebSockets, counted: how many each account holds, how many
spectators a table has, and which sockets each token opened (to close them when the
token is revoked).

A connection costs every other one at its table a message, so the counts bound what
one account can cost: an account holds only so many sockets on a process
(``max_sockets_per_account``), a table takes only so many spectators
(``max_spectators_per_table``; its players always get in).

Where it sits: the socket endpoint (``socket/ws.py``) counts and tracks its sockets
here, and the cluster (``cluster/forwarding.py``) asks it about spectators forwarded from
other processes and closes the sockets of a token revoked elsewhere. The cluster
is below the socket endpoint in the import order, so this module is a base module
below both, held by the hub; it knows a table and a connection only by the few
attributes it reads (the protocols below), never by importing ``table/``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from sahrat.settings import Settings

Refusal = tuple[int, str]  # a WebSocket close code and its reason


class Closable(Protocol):
    """A socket that can be closed with a code and a reason (``Connection``)."""

    def close(self, code: int = 1000, reason: str = "") -> None: ...


class Watcher(Protocol):
    """A socket at a table, as the spectator count sees it: its seat (None: watching)."""

    @property
    def seat(self) -> int | None: ...
    @property
    def closed(self) -> bool: ...


class Watched(Protocol):
    """A table, as the spectator count sees it (``Table``)."""

    @property
    def connections(self) -> Iterable[Watcher]: ...
    def seat_of(self, user_id: int) -> int | None: ...


class OpenSockets:
    """The WebSockets open on this process: by user (counted) and by token digest."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.of_user: dict[int, int] = {}  # how many WebSockets each user holds open here
        self.by_token: dict[str, set[Closable]] = {}  # open WebSockets by token digest

    def refusal(self, user_id: int, table: Watched | None) -> Refusal | None:
        """The close code and reason refusing one more socket to this user (None: it may
        open) at ``table``, or at a table another process serves (None: its owner counts
        the spectators)."""
        limit = self.settings.max_sockets_per_account
        if self.of_user.get(user_id, 0) >= limit:
            return 4409, f"you have {limit} sockets open already; close one first"
        if table is not None:
            return self.spectator_refusal(table, user_id)
        return None

    def spectator_refusal(self, table: Watched, user_id: int) -> Refusal | None:
        """The close code refusing one more spectator to a table that has its fill."""
        if table.seat_of(user_id) is not None:
            return None
        limit = self.settings.max_spectators_per_table
        watching = sum(1 for conn in table.connections if conn.seat is None and not conn.closed)
        if watching >= limit:
            return 4410, f"this table has {limit} spectators already; try again later"
        return None

    def opened(self, user_id: int) -> None:
        self.of_user[user_id] = self.of_user.get(user_id, 0) + 1

    def closed(self, user_id: int) -> None:
        left = self.of_user.get(user_id, 0) - 1
        if left > 0:
            self.of_user[user_id] = left
        else:
            self.of_user.pop(user_id, None)

    def track(self, digest: str, conn: Closable) -> None:
        """Remember a socket opened with the token of this digest."""
        self.by_token.setdefault(digest, set()).add(conn)

    def untrack(self, digest: str, conn: Closable) -> None:
        found = self.by_token.get(digest)
        if found is not None:
            found.discard(conn)
            if not found:
                del self.by_token[digest]

    def close_token(self, digest: str) -> None:
        """Close the sockets this process opened with a token just revoked."""
        for conn in list(self.by_token.get(digest, ())):
            conn.close(4401, "the token was revoked")
