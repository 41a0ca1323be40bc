"""How strong a sampled search can be, in the round simulator alone.

    .venv/bin/python bench/bench_konkan_ceiling.py --matches 200 --deals 16 --discards 4
    .venv/bin/python bench/bench_konkan_ceiling.py --matches 2000 --player simple

Whole five-round, four-seat Konkan matches played in :mod:`sahrat.bots.konkan_sim`
(about 10 ms a match), one seat by the player under test and three by the simulator's
own policy (the simple player's: open when the search finds the target, take the pile's
card only to use it, lay what fits, throw the least useful card). The players:

* ``simple``: the policy itself (an equal share is 25 %);
* ``search``: at each turn, after the draw, every way to end it (open now or keep the
  cards; each of the ``--discards`` least useful cards) is played out to the end of the
  round on the same ``--deals`` deals of the cards the seat cannot see, and the best
  mean is played (the expert's method, with neither its cap nor its margin);
* ``search --horizon H``: the same with each play-out cut after H turns of all seats and
  the seats still in the round valued as the expert values them
  (:mod:`sahrat.bots.konkan_value`);
* ``sighted``: the same, but played out once on the true deal (it sees the stock and the
  hands): not a fair player, the bound of what a look one turn ahead is worth.

The search's play-outs model the other seats exactly (they play the same policy), which
no player at a real table can: its figure here is above what the same search can win
against the bots of the arena (``sahrat arena``).
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable, Sequence

from sahrat.arena import wilson
from sahrat.bots import konkan_value
from sahrat.bots.konkan_sim import CARD_VALUE_15, JOKER_FACE, WEIGHTS, Round

Policy = Callable[[Round, int, bool], None]


def deal(rng: random.Random, first: int) -> Round:
    return konkan_value.deal(rng, 4, first, 51)


def faces(mask: int) -> list[int]:
    out, face = [], 0
    while mask:
        out += [face] * (mask & 3)
        mask >>= 2
        face += 1
    return out


def least_useful(mask: int, count: int) -> list[int]:
    def use(face: int) -> tuple[int, int]:
        total = sum(w * ((mask >> (2 * o)) & 3) for o, w in WEIGHTS[face])
        return total, -CARD_VALUE_15[face]

    return sorted(set(faces(mask)), key=use)[:count]


def value(scores: Sequence[float], seat: int) -> float:
    return sum(s for k, s in enumerate(scores) if k != seat) / 3 - scores[seat]


def _draw(game: Round, seat: int, draw: bool) -> bool:
    if not draw:
        return True
    if game.wants_top(seat):
        game.add(seat, game.top)
        game.top = -1
        return True
    if not game.stock:
        game.turn = -1
        return False
    game.add(seat, game.stock.pop())
    return True


def _hidden(game: Round, seat: int, rng: random.Random) -> Round:
    world = game.copy()
    pool: list[int] = list(world.stock)
    counts = {}
    for other in range(4):
        if other != seat:
            cards = faces(world.hands[other]) + [JOKER_FACE] * world.hand_jokers[other]
            counts[other] = len(cards)
            pool += cards
    rng.shuffle(pool)
    for other, count in counts.items():
        hand, pool = pool[:count], pool[count:]
        world.hands[other] = sum(1 << (2 * f) for f in hand if f != JOKER_FACE)
        world.hand_jokers[other] = hand.count(JOKER_FACE)
        world.values[other] = -1
    world.stock = pool
    return world


def searcher(deals: int, discards: int, sighted: bool, seed: str, horizon: int = 0) -> Policy:
    rng = random.Random(seed)

    def play(game: Round, seat: int, draw: bool) -> None:
        opened_before = game.opened[seat]
        if not _draw(game, seat, draw):
            return
        ways = [True, False] if not opened_before and game.value(seat) >= game.target else [None]
        lines = []
        for opening in ways:
            start = game.copy()
            if opening or (opening is None and opened_before):
                start.lay_what_fits(seat)
            lines += [(opening, face, start) for face in least_useful(start.hands[seat], discards)]
        totals = [0.0] * len(lines)
        for _ in range(1 if sighted else deals):
            world = game if sighted else _hidden(game, seat, rng)
            for index, (_opening, face, start) in enumerate(lines):
                trial = start.copy()
                for other in range(4):
                    if other != seat:
                        trial.hands[other] = world.hands[other]
                        trial.hand_jokers[other] = world.hand_jokers[other]
                        trial.values[other] = -1
                trial.stock = list(world.stock)
                trial.finish_turn(seat, face, opened_before)
                if horizon:  # cut, and valued as the expert values it
                    trial.run(horizon)
                    totals[index] += value(konkan_value.scores(trial), seat)
                else:
                    trial.run()
                    totals[index] += value(trial.scores(), seat)
        best = max(range(len(lines)), key=lambda i: (totals[i], -i))
        opening, face, _start = lines[best]
        if opening or (opening is None and opened_before):
            game.lay_what_fits(seat)
        game.finish_turn(seat, face, opened_before)

    return play


def match(index: int, seed: str, policy: Policy | None) -> tuple[float, float]:
    """(the tested seat's share of the win, its total less the others' average)."""
    rng = random.Random(f"{seed}-{index}")
    me = index % 4
    totals = [0] * 4
    for number in range(5):
        game = deal(rng, number % 4)
        first, turns = True, 0
        while game.turn >= 0 and turns < 200:
            seat = game.turn
            if seat == me and policy is not None:
                policy(game, seat, not first)
            else:
                game.play_turn(seat, draw=not first)
            first, turns = False, turns + 1
        totals = [a + b for a, b in zip(totals, game.scores(), strict=True)]
    best = min(totals)
    winners = [seat for seat in range(4) if totals[seat] == best]
    share = 1 / len(winners) if me in winners else 0.0
    return share, totals[me] - sum(t for k, t in enumerate(totals) if k != me) / 3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--player", choices=("simple", "search", "sighted"), default="search")
    parser.add_argument("--matches", type=int, default=200)
    parser.add_argument("--deals", type=int, default=16)
    parser.add_argument("--discards", type=int, default=4)
    parser.add_argument("--seed", default="3")
    parser.add_argument("--horizon", type=int, default=0, help="turns before a play-out is cut")
    args = parser.parse_args()
    policy = None
    if args.player != "simple":
        policy = searcher(
            args.deals,
            args.discards,
            args.player == "sighted",
            f"search:{args.seed}",
            args.horizon,
        )
    started = time.process_time()
    results = [match(index, args.seed, policy) for index in range(args.matches)]
    wins = sum(share for share, _ in results)
    low, high = wilson(round(wins), args.matches)
    margin = sum(m for _, m in results) / args.matches
    print(
        f"{args.player} (deals {args.deals}, discards {args.discards},"
        f" horizon {args.horizon}): won {wins:g}/{args.matches}"
        f" = {100 * wins / args.matches:.1f} % [{100 * low:.1f}, {100 * high:.1f}],"
        f" margin {margin:+.1f} a match, {time.process_time() - started:.0f} s CPU"
    )


if __name__ == "__main__":
    main()
