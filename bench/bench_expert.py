"""One arena line for the expert, with its report kept up to date as matches finish.

    .venv/bin/python bench/bench_expert.py --game konkan --seats expert,simple,simple,simple \
        --matches 1000 --seed 1 --workers 1 --out /tmp/expert-simple.txt

The same run as ``sahrat arena`` with the same arguments (the same seeds, so the same
matches: match ``i`` is dealt from ``arena:<seed>:<game>:<i>``), but the report of
the matches played so far is rewritten to ``--out`` every ``--every`` matches. On a
shared machine a long line may not finish within the time there is: what finished
is then still a measurement, with its interval, of the first matches of the line.

A line can also be played in parts, one after the other (``--first``: the index of the
part's first match), each part's matches kept beside its report (``<out>.pickle``), and
the parts added up into the line's report:

    .venv/bin/python bench/bench_expert.py --seats expert,simple,simple,simple \
        --matches 250 --first 250 --out /tmp/part2.txt
    .venv/bin/python bench/bench_expert.py --merge /tmp/part1.txt /tmp/part2.txt ...
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import time

from sahrat.arena import ArenaReport, MatchResult, PlayerStats, run_arena


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="konkan")
    parser.add_argument("--seats")
    parser.add_argument("--first", type=int, default=0, help="index of the first match")
    parser.add_argument("--merge", nargs="+", help="parts' reports to add up (their .pickle)")
    parser.add_argument("--matches", type=int, default=1000)
    parser.add_argument("--seed", default="1")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--out", help="file the running report is written to")
    parser.add_argument("--every", type=int, default=10)
    args = parser.parse_args()
    if args.merge:
        print(merge(args.merge).text())
        return
    if not args.seats or not args.out:
        parser.error("--seats and --out are needed to play a line")
    seats = [name.strip() for name in args.seats.split(",")]
    running = ArenaReport(
        game=args.game,
        seats=seats,
        matches=0,
        seed=args.seed,
        seconds=0.0,
        players={
            name: PlayerStats(name, seats.count(name), len(seats)) for name in dict.fromkeys(seats)
        },
    )
    started = time.perf_counter()

    def write(final: bool) -> None:
        running.seconds = time.perf_counter() - started
        text = running.text() + ("\n(finished)\n" if final else "\n(running)\n")
        partial = f"{args.out}.part"
        with open(partial, "w", encoding="utf-8") as handle:
            handle.write(f"{time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())} UTC\n{text}")
        os.replace(partial, args.out)

    results: list[MatchResult] = []

    def on_result(result: MatchResult) -> None:
        running.add(result)
        running.matches += 1
        results.append(result)
        if running.matches % args.every == 0:
            write(False)
            keep(results)

    def keep(done: list[MatchResult]) -> None:
        part = {"game": args.game, "seats": seats, "seed": args.seed, "first": args.first}
        part["results"] = done
        part["seconds"] = time.perf_counter() - started
        with open(f"{args.out}.pickle.part", "wb") as handle:
            pickle.dump(part, handle)
        os.replace(f"{args.out}.pickle.part", f"{args.out}.pickle")

    run_arena(
        args.game,
        seats,
        args.matches,
        args.seed,
        workers=args.workers,
        on_result=on_result,
        first=args.first,
    )
    write(True)
    keep(results)


def merge(outs: list[str]) -> ArenaReport:
    """The report of a line played in parts (each part's ``<out>.pickle``)."""
    parts = []
    for out in outs:
        with open(f"{out}.pickle", "rb") as handle:
            parts.append(pickle.load(handle))
    first = parts[0]
    seats = first["seats"]
    if any(p["seats"] != seats or p["game"] != first["game"] for p in parts):
        sys.exit("the parts are not of one line")
    report = ArenaReport(
        game=first["game"],
        seats=seats,
        matches=sum(len(p["results"]) for p in parts),
        seed=first["seed"],
        seconds=sum(p["seconds"] for p in parts),
        players={
            name: PlayerStats(name, seats.count(name), len(seats)) for name in dict.fromkeys(seats)
        },
    )
    ranges = sorted((p["first"], p["first"] + len(p["results"])) for p in parts)
    print(f"matches {', '.join(f'{a}..{b - 1}' for a, b in ranges)}")
    for part in parts:
        for result in part["results"]:
            report.add(result)
    return report


if __name__ == "__main__":
    main()
