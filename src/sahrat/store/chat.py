"""Reported chat messages (``chat_reports``; docs/social.md, "Chat").

A table's chat lives in the memory of the process that serves it; a reported message is
written here with its words, who said it and who reported it, so that the admins read
it after the table is gone. A reporter reports a message once: a second report of the
same message by them is the first one again. Like the rest of the store, these
functions work inside a caller's session.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from .models import ChatReport, User


async def add_report(
    session: AsyncSession,
    *,
    table_id: int,
    reporter_id: int,
    fields: dict[str, Any],
    now: datetime | None = None,
) -> tuple[ChatReport, bool]:
    """Keep a report of a message (``fields``: ``social.chat.report_fields``); the report
    and whether it is new (False: this reporter had reported the message already)."""
    found = await session.scalar(
        select(ChatReport).where(
            ChatReport.message_id == fields["message_id"], ChatReport.reporter_id == reporter_id
        )
    )
    if found is not None:
        return found, False
    row = ChatReport(
        table_id=table_id,
        message_id=fields["message_id"],
        sender_id=fields["sender_id"],
        sender_seat=fields["sender_seat"],
        reporter_id=reporter_id,
        channel=fields["channel"],
        text=fields["text"],
        phrase=fields["phrase"],
        said_at=datetime.fromtimestamp(float(fields["said_at"]), UTC),
        reported_at=now or datetime.now(UTC),
    )
    session.add(row)
    await session.flush()
    return row, True


async def reports(
    session: AsyncSession, *, before: int | None = None, limit: int = 50
) -> Sequence[tuple[ChatReport, str, bool, str]]:
    """The newest reports first (those with an id below ``before``, if given): each with
    its sender's name and whether the sender is suspended, and its reporter's name."""
    sender, reporter = aliased(User), aliased(User)
    query = (
        select(ChatReport, sender.name, sender.suspended, reporter.name)
        .join(sender, sender.id == ChatReport.sender_id)
        .join(reporter, reporter.id == ChatReport.reporter_id)
    )
    if before is not None:
        query = query.where(ChatReport.id < before)
    rows = (await session.execute(query.order_by(ChatReport.id.desc()).limit(limit))).all()
    return [(row[0], row[1], bool(row[2]), row[3]) for row in rows]
