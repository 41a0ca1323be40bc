"""The expert's Konkan decisions: the strong player's candidates, weighed by the
opening race, by what each discard gives the next seat, and played out to the end of
the round on sampled deals (:mod:`sahrat.bots.konkan_sim`).

First, the discard itself is chosen again among the strong player's best few:

* **before opening, the opening race** (:meth:`KonkanExpert.race_discard`): the hand
  each discard leaves is given the same sampled turns of the unseen cards for
  :data:`RACE_TURNS` turns (each turn the card on the pile, taken when it opens the
  hand at once, then the stock's card, which pushes out a card no meld can use when it
  joins), and the turn at which it first holds the opening target is counted; the
  smallest mean wins, plus
* **what the next seat gets** (:meth:`KonkanExpert.feeds`): about half of all
  openings take the pile's card, and only the next seat is offered ours. Its hand is
  sampled from the unseen cards, dealt again when it contradicts what the seat did
  (an unopened hand holding an opening, an opened one holding a meld, or an unopened
  hand that a discard of ours it let go would have opened), and each discard's share
  of hands it opens (or, for an opened seat, melds in) weighs against it:
  :data:`FEED_WEIGHT` turns of our race before opening, :data:`FEED_COST` on the
  strong player's discard cost after.

Then a decision with a choice that matters gets a short list of lines:

* **draw or take** (before opening): take the pile's card to open now, or draw;
* **lay down now or wait**: open with what the search found, or keep the cards
  one more turn (a Hand, a bigger opening);
* **the discard**: the discard chosen above and the strong player's next best.

Every line is played on the same ``samples`` deals of the cards this seat cannot
see (common random numbers): the other hands and the stock dealt at random from
the unseen cards, then redealt for a seat whose dealt hand contradicts what it did
(an unopened seat would have opened with an opening in hand; an opened one lays
every meld it holds), up to a few tries. From there every seat, ours too, plays the
simple player's policy until someone goes out. The first line is kept unless another
beats it clearly on the same deals (:func:`choose`). The value of a line is the
round's points of the others less ours (the points of §1.8: out, hand sums, 100
unopened, doubled after a Hand); in the last round, winning the match counts as well.

Nothing here reads another seat's cards: the samples come from the seat's view and
its memory of earlier views only.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from typing import Any

from sahrat.bots import konkan_bot
from sahrat.bots.fastmelds import encode, isolated, meld_value
from sahrat.bots.konkan_sim import JOKER_FACE, Round, meld_to_sim, partnered
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
RACE_SAMPLES = 40  # draw sequences per pre-opening discard (the opening race)
RACE_TURNS = 5  # own draws looked ahead
RACE_DISCARDS = 6  # the strong player's best discards raced
FEED_SAMPLES = 30  # sampled hands of the next seat, to see which discard opens it
FEED_WEIGHT = 4.0  # feeding the next seat its opening, in turns of our own race
FEED_COST = 10.0  # ... once we have opened, on the strong player's discard cost scale
RACE_NEVER = 2  # turns beyond RACE_TURNS counted for a hand that does not open in the race
RACE_DROP = True  # a drawn card that joins the hand pushes out a card no meld can use
RACE_PILE = True  # the race also offers, each turn, the previous seat's discard to open with

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
    """Rollout search for one seat (the strong player it adjusts keeps the memory)."""

    def __init__(self, strong: konkan_bot.KonkanBot, samples: int) -> None:
        self.strong = strong
        self.samples = samples
        # the faces our discards offered an unopened next seat that it let go, this round
        self.refused: dict[int, list[int]] = {}
        self.round_key: tuple[int, int] = (-1, -1)
        self.offered: tuple[int, int] | None = None  # (seat, face) offered, unopened

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
        self.observe(view, me)
        choice = self._decide(me, action, hidden, rng, deadline)
        if isinstance(choice, Discard):
            nxt = me.next_seat
            if not me.opened[nxt] and not me.committed[nxt]:
                self.offered = (nxt, face_of(choice.card))
        return choice

    def observe(self, view: Any, me: KonkanSeat) -> None:
        """A discard of ours the next seat let go and did not open after: it did not
        open that seat (the simple and strong players take a card that opens them)."""
        key = (view.get("round", 0), len(view.get("scores") or ()))
        if key != self.round_key:
            self.round_key, self.refused, self.offered = key, {}, None
            return
        if self.offered is None or me.phase != "draw":
            return
        seat, face = self.offered
        self.offered = None
        if not me.opened[seat]:
            self.refused.setdefault(seat, []).append(face)

    def _decide(
        self,
        me: KonkanSeat,
        action: Any,
        hidden: Sequence[Card],
        rng: random.Random,
        deadline: float,
    ) -> Any:
        if me.phase != "draw" and not me.me_opened and isinstance(action, Discard):
            raced = self.race_discard(me, action, hidden, rng, deadline)
            if raced is not None:
                action = raced
        elif me.phase != "draw" and isinstance(action, Discard):
            fed = self.opened_discard(me, action, hidden, rng, deadline)
            if fed is not None:
                action = fed
        lines = self.lines(me, action)
        if len(lines) < 2:
            return action
        base = self.base_round(me)
        results: list[list[float]] = [[] for _ in lines]
        done = 0
        while done < self.samples and clock() <= deadline:  # none begun past the cap
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

    def race_discard(
        self,
        me: KonkanSeat,
        action: Discard,
        hidden: Sequence[Card],
        rng: random.Random,
        deadline: float,
    ) -> Discard | None:
        """Before opening, the discard that keeps the opening nearest: for each of the
        strong player's best discards, the hand left is given the same sampled draws of
        the unseen cards, one a turn, and the turn at which it first holds the opening
        target is counted (never within :data:`RACE_TURNS`: :data:`RACE_NEVER` turns
        more). Each turn first offers a card on the pile (:data:`RACE_PILE`): about half
        of all openings take it. The best mean wins; the strong player's order on ties."""
        from sahrat.bots.expert import konkan_discards

        ranked = konkan_discards(me, self.strong.memory, action.card, RACE_DISCARDS)
        danger_cap = konkan_bot.FEED_PENALTY / 2
        cards = [
            card
            for index, (card, _cost) in enumerate(ranked)
            if index == 0 or konkan_bot.discard_danger(me, self.strong.memory, card) < danger_cap
        ]
        if len(cards) < 2:
            return None
        pool = [face_of(card) for card in hidden]
        if len(pool) < RACE_TURNS:
            return None
        mask, jokers = encode(me.hand)
        target = me.opening_target
        ace = me.ace
        faces = [face_of(card) for card in cards]
        totals = [0] * len(cards)
        done = 0
        turns = RACE_TURNS
        looks = 2 * turns if RACE_PILE and len(pool) >= 2 * turns else turns
        while done < RACE_SAMPLES and not (done >= 8 and clock() > deadline):
            seen = rng.sample(pool, looks)
            draws, piles = seen[:turns], seen[turns:] or None
            for index, face in enumerate(faces):
                totals[index] += _race(
                    mask - (1 << (2 * face)), jokers, draws, target, ace, piles, face
                )
            done += 1
        scores = [total / done for total in totals]
        feeds = self.feeds(me, faces, pool, rng, deadline)
        if feeds is not None:
            scores = [score + FEED_WEIGHT * feed for score, feed in zip(scores, feeds, strict=True)]
        best = min(range(len(cards)), key=lambda i: (scores[i], i))
        if best == 0:
            return None
        return Discard(me.seat, cards[best])

    def opened_discard(
        self,
        me: KonkanSeat,
        action: Discard,
        hidden: Sequence[Card],
        rng: random.Random,
        deadline: float,
    ) -> Discard | None:
        """Once open, the strong player's best discards weighed again with the chance
        that each opens the next seat (:meth:`feeds`)."""
        from sahrat.bots.expert import konkan_discards

        ranked = konkan_discards(me, self.strong.memory, action.card, DISCARDS + 1)
        if len(ranked) < 2:
            return None
        pool = [face_of(card) for card in hidden]
        feeds = self.feeds(me, [face_of(card) for card, _ in ranked], pool, rng, deadline)
        if feeds is None:
            return None
        scores = [cost + FEED_COST * feed for (_, cost), feed in zip(ranked, feeds, strict=True)]
        best = min(range(len(ranked)), key=lambda i: (scores[i], i))
        return None if best == 0 else Discard(me.seat, ranked[best][0])

    def feeds(
        self,
        me: KonkanSeat,
        faces: Sequence[int],
        pool: Sequence[int],
        rng: random.Random,
        deadline: float,
    ) -> list[float] | None:
        """For each face, the share of sampled hands of the next seat that it helps: an
        unopened seat opens with it, an opened one melds it with two of its cards. The
        next seat is the only one offered our discard, and about half of all openings
        take the pile's card. The hands are dealt from the unseen cards, again when one
        contradicts what the seat did (an unopened hand holding an opening, an opened
        one holding a meld: either would have been laid)."""
        nxt = me.next_seat
        if me.committed[nxt]:
            return None
        count = me.hand_counts[nxt]
        if count > len(pool) or count < 2:
            return None
        opened = me.opened[nxt]
        target = 1 if opened else me.opening_target
        ace = me.ace
        refused = [] if opened else self.refused.get(nxt, [])
        hits = [0] * len(faces)
        done = 0
        while done < FEED_SAMPLES and not (done >= 8 and clock() > deadline):
            for _ in range(REDEAL_TRIES + len(refused)):
                hand = rng.sample(pool, count)
                jokers = hand.count(JOKER_FACE)
                mask = sum(1 << (2 * f) for f in hand if f != JOKER_FACE)
                if meld_value(mask, jokers, ace) < target and not any(
                    meld_value(mask + (1 << (2 * f)), jokers, ace) >= target for f in refused
                ):
                    break
            for index, face in enumerate(faces):
                if not partnered(mask, face):
                    continue
                if meld_value(mask + (1 << (2 * face)), jokers, ace) >= target:
                    hits[index] += 1
            done += 1
        return [hit / done for hit in hits]

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


