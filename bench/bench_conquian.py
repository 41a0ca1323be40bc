"""Conquian benchmarks on one core: self-play speed, the 11-card check, and a peer.

Run with ``python bench/bench_conquian.py``. Prints markdown rows for
``bench/README.md``; every figure is the median [min–max] of 5 runs.

* Self-play with random legal actions: at each step a random choice among the
  simple actions (refuse, pass, force, decline, discards) and, when the face-up
  card can be taken, a take (found by ``best_take``) — the same kind of player as
  the peer's. Also the simple player (``bots.simple_conquian``), which plays from
  the seat's view dict.
* The 11-card check (``can_reach_eleven``) on dense hands: 11 cards drawn from
  4 suits × 4 consecutive ranks, where many melds overlap; and ``best_take`` on
  dense 10-card hands plus a face-up card.
* Peer, measured in the same sitting: RLCard's gin-rummy raw game loop
  (``GinRummyGame``: ``get_legal_actions`` + ``step``) with random legal actions.
  RLCard is a bench-only dependency (``pip install rlcard``).
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence

from sahrat.bots.simple_conquian import act
from sahrat.rules import conquian
from sahrat.rules.cards import CONQUIAN_RANKS, Card, Suit
from sahrat.rules.conquian import Action, Phase, Take, apply, best_take, can_reach_eleven, new_game

RUNS = 5
SECONDS = 2.0  # per self-play run


def pin_one_core() -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {0})


def spread(values: Sequence[float]) -> str:
    return f"{statistics.median(values):,.0f} [{min(values):,.0f}–{max(values):,.0f}]"


def random_selfplay(run: int) -> tuple[float, float]:
    """Deals/s and actions/s of random legal play, for ``SECONDS``."""
    rng = random.Random(run)
    takeable = (Phase.CHOOSE, Phase.TURNED_UP)
    deals = actions = 0
    match = 0
    started = time.perf_counter()
    while time.perf_counter() - started < SECONDS:
        state = new_game(seed=f"bench-{run}-{match}")
        match += 1
        while not state.over:
            action: Action | None = None
            if state.phase in takeable and rng.random() < 0.5:
                seat = state.turn
                melds = best_take(state.melds[seat], state.hands[seat], state.face_up)  # type: ignore[arg-type]
                if melds is not None:
                    action = Take(seat, melds)
            if action is None:
                action = rng.choice(conquian.simple_actions(state))
            state, _ = apply(state, action)
            actions += 1
        deals += len(state.results)
    seconds = time.perf_counter() - started
    return deals / seconds, actions / seconds


def bot_selfplay(run: int) -> tuple[float, float]:
    """Deals/s and actions/s of the simple player against itself, from views."""
    deals = actions = 0
    match = 0
    started = time.perf_counter()
    while time.perf_counter() - started < SECONDS:
        state = new_game(seed=f"bot-{run}-{match}")
        match += 1
        while not state.over:
            state, _ = apply(state, act(conquian.view(state, state.turn)))
            actions += 1
        deals += len(state.results)
    seconds = time.perf_counter() - started
    return deals / seconds, actions / seconds


def rlcard_selfplay(run: int) -> tuple[float, float] | None:
    """Games/s and steps/s of RLCard's gin rummy, random legal actions, for ``SECONDS``."""
    try:
        import numpy as np
        from rlcard.games.gin_rummy.game import GinRummyGame  # type: ignore[import-untyped]
    except ImportError:
        return None
    game = GinRummyGame()
    game.np_random = np.random.RandomState(run)
    rng = random.Random(run)
    games = steps = 0
    started = time.perf_counter()
    while time.perf_counter() - started < SECONDS:
        game.init_game()
        while not game.is_over():
            game.step(rng.choice(game.judge.get_legal_actions()))
            steps += 1
        games += 1
    seconds = time.perf_counter() - started
    return games / seconds, steps / seconds


def dense_hands(count: int, size: int, rng: random.Random) -> list[list[Card]]:
    """Hands from 4 suits × 4 consecutive ranks of A 2 3 4 5 6 7 J Q K."""
    hands = []
    for _ in range(count):
        low = rng.randint(0, len(CONQUIAN_RANKS) - 4)
        pool = [Card(rank, suit) for suit in Suit for rank in CONQUIAN_RANKS[low : low + 4]]
        hands.append(rng.sample(pool, size))
    return hands


def latencies(fn: Callable[[list[Card]], object], hands: list[list[Card]]) -> list[float]:
    out = []
    clock = time.perf_counter
    for hand in hands:
        started = clock()
        fn(hand)
        out.append((clock() - started) * 1e6)
    return out


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return ordered[len(ordered) // 2], ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def check_rows() -> list[str]:
    rng = random.Random(11)
    eleven = dense_hands(5000, 11, rng)
    ten = dense_hands(5000, 11, rng)  # 10 in hand + the face-up card
    cases: list[tuple[str, Callable[[list[Card]], object], list[list[Card]]]] = [
        (
            "11-card check `can_reach_eleven`, dense",
            lambda h: can_reach_eleven([], h[1:], h[0]),
            eleven,
        ),
        ("`best_take`, 10 dense cards + face-up card", lambda h: best_take([], h[1:], h[0]), ten),
    ]
    rows = []
    for name, fn, hands in cases:
        p50s, p99s = [], []
        for _ in range(RUNS):
            p50, p99 = percentiles(latencies(fn, hands))
            p50s.append(p50)
            p99s.append(p99)
        rows.append(
            f"| {name} | {statistics.median(p50s):.1f} µs [{min(p50s):.1f}–{max(p50s):.1f}] | "
            f"{statistics.median(p99s):.1f} µs [{min(p99s):.1f}–{max(p99s):.1f}] |"
        )
    return rows


def main() -> None:
    pin_one_core()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, pinned to core 0")
    ours: list[tuple[float, float]] = []
    theirs: list[tuple[float, float]] = []
    bots: list[tuple[float, float]] = []
    for run in range(RUNS):  # interleaved, so both see the same machine load
        ours.append(random_selfplay(run))
        peer = rlcard_selfplay(run)
        if peer is not None:
            theirs.append(peer)
        bots.append(bot_selfplay(run))
    print(f"\n| Conquian self-play, one core | median [min–max] over {RUNS} runs |")
    print("|---|---|")
    print(f"| random legal play: deals/s | {spread([d for d, _ in ours])} |")
    print(f"| random legal play: actions/s | {spread([a for _, a in ours])} |")
    print(f"| simple player vs itself, from views: deals/s | {spread([d for d, _ in bots])} |")
    print(f"| simple player vs itself, from views: actions/s | {spread([a for _, a in bots])} |")
    if theirs:
        print(
            f"| peer: RLCard gin rummy, random legal: games/s | {spread([g for g, _ in theirs])} |"
        )
        print(
            f"| peer: RLCard gin rummy, random legal: steps/s | {spread([s for _, s in theirs])} |"
        )
        ratios = [a / s for (_, a), (_, s) in zip(ours, theirs, strict=True)]
        print(
            f"| ratio: our actions/s ÷ RLCard steps/s | {statistics.median(ratios):.2f}× "
            f"[{min(ratios):.2f}–{max(ratios):.2f}] |"
        )
    else:
        print("| peer: RLCard gin rummy | not installed (`pip install rlcard`) |")
    print("\n| check | p50 | p99 |")
    print("|---|---|---|")
    for row in check_rows():
        print(row)


if __name__ == "__main__":
    main()
