"""Reports of table chat messages (docs/social.md, "Chat"): a player reports a message
they were sent (``POST /api/tables/{id}/chat/{message_id}/report``, tagged ``tables``),
and the admins read the reports (``GET /api/admin/chat/reports``, tagged ``admin``) and
suspend a sender with ``POST /api/admin/players/{id}/suspend``.

The message is looked up at the table's own process (``Hub.call``: the chat lives in
its memory), and the report written to the database with the message's words.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query, Request, Response, status
from pydantic import BaseModel, Field

from sahrat.server.api.admin import Admin
from sahrat.server.api.deps import (
    MAX_ID,
    CurrentUser,
    HubDep,
    TableId,
    check_limits,
    responses,
    table_errors,
)
from sahrat.server.api.models import utc
from sahrat.server.limits import Throttle
from sahrat.store import chat as store_chat
from sahrat.store.tables import in_session, in_transaction

REPORTS_PER_HOUR = 30  # an account's reports an hour (this process's count)
REPORTS_PAGE = 50

MessageId = Annotated[str, Path(min_length=1, max_length=32, pattern=r"^[A-Za-z0-9_-]+$")]

router = APIRouter()


class ReportOut(BaseModel):
    """A report kept (or kept already: a message is reported once by each player)."""

    id: int = Field(description="the report's id")
    message_id: str
    table_id: int


class ChatReportOut(BaseModel):
    """A reported message, with its words as they were said."""

    id: int
    table_id: int
    message_id: str
    sender_id: int
    sender_name: str
    sender_suspended: bool = Field(description="suspended since (or before)")
    sender_seat: int | None = Field(description="null: the sender was a spectator")
    channel: Literal["players", "spectators"]
    text: str | None
    phrase: str | None = Field(description="a quick phrase's key")
    reporter_id: int
    reporter_name: str
    said_at: datetime
    reported_at: datetime


def _report_throttle(request: Request) -> Throttle:
    throttle: Throttle | None = getattr(request.app.state, "chat_reports", None)
    if throttle is None:
        throttle = request.app.state.chat_reports = Throttle(REPORTS_PER_HOUR, 3600.0)
    return throttle


@router.post(
    "/api/tables/{table_id}/chat/{message_id}/report",
    tags=["tables"],
    status_code=status.HTTP_201_CREATED,
    response_model=ReportOut,
    responses={200: {"model": ReportOut}, **responses(401, 404, 409, 429)},
)
async def report_message(
    table_id: TableId,
    message_id: MessageId,
    user: CurrentUser,
    hub: HubDep,
    request: Request,
    response: Response,
) -> ReportOut:
    """Report a chat message of this table that you were sent (201; 200 if you had
    reported it already). The table keeps its last 50 messages: an older one, one
    you were not sent, or a table you are not at is 404 ``no_such_message``; your own
    message is 409 ``chat_own_message``. An account may report 30 messages an hour
    (429 ``too_many_reports``)."""
    check_limits(
        "too_many_reports",
        f"an account may report {REPORTS_PER_HOUR} messages an hour; try again later",
        (_report_throttle(request), str(user.id)),
    )
    with table_errors():
        fields = await hub.call(table_id, "chat_report", user_id=user.id, message_id=message_id)
    row, new = await in_transaction(
        hub.sessions,
        lambda session: store_chat.add_report(
            session, table_id=table_id, reporter_id=user.id, fields=fields
        ),
    )
    if not new:
        response.status_code = status.HTTP_200_OK
    return ReportOut(id=row.id, message_id=row.message_id, table_id=row.table_id)


@router.get(
    "/api/admin/chat/reports",
    tags=["admin"],
    response_model=list[ChatReportOut],
    responses=responses(401, 403),
)
async def list_reports(
    admin: Admin,
    hub: HubDep,
    before: Annotated[
        int | None, Query(ge=1, le=MAX_ID, description="the next page: the last id of this one")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=200, description="reports in a page")] = REPORTS_PAGE,
) -> list[ChatReportOut]:
    """The reported chat messages, newest first, a page at a time (``before``: the
    last id of the page before). Suspend a sender with
    ``POST /api/admin/players/{player_id}/suspend``."""
    found = await in_session(
        hub.sessions, lambda session: store_chat.reports(session, before=before, limit=limit)
    )
    return [
        ChatReportOut(
            id=row.id,
            table_id=row.table_id,
            message_id=row.message_id,
            sender_id=row.sender_id,
            sender_name=sender,
            sender_suspended=suspended,
            sender_seat=row.sender_seat,
            channel="spectators" if row.channel == "spectators" else "players",
            text=row.text,
            phrase=row.phrase,
            reporter_id=row.reporter_id,
            reporter_name=reporter,
            said_at=utc(row.said_at),
            reported_at=utc(row.reported_at),
        )
        for row, sender, suspended, reporter in found
    ]