def _race(
    mask: int,
    jokers: int,
    draws: Sequence[int],
    target: int,
    ace: Any,
    piles: Sequence[int] | None = None,
    thrown: int = -1,
) -> int:
    """The first of ``draws`` after which the hand holds ``target`` in melds (1..n), or
    n + RACE_NEVER if none does. A drawn card that joins no meld is thrown away at once;
    one that joins stays and, with :data:`RACE_DROP`, a card no meld can use goes (the
    turn's discard: the hand keeps its size). With ``piles``,
    each turn first offers that card on the pile (the previous seat's discard): taken
    when it opens the hand at once, as about half of all openings are made. The card
    ``thrown`` away is never offered back (our own discard is not on our pile)."""
    value = meld_value(mask, jokers, ace)
    if value >= target:
        return 0
    for turn, face in enumerate(draws, 1):
        if piles is not None:
            pile = piles[turn - 1]
            usable = pile != JOKER_FACE and pile != thrown and partnered(mask, pile)
            if usable and meld_value(mask + (1 << (2 * pile)), jokers, ace) >= target:
                return turn
        if face == JOKER_FACE:
            jokers += 1
        else:
            if not partnered(mask, face):
                continue  # it joins no meld: thrown away at once, the hand unchanged
            mask += 1 << (2 * face)
            if RACE_DROP:
                mask = _drop_isolated(mask)
        value = meld_value(mask, jokers, ace)
        if value >= target:
            return turn
    return len(draws) + RACE_NEVER


def _drop_isolated(mask: int) -> int:
    """``mask`` less one card that no meld can use (the turn's discard keeps the hand's
    size; which one does not matter to the race), or ``mask`` itself when every card
    can join one."""
    alone = isolated(mask)
    if not alone:
        return mask
    top = alone.bit_length() - 1
    return mask - (1 << (top - top % 2))


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
