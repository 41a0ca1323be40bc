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

Two versions of a player are told apart soonest on the same deals (``--compare``): each
plays the same matches (the same seed and ``--first``), and the paired differences,
match by match, of the player's wins and of its margin (its total less the others'
average, in points; lower is better) are given with their standard errors. A match's
deal is shared, so much of the luck of the cards cancels out of the margin's
difference, though the two lines part at their first different decision:

    .venv/bin/python bench/bench_expert.py --compare /tmp/a.txt /tmp/b.txt --name expert
"""

from __future__ import annotations

import argparse
import math
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
    parser.add_argument("--compare", nargs=2, help="two runs' reports (their .pickle), paired")
    parser.add_argument("--name", default="expert", help="the player --compare follows")
    parser.add_argument("--matches", type=int, default=1000)
    parser.add_argument("--seed", default="1")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--out", help="file the running report is written to")
    parser.add_argument("--every", type=int, default=10)
    args = parser.parse_args()
    if args.merge:
        print(merge(args.merge).text())
        return
    if args.compare:
        print(compare(args.compare[0], args.compare[1], args.name))
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


def _by_match(out: str) -> dict[int, MatchResult]:
    with open(f"{out}.pickle", "rb") as handle:
        part = pickle.load(handle)
    return {part["first"] + index: result for index, result in enumerate(part["results"])}


def _won_and_margin(result: MatchResult, name: str) -> tuple[float, float]:
    """Did the first seat of ``name`` win the match, and its total less the others'
    average (the same player may sit more than once: its first seat is followed)."""
    seat = result.names.index(name)
    others = [total for index, total in enumerate(result.totals) if index != seat]
    won = 1.0 if result.winner == seat else 0.0
    return won, result.totals[seat] - sum(others) / len(others)


def _mean_and_error(values: list[float]) -> tuple[float, float]:
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, math.inf
    spread = sum((value - mean) ** 2 for value in values) / (n - 1)
    return mean, math.sqrt(spread / n)


def compare(out_a: str, out_b: str, name: str) -> str:
    """B against A on the matches both played: the paired differences of ``name``'s
    wins and margins, each with its standard error."""
    a, b = _by_match(out_a), _by_match(out_b)
    shared = sorted(set(a) & set(b))
    if not shared:
        sys.exit("the two runs share no match")
    pairs = [(_won_and_margin(a[i], name), _won_and_margin(b[i], name)) for i in shared]
    won_a = sum(x[0] for x, _ in pairs) / len(pairs)
    won_b = sum(y[0] for _, y in pairs) / len(pairs)
    won_diff = _mean_and_error([y[0] - x[0] for x, y in pairs])
    margin_a = _mean_and_error([x[1] for x, _ in pairs])[0]
    margin_b = _mean_and_error([y[1] for _, y in pairs])[0]
    margin_diff = _mean_and_error([y[1] - x[1] for x, y in pairs])
    return (
        f"{len(shared)} matches ({shared[0]}..{shared[-1]}), {name}: "
        f"won A {100 * won_a:.1f} %, B {100 * won_b:.1f} %, "
        f"B - A {100 * won_diff[0]:+.1f} ± {100 * won_diff[1]:.1f} points; "
        f"margin A {margin_a:+.1f}, B {margin_b:+.1f}, "
        f"B - A {margin_diff[0]:+.1f} ± {margin_diff[1]:.1f} (lower is better)"
    )


if __name__ == "__main__":
    main()
