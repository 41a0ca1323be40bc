"""Who may sit down, who may see or open a table, and how long a forgotten one stays
open: suspensions, guests and coins, the counted matches a coin table asks for,
private tables, the cap on open tables and the closing of idle waiting ones; and the
server-wide defaults an admin may change at run time.

The rules are docs/economy.md's. They are checked when a player sits down (and the
coins again, in the database, when the match starts: ``table/settlement.py``). The
hub holds one ``Policy`` and hands the tables its answers through ``TableServices``;
the tables never see this module, as the imports run one way.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import async_sessionmaker

from sahrat.server.table.errors import TableError
from sahrat.server.table.services import ServerDefaults
from sahrat.server.table.table import Table
from sahrat.settings import Settings
from sahrat.store import accounts, ledger
from sahrat.store import tables as table_rows

log = logging.getLogger("sahrat.hub")  # the registry's tables, as it was always logged


class Registry(Protocol):
    """The tables the rules act on (``Hub``): those this process serves."""

    tables: dict[int, Table]

    def may_write(self, table_id: int) -> bool: ...
    async def close_here(self, table: Table, unless: Callable[[], bool] | None = None) -> None: ...


class Policy:
    """The rules of sitting down and opening tables, with what they read: the defaults
    and the suspended accounts (kept in memory, each process its own copy)."""

    def __init__(
        self, settings: Settings, sessions: async_sessionmaker[Any], registry: Registry
    ) -> None:
        self.settings = settings
        self.sessions = sessions
        self.registry = registry
        self.defaults = ServerDefaults(
            welcome_grant=settings.welcome_grant,
            free_table_earnings=settings.free_table_earnings,
            default_turn_seconds=settings.default_turn_seconds,
            free_table_earnings_per_day=settings.free_table_earnings_per_day,
        )
        self.suspended: set[int] = set()  # users who may not sit down (they may watch)

    async def load(self) -> None:
        """Read the defaults an admin set and the suspended accounts (at start-up)."""
        async with self.sessions() as session:
            for key, value in (await accounts.server_settings(session)).items():
                if hasattr(self.defaults, key):
                    setattr(self.defaults, key, value)
            suspended = await accounts.suspended_ids(session)
        self.suspended.clear()  # the same set: the hub and its tables share it
        self.suspended.update(suspended)

    async def check_can_sit(self, user_id: int, stake: int) -> None:
        """Refuse a seat to a suspended player; at a coin table, to a guest, to an
        account with fewer counted matches than the server asks, or to one who cannot
        cover the stake (checked again, in the database, when the match starts).
        docs/economy.md says why."""
        if user_id in self.suspended:
            raise TableError("suspended", "your account is suspended; you cannot sit down")
        if stake <= 0:
            return
        settings = self.settings
        async with self.sessions() as session:
            if not settings.guests_at_coin_tables and await accounts.is_guest(session, user_id):
                raise TableError(
                    "coin_table_needs_account",
                    "guests play at free tables; sign up (a name and a password) to play for coins",
                )
            needed = settings.coin_table_min_matches
            if needed > 0:
                played = await accounts.counted_matches(session, user_id)
                if played < needed:
                    raise TableError(
                        "coin_table_needs_matches",
                        f"play {needed} counted matches at free tables before you play for "
                        f"coins ({played} so far): decided matches of at least "
                        f"{settings.counted_min_rounds} Konkan rounds or "
                        f"{settings.counted_min_deals} Conquian deals, in which you "
                        f"played {settings.counted_min_turns} turns yourself and "
                        "finished in your seat",
                    )
            have = await ledger.balance(session, ledger.user_account(user_id))
        if have < stake:
            raise TableError(
                "not_enough_coins",
                f"this table's stake is {stake} coins and you have {have}",
            )

    async def check_may_open(self, creator_id: int) -> None:
        """Refuse one more table to a creator who has as many open as the server allows
        (against table spam; an admin is not capped)."""
        limit = self.settings.max_open_tables_per_account
        async with self.sessions() as session:
            open_tables = await table_rows.open_tables_of(session, creator_id)
        if open_tables >= limit:
            raise TableError(
                "too_many_tables",
                f"you already have {open_tables} open tables (at most {limit}); open another "
                "when one is over (a waiting table nobody watches closes after a while)",
            )

    async def coin_balances(self, user_ids: list[int]) -> dict[int, int]:
        """Each user's coins now."""
        async with self.sessions() as session:
            found = await ledger.balances(session, [ledger.user_account(u) for u in user_ids])
        return {u: found[ledger.user_account(u)] for u in user_ids}

    async def store_defaults(self, values: Mapping[str, int]) -> None:
        """Write new defaults (``apply_defaults`` shows them here)."""
        async with self.sessions() as session, session.begin():
            await accounts.write_server_settings(session, values)

    def apply_defaults(self, values: Mapping[str, int]) -> None:
        for key, value in values.items():
            if hasattr(self.defaults, key):
                setattr(self.defaults, key, int(value))

    async def store_suspended(self, user_id: int, suspended: bool) -> None:
        """Write that an account is suspended (or restored)."""
        async with self.sessions() as session, session.begin():
            if not await accounts.set_suspended(session, user_id, suspended):
                raise TableError("no_such_player", f"there is no player {user_id}")

    async def apply_suspended(self, user_id: int, suspended: bool) -> None:
        """Apply a suspension to this process's tables (each process its own): a
        suspended player's seats are left, as if they had walked away (a waiting table
        frees the seat, a running match plays on without them), and their connections
        there become a spectator's."""
        if not suspended:
            self.suspended.discard(user_id)
            return
        self.suspended.add(user_id)
        for table in list(self.registry.tables.values()):
            if table.seat_of(user_id) is not None and table.status in table_rows.LIVE:
                try:
                    await table.leave(user_id)
                except TableError:
                    log.warning("table %s: could not unseat suspended %s", table.id, user_id)
                table.demote(user_id)

    async def expire_waiting_tables(self) -> None:
        """Close the waiting tables nobody has watched (no socket open to them) and
        whose seats have not changed for ``waiting_table_seconds``: a table opened and
        forgotten must not stay in the lobby for ever. In a cluster each process does it
        for the tables it serves."""
        limit = self.settings.waiting_table_seconds
        quiet: dict[int, tuple[float, list[int | None]]] = {}  # since when, with which seats
        tables = self.registry.tables
        while True:
            await asyncio.sleep(min(30.0, limit / 4))
            now = time.monotonic()
            for table_id in set(quiet) - set(tables):
                del quiet[table_id]
            for table in list(tables.values()):
                if (
                    table.status != "waiting"
                    or table.connections
                    or not self.registry.may_write(table.id)
                ):
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
            await self.registry.close_here(table, unless=busy)
        except Exception:
            log.exception("could not close idle waiting table %s", table.id)
        else:
            log.info("closed idle waiting table %s", table.id, extra={"table_id": table.id})


def admits(table: Table, user_id: int | None, invite: str | None = None) -> bool:
    """Whether a player may see a table: any public one; a private one only its
    creator, its seated players and a holder of its invite code (anyone else is told it
    does not exist, so that guessing ids reveals nothing)."""
    if not table.private or table_rows.invite_matches(table.invite_code, invite):
        return True
    return user_id is not None and (user_id == table.creator_id or user_id in table.seats)
