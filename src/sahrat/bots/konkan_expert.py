"""The expert's Konkan turn: the moves worth weighing, each played out on the same
sampled deals of the cards this seat cannot see, and the best mean played.

At each decision of a seat not committed to a Konkan (whose play stays the strong
player's), the lines are those of :func:`sahrat.bots.konkan_lines.weighed_lines`:

* **the draw**, when the pile's card can be taken (to open with it, or once open to
  meld or lay it off at once): draw the stock's card or take it;
* **before opening, unable to open**: the strong player's three best discards;
* **able to open**: open (or lay a Hand) and throw one of the three cards the
  simulator would throw after laying down, or keep the cards back and throw one of the
  strong player's three; a Hand in reach is always laid;
* **once open**: the three cards the simulator would throw after laying what fits.

Every line is played on the same deals (common random numbers): the other hands and
the stock dealt at random from the unseen cards, again for a seat whose dealt hand
contradicts what it did (an unopened seat would have opened with an opening in hand; an
opened one lays every meld it holds), up to a few tries. From there every seat plays
the simulator's policy (the simple player's) for :data:`HORIZON` turns, and the seats
still in the round are valued by the mean final score of seats in their situation in
simulated rounds (:mod:`sahrat.bots.konkan_value`): a play-out to the end of the round
costs 2.5 times as much for the same strength in the simulator, and a decision needs
dozens of deals. A line's value is the others' average points less ours; the best mean
over the deals played is played, up to :data:`SAMPLES` deals, none begun past the
decision's cap in the thread's CPU time. After an opening, the discard it was valued
with is the turn's discard (the strong player may lay off first).

Lay-downs and lay-offs once open are the strong player's; the strong player's
memory of the round (what the next seat picked up, the dead cards) does not rank the
discards weighed: measured, ranking them with it lost 7 ± 4 points of matches won.

Nothing here reads another seat's cards: the samples come from the seat's view and
its memory of earlier views only (``tests/test_expert.py`` deals the other hands again
and gets the same decisions).
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from typing import Any

from sahrat.bots import konkan_bot, simple_konkan
from sahrat.bots.konkan_deals import base_round, sample
from sahrat.bots.konkan_lines import Line, Position, play_line, weighed_lines
from sahrat.bots.konkan_view import KonkanSeat
from sahrat.rules.cards import Card
from sahrat.rules.konkan import Discard, Draw, LayDown, TakeDiscard

SAMPLES = 48  # deals a decision at most (each plays every line for HORIZON turns)
HORIZON = 4  # turns of all seats a play-out runs before the seats' rounds are valued

# The decision's budget is the seat's own work, in this thread's CPU time: a wall-clock
# cap stops the sampling whenever the process waits for a core (a loaded machine, the
# server's other threads holding the interpreter), so the same seat played its seed
# differently, and weaker, as the load varied; in CPU time a seed is one line of play
# and the work per decision is bounded all the same.
clock = time.thread_time


def difficulty(view: Any) -> float:
    """How hard the seat's decision looks, from 0.5 (a plain draw) to 2 (an opening to
    weigh): the table's bot pause is scaled by it, so bots take longer where a person
    would think."""
    try:
        phase = view.get("phase")
        seat = view["viewer"]
        opened = view["opened"][seat]
        if phase == "draw":
            return 0.6 if view.get("discard_top") is None else 0.9
        if phase == "play" and not opened:
            return 1.6 if len(view.get("hand") or ()) >= 14 else 1.3
        return 1.0
    except (KeyError, TypeError, IndexError, AttributeError):
        return 1.0


class KonkanExpert:
    """The sampled search for one seat (the strong player it adjusts keeps the memory)."""

    def __init__(self, strong: konkan_bot.KonkanBot, samples: int) -> None:
        self.strong = strong
        self.samples = samples
        self.planned: str | None = None  # the discard an opening was valued with

    def decide(
        self,
        view: Any,
        action: Any,
        hidden: Sequence[Card],
        rng: random.Random,
        deadline: float,
    ) -> Any:
        """``action`` is the strong player's move; the line that plays best replaces it."""
        me = KonkanSeat(view)
        planned, self.planned = self.planned, None
        kept = None if planned is None else _in_hand(me, planned)
        if kept is not None and me.phase == "play":
            if isinstance(action, Discard):
                return Discard(me.seat, kept)
            self.planned = planned  # the strong player lays off first
            return action
        if me.phase == "draw":
            return self.draw(view, me, action, hidden, rng, deadline)
        if me.phase != "play" or not isinstance(action, Discard | LayDown):
            return action
        if isinstance(action, LayDown) and me.me_opened:
            return action
        position = _position(view, me, hidden)
        lines = weighed_lines(position, "play")
        if len(lines) < 2:
            return action
        hands = [line for line in lines if line.move == "hand"]
        best = hands[0] if hands else self.search(position, lines, rng, deadline)
        card = None if best.card is None else _in_hand(me, best.card)
        if card is None:
            return action
        if best.move in ("open", "hand"):
            self.planned = best.card
            return LayDown(me.seat, position.found.melds)
        return Discard(me.seat, card)

    def draw(
        self,
        view: Any,
        me: KonkanSeat,
        action: Any,
        hidden: Sequence[Card],
        rng: random.Random,
        deadline: float,
    ) -> Any:
        """Draw the stock's card or take the pile's (to open with it, or once open to
        meld or lay it off at once), whichever plays best."""
        if not isinstance(action, Draw | TakeDiscard):
            return action
        position = _position(view, me, hidden)
        lines = weighed_lines(position, "draw")
        if len(lines) < 2:
            return action
        best = self.search(position, lines, rng, deadline)
        if best.move == "draw":
            return Draw(me.seat)
        if isinstance(action, TakeDiscard):
            return action
        take = simple_konkan._draw_or_take(me)
        return take if isinstance(take, TakeDiscard) else action

    def search(
        self, position: Position, lines: Sequence[Line], rng: random.Random, deadline: float
    ) -> Line:
        """The line with the best mean on the same deals, as many as the cap allows."""
        base = base_round(position.me)
        totals = [0.0] * len(lines)
        done = 0
        while done < self.samples and clock() <= deadline:  # none begun past the cap
            world = sample(position.me, base, position.hidden, rng)
            for index, line in enumerate(lines):
                totals[index] += play_line(position, world.copy(), line, False, HORIZON)
            done += 1
        return lines[max(range(len(lines)), key=lambda index: (totals[index], -index))]


def _position(view: Any, me: KonkanSeat, hidden: Sequence[Card]) -> Position:
    return Position(me.seat, dict(view), me, sorted(hidden, key=lambda card: card.key))


def _in_hand(me: KonkanSeat, text: str) -> Card | None:
    """The card of the hand written ``text`` (either deck's copy)."""
    return next((card for card in me.hand if str(card) == text), None)
