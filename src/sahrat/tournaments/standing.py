"""Who goes through a knock-out table, and the standings of both formats
(docs/tournaments.md, "Placement points and tie-breaks")."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from .plan import Plan, going_through
from .results import TWELFTHS, Entrant, TableResult, check_result, placement_twelfths


@dataclass(frozen=True)
class Standing:
    """One entrant's line of the standings (bots have none)."""

    entrant: int
    place: int  # 1-based; equal for a full tie
    points: Fraction
    match_total: int
    opponents_strength: Fraction
    rounds_played: int
    out_in_round: int | None  # knock-out: the round it went out in; Swiss: the round it dropped


@dataclass
class Tally:
    """What history says of one entrant (bots too: they play, and their points count
    for their opponents and for seating)."""

    twelfths: int = 0  # points, in twelfths of a point
    match_total: int = 0
    opponents: list[int] = field(default_factory=list)  # one per meeting
    rounds_played: int = 0
    byes: int = 0
    dropped_in: int | None = None
    tables: list[TableResult] = field(default_factory=list)  # in round order
    table_twelfths: list[int] = field(default_factory=list)

    @property
    def points(self) -> Fraction:
        return Fraction(self.twelfths, TWELFTHS)


def merit(plan: Plan, total: int) -> int:
    """A match total turned so that more is better in both games: Konkan's points are
    lower for the better player, Conquian's deals won higher."""
    return -total if plan.game == "konkan" else total


def check_history(entrants: Sequence[Entrant], history: Sequence[Sequence[TableResult]]) -> None:
    """Raise ``ValueError`` unless the entrants are distinct and every round of
    ``history`` seats known entrants at most once, numbered in order, with nobody seated
    after they dropped out."""
    ids = [entrant.id for entrant in entrants]
    if len(set(ids)) != len(ids):
        raise ValueError("an entrant is listed twice")
    known = set(ids)
    gone: set[int] = set()
    for index, tables in enumerate(history, start=1):
        seen: set[int] = set()
        for result in tables:
            check_result(result)
            if result.round_no != index:
                raise ValueError(f"round {index} holds a table of round {result.round_no}")
            seats = set(result.seats)
            if not seats <= known:
                raise ValueError(f"round {index}: unknown entrants {sorted(seats - known)}")
            if seats & seen or seats & gone:
                raise ValueError(f"round {index}: {sorted(seats & (seen | gone))} seated again")
            seen |= seats
        gone |= {e for result in tables for e in result.dropped}


def tally(
    plan: Plan, entrants: Sequence[Entrant], history: Sequence[Sequence[TableResult]]
) -> dict[int, Tally]:
    """Each entrant's points, totals, opponents and tables so far."""
    check_history(entrants, history)
    tallies = {entrant.id: Tally() for entrant in entrants}
    for tables in history:
        for result in tables:
            points = placement_twelfths(result)
            for seat in result.seats:
                mine = tallies[seat]
                mine.twelfths += points[seat]
                mine.match_total += result.match_totals[seat]
                mine.opponents.extend(other for other in result.seats if other != seat)
                mine.rounds_played += 1
                mine.byes += len(result.seats) == 1
                mine.tables.append(result)
                mine.table_twelfths.append(points[seat])
                if seat in result.dropped:
                    mine.dropped_in = result.round_no
    return tallies


def opponents_strength(tallies: dict[int, Tally], entrant: int) -> Fraction:
    """The average of the points of every opponent met, one term per meeting (a bye is
    no meeting); 0 for nobody met."""
    met = tallies[entrant].opponents
    if not met:
        return Fraction(0)
    return Fraction(sum(tallies[other].twelfths for other in met), TWELFTHS * len(met))


def advancers(plan: Plan, result: TableResult, bots: Collection[int] = ()) -> list[int]:
    """The entrants of a knock-out table who go through, best first: as many as the
    table sends (``advance``, never the whole table; a bye goes through), taken in order
    of place, then better match total, then seat order, skipping bots and entrants who
    dropped out: the next player goes through instead."""
    check_result(result)
    position = {seat: index for index, seat in enumerate(result.seats)}
    ranked = sorted(
        result.seats,
        key=lambda e: (result.places[e], -merit(plan, result.match_totals[e]), position[e]),
    )
    eligible = [e for e in ranked if e not in bots and e not in result.dropped]
    return eligible[: going_through(plan, len(result.seats))]


