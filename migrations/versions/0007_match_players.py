"""Who played which match, and how: ``match_players``, one row per person seated in a
finished match (a bot's own seat has none), written with the match's row from now on.

A seat row (``seats``) is a table's *current* seating: ``leave()`` deletes it, and a
table plays many matches through rematches. Earnings, coin-table qualification and the
leaderboard used to join matches to those rows, so leaving a finished table erased its
match, and a rematch a bot played counted as the player's. They now read this table,
and its ``counted`` flag is the one rule of docs/economy.md ("What counts").

Backfill, for the matches finished before this migration: one row per user id in
``matches.players``. Their own turns were never recorded (``own_turns`` 0); nothing
recorded says who left, so ``in_seat_at_end`` is true. ``counted`` is the rule those
matches were played under — the player's seat at that table has a move of its own (a
log entry with a client id) — so accounts that had qualified for coin tables, or were
ranked, before the new rule keep what they had: they are grandfathered, and only
matches finished from now on must meet the new rule. ``place`` and ``won`` come from
the match's score sheet and winner; ``network`` from the table's seat row, where the
same player still holds the same seat.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CHUNK = 1000  # matches read and rows written per statement

_matches = sa.table(
    "matches",
    sa.column("id", sa.Integer),
    sa.column("table_id", sa.Integer),
    sa.column("game", sa.String),
    sa.column("winner_seat", sa.Integer),
    sa.column("players", sa.JSON),
    sa.column("score_sheet", sa.JSON),
)
_log = sa.table(
    "log_entries",
    sa.column("table_id", sa.Integer),
    sa.column("seat", sa.Integer),
    sa.column("client_id", sa.String),
)
_seats = sa.table(
    "seats",
    sa.column("table_id", sa.Integer),
    sa.column("seat", sa.Integer),
    sa.column("user_id", sa.Integer),
    sa.column("address", sa.String),
)
_users = sa.table("users", sa.column("id", sa.Integer))


def upgrade() -> None:
    op.create_table(
        "match_players",
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("own_turns", sa.Integer(), nullable=False),
        sa.Column("in_seat_at_end", sa.Boolean(), nullable=False),
        sa.Column("place", sa.Integer(), nullable=True),
        sa.Column("won", sa.Boolean(), nullable=False),
        sa.Column("counted", sa.Boolean(), nullable=False),
        sa.Column("network", sa.String(length=64), nullable=True),
        sa.ForeignKeyConstraint(["match_id"], ["matches.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"]),
        sa.PrimaryKeyConstraint("match_id", "seat"),
    )
    op.create_index("ix_match_players_user", "match_players", ["user_id", "match_id"])
    _backfill(op.get_bind())


def downgrade() -> None:
    op.drop_index("ix_match_players_user", table_name="match_players")
    op.drop_table("match_players")


def _backfill(bind: sa.Connection) -> None:
    moved = {
        (table_id, seat)
        for table_id, seat in bind.execute(
            sa.select(_log.c.table_id, _log.c.seat)
            .where(_log.c.client_id.is_not(None), _log.c.seat.is_not(None))
            .distinct()
        )
    }
    networks = {
        (table_id, seat, user_id): address
        for table_id, seat, user_id, address in bind.execute(
            sa.select(_seats.c.table_id, _seats.c.seat, _seats.c.user_id, _seats.c.address).where(
                _seats.c.user_id.is_not(None)
            )
        )
    }
    users = set(bind.execute(sa.select(_users.c.id)).scalars())
    table = sa.table(
        "match_players",
        *(
            sa.column(name)
            for name in (
                "match_id",
                "seat",
                "user_id",
                "own_turns",
                "in_seat_at_end",
                "place",
                "won",
                "counted",
                "network",
            )
        ),
    )
    last = 0
    while True:
        found = bind.execute(
            sa.select(_matches).where(_matches.c.id > last).order_by(_matches.c.id).limit(CHUNK)
        ).all()
        if not found:
            return
        last = found[-1].id
        rows = [
            {
                "match_id": match.id,
                "seat": seat,
                "user_id": user_id,
                "own_turns": 0,
                "in_seat_at_end": True,
                "place": _place(match.game, match.score_sheet, match.winner_seat, seat),
                "won": match.winner_seat == seat,
                "counted": (match.table_id, seat) in moved,
                "network": networks.get((match.table_id, seat, user_id)),
            }
            for match in found
            for seat, user_id in enumerate(match.players or [])
            if user_id is not None and user_id in users
        ]
        if rows:
            bind.execute(table.insert(), rows)


# A copy of how the server placed a seat when this migration was written (a migration
# must not change when the application's code does).
def _place(game: str, sheet: Any, winner: int | None, seat: int) -> int | None:
    sheet = sheet if isinstance(sheet, dict) else {}
    places = sheet.get("places")
    if isinstance(places, list) and seat < len(places) and isinstance(places[seat], int):
        return int(places[seat])
    totals = sheet.get("totals")
    if isinstance(totals, list) and all(isinstance(x, int) for x in totals) and seat < len(totals):
        mine = totals[seat]
        if game == "conquian":
            return 1 + sum(1 for x in totals if x > mine)
        return 1 + sum(1 for x in totals if x < mine)
    return 1 if winner == seat else None
