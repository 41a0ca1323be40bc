"""Rated play's side of the hub (docs/rating.md): who may sit at a rated table (not a
player in a cool-down), the ratings a table's seats show, a leave stored once per
match, and a table the matchmaking queue formed (``matchmaking/former.py``) opened,
seated and dealt."""

from __future__ import annotations

import logging
import math
from datetime import UTC, datetime
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import async_sessionmaker

from sahrat.server.matchmaking.former import QueuedTable, SeatRefused
from sahrat.server.table.errors import TableError
from sahrat.server.table.rated import cooldown_rule
from sahrat.settings import Settings
from sahrat.store import ratings
from sahrat.store.tables import in_session, in_transaction

log = logging.getLogger("sahrat.hub")


class RatedPlay:
    """The rated-play questions a table asks its process, answered from the database."""

    def __init__(self, settings: Settings, sessions: async_sessionmaker[Any]) -> None:
        self.settings = settings
        self.sessions = sessions

    async def check(self, user_id: int) -> None:
        """Refuse a player in a cool-down from rated play (``rated_cooldown``)."""
        now = datetime.now(UTC)
        left = await in_session(self.sessions, lambda s: ratings.cooldown_left(s, user_id, now))
        if left > 0:
            minutes = math.ceil(left / 60)
            raise TableError(
                "rated_cooldown",
                f"you left a rated match: you may play rated again in {minutes} minute"
                + ("" if minutes == 1 else "s"),
            )

    async def shown(self, user_ids: list[int], pool: str) -> dict[int, tuple[int, bool]]:
        """Each player's shown rating in ``pool``."""
        return await in_session(self.sessions, lambda s: ratings.shown_ratings(s, user_ids, pool))

    async def record_leave(self, user_id: int, table_id: int, start_seq: int, reason: str) -> None:
        """A rated match left or forfeited: the leave and the cool-down, once per match."""
        rule, now = cooldown_rule(self.settings), datetime.now(UTC)
        await in_transaction(
            self.sessions,
            lambda s: ratings.record_leave(
                s,
                user_id,
                table_id=table_id,
                start_seq=start_seq,
                reason=reason,
                now=now,
                rule=rule,
            ),
        )


class Opener(Protocol):
    """What opening a queue's table uses of the hub."""

    async def check_rated(self, user_id: int) -> None: ...

    async def create_table(
        self,
        creator_id: int,
        game: str,
        options: dict[str, Any],
        private: bool,
        sit: bool = True,
        address: str | None = None,
        capped: bool = True,
        rated: bool = False,
        chat: bool = True,
        friends_watch: bool = False,
    ) -> dict[str, Any]: ...

    async def call(self, table_id: int, op: str, **args: Any) -> Any: ...

    async def close_table(self, table_id: int, viewer: int | None = None) -> dict[str, Any]: ...


async def seat_from_queue(hub: Opener, table: QueuedTable) -> int:
    """Open a rated table for a formation of the queue: its first player creates it and
    takes seat 0, the others join, and bots take the seats left (the match starts, and
    its hand is dealt, when the last seat fills). A player the table refuses closes it
    (nobody else sat down for long) and raises SeatRefused naming them."""
    creator, creator_network = table.seats[0]
    try:
        await hub.check_rated(creator)  # before the table exists: refused, it never does
        info = await hub.create_table(
            creator,
            table.game,
            dict(table.options),
            False,
            address=creator_network,
            capped=False,  # the queue opens it: it is not one of the creator's own
            rated=True,
        )
    except TableError as error:
        raise SeatRefused(creator, error.code, error.message) from error
    table_id = int(info["id"])
    for user_id, network in table.seats[1:]:
        try:
            await hub.call(table_id, "join", user_id=user_id, seat=None, address=network)
        except TableError as error:
            try:
                await hub.close_table(table_id)
            except TableError:
                log.warning("queue: table %s could not be closed", table_id)
            raise SeatRefused(user_id, error.code, error.message) from error
    if table.bots:
        await hub.call(table_id, "start", user_id=creator, level=None)
    return table_id
