"""A finished match's analysis (``/api/matches/{id}/analysis``, tagged ``matches``;
docs/analysis.md, "REST"): asked for once, made in this process's analysis pool
(``server/analysis_pool.py``), stored and served from the database afterwards.

Who may ask: whoever may see the match (``GET /api/matches/{id}``). A match in play
has no match row yet, so nothing of it can be asked for here.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, HTTPException, Request, Response, status
from pydantic import BaseModel, Field

from sahrat.analysis import NotAnalysable
from sahrat.server.analysis_pool import AnalysisPool, Busy, Progress, stored
from sahrat.server.api.deps import HubDep, Invite, MatchId, MaybeUser, http_error, responses
from sahrat.server.api.matches import _record_of, _visible_match
from sahrat.server.hub import Hub
from sahrat.store.models import Match

NOT_ANALYSED = ("conquian",)  # games the analysis does not cover yet

router = APIRouter(prefix="/api/matches", tags=["matches"])


class AnalysisOut(BaseModel):
    """Where a match's analysis stands; ``analysis`` once it is done (docs/analysis.md,
    "The format")."""

    status: Literal["none", "queued", "running", "done", "failed"]
    position: int | None = Field(default=None, description="queued: 1 is the next to run")
    progress: float | None = Field(default=None, description="the share of rounds done, 0-1")
    analysis: dict[str, Any] | None = None


def analysis_pool(request: Request) -> AnalysisPool:
    """The app's pool, made at start-up and closed at shutdown (``app.py``)."""
    pool: AnalysisPool = request.app.state.analysis
    return pool


def _out(progress: Progress) -> AnalysisOut:
    return AnalysisOut.model_validate(progress, from_attributes=True)


def _no_match(match_id: int) -> HTTPException:
    return http_error("no_such_match", f"there is no match {match_id}")


async def _standing(pool: AnalysisPool, hub: Hub, match_id: int) -> Progress:
    """Held here (queued or running), else stored (done), else failed here, else none."""
    held = pool.progress(match_id)
    if held is not None and held.status != "failed":
        return held
    body = await stored(hub.sessions, match_id)
    if body is not None:
        return Progress("done", progress=1.0, analysis=body)
    return held or Progress("none")


@router.post(
    "/{match_id}/analysis",
    response_model=AnalysisOut,
    status_code=status.HTTP_200_OK,
    responses={202: {"model": AnalysisOut}, **responses(401, 404, 409, 503)},
)
async def ask_analysis(
    match_id: MatchId,
    request: Request,
    response: Response,
    viewer: MaybeUser,
    hub: HubDep,
    invite: Invite = None,
) -> AnalysisOut:
    """Ask for a finished match's analysis: 200 with it when it is kept, else 202 and the
    match joins this process's queue (once: asking again joins nothing). Who may ask:
    whoever may see the match. 503 ``analysis_busy`` with Retry-After when the queue is
    full."""
    row = await _visible_match(match_id, viewer, invite, hub)
    if row is None:
        raise _no_match(match_id)
    pool = analysis_pool(request)
    standing = await _standing(pool, hub, match_id)
    if standing.status in ("done", "queued", "running"):
        response.status_code = 200 if standing.status == "done" else 202
        return _out(standing)
    if row.game in NOT_ANALYSED:
        raise http_error("not_analysable", f"{row.game} matches are not analysed yet")
    async with hub.sessions() as session:
        full = await session.get(Match, match_id)
    if full is None:
        raise _no_match(match_id)
    try:
        standing = await pool.request(match_id, _record_of(full))
    except NotAnalysable as error:
        raise http_error("not_analysable", f"this match cannot be analysed: {error}") from error
    except Busy as busy:
        raise HTTPException(
            status.HTTP_503_SERVICE_UNAVAILABLE,
            detail={"code": "analysis_busy", "message": "too many analyses waiting; try again"},
            headers={"Retry-After": str(busy.retry_after)},
        ) from busy
    response.status_code = 202
    return _out(standing)


@router.get("/{match_id}/analysis", response_model=AnalysisOut, responses=responses(401, 404))
async def get_analysis(
    match_id: MatchId, request: Request, viewer: MaybeUser, hub: HubDep, invite: Invite = None
) -> AnalysisOut:
    """Where a finished match's analysis stands: ``none`` (never asked here), ``queued``
    (``position`` 1 is next), ``running`` (``progress`` by rounds), ``done`` (with the
    ``analysis``) or ``failed``. Who may see it: as ``GET /api/matches/{id}``."""
    if await _visible_match(match_id, viewer, invite, hub) is None:
        raise _no_match(match_id)
    return _out(await _standing(analysis_pool(request), hub, match_id))
