"""Bot benchmark: decision time on one core and strength over seeded matches.

    .venv/bin/python bench/bench_bots.py            # 500 Konkan + 500 Conquian matches
    .venv/bin/python bench/bench_bots.py --matches 100

Strength: the strong Konkan bot against three simple players (the bot's seat
rotates over the matches; 25 % of matches won is chance), and the Conquian bot
against the simple player (seats rotate; share of decided deals won, 50 % is
chance). Decision time is measured on every call the strong bots make in those
matches. Prints markdown.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sahrat.bots import simple_conquian, simple_konkan
from sahrat.bots.conquian_bot import ConquianBot
from sahrat.bots.konkan_bot import KonkanBot
from sahrat.rules import conquian, konkan
from sahrat.rules.errors import RuleError
from sahrat.rules.options import ConquianOptions, KonkanOptions

Player = Callable[[dict[str, Any]], Any]


@dataclass
class Timed:
    """Wraps a player and records how long each decision takes."""

    player: Player
    times: list[float]

    def __call__(self, view: dict[str, Any]) -> Any:
        started = time.perf_counter()
        action = self.player(view)
        self.times.append(time.perf_counter() - started)
        return action


@dataclass
class Results:
    matches: int = 0
    wins: int = 0
    bot_total: int = 0
    others_total: int = 0
    others_seats: int = 0
    deals_won: int = 0
    deals_lost: int = 0
    draws: int = 0
    illegal: int = 0
    finishes: dict[str, int] = field(default_factory=dict)
    times: list[float] = field(default_factory=list)
    seconds: float = 0.0


def _play(engine: Any, state: Any, seats: list[Player], results: Results) -> Any:
    while not state.over:
        seat = engine.to_act(state)
        action = seats[seat](engine.view(state, seat))
        try:
            state, _ = engine.apply(state, action)
        except RuleError:
            results.illegal += 1
            state, _ = engine.apply(state, engine.timeout_action(state))
    return state


def konkan_strength(game: str, matches: int, results: Results) -> None:
    options = KonkanOptions.for_game(game)
    started = time.perf_counter()
    for index in range(matches):
        bot_seat = index % options.players
        seats: list[Player] = [simple_konkan.act] * options.players
        seats[bot_seat] = Timed(KonkanBot().act, results.times)
        state = konkan.new_game(options, f"bench-bots:{game}:{index}")
        state = _play(konkan, state, seats, results)
        totals = state.totals
        results.matches += 1
        results.wins += state.match_winner == bot_seat
        results.bot_total += totals[bot_seat]
        results.others_total += sum(totals) - totals[bot_seat]
        results.others_seats += options.players - 1
        for result in state.results:
            if result.winner == bot_seat:
                key = result.finish.value
                results.finishes[key] = results.finishes.get(key, 0) + 1
    results.seconds = time.perf_counter() - started


def conquian_strength(matches: int, results: Results) -> None:
    options = ConquianOptions()
    started = time.perf_counter()
    for index in range(matches):
        bot_seat = index % 2
        seats: list[Player] = [simple_conquian.act, simple_conquian.act]
        seats[bot_seat] = Timed(ConquianBot().act, results.times)
        state = conquian.new_game(options, f"bench-bots:conquian:{index}")
        state = _play(conquian, state, seats, results)
        results.matches += 1
        results.wins += state.match_winner == bot_seat
        for deal in state.results:
            if deal.winner is None:
                results.draws += 1
            elif deal.winner == bot_seat:
                results.deals_won += 1
            else:
                results.deals_lost += 1
    results.seconds = time.perf_counter() - started


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def _percentile(times: list[float], q: float) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _met(ok: bool) -> str:
    return "**met**" if ok else "**not met**"


def report(konkan_results: dict[str, Results], conquian_results: Results) -> str:
    lines = [
        f"Machine: {platform.machine()}, CPython {platform.python_version()}, pinned to core 0.",
        "",
        "| decision time, one core | decisions | p50 | p99 | max | target |",
        "|---|---|---|---|---|---|",
    ]
    rows = [(f"Konkan strong bot, {g}", r) for g, r in konkan_results.items()]
    rows.append(("Conquian bot", conquian_results))
    for name, res in rows:
        p50 = statistics.median(res.times)
        p99 = _percentile(res.times, 0.99)
        ok = p50 <= 0.005 and p99 <= 0.050
        lines.append(
            f"| {name} | {len(res.times):,} | {_ms(p50)} | {_ms(p99)} | {_ms(max(res.times))} "
            f"| p50 ≤ 5 ms, p99 ≤ 50 ms — {_met(ok)} |"
        )
    lines += [
        "",
        "| Konkan: strong bot vs 3 simple players | matches | won | bot avg total "
        "| simple avg total | illegal moves | target |",
        "|---|---|---|---|---|---|---|",
    ]
    for game, res in konkan_results.items():
        rate = res.wins / res.matches
        bot_avg = res.bot_total / res.matches
        others_avg = res.others_total / res.others_seats
        lines.append(
            f"| {game} | {res.matches} | {rate:.1%} | {bot_avg:.1f} | {others_avg:.1f} "
            f"| {res.illegal} | ≥ 40 % won — {_met(rate >= 0.40)}; "
            f"a lower average total — {_met(bot_avg < others_avg)} |"
        )
    for game, res in konkan_results.items():
        outs = ", ".join(f"{k} {v}" for k, v in sorted(res.finishes.items()))
        lines.append(f"\n{game}: rounds the bot won: {outs}; {res.seconds:.0f} s.")
    res = conquian_results
    decided = res.deals_won + res.deals_lost
    rate = res.deals_won / decided if decided else 0.0
    lines += [
        "",
        "| Conquian: bot vs simple player | matches | matches won | deals won / decided "
        "| drawn deals | illegal moves | target |",
        "|---|---|---|---|---|---|---|",
        f"| conquian | {res.matches} | {res.wins / res.matches:.1%} "
        f"| {res.deals_won}/{decided} = {rate:.1%} | {res.draws} | {res.illegal} "
        f"| ≥ 65 % of decided deals — {_met(rate >= 0.65)} |",
        f"\nConquian: {res.seconds:.0f} s.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=500, help="Konkan matches per game")
    parser.add_argument("--conquian-matches", type=int, default=500)
    parser.add_argument("--games", default="konkan", help="comma list: konkan,konkan71")
    args = parser.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {0})
    konkan_results: dict[str, Results] = {}
    for game in args.games.split(","):
        konkan_results[game] = Results()
        konkan_strength(game, args.matches, konkan_results[game])
        print(f"{game}: done in {konkan_results[game].seconds:.0f} s", file=sys.stderr)
    conquian_results = Results()
    conquian_strength(args.conquian_matches, conquian_results)
    print(report(konkan_results, conquian_results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
