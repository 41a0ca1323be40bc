"""The moves weighed at a decision and their values on sampled deals.

A :class:`Position` is what one seat could see (its view) and the set of cards it could
not place (the other hands and the stock: a seat that remembers every discard knows
which cards these are, never where they are). A :class:`Line` is a move as the round
simulator plays it. :func:`evaluate` deals the unseen cards ``samples`` times with the
expert's sampler (an unopened seat holds no opening, an opened one no meld) and plays
every line on the same deals to the end of the round.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from sahrat.bots.konkan_deals import base_round, sample
from sahrat.bots.konkan_lines import (
    Line,
    Position,
    grid_lines,
    play_line,
    weighed_lines,
)

__all__ = ["Line", "Position", "evaluate", "grid_lines", "weighed_lines"]

# points of a round a decision must lose to be tagged (docs/analysis.md, "Tags")
THRESHOLDS = {"inaccuracy": 4.0, "mistake": 10.0, "blunder": 25.0}
INACCURACY = THRESHOLDS["inaccuracy"]
SIGNIFICANCE = 2.0  # standard errors a loss must exceed to count


def evaluate(
    position: Position,
    played: Line,
    played_from: Position | None,
    others: Sequence[Line],
    samples: int,
    rng: random.Random,
    most: int | None = None,
) -> tuple[list[float], list[float]]:
    """The mean value of ``played`` (from ``played_from``, the state before its discard,
    when given) and of each of ``others`` on the same deals, and the standard error of
    each one's paired difference with ``played`` (0 for ``played`` itself).

    ``samples`` deals first; while the best line beats ``played`` by more than the
    inaccuracy threshold yet by no more than :data:`SIGNIFICANCE` standard errors, more
    deals are played, ``samples`` at a time, up to ``most``: the deals go where the
    verdict is in doubt."""
    base = base_round(position.me)
    base_played = base_round(played_from.me) if played_from is not None else base
    results: list[list[float]] = [[] for _ in range(len(others) + 1)]
    limit = most if most is not None else samples
    while True:
        for _ in range(samples):
            world = sample(position.me, base, position.hidden, rng)
            game = base_played.copy()
            for seat in range(game.players):
                if seat != position.seat:
                    game.hands[seat] = world.hands[seat]
                    game.hand_jokers[seat] = world.hand_jokers[seat]
                    game.values[seat] = -1
            game.stock = list(world.stock)
            results[0].append(play_line(position, game, played, played_from is not None))
            for index, line in enumerate(others, 1):
                results[index].append(play_line(position, world.copy(), line, False))
        means, errors = _means(results)
        best = max(range(len(means)), key=lambda i: means[i])
        lost = means[best] - means[0]
        doubtful = INACCURACY < lost <= SIGNIFICANCE * errors[best]
        if not doubtful or len(results[0]) >= limit:
            return means, errors


def _means(results: list[list[float]]) -> tuple[list[float], list[float]]:
    means = [sum(values) / len(values) for values in results]
    errors = [0.0]
    for values in results[1:]:
        diffs = [a - b for a, b in zip(values, results[0], strict=True)]
        mean = sum(diffs) / len(diffs)
        spread = sum((d - mean) ** 2 for d in diffs) / max(1, len(diffs) - 1)
        errors.append((spread / len(diffs)) ** 0.5)
    return means, errors
