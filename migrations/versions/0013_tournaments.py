"""Tournaments (docs/tournaments.md): the tournaments, their entries, the tables of each
round, the complaints of the window before prizes, the admins' schedules; and on each
game table the tournament it plays for, if any.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | Sequence[str] | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _plan_columns() -> list[sa.Column[object]]:
    return [
        sa.Column("name", sa.String(length=60), nullable=False),
        sa.Column("game", sa.String(length=20), nullable=False),
        sa.Column("format", sa.String(length=12), nullable=False),
        sa.Column("seats", sa.Integer(), nullable=False),
        sa.Column("rounds", sa.Integer(), nullable=False),
        sa.Column("advance", sa.Integer(), nullable=False),
        sa.Column("fee", sa.Integer(), nullable=False),
        sa.Column("min_fill", sa.Integer(), nullable=False),
    ]


def upgrade() -> None:
    op.create_table(
        "tournament_schedules",
        sa.Column("id", sa.Integer(), nullable=False),
        *_plan_columns(),
        sa.Column("every_minutes", sa.Integer(), nullable=False),
        sa.Column("open_minutes", sa.Integer(), nullable=False),
        sa.Column("next_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_by", sa.Integer(), nullable=True),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.ForeignKeyConstraint(["created_by"], ["users.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "tournaments",
        sa.Column("id", sa.Integer(), nullable=False),
        *_plan_columns(),
        sa.Column("house_permille", sa.Integer(), nullable=False),
        sa.Column("starts_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("state", sa.String(length=12), nullable=False),
        sa.Column("made_by", sa.Integer(), nullable=True),
        sa.Column("schedule_id", sa.Integer(), nullable=True),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("current_round", sa.Integer(), nullable=False),
        sa.Column("pool", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("complaint_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("lease_by", sa.String(length=32), nullable=True),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["made_by"], ["users.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["schedule_id"], ["tournament_schedules.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("schedule_id", "starts_at"),
    )
    op.create_index("ix_tournaments_state", "tournaments", ["state", "starts_at"])
    op.create_index("ix_tournaments_made_by", "tournaments", ["made_by"])
    op.create_table(
        "tournament_entries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=True),
        sa.Column("name", sa.String(length=40), nullable=False),
        sa.Column("bot", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("rating", sa.Integer(), nullable=False),
        sa.Column("fee_paid", sa.Integer(), nullable=False),
        sa.Column("dropped", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("no_show", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("dropped_in_round", sa.Integer(), nullable=True),
        sa.Column("place", sa.Integer(), nullable=True),
        sa.Column("prize", sa.Integer(), nullable=False),
        sa.Column(
            "registered_at",
            sa.DateTime(timezone=True),
            server_default=sa.func.now(),
            nullable=False,
        ),
        sa.Column("network", sa.String(length=64), nullable=True),
        sa.ForeignKeyConstraint(["tournament_id"], ["tournaments.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("tournament_id", "user_id"),
    )
    op.create_index("ix_tournament_entries_tournament_id", "tournament_entries", ["tournament_id"])
    op.create_table(
        "tournament_tables",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("round_no", sa.Integer(), nullable=False),
        sa.Column("table_no", sa.Integer(), nullable=False),
        sa.Column("seats", sa.JSON(), nullable=False),
        sa.Column("table_id", sa.Integer(), nullable=True),
        sa.Column("state", sa.String(length=12), nullable=False),
        sa.Column("places", sa.JSON(), nullable=True),
        sa.Column("totals", sa.JSON(), nullable=True),
        sa.Column("dropped", sa.JSON(), nullable=True),
        sa.Column("match_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(["tournament_id"], ["tournaments.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("tournament_id", "round_no", "table_no"),
    )
    op.create_index("ix_tournament_tables_tournament_id", "tournament_tables", ["tournament_id"])
    op.create_index("ix_tournament_tables_table_id", "tournament_tables", ["table_id"])
    op.create_table(
        "tournament_complaints",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("entry_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("text", sa.String(length=1000), nullable=False),
        sa.Column("state", sa.String(length=12), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("decided_by", sa.Integer(), nullable=True),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["tournament_id"], ["tournaments.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["entry_id"], ["tournament_entries.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["decided_by"], ["users.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_tournament_complaints_tournament_id", "tournament_complaints", ["tournament_id"]
    )
    with op.batch_alter_table("game_tables") as batch:
        batch.add_column(sa.Column("tournament_id", sa.Integer(), nullable=True))
    op.create_index("ix_game_tables_tournament_id", "game_tables", ["tournament_id"])


def downgrade() -> None:
    op.drop_index("ix_game_tables_tournament_id", table_name="game_tables")
    with op.batch_alter_table("game_tables") as batch:
        batch.drop_column("tournament_id")
    op.drop_table("tournament_complaints")
    op.drop_table("tournament_tables")
    op.drop_table("tournament_entries")
    op.drop_table("tournaments")
    op.drop_table("tournament_schedules")
