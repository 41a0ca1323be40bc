"""Matches between bot levels, each seat playing from its own view only.

``sahrat arena --game konkan --seats expert,simple,simple,simple --matches 100`` plays
seeded matches; the seat list rotates by one place every match so that every
player sits in every seat (Konkan's opener and Conquian's dealer matter). Match
``i`` uses the seed ``arena:<seed>:<game>:<i>``, so a run is repeatable and its
matches can be shared out between processes (``workers``) without changing the
result (only the decision times change).

Per player name (a level; several seats of one level are counted together):
matches won, rounds (Konkan) or deals (Conquian) won and drawn, the average
match total per seat, 95 % Wilson confidence intervals, illegal proposals (the
engine refused the move, or the player raised: the turn timer's move is played
instead) and decision times.
"""

from __future__ import annotations

import math
import multiprocessing
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from sahrat.bots.levels import GAMES, LEVELS, bot_for
from sahrat.rules import conquian, konkan
from sahrat.rules.errors import RuleError
from sahrat.rules.options import ConquianOptions, KonkanOptions
from sahrat.rules.record import engine_for

Z95 = 1.959963984540054  # the normal quantile of a two-sided 95 % interval


def wilson(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (good at small counts and near 0 or 1)."""
    if trials == 0:
        return (0.0, 1.0)
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank ``q`` quantile (0 for no values)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


@dataclass
class MatchResult:
    """One match, by seat: the names sitting there and what happened."""

    names: list[str]
    winner: int | None
    totals: list[int]
    round_winners: list[int | None]
    illegal: list[int]
    times: list[list[float]]
    konkans_missed: list[int]  # committed seats that held a Konkan and did not lay it
    cpu_times: list[list[float]]  # the process's CPU time: other processes do not count


def _new_match(game: str, players: int, seed: str) -> Any:
    if game == "conquian":
        return conquian.new_game(ConquianOptions(), seed)
    options = KonkanOptions.for_game(game, {"players": players})
    return konkan.new_game(options, seed)


def match_seed(seed: str, game: str, index: int) -> str:
    return f"arena:{seed}:{game}:{index}"


def seating(seats: Sequence[str], index: int) -> list[str]:
    """The names by seat in match ``index``: the list rotated by ``index`` places."""
    n = len(seats)
    return [seats[(seat - index) % n] for seat in range(n)]


def _holds_konkan(state: Any, seat: int) -> bool:
    """A committed Konkan seat at its play step with a Konkan in hand (a 15-card hand)."""
    from sahrat.bots.konkan_view import KonkanSeat
    from sahrat.bots.simple_konkan import _going_out

    if not state.committed[seat] or state.phase is not konkan.Phase.PLAY:
        return False
    me = KonkanSeat(konkan.view(state, seat, history=True))
    return _going_out(me, me.hand, konkan_only=True) is not None


@dataclass
class Played:
    """A match played out: its final state and, by seat, what the players did."""

    state: Any
    illegal: list[int]
    times: list[list[float]]
    konkans_missed: list[int]
    cpu_times: list[list[float]] = field(default_factory=list)


def play_out(game: str, state: Any, players: Sequence[Callable[[dict[str, Any]], Any]]) -> Played:
    """Play ``state`` to the end; every seat decides from ``engine.view(state, seat)`` only.
    A refused or crashing move counts as an illegal proposal and the turn timer's move is
    played instead."""
    engine = engine_for(game)
    seats = len(players)
    played = Played(state, [0] * seats, [[] for _ in range(seats)], [0] * seats)
    played.cpu_times = [[] for _ in range(seats)]
    while not state.over:
        seat = engine.to_act(state)
        assert seat is not None  # someone is to act until the match is over
        view = engine.view(state, seat)
        check_konkan = game != "conquian" and _holds_konkan(state, seat)
        started, cpu_started = time.perf_counter(), time.process_time()
        try:
            action = players[seat](view)
        except Exception:  # a crashing player is an illegal proposal: the timer moves
            action = None
        played.times[seat].append(time.perf_counter() - started)
        played.cpu_times[seat].append(time.process_time() - cpu_started)
        try:
            if action is None:
                raise RuleError("the player raised")
            state, _ = engine.apply(state, action)
        except RuleError:
            played.illegal[seat] += 1
            state, _ = engine.apply(state, engine.timeout_action(state))
        if check_konkan and not (state.over or state.phase is konkan.Phase.PLAY):
            played.konkans_missed[seat] += 1  # the turn moved on: the Konkan was not laid
    played.state = state
    return played


def play_match(game: str, seats: Sequence[str], seed: str, index: int) -> MatchResult:
    """Play match ``index`` of an arena run: ``seats`` rotated by ``index`` places."""
    names = seating(seats, index)
    state_seed = match_seed(seed, game, index)
    players = [bot_for(game, name, seed=f"{state_seed}:{seat}") for seat, name in enumerate(names)]
    played = play_out(game, _new_match(game, len(names), state_seed), players)
    state = played.state
    return MatchResult(
        names=names,
        winner=state.match_winner,
        totals=list(state.points) if game == "conquian" else state.totals,
        round_winners=[result.winner for result in state.results],
        illegal=played.illegal,
        times=played.times,
        konkans_missed=played.konkans_missed,
        cpu_times=played.cpu_times,
    )


@dataclass
class PlayerStats:
    name: str
    seats: int  # seats this name takes in every match
    seats_per_match: int
    matches: int = 0
    matches_won: int = 0
    rounds: int = 0
    rounds_won: int = 0
    rounds_drawn: int = 0
    total_sum: int = 0
    illegal: int = 0
    konkans_missed: int = 0
    times: list[float] = field(default_factory=list)
    cpu_times: list[float] = field(default_factory=list)

    def to_json(self, game: str) -> dict[str, Any]:
        decided = self.rounds - self.rounds_drawn
        unit = "deals" if game == "conquian" else "rounds"
        low, high = wilson(self.matches_won, self.matches)
        d_low, d_high = wilson(self.rounds_won, decided)
        return {
            "name": self.name,
            "seats": self.seats,
            "matches": self.matches,
            "matches_won": self.matches_won,
            "match_win_rate": _ratio(self.matches_won, self.matches),
            "match_win_ci95": [round(low, 4), round(high, 4)],
            "match_chance": round(self.seats / self.seats_per_match, 4),
            unit: self.rounds,
            f"{unit}_won": self.rounds_won,
            f"{unit}_drawn": self.rounds_drawn,
            f"{unit}_decided": decided,
            f"decided_{unit}_win_rate": _ratio(self.rounds_won, decided),
            f"decided_{unit}_win_ci95": [round(d_low, 4), round(d_high, 4)],
            "average_total_per_seat": _ratio(self.total_sum, self.matches * self.seats, 2),
            "illegal_proposals": self.illegal,
            "committed_konkans_not_laid": self.konkans_missed,
            "decisions": len(self.times),
            "decision_ms_p50": round(percentile(self.times, 0.50) * 1000, 3),
            "decision_ms_p99": round(percentile(self.times, 0.99) * 1000, 3),
            "decision_ms_max": round(max(self.times, default=0.0) * 1000, 3),
            # CPU time of the deciding process: what the decision costs on a shared machine
            "decision_cpu_ms_p50": round(percentile(self.cpu_times, 0.50) * 1000, 3),
            "decision_cpu_ms_p99": round(percentile(self.cpu_times, 0.99) * 1000, 3),
            "decision_cpu_ms_max": round(max(self.cpu_times, default=0.0) * 1000, 3),
        }


def _ratio(a: int, b: int, digits: int = 4) -> float:
    return round(a / b, digits) if b else 0.0


@dataclass
class ArenaReport:
    game: str
    seats: list[str]
    matches: int
    seed: str
    seconds: float
    players: dict[str, PlayerStats]

    def add(self, result: MatchResult) -> None:
        for name in set(result.names):
            stats = self.players[name]
            mine = [seat for seat, n in enumerate(result.names) if n == name]
            stats.matches += 1
            stats.matches_won += result.winner in mine
            stats.rounds += len(result.round_winners)
            stats.rounds_won += sum(w in mine for w in result.round_winners)
            stats.rounds_drawn += sum(w is None for w in result.round_winners)
            stats.total_sum += sum(result.totals[seat] for seat in mine)
            stats.illegal += sum(result.illegal[seat] for seat in mine)
            stats.konkans_missed += sum(result.konkans_missed[seat] for seat in mine)
            for seat in mine:
                stats.times.extend(result.times[seat])
                stats.cpu_times.extend(result.cpu_times[seat])

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "seats": self.seats,
            "matches": self.matches,
            "seed": self.seed,
            "seconds": round(self.seconds, 1),
            "players": [stats.to_json(self.game) for stats in self.players.values()],
        }

    def text(self) -> str:
        data = self.to_json()
        unit = "deals" if self.game == "conquian" else "rounds"
        lines = [
            f"{self.game}: {', '.join(self.seats)}; {self.matches} matches, seed {self.seed!r}, "
            f"{self.seconds:.0f} s (seats rotate every match)"
        ]
        for p in data["players"]:
            low, high = p["match_win_ci95"]
            d_low, d_high = p[f"decided_{unit}_win_ci95"]
            lines.append(
                f"  {p['name']} ({p['seats']} seat{'s' if p['seats'] > 1 else ''}): "
                f"matches won {p['matches_won']}/{p['matches']} = {p['match_win_rate']:.1%} "
                f"[{low:.1%}, {high:.1%}] (chance {p['match_chance']:.0%}); "
                f"{unit} won {p[f'{unit}_won']}/{p[f'{unit}_decided']} decided = "
                f"{p[f'decided_{unit}_win_rate']:.1%} [{d_low:.1%}, {d_high:.1%}], "
                f"{p[f'{unit}_drawn']} drawn; average total {p['average_total_per_seat']}; "
                f"illegal {p['illegal_proposals']}; decision p50 {p['decision_ms_p50']} ms, "
                f"p99 {p['decision_ms_p99']} ms, max {p['decision_ms_max']} ms (CPU time "
                f"p50 {p['decision_cpu_ms_p50']}, p99 {p['decision_cpu_ms_p99']}, "
                f"max {p['decision_cpu_ms_max']} ms)"
                + (
                    f"; committed Konkans not laid {p['committed_konkans_not_laid']}"
                    if self.game != "conquian"
                    else ""
                )
            )
        return "\n".join(lines)


def _check(game: str, seats: Sequence[str]) -> None:
    if game not in GAMES:
        raise ValueError(f"unknown game {game!r}; games are {', '.join(GAMES)}")
    for name in seats:
        if name not in LEVELS:
            raise ValueError(f"unknown player {name!r}; players are {', '.join(LEVELS)}")
    allowed = (2,) if game == "conquian" else (2, 3, 4)
    if len(seats) not in allowed:
        raise ValueError(f"{game} is played by {' or '.join(map(str, allowed))} players")


def _one(job: tuple[str, tuple[str, ...], str, int]) -> MatchResult:
    return play_match(*job)


def run_arena(
    game: str,
    seats: Sequence[str],
    matches: int,
    seed: str = "1",
    *,
    workers: int = 1,
    progress: bool = False,
    on_result: Callable[[MatchResult], None] | None = None,
    first: int = 0,
) -> ArenaReport:
    """Play ``matches`` matches of ``game`` with ``seats`` rotating; ``workers`` processes.
    ``first``: the index of the first match (a long line played in parts: the matches
    ``first`` .. ``first + matches - 1`` of the same line, the same deals)."""
    _check(game, seats)
    seats = list(seats)
    report = ArenaReport(
        game=game,
        seats=seats,
        matches=matches,
        seed=seed,
        seconds=0.0,
        players={
            name: PlayerStats(name, seats.count(name), len(seats)) for name in dict.fromkeys(seats)
        },
    )
    jobs = [(game, tuple(seats), seed, index) for index in range(first, first + matches)]
    started = time.perf_counter()
    results: Iterator[MatchResult]
    pool = None
    if workers > 1:
        pool = multiprocessing.get_context("spawn").Pool(workers)
        results = pool.imap(_one, jobs)
    else:
        results = map(_one, jobs)
    try:
        if progress:
            from tqdm import tqdm

            results = iter(tqdm(results, total=matches, desc=f"{game} arena", unit="match"))
        for result in results:
            report.add(result)
            if on_result is not None:
                on_result(result)
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    report.seconds = time.perf_counter() - started
    return report
