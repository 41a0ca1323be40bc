"""Admins and the coin ledger: ``users.is_admin`` and ``users.suspended``; ledger
accounts, their balances (never negative, but for the house: checked by the
database) and the double-entry ledger with an idempotency key per movement; the
server defaults an admin sets.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _created() -> sa.Column[object]:
    return sa.Column(
        "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
    )


def upgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.add_column(
            sa.Column("is_admin", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(
            sa.Column("suspended", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    op.create_table(
        "ledger_accounts",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=True),
        sa.Column("table_id", sa.Integer(), nullable=True),
        _created(),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="RESTRICT"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("user_id"),
    )
    op.create_table(
        "balances",
        sa.Column("account_id", sa.String(length=64), nullable=False),
        sa.Column("balance", sa.BigInteger(), nullable=False),
        sa.CheckConstraint("balance >= 0 OR account_id = 'house'", name="ck_balances_non_negative"),
        sa.ForeignKeyConstraint(["account_id"], ["ledger_accounts.id"]),
        sa.PrimaryKeyConstraint("account_id"),
    )
    op.create_table(
        "ledger_entries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("idempotency_key", sa.String(length=200), nullable=False),
        sa.Column("debit_account", sa.String(length=64), nullable=False),
        sa.Column("credit_account", sa.String(length=64), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("reason", sa.String(length=32), nullable=False),
        sa.Column("table_id", sa.Integer(), nullable=True),
        sa.Column("match_seq", sa.Integer(), nullable=True),
        _created(),
        sa.CheckConstraint("amount > 0", name="ck_ledger_entries_positive"),
        sa.ForeignKeyConstraint(["debit_account"], ["ledger_accounts.id"]),
        sa.ForeignKeyConstraint(["credit_account"], ["ledger_accounts.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("idempotency_key"),
    )
    op.create_index("ix_ledger_entries_debit", "ledger_entries", ["debit_account"])
    op.create_index("ix_ledger_entries_credit", "ledger_entries", ["credit_account"])
    op.create_table(
        "server_settings",
        sa.Column("key", sa.String(length=40), nullable=False),
        sa.Column("value", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("key"),
    )


def downgrade() -> None:
    op.drop_table("server_settings")
    op.drop_index("ix_ledger_entries_credit", table_name="ledger_entries")
    op.drop_index("ix_ledger_entries_debit", table_name="ledger_entries")
    op.drop_table("ledger_entries")
    op.drop_table("balances")
    op.drop_table("ledger_accounts")
    with op.batch_alter_table("users") as batch:
        batch.drop_column("suspended")
        batch.drop_column("is_admin")
