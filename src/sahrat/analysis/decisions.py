"""One round's decisions, each valued from its seat's view (docs/analysis.md).

A round is replayed from the record; at each decision of a seat (the draw, when taking
the pile's card was possible; the rest of the turn, laid and discarded) the moves
weighed are played out on the same sampled deals of the cards the seat could not see
(:mod:`sahrat.analysis.lines`). The move made is valued from the state just before its
discard, so the lay-downs it actually made count, not the simulator's.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from sahrat.analysis import facts as deck_facts
from sahrat.analysis.lines import (
    SIGNIFICANCE,
    THRESHOLDS,
    Line,
    Position,
    evaluate,
    grid_lines,
    weighed_lines,
)
from sahrat.rules import konkan
from sahrat.rules.record import GameRecord, engine_for, start

TAGS = sorted(THRESHOLDS.items(), key=lambda tag: -tag[1])  # the worst first
MOST_SAMPLES = 4  # times ``samples`` a doubtful decision may be given
PUZZLES_PER_SEAT = 2  # decisions of a seat in a round given every answer's value


@dataclass
class Step:
    state: Any  # before ``action``
    action: Any
    index: int  # the replay's step of ``state``


def round_spans(record: GameRecord) -> list[tuple[int, int]]:
    """(first step, last step) of each round: the steps whose state is in that round,
    the last one the state before the action that ended it."""
    engine = engine_for(record.game)
    state = start(record)
    spans: list[tuple[int, int]] = []
    first = 0
    finished = 0
    for index, raw in enumerate(record.actions):
        state, _ = engine.apply(state, engine.action_from_json(raw))
        if len(state.results) > finished:
            finished = len(state.results)
            spans.append((first, index))
            first = index + 1
    return spans


def round_steps(record: dict[str, Any], first: int, last: int) -> list[Step]:
    parsed = GameRecord.from_json(record)
    engine = engine_for(parsed.game)
    state = start(parsed)
    out: list[Step] = []
    for index, raw in enumerate(parsed.actions[: last + 1]):
        action = engine.action_from_json(raw)
        if index >= first:
            out.append(Step(state, action, index))
        state, _ = engine.apply(state, action)
    out.append(Step(state, None, last + 1))  # the round's end
    return out


def tag_of(lost: float, error: float) -> str | None:
    if lost <= SIGNIFICANCE * error:
        return None
    for name, floor in TAGS:
        if lost >= floor:
            return name
    return None


def analyse_span(job: Any) -> dict[str, Any]:
    """The decisions of one round (:class:`sahrat.analysis.report.RoundJob`)."""
    steps = round_steps(job.record, job.first_step, job.last_step)
    decisions: list[dict[str, Any]] = []
    turns: dict[int, int] = {}
    end = steps[-1].state
    result = end.results[-1]
    players = end.players
    for position_index, step in enumerate(steps[:-1]):
        state, action = step.state, step.action
        seat = getattr(action, "seat", None)
        if seat is None or state.committed[seat]:
            continue
        # each decision its own samples: what other seats did elsewhere never moves them
        rng = random.Random(f"analysis:{job.round}:{step.index}")
        if state.phase is konkan.Phase.DRAW and isinstance(
            action, konkan.Draw | konkan.TakeDiscard
        ):
            turns[seat] = turns.get(seat, 0) + 1
            decision = draw_decision(steps, position_index, job.samples, rng)
        elif state.phase is konkan.Phase.PLAY and _turn_begins(steps, position_index):
            if state.drawn is None and not state.acted[seat]:
                turns[seat] = turns.get(seat, 0) + 1  # the opener's first turn has no draw
            decision = play_decision(steps, position_index, job.samples, rng)
        else:
            continue
        if decision is None:
            continue
        decision.update(round=job.round, seat=seat, turn=turns.get(seat, 1), step=step.index)
        decisions.append(decision)
    _mark_puzzles(decisions, steps, job.samples // 2 or 1, random.Random(f"puzzles:{job.round}"))
    round_facts = deck_facts.round_facts(steps, decisions, result)
    return {
        "round": job.round,
        "first_step": job.first_step,
        "last_step": job.last_step,
        "scores": list(result.scores),
        "players": players,
        "decisions": decisions,
        "facts": round_facts,
    }


def _turn_begins(steps: list[Step], index: int) -> bool:
    """Is ``steps[index]`` the first play-phase action of its seat's turn?"""
    if index == 0:
        return True
    before = steps[index - 1]
    seat = steps[index].action.seat
    return not (
        before.state.phase is konkan.Phase.PLAY and getattr(before.action, "seat", -1) == seat
    )


