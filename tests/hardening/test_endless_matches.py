"""Endless matches: whole matches of random mixes of turn timers and simple players, on
every game and player count, with the table's default bounds (docs/rules.md §1.3,
§1.9, §2.6). Each must end within its bound, and its pot must be paid out whole.

``SAHRAT_ENDLESS_MATCHES`` matches (default 6; ``make hardening`` runs more), from
the seed ``SAHRAT_ENDLESS_SEED`` (printed, random by default). The figures (the
longest match in actions and in rounds, the time it took) go to
``test-artifacts/hardening/endless_matches.json``.
"""

from __future__ import annotations

import random
import time
from typing import Any

import pytest

from match_bounds_support import play, problems

from .conftest import env_count, env_seed, write_results

TABLES: list[tuple[str, int]] = [("konkan", n) for n in (2, 3, 4)]
TABLES += [("konkan71", n) for n in (2, 3, 4)] + [("conquian", 2)]


def test_every_match_of_timers_and_players_ends(request: pytest.FixtureRequest) -> None:
    count = env_count("SAHRAT_ENDLESS_MATCHES", 6)
    seed = env_seed("SAHRAT_ENDLESS_SEED")
    rnd = random.Random(seed)
    longest: dict[str, Any] = {"actions": 0}
    failures: list[str] = []
    started = time.perf_counter()
    for index in range(count):
        game, players = rnd.choice(TABLES)
        values: dict[str, Any] = {"stake": rnd.choice([0, 10, 25])}
        if game != "conquian":
            values["players"] = players
        timers = [rnd.random() < 0.6 for _ in range(players)]
        match_seed = f"endless-{seed}-{index}"
        began = time.perf_counter()
        played = play(game, values, match_seed, timers)
        seconds = time.perf_counter() - began
        failures += [f"{match_seed} {game} {timers}: {p}" for p in problems(played)]
        if played.actions > longest["actions"]:
            longest = {
                "game": game,
                "players": players,
                "timers": sum(timers),
                "actions": played.actions,
                "rounds": played.rounds,
                "bound": played.bound(),
                "seconds": round(seconds, 2),
            }
    write_results(
        "endless_matches",
        {
            "matches": count,
            "seed": seed,
            "longest": longest,
            "seconds": round(time.perf_counter() - started, 1),
            "failures": len(failures),
        },
        request.node,
    )
    assert failures == [], failures[:5]
