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

from sahrat.bots import konkan_bot
from sahrat.bots.fastmelds import encode, meld_value
from sahrat.bots.konkan_sim import JOKER_FACE, Round, meld_to_sim
from sahrat.bots.konkan_view import KonkanSeat
from sahrat.rules.cards import Card
from sahrat.rules.konkan import Discard, Draw, LayDown, TakeDiscard
from sahrat.rules.melds import MeldKind
from sahrat.rules.options import HandValues
from sahrat.rules.search import best_melds

SAMPLES = 48  # deals a decision at most (each plays every line for HORIZON turns)
HORIZON = 4  # turns of all seats a play-out runs before the seats' rounds are valued
DISCARDS = 3  # the discards weighed for each way of playing the turn
REDEAL_TRIES = 4  # redeals of one seat's hand that contradicts what it did

# The decision's budget is the seat's own work, in this thread's CPU time: a wall-clock
# cap stops the sampling whenever the process waits for a core (a loaded machine, the
# server's other threads holding the interpreter), so the same seat played its seed
# differently, and weaker, as the load varied; in CPU time a seed is one line of play
# and the work per decision is bounded all the same.
clock = time.thread_time

Line = tuple[
    str, Any
]  # ("discard", face) | ("draw", None) | ("take", None) | ("open"/"wait", face)


def face_of(card: Card) -> int:
    return JOKER_FACE if card.is_joker else card.key % 52


def table_melds(me: KonkanSeat) -> list[list[int]]:
    out = []
    for table_meld in me.melds:
        meld = table_meld.meld
        reals = [(c.suit.index, int(c.rank)) for c in meld.real_cards if c.suit and c.rank]
        kind = "set" if meld.kind is MeldKind.SET else "run"
        out.append(meld_to_sim(kind, reals, meld.start, meld.joker is not None))
    return out


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
        from sahrat.bots.konkan_lines import Position, weighed_lines

        position = Position(me.seat, dict(view), me, sorted(hidden, key=lambda card: card.key))
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
        from sahrat.bots import simple_konkan
        from sahrat.bots.konkan_lines import Position, weighed_lines

        if not isinstance(action, Draw | TakeDiscard):
            return action
        position = Position(me.seat, dict(view), me, sorted(hidden, key=lambda card: card.key))
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
        self, position: Any, lines: Sequence[Any], rng: random.Random, deadline: float
    ) -> Any:
        """The line with the best mean on the same deals, as many as the cap allows."""
        from sahrat.bots.konkan_lines import play_line

        me = position.me
        base = self.base_round(me)
        totals = [0.0] * len(lines)
        done = 0
        while done < self.samples and clock() <= deadline:  # none begun past the cap
            world = self.sample(position.me, base, position.hidden, rng)
            for index, line in enumerate(lines):
                totals[index] += play_line(position, world.copy(), line, False, HORIZON)
            done += 1
        return lines[max(range(len(lines)), key=lambda index: (totals[index], -index))]

    # --- the simulated round ----------------------------------------------------------

    def base_round(self, me: KonkanSeat) -> Round:
        hands = [0] * me.players
        jokers = [0] * me.players
        hands[me.seat], jokers[me.seat] = encode(me.hand)
        top = -1 if me.top is None else face_of(me.top)
        joker_cost = 15 if me.hand_values is HandValues.JOKER_15_ACE_11 else 10
        return Round(
            hands,
            jokers,
            list(me.opened),
            table_melds(me),
            [],
            top,
            me.seat,
            me.opening_target,
            me.ace,
            joker_cost,
        )

    def sample(
        self, me: KonkanSeat, base: Round, hidden: Sequence[Card], rng: random.Random
    ) -> Round:
        pool = [face_of(card) for card in hidden]
        rng.shuffle(pool)
        world = base.copy()
        for seat in range(me.players):
            if seat == me.seat:
                continue
            count = me.hand_counts[seat]
            hand = pool[:count]
            for _ in range(REDEAL_TRIES):
                if _consistent(me, world, seat, hand):
                    break
                # deal this seat again from the cards not yet dealt
                rng.shuffle(pool)
                hand = pool[:count]
            del pool[:count]
            mask = 0
            jk = 0
            for face in hand:
                if face == JOKER_FACE:
                    jk += 1
                else:
                    mask += 1 << (2 * face)
            world.hands[seat], world.hand_jokers[seat] = mask, jk
        world.stock = pool[: me.stock_count]
        return world


def _consistent(me: KonkanSeat, world: Round, seat: int, hand: Sequence[int]) -> bool:
    """Could ``seat`` hold ``hand`` after the turns it played? An unopened seat holds no
    opening (it would have laid it), an opened one no meld (it lays every one)."""
    mask = 0
    jokers = 0
    for face in hand:
        if face == JOKER_FACE:
            jokers += 1
        else:
            mask += 1 << (2 * face)
    value = meld_value(mask, jokers, me.ace)
    if me.opened[seat]:
        return value == 0
    return value < me.opening_target


def _in_hand(me: KonkanSeat, text: str) -> Card | None:
    """The card of the hand written ``text`` (either deck's copy)."""
    return next((card for card in me.hand if str(card) == text), None)


def _take_to_open(me: KonkanSeat) -> TakeDiscard | None:
    """Taking the pile's card to open with it now, if the search finds that opening."""
    assert me.top is not None
    top = me.top
    hand = [*me.hand, top]
    out = konkan_bot.going_out(me, hand)
    if out is not None:
        melds = konkan_bot._with_card(out.melds, top)
        if melds is not None:
            return TakeDiscard(me.seat, melds)
    found = best_melds(hand, me.ace)
    if not found.melds or found.value < me.opening_target:
        return None
    melds = konkan_bot._with_card(found.melds, top)
    return None if melds is None else TakeDiscard(me.seat, melds)
