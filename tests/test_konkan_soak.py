"""A seeded soak: over 2,000 Konkan rounds of self-play with every invariant checked
after every action (cards conserved, one seat to act, no view leaks, replay equal)."""

from __future__ import annotations

import pytest

from sahrat.simulate import simulate

# (game, players, matches, seed): every match has at least 5 rounds, so the four
# chunks together play at least 4 × 102 × 5 = 2,040 rounds.
CHUNKS = [
    ("konkan", 4, 102, "soak-a"),
    ("konkan", 3, 102, "soak-b"),
    ("konkan", 2, 102, "soak-c"),
    ("konkan71", 4, 102, "soak-d"),
]


@pytest.mark.parametrize(("game", "players", "matches", "seed"), CHUNKS)
def test_soak(game: str, players: int, matches: int, seed: str) -> None:
    summary = simulate(game, matches, seed, players=players, check=True)
    assert summary.matches == matches
    assert summary.rounds >= matches * 5
    assert summary.violations == 0, summary.first_violations
    assert summary.fallbacks == 0, "the simple player proposed an illegal move"
    finishes = summary.finishes
    assert sum(finishes.values()) == summary.rounds
