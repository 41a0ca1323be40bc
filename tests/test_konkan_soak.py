"""A seeded soak: Konkan rounds of self-play with every invariant checked after every
action (cards conserved, one seat to act, no view leaks, replay equal).

``make soak`` plays 102 matches a chunk (over 2,000 rounds in all); ``make test``
plays ``SAHRAT_SOAK_MATCHES`` (default 6) of the same seeded matches, the first ones."""

from __future__ import annotations

import os

import pytest

from sahrat.simulate import simulate

MATCHES = int(os.environ.get("SAHRAT_SOAK_MATCHES", "6"))

# (game, players, matches, seed): every match has at least 5 rounds, so at the full
# count the four chunks together play at least 4 × 102 × 5 = 2,040 rounds.
CHUNKS = [
    ("konkan", 4, MATCHES, "soak-a"),
    ("konkan", 3, MATCHES, "soak-b"),
    ("konkan", 2, MATCHES, "soak-c"),
    ("konkan71", 4, MATCHES, "soak-d"),
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
