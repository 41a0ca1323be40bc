"""One arena line for the expert, with its report kept up to date as matches finish.

    .venv/bin/python bench/bench_expert.py --game konkan --seats expert,simple,simple,simple \
        --matches 1000 --seed 1 --workers 1 --out /tmp/expert-simple.txt

The same run as ``sahrat arena`` with the same arguments (the same seeds, so the same
matches: match ``i`` is dealt from ``arena:<seed>:<game>:<i>``), but the report of
the matches played so far is rewritten to ``--out`` every ``--every`` matches. On a
shared machine a long line may not finish within the time there is: what finished
is then still a measurement, with its interval, of the first matches of the line.
"""

from __future__ import annotations

import argparse
import os
import time

from sahrat.arena import ArenaReport, MatchResult, PlayerStats, run_arena


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="konkan")
    parser.add_argument("--seats", required=True)
    parser.add_argument("--matches", type=int, default=1000)
    parser.add_argument("--seed", default="1")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--out", required=True, help="file the running report is written to")
    parser.add_argument("--every", type=int, default=10)
    args = parser.parse_args()
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

    def on_result(result: MatchResult) -> None:
        running.add(result)
        running.matches += 1
        if running.matches % args.every == 0:
            write(False)

    run_arena(args.game, seats, args.matches, args.seed, workers=args.workers, on_result=on_result)
    write(True)


if __name__ == "__main__":
    main()
