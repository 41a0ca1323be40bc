"""Bot benchmark: strength and decision time of the bot levels, measured with the arena.

    .venv/bin/python bench/bench_bots.py                      # 500 matches per line
    .venv/bin/python bench/bench_bots.py --matches 100 --workers 2 --progress
    .venv/bin/python bench/bench_bots.py --only conquian

Every line is one ``sahrat arena`` run (seats rotate every match; each seat sees
its own view only). Prints a markdown table: the share won with its 95 % Wilson
interval, illegal proposals, committed Konkans not laid, and the decision time
of the measured player (p50 / p99 / max), as wall time and as the CPU time of
its process (a machine shared with other work inflates the wall time, not the
CPU time). ``--budget`` changes the expert's time cap (e.g. ``--budget 60``
lets every sample run, to measure what the full sample budget costs).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
from dataclasses import dataclass
from typing import Any

from sahrat.arena import run_arena
from sahrat.bots import expert


@dataclass(frozen=True)
class Line:
    name: str
    game: str
    seats: tuple[str, ...]
    measure: str  # "deals": share of decided deals; "matches": share of matches
    target: float | None  # the share to reach, or None (a reference line)


LINES = (
    Line("conquian", "conquian", ("expert", "simple"), "deals", 0.65),
    Line("konkan-simple", "konkan", ("expert", "simple", "simple", "simple"), "matches", 0.45),
    Line("konkan-strong", "konkan", ("expert", "strong", "strong", "strong"), "matches", 0.30),
    Line("conquian-ref", "conquian", ("strong", "simple"), "deals", None),
    Line("konkan-ref", "konkan", ("strong", "simple", "simple", "simple"), "matches", None),
)
P99_BUDGET_MS = 50.0


def share(stats: dict[str, Any], line: Line) -> tuple[int, int, float, list[float]]:
    if line.measure == "deals":
        return (
            stats["deals_won"],
            stats["deals_decided"],
            stats["decided_deals_win_rate"],
            stats["decided_deals_win_ci95"],
        )
    return (
        stats["matches_won"],
        stats["matches"],
        stats["match_win_rate"],
        stats["match_win_ci95"],
    )


def row(line: Line, report: dict[str, Any]) -> str:
    stats = report["players"][0]  # the measured player is the first seat's
    won, out_of, rate, (low, high) = share(stats, line)
    what = "decided deals" if line.measure == "deals" else "matches"
    if line.target is None:
        verdict = "reference"
    else:
        strength = "met" if rate >= line.target else "not met"
        if rate >= line.target and low < line.target:
            strength += " (interval straddles it)"
        wall = "met" if stats["decision_ms_p99"] <= P99_BUDGET_MS else "not met"
        cpu = "met" if stats["decision_cpu_ms_p99"] <= P99_BUDGET_MS else "not met"
        verdict = (
            f"≥ {line.target:.0%}: **{strength}**; p99 ≤ 50 ms: wall **{wall}**, CPU **{cpu}**"
        )
    missed = stats.get("committed_konkans_not_laid", "–") if line.game != "conquian" else "–"
    return (
        f"| {stats['name']} vs {', '.join(line.seats[1:])} ({line.game}) | {report['matches']} "
        f"| {won}/{out_of} {what} = {rate:.1%} [{low:.1%}, {high:.1%}] "
        f"| {stats['illegal_proposals']} | {missed} | {stats['decision_ms_p50']:.2f} / "
        f"{stats['decision_ms_p99']:.1f} / {stats['decision_ms_max']:.0f} ms "
        f"| {stats['decision_cpu_ms_p50']:.2f} / {stats['decision_cpu_ms_p99']:.1f} / "
        f"{stats['decision_cpu_ms_max']:.0f} ms "
        f"| {report['seconds']:.0f} s | {verdict} |"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--matches", type=int, default=500, help="Konkan matches per line")
    parser.add_argument("--conquian-matches", type=int, default=None, help="default: --matches")
    parser.add_argument("--seed", default="bench")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--progress", action="store_true")
    parser.add_argument(
        "--budget",
        type=float,
        default=None,
        help="the expert's time cap in seconds (one worker only; default: the level's)",
    )
    parser.add_argument(
        "--only",
        default="",
        help="comma list of line names: " + ", ".join(line.name for line in LINES),
    )
    args = parser.parse_args(argv)
    if args.budget is not None:
        if args.workers != 1:
            parser.error("--budget needs --workers 1 (it is set in this process)")
        expert.DEFAULT_BUDGET = args.budget
    wanted = {name for name in args.only.split(",") if name}
    lines = [line for line in LINES if not wanted or line.name in wanted]
    header = [
        f"Measured {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC on "
        f"{platform.machine()}, {os.cpu_count()} cores, CPython {platform.python_version()}, "
        f"{args.workers} worker process(es), seed {args.seed!r}.",
        "",
        "| player | matches | won, 95 % interval | illegal | committed Konkans not laid "
        "| decision p50 / p99 / max (wall) | same, CPU time | time | target |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    print("\n".join(header), flush=True)
    for line in lines:
        count = args.matches
        if line.game == "conquian" and args.conquian_matches is not None:
            count = args.conquian_matches
        report = run_arena(
            line.game,
            line.seats,
            count,
            args.seed,
            workers=args.workers,
            progress=args.progress,
        ).to_json()
        print(row(line, report), flush=True)
        print(f"{line.name}: done in {report['seconds']:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
