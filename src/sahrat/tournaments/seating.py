"""Who sits with whom each round (docs/tournaments.md, "Formats").

Every random choice draws from ``random.Random`` made here from the tournament's seed:
the draw that orders entrants of equal rating (one for the whole tournament, so a
seed means the same in every round) and the seat order within each table (one per
round)."""

from __future__ import annotations

import random
from collections.abc import Sequence

from .plan import Plan, table_sizes
from .results import Entrant, TableResult
from .standing import advancers, finished, merit, opponents_strength, still_in, tally

Pair = tuple[int, int]


def seed_order(entrants: Sequence[Entrant], seed: int) -> dict[int, int]:
    """Entrant -> seed number (1 the strongest): by rating, and a draw between equal
    ratings."""
    draw = random.Random(f"sahrat-tournament/{seed}/draw")
    lots = {entrant.id: draw.random() for entrant in sorted(entrants, key=lambda e: e.id)}
    ranked = sorted(entrants, key=lambda e: (-e.rating, lots[e.id]))
    return {entrant.id: number for number, entrant in enumerate(ranked, start=1)}


def snake(players: Sequence[int], sizes: Sequence[int]) -> list[list[int]]:
    """Deal ``players`` (best first) to tables of ``sizes`` in snake order: the first
    row one each to tables 1..T, the next row T..1, and so on, passing full tables; so
    the T best sit at T different tables and each table gets a spread of strengths."""
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


def seat_round(
    plan: Plan,
    round_no: int,
    entrants: Sequence[Entrant],
    history: Sequence[Sequence[TableResult]],
    seed: int,
) -> list[tuple[int, ...]]:
    """The tables of round ``round_no`` (1-based, one more than the rounds of
    ``history``) as tuples of entrant ids in seat order; a 1-tuple is a bye.

    Knock-out: round 1 seats every entrant by seed (rating, a draw between equals),
    snaked across the tables so the strongest sit apart; later rounds seat the
    advancers of the last round, table winners before runners-up and each by seed,
    snaked the same way. A Conquian bye goes to the first player (not bot) of that
    order. Swiss: every
    entrant who has not dropped out, by standing (leaders at the top table), avoiding
    repeat table-mates where possible (:func:`group_swiss`). Deterministic for a seed.

    The plan is taken as checked (:func:`check_plan`, when the tournament is made);
    ``history`` holds the rounds played, each complete. Raises ``ValueError`` for a
    round out of turn, a history that does not fit the entrants, or a tournament over."""
    if round_no != len(history) + 1:
        raise ValueError(f"round {round_no} follows {len(history)} rounds played")
    if finished(plan, entrants, history):
        raise ValueError("the tournament is over (or has fewer than two players)")
    players = still_in(plan, entrants, history)
    seeds = seed_order(entrants, seed)
    if plan.format == "knockout":
        tables = _knockout_tables(plan, players, entrants, history, seeds)
    else:
        tables = _swiss_tables(plan, players, entrants, history, seeds)
    shuffle = random.Random(f"sahrat-tournament/{seed}/seats/{round_no}")
    seated = []
    for table in tables:
        shuffle.shuffle(table)
        seated.append(tuple(table))
    return seated


def _knockout_tables(
    plan: Plan,
    players: list[int],
    entrants: Sequence[Entrant],
    history: Sequence[Sequence[TableResult]],
    seeds: dict[int, int],
) -> list[list[int]]:
    bots = {entrant.id for entrant in entrants if entrant.bot}
    if history:
        # table winners (the first to go through) before runners-up, each by seed
        rank = {
            e: index
            for result in history[-1]
            for index, e in enumerate(advancers(plan, result, bots))
        }
        players = sorted(players, key=lambda e: (rank[e], seeds[e]))
    else:
        players = sorted(players, key=seeds.__getitem__)
    sizes = table_sizes(plan.game, len(players))
    if sizes and sizes[-1] == 1:
        # a bye: the first of the order takes it; not a bot, which could not go through
        taker = next((e for e in players if e not in bots), players[0])
        rest = [e for e in players if e != taker]
        return [[taker], *snake(rest, sizes[:-1])]
    return snake(players, sizes)


