"""The hub: every live table of this process, the event-log writer, and the database.

At start-up the hub reloads every unfinished table from its event log (the
engine is deterministic, so replaying the log rebuilds each match exactly)
and re-arms the stored turn deadlines.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from dataclasses import asdict, dataclass
from datetime import UTC
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncEngine

from sahrat.rules.errors import BadOption
from sahrat.rules.record import GAMES, options_for
from sahrat.settings import Settings
from sahrat.store import ledger
from sahrat.store.db import make_sessions
from sahrat.store.log import LogWriter
from sahrat.store.models import GameTable, LogEntry, Seat, ServerSetting, User

from .table import Table, TableError

log = logging.getLogger("sahrat.hub")


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
        self.writer = LogWriter(self.sessions)
        self.tables: dict[int, Table] = {}
        self.names: dict[int, str] = {}
        self.defaults = ServerDefaults(
            welcome_grant=settings.welcome_grant,
            free_table_earnings=settings.free_table_earnings,
            default_turn_seconds=settings.default_turn_seconds,
        )
        self.suspended: set[int] = set()  # users who may not sit down
        self._background: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self.writer.start()
        await self._load()

    async def stop(self) -> None:
        for table in self.tables.values():
            table.close()
        await self.writer.stop()

    async def _load(self) -> None:
        async with self.sessions() as session:
            for setting in (await session.scalars(select(ServerSetting))).all():
                if hasattr(self.defaults, setting.key):
                    setattr(self.defaults, setting.key, setting.value)
            self.suspended = set(
                (await session.scalars(select(User.id).where(User.suspended.is_(True)))).all()
            )
            rows = (
                await session.scalars(
                    select(GameTable).where(GameTable.status.in_(("waiting", "playing")))
                )
            ).all()
            for row in rows:
                seats = (await session.scalars(select(Seat).where(Seat.table_id == row.id))).all()
                players = int(options_for(row.game, row.options).players)
                owners: list[int | None] = [None] * players
                bots: list[str | None] = [None] * players
                left: set[int] = set()
                for seat in seats:
                    owners[seat.seat] = seat.user_id
                    bots[seat.seat] = seat.bot_level
                    if seat.left:
                        left.add(seat.seat)
                await self._remember_names([o for o in owners if o is not None], session)
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
                    deadline=row.deadline_at.replace(tzinfo=UTC).timestamp()
                    if row.deadline_at
                    else None,
                    bots=bots,
                    left=left,
                )
                if row.status == "playing":
                    entries = (
                        await session.scalars(
                            select(LogEntry)
                            .where(LogEntry.table_id == row.id)
                            .order_by(LogEntry.seq)
                        )
                    ).all()
                    table.restore(entries)
                self.tables[row.id] = table
        log.info("loaded %d unfinished tables", len(self.tables))

    async def _remember_names(self, user_ids: list[int], session: Any) -> None:
        missing = [uid for uid in user_ids if uid not in self.names]
        if missing:
            for user in (await session.scalars(select(User).where(User.id.in_(missing)))).all():
                self.names[user.id] = user.name

    def remember_name(self, user_id: int, name: str) -> None:
        self.names[user_id] = name

    # --- tables ---------------------------------------------------------------------

    async def create_table(
        self, creator_id: int, game: str, options: dict[str, Any], private: bool, sit: bool = True
    ) -> Table:
        """A new table with validated options; raises BadOption naming a bad one."""
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
            await session.flush()
            table_id = row.id
            await self._remember_names([creator_id], session)
        table = Table(
            self,
            table_id=table_id,
            game=game,
            options=stored,
            private=private,
            invite_code=invite_code,
            creator_id=creator_id,
            status="waiting",
            seq=0,
            seats=[None] * int(parsed.players),
        )
        self.tables[table_id] = table
        if sit:
            await table.join(creator_id, None)
        return table

    def table(self, table_id: int) -> Table:
        table = self.tables.get(table_id)
        if table is None:
            raise TableError("no_such_table", f"there is no open table {table_id}", 404)
        return table

    def by_invite(self, code: str) -> Table:
        for table in self.tables.values():
            if table.invite_code is not None and secrets.compare_digest(table.invite_code, code):
                return table
        raise TableError("bad_invite", "no table has that invite code", 404)

    def open_tables(self) -> list[Table]:
        return [t for t in self.tables.values() if not t.private and t.status != "closed"]

    async def store_seat(
        self, table_id: int, seat: int, user_id: int | None, bot_level: str | None, left: bool
    ) -> None:
        """Write who owns and who controls a seat."""
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
                    )
                )
            else:
                row.user_id, row.bot_level, row.left = user_id, bot_level, left
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
        for key, value in values.items():
            setattr(self.defaults, key, value)
        return self.defaults

    async def set_suspended(self, user_id: int, suspended: bool) -> None:
        """Suspend (or restore) a player: a suspended player's seats are left, as if
        they had walked away (a waiting table frees the seat, a running match plays on
        without them), and their connections there become a spectator's."""
        async with self.sessions() as session, session.begin():
            user = await session.get(User, user_id)
            if user is None:
                raise TableError("no_such_player", f"there is no player {user_id}", 404)
            user.suspended = suspended
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

    async def close_table(self, table_id: int) -> Table:
        """Close a table that is not playing (its seats are emptied)."""
        table = self.table(table_id)
        async with table.lock:
            if table.status == "playing":
                raise TableError(
                    "match_in_progress", "the table's match is in progress; close it after"
                )
            async with self.sessions() as session, session.begin():
                row = await session.get(GameTable, table_id)
                if row is not None:
                    row.status = "closed"
            table.status = "closed"
            table.broadcast_table()
            table.close()
        self.tables.pop(table_id, None)
        return table

    async def update_options(self, table_id: int, options: dict[str, Any]) -> Table:
        """New options for a waiting table (raises BadOption naming a bad one)."""
        table = self.table(table_id)
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
                row = await session.get(GameTable, table_id)
                if row is not None:
                    row.options = stored
            table.set_options(stored)
            if taken and not table._free_seats():  # shrunk to exactly its players
                await table._start_match()
            table.broadcast_table()
        return table
