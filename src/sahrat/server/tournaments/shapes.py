"""A tournament's rows as the pure rules read them (``sahrat.tournaments``): the plan,
the entrants, and the results of its finished tables, round by round."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sahrat import tournaments as rules
from sahrat.settings import Settings
from sahrat.store import tournament_rounds
from sahrat.store.tournament_models import Tournament, TournamentEntry, TournamentTable


def plan_of(row: Tournament) -> rules.Plan:
    return rules.Plan(
        game=row.game,  # type: ignore[arg-type]
        format=row.format,  # type: ignore[arg-type]
        seats=row.seats,
        rounds=row.rounds,
        advance=row.advance,
    )


def entrants_of(entries: Sequence[TournamentEntry]) -> list[rules.Entrant]:
    """The entrants: a bot seat, and a person who never came (no standing either)."""
    return [rules.Entrant(id=e.id, rating=float(e.rating), bot=e.bot or e.no_show) for e in entries]


def result_of(row: TournamentTable) -> rules.TableResult:
    places = tournament_rounds.places_of(row) or {}
    return rules.TableResult(
        round_no=row.round_no,
        table_no=row.table_no,
        seats=tuple(int(entry) for entry in row.seats),
        places=places,
        match_totals=tournament_rounds.totals_of(row),
        dropped=frozenset(int(entry) for entry in row.dropped or ()),
    )


def history_of(tables: Sequence[TournamentTable]) -> list[list[rules.TableResult]]:
    """The finished rounds' results, round 1 first (a round counts once every one of
    its tables is finished)."""
    rounds: dict[int, list[TournamentTable]] = {}
    for row in tables:
        rounds.setdefault(row.round_no, []).append(row)
    history = []
    for round_no in sorted(rounds):
        rows = rounds[round_no]
        if any(row.state != "finished" for row in rows):
            break
        history.append([result_of(row) for row in sorted(rows, key=lambda r: r.table_no)])
    return history


def table_options(settings: Settings, game: str, players: int) -> dict[str, Any]:
    """The options of a tournament table: a free, unrated table of its seats, its
    match as long as the settings say."""
    if game == "conquian":
        return {"wins_needed": settings.tournament_conquian_wins}
    return {"players": players, "rounds": settings.tournament_konkan_rounds}


def seeding_pool(game: str) -> str:
    """The rating pool that seeds a tournament of ``game`` (Konkan at 51 points)."""
    return "conquian" if game == "conquian" else "konkan51"
