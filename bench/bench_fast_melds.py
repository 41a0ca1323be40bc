"""What the expert's Konkan pieces cost: the meld value (engine search against the fast
one, cold and with its memo warm, and one card added to a known hand, as in a
rollout), and one simulated round played to its end by the simple policy.

    .venv/bin/python bench/bench_fast_melds.py [--hands 2000] [--seed 1]

CPU time of this process (``time.process_time``), so other work on the machine
counts little.
"""

from __future__ import annotations

import argparse
import random
import time

from sahrat.bots import fastmelds
from sahrat.bots.konkan_deals import face_of
from sahrat.bots.konkan_sim import Round
from sahrat.rules import konkan
from sahrat.rules.cards import konkan_deck
from sahrat.rules.melds import AceValue
from sahrat.rules.options import KonkanOptions
from sahrat.rules.search import best_melds


def per_call(label: str, calls: int, seconds: float) -> None:
    print(f"{label}: {seconds / calls * 1e3:.3f} ms a call ({calls} calls)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hands", type=int, default=2000)
    parser.add_argument("--seed", default="1")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    deck = konkan_deck()
    hands = [rng.sample(deck, 14) for _ in range(args.hands)]
    encoded = [fastmelds.encode(hand) for hand in hands]
    started = time.process_time()
    for hand in hands:
        best_melds(hand)
    per_call("engine search best_melds (14 cards)", len(hands), time.process_time() - started)
    fastmelds._RUNS.clear()
    fastmelds._HANDS.clear()
    started = time.process_time()
    for mask, jokers in encoded:
        fastmelds.meld_value(mask, jokers)
    per_call("fast meld value, memo cold", len(hands), time.process_time() - started)
    fastmelds._HANDS.clear()  # the suits' runs stay memoised, the hands do not
    started = time.process_time()
    for mask, jokers in encoded:
        fastmelds.meld_value(mask, jokers)
    per_call("fast meld value, suit patterns known", len(hands), time.process_time() - started)
    extra = [rng.randrange(52) for _ in hands]
    started = time.process_time()
    for (mask, jokers), face in zip(encoded, extra, strict=True):
        fastmelds.meld_value(mask + (1 << (2 * face)), jokers)
    per_call("fast meld value, one card added", len(hands), time.process_time() - started)
    rounds = []
    for index in range(200):
        state = konkan.new_game(KonkanOptions(), f"bench-{args.seed}-{index}")
        masks, jokers_ = zip(*(fastmelds.encode(hand) for hand in state.hands), strict=True)
        stock = [face_of(card) for card in state.stock]
        rounds.append(
            Round(
                list(masks),
                list(jokers_),
                [False] * 4,
                [],
                stock,
                -1,
                state.turn,
                51,
                AceValue.ALWAYS_11,
                15,
            )
        )
    started = time.process_time()
    for sim in rounds:
        sim.play_turn(sim.turn, draw=False)
        sim.run()
    per_call("simulated round from the deal to its end", len(rounds), time.process_time() - started)


if __name__ == "__main__":
    main()
