"""The expert's Konkan decisions: the strong player's candidates, each played out to
the end of the round on sampled deals (:mod:`sahrat.bots.konkan_sim`).

A decision with a choice that matters gets a short list of lines:

* **draw or take** (before opening): take the pile's card to open now, or draw;
* **lay down now or wait**: open with what the search found, or keep the cards
  one more turn (a Hand, a bigger opening);
* **the discard**: the strong player's best few discards.

Every line is played on the same ``samples`` deals of the cards this seat cannot
see (common random numbers): the other hands and the stock dealt at random from
the unseen cards, then redealt for a seat whose dealt hand contradicts what it did
(an unopened seat would have opened with an opening in hand; an opened one lays
every meld it holds), up to a few tries. From there every seat, ours too, plays the
simple player's policy until someone goes out. The line with the best mean wins
(the strong player's choice on ties). The value of a line is the round's points
of the others less ours (the points of §1.8: out, hand sums, 100 unopened, doubled
after a Hand); in the last round, winning the match counts as well.

The opening race is explicit in the sampled deals: each opponent's chance to open
within a few turns shows as the rounds they end, and feeding a seat that is close
is a line that loses. Nothing here reads another seat's cards: the samples come
from the seat's view and its memory of earlier views only.
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

SAMPLES = 12  # deals per decision (each plays every line to the end of the round)
DISCARDS = 3  # the strong player's best discards compared
REDEAL_TRIES = 4  # redeals of one seat's hand that contradicts what it did
MARGIN = 1.5  # standard errors by which a line must beat the strong player's
MIN_GAIN = 1.0  # ... and points of a round (a tie on every deal changes nothing)
WIN_WEIGHT = 60.0  # the last round: winning the match, on the round-points scale

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
    """Rollout search for one seat (the strong player it adjusts keeps the memory)."""

    def __init__(self, strong: konkan_bot.KonkanBot, samples: int) -> None:
        self.strong = strong
        self.samples = samples

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
        lines = self.lines(me, action)
        if len(lines) < 2:
            return action
        base = self.base_round(me)
        results: list[list[float]] = [[] for _ in lines]
        done = 0
        while done < self.samples and not (done and time.perf_counter() > deadline):
            world = self.sample(me, base, hidden, rng)
            for index, (_, line) in enumerate(lines):
                results[index].append(self.play(me, world, line))
            done += 1
        return lines[choose(results)][0]

    # --- candidate lines --------------------------------------------------------------

    def lines(self, me: KonkanSeat, action: Any) -> list[tuple[Any, Line]]:
        """(the engine's action, the line the simulator plays for it), the strong
        player's own move first."""
        if me.phase == "draw":
            if me.me_opened or me.top is None:
                return []
            take = _take_to_open(me)
            if take is None:
                return []
            draw = Draw(me.seat)
            if isinstance(action, TakeDiscard):
                return [(action, ("take", None)), (draw, ("draw", None))]
            if isinstance(action, Draw):
                return [(draw, ("draw", None)), (take, ("take", None))]
            return []
        if me.me_opened:
            if isinstance(action, Discard):
                return self.discard_lines(me, action)
            return []
        found = best_melds(me.hand, me.ace)
        can_open = bool(found.melds) and found.value >= me.opening_target
        if isinstance(action, LayDown) and can_open and len(found.left) > 1:
            wait = konkan_bot.choose_discard(me, self.strong.memory, found)
            if not isinstance(wait, Discard):
                return []
            return [(action, ("open", None)), (wait, ("wait", face_of(wait.card)))]
        if isinstance(action, Discard):
            lines = self.discard_lines(me, action)
            if can_open:
                lines.append((LayDown(me.seat, found.melds), ("open", None)))
            return lines
        return []

    def discard_lines(self, me: KonkanSeat, action: Discard) -> list[tuple[Any, Line]]:
        from sahrat.bots.expert import konkan_discards

        candidates = konkan_discards(me, self.strong.memory, action.card)[:DISCARDS]
        return [(Discard(me.seat, card), ("discard", face_of(card))) for card, _ in candidates]

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

    def play(self, me: KonkanSeat, world: Round, line: Line) -> float:
        game = world.copy()
        seat = me.seat
        kind, face = line
        if kind == "discard":
            game.finish_turn(seat, face, me.me_opened)
        elif kind == "wait":
            game.finish_turn(seat, face, False)
        elif kind == "open":
            game.lay_down(seat)
            game.opened[seat] = True
            game.lay_offs(seat)
            game.finish_turn(seat, -1, False)
        elif kind == "take":
            game.add(seat, game.top)
            game.top = -1
            game.lay_down(seat)
            game.opened[seat] = True
            game.lay_offs(seat)
            game.finish_turn(seat, -1, False)
        else:  # draw: the stock's card, then the policy (it opens if it can)
            if not game.stock:
                return 0.0
            game.add(seat, game.stock.pop())
            if game.value(seat) >= game.target:
                game.lay_down(seat)
                game.opened[seat] = True
                game.lay_offs(seat)
            game.finish_turn(seat, -1, False)
        game.run()
        return utility(me, game.scores())


def choose(results: Sequence[Sequence[float]]) -> int:
    """The line to play: the first (the strong player's) unless another beats it on the
    same deals by more than :data:`MARGIN` standard errors of the paired differences.
    A few deals cannot tell apart lines a point or two apart (a round's score spreads
    over a hundred points), and picking the best of noisy means would throw away the
    strong player's judgement for chance: only a clear difference changes the move."""
    base = results[0]
    n = len(base)
    best, best_gain = 0, 0.0
    if n < 2:
        return 0
    for index in range(1, len(results)):
        diffs = [a - b for a, b in zip(results[index], base, strict=True)]
        mean = sum(diffs) / n
        spread = sum((d - mean) ** 2 for d in diffs) / (n - 1)
        error = (spread / n) ** 0.5
        if mean > MARGIN * error and mean > MIN_GAIN and mean - MARGIN * error > best_gain:
            best, best_gain = index, mean - MARGIN * error
    return best


def utility(me: KonkanSeat, scores: list[int]) -> float:
    mine = scores[me.seat]
    others = [scores[s] for s in me.others()]
    value = sum(others) / len(others) - mine
    if me.last_round:
        ours = me.totals[me.seat] + mine
        best_other = min(me.totals[s] + scores[s] for s in me.others())
        value += WIN_WEIGHT * (1.0 if ours < best_other else -1.0 if ours > best_other else 0.0)
    return value


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
