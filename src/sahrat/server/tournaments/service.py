"""What the REST API does to tournaments (``api/tournaments.py``): make one, register,
withdraw, complain; and the admins' cancel, complaint decisions and schedules. Each
change is one transaction that locks the tournament's row first, so that it and the
runner's steps (which lock it too) take turns; the runner is poked after a change that
may make a step due (a knock-out just filled, a complaint dismissed).

Refusals are ``TableError``s with a code (``server/errors.py`` gives each its status).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from sahrat import tournaments as rules
from sahrat.server.addresses import network_key
from sahrat.server.table.errors import TableError
from sahrat.server.tournaments.shapes import seeding_pool
from sahrat.settings import Settings
from sahrat.store import ledger
from sahrat.store import tournaments as store
from sahrat.store.models import User
from sahrat.store.ratings import shown_ratings
from sahrat.store.tournament_models import Tournament, TournamentComplaint


class Seats(Protocol):
    """What the service asks the hub: may this account sit at a table of this stake
    (the coin tables' own check: suspended, guest, counted matches, coins)."""

    async def check_can_sit(self, user_id: int, stake: int) -> None: ...


def no_such_tournament(tournament_id: int) -> TableError:
    return TableError("no_such_tournament", f"there is no tournament {tournament_id}")


async def locked(session: AsyncSession, tournament_id: int) -> Tournament:
    row = await store.get(session, tournament_id, lock=True)
    if row is None:
        raise no_such_tournament(tournament_id)
    return row


def plan_columns(plan: rules.Plan, fields: Mapping[str, Any]) -> dict[str, Any]:
    """The columns a tournament's row and a schedule's share (``PlanColumns`` of
    ``store/tournament_models.py``), from a checked plan and the checked ``fields`` of
    its body (name, fee, min_fill): what both make from a REST body."""
    return {
        "name": fields["name"],
        "game": plan.game,
        "format": plan.format,
        "seats": plan.seats,
        "rounds": plan.rounds,
        "advance": plan.advance,
        "fee": fields["fee"],
        "min_fill": fields["min_fill"],
    }


class Tournaments:
    """The tournaments' operations (one per process, ``app.state.tournaments``)."""

    def __init__(
        self,
        seats: Seats,
        sessions: async_sessionmaker[Any],
        settings: Settings,
        poke: Callable[[], None],
    ) -> None:
        self.seats = seats
        self.sessions = sessions
        self.settings = settings
        self.poke = poke

    async def make(self, user: User | None, plan: rules.Plan, fields: dict[str, Any]) -> int:
        """A new tournament of ``plan`` (``fields``: name, starts_at, fee, min_fill) made
        by ``user`` (an account that may; None: an admin's system one). Its id."""
        if user is not None:
            if user.guest:
                raise TableError(
                    "tournament_needs_account", "guests enter tournaments; sign up to make one"
                )
            await self.seats.check_can_sit(user.id, 0)  # not while suspended
        async with self.sessions() as session, session.begin():
            if user is not None and not user.is_admin:
                made = await store.made_and_open(session, user.id)
                if made >= self.settings.tournaments_per_account:
                    raise TableError(
                        "tournament_too_many",
                        f"you have {made} tournaments that have not ended; "
                        f"at most {self.settings.tournaments_per_account}",
                    )
            row = await store.add(
                session,
                **plan_columns(plan, fields),
                house_permille=self.settings.tournament_house_permille,
                starts_at=fields["starts_at"],
                made_by=None if user is None else user.id,
                schedule_id=None,
                seed=secrets.randbits(62),
            )
            return row.id

    async def refusal(self, row: Tournament, user: User | None, registered: int) -> str | None:
        """Why ``user`` may not register now (a code), or None if they may."""
        if user is None:
            return "no_token"
        if row.state != "registering":
            return "tournament_started"
        if registered >= row.seats:
            return "tournament_full"
        try:
            await self.seats.check_can_sit(user.id, row.fee)
        except TableError as refused:
            return refused.code
        return None

    async def register(self, tournament_id: int, user: User, address: str | None = None) -> None:
        """Enter ``user`` (registering from ``address``). A paid tournament takes one
        account per network, as a coin table does (``SAHRAT_ONE_ADDRESS_PER_COIN_TABLE``):
        two accounts of one player or one household would otherwise share a table and a
        pool, one losing to the other for the prize (docs/tournaments.md, "Entry")."""
        async with self.sessions() as session:
            row = await store.get(session, tournament_id)
        if row is None:
            raise no_such_tournament(tournament_id)
        if row.state != "registering":
            raise TableError("tournament_started", "registration is over")
        # the coin tables' own check for a paid tournament (docs/economy.md)
        await self.seats.check_can_sit(user.id, row.fee)
        pool = seeding_pool(row.game)
        async with self.sessions() as session, session.begin():
            row = await locked(session, tournament_id)
            if row.state != "registering":
                raise TableError("tournament_started", "registration is over")
            if await store.entry_of(session, tournament_id, user.id) is not None:
                raise TableError("tournament_registered", "you are registered already")
            network = network_key(address)
            if (
                row.fee > 0
                and network is not None
                and self.settings.one_address_per_coin_table
                and await store.network_taken(session, tournament_id, network)
            ):
                raise TableError(
                    "same_address",
                    "another entrant of this paid tournament registered from your network "
                    "address; a paid tournament takes one account per address",
                )
            counts = await store.registered_counts(session, [tournament_id])
            if counts[tournament_id] >= row.seats:
                raise TableError("tournament_full", "every seat of this tournament is taken")
            rating = (await shown_ratings(session, [user.id], pool))[user.id][0]
            try:
                await store.register(session, row, user.id, user.name, rating, network)
            except ledger.Overdraft as short:
                raise TableError("not_enough_coins", f"the entry fee is {row.fee} coins") from short
        self.poke()  # a knock-out may be full now

    async def withdraw(self, tournament_id: int, user: User) -> None:
        async with self.sessions() as session, session.begin():
            row = await locked(session, tournament_id)
            if row.state != "registering":
                raise TableError("tournament_started", "the tournament has started")
            entry = await store.entry_of(session, tournament_id, user.id)
            if entry is None:
                raise TableError("tournament_not_registered", "you are not registered")
            await store.withdraw(session, row, entry)

    async def complain(self, tournament_id: int, user: User, text: str) -> int:
        now = datetime.now(UTC)
        async with self.sessions() as session, session.begin():
            row = await locked(session, tournament_id)
            entry = await store.entry_of(session, tournament_id, user.id)
            if entry is None:
                raise TableError("tournament_not_entrant", "only an entrant may complain")
            if row.state != "complaints" or store.window_over(row, now):
                raise TableError(
                    "tournament_no_window", "complaints are taken after the last table only"
                )
            mine = [
                c
                for c in await store.complaints(session, tournament_id)
                if c.entry_id == entry.id and c.state == "open"
            ]
            if mine:
                raise TableError("tournament_complaint_open", "your complaint is still open")
            complaint = await store.complain(session, row, entry, text, now)
            return complaint.id

    async def cancel(self, tournament_id: int) -> None:
        """An admin's cancel: every entry refunded."""
        async with self.sessions() as session, session.begin():
            row = await locked(session, tournament_id)
            if row.state not in store.ACTIVE:
                raise TableError("tournament_ended", "the tournament has ended")
            await store.cancel(session, row, datetime.now(UTC))

    async def decide(
        self, tournament_id: int, complaint_id: int, decision: str, admin: User
    ) -> None:
        """An admin's decision on a complaint: upheld cancels the tournament (every entry
        refunded); dismissed, the prizes are paid once no other is open."""
        now = datetime.now(UTC)
        async with self.sessions() as session, session.begin():
            row = await locked(session, tournament_id)
            found: TournamentComplaint | None = await store.complaint(
                session, tournament_id, complaint_id
            )
            if found is None:
                raise TableError("no_such_complaint", f"there is no complaint {complaint_id}")
            if found.state != "open":
                raise TableError("tournament_complaint_decided", "that complaint is decided")
            found.state, found.decided_by, found.decided_at = decision, admin.id, now
            store.bump(row)
            if decision == "upheld" and row.state in store.ACTIVE:
                await store.cancel(session, row, now)
        self.poke()
