"""Tournaments' rules (``sahrat.tournaments``), worked by hand from docs/tournaments.md.

Every expected table, point, place and coin below is derived from the written rules
(the derivation is in the comments), not read from the code's output. Seat order
within a table is a draw, so tables are compared as sets."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction

import pytest

from sahrat.tournaments import (
    Entrant,
    Plan,
    PlanError,
    Standing,
    TableResult,
    advancers,
    bye_result,
    check_plan,
    finished,
    knockout_rounds,
    make_plan,
    placement_points,
    prizes,
    rounds_for,
    seat_round,
    standings,
    still_in,
    table_sizes,
)
from sahrat.tournaments.seating import group_swiss, repeats

F = Fraction
SEED = 20261202


def result(
    round_no: int,
    table_no: int,
    places: Mapping[int, int],
    totals: Mapping[int, int],
    dropped: frozenset[int] = frozenset(),
) -> TableResult:
    return TableResult(round_no, table_no, tuple(places), dict(places), dict(totals), dropped)


def as_sets(tables: Sequence[tuple[int, ...]]) -> list[set[int]]:
    return [set(table) for table in tables]


def by_id(lines: Sequence[Standing]) -> dict[int, Standing]:
    return {line.entrant: line for line in lines}


# --- plans ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("plan", "code"),
    [
        (Plan("chess", "swiss", 8, 3), "tournament_game"),  # type: ignore[arg-type]
        (Plan("konkan", "league", 8, 3), "tournament_format"),  # type: ignore[arg-type]
        (Plan("konkan", "knockout", 12, 3), "tournament_seats"),  # not 4, 8, 16, 32
        (Plan("konkan", "knockout", 64, 5), "tournament_seats"),
        (Plan("conquian", "knockout", 6, 3, 1), "tournament_seats"),  # not a power of two
        (Plan("konkan", "swiss", 2, 3), "tournament_seats"),  # a Konkan Swiss needs 3
        (Plan("conquian", "swiss", 1, 3, 1), "tournament_seats"),
        (Plan("konkan", "swiss", 1025, 3), "tournament_seats"),
        (Plan("konkan", "swiss", True, 3), "tournament_seats"),  # a flag is no count
        (Plan("konkan", "knockout", 16, 3, 3), "tournament_advance"),
        (Plan("konkan", "knockout", 16, 3, 0), "tournament_advance"),
        (Plan("conquian", "knockout", 8, 3, 2), "tournament_advance"),  # pairs send one
        (Plan("konkan", "knockout", 16, 2, 2), "tournament_rounds"),  # 16, 8, 4: three
        (Plan("konkan", "knockout", 16, 3, 1), "tournament_rounds"),  # 16, 4: two
        (Plan("konkan", "swiss", 10, 0), "tournament_rounds"),
        (Plan("konkan", "swiss", 10, 13), "tournament_rounds"),
        (Plan("konkan", "swiss", 10, 2.5), "tournament_rounds"),  # type: ignore[arg-type]
    ],
)
def test_a_bad_plan_names_its_field(plan: Plan, code: str) -> None:
    with pytest.raises(PlanError) as refused:
        check_plan(plan)
    assert refused.value.code == code
    assert refused.value.to_dict()["code"] == code


@pytest.mark.parametrize(
    ("game", "seats", "advance", "rounds"),
    [
        # Konkan, advance 2: each table of 4 sends 2, the field halves to a final of 4
        ("konkan", 4, 2, 1),
        ("konkan", 8, 2, 2),
        ("konkan", 16, 2, 3),
        ("konkan", 32, 2, 4),
        # advance 1: the field quarters; 8 -> 2 (a final of two), 32 -> 8 -> 2
        ("konkan", 8, 1, 2),
        ("konkan", 16, 1, 2),
        ("konkan", 32, 1, 3),
        # Conquian pairs halve: log2 of the seats
        ("conquian", 2, 1, 1),
        ("conquian", 8, 1, 3),
        ("conquian", 32, 1, 5),
    ],
)
def test_knockout_rounds(game: str, seats: int, advance: int, rounds: int) -> None:
    plan = Plan(game, "knockout", seats, rounds, advance)  # type: ignore[arg-type]
    assert knockout_rounds(plan) == rounds
    check_plan(plan)


def test_make_plan_fills_the_defaults() -> None:
    assert make_plan("konkan", "knockout", 16) == Plan("konkan", "knockout", 16, 3, 2)
    assert make_plan("conquian", "knockout", 8) == Plan("conquian", "knockout", 8, 3, 1)
    assert make_plan("konkan", "swiss", 10, 3) == Plan("konkan", "swiss", 10, 3, 2)
    with pytest.raises(PlanError) as refused:
        make_plan("konkan", "swiss", 10)
    assert refused.value.code == "tournament_rounds"
    with pytest.raises(PlanError) as refused:
        make_plan("konkan", "knockout", 12)
    assert refused.value.code == "tournament_seats"


@pytest.mark.parametrize(
    ("players", "sizes"),
    [
        (1, [1]),
        (2, [2]),
        (4, [4]),
        (5, [3, 2]),
        (6, [3, 3]),  # 6 mod 4 = 2: two tables of 3
        (7, [4, 3]),  # 7 mod 4 = 3: one
        (9, [3, 3, 3]),  # 9 mod 4 = 1: three
        (10, [4, 3, 3]),
        (11, [4, 4, 3]),
        (16, [4, 4, 4, 4]),
        (1000, [4] * 250),
        (1001, [4] * 248 + [3] * 3),
    ],
)
def test_konkan_table_sizes(players: int, sizes: list[int]) -> None:
    assert table_sizes("konkan", players) == sizes


def test_conquian_table_sizes_are_pairs_and_a_bye() -> None:
    assert table_sizes("conquian", 6) == [2, 2, 2]
    assert table_sizes("conquian", 7) == [2, 2, 2, 1]


def test_a_short_knockout_plays_the_rounds_its_field_needs() -> None:
    plan = make_plan("konkan", "knockout", 16)
    # 11 players: tables 4, 4, 3 send 2 each; 6: tables 3, 3 send 4; a final of 4
    assert rounds_for(plan, 11) == 3
    # 5: tables 3 and 2 send 2 and 1 (never a whole table); a final of 3
    assert rounds_for(plan, 5) == 2
    assert rounds_for(plan, 4) == 1
    # Conquian 5 of 8: pairs and a bye, 3 go through, then 2, then the final
    assert rounds_for(make_plan("conquian", "knockout", 8), 5) == 3


# --- placement points ---------------------------------------------------------------------


def test_placement_points_by_table_size() -> None:
    # 3(n+1-2p)/(n-1)
    four = result(1, 1, {1: 1, 2: 2, 3: 3, 4: 4}, {1: 0, 2: 0, 3: 0, 4: 0})
    three = result(1, 1, {1: 1, 2: 2, 3: 3}, {1: 0, 2: 0, 3: 0})
    two = result(1, 1, {1: 2, 2: 1}, {1: 0, 2: 0})
    assert placement_points(four) == {1: 3, 2: 1, 3: -1, 4: -3}
    assert placement_points(three) == {1: 3, 2: 0, 3: -3}
    assert placement_points(two) == {1: -3, 2: 3}


def test_tied_places_average_the_points_they_span() -> None:
    # two firsts of four take positions 1 and 2: (3 + 1) / 2 = 2 each
    firsts = result(1, 1, {1: 1, 2: 1, 3: 3, 4: 4}, {1: 0, 2: 0, 3: 0, 4: 0})
    assert placement_points(firsts) == {1: 2, 2: 2, 3: -1, 4: -3}
    # two seconds of three: (0 - 3) / 2 each
    seconds = result(1, 1, {1: 1, 2: 2, 3: 2}, {1: 0, 2: 0, 3: 0})
    assert placement_points(seconds) == {1: 3, 2: F(-3, 2), 3: F(-3, 2)}
    # three tied thirds... of four: positions 2-4, (1 - 1 - 3) / 3
    tail = result(1, 1, {1: 1, 2: 2, 3: 2, 4: 2}, {1: 0, 2: 0, 3: 0, 4: 0})
    assert placement_points(tail) == {1: 3, 2: F(-1), 3: F(-1), 4: F(-1)}
    everyone = result(1, 1, {1: 1, 2: 1, 3: 1}, {1: 0, 2: 0, 3: 0})
    assert placement_points(everyone) == {1: 0, 2: 0, 3: 0}


def test_a_bye_scores_as_a_win() -> None:
    assert placement_points(bye_result(2, 3, 7)) == {7: 3}


def test_a_malformed_result_is_refused() -> None:
    with pytest.raises(ValueError, match="a place and a total"):
        placement_points(result(1, 1, {1: 1, 2: 2}, {1: 0}))
    with pytest.raises(ValueError, match="places run from 1"):
        placement_points(result(1, 1, {1: 1, 2: 3}, {1: 0, 2: 0}))
    with pytest.raises(ValueError, match="drop out"):
        placement_points(result(1, 1, {1: 1, 2: 2}, {1: 0, 2: 0}, frozenset({9})))


# --- a 16-seat Konkan knock-out, advance 2 ------------------------------------------------

# Entrant i has rating 2000 - 10 i: seed i. Entrant 6 never came: a bot plays its seat.
KO = make_plan("konkan", "knockout", 16)
KO_ENTRANTS = [Entrant(i, 2000 - 10 * i, bot=i == 6) for i in range(1, 17)]

# Round 1: snake over four tables: seeds 1-4 to tables 1-4, 5-8 back 4-1, 9-12 on
# 1-4, 13-16 back 4-1.
KO_ROUND_1 = [{1, 8, 9, 16}, {2, 7, 10, 15}, {3, 6, 11, 14}, {4, 5, 12, 13}]
KO_RESULTS_1 = [
    result(1, 1, {9: 1, 1: 2, 16: 3, 8: 4}, {9: 20, 1: 35, 16: 60, 8: 75}),
    # 2 won but dropped out during the table (a bot finished it): 15 and 7 go through
    result(1, 2, {2: 1, 15: 2, 7: 3, 10: 4}, {2: 10, 15: 30, 7: 45, 10: 80}, frozenset({2})),
    # the bot (6) won: the next two, 3 and 11, go through
    result(1, 3, {6: 1, 3: 2, 11: 3, 14: 4}, {6: 5, 3: 25, 11: 40, 14: 90}),
    # 4 and 5 tied for first: both go through
    result(1, 4, {4: 1, 5: 1, 12: 3, 13: 4}, {4: 30, 5: 30, 12: 50, 13: 70}),
]
# Round 2: the first to go through from each table (9, 15, 3, 4) by seed: 3, 4, 9, 15;
# then the second (1, 7, 11, 5): 1, 5, 7, 11. Snaked over two tables:
# 3 -> 1, 4 -> 2, 9 -> 2, 15 -> 1, 1 -> 1, 5 -> 2, 7 -> 2, 11 -> 1.
KO_ROUND_2 = [{1, 3, 11, 15}, {4, 5, 7, 9}]
KO_RESULTS_2 = [
    result(2, 1, {1: 1, 11: 2, 3: 3, 15: 4}, {1: 15, 11: 40, 3: 55, 15: 70}),
    result(2, 2, {9: 1, 7: 2, 4: 3, 5: 4}, {9: 12, 7: 33, 4: 41, 5: 66}),
]
KO_ROUND_3 = [{1, 7, 9, 11}]  # the final
KO_RESULTS_3 = [result(3, 1, {7: 1, 1: 2, 11: 3, 9: 4}, {7: 10, 1: 20, 11: 35, 9: 60})]


def test_knockout_advancers_skip_bots_and_drop_outs() -> None:
    bots = {6}
    assert advancers(KO, KO_RESULTS_1[0], bots) == [9, 1]
    assert advancers(KO, KO_RESULTS_1[1], bots) == [15, 7]
    assert advancers(KO, KO_RESULTS_1[2], bots) == [3, 11]
    assert set(advancers(KO, KO_RESULTS_1[3], bots)) == {4, 5}
    # a Konkan table of two sends one, even with advance 2
    pair = result(1, 1, {1: 2, 2: 1}, {1: 60, 2: 10})
    assert advancers(KO, pair) == [2]


def test_a_16_seat_knockout_walked_to_its_final() -> None:
    history: list[list[TableResult]] = []
    assert as_sets(seat_round(KO, 1, KO_ENTRANTS, history, SEED)) == KO_ROUND_1
    history.append(KO_RESULTS_1)
    assert set(still_in(KO, KO_ENTRANTS, history)) == {9, 1, 15, 7, 3, 11, 4, 5}
    assert as_sets(seat_round(KO, 2, KO_ENTRANTS, history, SEED)) == KO_ROUND_2
    history.append(KO_RESULTS_2)
    assert not finished(KO, KO_ENTRANTS, history)
    assert as_sets(seat_round(KO, 3, KO_ENTRANTS, history, SEED)) == KO_ROUND_3
    history.append(KO_RESULTS_3)
    assert finished(KO, KO_ENTRANTS, history)
    with pytest.raises(ValueError, match="over"):
        seat_round(KO, 4, KO_ENTRANTS, history, SEED)

    lines = standings(KO, KO_ENTRANTS, history)
    # The final's places, then round 2's outs by placement points there and match total
    # (4: -1, 41; 3: -1, 55; 5: -3, 66; 15: -3, 70), then round 1's: 2 (+3, dropped),
    # 12 (-1, 50), 16 (-1, 60), 13 (-3, 70), 8 (-3, 75), 10 (-3, 80), 14 (-3, 90).
    # The bot (6) has no line and leaves no gap.
    order = [7, 1, 11, 9, 4, 3, 5, 15, 2, 12, 16, 13, 8, 10, 14]
    assert [line.entrant for line in lines] == order
    assert [line.place for line in lines] == list(range(1, 16))
    out = {line.entrant: line.out_in_round for line in lines}
    assert out == {7: None, 1: None, 11: None, 9: None} | dict.fromkeys([4, 3, 5, 15], 2) | {
        e: 1 for e in [2, 12, 16, 13, 8, 10, 14]
    }
    line = by_id(lines)
    # 7: third of four (-1), second (+1), first (+3); totals 45 + 33 + 10
    assert line[7].points == 3 and line[7].match_total == 88
    assert line[7].rounds_played == 3
    # 2 kept the first place the bot earned for it
    assert line[2].points == 3 and line[2].rounds_played == 1

    # fee 100 x 16 entries, the house 100 permille: 160 to the house, a pool of 1440;
    # 15 players with a standing pay 4 places, 40/30/20/10 %
    assert prizes(KO, lines, 1440) == {7: 576, 1: 432, 11: 288, 9: 144}


def test_an_unfilled_knockout_seats_tables_of_three() -> None:
    entrants = [Entrant(i, 2000 - 10 * i) for i in range(1, 12)]
    # 11 players: tables 4, 4, 3; seeds 1-3 on 1-3, 4-6 back 3-1, 7-9 on 1-3, then
    # back again past the full table 3: 10 -> 2, 11 -> 1
    assert as_sets(seat_round(KO, 1, entrants, [], SEED)) == [
        {1, 6, 7, 11},
        {2, 5, 8, 10},
        {3, 4, 9},
    ]


def test_a_conquian_knockout_gives_the_bye_to_the_top_seed() -> None:
    plan = make_plan("conquian", "knockout", 8)
    entrants = [Entrant(i, 2000 - 10 * i) for i in range(1, 6)]
    # seed 1 takes the bye; 2-5 fold: 2 v 5, 3 v 4
    assert as_sets(seat_round(plan, 1, entrants, [], SEED)) == [{1}, {2, 5}, {3, 4}]
    assert advancers(plan, bye_result(1, 1, 1)) == [1]


def test_an_unfinished_knockout_lists_players_still_in_first() -> None:
    lines = standings(KO, KO_ENTRANTS, [KO_RESULTS_1])
    still = {9, 1, 15, 7, 3, 11, 4, 5}
    assert {line.entrant for line in lines[:8]} == still
    assert all(line.out_in_round is None for line in lines[:8])
    # by points so far: 9 (+3); 4 and 5 (+2, both 30: one place); 3, 15, 1 (+1 as
    # seconds, totals 25, 30, 35); 7, 11 (-1; 45, 40)
    assert [(line.entrant, line.place) for line in lines[:8]] == [
        (9, 1),
        (4, 2),
        (5, 2),
        (3, 4),
        (15, 5),
        (1, 6),
        (11, 7),
        (7, 8),
    ]


# --- a 10-player Konkan Swiss of 3 rounds --------------------------------------------------

# Entrant i has rating 2000 - 10 i; 7 is a bot filling a seat for the whole tournament.
SW = make_plan("konkan", "swiss", 10, 3)
SW_ENTRANTS = [Entrant(i, 2000 - 10 * i, bot=i == 7) for i in range(1, 11)]

# Round 1, by rating, tables 4, 3, 3.
SW_ROUND_1 = [{1, 2, 3, 4}, {5, 6, 7}, {8, 9, 10}]
SW_RESULTS_1 = [
    # 2 and 3 tie for second: (1 - 1) / 2 = 0 each
    result(1, 1, {1: 1, 2: 2, 3: 2, 4: 4}, {1: 20, 2: 40, 3: 45, 4: 90}),
    result(1, 2, {5: 1, 6: 2, 7: 3}, {5: 10, 6: 50, 7: 70}),
    result(1, 3, {8: 1, 9: 2, 10: 3}, {8: 30, 9: 35, 10: 80}),
]
# Standing after round 1: +3: 5, 1, 8 (totals 10, 20, 30); 0: 9, 2, 3, 6 (35, 40, 45,
# 50); -3: 7, 10, 4 (70, 80, 90). Greedy: table 1 takes 5, 1, 8, then everyone left has
# met one of them: the first, 9 (one repeat, 8-9); table 2: 2, 6 (3 met 2), 10 (7 met 6);
# table 3: 3, 7, 4 (3-4 met). Swap search: 8 (table 1) for 3 (table 3) turns two repeats
# into one (1-3): {5, 1, 3, 9}, {2, 6, 10}, {8, 7, 4}; no exchange lowers it further,
# and no seating has none (a table of 4 from three tables of round 1).
SW_ROUND_2 = [{1, 3, 5, 9}, {2, 6, 10}, {4, 7, 8}]
SW_RESULTS_2 = [
    result(2, 1, {3: 1, 9: 2, 1: 3, 5: 4}, {3: 15, 9: 30, 1: 50, 5: 60}),
    # 6 dropped out: keeps the last place the bot finished in, plays no more
    result(2, 2, {10: 1, 2: 2, 6: 3}, {10: 20, 2: 40, 6: 70}, frozenset({6})),
    result(2, 3, {8: 1, 4: 2, 7: 3}, {8: 25, 4: 45, 7: 65}),
]
# After round 2: 8: 6; 3: 3; 1: 2; 9: 1; 5, 2, 10: 0 (totals 70, 80, 100); 4: -3;
# 7: -6 (6 dropped). Nine players, tables 3, 3, 3. Greedy: 8, 3, then all have met one
# of them; the fewest repeats first: 5 (3-5); then 1, 10 (9 and 2 met 1), 7; then
# 9, 2, 4 (2-4 met). Two repeats; no exchange lowers them (nor does any seating: 2 is
# the fewest of all 280).
SW_ROUND_3 = [{3, 5, 8}, {1, 7, 10}, {2, 4, 9}]
SW_RESULTS_3 = [
    result(3, 1, {8: 1, 3: 2, 5: 3}, {8: 20, 3: 30, 5: 50}),
    # 1 and 10 tie for first: (3 + 0) / 2 = 3/2 each
    result(3, 2, {1: 1, 10: 1, 7: 3}, {1: 25, 10: 25, 7: 60}),
    result(3, 3, {2: 1, 9: 2, 4: 3}, {2: 5, 9: 30, 4: 70}),
]


def test_a_10_player_swiss_of_three_rounds() -> None:
    history: list[list[TableResult]] = []
    assert as_sets(seat_round(SW, 1, SW_ENTRANTS, history, SEED)) == SW_ROUND_1
    history.append(SW_RESULTS_1)
    assert as_sets(seat_round(SW, 2, SW_ENTRANTS, history, SEED)) == SW_ROUND_2
    history.append(SW_RESULTS_2)
    assert 6 not in still_in(SW, SW_ENTRANTS, history)
    assert as_sets(seat_round(SW, 3, SW_ENTRANTS, history, SEED)) == SW_ROUND_3
    history.append(SW_RESULTS_3)
    assert finished(SW, SW_ENTRANTS, history)

    lines = standings(SW, SW_ENTRANTS, history)
    # points: 8: 3+3+3 = 9; 1: 3-1+3/2 = 7/2; 2: 0+0+3 = 3 (total 85); 3: 0+3+0 = 3
    # (total 90, so after 2); 10: -3+3+3/2 = 3/2; 9: 0+1+0 = 1; 5: 3-3-3 = -3 and
    # 6: 0-3 = -3, both totals 120: opponents' strength decides; 4: -3+0-3 = -6.
    # The bot 7 (-9) has no line.
    order = [8, 1, 2, 3, 10, 9, 5, 6, 4]
    assert [line.entrant for line in lines] == order
    assert [line.place for line in lines] == list(range(1, 10))
    line = by_id(lines)
    expected_points = {8: 9, 1: F(7, 2), 2: 3, 3: 3, 10: F(3, 2), 9: 1, 5: -3, 6: -3, 4: -6}
    assert {e: line[e].points for e in order} == expected_points
    totals = {8: 75, 1: 95, 2: 85, 3: 90, 10: 125, 9: 95, 5: 120, 6: 120, 4: 205}
    assert {e: line[e].match_total for e in order} == totals
    # 5 met 6 (-3), 7 (-9), 1 (7/2), 3 (3), 9 (1), 3 (3), 8 (9): 15/2 over 7 meetings;
    # 6 met 5 (-3), 7 (-9), 2 (3), 10 (3/2): -15/2 over 4
    assert line[5].opponents_strength == F(15, 14)
    assert line[6].opponents_strength == F(-15, 8)
    # 8 met 9, 10, 4, 7, 3, 5: 1 + 3/2 - 6 - 9 + 3 - 3 = -25/2 over 6
    assert line[8].opponents_strength == F(-25, 12)
    assert line[6].rounds_played == 2 and line[6].out_in_round == 2
    assert line[8].out_in_round is None
    # nine with a standing: 4 places, 40/30/20/10 % of 1000
    assert prizes(SW, lines, 1000) == {8: 400, 1: 300, 2: 200, 3: 100}


def test_swiss_refuses_a_round_past_its_last() -> None:
    history = [SW_RESULTS_1, SW_RESULTS_2, SW_RESULTS_3]
    with pytest.raises(ValueError, match="over"):
        seat_round(SW, 4, SW_ENTRANTS, history, SEED)
    with pytest.raises(ValueError, match="follows"):
        seat_round(SW, 3, SW_ENTRANTS, history[:1], SEED)


def test_a_full_tie_shares_a_place() -> None:
    plan = make_plan("konkan", "swiss", 8, 1)
    entrants = [Entrant(i, 1500) for i in range(1, 5)]
    history = [[result(1, 1, {1: 1, 2: 1, 3: 3, 4: 3}, {1: 10, 2: 10, 3: 50, 4: 50})]]
    lines = standings(plan, entrants, history)
    # 1 and 2: 2 points, total 10, opponents' strength (2 - 2 - 2) / 3 each: one place;
    # the order between them is the entry id (equal ratings)
    assert [(line.entrant, line.place) for line in lines] == [(1, 1), (2, 1), (3, 3), (4, 3)]
    # four players: 2 places (70/30); the firsts share 70 + 30, the thirds nothing
    assert prizes(plan, lines, 101) == {1: 51, 2: 50}


# --- a Conquian Swiss with a bye -------------------------------------------------------------


def test_the_bye_goes_to_the_lowest_without_one() -> None:
    plan = make_plan("conquian", "swiss", 5, 3)
    entrants = [Entrant(i, 2000 - 10 * i) for i in range(1, 6)]
    # round 1 by rating: 1-2, 3-4, and 5 (the lowest) has the bye
    assert as_sets(seat_round(plan, 1, entrants, [], SEED)) == [{1, 2}, {3, 4}, {5}]
    round_1 = [
        result(1, 1, {1: 1, 2: 2}, {1: 3, 2: 1}),
        result(1, 2, {4: 1, 3: 2}, {4: 2, 3: 1}),
        bye_result(1, 3, 5),
    ]
    # +3: 1, 4, 5 (deals won 3, 2, 0); -3: 2, 3 (1 deal each, opponents' strength 3
    # each: by seed, 2 then 3). The bye: 3, the lowest; then 1-4, 5-2.
    assert as_sets(seat_round(plan, 2, entrants, [round_1], SEED)) == [{1, 4}, {2, 5}, {3}]
    round_2 = [
        result(2, 1, {1: 1, 4: 2}, {1: 3, 4: 1}),
        result(2, 2, {2: 1, 5: 2}, {2: 3, 5: 2}),
        bye_result(2, 3, 3),
    ]
    history = [round_1, round_2]
    # 1: 6 points; 2, 4, 5, 3 at 0 with 4, 3, 2, 1 deals won (more is better)
    lines = standings(plan, entrants, history)
    assert [line.entrant for line in lines] == [1, 2, 4, 5, 3]
    # round 3: from the bottom, 3 and 5 have had a bye: 4 takes it
    tables = as_sets(seat_round(plan, 3, entrants, history, SEED))
    assert tables[-1] == {4}


# --- repeat table-mates ------------------------------------------------------------------


def test_the_swap_search_removes_a_repeat_the_greedy_leaves() -> None:
    # pairs in standing order 1..6; 1-2, 3-4 and 5-6 have met. Greedy: 1-3, 2-4, and
    # 5-6 is left (a repeat). Exchanging 5 with 2 (the nearest table) removes it.
    met = {(1, 2): 1, (3, 4): 1, (5, 6): 1}
    tables = group_swiss([1, 2, 3, 4, 5, 6], [2, 2, 2], met)
    assert sum(repeats(table, met) for table in tables) == 0
    assert as_sets([tuple(t) for t in tables]) == [{1, 3}, {4, 5}, {2, 6}]


def test_a_second_round_of_16_meets_nobody_again() -> None:
    # four tables of 4 can be redrawn with one player from each old table at each new
    # one; whatever the results, the seating finds no repeat.
    plan = make_plan("konkan", "swiss", 16, 2)
    entrants = [Entrant(i, 2000 - 10 * i) for i in range(1, 17)]
    round_1 = seat_round(plan, 1, entrants, [], SEED)
    assert as_sets(round_1) == [set(range(k, k + 4)) for k in (1, 5, 9, 13)]
    results = [
        # in each table, the lowest seed wins: the standing mixes the tables
        result(1, t, {e: 4 - i for i, e in enumerate(sorted(seats))}, dict.fromkeys(seats, 0))
        for t, seats in enumerate(round_1, start=1)
    ]
    round_2 = seat_round(plan, 2, entrants, [results], SEED)
    old = [set(seats) for seats in round_1]
    for table in round_2:
        assert all(len(set(table) & seats) == 1 for seats in old), table
    # leaders together: the four table winners (4, 8, 12, 16) at the top table
    assert set(round_2[0]) == {4, 8, 12, 16}


def test_the_seating_is_the_same_for_a_seed_and_differs_between_seeds() -> None:
    plan = make_plan("konkan", "swiss", 16, 2)
    entrants = [Entrant(i, 1500) for i in range(1, 17)]
    first = seat_round(plan, 1, entrants, [], SEED)
    assert seat_round(plan, 1, list(reversed(entrants)), [], SEED) == first
    others = {tuple(seat_round(plan, 1, entrants, [], seed)) for seed in range(1, 6)}
    assert len(others) > 1


def test_a_knockout_bye_passes_a_bot() -> None:
    plan = make_plan("conquian", "knockout", 4)
    # seed 1 is a bot: the bye goes to seed 2; 1 and 3 play
    entrants = [Entrant(1, 1900, bot=True), Entrant(2, 1800), Entrant(3, 1700)]
    assert as_sets(seat_round(plan, 1, entrants, [], SEED)) == [{2}, {1, 3}]
