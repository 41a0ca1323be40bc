"""Entrants, one table's result and its placement points (docs/tournaments.md,
"Placement points and tie-breaks")."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction

BYE_POINTS = Fraction(3)  # a bye scores as a win


@dataclass(frozen=True)
class Entrant:
    """One entry: ``id`` stable within the tournament, ``rating`` its seeding strength,
    ``bot`` a seat nobody came to, played by a bot: it plays and earns no standing."""

    id: int
    rating: float
    bot: bool = False


@dataclass(frozen=True)
class TableResult:
    """One table of one round, played to its end.

    ``places``: 1 the best, equal for a tie. ``match_totals``: the match's total per
    entrant (Konkan: points, lower is better; Conquian: deals won, higher is better).
    ``dropped``: entrants who left during the table (a bot finished it for them)."""

    round_no: int
    table_no: int
    seats: tuple[int, ...]
    places: Mapping[int, int]
    match_totals: Mapping[int, int]
    dropped: frozenset[int] = field(default_factory=frozenset)


def check_result(result: TableResult) -> None:
    """Raise ``ValueError`` unless ``result`` seats 1 to 4 entrants, none twice, each
    with a place of 1 to the table's size and a match total."""
    seats = result.seats
    if not 1 <= len(seats) <= MOST_SEATS:
        raise ValueError(f"table {result.table_no}: a table seats 1 to {MOST_SEATS}")
    if len(set(seats)) != len(seats):
        raise ValueError(f"table {result.table_no}: seats {seats} are empty or repeated")
    if set(result.places) != set(seats) or set(result.match_totals) != set(seats):
        raise ValueError(f"table {result.table_no}: a place and a total for every seat")
    if any(not 1 <= place <= len(seats) for place in result.places.values()):
        raise ValueError(f"table {result.table_no}: places run from 1 to {len(seats)}")
    if not result.dropped <= set(seats):
        raise ValueError(f"table {result.table_no}: only a seated entrant can drop out")


# Points are kept in twelfths of a point: at tables of 1 to 4 every placement point,
# tie averages included, is a whole number of twelfths (the base points are whole, and
# a tie divides by 2, 3 or 4), so sums and comparisons stay in exact integer arithmetic.
TWELFTHS = 12
MOST_SEATS = 4


def table_points(size: int, position: int) -> Fraction:
    """The placement points of ``position`` (1 the best) at a table of ``size``:
    ``3(size+1-2 position)/(size-1)``, from +3 for the first to -3 for the last
    (+3/+1/-1/-3 at 4, +3/0/-3 at 3, +3/-3 at 2)."""
    if size == 1:
        return BYE_POINTS
    return Fraction(3 * (size + 1 - 2 * position), size - 1)


def _twelfths(size: int, position: int) -> int:
    """:func:`table_points` in twelfths (whole: ``size - 1`` is 1, 2 or 3, and divides 36)."""
    if size == 1:
        return int(BYE_POINTS * TWELFTHS)
    return TWELFTHS * 3 * (size + 1 - 2 * position) // (size - 1)


def placement_twelfths(result: TableResult) -> dict[int, int]:
    """:func:`placement_points` in twelfths of a point (whole numbers)."""
    check_result(result)
    size = len(result.seats)
    groups: dict[int, list[int]] = {}
    for seat in result.seats:
        groups.setdefault(result.places[seat], []).append(seat)
    twelfths: dict[int, int] = {}
    position = 1
    for place in sorted(groups):
        tied = groups[place]
        spanned = range(position, position + len(tied))
        share, rest = divmod(sum(_twelfths(size, p) for p in spanned), len(tied))
        assert rest == 0, "a tie of at most four divides twelfths evenly"
        twelfths.update((seat, share) for seat in tied)
        position += len(tied)
    return twelfths


def placement_points(result: TableResult) -> dict[int, Fraction]:
    """Each seat's placement points: ``3(n+1-2p)/(n-1)`` at a table of ``n``; seats tied
    for a place take the positions it spans and each the average of their points (two
    tied firsts of four: (3+1)/2 = 2 each). A bye (a table of one) scores
    :data:`BYE_POINTS`. A table's points sum to 0 (a bye's excepted)."""
    return {seat: Fraction(t, TWELFTHS) for seat, t in placement_twelfths(result).items()}


def bye_result(round_no: int, table_no: int, entrant: int) -> TableResult:
    """The result of a bye: a table of one, first, with a match total of 0 (no deal
    played, so no deal won and no point taken)."""
    return TableResult(round_no, table_no, (entrant,), {entrant: 1}, {entrant: 0})
