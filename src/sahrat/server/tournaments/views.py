"""A tournament as the REST API shows it (docs/tournaments.md, "REST"): its summary for
the list, and the whole of it for its page: the entrants, the live standings (the pure
rules' over the finished rounds), each round's tables, the prizes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from fractions import Fraction
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from sahrat import tournaments as rules
from sahrat.server.tournaments.shapes import entrants_of, history_of, plan_of
from sahrat.store import accounts, tournament_rounds
from sahrat.store import tournaments as store
from sahrat.store.queue import aware
from sahrat.store.tournament_models import Tournament, TournamentEntry, TournamentTable

LISTS = {
    "coming": ("registering",),
    "running": ("running",),
    "finished": ("complaints", "finished", "cancelled"),
}


def iso(moment: datetime | None) -> str | None:
    return None if moment is None else aware(moment).astimezone(UTC).isoformat()


def fraction(value: Fraction) -> str:
    """A fraction as text: "2", "-1/3"."""
    return str(value)


def projected_pool(row: Tournament, paid: int) -> int:
    """The pool as it stands: the result's once known, else the fees paid so far less
    the house's share."""
    if row.state in ("complaints", "finished"):
        return row.pool
    if row.fee <= 0 or paid <= 0:
        return 0
    return rules.pool_and_house(row.fee, paid, row.house_permille)[0]


def summary(
    row: Tournament, registered: int, paid: int, makers: Mapping[int, str]
) -> dict[str, Any]:
    return {
        "id": row.id,
        "name": row.name,
        "game": row.game,
        "format": row.format,
        "seats": row.seats,
        "rounds": row.rounds,
        "advance": row.advance,
        "fee": row.fee,
        "pool": projected_pool(row, paid),
        "starts_at": iso(row.starts_at),
        "state": row.state,
        "registered": registered,
        "made_by": "system" if row.made_by is None else makers.get(row.made_by, "?"),
        "version": row.version,
    }


async def summaries(session: AsyncSession, rows: Sequence[Tournament]) -> list[dict[str, Any]]:
    ids = [row.id for row in rows]
    counts = await store.registered_counts(session, ids)
    makers = await accounts.names_of(session, [r.made_by for r in rows if r.made_by is not None])
    return [summary(row, counts[row.id], counts[row.id], makers) for row in rows]


def _rounds(tables: Sequence[TournamentTable]) -> list[dict[str, Any]]:
    rounds: dict[int, list[dict[str, Any]]] = {}
    for table in tables:
        places = tournament_rounds.places_of(table)
        rounds.setdefault(table.round_no, []).append(
            {
                "table_no": table.table_no,
                "table_id": table.table_id,
                "seats": [int(entry) for entry in table.seats],
                "state": table.state,
                "places": None if places is None else {str(e): p for e, p in places.items()},
            }
        )
    return [{"round": number, "tables": rounds[number]} for number in sorted(rounds)]


def _standings(
    row: Tournament, entries: Sequence[TournamentEntry], tables: Sequence[TournamentTable]
) -> list[dict[str, Any]]:
    by_id = {entry.id: entry for entry in entries}
    if row.state == "registering" or not entries:
        return []
    lines = rules.standings(plan_of(row), entrants_of(entries), history_of(tables))
    held = row.state in ("complaints", "finished")
    return [
        {
            "place": line.place,
            "entry": line.entrant,
            "name": by_id[line.entrant].name if line.entrant in by_id else "?",
            "points": fraction(line.points),
            "match_total": line.match_total,
            "opponents_strength": fraction(line.opponents_strength),
            "rounds_played": line.rounds_played,
            "out_in_round": line.out_in_round,
            "prize": by_id[line.entrant].prize if held and line.entrant in by_id else None,
        }
        for line in lines
    ]


def _prize_table(row: Tournament, pool: int, entrants: int) -> list[dict[str, Any]]:
    if pool <= 0 or entrants <= 0:
        return []
    split = rules.prize_split(pool, rules.paid_places(entrants), entrants)
    return [{"place": place, "coins": coins} for place, coins in enumerate(split, 1) if coins]


async def detail(session: AsyncSession, row: Tournament, me: dict[str, Any]) -> dict[str, Any]:
    entries = await store.entries(session, row.id)
    tables = await tournament_rounds.tables(session, row.id)
    people = [entry for entry in entries if not entry.bot]
    paid = sum(1 for entry in entries if entry.fee_paid > 0)
    makers = await accounts.names_of(session, [row.made_by] if row.made_by else [])
    out = summary(row, len(people), paid, makers)
    complaints = await store.complaints(session, row.id)
    out.update(
        round_count=out["rounds"],
        me=me,
        entrants=[
            {
                "entry": entry.id,
                "user_id": entry.user_id,
                "name": entry.name,
                "bot": entry.bot,
                "rating": entry.rating,
                "dropped": entry.dropped,
                "no_show": entry.no_show,
            }
            for entry in entries
        ],
        standings=_standings(row, entries, tables),
        rounds=_rounds(tables),
        prizes=_prize_table(row, out["pool"], max(len(people), paid)),
        complaint_until=iso(row.complaint_until),
        complaints_open=sum(1 for c in complaints if c.state == "open"),
    )
    return out
