"""Self-play: whole matches between simple players, with every invariant checked
after every action. Used by ``sahrat simulate``, the soak tests and the benchmark.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from sahrat.rules.engine import Engine
from sahrat.rules.errors import RuleError
from sahrat.rules.record import GameRecord, engine_for, options_for, record_of, replay

Bot = Callable[[dict[str, Any]], Any]


def bot_for(game: str) -> Bot:
    """The simple player of ``game`` (self-play measures the engine, not a bot)."""
    from sahrat.bots.levels import bot_for as level_bot

    return level_bot(game, "simple")


def _strings(data: Any, skip: frozenset[str]) -> Iterator[str]:
    if isinstance(data, str):
        yield data
    elif isinstance(data, dict):
        for key, value in data.items():
            if key not in skip:
                yield from _strings(value, skip)
    elif isinstance(data, list):
        for item in data:
            yield from _strings(item, skip)


# Keys whose strings are not card identities: faces a joker stands for, and the
# finished rounds' revealed hands (cards since reshuffled and dealt again).
_NOT_CARDS = frozenset({"joker_for", "scores", "options", "type", "phase", "game", "finish"})


def view_leaks(engine: Engine, state: Any, seat: int | None) -> list[str]:
    """Cards a view shows that its viewer must not see: another hand, the stock, dead cards."""
    secret: set[str] = set()
    for other in range(state.players):
        if other != seat:
            secret.update(str(card) for card in state.hands[other])
    secret.update(str(card) for card in getattr(state, "stock", []))
    secret.update(str(card) for card in getattr(state, "dead", []))
    shown = set(_strings(engine.view(state, seat), _NOT_CARDS))
    return sorted(shown & secret)


@dataclass
class MatchReport:
    seed: str
    actions: int = 0
    fallbacks: int = 0
    violations: list[str] = field(default_factory=list)
    finishes: Counter[str] = field(default_factory=Counter)
    events: Counter[str] = field(default_factory=Counter)
    winner: int | None = None
    rounds: int = 0


def play_match(
    game: str,
    seed: str,
    *,
    players: int | None = None,
    options: dict[str, Any] | None = None,
    check: bool = True,
    bots: list[Bot] | None = None,
    max_actions: int = 200_000,
) -> MatchReport:
    """One whole match of simple players. ``check`` runs every invariant after every action."""
    engine = engine_for(game)
    values = dict(options or {})
    if players is not None and game != "conquian":
        values["players"] = players
    table_options = options_for(game, values)
    state = engine.new_game(table_options, seed)
    state0 = state
    seats = bots or [bot_for(game)] * state.players
    report = MatchReport(seed)
    actions: list[Any] = []
    while not state.over:
        if report.actions >= max_actions:
            report.violations.append(f"match {seed} did not end in {max_actions} actions")
            break
        seat = engine.to_act(state)
        if seat is None:
            report.violations.append("no seat to act in a running match")
            break
        action = seats[seat](engine.view(state, seat))
        try:
            state, events = engine.apply(state, action)
        except RuleError:
            # The player proposed something illegal: the turn timer's move stands in.
            report.fallbacks += 1
            action = engine.timeout_action(state)
            state, events = engine.apply(state, action)
        actions.append(action)
        report.actions += 1
        for event in events:
            report.events[event.type] += 1
            if event.type == "deal_end":  # Conquian: a won deal names its winner
                report.finishes["draw" if event.seat is None else "win"] += 1
        if check:
            report.violations += [f"{seed}#{report.actions}: {p}" for p in _check(engine, state)]
    report.winner = getattr(state, "match_winner", None)
    report.rounds = len(state.results)
    if game != "conquian":
        for result in state.results:
            report.finishes[result.finish.value] += 1
    if check:
        report.violations += _check_replay(game, engine, state0, actions, state)
    return report


def _check(engine: Engine, state: Any) -> list[str]:
    problems = list(engine.check_invariants(state))
    seat = engine.to_act(state)
    if not state.over and seat is None:
        problems.append("no seat to act")
    for viewer in [None, *range(state.players)]:
        leaks = view_leaks(engine, state, viewer)
        if leaks:
            problems.append(f"view of {viewer} shows hidden cards {leaks}")
    return problems


def _check_replay(
    game: str, engine: Engine, state0: Any, actions: list[Any], final: Any
) -> list[str]:
    record = record_of(game, state0, actions)
    again = replay(GameRecord.from_json(record.to_json()))
    if not again.ok:
        return [f"replay stopped at action {again.error_index}: {again.error}"]
    for seat in [None, *range(final.players)]:
        if engine.view(again.state, seat) != engine.view(final, seat):
            return [f"replay of {state0.seed} differs from the live game"]
    return []


@dataclass
class Summary:
    game: str
    players: int
    matches: int = 0
    rounds: int = 0
    actions: int = 0
    fallbacks: int = 0
    violations: int = 0
    finishes: Counter[str] = field(default_factory=Counter)
    events: Counter[str] = field(default_factory=Counter)
    wins_by_seat: Counter[int] = field(default_factory=Counter)
    seconds: float = 0.0
    first_violations: list[str] = field(default_factory=list)

    def add(self, report: MatchReport) -> None:
        self.matches += 1
        self.rounds += report.rounds
        self.actions += report.actions
        self.fallbacks += report.fallbacks
        self.violations += len(report.violations)
        self.finishes.update(report.finishes)
        self.events.update(report.events)
        if report.winner is not None:
            self.wins_by_seat[report.winner] += 1
        if report.violations and len(self.first_violations) < 10:
            self.first_violations += report.violations[: 10 - len(self.first_violations)]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "game": self.game,
            "players": self.players,
            "matches": self.matches,
            "actions": self.actions,
            "invariant_violations": self.violations,
            "illegal_bot_moves": self.fallbacks,
            "seconds": round(self.seconds, 3),
            "wins_by_seat": {str(k): v for k, v in sorted(self.wins_by_seat.items())},
            "events": dict(sorted(self.events.items())),
        }
        if self.game == "conquian":
            out |= {
                "deals": self.finishes["win"] + self.finishes["draw"],
                "won_deals": self.finishes["win"],
                "drawn_deals": self.finishes["draw"],
                "forced_takes": self.events["force"],
                "declined_forces": self.events["decline_force"],
            }
        else:
            out |= {
                "rounds": self.rounds,
                "hands": self.finishes["hand"],
                "konkans": self.finishes["konkan"] + self.finishes["committed_konkan"],
                "committed_konkans": self.finishes["committed_konkan"],
                "void_rounds": self.finishes["void"],
                "plain_outs": self.finishes["out"],
            }
        if self.first_violations:
            out["first_violations"] = self.first_violations
        return out


def simulate(
    game: str,
    matches: int,
    seed: int | str,
    *,
    players: int | None = None,
    check: bool = True,
    progress: bool = False,
) -> Summary:
    """Play ``matches`` seeded matches; the i-th uses seed ``f"{seed}:{i}"``."""
    count = 2 if game == "conquian" else (players or 4)
    summary = Summary(game, count)
    started = time.perf_counter()
    indices: Any = range(matches)
    if progress:
        from tqdm import tqdm

        indices = tqdm(indices, desc=f"{game} matches", unit="match")
    for index in indices:
        summary.add(play_match(game, f"{seed}:{index}", players=players, check=check))
    summary.seconds = time.perf_counter() - started
    return summary
