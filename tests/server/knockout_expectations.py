"""What a Konkan knock-out's result must be, worked out from docs/tournaments.md alone
(never from the server's code): the snake seating, who goes through a table, and the
standings' every line. Shared by the knock-out tests on one process and on two."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from fractions import Fraction
from typing import Any

from .tournament_support import table_points


def snake(players: list[int], sizes: list[int]) -> list[list[int]]:
    """Players (best first) dealt to tables of ``sizes``: one each to tables 1..T, the
    next row back from T to 1, and so on, passing full tables."""
    tables: list[list[int]] = [[] for _ in sizes]
    order = list(range(len(sizes)))
    dealt = 0
    while dealt < len(players):
        for t in order:
            if len(tables[t]) < sizes[t] and dealt < len(players):
                tables[t].append(players[dealt])
                dealt += 1
        order.reverse()
    return tables


def through(
    seats: list[int], places: dict[int, int], totals: dict[int, int], out: set[int]
) -> list[int]:
    """Who goes through a Konkan table, first to go through first: best place, then
    the lower (better) match total, then the seat order; skipping bots and those who
    dropped out; two, but never the whole table (one from a table of 2)."""
    ranked = sorted(seats, key=lambda e: (places[e], totals[e], seats.index(e)))
    return [e for e in ranked if e not in out][: min(2, len(seats) - 1)]


def check_standings(
    lines: Sequence[Mapping[str, Any]],
    results: Sequence[Sequence[Mapping[str, Any]]],
    entrants: Collection[int],
    people: Collection[int],
    strength: Mapping[int, int],
) -> None:
    """Every standing line of a finished knock-out: its players ordered by how far they
    got (the final's by their place there; the others by the round they went out in,
    later first, then the points scored at that table, then the match total), then by
    seed (``strength``: higher first), then entry; a place shared only by equals; each
    line's points, match total, opponents' strength (the average of the points of every
    opponent met), rounds played and the round they went out in. ``results``: each
    round's tables with ``seats``, ``places`` and ``totals`` by entry."""
    final_round = len(results)
    points: dict[int, Fraction] = dict.fromkeys(entrants, Fraction(0))
    totals: dict[int, int] = dict.fromkeys(entrants, 0)
    met: dict[int, list[int]] = {e: [] for e in entrants}
    played_rounds: dict[int, int] = dict.fromkeys(entrants, 0)
    last: dict[int, tuple[int, Fraction, int, int]] = {}  # round, points, total, place there
    for round_no, tables in enumerate(results, start=1):
        for table in tables:
            scored = table_points(table["places"])
            for e in table["seats"]:
                points[e] += scored[e]
                totals[e] += table["totals"][e]
                met[e] += [o for o in table["seats"] if o != e]
                played_rounds[e] += 1
                last[e] = (round_no, scored[e], table["totals"][e], table["places"][e])

    def merit(e: int) -> tuple[object, ...]:
        round_no, scored, total, place = last[e]
        if round_no == final_round:
            return (0, place)
        return (1, -round_no, -scored, total)

    order = sorted(people, key=lambda e: (merit(e), -strength[e], e))
    assert [line["entry"] for line in lines] == order
    for line in lines:
        e = line["entry"]
        assert line["place"] == 1 + sum(merit(o) < merit(e) for o in people)
        assert Fraction(line["points"]) == points[e]
        assert line["match_total"] == totals[e]
        assert Fraction(line["opponents_strength"]) == sum(
            (points[o] for o in met[e]), Fraction(0)
        ) / len(met[e])
        assert line["rounds_played"] == played_rounds[e]
        assert line["out_in_round"] == (None if last[e][0] == final_round else last[e][0])
