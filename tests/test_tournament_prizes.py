"""Tournaments' entries and prizes (``sahrat.tournaments``), worked by hand from
docs/tournaments.md, "Prizes"."""

from __future__ import annotations

from fractions import Fraction

import pytest

from sahrat.tournaments import Standing, make_plan, paid_places, pool_and_house, prize_split
from sahrat.tournaments import prizes as prizes_of

PLAN = make_plan("konkan", "swiss", 64, 3)


def lines(*places: int) -> list[Standing]:
    """Standings with these places, entrants 1, 2, ... in that order."""
    return [
        Standing(i, place, Fraction(0), 0, Fraction(0), 3, None)
        for i, place in enumerate(places, start=1)
    ]


def test_the_pool_and_the_house() -> None:
    assert pool_and_house(100, 16, 100) == (1440, 160)
    # 21 coins, 125 permille: 2.625 rounded down to 2 for the house, 19 in the pool
    assert pool_and_house(7, 3, 125) == (19, 2)
    assert pool_and_house(0, 16, 100) == (0, 0)  # a free tournament
    assert pool_and_house(50, 4, 0) == (200, 0)
    with pytest.raises(ValueError):
        pool_and_house(50, 4, 1001)
    with pytest.raises(ValueError):
        pool_and_house(-1, 4, 100)


@pytest.mark.parametrize(
    ("field", "places"),
    [
        (0, 0),
        (1, 1),
        (2, 1),
        (3, 2),
        (4, 2),
        (5, 3),
        (8, 3),
        (9, 4),
        (16, 4),
        (17, 6),
        (32, 6),
        (33, 8),
        (64, 8),
        (65, 10),
        (1000, 10),
    ],
)
def test_paid_places(field: int, places: int) -> None:
    assert paid_places(field) == places


def test_prize_splits() -> None:
    assert prize_split(1000, 1, 5) == [1000]
    assert prize_split(1000, 2, 5) == [700, 300]  # as the coin tables
    # 500.5, 300.3, 200.2 rounded down sum to 1000: the coin left over to the first
    assert prize_split(1001, 3, 10) == [501, 300, 200]
    assert prize_split(1000, 4, 16) == [400, 300, 200, 100]
    # a place nobody can take is not paid: 3 players, the 3-place table
    assert prize_split(100, 4, 3) == [50, 30, 20]
    assert prize_split(0, 4, 16) == []
    assert prize_split(100, 0, 16) == []
    assert sum(prize_split(999_999, 10, 1000)) == 999_999


def test_tied_places_share_the_prizes_they_span() -> None:
    # 9 players: 4 places; 999 coins: 399, 299, 199, 99 rounded down (996), +3 to the
    # first: 402. Two tied seconds share 299 + 199 = 498.
    won = prizes_of(PLAN, lines(1, 2, 2, 4, 5, 6, 7, 8, 9), 999)
    assert won == {1: 402, 2: 249, 3: 249, 4: 99}
    # three tied firsts of 4 places, 1001 coins: 401 + 300 + 200 = 901 shared, 300 each
    # and the coin left over to the first of them in the standings' order
    won = prizes_of(PLAN, lines(1, 1, 1, 4, 5, 6, 7, 8, 9), 1001)
    assert won == {1: 301, 2: 300, 3: 300, 4: 100}
    assert sum(won.values()) == 1001


def test_a_tie_across_the_last_paid_place_shares_it() -> None:
    # 3 players: 2 places (70/30); two tied seconds share the 30 of the second place
    assert prizes_of(PLAN, lines(1, 2, 2), 100) == {1: 70, 2: 15, 3: 15}
    # 105: 73.5 and 31.5 rounded down (104), the coin left to the first (74); the 31
    # splits 16 + 15, the odd coin to the first of the tied in the standings' order
    assert prizes_of(PLAN, lines(1, 2, 2), 105) == {1: 74, 2: 16, 3: 15}


def test_nobody_to_pay_pays_nothing() -> None:
    assert prizes_of(PLAN, [], 500) == {}
    assert prizes_of(PLAN, lines(1, 2), 0) == {}
