"""The pool, the house's share and the prizes (docs/tournaments.md, "Prizes").

Coins are whole: every split is rounded down and the coins left over are given out by
a written rule, so the prizes always add up to the pool exactly and no coin is made or
lost (the ledger books them in one transaction with the result)."""

from __future__ import annotations

from collections.abc import Sequence

from .plan import Plan
from .standing import Standing

# The share of the pool (percent) of each paid place, best first, by the number of
# places paid. Two places pay as the coin tables of 3-4 seats (RULES.md 1.10); each
# table falls off steeply at the top, as tournament payouts do, and sums to 100.
PERCENT_BY_PLACES: dict[int, tuple[int, ...]] = {
    1: (100,),
    2: (70, 30),
    3: (50, 30, 20),
    4: (40, 30, 20, 10),
    5: (35, 25, 18, 12, 10),
    6: (30, 22, 16, 13, 10, 9),
    7: (28, 20, 15, 12, 10, 8, 7),
    8: (26, 19, 14, 11, 9, 8, 7, 6),
    9: (25, 18, 13, 10, 9, 8, 6, 6, 5),
    10: (24, 17, 12, 10, 8, 7, 6, 6, 5, 5),
}
# How many places are paid, by the number of players with a standing: (most players,
# places). About a quarter of a small field, fewer of a large one, ten at most.
PAID_BY_FIELD: tuple[tuple[int, int], ...] = (
    (2, 1),
    (4, 2),
    (8, 3),
    (16, 4),
    (32, 6),
    (64, 8),
)
MOST_PAID = 10


def pool_and_house(fee: int, entries: int, house_permille: int) -> tuple[int, int]:
    """(prize pool, house's share) of ``entries`` paid entries of ``fee`` coins: the
    house takes ``house_permille`` thousandths of the entries, rounded down (a coin
    that does not divide goes to the players), and the pool is the rest."""
    if fee < 0 or entries < 0:
        raise ValueError("a negative fee or number of entries")
    if not 0 <= house_permille <= 1000:
        raise ValueError("the house's share is 0 to 1000 permille")
    taken = fee * entries
    house = taken * house_permille // 1000
    return taken - house, house


def paid_places(entrants: int) -> int:
    """How many places a tournament of ``entrants`` players with a standing pays
    (:data:`PAID_BY_FIELD`): 1 up to 2 players, 2 up to 4, 3 up to 8, 4 up to 16, 6 up
    to 32, 8 up to 64, 10 beyond; none for nobody."""
    if entrants <= 0:
        return 0
    for most, places in PAID_BY_FIELD:
        if entrants <= most:
            return places
    return MOST_PAID


def prize_split(pool: int, places: int, entrants: int) -> list[int]:
    """Coins per place, best first, summing to ``pool``: the pool split by the percent
    table of ``min(places, entrants)`` paid places (a place nobody can take is not
    paid), each share rounded down, and the coins left over to the first place. Empty
    when nothing is paid."""
    if pool < 0:
        raise ValueError("a negative pool")
    if places < 0 or places > MOST_PAID:
        raise ValueError(f"0 to {MOST_PAID} places are paid")
    paid = min(places, entrants)
    if pool == 0 or paid <= 0:
        return []
    shares = [pool * percent // 100 for percent in PERCENT_BY_PLACES[paid]]
    shares[0] += pool - sum(shares)
    return shares


def prizes(plan: Plan, standings: Sequence[Standing], pool: int) -> dict[int, int]:
    """Entrant -> coins, for the entrants who win some (the pool goes out whole).

    The places paid are :func:`paid_places` of the players in ``standings``. Players
    tied for a place take the positions it spans (two tied seconds: second and third)
    and share the prizes of those positions evenly, rounded down; the coins left over
    go one each to the tied players in the standings' order (rating, then entry id).
    With nobody in the standings nothing is paid (the caller refunds)."""
    del plan  # both formats pay alike; the plan stays in the signature for the callers
    lines = sorted(standings, key=lambda line: line.place)
    split = prize_split(pool, paid_places(len(lines)), len(lines))
    split += [0] * (len(lines) - len(split))
    won: dict[int, int] = {}
    start = 0
    while start < len(lines):
        end = start
        while end < len(lines) and lines[end].place == lines[start].place:
            end += 1
        shared = sum(split[start:end])
        tied = lines[start:end]
        each, extra = divmod(shared, len(tied))
        for index, line in enumerate(tied):
            coins = each + (index < extra)
            if coins:
                won[line.entrant] = coins
        start = end
    return won
