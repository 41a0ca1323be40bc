"""The hub: the registry of this process's live tables, and the services they use.

It keeps the tables this process serves (loading one from its event log, creating
one, forgetting one that finished or closed), runs the operations on them (``OPS``,
the same map for a local call and one forwarded from another process), and gives
the tables what ``TableServices`` asks: where they are served, who may sit
(``policy.py``), and (``process.py``) the event-log writer, the names, the rows
besides the log. It runs no SQL itself: the queries are ``store/``'s.

Where a table lives is its :class:`Placement`'s answer (``cluster/placement.py``):
alone the process serves every table (``Solo``: it reloads each unfinished one at
start-up, replaying its log, and re-arms the stored turn deadlines); in a cluster
(``cluster/cluster.py``) it serves the tables whose lease it holds, loads a table
the same way when it takes the lease, and forwards operations on other tables to
their owners. Every operation on a table goes through :meth:`Hub.call`, which runs
it where the table lives.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable, Iterable, Sequence
from functools import partial
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from sahrat.rules.errors import BadOption
from sahrat.rules.record import GAMES, options_for
from sahrat.server import metrics
from sahrat.server.cluster.cluster import ClusterHost
from sahrat.server.cluster.placement import (
    MOVED,
    Placement,
    TableQuery,
    no_such_table,
    retrying,
)
from sahrat.server.policy import Policy, admits
from sahrat.server.process import ProcessServices
from sahrat.server.rated_seats import RatedPlay
from sahrat.server.social.friends import Social
from sahrat.server.table.errors import TableError
from sahrat.server.table.ops import TABLE_OPS
from sahrat.server.table.rows import from_rows
from sahrat.server.table.services import ServerDefaults
from sahrat.server.table.table import Table
from sahrat.settings import Settings
from sahrat.store import accounts
from sahrat.store import tables as rows
from sahrat.store.models import GameTable, Seat
from sahrat.store.tables import LIVE, LOAD_CHUNK, MAX_TABLE_ID, in_session, in_transaction

log = logging.getLogger("sahrat.hub")

RUNNING: set[Hub] = set()  # the hubs of this process, for a graceful shutdown


class Hub(ProcessServices):
    """The registry of the tables this process serves (and ``TableServices`` for them)."""

    def __init__(
        self,
        settings: Settings,
        engine: AsyncEngine,
        placement: Callable[[ClusterHost], Placement],
    ) -> None:
        super().__init__(settings, engine)
        self.tables: dict[int, Table] = {}
        self.policy = Policy(settings, self.sessions, self)
        self.rated = RatedPlay(settings, self.sessions)
        self.defaults: ServerDefaults = self.policy.defaults  # the policy's own objects,
        self.suspended: set[int] = self.policy.suspended  # which the tables read
        # blocks, presence, friends watching (docs/social.md, "Friends")
        self.social = Social(self.sessions, self.background, self.sockets.of_user)
        self.placement = placement(self)
        self._creating = asyncio.Lock()  # counting a creator's open tables, then adding one
        self._sweeper: asyncio.Task[None] | None = None
        self._presence: asyncio.Task[None] | None = None
        metrics.LIVE_TABLES.set_function(lambda: len(self.tables))

    async def start(self) -> None:
        RUNNING.add(self)
        self.writer.start()
        self._sweeper = asyncio.create_task(
            self.policy.expire_waiting_tables(), name="expire-waiting"
        )
        self._presence = asyncio.create_task(self.social.socket_presence(), name="presence")
        await self.policy.load()
        await self.social.load_blocks()
        await self.placement.start()  # alone: every unfinished table; else the orphans

    async def hand_over(self) -> None:
        """Stop serving tables: finish what is in progress, release every lease, and
        tell every client to reconnect (another process takes the tables at once)."""
        self.placement.stop_taking()
        for table_id in list(self.tables):
            table = self.tables.pop(table_id, None)
            if table is None:
                continue
            await table.hand_over(MOVED, "the server is shutting down; reconnect")
            await self.placement.release(table_id)

    async def stop(self) -> None:
        for task in (self._sweeper, self._presence):
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        await self.hand_over()
        await self.placement.stop()
        await self.writer.stop()
        RUNNING.discard(self)

    # --- loading -----------------------------------------------------------------------

    async def load_tables(self, table_ids: Iterable[int]) -> dict[int, Table]:
        """Rebuild the live ones of ``table_ids`` from the database, a few queries for
        each chunk of them (a restart reloads every table at once), each table's match
        replayed from its current start; they join this process's tables."""
        wanted = list(table_ids)
        loaded: dict[int, Table] = {}
        for first in range(0, len(wanted), LOAD_CHUNK):
            chunk = wanted[first : first + LOAD_CHUNK]
            found = await in_session(
                self.sessions, partial(rows.load_live, table_ids=chunk, known=self.names)
            )
            self.remember_names(found.names)
            for row in found.rows:
                table = self.table_from_row(row, found.seats[row.id])
                if table.rated:  # the ratings its seats show
                    owners = [owner for owner in table.seating.seats if owner is not None]
                    table.ratings.update(await self.seat_ratings(owners, table.pool))
                if row.status == "playing":
                    table.restore(found.entries[row.id])
                    table.expect_players()
                self.tables[row.id] = loaded[row.id] = table
        return loaded

    def table_from_row(self, row: GameTable, seats: Sequence[Seat]) -> Table:
        """A table as its database rows describe it (its match not yet replayed)."""
        table = from_rows(self, row, seats)
        table.chat.blocked = self.social.blocks.blocked  # a blocked player's messages stay away
        return table

    # --- names -------------------------------------------------------------------------

    def renamed(self, user_id: int, name: str) -> None:
        """A player's new name (already written): shown here and on every process."""
        self.apply_rename(user_id, name)
        self.placement.broadcast({"k": "rename", "u": user_id, "n": name})

    def apply_rename(self, user_id: int, name: str) -> None:
        """Show a player's new name at this process's tables: every name a table shows
        comes from ``names``, and the tables where the player sits or watches announce
        themselves again, so that every socket there (forwarded ones too) sees it."""
        self.names[user_id] = name
        for table in list(self.tables.values()):
            present = any(conn.user_id == user_id for conn in table.connections)
            if present or table.seat_of(user_id) is not None:
                table.broadcast_table()

    async def refresh_names(self) -> None:
        """Read every remembered name again (after the cluster may have missed a
        rename: its subscription was lost), and apply the ones that changed."""
        known = list(self.names)
        found = await in_session(self.sessions, lambda s: accounts.names_of(s, known))
        for user_id, name in found.items():
            if self.names.get(user_id) != name:
                self.apply_rename(user_id, name)
        await self.social.load_blocks()  # the blocks the lost subscription may have missed

    # --- friends (docs/social.md, "Friends") --------------------------------------------

    def blocked(self, blocker: int, blocked: int, on: bool) -> None:
        """A block made or lifted (already written): here and on every process."""
        self.apply_block(blocker, blocked, on)
        self.placement.broadcast({"k": "block", "a": blocker, "b": blocked, "v": on})

    def apply_block(self, blocker: int, blocked: int, on: bool) -> None:
        self.social.blocks.apply(blocker, blocked, on)

    async def may_watch(self, table: Table, user_id: int | None, invite: str | None) -> bool:
        """Whether a player may see this table: ``admits``, a tournament's table (anyone
        may watch those), or a friend of its creator where the creator lets friends
        watch."""
        if admits(table, user_id, invite) or table.tournament_id is not None:
            return True
        return await self.social.friend_watches(table, user_id)

    # --- tables ------------------------------------------------------------------------

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
        spectator_delay: bool = False,
        tournament_id: int | None = None,
    ) -> dict[str, Any]:
        """Open a table with validated options (raises BadOption naming a bad one) and
        return its info as the creator sees it. A ``capped`` creator (anyone but an
        admin) may have only so many open tables (against table spam). A ``rated``
        table (docs/rating.md) is a free table: its matches move ratings. ``chat``: the
        table's chat is on; ``friends_watch``: the creator's friends may watch it
        (docs/social.md); ``spectator_delay``: spectators see each round once it is
        over (a prize tournament's table, docs/tournaments.md); ``tournament_id``: the
        tournament whose round the table plays."""
        if game not in GAMES:
            raise BadOption("game", f"must be one of {list(GAMES)}, not {game!r}")
        values = dict(options)
        if "turn_seconds" not in values:
            values["turn_seconds"] = self.defaults.default_turn_seconds
        values.setdefault("bot_level", self.settings.bot_level)
        parsed = options_for(game, values)
        if rated and parsed.coin_table:
            raise BadOption("stake", "a rated table is a free table: its stake must be 0")
        if sit:
            await self.check_can_sit(creator_id, int(parsed.stake))
        invite_code = secrets.token_urlsafe(8) if private else None
        async with self._creating:
            if capped:
                await self.policy.check_may_open(creator_id)
            row = await in_transaction(
                self.sessions,
                lambda session: rows.add_table(
                    session,
                    game=game,
                    options=parsed.to_json(),
                    private=private,
                    invite_code=invite_code,
                    creator_id=creator_id,
                    rated=rated,
                    chat=chat,
                    friends_watch=friends_watch,
                    spectator_delay=spectator_delay,
                    tournament_id=tournament_id,
                ),
            )
        await self.learn_names([creator_id])
        # In a cluster another process's scan may take the new table first: then the
        # creator's seat is taken through it, like any forwarded operation.
        if await self.placement.acquire(row.id):
            self.tables[row.id] = self.table_from_row(row, ())
        if sit:
            return dict(
                await self.call(row.id, "join", user_id=creator_id, seat=None, address=address)
            )
        return dict(await self.call(row.id, "info", viewer=creator_id))

    async def locate(self, table_id: int) -> Table | str:
        """The live table if this process serves it, else the id of the process that
        does (taking a table that nobody serves). Raises TableError if not live."""
        if not 1 <= table_id <= MAX_TABLE_ID:
            raise no_such_table(table_id)  # never a database error for an id out of range
        return await self.placement.locate(table_id)

    async def call(self, table_id: int, op: str, **args: Any) -> Any:
        """Run a table operation (``run_op``) on the process that serves the table."""

        async def attempt() -> Any:
            where = await self.locate(table_id)
            if isinstance(where, Table):
                return await self.run_op(where, op, args)
            return await self.placement.call(where, op, table_id, args)

        return await retrying(3, attempt)

    async def run_op(self, table: Table, op: str, args: dict[str, Any]) -> Any:
        """A table operation (one of ``OPS``) on a table this process serves, called
        here or forwarded by another process; returns the table's info as ``viewer``
        (or the acting user) sees it. A player's operation on a private table they may
        not see is refused as if the table did not exist."""
        if op in PLAYER_OPS:
            user = args.get("viewer") if op == "info" else args.get("user_id")
            if not admits(table, user, args.get("invite")) and not (
                op == "info" and await self.may_watch(table, user, args.get("invite"))
            ):
                if table.tournament_id is not None:  # seen by all, but seated by its runner
                    raise TableError(
                        "tournament_table",
                        f"table {table.id} plays a round of tournament {table.tournament_id}: "
                        "only its entrants sit there, seated by the tournament",
                    )
                raise no_such_table(table.id)
        operation = OPS.get(op)
        if operation is None:
            raise TableError("bad_operation", f"unknown table operation {op!r}")
        return await operation(self, table, args)

    async def _close(self, table: Table, args: dict[str, Any]) -> dict[str, Any]:
        await self.close_here(table)
        return table.info(args.get("viewer"))

    async def by_invite(self, code: str) -> int:
        """The id of the live table with this invite code."""
        found = await self.placement.by_invite(code)
        if found is None:
            raise TableError("bad_invite", "no table has that invite code")
        return found

    async def list_tables(
        self,
        viewer: int | None,
        *,
        private: bool,
        game: str | None = None,
        status: str | None = None,
        after: int = 0,
        limit: int | None = None,
        lobby: bool = False,
    ) -> list[dict[str, Any]]:
        """The live tables (public ones only unless ``private``; of one ``game``, in one
        ``status`` if given; for the ``lobby`` only those others can join or watch a
        person play: ``Table.in_lobby``), oldest first: at most ``limit`` of them, from
        the first with an id above ``after``. In a cluster they come from the database,
        where presence is not kept."""
        statuses = (status,) if status is not None else LIVE
        query = TableQuery(viewer, private, statuses, game, after, limit, lobby)
        return await self.placement.list_tables(query)

    def token_revoked(self, digest: str) -> None:
        """Close the WebSockets opened with a token just revoked (on every process)."""
        self.sockets.close_token(digest)
        self.placement.broadcast({"k": "revoked", "d": digest})

    # --- where a table is served, who may sit (TableServices) -------------------------

    async def check_can_sit(self, user_id: int, stake: int) -> None:
        await self.policy.check_can_sit(user_id, stake)

    async def coin_balances(self, user_ids: list[int]) -> dict[int, int]:
        return await self.policy.coin_balances(user_ids)

    async def check_rated(self, user_id: int) -> None:
        await self.rated.check(user_id)

    async def seat_ratings(self, user_ids: list[int], pool: str) -> dict[int, tuple[int, bool]]:
        return await self.rated.shown(user_ids, pool)

    async def record_rated_leave(
        self, user_id: int, table_id: int, start_seq: int, reason: str
    ) -> None:
        await self.rated.record_leave(user_id, table_id, start_seq, reason)

    def may_write(self, table_id: int) -> bool:
        """Whether this process still holds the table's lease (always, alone)."""
        return self.placement.holds(table_id)

    def drop(self, table_id: int, reason: str) -> None:
        """Stop serving a table whose lease is gone (or that another process wrote):
        its clients reconnect, and whoever holds the lease next reloads it."""
        table = self.tables.pop(table_id, None)
        if table is not None:
            table.close(MOVED, reason)
        self.placement.release_soon(table_id)

    def forget_later(self, table_id: int) -> None:
        """Drop a finished table from memory once nobody watches it (its match stays in
        the database): a long-running process must not keep every match it ever played."""
        loop = asyncio.get_running_loop()
        loop.call_later(self.settings.finished_table_seconds, self._forget, table_id)

    def forget_closed(self, table_id: int) -> None:
        """A table that closed itself (a match of bots its last person left) leaves
        memory at once, and its lease with it."""
        self.tables.pop(table_id, None)
        self.placement.release_soon(table_id)

    def _forget(self, table_id: int) -> None:
        table = self.tables.get(table_id)
        if table is None or table.status != "finished":
            return
        if table.connections:
            self.forget_later(table_id)
            return
        del self.tables[table_id]
        table.close()
        self.placement.release_soon(table_id)

    # --- admins ------------------------------------------------------------------------

    async def set_defaults(self, values: dict[str, int]) -> ServerDefaults:
        await self.policy.store_defaults(values)
        self.apply_defaults(values)
        self.placement.broadcast({"k": "defaults", "v": values})
        return self.defaults

    def apply_defaults(self, values: dict[str, int]) -> None:
        self.policy.apply_defaults(values)

    async def set_suspended(self, user_id: int, suspended: bool) -> None:
        """Suspend (or restore) a player, here and on every process (``Policy``)."""
        await self.policy.store_suspended(user_id, suspended)
        self.placement.broadcast({"k": "suspend", "u": user_id, "v": suspended})
        await self.apply_suspended(user_id, suspended)

    async def apply_suspended(self, user_id: int, suspended: bool) -> None:
        await self.policy.apply_suspended(user_id, suspended)

    async def close_table(self, table_id: int, viewer: int | None = None) -> dict[str, Any]:
        """Close a table that is not playing (its seats are emptied)."""
        return dict(await self.call(table_id, "close", viewer=viewer))

    async def update_options(
        self, table_id: int, options: dict[str, Any], viewer: int | None = None
    ) -> dict[str, Any]:
        """New options for a waiting table (raises BadOption naming a bad one)."""
        return dict(await self.call(table_id, "options", options=options, viewer=viewer))

    async def close_here(self, table: Table, unless: Callable[[], bool] | None = None) -> None:
        """Close a table (not while it plays, nor when ``unless`` says no once its
        lock is held); a waiting table's seats are freed."""
        if not await table.close_down(unless):
            return
        self.tables.pop(table.id, None)
        await self.placement.release(table.id)


def _on_the_table(
    operation: Callable[[Table, dict[str, Any]], Awaitable[Any]],
) -> Callable[[Hub, Table, dict[str, Any]], Awaitable[Any]]:
    return lambda hub, table, args: operation(table, args)


# The table operations, by name: what ``Hub.call`` runs here and what another process's
# call runs through ``run_op`` (``cluster/bus.py``): the table's own (``table/ops.py``),
# and closing, which the hub does.
OPS: dict[str, Callable[[Hub, Table, dict[str, Any]], Awaitable[Any]]] = {
    **{name: _on_the_table(operation) for name, operation in TABLE_OPS.items()},
    "close": Hub._close,
}
PLAYER_OPS = ("info", "mine", "join", "leave", "start")  # the operations that check admits()