def _discard_after(steps: list[Step], index: int) -> int | None:
    """The step of the discard (or end of turn) that ends the turn begun at ``index``."""
    seat = steps[index].action.seat
    for later in range(index, len(steps) - 1):
        action = steps[later].action
        if getattr(action, "seat", None) != seat:
            return None
        if isinstance(action, konkan.Discard | konkan.EndTurn):
            return later
    return None


def draw_decision(
    steps: list[Step], index: int, samples: int, rng: random.Random
) -> dict[str, Any] | None:
    step = steps[index]
    seat = step.action.seat
    position = Position.of(step.state, seat)
    lines = weighed_lines(position, "draw")
    if len(lines) < 2:
        return None
    played = Line("take" if isinstance(step.action, konkan.TakeDiscard) else "draw")
    decision = _judge(position, played, None, lines, samples, rng, "draw")
    decision["facts"] = deck_facts.draw_facts(position, played)
    return decision


def play_decision(
    steps: list[Step], index: int, samples: int, rng: random.Random
) -> dict[str, Any] | None:
    step = steps[index]
    seat = step.action.seat
    end = _discard_after(steps, index)
    if end is None or isinstance(steps[end].action, konkan.EndTurn):
        return None
    position = Position.of(step.state, seat)
    before_discard = Position.of(steps[end].state, seat)
    card = steps[end].action.card
    face_card = str(card)
    if position.opened:
        move = "discard"
    elif before_discard.opened:
        move = "hand" if len(before_discard.hand) == 1 else "open"
    else:
        move = "wait" if position.can_open else "discard"
    played = Line(move, face_card)
    lines = weighed_lines(position, "play")
    decision = _judge(position, played, before_discard, lines, samples, rng, "play")
    decision["facts"] = deck_facts.play_facts(steps, index, end, position, played, decision)
    deck_facts.hindsight(decision, steps, end, position)
    return decision


def _judge(
    position: Position,
    played: Line,
    played_from: Position | None,
    lines: list[Line],
    samples: int,
    rng: random.Random,
    kind: str,
) -> dict[str, Any]:
    """Value the move made and the lines weighed on the same deals."""
    others = [line for line in lines if line != played]
    values, errors = evaluate(
        position, played, played_from, others, samples, rng, MOST_SAMPLES * samples
    )
    best_index = max(range(len(values)), key=lambda i: (values[i], i == 0))
    error = errors[best_index] if best_index else 0.0
    difference = values[best_index] - values[0]
    # a difference the deals cannot tell from chance is no loss: the best of a few
    # noisy means is always above the move made, by about a standard error
    lost = difference if difference > SIGNIFICANCE * error else 0.0
    all_lines = [played, *others]
    best = all_lines[best_index] if lost > 0 else played
    tag = tag_of(lost, error)
    return {
        "kind": kind,
        "played": played.to_json(position, melds=False),
        "best": best.to_json(position),
        "value": round(values[0], 1),
        "best_value": round(values[best_index] if lost > 0 else values[0], 1),
        "lost": round(lost, 1),
        "error": round(error, 1),
        "tag": tag,
        "by": "expected" if tag else None,
        "candidates": [
            {**line.to_json(position, melds=False), "value": round(value, 1)}
            for line, value in zip(all_lines, values, strict=True)
        ],
        "position": position.to_json(),
        "puzzle": False,
    }


def _mark_puzzles(
    decisions: list[dict[str, Any]], steps: list[Step], samples: int, rng: random.Random
) -> None:
    """Give each seat's worst mistakes of the round every answer's value."""
    by_seat: dict[int, list[dict[str, Any]]] = {}
    for decision in decisions:
        if decision["tag"] in ("mistake", "blunder") and decision["by"] == "expected":
            by_seat.setdefault(decision["seat"], []).append(decision)
    index_of = {step.index: i for i, step in enumerate(steps)}
    for seat_decisions in by_seat.values():
        seat_decisions.sort(key=lambda d: -d["lost"])
        for decision in seat_decisions[:PUZZLES_PER_SEAT]:
            step = steps[index_of[decision["step"]]]
            position = Position.of(step.state, decision["seat"])
            lines = grid_lines(position, decision["kind"])
            if len(lines) < 2:
                continue
            values, _ = evaluate(position, lines[0], None, lines[1:], samples, rng)
            decision["grid"] = [
                {**line.to_json(position, melds=False), "value": round(value, 1)}
                for line, value in zip(lines, values, strict=True)
            ]
