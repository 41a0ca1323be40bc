"""Konkan benchmarks: self-play speed and meld-search latency, on one core.

Run with ``make bench`` (or ``python bench/bench_konkan.py``). Prints
markdown rows for ``bench/README.md``. Peers measured in the same run:

* the bare deal — ``random.shuffle`` of 106 cards dealt 15+14+14+14 — as the
  floor any engine pays per round;
* RLCard's gin-rummy meld search (``get_best_meld_clusters``, pure Python)
  on the same dense 10-card hands our search is given, when RLCard is
  installed (``pip install -r bench/requirements.txt``).
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence

from sahrat.rules.cards import Card, Rank, Suit, joker, konkan_deck
from sahrat.rules.search import best_melds, best_opening
from sahrat.simulate import simulate

RUNS = 5


def pin_one_core() -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {0})


def spread(values: Sequence[float]) -> str:
    return f"{statistics.median(values):,.0f} [{min(values):,.0f}–{max(values):,.0f}]"


def selfplay(matches: int = 20) -> tuple[list[float], list[float]]:
    """Rounds/s and actions/s of 4-player Konkan between simple players (no checks)."""
    rounds, actions = [], []
    for run in range(RUNS):
        started = time.perf_counter()
        summary = simulate("konkan", matches, f"bench-{run}", players=4, check=False)
        seconds = time.perf_counter() - started
        rounds.append(summary.rounds / seconds)
        actions.append(summary.actions / seconds)
    return rounds, actions


def deals_per_second() -> list[float]:
    out = []
    deck = konkan_deck()
    rng = random.Random(1)
    for _ in range(RUNS):
        count = 20_000
        started = time.perf_counter()
        for _ in range(count):
            cards = list(deck)
            rng.shuffle(cards)
            _hands = [cards[0:15], cards[15:29], cards[29:43], cards[43:57]]
        out.append(count / (time.perf_counter() - started))
    return out


def random_hands(count: int, jokers: int, rng: random.Random) -> list[list[Card]]:
    reals = [card for card in konkan_deck() if not card.is_joker]
    extra = [joker(i) for i in range(jokers)]
    return [rng.sample(reals, 15 - jokers) + extra for _ in range(count)]


def dense_hands(count: int, size: int, jokers: int, rng: random.Random) -> list[list[Card]]:
    """Hands drawn from 4 suits × 4 consecutive ranks (both decks): many overlapping melds."""
    hands = []
    for _ in range(count):
        low = rng.randint(1, 10)
        pool = [
            Card(Rank(rank), suit, copy)
            for suit in Suit
            for rank in range(low, low + 4)
            for copy in (0, 1)
        ]
        hands.append(rng.sample(pool, size - jokers) + [joker(i) for i in range(jokers)])
    return hands


def latencies(fn: Callable[[list[Card]], object], hands: list[list[Card]]) -> list[float]:
    out = []
    for hand in hands:
        started = time.perf_counter()
        fn(hand)
        out.append((time.perf_counter() - started) * 1e6)
    return out


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return (
        ordered[len(ordered) // 2],
        ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))],
    )


def search_rows() -> list[str]:
    rng = random.Random(7)
    rows = []
    for kind, maker in (
        ("random", lambda j: random_hands(2000, j, rng)),
        ("dense", lambda j: dense_hands(2000, 15, j, rng)),
    ):
        for jokers in (0, 1, 2):
            hands = maker(jokers)
            p50s, p99s = [], []
            for _ in range(RUNS):
                p50, p99 = percentiles(latencies(lambda h: best_opening(h, 51), hands))
                p50s.append(p50)
                p99s.append(p99)
            rows.append(
                f"| best opening, 15 cards, {kind}, {jokers} joker(s) | "
                f"{statistics.median(p50s):.0f} µs [{min(p50s):.0f}–{max(p50s):.0f}] | "
                f"{statistics.median(p99s):.0f} µs [{min(p99s):.0f}–{max(p99s):.0f}] |"
            )
    return rows


def peer_rows() -> list[str]:
    """Our search against RLCard's on the same dense 10-card single-deck hands
    (RLCard's gin-rummy search takes exactly 10 cards)."""
    rng = random.Random(11)
    hands = []
    for _ in range(2000):
        low = rng.randint(1, 10)
        pool = [Card(Rank(rank), suit) for suit in Suit for rank in range(low, low + 4)]
        hands.append(rng.sample(pool, 10))
    ours = [percentiles(latencies(best_melds, hands)) for _ in range(RUNS)]
    rows = [
        "| our meld search (`best_melds`), 10 cards, dense, no joker | "
        f"{statistics.median(p for p, _ in ours):.0f} µs | "
        f"{statistics.median(p for _, p in ours):.0f} µs |"
    ]
    try:
        from rlcard.games.gin_rummy.utils import melding, utils
    except ImportError:
        rows.append("| RLCard gin-rummy meld search | not installed | |")
        return rows
    rl_hands = [[utils.card_from_text(_rlcard_text(card)) for card in hand] for hand in hands]
    theirs = [
        percentiles(latencies(melding.get_best_meld_clusters, hand_set))  # type: ignore[arg-type]
        for hand_set in [rl_hands] * RUNS
    ]
    rows.append(
        "| RLCard `get_best_meld_clusters`, same hands | "
        f"{statistics.median(p for p, _ in theirs):.0f} µs | "
        f"{statistics.median(p for _, p in theirs):.0f} µs |"
    )
    return rows


def _rlcard_text(card: Card) -> str:
    assert card.rank is not None and card.suit is not None
    return card.face[0] + card.suit.value


def main() -> None:
    pin_one_core()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, pinned to core 0")
    rounds, actions = selfplay()
    deals = deals_per_second()
    print("\n| self-play, 4 players, simple player | median [min–max] over 5 runs |")
    print("|---|---|")
    print(f"| rounds/s | {spread(rounds)} |")
    print(f"| actions/s | {spread(actions)} |")
    print(f"| peer: shuffle + deal 106 cards, deals/s | {spread(deals)} |")
    print("\n| meld search | p50 | p99 |")
    print("|---|---|---|")
    for row in search_rows():
        print(row)
    for row in peer_rows():
        print(row)


if __name__ == "__main__":
    main()
