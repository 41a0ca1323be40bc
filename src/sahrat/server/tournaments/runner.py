"""The tournament runner: every process runs one (``app.py``), as every process runs a
queue former.

Each tick (every ``SAHRAT_TOURNAMENT_TICK_SECONDS``, and at once when poked: a
registration filled a knock-out) it makes the tournaments of the admins' schedules that
open for registration now, then takes each tournament that has not ended in turn: it
claims the tournament's lease (``store/tournaments.claim``: a row update that succeeds
for one process only, until the lease is past) and runs one step of it
(``steps.py``). The lease is longer than a step ever takes and renewed at each, so a
tournament is carried on by one process at a time; a process that dies holding leases
leaves them to the others once they are past (:func:`lease_seconds`). Nothing is kept in
memory between ticks: a restart finds everything in the database.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import async_sessionmaker

from sahrat.server.hub import Hub
from sahrat.server.tournaments.steps import Steps
from sahrat.settings import Settings
from sahrat.store import tournament_rounds
from sahrat.store import tournaments as store

log = logging.getLogger("sahrat.tournaments")


def lease_seconds(settings: Settings) -> float:
    """How long a tournament's lease lasts: ten ticks, at least 3 s (renewed at every
    tick and before each table a step opens, so a step never outlives it)."""
    return max(3.0, 10 * settings.tournament_tick_seconds)


class Runner:
    """This process's tournament runner."""

    def __init__(self, hub: Hub, sessions: async_sessionmaker[Any], settings: Settings) -> None:
        self.settings = settings
        self.sessions = sessions
        self.name = secrets.token_hex(8)  # this process, in the leases it takes
        self.steps = Steps(hub, sessions, settings, self.name, lease_seconds(settings))
        self._wake = asyncio.Event()
        self._lock = asyncio.Lock()  # one tick at a time in this process
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        # the name the leases it takes carry (``tournaments.lease_by``): which process
        # carries a tournament on
        log.info("tournament runner %s started", self.name, extra={"runner": self.name})
        self._task = asyncio.create_task(self._run(), name="tournament-runner")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        with contextlib.suppress(Exception):  # let another process take them at once
            async with self.sessions() as session, session.begin():
                for tournament_id in await store.active_ids(session):
                    await store.release(session, tournament_id, self.name)

    def poke(self) -> None:
        """Run a tick soon (a registration, a decision: something may be due)."""
        self._wake.set()

    async def _run(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.settings.tournament_tick_seconds)
            self._wake.clear()
            try:
                await self.tick()
            except asyncio.CancelledError:
                raise
            except Exception:  # the database out of reach, say: the next tick tries again
                log.exception("a tournament tick failed")

    async def tick(self) -> None:
        async with self._lock:
            now = datetime.now(UTC)
            await self.make_scheduled(now)
            async with self.sessions() as session:
                ids = await store.active_ids(session)
            for tournament_id in ids:
                now = datetime.now(UTC)
                async with self.sessions() as session, session.begin():
                    mine = await store.claim(
                        session, tournament_id, self.name, now, lease_seconds(self.settings)
                    )
                if not mine:
                    continue
                try:
                    await self.steps.step(tournament_id, now)
                except asyncio.CancelledError:
                    raise
                except Exception:  # one tournament's failure stops no other
                    log.exception(
                        "tournament %s: a step failed; the next tick tries again", tournament_id
                    )

    async def make_scheduled(self, now: datetime) -> None:
        """The system tournaments of the schedules that open for registration by now,
        each made once (the schedule's next start moves on in the same transaction)."""
        async with self.sessions() as session, session.begin():
            for schedule in await tournament_rounds.due_schedules(session, now):
                starts_at = schedule.next_at
                if not await tournament_rounds.made_from(session, schedule.id, starts_at):
                    await store.add(
                        session,
                        name=schedule.name,
                        game=schedule.game,
                        format=schedule.format,
                        seats=schedule.seats,
                        rounds=schedule.rounds,
                        advance=schedule.advance,
                        fee=schedule.fee,
                        min_fill=schedule.min_fill,
                        house_permille=self.settings.tournament_house_permille,
                        starts_at=starts_at,
                        made_by=None,
                        schedule_id=schedule.id,
                        seed=secrets.randbits(62),
                    )
                    log.info("schedule %s: a tournament made for %s", schedule.id, starts_at)
                tournament_rounds.advance_schedule(schedule, now)
