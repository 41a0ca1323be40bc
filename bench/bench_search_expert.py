"""An arena line for a Konkan expert whose turn is chosen by the analysis's evaluator.

    .venv/bin/python bench/bench_search_expert.py --seats expert,simple,simple,simple \\
        --matches 50 --first 0 --seed cmp --out /tmp/search.txt --deals 48

The same runs as ``bench/bench_expert.py`` (its arguments, its ``--merge`` and
``--compare``), with the expert's play decisions changed for the run: when the strong
player would open or discard, the moves of :func:`sahrat.analysis.lines.weighed_lines`
(open and each of three discards, keep the cards back and each of the strong player's
three, or once open each of three discards) are played out on ``--deals`` deals of the
cards the seat cannot see, and the best mean is played, with neither a cap nor a margin.
The draw, lay-downs once open and a committed seat's play stay the strong player's.
This is a measurement of where the strength is, not a player for the tables: its
decisions take about 0.3 s of CPU at the p99, far beyond a bot's budget.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

from sahrat.analysis.lines import Position, evaluate, weighed_lines
from sahrat.bots import expert
from sahrat.bots.konkan_view import KonkanSeat
from sahrat.rules import konkan
from sahrat.rules.cards import parse_card
from sahrat.rules.search import best_melds

DEALS = 48


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
    values, _ = evaluate(position, lines[0], None, lines[1:], DEALS, rng)
    best = lines[max(range(len(lines)), key=lambda i: values[i])]
    assert best.card is not None
    if best.move in ("open", "hand"):
        self.planned_discard = best.card
        return konkan.LayDown(me.seat, best_melds(me.hand, me.ace).melds)
    return konkan.Discard(me.seat, parse_card(best.card))


def main() -> None:
    global DEALS
    args = sys.argv[1:]
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