def still_in(
    plan: Plan, entrants: Sequence[Entrant], history: Sequence[Sequence[TableResult]]
) -> list[int]:
    """The entrants who play the next round. Knock-out: everyone before round 1, then
    the advancers of the last round, by table and within a table best first. Swiss:
    every entrant (bots included) who has not dropped out."""
    check_history(entrants, history)
    if plan.format == "swiss":
        gone = {e for tables in history for result in tables for e in result.dropped}
        return [entrant.id for entrant in entrants if entrant.id not in gone]
    if not history:
        return [entrant.id for entrant in entrants]
    bots = {entrant.id for entrant in entrants if entrant.bot}
    return [e for result in history[-1] for e in advancers(plan, result, bots)]


def finished(
    plan: Plan, entrants: Sequence[Entrant], history: Sequence[Sequence[TableResult]]
) -> bool:
    """Whether ``history`` holds the whole tournament: a Swiss after its rounds, a
    knock-out after its final (a round of one table); either once fewer than two
    players are left to seat."""
    left = still_in(plan, entrants, history)
    if len(left) < 2:
        return True
    if plan.format == "swiss":
        return len(history) >= plan.rounds
    return bool(history) and len(history[-1]) == 1


Key = tuple[object, ...]


def _ranked(keyed: list[tuple[Key, Key, int]]) -> list[tuple[int, int]]:
    """(entrant, place) best first from (merit key, order key, entrant): sorted by both
    keys, and an equal place for equal merit keys (one more than the entrants ahead)."""
    keyed.sort(key=lambda item: (item[0], item[1]))
    placed: list[tuple[int, int]] = []
    for index, (key, _, entrant) in enumerate(keyed):
        tied = index and keyed[index - 1][0] == key
        placed.append((entrant, placed[-1][1] if tied else index + 1))
    return placed


def standings(
    plan: Plan, entrants: Sequence[Entrant], history: Sequence[Sequence[TableResult]]
) -> list[Standing]:
    """The standings, best first, tie-breaks applied (docs/tournaments.md, "Placement
    points and tie-breaks"); bots are left out, and leave no gap in the places.

    Swiss: by points, then match total (better first), then opponents' strength, then
    rating and entry id for the order alone: two entrants share a place only when the
    first three are equal. Knock-out: the final table's players by their places there,
    then those who went out, by the round they went out in (later first), and within a
    round by their placement points and then match total at that table; players still
    in (a knock-out under way) come first, by points and match total so far."""
    tallies = tally(plan, entrants, history)
    rating = {entrant.id: entrant.rating for entrant in entrants}
    people = [entrant.id for entrant in entrants if not entrant.bot]
    out = _went_out(plan, entrants, history)
    keyed: list[tuple[Key, Key, int]] = []
    for e in people:
        mine = tallies[e]
        order: Key = (-rating[e], e)
        key: Key
        if plan.format == "swiss":
            strength = opponents_strength(tallies, e)
            key = (-mine.twelfths, -merit(plan, mine.match_total), -strength)
        elif history and not mine.tables:  # never seated (not in the draw): last
            key = (2,)
        elif e in out:
            last = len(mine.tables) - 1
            table = mine.tables[last]
            at_table = merit(plan, table.match_totals[e])
            if out[e] is None:  # played the final: its place there decides
                key = (0, 0, table.places[e])
            else:
                key = (1, -(out[e] or 0), -mine.table_twelfths[last], -at_table)
        else:
            key = (0, 1, -mine.twelfths, -merit(plan, mine.match_total))
        keyed.append((key, order, e))
    lines = []
    for e, place in _ranked(keyed):
        mine = tallies[e]
        went = out.get(e) if plan.format == "knockout" else mine.dropped_in
        lines.append(
            Standing(
                entrant=e,
                place=place,
                points=mine.points,
                match_total=mine.match_total,
                opponents_strength=opponents_strength(tallies, e),
                rounds_played=mine.rounds_played,
                out_in_round=went,
            )
        )
    return lines


def _went_out(
    plan: Plan,
    entrants: Sequence[Entrant],
    history: Sequence[Sequence[TableResult]],
) -> dict[int, int | None]:
    """Knock-out: entrant -> the round it went out in, or None for a player of a played
    final; players still in are absent."""
    if plan.format != "knockout":
        return {}
    bots = {entrant.id for entrant in entrants if entrant.bot}
    out: dict[int, int | None] = {}
    over = finished(plan, entrants, history)
    for round_no, tables in enumerate(history, start=1):
        final = over and round_no == len(history) and len(tables) == 1
        for result in tables:
            through = set(advancers(plan, result, bots))
            for seat in result.seats:
                if final:
                    out[seat] = None
                elif seat not in through:
                    out[seat] = result.round_no
    if over and history and len(history[-1]) > 1:
        # ended without a final (too few left to seat): the one left, if any, won
        for e in still_in(plan, entrants, history):
            out[e] = None
    return out
