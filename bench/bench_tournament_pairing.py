"""Seating one tournament round of about 1,000 players (``sahrat.tournaments``).

* Swiss, Konkan (tables of 4) and Conquian (pairs): 1,000 registered players with
  ratings around 1500, five rounds already played (random places with ties now and
  then, random match totals, no drop-outs), then round 6 is seated: by standing, with
  the repeat avoidance (greedy and swap search) over the five rounds' meetings. The
  standings of the 1,000 after round 5 (what the live page shows) are timed too.
* Knock-out: round 1 of 1,024 Conquian players (pairs) and of 1,000 Konkan players
  (tables of 4, advance 2), seeded by rating and snaked; then round 2 from the
  advancers of a played round 1. Real knock-outs stop at 32 seats (``check_plan``);
  the plan here is built unchecked to show how the seating scales.
* A small field late in a long Swiss (40 Konkan players, round 12 after 11): most
  pairs have met, so repeats are forced and the swap search works hardest.

The peer, in the same run: the Swiss grouping alone (``group_swiss``, on the standings'
order) with the repeat avoidance and without it (tables cut in standing order), and
the repeat meetings each leaves.

Each figure is the wall time of one call (``time.perf_counter``), median [min–max] of
``--runs`` runs, each run a fresh field and history from its own seed (not timed).

    nice -n 10 .venv/bin/python bench/bench_tournament_pairing.py --runs 7
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from sahrat.tournaments import (
    Entrant,
    Plan,
    TableResult,
    bye_result,
    seat_round,
    standings,
    table_sizes,
)
from sahrat.tournaments.seating import group_swiss, meetings, repeats


def field(count: int, rng: random.Random) -> list[Entrant]:
    return [Entrant(i, round(rng.gauss(1500, 150))) for i in range(1, count + 1)]


def played(round_no: int, tables: list[tuple[int, ...]], rng: random.Random) -> list[TableResult]:
    results = []
    for table_no, seats in enumerate(tables, start=1):
        if len(seats) == 1:
            results.append(bye_result(round_no, table_no, seats[0]))
            continue
        order = list(seats)
        rng.shuffle(order)
        places: dict[int, int] = {}
        for index, e in enumerate(order):
            tie = index and rng.random() < 0.1
            places[e] = places[order[index - 1]] if tie else index + 1
        totals = {e: rng.randint(0, 120) for e in seats}
        results.append(TableResult(round_no, table_no, seats, places, totals))
    return results


def timed(call: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = call()
    return time.perf_counter() - start, value


def swiss_run(game: str, count: int, before: int, seed: int) -> dict[str, float]:
    rng = random.Random(seed)
    plan = Plan(game, "swiss", count, before + 1)  # type: ignore[arg-type]
    entrants = field(count, rng)
    history: list[list[TableResult]] = []
    for round_no in range(1, before + 1):
        tables = seat_round(plan, round_no, entrants, history, seed)
        history.append(played(round_no, tables, rng))
    seat_time, tables = timed(lambda: seat_round(plan, before + 1, entrants, history, seed))
    table_time, lines = timed(lambda: standings(plan, entrants, history))
    met = meetings(history)
    # the peer: the same standing order grouped with and without repeat avoidance
    order = [line.entrant for line in lines]
    sizes = table_sizes(plan.game, len(order))
    avoid_time, _ = timed(lambda: group_swiss(order, sizes, met))
    plain_time, plain = timed(lambda: group_swiss(order, sizes, {}))
    return {
        "seat": seat_time,
        "standings": table_time,
        "repeats": float(sum(repeats(table, met) for table in tables)),
        "grouping": avoid_time,
        "plain grouping": plain_time,
        "plain repeats": float(sum(repeats(table, met) for table in plain)),
    }


def knockout_run(game: str, count: int, seed: int) -> dict[str, float]:
    rng = random.Random(seed)
    advance = 1 if game == "conquian" else 2
    plan = Plan(game, "knockout", count, 10, advance)  # type: ignore[arg-type]
    entrants = field(count, rng)
    first_time, tables = timed(lambda: seat_round(plan, 1, entrants, [], seed))
    history = [played(1, tables, rng)]
    second_time, _ = timed(lambda: seat_round(plan, 2, entrants, history, seed))
    return {"round 1": first_time, "round 2": second_time}


def summary(values: list[float], scale: float = 1000.0) -> str:
    shown = [value * scale for value in values]
    return f"{statistics.median(shown):,.1f} [{min(shown):,.1f}–{max(shown):,.1f}]"


def peer(runs: list[dict[str, float]]) -> None:
    avoid = summary([r["grouping"] for r in runs])
    plain = summary([r["plain grouping"] for r in runs])
    left = [int(r["plain repeats"]) for r in runs]
    print(f"    grouping alone {avoid}; peer, no repeat avoidance {plain}, repeats {left}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--players", type=int, default=1000)
    parser.add_argument("--rounds-before", type=int, default=5)
    args = parser.parse_args()
    print(f"Python {sys.version.split()[0]} on {platform.machine()}, {args.runs} runs, ms")
    print(f"swiss, {args.players} players, round {args.rounds_before + 1}:")
    for game in ("konkan", "conquian"):
        runs = [swiss_run(game, args.players, args.rounds_before, s) for s in range(args.runs)]
        seat = summary([r["seat"] for r in runs])
        board = summary([r["standings"] for r in runs])
        left = [int(r["repeats"]) for r in runs]
        print(f"  {game:9} seat {seat}  standings {board}  repeat meetings left {left}")
        peer(runs)
    # a small field late in a long Swiss, where repeats cannot all be avoided: the swap
    # search's worst case in practice
    runs = [swiss_run("konkan", 40, 11, s) for s in range(args.runs)]
    seat = summary([r["seat"] for r in runs])
    left = [int(r["repeats"]) for r in runs]
    print(f"swiss, 40 players, round 12:\n  konkan    seat {seat}  repeat meetings left {left}")
    peer(runs)
    print("knock-out:")
    for game, count in (("conquian", 1024), ("konkan", args.players)):
        runs = [knockout_run(game, count, s) for s in range(args.runs)]
        first = summary([r["round 1"] for r in runs])
        second = summary([r["round 2"] for r in runs])
        print(f"  {game:9} {count} players: round 1 {first}  round 2 {second}")


if __name__ == "__main__":
    main()
