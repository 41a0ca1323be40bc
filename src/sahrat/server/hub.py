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
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC
from typing import Any

from redis.exceptions import RedisError
from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncEngine

from sahrat.rules.errors import BadOption
from sahrat.rules.record import GAMES, options_for
from sahrat.settings import Settings
from sahrat.store import ledger
from sahrat.store.db import make_sessions
from sahrat.store.log import LogWriter
from sahrat.store.models import GameTable, LogEntry, Seat, ServerSetting, User

from . import metrics
from .cluster import MOVED, Cluster, retrying
from .limits import Limits
from .table import Connection, Table, TableError

log = logging.getLogger("sahrat.hub")

RUNNING: set[Hub] = set()  # the hubs of this process, for a graceful shutdown


@dataclass
class ServerDefaults:
    """The defaults an admin may change at run time (stored in ``server_settings``;
    the environment's settings are used until an admin sets one)."""

    welcome_grant: int
    free_table_earnings: int
    default_turn_seconds: int

    def to_json(self) -> dict[str, int]:
        return asdict(self)


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
        )
        self.suspended: set[int] = set()  # users who may not sit down
        self._background: set[asyncio.Task[None]] = set()
        self.cluster: Cluster | None = None
        if settings.redis_url:
            self.cluster = Cluster(
                self, settings.redis_url, settings.cluster_prefix, settings.lease_seconds
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
        metrics.LIVE_TABLES.set_function(lambda: len(self.tables))

    async def start(self) -> None:
        RUNNING.add(self)
        self.writer.start()
        async with self.sessions() as session:
            for setting in (await session.scalars(select(ServerSetting))).all():
                if hasattr(self.defaults, setting.key):
                    setattr(self.defaults, setting.key, setting.value)
            self.suspended = set(
                (await session.scalars(select(User.id).where(User.suspended.is_(True)))).all()
            )
        if self.cluster is None:
            for table_id in await self.live_table_ids():
                await self._load(table_id)
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
            async with table.lock:
                table.close(MOVED, "the server is shutting down; reconnect")
                if self.cluster is not None:
                    await self.cluster.release(table_id)

    async def stop(self) -> None:
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
        async with self.sessions() as session:
            row = await session.get(GameTable, table_id)
            if row is None or row.status not in ("waiting", "playing"):
                return None
            seats = (await session.scalars(select(Seat).where(Seat.table_id == row.id))).all()
            await self._remember_names([s.user_id for s in seats if s.user_id is not None], session)
            table = self._table_from_row(row, seats)
            if row.status == "playing":
                entries = (
                    await session.scalars(
                        select(LogEntry).where(LogEntry.table_id == row.id).order_by(LogEntry.seq)
                    )
                ).all()
                table.restore(entries)
                table.expect_players()
            self.tables[row.id] = table
            return table

    async def _remember_names(self, user_ids: list[int], session: Any) -> None:
        missing = [uid for uid in user_ids if uid not in self.names]
        if missing:
            for user in (await session.scalars(select(User).where(User.id.in_(missing)))).all():
                self.names[user.id] = user.name

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
        table = Table(
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
        )
        table.addresses = {seat.seat: seat.address for seat in seats if seat.address is not None}
        return table

    def remember_name(self, user_id: int, name: str) -> None:
        self.names[user_id] = name

    # --- tables ---------------------------------------------------------------------

    async def create_table(
        self,
        creator_id: int,
        game: str,
        options: dict[str, Any],
        private: bool,
        sit: bool = True,
        address: str | None = None,
    ) -> dict[str, Any]:
        """Open a table with validated options (raises BadOption naming a bad one) and
        return its info as the creator sees it."""
        if game not in GAMES:
            raise BadOption("game", f"must be one of {list(GAMES)}, not {game!r}")
        values = dict(options)
        if "turn_seconds" not in values:
            values["turn_seconds"] = self.defaults.default_turn_seconds
        parsed = options_for(game, values)
        stored = parsed.to_json()
        if sit:
            await self.check_can_sit(creator_id, int(parsed.stake))
        invite_code = secrets.token_urlsafe(8) if private else None
        async with self.sessions() as session, session.begin():
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

    async def locate(self, table_id: int) -> Table | str:
        """The live table if this process serves it, else the id of the process that
        does (taking a table that nobody serves). Raises TableError 404 if not live."""
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
        raise TableError("unavailable", "the table is moving between servers; try again", 503)

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
        as ``viewer`` (or the acting user) sees it."""
        if op == "info":
            return table.info(args.get("viewer"))
        if op == "join":
            await table.join(int(args["user_id"]), args.get("seat"), args.get("address"))
            return table.info(args["user_id"])
        if op == "leave":
            await table.leave(int(args["user_id"]))
            return table.info(args["user_id"])
        if op == "start":
            await table.start_with_bots(int(args["user_id"]), str(args["level"]))
            return table.info(args["user_id"])
        if op == "options":
            await self._update_options(table, args["options"])
            return table.info(args.get("viewer"))
        if op == "close":
            await self._close_table(table)
            return table.info(args.get("viewer"))
        raise TableError("bad_operation", f"unknown table operation {op!r}", 400)

    async def by_invite(self, code: str) -> int:
        """The id of the live table with this invite code."""
        if self.cluster is None:
            for table in self.tables.values():
                if table.invite_code is not None and secrets.compare_digest(
                    table.invite_code, code
                ):
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
        raise TableError("bad_invite", "no table has that invite code", 404)

    async def list_tables(self, viewer: int | None, *, private: bool) -> list[dict[str, Any]]:
        """The live tables (public ones only unless ``private``), oldest first. In a
        cluster they come from the database, where presence is not kept."""
        if self.cluster is None:
            found = [
                t
                for t in self.tables.values()
                if (private or not t.private) and t.status in ("waiting", "playing")
            ]
            return [t.info(viewer) for t in sorted(found, key=lambda t: t.id)]
        async with self.sessions() as session:
            query = select(GameTable).where(GameTable.status.in_(("waiting", "playing")))
            if not private:
                query = query.where(GameTable.private.is_(False))
            rows = (await session.scalars(query.order_by(GameTable.id))).all()
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
            self.cluster.broadcast({"k": "revoked", "d": digest, "from": self.cluster.node})

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

    async def remove_seat(self, table_id: int, seat: int) -> None:
        async with self.sessions() as session, session.begin():
            await session.execute(delete(Seat).where(Seat.table_id == table_id, Seat.seat == seat))

    # --- coins and admins -----------------------------------------------------------

    async def check_can_sit(self, user_id: int, stake: int) -> None:
        """Refuse a seat to a suspended player, or at a coin table to one who cannot
        cover the stake (checked again, in the database, when the match starts)."""
        if user_id in self.suspended:
            raise TableError("suspended", "your account is suspended; you cannot sit down", 403)
        if stake > 0:
            async with self.sessions() as session:
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
            self.cluster.broadcast({"k": "defaults", "v": values, "from": self.cluster.node})
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
                raise TableError("no_such_player", f"there is no player {user_id}", 404)
            user.suspended = suspended
        if self.cluster is not None:
            self.cluster.broadcast(
                {"k": "suspend", "u": user_id, "v": suspended, "from": self.cluster.node}
            )
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

    async def _close_table(self, table: Table) -> None:
        async with table.lock:
            if table.status == "playing":
                raise TableError(
                    "match_in_progress", "the table's match is in progress; close it after"
                )
            async with self.sessions() as session, session.begin():
                row = await session.get(GameTable, table.id)
                if row is not None:
                    row.status = "closed"
            table.status = "closed"
            table.broadcast_table()
            table.close()
        self.tables.pop(table.id, None)
        if self.cluster is not None:
            await self.cluster.release(table.id)

    async def update_options(
        self, table_id: int, options: dict[str, Any], viewer: int | None = None
    ) -> dict[str, Any]:
        """New options for a waiting table (raises BadOption naming a bad one)."""
        return dict(await self.call(table_id, "options", options=options, viewer=viewer))

    async def _update_options(self, table: Table, options: dict[str, Any]) -> None:
        async with table.lock:
            if table.status == "playing":
                raise TableError(
                    "match_in_progress",
                    "a match is in progress at this table; change its options when it is over",
                )
            if table.status != "waiting":
                raise TableError("table_finished", f"the table is {table.status}")
            merged = {**table.options.to_json(), **options}
            parsed = options_for(table.game, merged)
            taken = [seat for seat, owner in enumerate(table.seats) if owner is not None]
            if taken and max(taken) >= int(parsed.players):
                raise TableError(
                    "seats_taken", f"seat {max(taken)} is taken; cannot shrink the table"
                )
            stored = parsed.to_json()
            async with self.sessions() as session, session.begin():
                row = await session.get(GameTable, table.id)
                if row is not None:
                    row.options = stored
            table.set_options(stored)
            if taken and not table._free_seats():  # shrunk to exactly its players
                await table._start_match()
            table.broadcast_table()

    def may_write(self, table_id: int) -> bool:
        """Whether this process still holds the table's lease (always, alone)."""
        return self.cluster is None or self.cluster.holds(table_id)


def _no_table(table_id: int) -> TableError:
    return TableError("no_such_table", f"there is no open table {table_id}", 404)
