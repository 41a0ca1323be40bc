"""A round's table at the game tables, as the rated queue's ``seat_from_queue`` opens
one: a free, unrated, private table (its invite code is the tournament's: nobody else
can take a seat while its entrants sit down; a prize tournament's with its spectators
a round behind), its entrants seated in the seats the
rules gave them, bots in the seats of bot entrants and of entrants who may not sit
(suspended), and the match dealt when the last seat fills.

Opening is re-entrant: a step that died half-way (the table made, some seated) is
taken up where it stopped, the table's id being stored as soon as it exists.

A finished table's result is read from its first match's rows, never decided again:
the places of the score sheet (``settlement.seat_place``), the match's totals, and the
entrants a bot finished for (their seat not their own at the end: left, forfeited to
the timer, never come, suspended). A table with no person at it (bots only) is not
played: its places are drawn from the tournament's seed.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from sahrat.server.hub import Hub
from sahrat.server.table.errors import TableError
from sahrat.server.table.settlement import seat_place
from sahrat.server.tournaments.shapes import table_options
from sahrat.settings import Settings
from sahrat.store import tournament_rounds
from sahrat.store.models import GameTable
from sahrat.store.tournament_models import Tournament, TournamentEntry, TournamentTable

log = logging.getLogger("sahrat.tournaments")

# a seat's answer that means the seat is already as wanted (a step taken up again)
ALREADY = ("already_seated", "table_started", "seat_taken", "table_full")


@dataclass(frozen=True)
class Result:
    """A table's result by entry id."""

    places: dict[int, int]
    totals: dict[int, int]
    dropped: frozenset[int]
    match_id: int | None
    idle: frozenset[int] = frozenset()  # of the dropped, those who made no move of their own


def drawn_result(
    tournament: Tournament, row: TournamentTable, dropped: Sequence[int], came: bool
) -> Result:
    """A table nobody can play (bots only, or closed before its match): places drawn
    from the tournament's seed, totals 0; its people, if any, dropped (and no-shows
    unless they ``came``: sat down and left)."""
    seats = [int(entry) for entry in row.seats]
    order = list(seats)
    random.Random(f"{tournament.seed}:{row.round_no}:{row.table_no}").shuffle(order)
    places = {entry: order.index(entry) + 1 for entry in seats}
    idle = frozenset() if came else frozenset(dropped)
    return Result(places, dict.fromkeys(seats, 0), frozenset(dropped), None, idle)


async def sitters(
    hub: Hub, row: TournamentTable, entries: Mapping[int, TournamentEntry]
) -> list[tuple[int, int]]:
    """(seat, user id) of the entrants of ``row`` who sit down themselves: people who
    have not dropped and may sit now."""
    seated = []
    for seat, entry_id in enumerate(row.seats):
        entry = entries[int(entry_id)]
        if entry.user_id is None or entry.bot or entry.dropped:
            continue
        try:
            await hub.check_can_sit(entry.user_id, 0)
        except TableError as refused:
            log.info("tournament: entrant %s may not sit (%s)", entry.id, refused.code)
            continue
        seated.append((seat, entry.user_id))
    return seated


async def open_table(
    hub: Hub,
    sessions: async_sessionmaker[Any],
    settings: Settings,
    tournament: Tournament,
    row: TournamentTable,
    people: Sequence[tuple[int, int]],
) -> int:
    """Open (or go on opening) the game table of ``row`` for ``people`` (seat, user id),
    not empty; its id."""
    creator = people[0][1]
    table_id = row.table_id
    if table_id is None:
        info = await hub.create_table(
            creator,
            tournament.game,
            table_options(settings, tournament.game, len(row.seats)),
            True,
            sit=False,
            capped=False,  # the tournament opens it: not one of the creator's own
            chat=True,
            # a prize tournament's spectators see each round once it is over, so that
            # nobody can pass a player's hand to a friend at the table
            spectator_delay=tournament.fee > 0,
            tournament_id=tournament.id,
        )
        table_id = int(info["id"])
        async with sessions() as session, session.begin():
            await tournament_rounds.opened(session, row.id, tournament.id, table_id)
        row.table_id = table_id
    invite = await _invite(sessions, table_id)
    for seat, user_id in people:
        try:
            await hub.call(table_id, "join", user_id=user_id, seat=seat, invite=invite)
        except TableError as error:
            if error.code not in ALREADY:  # refused since (suspended): a bot takes the seat
                log.warning("tournament table %s: %s refused (%s)", table_id, user_id, error.code)
    # bots in the seats left (a full table dealt itself at its last join: "table_started")
    try:
        await hub.call(table_id, "start", user_id=creator, level=None, invite=invite)
    except TableError as error:
        if error.code not in ALREADY:
            raise
    return table_id


async def _invite(sessions: async_sessionmaker[Any], table_id: int) -> str | None:
    async with sessions() as session:
        code: str | None = await session.scalar(
            select(GameTable.invite_code).where(GameTable.id == table_id)
        )
    return code


async def read_result(
    session: AsyncSession,
    tournament: Tournament,
    row: TournamentTable,
    entries: Mapping[int, TournamentEntry],
) -> Result | None:
    """The result of a table whose game table's match is over; None while it plays."""
    if row.table_id is None:
        return None
    status = await tournament_rounds.table_status(session, row.table_id)
    found = await tournament_rounds.first_match(session, row.table_id)
    seats = [int(entry) for entry in row.seats]
    people = [e for e in seats if entries[e].user_id is not None and not entries[e].bot]
    if found is None:
        if status == "closed":  # its people all left and bots alone played on
            return drawn_result(tournament, row, people, came=True)
        return None
    match, players = found
    sheet, winner = match.score_sheet, match.winner_seat
    own = {play.seat: play for play in players}
    places, totals = {}, {}
    for seat, entry in enumerate(seats):
        places[entry] = seat_place(tournament.game, sheet, winner, seat) or len(seats)
        sheet_totals = sheet.get("totals")
        total = sheet_totals[seat] if isinstance(sheet_totals, list) else 0
        totals[entry] = int(total) if isinstance(total, int) else 0
    # dropped: a bot finished for them (left, forfeited), or they made no move of their
    # own at all (the timer played every turn of theirs: they never came, even if the
    # match ended before the timer forfeited the seat)
    dropped = frozenset(
        entry
        for seat, entry in enumerate(seats)
        if entry in people
        and (seat not in own or not own[seat].in_seat_at_end or own[seat].own_turns == 0)
    )
    idle = frozenset(
        entry
        for seat, entry in enumerate(seats)
        if entry in dropped and (seat not in own or own[seat].own_turns == 0)
    )
    return Result(places, totals, dropped, match.id, idle)
