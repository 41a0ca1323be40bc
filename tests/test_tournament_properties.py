"""Properties of tournaments' rules (``sahrat.tournaments``) over random tournaments:
random fields (bots among them), random results with ties and drop-outs, both formats
and both games, played to their end.

Every round seats each player still in exactly once at the table sizes of the rules;
every table's placement points sum to 0; the standings hold every person and no bot,
with places that follow the written order; the prizes add up to the pool; the same
seed seats the same tables; and no single exchange of two players lowers a Swiss
round's repeat meetings."""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from sahrat.tournaments import (
    Entrant,
    Plan,
    TableResult,
    bye_result,
    finished,
    make_plan,
    paid_places,
    placement_points,
    prize_split,
    prizes,
    rounds_for,
    seat_round,
    standings,
    still_in,
    table_sizes,
)
from sahrat.tournaments.seating import meetings, repeats


def play_table(
    round_no: int, table_no: int, seats: tuple[int, ...], rng: random.Random, drop: float
) -> TableResult:
    """Random places (ties now and then), random totals, a drop-out now and then."""
    if len(seats) == 1:
        return bye_result(round_no, table_no, seats[0])
    order = list(seats)
    rng.shuffle(order)
    places: dict[int, int] = {}
    for index, e in enumerate(order):
        tie = index and rng.random() < 0.15
        places[e] = places[order[index - 1]] if tie else index + 1
    totals = {e: rng.randint(0, 120) for e in seats}
    dropped = frozenset(e for e in seats if rng.random() < drop)
    return TableResult(round_no, table_no, seats, places, totals, dropped)


def play(
    plan: Plan, entrants: Sequence[Entrant], seed: int, rng: random.Random, drop: float
) -> list[list[TableResult]]:
    """A whole tournament; checks each round's seating on the way."""
    history: list[list[TableResult]] = []
    while not finished(plan, entrants, history):
        round_no = len(history) + 1
        assert round_no <= max(plan.rounds, rounds_for(plan, len(entrants)))
        expected = still_in(plan, entrants, history)
        tables = seat_round(plan, round_no, entrants, history, seed)
        seated = [e for table in tables for e in table]
        assert sorted(seated) == sorted(expected)  # each one exactly once
        sizes = sorted(len(table) for table in tables)
        assert sizes == sorted(table_sizes(plan.game, len(expected)))
        assert seat_round(plan, round_no, entrants, history, seed) == tables  # same seed
        if plan.format == "knockout" and history:  # a bot never goes through
            assert not {e.id for e in entrants if e.bot} & set(seated)
        history.append(
            [play_table(round_no, t, seats, rng, drop) for t, seats in enumerate(tables, 1)]
        )
    return history


@st.composite
def tournaments(draw: st.DrawFn) -> tuple[Plan, list[Entrant], int, int, float]:
    game = draw(st.sampled_from(["konkan", "conquian"]))
    form = draw(st.sampled_from(["knockout", "swiss"]))
    if form == "knockout":
        seats = draw(st.sampled_from([4, 8, 16, 32] if game == "konkan" else [2, 4, 8, 16, 32]))
        advance = draw(st.sampled_from([1, 2])) if game == "konkan" else 1
        plan = make_plan(game, form, seats, advance=advance)
        count = draw(st.integers(2, seats))
    else:
        plan = make_plan(game, form, 40, draw(st.integers(1, 6)))
        count = draw(st.integers(2, 40))
    ratings = draw(
        st.lists(st.sampled_from([1400, 1500, 1550, 1700]), min_size=count, max_size=count)
    )
    bots = draw(st.lists(st.booleans(), min_size=count, max_size=count))
    entrants = [
        Entrant(100 + i, rating, bot=bot and i % 3 == 0)
        for i, (rating, bot) in enumerate(zip(ratings, bots, strict=True))
    ]
    drop = draw(st.sampled_from([0.0, 0.05]))
    return plan, entrants, draw(st.integers(0, 2**32)), draw(st.integers(0, 2**32)), drop


@settings(max_examples=150, deadline=None)
@given(tournaments())
def test_random_tournaments_keep_the_rules(
    case: tuple[Plan, list[Entrant], int, int, float],
) -> None:
    plan, entrants, seed, luck, drop = case
    history = play(plan, entrants, seed, random.Random(luck), drop)
    for tables in history:
        for result in tables:
            points = placement_points(result)
            if len(result.seats) > 1:
                assert sum(points.values()) == 0
            assert all(-3 <= p <= 3 for p in points.values())
    if plan.format == "knockout" and not drop and not any(e.bot for e in entrants):
        assert len(history) == rounds_for(plan, len(entrants))

    lines = standings(plan, entrants, history)
    people = {e.id for e in entrants if not e.bot}
    assert [line.entrant for line in lines if line.entrant in people] == [
        line.entrant for line in lines
    ]
    assert {line.entrant for line in lines} == people
    places = [line.place for line in lines]
    assert places == sorted(places)
    for place in places:  # one more than the players strictly ahead
        assert place == 1 + sum(other < place for other in places)
    if plan.format == "swiss":
        scores = [line.points for line in lines]
        assert scores == sorted(scores, reverse=True)
    assert standings(plan, list(reversed(entrants)), history) == lines  # order-free

    pool = random.Random(luck).randint(0, 100_000)
    won = prizes(plan, lines, pool)
    assert set(won) <= people
    assert sum(won.values()) == (pool if lines else 0)
    paid = paid_places(len(lines))
    first_unpaid = [line.entrant for line in lines if line.place > paid]
    assert not set(first_unpaid) & set(won)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 10**9), st.integers(1, 10), st.integers(0, 200))
def test_prize_splits_sum_to_the_pool_and_fall_off(pool: int, places: int, field: int) -> None:
    split = prize_split(pool, places, field)
    if pool == 0 or min(places, field) == 0:
        assert split == []
        return
    assert len(split) == min(places, field)
    assert sum(split) == pool
    assert split == sorted(split, reverse=True)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32), st.integers(8, 24), st.integers(2, 4))
def test_no_single_exchange_lowers_a_swiss_rounds_repeats(
    luck: int, count: int, rounds: int
) -> None:
    plan = make_plan("konkan", "swiss", 40, rounds + 1)
    entrants = [Entrant(i, 1500 + (i % 5) * 10) for i in range(1, count + 1)]
    rng = random.Random(luck)
    history: list[list[TableResult]] = []
    for round_no in range(1, rounds + 1):
        drawn = seat_round(plan, round_no, entrants, history, luck)
        history.append(
            [play_table(round_no, t, seats, rng, 0.0) for t, seats in enumerate(drawn, 1)]
        )
    tables = [list(t) for t in seat_round(plan, rounds + 1, entrants, history, luck)]
    met = meetings(history)
    total = sum(repeats(t, met) for t in tables)
    for a, b in itertools.combinations(range(len(tables)), 2):
        for i, j in itertools.product(range(len(tables[a])), range(len(tables[b]))):
            swapped_a = [*tables[a][:i], tables[b][j], *tables[a][i + 1 :]]
            swapped_b = [*tables[b][:j], tables[a][i], *tables[b][j + 1 :]]
            change = repeats(swapped_a, met) + repeats(swapped_b, met)
            change -= repeats(tables[a], met) + repeats(tables[b], met)
            assert change >= 0, (total, tables[a], tables[b])
