"""An arena line for a Konkan expert whose turn is chosen by the analysis's evaluator.

    .venv/bin/python bench/bench_search_expert.py --seats expert,simple,simple,simple \
        --matches 50 --first 0 --seed cmp --out /tmp/search.txt --deals 48

The same runs as ``bench/bench_expert.py`` (its arguments, its ``--merge`` and
``--compare``), with the expert's play decisions changed for the run: when the strong
player would open or discard, the moves of :func:`sahrat.bots.konkan_lines.weighed_lines`
(open and each of three discards, keep the cards back and each of the strong player's
three, or once open each of three discards) are played out on ``--deals`` deals of the
cards the seat cannot see, and the best mean is played, with no margin. The draw,
lay-downs once open and a committed seat's play stay the strong player's. Variants:

* ``--budget MS``: deals only while the decision has used less than MS of its thread's
  CPU; every 4 deals the lines that trail the best by more than ``--drop-z`` standard
  errors of the paired difference are dropped (99: none);
* ``--horizon H``: play-outs cut after H turns of all seats and valued by
  :mod:`sahrat.bots.konkan_value` (0: to the end of the round);
* ``--sim-lines``: before opening too, the simulator's own three discards rather than
  the strong player's.

A measurement of where the strength is: with 48 deals to the end of the round and no
budget its decisions take about 0.3 s of CPU at the p99, far beyond a bot's budget.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

from sahrat.analysis.lines import evaluate
from sahrat.bots import expert
from sahrat.bots.konkan_deals import base_round, sample
from sahrat.bots.konkan_expert import clock
from sahrat.bots.konkan_lines import Line, Position, play_line, weighed_lines
from sahrat.bots.konkan_view import KonkanSeat
from sahrat.rules import konkan
from sahrat.rules.cards import parse_card
from sahrat.rules.search import best_melds

DEALS = 48
BUDGET: float | None = None  # seconds of the thread's CPU a decision, with --budget
HORIZON = 0  # with --horizon: turns of all seats a play-out runs before it is valued
DROP_Z = 1.5  # standard errors by which a line trailing the best is dropped
BATCH = 4  # deals between two looks at the lines still in


def budgeted(position: Position, lines: list[Line], rng: random.Random, deadline: float) -> Line:
    """The best mean of ``lines`` on deals played until ``deadline`` (or DEALS), every
    BATCH deals dropping the lines that trail the best by more than DROP_Z standard
    errors of the paired difference."""
    base = base_round(position.me)
    alive = list(range(len(lines)))
    results: list[list[float]] = [[] for _ in lines]
    deals = 0
    while deals < DEALS and len(alive) > 1 and clock() <= deadline:
        world = sample(position.me, base, position.hidden, rng)
        for index in alive:
            results[index].append(play_line(position, world.copy(), lines[index], False, HORIZON))
        deals += 1
        if deals % BATCH or deals < 2 * BATCH:
            continue
        means = {index: sum(results[index]) / deals for index in alive}
        best = max(alive, key=lambda index: means[index])
        kept = []
        for index in alive:
            if index != best:
                diffs = [a - b for a, b in zip(results[index], results[best], strict=True)]
                mean = sum(diffs) / deals
                spread = sum((d - mean) ** 2 for d in diffs) / (deals - 1)
                if mean + DROP_Z * (spread / deals) ** 0.5 < 0:
                    continue
            kept.append(index)
        alive = kept
    if not deals:
        return lines[0]
    return lines[max(alive, key=lambda index: sum(results[index][:deals]))]


def _konkan(self: Any, view: Any, rng: random.Random, deadline: float) -> Any:
    strong = self.strong_konkan
    self._remember_pile(view)
    planned = getattr(self, "planned_discard", None)
    self.planned_discard = None
    me = KonkanSeat(view)
    action = strong.act(view)
    if planned is not None and view["phase"] == "play" and planned in view["hand"]:
        if isinstance(action, konkan.Discard):  # the discard the opening was valued with
            return konkan.Discard(me.seat, parse_card(planned))
        self.planned_discard = planned  # the strong player lays off first
        return action
    if view["committed"][view["viewer"]] or view["phase"] != "play":
        return action
    if not isinstance(action, konkan.Discard | konkan.LayDown):
        return action
    if isinstance(action, konkan.LayDown) and me.me_opened:
        return action
    hidden = sorted(self._konkan_hidden(view, me), key=lambda card: card.key)
    position = Position(me.seat, dict(view), me, hidden)
    lines = weighed_lines(position, "play")
    if len(lines) < 2:
        return action
    if BUDGET is not None:
        best = budgeted(position, lines, rng, deadline - expert.KONKAN_BUDGET + BUDGET)
    else:
        values, _ = evaluate(position, lines[0], None, lines[1:], DEALS, rng)
        best = lines[max(range(len(lines)), key=lambda i: values[i])]
    assert best.card is not None
    if best.move in ("open", "hand"):
        self.planned_discard = best.card
        return konkan.LayDown(me.seat, best_melds(me.hand, me.ace).melds)
    return konkan.Discard(me.seat, parse_card(best.card))


def main() -> None:
    global DEALS, BUDGET, DROP_Z
    args = sys.argv[1:]
    if "--budget" in args:
        at = args.index("--budget")
        BUDGET = float(args[at + 1]) / 1000
        del args[at : at + 2]
    if "--horizon" in args:
        global HORIZON
        at = args.index("--horizon")
        HORIZON = int(args[at + 1])
        del args[at : at + 2]
    if "--sim-lines" in args:  # before opening too, the simulator's own discards
        args.remove("--sim-lines")
        from sahrat.bots import konkan_lines

        konkan_lines._strong_order = lambda position: konkan_lines._sim_order(position, False)
    if "--drop-z" in args:
        at = args.index("--drop-z")
        DROP_Z = float(args[at + 1])
        del args[at : at + 2]
    if "--deals" in args:
        at = args.index("--deals")
        DEALS = int(args[at + 1])
        del args[at : at + 2]
    expert.ExpertBot._konkan = _konkan  # type: ignore[method-assign]
    sys.path.insert(0, str(Path(__file__).parent))
    import bench_expert

    sys.argv = ["bench_expert.py", *args]
    bench_expert.main()


if __name__ == "__main__":
    main()
