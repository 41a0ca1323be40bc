"""The analysis's entry points: a record cut into rounds (:func:`plan`), one round's
decisions (:func:`analyse_round`, :mod:`sahrat.analysis.decisions`), the rounds put
together (:func:`assemble`, :mod:`sahrat.analysis.summary`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sahrat.analysis.decisions import analyse_span, round_spans
from sahrat.analysis.summary import summarise
from sahrat.rules.errors import RuleError
from sahrat.rules.record import GameRecord, options_for

SAMPLES = 48
# The deals a match's decisions share: a long match (rounds played on by the turn timer
# run to many hundreds of actions) gets fewer deals a decision, so that any match costs
# about what a usual one (350 actions, 48 deals) does.
ACTION_BUDGET = 350 * SAMPLES
FEWEST_SAMPLES = 8


class NotAnalysable(ValueError):
    """A record this version cannot analyse (a Conquian match, one that does not replay)."""


@dataclass(frozen=True)
class RoundJob:
    """One round's work, picklable: the record and the round's steps."""

    record: dict[str, Any]
    round: int
    first_step: int
    last_step: int
    samples: int = SAMPLES


@dataclass
class AnalysisPlan:
    record: dict[str, Any]
    seats: list[str]
    jobs: list[RoundJob] = field(default_factory=list)


def plan(record: Mapping[str, Any], samples: int = SAMPLES) -> AnalysisPlan:
    """Replay ``record`` and cut it into rounds; NotAnalysable when it cannot be."""
    data = dict(record.get("record", record)) if "actions" not in record else dict(record)
    try:
        players = options_for(str(data.get("game")), dict(data.get("options") or {})).players
    except (RuleError, TypeError, ValueError) as error:
        raise NotAnalysable(f"not a record: {error}") from error
    if len(data.get("seats") or ()) != players:
        data["seats"] = None  # a match with bots names only its people's seats
    try:
        parsed = GameRecord.from_json(data)
    except RuleError as error:
        raise NotAnalysable(f"the record does not replay: {error}") from error
    if parsed.game == "conquian":
        raise NotAnalysable("Conquian matches are not analysed yet")
    try:
        spans = round_spans(parsed)
    except RuleError as error:
        raise NotAnalysable(f"the record does not replay: {error}") from error
    seats = list(data.get("seats") or ())
    if len(seats) != players:
        seats = [f"seat {seat + 1}" for seat in range(players)]
    samples = min(samples, max(FEWEST_SAMPLES, ACTION_BUDGET // max(1, len(parsed.actions))))
    jobs = [
        RoundJob(data, index + 1, first, last, samples) for index, (first, last) in enumerate(spans)
    ]
    return AnalysisPlan(data, seats, jobs)


def analyse_round(job: RoundJob) -> dict[str, Any]:
    """One round's decisions, facts and seats' figures (the costly part)."""
    return analyse_span(job)


def assemble(
    analysis_plan: AnalysisPlan, rounds: list[dict[str, Any]], seconds: float
) -> dict[str, Any]:
    return summarise(analysis_plan, rounds, seconds)


def analyse_record(
    record: Mapping[str, Any],
    progress: Callable[[int, int], None] | None = None,
    samples: int = SAMPLES,
) -> dict[str, Any]:
    """The whole analysis in this process; ``progress(done, total)`` after each round."""
    started = time.perf_counter()
    analysis_plan = plan(record, samples)
    results = []
    for index, job in enumerate(analysis_plan.jobs):
        results.append(analyse_round(job))
        if progress is not None:
            progress(index + 1, len(analysis_plan.jobs))
    return assemble(analysis_plan, results, time.perf_counter() - started)
