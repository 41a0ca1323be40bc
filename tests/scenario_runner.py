"""Runs rules scenarios: game records with an ``expect`` block.

A scenario is a JSON game record (see ``docs/game-record.md``) plus:

* ``comment`` — what the scenario shows, in plain words, citing RULES.md;
* ``expect`` — what must hold after replaying it:
  - ``error``: ``{"index": i, "code": "..."}`` — action ``i`` is refused with
    that code (and must leave the state exactly as it was); without it every
    action must be accepted;
  - ``state``: a partial spectator view (``view(state, None)``) that must match;
  - ``hands``: ``{seat: [cards]}`` exact hands (order ignored);
  - ``score_sheet``: a partial score sheet that must match.

Partial means: every key given must be present and equal; lists are compared
whole (element by element, each element partially when it is an object).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sahrat.rules.record import GameRecord, engine_for, replay

SCENARIOS = Path(__file__).parent / "scenarios"


def scenario_files(game_dir: str) -> list[Path]:
    return sorted((SCENARIOS / game_dir).glob("*.json"))


def matches(expected: Any, actual: Any, path: str = "") -> list[str]:
    """Differences between a partial expectation and the actual value."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{path}: expected an object, got {actual!r}"]
        out = []
        for key, value in expected.items():
            if key not in actual:
                out.append(f"{path}.{key}: missing")
            else:
                out += matches(value, actual[key], f"{path}.{key}")
        return out
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{path}: expected {expected!r}, got {actual!r}"]
        out = []
        for index, (e, a) in enumerate(zip(expected, actual, strict=True)):
            out += matches(e, a, f"{path}[{index}]")
        return out
    if expected != actual:
        return [f"{path}: expected {expected!r}, got {actual!r}"]
    return []


def run_scenario(path: Path) -> list[str]:
    """Replay one scenario; returns the list of unmet expectations (empty = pass)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data.get("comment"), f"{path.name}: every scenario explains itself in 'comment'"
    expect = data.get("expect", {})
    record = GameRecord.from_json(data)
    engine = engine_for(record.game)
    result = replay(record)
    problems: list[str] = []
    wanted_error = expect.get("error")
    if wanted_error is None:
        if not result.ok:
            problems.append(
                f"action {result.error_index} refused: {result.error.code}: {result.error}"
            )
    else:
        if result.ok:
            problems.append(f"expected action {wanted_error['index']} to be refused")
        else:
            assert result.error is not None
            got = {"index": result.error_index, "code": result.error.code}
            problems += matches(wanted_error, got, "error")
            # The refused action leaves the state exactly as it was.
            before = result.state.clone()
            action_json = record.actions[result.error_index]  # type: ignore[index]
            try:
                action = engine.action_from_json(action_json)
                engine.apply(result.state, action)
            except ValueError:
                pass
            if before != result.state:
                problems.append("the refused action changed the state")
    state = result.state
    if "state" in expect:
        problems += matches(expect["state"], engine.view(state, None), "state")
    for seat, cards in expect.get("hands", {}).items():
        actual = engine.view(state, int(seat))["hand"]
        if sorted(actual) != sorted(cards):
            problems.append(f"hand of seat {seat}: expected {sorted(cards)}, got {sorted(actual)}")
    if "score_sheet" in expect:
        problems += matches(expect["score_sheet"], engine.score_sheet(state), "score_sheet")
    return problems
