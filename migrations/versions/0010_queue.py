"""Rated quick play's queue (docs/rating.md, "Pairing"): ``queue_entries``, one row per
waiting (or just seated) player, shared by every server process so that players who
reached different processes meet, and a player who reconnects finds their place.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "queue_entries",
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("game", sa.String(length=20), nullable=False),
        sa.Column("pool", sa.String(length=16), nullable=False),
        sa.Column("players", sa.Integer(), nullable=False),
        sa.Column("threshold", sa.Integer(), nullable=True),
        sa.Column("speed", sa.String(length=8), nullable=False),
        sa.Column("turn_seconds", sa.Integer(), nullable=False),
        sa.Column("rating", sa.Integer(), nullable=False),
        sa.Column("network", sa.String(length=64), nullable=True),
        sa.Column("joined_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("claimed_by", sa.String(length=32), nullable=True),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("table_id", sa.Integer(), nullable=True),
        sa.Column("seated_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("user_id"),
    )
    op.create_index("ix_queue_entries_waiting", "queue_entries", ["table_id", "pool"])


def downgrade() -> None:
    op.drop_index("ix_queue_entries_waiting", table_name="queue_entries")
    op.drop_table("queue_entries")
