"""Friends' rules that every process keeps in memory (docs/social.md, "Friends"): the
blocks, which the table chat reads as each message goes out (:meth:`BlockList.blocked`,
the chat's ``Blocked`` hook), and presence, when each player was last seen.

The blocks are read from the database at start-up and kept current by every change
(made here, or on another process of a cluster and broadcast). Presence is written to
the database (``users.last_seen_at``) at most once every :data:`SEEN_WRITE_SECONDS` per
player and process, so that any process can say who is online: a player is online who
made an authenticated request in the last :data:`ONLINE_SECONDS` seconds (every open
page polls for invitations) or holds a socket open on this process. :class:`Social`
holds a process's share of it: the hub keeps one.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import async_sessionmaker

from sahrat.store import friends as friend_rows
from sahrat.store.tables import in_session, in_transaction

ONLINE_SECONDS = 90.0  # seen this recently: online
SEEN_WRITE_SECONDS = 60.0  # a player's last_seen_at is written at most this often
INVITATION_SECONDS = 600  # an invitation to a table lasts ten minutes
REQUESTS_PER_HOUR = 30  # friend requests an account may send in an hour (per process)


class BlockList:
    """Who blocked whom: ``blocked(viewer, sender)`` is the chat's hook."""

    def __init__(self) -> None:
        self._by_blocker: dict[int, set[int]] = {}

    def load(self, pairs: Iterable[tuple[int, int]]) -> None:
        self._by_blocker.clear()
        for blocker, blocked in pairs:
            self._by_blocker.setdefault(blocker, set()).add(blocked)

    def apply(self, blocker: int, blocked: int, on: bool) -> None:
        if on:
            self._by_blocker.setdefault(blocker, set()).add(blocked)
            return
        found = self._by_blocker.get(blocker)
        if found is not None:
            found.discard(blocked)
            if not found:
                del self._by_blocker[blocker]

    def blocked(self, viewer: int, sender: int) -> bool:
        """Whether ``viewer`` blocked ``sender`` (their messages are not sent to them)."""
        found = self._by_blocker.get(viewer)
        return found is not None and sender in found


class Presence:
    """When this process last wrote each player's ``last_seen_at``."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._written: dict[int, float] = {}

    def due(self, user_id: int) -> bool:
        """Whether a request of ``user_id`` should write their ``last_seen_at`` now (then
        it is counted as written)."""
        now = self._clock()
        last = self._written.get(user_id)
        if last is not None and now - last < SEEN_WRITE_SECONDS:
            return False
        if len(self._written) > 100_000:  # a long-running process forgets the old ones
            self._written = {u: t for u, t in self._written.items() if now - t < SEEN_WRITE_SECONDS}
        self._written[user_id] = now
        return True


def online(last_seen_age: float | None, sockets_here: int) -> bool:
    """Whether a player is online: seen ``last_seen_age`` seconds ago (None: never), or
    holding sockets on this process."""
    return sockets_here > 0 or (last_seen_age is not None and last_seen_age <= ONLINE_SECONDS)


class Watchable(Protocol):
    """A table, as the friends' watching rule reads it (``Table``)."""

    friends_watch: bool
    creator_id: int


class Social:
    """A process's share of the friends' rules: the blocks in memory, presence written
    to the database, and whether a friend of a table's creator may watch it. The hub
    holds one, and broadcasts the blocks made here to the other processes."""

    def __init__(
        self,
        sessions: async_sessionmaker[Any],
        background: Callable[[asyncio.Task[None]], None],
        sockets_of_user: dict[int, int],
    ) -> None:
        self.sessions = sessions
        self.background = background
        self.sockets_of_user = sockets_of_user  # OpenSockets.of_user: sockets held here
        self.blocks = BlockList()
        self.presence = Presence()

    async def load_blocks(self) -> None:
        """Read every block (at start-up, and when the cluster may have missed some)."""
        self.blocks.load(await in_session(self.sessions, friend_rows.all_blocks))

    def seen(self, user_id: int) -> None:
        """An authenticated request of ``user_id``: their ``last_seen_at`` is written (in
        the background, at most once a minute from this process)."""
        if not self.presence.due(user_id):
            return
        now = datetime.now(UTC)
        self.background(
            asyncio.create_task(
                in_transaction(self.sessions, lambda s: friend_rows.mark_seen(s, [user_id], now))
            )
        )

    async def socket_presence(self) -> None:
        """A socket held open is presence too (a terminal client makes no requests):
        every minute, the players holding a socket here are seen."""
        while True:
            await asyncio.sleep(SEEN_WRITE_SECONDS)
            for user_id, count in list(self.sockets_of_user.items()):
                if count > 0:
                    self.seen(user_id)

    async def friend_watches(self, table: Watchable, user_id: int | None) -> bool:
        """Whether ``user_id`` may watch this private table as a friend of its creator
        (the table's ``friends_watch``)."""
        if user_id is None or not table.friends_watch or user_id == table.creator_id:
            return False
        creator = table.creator_id
        return await in_session(
            self.sessions, lambda s: friend_rows.are_friends(s, user_id, creator)
        )
