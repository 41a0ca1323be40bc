"""The analysis of a finished five-round, four-seat Konkan match (docs/analysis.md).

    .venv/bin/python bench/bench_analysis.py --matches 5 --seed 1

Each match is played first by bots (two strong, two simple players, the match seeded
by ``--seed`` and its index), then analysed in this process, pinned to one core: the
whole analysis (``analyse_record``) timed in wall and CPU time, with the number of
decisions weighed and the slowest round. The target is under a minute a match on this
machine. No peer analyses rummy games; the replay of the same record (``Replayer``, the
engine alone) is timed beside it for scale.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any

from sahrat.analysis import analyse_round, assemble, plan
from sahrat.bots.levels import bot_for
from sahrat.rules import konkan
from sahrat.rules.options import KonkanOptions
from sahrat.rules.record import GameRecord, Replayer, record_of

LEVELS = ("strong", "simple", "strong", "simple")


def played_match(seed: str) -> dict[str, Any]:
    options = KonkanOptions.for_game("konkan", {"players": 4, "rounds": 5})
    state0 = konkan.new_game(options, seed)
    bots = [bot_for("konkan", level, seed=f"{seed}:{seat}") for seat, level in enumerate(LEVELS)]
    state, actions = state0, []
    while not state.over:
        seat = konkan.to_act(state)
        assert seat is not None
        action = bots[seat](konkan.view(state, seat))
        state, _ = konkan.apply(state, action)
        actions.append(action)
    return record_of("konkan", state0, actions, [f"p{seat}" for seat in range(4)]).to_json()


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.1f} [{min(values):.1f}–{max(values):.1f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=5)
    parser.add_argument("--seed", default="1")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {0})
    walls, cpus, replays, decisions, slowest, actions = [], [], [], [], [], []
    for index in range(args.matches):
        record = played_match(f"bench-analysis:{args.seed}:{index}")
        started = time.perf_counter()
        Replayer(GameRecord.from_json(record))
        replays.append(time.perf_counter() - started)
        wall, cpu = time.perf_counter(), time.process_time()
        analysis_plan = plan(record)
        rounds = []
        round_times = []
        for job in analysis_plan.jobs:
            begun = time.perf_counter()
            rounds.append(analyse_round(job))
            round_times.append(time.perf_counter() - begun)
        analysis = assemble(analysis_plan, rounds, time.perf_counter() - wall)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
        decisions.append(len(analysis["decisions"]))
        slowest.append(max(round_times))
        actions.append(len(record["actions"]))
        print(
            f"match {index}: {len(record['actions'])} actions, {decisions[-1]} decisions,"
            f" {walls[-1]:.1f} s wall, {cpus[-1]:.1f} s CPU, slowest round {slowest[-1]:.1f} s",
            flush=True,
        )
    print()
    print(
        "| matches | actions | decisions | analysis, wall s | CPU s | slowest round s"
        " | replay alone ms |"
    )
    print("|---|---|---|---|---|---|---|")
    print(
        f"| {args.matches} | {spread([float(a) for a in actions])}"
        f" | {spread([float(d) for d in decisions])}"
        f" | **{spread(walls)}** | {spread(cpus)} | {spread(slowest)}"
        f" | {spread([r * 1000 for r in replays])} |"
    )


if __name__ == "__main__":
    main()
