"""The tournaments' rows (docs/tournaments.md, "Running a tournament"; migration 0013).

A tournament's whole state is here, so that any process may carry it on after a
restart or a failover: the tournament (its plan, its state, its lease), its entries,
the tables of each round (which game table plays it, and its result once finished),
the complaints of its window, and the admins' schedules that make system tournaments.
The coins are the ledger's (an escrow account ``tour:<id>`` per tournament).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    String,
    UniqueConstraint,
    false,
    func,
)
from sqlalchemy.orm import Mapped, mapped_column

from .models import Base

FIRST = -1  # the sort_order of the shared columns


class PlanColumns:
    """The columns a tournament and a schedule share: its id, and the plan and entry
    terms an admin's schedule gives each tournament it makes (a declarative mixin).
    ``sort_order`` puts them first in each table, in this order, as migration 0013 made
    them: without it SQLAlchemy places a mixin's columns after the class's own."""

    id: Mapped[int] = mapped_column(Integer, primary_key=True, sort_order=FIRST)
    name: Mapped[str] = mapped_column(String(60), sort_order=FIRST)
    game: Mapped[str] = mapped_column(String(20), sort_order=FIRST)
    format: Mapped[str] = mapped_column(String(12), sort_order=FIRST)
    seats: Mapped[int] = mapped_column(Integer, sort_order=FIRST)
    rounds: Mapped[int] = mapped_column(Integer, sort_order=FIRST)
    advance: Mapped[int] = mapped_column(Integer, sort_order=FIRST)
    fee: Mapped[int] = mapped_column(Integer, sort_order=FIRST)
    min_fill: Mapped[int] = mapped_column(Integer, sort_order=FIRST)


class TournamentSchedule(PlanColumns, Base):
    """An admin's schedule: a system tournament of this plan every ``every_minutes``,
    open for registration ``open_minutes`` before each start (``next_at``)."""

    __tablename__ = "tournament_schedules"

    every_minutes: Mapped[int] = mapped_column(Integer)
    open_minutes: Mapped[int] = mapped_column(Integer)
    next_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    created_by: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class Tournament(PlanColumns, Base):
    """One tournament: its plan, where it stands, and who carries it on now.

    ``state``: registering | running | complaints | finished | cancelled. ``version``
    grows with every change a page should see. ``lease_by``/``lease_until``: the
    process whose runner works on it now (another takes over once the lease is past).
    ``pool`` is the prize pool once the result is known (the fees less the house's
    share); until then the fees paid so far sit in the escrow account."""

    __tablename__ = "tournaments"
    __table_args__ = (
        Index("ix_tournaments_state", "state", "starts_at"),
        UniqueConstraint("schedule_id", "starts_at"),
    )

    house_permille: Mapped[int] = mapped_column(Integer)
    starts_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    state: Mapped[str] = mapped_column(String(12), default="registering")
    made_by: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True, index=True
    )
    schedule_id: Mapped[int | None] = mapped_column(
        ForeignKey("tournament_schedules.id", ondelete="SET NULL"), nullable=True
    )
    seed: Mapped[int] = mapped_column(BigInteger)
    current_round: Mapped[int] = mapped_column(Integer, default=0)
    pool: Mapped[int] = mapped_column(Integer, default=0)
    version: Mapped[int] = mapped_column(Integer, default=1)
    complaint_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    lease_by: Mapped[str | None] = mapped_column(String(32), nullable=True)
    lease_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    ended_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class TournamentEntry(Base):
    """An entrant: a registered account (its fee paid into the escrow), or a bot filling
    a seat nobody took (``user_id`` none). Its id is the entrant's id in the pure rules
    (``sahrat.tournaments.Entrant.id``). ``dropped``: the player left a table (or never
    came to it) and a bot finished it; ``place`` and ``prize`` are the result's."""

    __tablename__ = "tournament_entries"
    __table_args__ = (UniqueConstraint("tournament_id", "user_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), index=True
    )
    user_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), nullable=True
    )
    name: Mapped[str] = mapped_column(String(40))
    bot: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    rating: Mapped[int] = mapped_column(Integer)
    fee_paid: Mapped[int] = mapped_column(Integer, default=0)
    dropped: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # never came: dropped at the first table without a move of their own (no standing)
    no_show: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    dropped_in_round: Mapped[int | None] = mapped_column(Integer, nullable=True)
    place: Mapped[int | None] = mapped_column(Integer, nullable=True)
    prize: Mapped[int] = mapped_column(Integer, default=0)
    registered_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now()
    )
    # the network the player registered from (``addresses.network_key``): a paid
    # tournament takes one account per network, as a coin table does
    network: Mapped[str | None] = mapped_column(String(64), nullable=True)


class TournamentTable(Base):
    """One table of one round: its seats (entry ids in seat order), the game table that
    plays it, and its result once that table's match is over (``places`` and
    ``totals`` by entry id as strings, ``dropped`` the entries a bot finished for).
    ``state``: waiting (not yet opened or not yet dealt) | playing | finished."""

    __tablename__ = "tournament_tables"
    __table_args__ = (UniqueConstraint("tournament_id", "round_no", "table_no"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), index=True
    )
    round_no: Mapped[int] = mapped_column(Integer)
    table_no: Mapped[int] = mapped_column(Integer)
    seats: Mapped[list[Any]] = mapped_column(JSON)
    table_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)
    state: Mapped[str] = mapped_column(String(12), default="waiting")
    places: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    totals: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    dropped: Mapped[list[Any] | None] = mapped_column(JSON, nullable=True)
    match_id: Mapped[int | None] = mapped_column(Integer, nullable=True)


class TournamentComplaint(Base):
    """An entrant's complaint in the window after the last table: while one is open
    the prizes are held; an admin dismisses it or upholds it (the tournament is then
    cancelled and every entry refunded)."""

    __tablename__ = "tournament_complaints"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), index=True
    )
    entry_id: Mapped[int] = mapped_column(ForeignKey("tournament_entries.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    text: Mapped[str] = mapped_column(String(1000))
    state: Mapped[str] = mapped_column(String(12), default="open")  # open|dismissed|upheld
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    decided_by: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    decided_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
