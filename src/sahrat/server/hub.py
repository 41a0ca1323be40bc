"""The hub: every live table of this process, the event-log writer, and the database.

Alone (no ``SAHRAT_REDIS_URL``), the process serves every table: at start-up
it reloads each unfinished one from its event log (the engine is
deterministic, so replaying the log rebuilds each match exactly) and re-arms
the stored turn deadlines. In a cluster (``cluster.py``) it serves the tables
whose lease it holds, loads a table the same way when it takes the lease, and
forwards operations on other tables to their owners: every operation on a
table goes through :meth:`Hub.call`, which runs it where the table lives.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Callable, Sequence
from datetime import UTC
from typing import Any

from redis.exceptions import RedisError
from sqlalchemy import delete, func, or_, select
from sqlalchemy.ext.asyncio import AsyncEngine

from sahrat.rules.errors import BadOption
from sahrat.rules.record import GAMES, options_for
from sahrat.server import metrics
from sahrat.server.auth import HashPool
from sahrat.server.cluster.cluster import MOVED, Cluster, retrying
from sahrat.server.limits import AccountLimits, Limits
from sahrat.server.table.connection import Connection
from sahrat.server.table.errors import TableError
from sahrat.server.table.services import ServerDefaults
from sahrat.server.table.table import Table
from sahrat.settings import Settings
from sahrat.store import ledger
from sahrat.store.db import make_sessions
from sahrat.store.log import LogWriter, current_match_entries
from sahrat.store.models import (
    GameTable,
    Match,
    MatchPlayer,
    Seat,
    ServerSetting,
    User,
)

log = logging.getLogger("sahrat.hub")

MAX_TABLE_ID = 2**31 - 1  # ids are 32-bit integers in the database
LIVE = ("waiting", "playing")
LOAD_CHUNK = 200  # tables reloaded per session at a start (their seats' owners in one IN)

RUNNING: set[Hub] = set()  # the hubs of this process, for a graceful shutdown


class Hub:
    def __init__(self, settings: Settings, engine: AsyncEngine) -> None:
        self.settings = settings
        self.db = engine
        self.sessions = make_sessions(engine)
        self.writer = LogWriter(self.sessions, metrics.LOG_WRITE_SECONDS.observe)
        self.tables: dict[int, Table] = {}
        self.names: dict[int, str] = {}
        self.defaults = ServerDefaults(
            welcome_grant=settings.welcome_grant,
            free_table_earnings=settings.free_table_earnings,
            default_turn_seconds=settings.default_turn_seconds,
            free_table_earnings_per_day=settings.free_table_earnings_per_day,
        )
        self.suspended: set[int] = set()  # users who may not sit down
        self._background: set[asyncio.Task[None]] = set()
        self.cluster: Cluster | None = None
        if settings.redis_url:
            secret = settings.cluster_secret  # required with redis_url (settings.py)
            assert secret is not None
            self.cluster = Cluster(
                self,
                settings.redis_url,
                settings.cluster_prefix,
                settings.lease_seconds,
                secret.get_secret_value().encode(),
            )
        self._loading: dict[int, asyncio.Future[Table | None]] = {}
        self.limits = Limits(
            settings.message_rate,
            settings.message_burst,
            settings.account_rate,
            settings.account_burst,
            settings.abuse_limit,
        )
        self.sockets: dict[str, set[Connection]] = {}  # open WebSockets by token digest
        self.account_limits = AccountLimits(settings)
        self.passwords = HashPool(settings.hash_threads, settings.hash_queue)
        self.sockets_of: dict[int, int] = {}  # how many WebSockets each user holds open here
        self._creating = asyncio.Lock()  # counting a creator's open tables, then adding one
        self._sweeper: asyncio.Task[None] | None = None
        self.next_ticket_sweep = 0.0  # when an issued ticket next sweeps expired ones
        metrics.LIVE_TABLES.set_function(lambda: len(self.tables))

    async def start(self) -> None:
        RUNNING.add(self)
        self.writer.start()
        self._sweeper = asyncio.create_task(self._expire_waiting_tables(), name="expire-waiting")
        async with self.sessions() as session:
            for setting in (await session.scalars(select(ServerSetting))).all():
                if hasattr(self.defaults, setting.key):
                    setattr(self.defaults, setting.key, setting.value)
            self.suspended = set(
                (await session.scalars(select(User.id).where(User.suspended.is_(True)))).all()
            )
        if self.cluster is None:
            await self._load_tables(await self.live_table_ids())
            log.info("loaded %d unfinished tables", len(self.tables))
        else:
            await self.cluster.start()  # its scan takes the tables nobody serves

    async def hand_over(self) -> None:
        """Stop serving tables: finish what is in progress, release every lease, and
        tell every client to reconnect (another process takes the tables at once)."""
        if self.cluster is not None:
            self.cluster.taking = False
        for table_id in list(self.tables):
            table = self.tables.pop(table_id, None)
            if table is None:
                continue
            await table.hand_over(MOVED, "the server is shutting down; reconnect")
            if self.cluster is not None:
                await self.cluster.release(table_id)

    async def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            await asyncio.gather(self._sweeper, return_exceptions=True)
        await self.hand_over()
        if self.cluster is not None:
            await self.cluster.stop()
        await self.writer.stop()
        RUNNING.discard(self)

    async def live_table_ids(self) -> list[int]:
        async with self.sessions() as session:
            return list(
                (
                    await session.scalars(
                        select(GameTable.id).where(GameTable.status.in_(("waiting", "playing")))
                    )
                ).all()
            )

    async def take_over(self, table_id: int) -> Table | None:
        """Take the lease of a table nobody serves and load it from its log."""
        if self.cluster is None or table_id in self.tables:
            return self.tables.get(table_id)
        pending = self._loading.get(table_id)
        if pending is not None:
            return await pending
        future: asyncio.Future[Table | None] = asyncio.get_running_loop().create_future()
        self._loading[table_id] = future
        try:
            table = None
            if await self.cluster.acquire(table_id):
                table = await self._load(table_id)
                if table is None:
                    await self.cluster.release(table_id)
                else:
                    log.info("took table %s over", table_id, extra={"table_id": table_id})
            future.set_result(table)
            return table
        except BaseException as error:
            future.set_exception(error)
            future.exception()  # retrieved: nobody else may be waiting
            if self.cluster.held.get(table_id) is not None:
                await self.cluster.release(table_id)
            raise
        finally:
            self._loading.pop(table_id, None)

    async def _load(self, table_id: int) -> Table | None:
        """Rebuild a live table from the database (None if it is not live)."""
        return (await self._load_tables([table_id])).get(table_id)

    async def _load_tables(self, table_ids: Sequence[int]) -> dict[int, Table]:
        """Rebuild the live ones of ``table_ids`` from the database, a few queries for
        all of them (a restart reloads every table at once), each table's match
        replayed from its current start."""
        loaded: dict[int, Table] = {}
        for first in range(0, len(table_ids), LOAD_CHUNK):
            chunk = list(table_ids[first : first + LOAD_CHUNK])
            async with self.sessions() as session:
                rows = (
                    await session.scalars(
                        select(GameTable).where(GameTable.id.in_(chunk), GameTable.status.in_(LIVE))
                    )
                ).all()
                seats: dict[int, list[Seat]] = {row.id: [] for row in rows}
                for seat in (
                    await session.scalars(select(Seat).where(Seat.table_id.in_(list(seats))))
                ).all():
                    seats[seat.table_id].append(seat)
                owners = [s.user_id for found in seats.values() for s in found]
                await self._remember_names([uid for uid in owners if uid is not None], session)
                playing = [row.id for row in rows if row.status == "playing"]
                entries = await current_match_entries(session, playing)
                for row in rows:
                    table = self._table_from_row(row, seats[row.id])
                    if row.status == "playing":
                        table.restore(entries[row.id])
                        table.expect_players()
                    self.tables[row.id] = loaded[row.id] = table
        return loaded

    async def _remember_names(self, user_ids: list[int], session: Any) -> None:
        missing = [uid for uid in user_ids if uid not in self.names]
        if missing:
            for user in (await session.scalars(select(User).where(User.id.in_(missing)))).all():
                # a rename applied while this read was on its way is the newer name
                self.names.setdefault(user.id, user.name)

    def _table_from_row(self, row: GameTable, seats: Sequence[Seat]) -> Table:
        """A table as its database rows describe it (its match not yet replayed)."""
        players = int(options_for(row.game, row.options).players)
        owners: list[int | None] = [None] * players
        bots: list[str | None] = [None] * players
        left: set[int] = set()
        for seat in seats:
            owners[seat.seat] = seat.user_id
            bots[seat.seat] = seat.bot_level
            if seat.left:
                left.add(seat.seat)
        return Table(
            self,
            table_id=row.id,
            game=row.game,
            options=row.options,
            private=row.private,
            invite_code=row.invite_code,
            creator_id=row.creator_id,
            status=row.status,
            seq=row.seq,
            seats=owners,
            # SQLite gives naive UTC datetimes (asyncpg aware UTC ones), not local time
            deadline=row.deadline_at.replace(tzinfo=UTC).timestamp() if row.deadline_at else None,
            bots=bots,
            left=left,
            addresses={seat.seat: seat.address for seat in seats if seat.address is not None},
        )

    def remember_name(self, user_id: int, name: str) -> None:
        """Remember the name of a user not known yet. A known name changes only by a
        rename (:meth:`apply_rename`): a name read before a rename and remembered after
        it must not bring the old name back."""
        self.names.setdefault(user_id, name)

    def renamed(self, user_id: int, name: str) -> None:
        """A player's new name (already written): shown here and on every process."""
        self.apply_rename(user_id, name)
        if self.cluster is not None:
            self.cluster.broadcast({"k": "rename", "u": user_id, "n": name})

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
        found: dict[int, str] = {}
        async with self.sessions() as session:
            for first in range(0, len(known), LOAD_CHUNK):
                chunk = known[first : first + LOAD_CHUNK]
                rows = await session.execute(select(User.id, User.name).where(User.id.in_(chunk)))
                found.update(rows.tuples().all())
        for user_id, name in found.items():
            if self.names.get(user_id) != name:
                self.apply_rename(user_id, name)

    # --- tables ---------------------------------------------------------------------

    async def create_table(
        self,
        creator_id: int,
        game: str,
        options: dict[str, Any],
        private: bool,
        sit: bool = True,
        address: str | None = None,
        capped: bool = True,
    ) -> dict[str, Any]:
        """Open a table with validated options (raises BadOption naming a bad one) and
        return its info as the creator sees it. A ``capped`` creator (anyone but an
        admin) may have only so many open tables (against table spam)."""
        if game not in GAMES:
            raise BadOption("game", f"must be one of {list(GAMES)}, not {game!r}")
        values = dict(options)
        if "turn_seconds" not in values:
            values["turn_seconds"] = self.defaults.default_turn_seconds
        values.setdefault("bot_level", self.settings.bot_level)
        parsed = options_for(game, values)
        stored = parsed.to_json()
        if sit:
            await self.check_can_sit(creator_id, int(parsed.stake))
        invite_code = secrets.token_urlsafe(8) if private else None
        async with self._creating, self.sessions() as session, session.begin():
            if capped:
                await self._check_open_tables(session, creator_id)
            row = GameTable(
                game=game,
                options=stored,
                private=private,
                invite_code=invite_code,
                creator_id=creator_id,
                status="waiting",
                seq=0,
            )
            session.add(row)
            await session.flush()  # the row gets its id and its defaults
            table_id = row.id
            await self._remember_names([creator_id], session)
        # In a cluster another process's scan may take the new table first: then the
        # creator's seat is taken through it, like any forwarded operation.
        if self.cluster is None or await self.cluster.acquire(table_id):
            self.tables[table_id] = self._table_from_row(row, ())
        if sit:
            return dict(
                await self.call(table_id, "join", user_id=creator_id, seat=None, address=address)
            )
        return dict(await self.call(table_id, "info", viewer=creator_id))

    async def _check_open_tables(self, session: Any, creator_id: int) -> None:
        limit = self.settings.max_open_tables_per_account
        open_tables = await session.scalar(
            select(func.count())
            .select_from(GameTable)
            .where(GameTable.creator_id == creator_id, GameTable.status.in_(LIVE))
        )
        if open_tables >= limit:
            raise TableError(
                "too_many_tables",
                f"you already have {open_tables} open tables (at most {limit}); open another "
                "when one is over (a waiting table nobody watches closes after a while)",
            )

    async def locate(self, table_id: int) -> Table | str:
        """The live table if this process serves it, else the id of the process that
        does (taking a table that nobody serves). Raises TableError 404 if not live."""
        if not 1 <= table_id <= MAX_TABLE_ID:
            raise _no_table(table_id)  # never a database error for an id out of range
        table = self.tables.get(table_id)
        if self.cluster is None:
            if table is None:
                raise _no_table(table_id)
            return table
        if table is not None and self.cluster.holds(table_id):
            return table
        try:
            for _ in range(3):
                owner = await self.cluster.owner(table_id)
                if owner is not None and owner != self.cluster.node:
                    return owner
                taken = await self.take_over(table_id)
                if taken is not None:
                    return taken
                if owner is None and await self.cluster.owner(table_id) is None:
                    raise _no_table(table_id)  # not live: finished, closed or unknown
                await asyncio.sleep(0.05)
        except RedisError as error:
            log.warning("cannot reach Redis to find table %s: %s", table_id, error)
        raise TableError("unavailable", "the table is moving between servers; try again")

    async def call(self, table_id: int, op: str, **args: Any) -> Any:
        """Run a table operation (``run_op``) on the process that serves the table."""

        async def attempt() -> Any:
            where = await self.locate(table_id)
            if isinstance(where, Table):
                return await self.run_op(where, op, args)
            assert self.cluster is not None
            return await self.cluster.call(where, op, table_id, args)

        return await retrying(3, attempt)

    async def run_op(self, table: Table, op: str, args: dict[str, Any]) -> Any:
        """A table operation on a table this process serves; returns the table's info
        as ``viewer`` (or the acting user) sees it. A player's operation on a private
        table they may not see is refused as if the table did not exist."""
        if op in PLAYER_OPS:
            user = args.get("viewer") if op == "info" else args.get("user_id")
            if not admits(table, user, args.get("invite")):
                raise _no_table(table.id)
        if op == "info":
            return table.info(args.get("viewer"))
        if op == "join":
            await table.join(int(args["user_id"]), args.get("seat"), args.get("address"))
            return table.info(args["user_id"])
        if op == "leave":
            await table.leave(int(args["user_id"]))
            return table.info(args["user_id"])
        if op == "start":
            await table.start_with_bots(int(args["user_id"]), args.get("level"))
            return table.info(args["user_id"])
        if op == "options":
            await self._update_options(table, args["options"])
            return table.info(args.get("viewer"))
        if op == "close":
            await self._close_table(table)
            return table.info(args.get("viewer"))
        raise TableError("bad_operation", f"unknown table operation {op!r}")

    async def by_invite(self, code: str) -> int:
        """The id of the live table with this invite code."""
        if self.cluster is None:
            for table in self.tables.values():
                if _invited(table.invite_code, code):
                    return table.id
        else:
            async with self.sessions() as session:
                found = await session.scalar(
                    select(GameTable.id).where(
                        GameTable.invite_code == code,
                        GameTable.status.in_(("waiting", "playing")),
                    )
                )
            if found is not None:
                return int(found)
        raise TableError("bad_invite", "no table has that invite code")

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
        wanted = (status,) if status is not None else LIVE
        if self.cluster is None:
            found = sorted(
                (
                    t
                    for t in self.tables.values()
                    if t.id > after
                    and t.status in wanted
                    and (private or not t.private)
                    and (game is None or t.game == game)
                    and (not lobby or t.in_lobby)
                ),
                key=lambda t: t.id,
            )
            return [t.info(viewer) for t in found[:limit]]
        async with self.sessions() as session:
            query = select(GameTable).where(GameTable.status.in_(wanted), GameTable.id > after)
            if not private:
                query = query.where(GameTable.private.is_(False))
            if game is not None:
                query = query.where(GameTable.game == game)
            if lobby:  # as Table.in_lobby, in the query: a page stays a full page
                person = (
                    select(Seat.id)
                    .where(
                        Seat.table_id == GameTable.id,
                        Seat.user_id.is_not(None),
                        Seat.left.is_(False),
                    )
                    .exists()
                )
                query = query.where(or_(GameTable.status == "waiting", person))
            rows = (await session.scalars(query.order_by(GameTable.id).limit(limit))).all()
            seats = (
                await session.scalars(select(Seat).where(Seat.table_id.in_([r.id for r in rows])))
            ).all()
            await self._remember_names([s.user_id for s in seats if s.user_id is not None], session)
        by_table: dict[int, list[Seat]] = {}
        for seat in seats:
            by_table.setdefault(seat.table_id, []).append(seat)
        return [self._row_info(row, by_table.get(row.id, []), viewer) for row in rows]

    def _row_info(self, row: GameTable, seats: list[Seat], viewer: int | None) -> dict[str, Any]:
        """A table's info: from this process if it serves it, else from its rows."""
        table = self.tables.get(row.id) or self._table_from_row(row, seats)
        return table.info(viewer)

    # --- who may see a table, and how many sockets --------------------------------------

    async def admits_stored(self, table_id: int, user_id: int | None, invite: str | None) -> bool:
        """Whether a player may see a table, from the database (for a table this
        process does not serve, or no longer: a finished one). The creator, anyone who
        had a seat or played a match there, and a holder of the invite code may."""
        if not 1 <= table_id <= MAX_TABLE_ID:
            return False
        async with self.sessions() as session:
            row = await session.get(GameTable, table_id)
            if row is None:
                return False
            if not row.private or user_id == row.creator_id or _invited(row.invite_code, invite):
                return True
            if user_id is None:
                return False
            seated = await session.scalar(
                select(Seat.seat).where(Seat.table_id == table_id, Seat.user_id == user_id)
            )
            if seated is not None:
                return True
            players = (
                await session.scalars(select(Match.players).where(Match.table_id == table_id))
            ).all()
        return any(user_id in (seats or []) for seats in players)

    def socket_refusal(self, user_id: int, where: Table | str) -> tuple[int, str] | None:
        """The close code and reason refusing one more socket to this user (None: it may
        open): an account holds only so many sockets on a process, and a table takes
        only so many spectators (its players always get in). A connection costs every
        other one at its table a message, so these bound what one account can cost."""
        limit = self.settings.max_sockets_per_account
        if self.sockets_of.get(user_id, 0) >= limit:
            return 4409, f"you have {limit} sockets open already; close one first"
        if isinstance(where, Table):
            return self.spectator_refusal(where, user_id)
        return None  # the owner of the table counts its spectators (cluster.py)

    def spectator_refusal(self, table: Table, user_id: int) -> tuple[int, str] | None:
        """The close code refusing one more spectator to a table that has its fill."""
        if table.seat_of(user_id) is not None:
            return None
        limit = self.settings.max_spectators_per_table
        watching = sum(1 for conn in table.connections if conn.seat is None and not conn.closed)
        if watching >= limit:
            return 4410, f"this table has {limit} spectators already; try again later"
        return None

    def socket_opened(self, user_id: int) -> None:
        self.sockets_of[user_id] = self.sockets_of.get(user_id, 0) + 1

    def socket_closed(self, user_id: int) -> None:
        left = self.sockets_of.get(user_id, 0) - 1
        if left > 0:
            self.sockets_of[user_id] = left
        else:
            self.sockets_of.pop(user_id, None)

    def track_socket(self, digest: str, conn: Connection) -> None:
        self.sockets.setdefault(digest, set()).add(conn)

    def untrack_socket(self, digest: str, conn: Connection) -> None:
        found = self.sockets.get(digest)
        if found is not None:
            found.discard(conn)
            if not found:
                del self.sockets[digest]

    def token_revoked(self, digest: str) -> None:
        """Close the WebSockets opened with a token just revoked (on every process)."""
        self.close_sockets(digest)
        if self.cluster is not None:
            self.cluster.broadcast({"k": "revoked", "d": digest})

    def close_sockets(self, digest: str) -> None:
        for conn in list(self.sockets.get(digest, ())):
            conn.close(4401, "the token was revoked")

    def drop(self, table_id: int, reason: str) -> None:
        """Stop serving a table whose lease is gone (or that another process wrote):
        its clients reconnect, and whoever holds the lease next reloads it."""
        table = self.tables.pop(table_id, None)
        if table is not None:
            table.close(MOVED, reason)
        if self.cluster is not None and table_id in self.cluster.held:
            self.background(asyncio.create_task(self.cluster.release(table_id)))

    async def store_seat(
        self,
        table_id: int,
        seat: int,
        user_id: int | None,
        bot_level: str | None,
        left: bool,
        address: str | None = None,
    ) -> None:
        """Write who owns and who controls a seat (and, when it is taken, from where)."""
        async with self.sessions() as session, session.begin():
            row = await session.scalar(
                select(Seat).where(Seat.table_id == table_id, Seat.seat == seat)
            )
            if row is None:
                session.add(
                    Seat(
                        table_id=table_id,
                        seat=seat,
                        user_id=user_id,
                        bot_level=bot_level,
                        left=left,
                        address=address,
                    )
                )
            else:
                row.user_id, row.bot_level, row.left = user_id, bot_level, left
                if address is not None:
                    row.address = address
            if user_id is not None:
                await self._remember_names([user_id], session)

    def forget_later(self, table_id: int) -> None:
        """Drop a finished table from memory once nobody watches it (its match stays in
        the database): a long-running process must not keep every match it ever played."""
        loop = asyncio.get_running_loop()
        loop.call_later(self.settings.finished_table_seconds, self._forget, table_id)

    def forget_closed(self, table_id: int) -> None:
        """A table that closed itself (a match of bots its last person left) leaves
        memory at once, and its lease with it."""
        self.tables.pop(table_id, None)
        if self.cluster is not None and table_id in self.cluster.held:
            self.background(asyncio.create_task(self.cluster.release(table_id)))

    def _forget(self, table_id: int) -> None:
        table = self.tables.get(table_id)
        if table is None or table.status != "finished":
            return
        if table.connections:
            self.forget_later(table_id)
            return
        del self.tables[table_id]
        table.close()
        if self.cluster is not None:
            self.background(asyncio.create_task(self.cluster.release(table_id)))

    def background(self, task: asyncio.Task[None]) -> None:
        """Keep a fire-and-forget task alive and log its failure."""
        self._background.add(task)

        def done(finished: asyncio.Task[None]) -> None:
            self._background.discard(finished)
            if not finished.cancelled() and finished.exception() is not None:
                log.error("background task failed", exc_info=finished.exception())

        task.add_done_callback(done)

    async def store_status(self, table_id: int, status: str) -> None:
        """Write a table's status (a finished table waiting again for a rematch)."""
        async with self.sessions() as session, session.begin():
            row = await session.get(GameTable, table_id)
            if row is not None:
                row.status = status

    async def remove_seat(self, table_id: int, seat: int) -> None:
        async with self.sessions() as session, session.begin():
            await session.execute(delete(Seat).where(Seat.table_id == table_id, Seat.seat == seat))

    # --- coins and admins -----------------------------------------------------------

    async def check_can_sit(self, user_id: int, stake: int) -> None:
        """Refuse a seat to a suspended player; at a coin table, to a guest, to an
        account with fewer counted matches than the server asks, or to one who cannot
        cover the stake (checked again, in the database, when the match starts).
        docs/economy.md says why."""
        if user_id in self.suspended:
            raise TableError("suspended", "your account is suspended; you cannot sit down")
        if stake <= 0:
            return
        async with self.sessions() as session:
            user = await session.get(User, user_id)
            if user is not None and user.guest and not self.settings.guests_at_coin_tables:
                raise TableError(
                    "coin_table_needs_account",
                    "guests play at free tables; sign up (a name and a password) to play for coins",
                )
            needed = self.settings.coin_table_min_matches
            if needed > 0:
                played = await _matches_played(session, user_id)
                if played < needed:
                    raise TableError(
                        "coin_table_needs_matches",
                        f"play {needed} counted matches at free tables before you play for "
                        f"coins ({played} so far): decided matches of at least "
                        f"{self.settings.counted_min_rounds} Konkan rounds or "
                        f"{self.settings.counted_min_deals} Conquian deals, in which you "
                        f"played {self.settings.counted_min_turns} turns yourself and "
                        "finished in your seat",
                    )
            have = await ledger.balance(session, ledger.user_account(user_id))
        if have < stake:
            raise TableError(
                "not_enough_coins",
                f"this table's stake is {stake} coins and you have {have}",
            )

    async def coin_balances(self, user_ids: list[int]) -> dict[int, int]:
        async with self.sessions() as session:
            found = await ledger.balances(session, [ledger.user_account(u) for u in user_ids])
        return {u: found[ledger.user_account(u)] for u in user_ids}

    async def set_defaults(self, values: dict[str, int]) -> ServerDefaults:
        async with self.sessions() as session, session.begin():
            for key, value in values.items():
                row = await session.get(ServerSetting, key)
                if row is None:
                    session.add(ServerSetting(key=key, value=value))
                else:
                    row.value = value
        self.apply_defaults(values)
        if self.cluster is not None:
            self.cluster.broadcast({"k": "defaults", "v": values})
        return self.defaults

    def apply_defaults(self, values: dict[str, int]) -> None:
        for key, value in values.items():
            if hasattr(self.defaults, key):
                setattr(self.defaults, key, int(value))

    async def set_suspended(self, user_id: int, suspended: bool) -> None:
        """Suspend (or restore) a player: a suspended player's seats are left, as if
        they had walked away (a waiting table frees the seat, a running match plays on
        without them), and their connections there become a spectator's."""
        async with self.sessions() as session, session.begin():
            user = await session.get(User, user_id)
            if user is None:
                raise TableError("no_such_player", f"there is no player {user_id}")
            user.suspended = suspended
        if self.cluster is not None:
            self.cluster.broadcast({"k": "suspend", "u": user_id, "v": suspended})
        await self.apply_suspended(user_id, suspended)

    async def apply_suspended(self, user_id: int, suspended: bool) -> None:
        """Apply a suspension to this process's tables (each process its own)."""
        if not suspended:
            self.suspended.discard(user_id)
            return
        self.suspended.add(user_id)
        for table in list(self.tables.values()):
            if table.seat_of(user_id) is not None and table.status in ("waiting", "playing"):
                try:
                    await table.leave(user_id)
                except TableError:
                    log.warning("table %s: could not unseat suspended %s", table.id, user_id)
                table.demote(user_id)

    async def close_table(self, table_id: int, viewer: int | None = None) -> dict[str, Any]:
        """Close a table that is not playing (its seats are emptied)."""
        return dict(await self.call(table_id, "close", viewer=viewer))

    async def _close_table(self, table: Table, unless: Callable[[], bool] | None = None) -> None:
        """Close a table (not while it plays, nor when ``unless`` says no once its
        lock is held); a waiting table's seats are freed."""
        if not await table.close_down(unless):
            return
        self.tables.pop(table.id, None)
        if self.cluster is not None:
            await self.cluster.release(table.id)

    async def store_closed(self, table_id: int, free_seats: bool) -> None:
        """Write that a table is closed (and, if it was waiting, free its seats)."""
        async with self.sessions() as session, session.begin():
            row = await session.get(GameTable, table_id)
            if row is not None:
                row.status = "closed"
            if free_seats:
                await session.execute(delete(Seat).where(Seat.table_id == table_id))

    async def _expire_waiting_tables(self) -> None:
        """Close the waiting tables nobody has watched (no socket open to them) and
        whose seats have not changed for ``waiting_table_seconds``: a table opened and
        forgotten must not stay in the lobby for ever. In a cluster each process does it
        for the tables it serves."""
        limit = self.settings.waiting_table_seconds
        quiet: dict[int, tuple[float, list[int | None]]] = {}  # since when, with which seats
        while True:
            await asyncio.sleep(min(30.0, limit / 4))
            now = time.monotonic()
            for table_id in set(quiet) - set(self.tables):
                del quiet[table_id]
            for table in list(self.tables.values()):
                if table.status != "waiting" or table.connections or not self.may_write(table.id):
                    quiet.pop(table.id, None)
                    continue
                since, seats = quiet.setdefault(table.id, (now, list(table.seats)))
                if seats != table.seats:
                    quiet[table.id] = (now, list(table.seats))
                elif now - since >= limit:
                    del quiet[table.id]
                    await self._expire(table, seats)

    async def _expire(self, table: Table, seats: list[int | None]) -> None:
        def busy() -> bool:  # someone came or sat down while the lock was awaited
            return bool(table.connections) or table.seats != seats or table.status != "waiting"

        try:
            await self._close_table(table, unless=busy)
        except Exception:
            log.exception("could not close idle waiting table %s", table.id)
        else:
            log.info("closed idle waiting table %s", table.id, extra={"table_id": table.id})

    async def update_options(
        self, table_id: int, options: dict[str, Any], viewer: int | None = None
    ) -> dict[str, Any]:
        """New options for a waiting table (raises BadOption naming a bad one)."""
        return dict(await self.call(table_id, "options", options=options, viewer=viewer))

    async def _update_options(self, table: Table, options: dict[str, Any]) -> None:
        await table.update_options(options)

    async def store_options(self, table_id: int, options: dict[str, Any]) -> None:
        """Write a table's (validated) options."""
        async with self.sessions() as session, session.begin():
            row = await session.get(GameTable, table_id)
            if row is not None:
                row.options = options

    def may_write(self, table_id: int) -> bool:
        """Whether this process still holds the table's lease (always, alone)."""
        return self.cluster is None or self.cluster.holds(table_id)


async def _matches_played(session: Any, user_id: int) -> int:
    """The user's counted matches (``match_players.counted``: the rule of
    docs/economy.md, "What counts"), wherever they were played and whether or not the
    user still sits at those tables."""
    found = await session.scalar(
        select(func.count())
        .select_from(MatchPlayer)
        .where(MatchPlayer.user_id == user_id, MatchPlayer.counted.is_(True))
    )
    return int(found or 0)


def _no_table(table_id: int) -> TableError:
    return TableError("no_such_table", f"there is no open table {table_id}")


PLAYER_OPS = ("info", "join", "leave", "start")  # the operations that check admits()


def admits(table: Table, user_id: int | None, invite: str | None = None) -> bool:
    """Whether a player may see a table: any public one; a private one only its
    creator, its seated players and a holder of its invite code (anyone else is told it
    does not exist, so that guessing ids reveals nothing)."""
    if not table.private or _invited(table.invite_code, invite):
        return True
    return user_id is not None and (user_id == table.creator_id or user_id in table.seats)


def _invited(code: str | None, given: str | None) -> bool:
    return (
        code is not None
        and given is not None
        and secrets.compare_digest(code.encode(), given.encode())  # str: ASCII only
    )