def _swiss_tables(
    plan: Plan,
    players: list[int],
    entrants: Sequence[Entrant],
    history: Sequence[Sequence[TableResult]],
    seeds: dict[int, int],
) -> list[list[int]]:
    tallies = tally(plan, entrants, history)

    def standing_key(e: int) -> tuple[object, ...]:
        mine = tallies[e]
        strength = opponents_strength(tallies, e)
        return (-mine.twelfths, -merit(plan, mine.match_total), -strength, seeds[e])

    ordered = sorted(players, key=standing_key)
    bye: list[list[int]] = []
    if plan.game == "conquian" and len(ordered) % 2:
        # the lowest-standing player without a bye yet (everyone had one: the lowest)
        fresh = [e for e in reversed(ordered) if tallies[e].byes == 0]
        taker = fresh[0] if fresh else ordered[-1]
        ordered.remove(taker)
        bye = [[taker]]
    met = meetings(history)
    return group_swiss(ordered, table_sizes(plan.game, len(ordered)), met) + bye


def meetings(history: Sequence[Sequence[TableResult]]) -> dict[Pair, int]:
    """How often each pair (lower id first) has shared a table."""
    met: dict[Pair, int] = {}
    for tables in history:
        for result in tables:
            seats = sorted(result.seats)
            for i, a in enumerate(seats):
                for b in seats[i + 1 :]:
                    met[(a, b)] = met.get((a, b), 0) + 1
    return met


def repeats(table: Sequence[int], met: dict[Pair, int]) -> int:
    """The earlier meetings of the pairs of ``table``, summed (0: nobody met before)."""
    total = 0
    for i, a in enumerate(table):
        for b in table[i + 1 :]:
            total += met.get((a, b) if a < b else (b, a), 0)
    return total


def _cost_with(table: Sequence[int], player: int, met: dict[Pair, int]) -> int:
    return sum(met.get((player, o) if player < o else (o, player), 0) for o in table)


def group_swiss(
    ordered: Sequence[int], sizes: Sequence[int], met: dict[Pair, int]
) -> list[list[int]]:
    """Seat ``ordered`` (by standing, best first) at tables of ``sizes`` (top table
    first), with as few repeat meetings as a greedy and a swap search find.

    1. Greedy: each table in turn takes the best player left, then, for each further
       seat, the best-standing player left who has met nobody at the table (if every
       one has, the one adding the fewest meetings).
    2. Swap search: while exchanging a player who is in a repeat with a player of
       another table lowers the total of repeat meetings, make the exchange (nearest
       tables first, so players move as little as possible from their standing).

    What it guarantees: every player is seated once, at the sizes given; when the
    greedy seats nobody with a former table-mate, the tables are exactly the greedy's;
    and at the end no exchange of two players between two tables lowers the number of
    repeat meetings (each exchange lowers it by at least one, so the search ends). It
    does not promise the fewest repeats of all seatings: that is a search over every
    partition, and a round of 1,000 players must be seated in a fraction of a second.
    """
    if sum(sizes) != len(ordered):
        raise ValueError(f"{len(ordered)} players for tables of {sum(sizes)} seats")
    left = list(ordered)
    tables: list[list[int]] = []
    for size in sizes:
        table = [left.pop(0)]
        while len(table) < size:
            pick = 0
            best = None
            for index, candidate in enumerate(left):
                cost = _cost_with(table, candidate, met)
                if cost == 0:
                    pick = index
                    break
                if best is None or cost < best:
                    best, pick = cost, index
            table.append(left.pop(pick))
        tables.append(table)
    while _improve_once(tables, met):
        pass
    return tables


def _improve_once(tables: list[list[int]], met: dict[Pair, int]) -> bool:
    """Make the first exchange that lowers the repeat meetings; False if none does.

    Only a player with a former table-mate at its table can take part in a lowering
    exchange on its own table's side (moving a player without one out of a table
    lowers nothing there), so these are the only players tried, against every player
    of every other table."""
    count = len(tables)
    for a in range(count):
        table_a = tables[a]
        if repeats(table_a, met) == 0:
            continue
        for i, x in enumerate(table_a):
            rest_a = table_a[:i] + table_a[i + 1 :]
            x_here = _cost_with(rest_a, x, met)
            if x_here == 0:
                continue
            for b in sorted(range(count), key=lambda t: (abs(t - a), t)):
                if b == a:
                    continue
                table_b = tables[b]
                for j, y in enumerate(table_b):
                    rest_b = table_b[:j] + table_b[j + 1 :]
                    before = x_here + _cost_with(rest_b, y, met)
                    after = _cost_with(rest_a, y, met) + _cost_with(rest_b, x, met)
                    if after < before:
                        table_a[i], table_b[j] = y, x
                        return True
    return False
