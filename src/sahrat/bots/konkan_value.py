"""What a seat's round is worth when a play-out stops before the round ends.

A play-out to the end of the round costs about a millisecond in Python, and a decision
needs dozens of deals of several lines to tell them apart: the expert's play-outs stop
after a few turns of every seat (``konkan_expert.HORIZON``) and value each seat that
has not gone out by the mean final score, in simulated rounds, of seats in the same
situation. In the round simulator alone this kept the strength of whole play-outs
(40.5 % of matches against three of the simulator's players, 48 deals, four turns,
against 40.0 % to the end of the round) at 0.4 of their CPU (``bench/README.md``).

A seat's situation (:func:`situation`): the number of players; opened or not; for an
unopened seat how far the melds in its hand are from the opening target, for an opened
one what its hand would pay, both in steps of 5 points; the cards it holds; the stock,
in steps of 10 cards; how many others have opened; and how many turns until its own.
Cells seen fewer than :data:`MIN_COUNT` times fall back to the first four fields, then
to the first two.

The table (``konkan_value.json`` beside this module) is fitted by :func:`fit`, run as
``python -m sahrat.bots.konkan_value``: :data:`ROUNDS` rounds for each number of players,
from the seed :data:`FIT_SEED`, every seat playing the simulator's policy, a third of
them to a 71-point opening, the situations of every seat taken at about a third of the
turns and each given the round's final score of that seat (§1.8: 100 unopened, the
hand's points, -30 out, doubled after a Hand).
"""

from __future__ import annotations

import json
import random
import sys
from functools import cache
from importlib import resources
from pathlib import Path

from sahrat.bots.konkan_sim import JOKER_FACE, Round
from sahrat.rules.melds import AceValue

ROUNDS = 20_000  # simulated rounds a number of players
FIT_SEED = "konkan-value-1"
MIN_COUNT = 30  # samples a cell needs to be used alone
SAMPLE_SHARE = 0.3  # the share of turns at which the seats' situations are taken

Situation = tuple[int, ...]


def situation(game: Round, seat: int) -> Situation:
    players = game.players
    others_open = sum(game.opened[other] for other in range(players) if other != seat)
    stock = min(len(game.stock) // 10, 5)
    cards = game.cards(seat)
    order = (seat - game.turn) % players  # 0: this seat moves next
    if game.opened[seat]:
        pays = min(game.points(seat), 120) // 5
        return (players, 1, pays, min(cards, 14), stock, others_open, order)
    short = min(max(0, game.target - game.value(seat)), 70) // 5
    return (players, 0, short, min(cards, 16), stock, others_open, order)


@cache
def _table() -> dict[Situation, tuple[float, int]]:
    text = resources.files("sahrat.bots").joinpath("konkan_value.json").read_text("utf-8")
    return {tuple(key): (mean, count) for key, mean, count in json.loads(text)}


def estimate(game: Round, seat: int) -> float:
    """The round's expected final score of ``seat`` (lower is better)."""
    table = _table()
    key = situation(game, seat)
    for cut in (key, key[:4], key[:2]):
        hit = table.get(cut)
        if hit is not None and hit[1] >= MIN_COUNT:
            return hit[0]
    return table[key[:2]][0]


def scores(game: Round) -> list[float]:
    """Every seat's final score: the round's own once it ended, else the estimate."""
    if game.turn < 0:
        return [float(score) for score in game.scores()]
    return [estimate(game, seat) for seat in range(game.players)]


def deal(rng: random.Random, players: int, first: int, target: int) -> Round:
    """A fresh round as the engine deals it: 14 cards a seat, 15 to the first."""
    deck = [*range(52), *range(52), JOKER_FACE, JOKER_FACE]
    rng.shuffle(deck)
    hands, jokers = [0] * players, [0] * players
    for seat in range(players):
        count = 15 if seat == first else 14
        for face in deck[:count]:
            if face == JOKER_FACE:
                jokers[seat] += 1
            else:
                hands[seat] += 1 << (2 * face)
        del deck[:count]
    game = Round(
        hands, jokers, [False] * players, [], [], -1, first, target, AceValue.ALWAYS_11, 15
    )
    game.stock = deck
    return game


def fit(rounds: int = ROUNDS, seed: str = FIT_SEED) -> list[tuple[list[int], float, int]]:
    """The table's rows: (situation, mean final score, samples), coarser keys included."""
    sums: dict[Situation, float] = {}
    counts: dict[Situation, int] = {}
    for players in (2, 3, 4):
        rng = random.Random(f"{seed}:{players}")
        for number in range(rounds):
            target = 71 if number % 3 == 2 else 51
            game = deal(rng, players, number % players, target)
            taken: list[tuple[int, Situation]] = []
            first, turns = True, 0
            while game.turn >= 0 and turns < 200:
                if not first and rng.random() < SAMPLE_SHARE:
                    taken += [(seat, situation(game, seat)) for seat in range(players)]
                game.play_turn(game.turn, draw=not first)
                first, turns = False, turns + 1
            final = game.scores()
            for seat, key in taken:
                for cut in (key, key[:4], key[:2]):
                    sums[cut] = sums.get(cut, 0.0) + final[seat]
                    counts[cut] = counts.get(cut, 0) + 1
    return [(list(key), round(sums[key] / counts[key], 3), counts[key]) for key in sorted(sums)]


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else ROUNDS
    rows = fit(rounds)
    path = Path(__file__).with_name("konkan_value.json")
    path.write_text(json.dumps(rows, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"{len(rows)} situations written to {path}")


if __name__ == "__main__":
    main()
