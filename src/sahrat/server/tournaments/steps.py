"""One step of a tournament, whatever its state (docs/tournaments.md, "Running a
tournament"). A step reads the tournament's rows, does what is due, and writes each
change in a transaction that first locks the tournament's row again and checks that
its state is still the one the step read (an admin's cancel in between wins). Every
write is one the next step can take up from: a step may die anywhere, and the next
one, here or on another process, goes on.

* registering: a knock-out starts once full, either format at its time with at least
  ``min_fill`` people (bots take a knock-out's empty seats); fewer, it is cancelled
  and every fee refunded.
* running: the next round is seated once the last is finished (``seat_round``), its
  tables opened, and each finished table's result stored with the entrants a bot
  finished for, who drop out of the later rounds. After the last round: the standings,
  the prizes held, and the complaint window.
* complaints: once the window is over and no complaint is open, the prizes are paid.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from sahrat import tournaments as rules
from sahrat.ratings import BOT, shown
from sahrat.server.hub import Hub
from sahrat.server.tournaments import tables
from sahrat.server.tournaments.shapes import entrants_of, history_of, plan_of
from sahrat.settings import Settings
from sahrat.store import tournament_rounds
from sahrat.store import tournaments as store
from sahrat.store.queue import aware
from sahrat.store.tournament_models import Tournament, TournamentEntry, TournamentTable

log = logging.getLogger("sahrat.tournaments")


class Stale(Exception):
    """The tournament changed state under the step (cancelled, say): it stops."""


class Steps:
    """The steps of tournaments, through the hub ."""

    def __init__(
        self,
        hub: Hub,
        sessions: async_sessionmaker[Any],
        settings: Settings,
        owner: str,
        lease: float,
    ) -> None:
        self.hub = hub
        self.sessions = sessions
        self.settings = settings
        self.owner = owner  # the lease this process holds on the tournament it steps
        self.lease = lease

    async def _renew(self, tournament_id: int) -> None:
        """Renew the lease before a long part of a step (opening a table): a step never
        outlives it, so no other process opens the same table."""
        async with self.sessions() as session, session.begin():
            now = datetime.now(UTC)
            if not await store.claim(session, tournament_id, self.owner, now, self.lease):
                raise Stale(tournament_id)

    async def _write(
        self,
        tournament_id: int,
        state: str,
        work: Callable[[AsyncSession, Tournament], Awaitable[None]],
    ) -> None:
        """``work`` in a transaction, the tournament locked and still in ``state``."""
        async with self.sessions() as session, session.begin():
            row = await store.get(session, tournament_id, lock=True)
            if row is None or row.state != state:
                raise Stale(tournament_id)
            await work(session, row)

    async def step(self, tournament_id: int, now: datetime) -> None:
        async with self.sessions() as session:
            row = await store.get(session, tournament_id)
        try:
            if row is None:
                return
            if row.state == "registering":
                await self._registering(row, now)
            elif row.state == "running":
                await self._running(row, now)
            elif row.state == "complaints":
                await self._complaints(row, now)
        except Stale:
            log.info("tournament %s changed under a step", tournament_id)

    # --- registering ---------------------------------------------------------------------

    async def _registering(self, row: Tournament, now: datetime) -> None:
        async with self.sessions() as session:
            entries = await store.entries(session, row.id)
        people = sum(1 for entry in entries if not entry.bot)
        full = row.format == "knockout" and people >= row.seats
        if not full and now < aware(row.starts_at):
            return
        if people < max(2, row.min_fill):

            async def cancel(session: AsyncSession, locked: Tournament) -> None:
                await store.cancel(session, locked, now)

            await self._write(row.id, "registering", cancel)
            log.info(
                "tournament %s: %s registered of %s needed: cancelled", row.id, people, row.min_fill
            )
            return

        async def start(session: AsyncSession, locked: Tournament) -> None:
            if locked.format == "knockout" and people < locked.seats:
                await store.add_bots(session, locked, locked.seats - people, shown(BOT))
            locked.state = "running"
            store.bump(locked)

        await self._write(row.id, "registering", start)
        log.info("tournament %s started with %s people", row.id, people)
        row.state = "running"
        await self._running(row, now)

    # --- running -------------------------------------------------------------------------

    async def _running(self, row: Tournament, now: datetime) -> None:
        async with self.sessions() as session:
            entries = await store.entries(session, row.id)
            rows = await tournament_rounds.tables(session, row.id)
        plan, entrants = plan_of(row), entrants_of(entries)
        history = history_of(rows)
        round_no = len(history) + 1
        current = [table for table in rows if table.round_no == round_no]
        if not current:
            if rules.finished(plan, entrants, history):
                await self._result(row, entries, history, now)
                return
            seats = rules.seat_round(plan, round_no, entrants, history, row.seed)

            async def seat(session: AsyncSession, locked: Tournament) -> None:
                await tournament_rounds.seat_round(session, locked.id, round_no, seats)
                locked.current_round = round_no
                store.bump(locked)

            await self._write(row.id, "running", seat)
            log.info("tournament %s: round %s seated at %s tables", row.id, round_no, len(seats))
            async with self.sessions() as session:
                rows = await tournament_rounds.tables(session, row.id)
            current = [table for table in rows if table.round_no == round_no]
        by_id = {entry.id: entry for entry in entries}
        for table in current:
            if table.state != "finished":
                await self._table(row, table, by_id)

    async def _table(
        self, row: Tournament, table: TournamentTable, entries: dict[int, TournamentEntry]
    ) -> None:
        """Carry one table of the round on: a bye, a table of bots, opening it, or
        reading its result once its match is over."""
        if len(table.seats) == 1:
            await self._finish(
                row,
                table,
                tables.Result(
                    {int(table.seats[0]): 1}, {int(table.seats[0]): 0}, frozenset(), None
                ),
            )
            return
        if table.state == "waiting":
            people = await tables.sitters(self.hub, table, entries)
            if not people and table.table_id is None:
                absent = [e for e in map(int, table.seats) if not entries[e].bot]
                await self._finish(row, table, tables.drawn_result(row, table, absent, came=False))
                return
            if people:
                await self._renew(row.id)
                await tables.open_table(self.hub, self.sessions, self.settings, row, table, people)
            async with self.sessions() as session:
                status = await tournament_rounds.table_status(session, table.table_id or 0)
            if status in ("playing", "finished", "closed"):

                async def playing(session: AsyncSession, locked: Tournament) -> None:
                    found = await session.get(TournamentTable, table.id)
                    if found is not None and found.state == "waiting":
                        found.state = "playing"
                        store.bump(locked)

                await self._write(row.id, "running", playing)
            else:
                return
        async with self.sessions() as session:
            result = await tables.read_result(session, row, table, entries)
        if result is not None:
            await self._finish(row, table, result)

    async def _finish(self, row: Tournament, table: TournamentTable, result: tables.Result) -> None:
        async def finish(session: AsyncSession, locked: Tournament) -> None:
            found = await session.get(TournamentTable, table.id)
            if found is None or found.state == "finished":
                return
            tournament_rounds.finish(
                found, result.places, result.totals, result.dropped, result.match_id
            )
            # a no-show: no move of their own at the first table they were seated at
            earlier = {
                int(entry)
                for other in await tournament_rounds.tables(session, locked.id)
                if other.round_no < found.round_no and len(other.seats) > 1
                for entry in other.seats
            }
            no_shows = result.idle - earlier
            await store.mark_dropped(session, result.dropped, found.round_no, no_shows)
            store.bump(locked)

        await self._write(row.id, "running", finish)
        table.state = "finished"
        log.info(
            "tournament %s: round %s table %s finished", row.id, table.round_no, table.table_no
        )

    async def _result(
        self,
        row: Tournament,
        entries: list[TournamentEntry],
        history: list[list[rules.TableResult]],
        now: datetime,
    ) -> None:
        """The last round is over: the standings, each place's prize (held), and the
        complaint window."""
        plan, entrants = plan_of(row), entrants_of(entries)
        standings = rules.standings(plan, entrants, history)
        paid = sum(1 for entry in entries if entry.fee_paid > 0)
        pool, _house = rules.pool_and_house(row.fee, paid, row.house_permille)
        prizes = rules.prizes(plan, standings, pool) if pool > 0 else {}
        if pool > 0 and not prizes:  # nobody with a standing to pay: the fees go back

            async def refund(session: AsyncSession, locked: Tournament) -> None:
                await store.cancel(session, locked, now)

            await self._write(row.id, "running", refund)
            return
        places = {line.entrant: line.place for line in standings}
        until = now + timedelta(minutes=self.settings.tournament_complaint_minutes)

        async def result(session: AsyncSession, locked: Tournament) -> None:
            await store.set_result(session, locked, places, prizes, pool, until)

        await self._write(row.id, "running", result)
        log.info("tournament %s: result stored, prizes held until %s", row.id, until.isoformat())
        if until <= now:
            row.state, row.complaint_until = "complaints", until
            await self._complaints(row, now)

    # --- complaints ----------------------------------------------------------------------

    async def _complaints(self, row: Tournament, now: datetime) -> None:
        if not store.window_over(row, now):
            return
        async with self.sessions() as session:
            if await store.open_complaints(session, row.id):
                return  # the prizes are held while a complaint is open

        async def pay(session: AsyncSession, locked: Tournament) -> None:
            if await store.open_complaints(session, locked.id):
                return
            await store.pay_out(session, locked, now)

        await self._write(row.id, "complaints", pay)
        log.info("tournament %s: prizes paid", row.id)
