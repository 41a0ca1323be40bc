"""Finished matches (``/api/matches``, tagged ``matches``): a match with its game
record, and its replay a page at a time.

A public table's matches are anyone's to see; a private table's only its creator's,
its players' and an invite holder's, as the table itself.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request, status
from sqlalchemy import select
from sqlalchemy.orm import defer

from sahrat.rules.errors import RuleError
from sahrat.rules.record import GameRecord, Replayer
from sahrat.server.api.deps import MAX_ID, HubDep, Invite, MatchId, MaybeUser, http_error, responses
from sahrat.server.api.models import MatchDetail, ReplayOut, ReplayStep, match_fields
from sahrat.server.hub import Hub
from sahrat.store.models import Match, User

REPLAY_PAGE = 200  # steps in a page of a replay by default
REPLAY_PAGE_MAX = 500
REPLAYS_KEPT = 8  # replayed matches a process keeps ready for their next pages

router = APIRouter(prefix="/api/matches", tags=["matches"])


def _record_of(row: Match) -> dict[str, Any]:
    """A finished match's game record for the replay. A record of a match with bots
    names only the players' seats (docs/hardening.md, known bug 3, a table.py fix):
    the bots' seats are named here, so that it replays."""
    record = dict(row.record)
    names = list(record.get("seats") or [])
    owners = list(row.players or [])
    if names and len(names) != len(owners) and len(names) == sum(o is not None for o in owners):
        given = iter(names)
        record["seats"] = [
            next(given) if owner is not None else f"bot {seat}" for seat, owner in enumerate(owners)
        ]
    return record


async def _visible_match(
    match_id: int, viewer: User | None, invite: str | None, hub: Hub
) -> Match | None:
    """A finished match (its record not loaded), or None when there is none or the viewer
    may not see its table: a public table's matches are anyone's to see, a private
    table's only its creator's, its players' and an invite holder's (as the table)."""
    async with hub.sessions() as session:
        row = await session.scalar(
            select(Match).where(Match.id == match_id).options(defer(Match.record))
        )
    if not isinstance(row, Match):
        return None
    if not await hub.admits_stored(row.table_id, viewer.id if viewer else None, invite):
        return None
    return row


def _no_match(match_id: int) -> HTTPException:
    return http_error("no_such_match", f"there is no match {match_id}")


@router.get("/{match_id}", response_model=MatchDetail, responses=responses(401, 404))
async def get_match(
    match_id: MatchId, viewer: MaybeUser, hub: HubDep, invite: Invite = None
) -> MatchDetail:
    """A finished match with its whole game record (a private table's: as for its info)."""
    if await _visible_match(match_id, viewer, invite, hub) is None:
        raise _no_match(match_id)
    async with hub.sessions() as session:
        row = await session.get(Match, match_id)
    if row is None:
        raise _no_match(match_id)
    return MatchDetail.model_validate({**match_fields(row), "record": row.record})


class Replays:
    """The matches a process has replayed, kept (the last few) for their next pages, and
    a bound on how many it replays at once: replaying a whole match through the engine
    is the cost (linear in its length); a page from a kept match costs little."""

    def __init__(self, builds: int) -> None:
        self.kept: OrderedDict[int, Replayer] = OrderedDict()
        self.running = asyncio.Semaphore(builds)

    def get(self, match_id: int) -> Replayer | None:
        replayer: Replayer | None = self.kept.get(match_id)
        if replayer is not None:
            self.kept.move_to_end(match_id)
        return replayer

    def keep(self, match_id: int, replayer: Replayer) -> None:
        self.kept[match_id] = replayer
        while len(self.kept) > REPLAYS_KEPT:
            self.kept.popitem(last=False)


def _replays(request: Request) -> Replays:
    replays: Replays | None = getattr(request.app.state, "replays", None)
    if replays is None:
        replays = request.app.state.replays = Replays(request.app.state.hub.settings.replay_builds)
    return replays


def replay_page(replayer: Replayer, start: int, limit: int) -> list[ReplayStep]:
    """Steps ``start`` on: the spectator view without the match's history (which grows
    with the match) and every hand, so that a step costs the same in any round."""
    engine = replayer.engine
    return [
        ReplayStep(
            view=engine.view(state, None, history=False),
            hands=[[str(card) for card in hand] for hand in state.hands],
        )
        for state in replayer.states(start, limit)
    ]


@router.get("/{match_id}/replay", response_model=ReplayOut, responses=responses(401, 404, 409, 503))
async def get_replay(
    match_id: MatchId,
    request: Request,
    viewer: MaybeUser,
    hub: HubDep,
    invite: Invite = None,
    start: Annotated[
        int, Query(alias="from", ge=0, le=MAX_ID, description="the first step of the page")
    ] = 0,
    limit: Annotated[
        int, Query(ge=1, le=REPLAY_PAGE_MAX, description="steps in the page")
    ] = REPLAY_PAGE,
) -> ReplayOut:
    """A finished match step by step with every hand face up (the match is over: nothing
    in it is hidden any more), a page at a time. Who may see it: as ``GET
    /api/matches/{id}``. A process replays only so many matches at once (503 ``busy``
    with Retry-After beyond them)."""
    if await _visible_match(match_id, viewer, invite, hub) is None:
        raise _no_match(match_id)
    replays = _replays(request)
    if replays.running.locked():
        raise HTTPException(
            status.HTTP_503_SERVICE_UNAVAILABLE,
            detail={"code": "busy", "message": "too many replays at once; try again"},
            headers={"Retry-After": "2"},
        )
    async with replays.running:
        replayer = replays.get(match_id)
        if replayer is None:
            async with hub.sessions() as session:
                row = await session.get(Match, match_id)
            if row is None:
                raise _no_match(match_id)
            try:
                record = GameRecord.from_json(_record_of(row))
                replayer = await asyncio.to_thread(Replayer, record)
            except RuleError as error:  # e.g. an option an older version allowed
                raise http_error(
                    "not_replayable",
                    f"this match's record does not replay here: {error}",
                ) from error
            replays.keep(match_id, replayer)
        steps = await asyncio.to_thread(replay_page, replayer, start, limit)
    after = start + len(steps)
    return ReplayOut.model_validate(
        {
            "from": start,
            "total": replayer.steps,
            "next": after if after < replayer.steps else None,
            "steps": steps,
        }
    )
