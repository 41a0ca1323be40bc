"""The ``expert`` level: determinized Monte Carlo over the hidden cards.

At a decision that matters, the expert asks the strong player of its game for a
short list of candidate moves, then repeats ``samples`` times: deal the cards
its seat cannot see (the opponents' hands, the stock order, the face-down part
of a pile) at random, consistently with everything the seat has seen, and play
every candidate out on that same deal (common random numbers: the candidates
meet the same cards). The candidate with the best average wins; ties keep the
strong player's order.

* **Conquian**: every candidate is played to the end of the deal by a fast
  rollout player for both seats (take every card that melds, force a hand of
  three or more, discard the card with the fewest partners), on a bit-mask copy
  of the deal (:class:`FastDeal`, checked against the engine by the tests); a
  won deal scores 1, a lost deal -1, a drawn deal 0. Candidates: take the
  face-up card (with each of the strong player's best discards after it) or let
  it go, force or not, and the strong player's best discards. The opponent's
  sampled hand is dealt again when it would have melded a card they let go (a
  discard of ours they refused, a card they turned up and passed).
* **Konkan** (:mod:`sahrat.bots.konkan_expert`): the moves worth weighing (draw or take
  the pile's card; open or keep the cards back, each with three discards; once open,
  three discards) are played on the same sampled deals for a few
  turns of every seat by the simple player's policy, on a face-mask copy of the round
  (:mod:`sahrat.bots.konkan_sim`, its meld values from :mod:`sahrat.bots.fastmelds`),
  and the rounds are then valued by what seats in the same situation scored in
  simulated rounds (:mod:`sahrat.bots.konkan_value`); the best mean is played. The
  commitment and a committed seat's play, and laying down and off once open are the
  strong player's; a Hand in reach is always laid, and so is a Konkan (the
  strong player's).

What the seat has seen is its views only: its hand, the table melds, the card on
top of the pile, the counts, and what it remembers of earlier views (the cards
it saw on top of the pile or face up). The expert never receives another seat's
cards: re-dealing them in any way consistent with the view does not change its
decision.

Determinism: the samples are drawn from a generator seeded by the bot's
``seed`` and the number of decisions it made, and their number is fixed, so a
seed gives one line of play on any machine that plays them within ``budget``
(seconds of the deciding thread's CPU time, :data:`sahrat.bots.konkan_expert.clock`:
a loaded machine makes a decision slower, not different); on a slower one the cap
stops the sampling early and only the samples already played count.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sahrat.bots import conquian_bot, konkan_bot, konkan_expert
from sahrat.bots.konkan_expert import KonkanExpert, clock
from sahrat.bots.konkan_view import KonkanSeat
from sahrat.rules import conquian
from sahrat.rules.cards import Card, konkan_deck, parse_card, parse_cards
from sahrat.rules.conquian import DECK, card_index, mask_of
from sahrat.rules.konkan import Discard as KonkanDiscard

View = Mapping[str, Any]
Action = Any

# Samples are the budget (one seed, one line of play on any machine); the time cap, in
# the thread's CPU time, only stops sampling early on a slow machine, keeping a
# decision's work under 50 ms at the p99.
DEFAULT_BUDGET = 0.040  # seconds
# Each Conquian sample plays up to 5 lines to the end of the deal (about 0.1 ms a line):
# 36 samples measured 62.3 % of 1,996 decided deals against the simple player, 12 samples
# 59.4 % of 1,978 (the same deals), at a decision CPU p99 of 18 ms against 7 ms.
CONQUIAN_SAMPLES = 36
CONQUIAN_DISCARDS = 4  # the strong player's best discards tried
KONKAN_SAMPLES = konkan_expert.SAMPLES
# A Konkan deal plays two to six lines for four turns of every seat (about 0.3 ms a
# line): the cap stops at 40 ms of the thread's CPU time, the strong player's own move
# included; with the deal under way the decision's CPU p99 was 42 ms in the arena.
KONKAN_BUDGET = 0.040


class ExpertBot:
    """The expert player for one seat of a ``game`` table (it keeps memory of its views)."""

    def __init__(
        self,
        game: str,
        *,
        seed: str = "",
        samples: int | None = None,
        budget: float | None = None,
    ) -> None:
        self.game = game
        self.seed = seed
        cap = DEFAULT_BUDGET if game == "conquian" else KONKAN_BUDGET
        self.budget = cap if budget is None else budget
        self.decisions = 0
        if game == "conquian":
            self.samples = CONQUIAN_SAMPLES if samples is None else samples
            self.strong_conquian = conquian_bot.ConquianBot()
            self.planned: Card | None = None  # the discard a take was valued with
            self.let_go = LetGo()
        else:
            self.samples = KONKAN_SAMPLES if samples is None else samples
            self.strong_konkan = konkan_bot.KonkanBot()
            self.rollouts = KonkanExpert(self.strong_konkan, self.samples)
            self.pile_seen: Counter[Card] = Counter()
            self.pile_key: tuple[int, int, int] = (-1, -1, -1)

    def __call__(self, view: View) -> Action:
        return self.act(view)

    def act(self, view: View) -> Action:
        self.decisions += 1
        rng = random.Random(f"expert:{self.seed}:{self.decisions}")
        deadline = clock() + self.budget
        if self.game == "conquian":
            return self._conquian(view, rng, deadline)
        return self._konkan(view, rng, deadline)

    # --- Conquian -----------------------------------------------------------------------

    def _conquian(self, view: View, rng: random.Random, deadline: float) -> Action:
        strong = self.strong_conquian
        strong.memory.observe(view)
        self.let_go.observe(view)
        planned, self.planned = self.planned, None
        if view["phase"] == "discard" and planned is not None and str(planned) in view["hand"]:
            strong.memory.note(conquian.Discard(view["viewer"], planned))
            self.let_go.note(conquian.Discard(view["viewer"], planned))
            return conquian.Discard(view["viewer"], planned)  # the take was valued with it
        try:
            candidates = conquian_candidates(view, strong)
        except Exception:  # always answer: the strong player's move
            return strong.act(view)
        if len(candidates) > 1:
            me = conquian_bot.Seat(view, strong.memory)
            best = _best_by_samples(
                candidates,
                conquian_sampler(view, me.unseen, rng, self.let_go.cards),
                lambda state, line: conquian_playout(state, line, me.seat),
                self.samples,
                deadline,
            )
        else:
            best = candidates[0]
        first = best[0]
        strong.memory.note(first)
        self.let_go.note(first)
        if isinstance(first, conquian.Take) and len(best) > 1:
            self.planned = best[1].card
        return first

    # --- Konkan -------------------------------------------------------------------------

    def _konkan(self, view: View, rng: random.Random, deadline: float) -> Action:
        strong = self.strong_konkan
        self._remember_pile(view)
        memory = strong.memory
        before = (memory.my_last_discard, memory.last_top)
        action = strong.act(view)
        if view["committed"][view["viewer"]]:
            return action  # committed: only the Konkan itself, the strong player's play
        try:
            me = KonkanSeat(view)
            hidden = self._konkan_hidden(view, me)
            choice = self.rollouts.decide(view, action, hidden, rng, deadline)
        except Exception:  # always answer: the strong player's move
            return action
        if choice is not action:
            memory.my_last_discard, memory.last_top = before
            memory.note_action(choice)
        if isinstance(choice, KonkanDiscard):
            self.pile_seen[choice.card] = 1
        return choice

    def _remember_pile(self, view: View) -> None:
        """The cards seen on top of the pile since it was last shuffled into the stock:
        most of them are still in it, face down (never dealt to a hand)."""
        key = (view["round"], len(view.get("scores") or ()), view["reshuffles"])
        if key != self.pile_key:
            self.pile_key = key
            self.pile_seen = Counter()
        top = view.get("discard_top")
        if top and view["phase"] == "draw":
            self.pile_seen[parse_card(top)] = 1

    def _konkan_hidden(self, view: View, me: KonkanSeat) -> list[Card]:
        """The cards this seat cannot place: not in its hand, a table meld or the pile's top,
        and not seen on top of the pile (those are most likely still under it)."""
        pool = Counter(konkan_deck())
        pool.subtract(me.hand)
        for table_meld in me.melds:
            pool.subtract(table_meld.meld.cards)
        if me.top is not None:
            pool[me.top] -= 1
        hidden_count = sum(c for i, c in enumerate(me.hand_counts) if i != me.seat)
        hidden_count += me.stock_count
        buried = [card for card in self.pile_seen if pool[card] > 0 and card != me.top]
        # the face-down part of the pile holds at most discard_count - 1 cards
        for card in buried[: max(0, me.discard_count - 1)]:
            if sum(max(0, c) for c in pool.values()) - 1 < hidden_count:
                break
            pool[card] -= 1
        return sorted((card for card, n in pool.items() for _ in range(max(0, n))))


class LetGo:
    """The Conquian cards the opponent let go this deal: our discards they refused, the
    cards they turned up and passed (all seen face up by this seat)."""

    def __init__(self) -> None:
        self.deal = -1
        self.cards: list[int] = []
        self.our_discard: int | None = None

    def observe(self, view: View) -> None:
        if view["deal"] != self.deal:
            self.deal, self.cards, self.our_discard = view["deal"], [], None
        seat = view["viewer"]
        theirs = mask_of(c for meld in view["melds"][1 - seat] for c in parse_cards(meld))
        if self.our_discard is not None and not theirs >> self.our_discard & 1:
            self.cards.append(self.our_discard)  # refused (or forced back on us)
        self.our_discard = None
        face_up = view.get("face_up")
        passed = view.get("face_up_how") == "passed" and view.get("face_up_from") != seat
        asked = (view.get("question") or {}).get("about") == 1 - seat
        if face_up and (passed or asked):
            card = card_index(parse_card(face_up))
            if card not in self.cards:
                self.cards.append(card)

    def note(self, action: Action) -> None:
        if isinstance(action, conquian.Discard):
            self.our_discard = card_index(action.card)


def _best_by_samples(
    candidates: Sequence[tuple[Action, ...]],
    sample: Callable[[], Any],
    play: Callable[[Any, tuple[Action, ...]], float],
    samples: int,
    deadline: float,
    prior: Sequence[float] | None = None,
) -> tuple[Action, ...]:
    """The candidate with the best mean over the samples, plus its ``prior`` score if
    given (ties: the earlier candidate)."""
    totals = [0.0] * len(candidates)
    done = 0
    while done < samples and not (done and clock() > deadline):
        world = sample()
        for index, line in enumerate(candidates):
            totals[index] += play(world, line)
        done += 1
    means = [total / done for total in totals]
    if prior is not None:
        means = [mean + bonus for mean, bonus in zip(means, prior, strict=True)]
    best = max(range(len(candidates)), key=lambda i: (means[i], -i))
    return candidates[best]


# --- Conquian --------------------------------------------------------------------------------


def conquian_candidates(view: View, strong: conquian_bot.ConquianBot) -> list[tuple[Action, ...]]:
    """Lines to compare: the strong player's move first, then the alternatives."""
    me = conquian_bot.Seat(view, strong.memory)
    seat = me.seat
    phase = me.phase
    if phase in ("choose", "turned_up"):
        plan = conquian_bot.best_plan(me, me.up)
        let_go = conquian.Refuse(seat) if phase == "choose" else conquian.Pass(seat)
        if plan is None:
            return [(let_go,)]
        take = conquian_bot._take_action(me, plan)
        if not plan.discard:
            return [(take,)]  # a win
        lines: list[tuple[Action, ...]] = []
        for bit in _top_discards(me, plan.melded, me.hand & ~plan.melded, CONQUIAN_DISCARDS):
            lines.append((take, conquian.Discard(seat, DECK[bit.bit_length() - 1])))
        lines.append((let_go,))
        return lines
    if phase == "force":
        first = conquian_bot.should_force(me)
        force, decline = conquian.Force(seat), conquian.DeclineForce(seat)
        return [(force,), (decline,)] if first else [(decline,), (force,)]
    if phase == "discard":
        bits = _top_discards(me, me.mine, me.hand, CONQUIAN_DISCARDS)
        return [(conquian.Discard(seat, DECK[bit.bit_length() - 1]),) for bit in bits]
    return [(conquian_bot.decide(me, strong),)]  # forced: the take is the only move


def _top_discards(me: conquian_bot.Seat, melded: int, hand: int, count: int) -> list[int]:
    """The ``count`` best discards (bits) from ``hand`` by the strong player's measure."""
    scored: list[tuple[float, int]] = []
    rest = hand
    while rest:
        low = rest & -rest
        rest ^= low
        score = conquian_bot.evaluate(melded, hand ^ low, me.unseen & ~low)
        scored.append((score - conquian_bot.danger(me, low), low))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [bit for _, bit in scored[:count]]


# Phases of the fast deal (the engine's, by number)
CHOOSE, TURNED_UP, FORCE, FORCED, DISCARD, OVER = range(6)
_PHASES = {"choose": CHOOSE, "turned_up": TURNED_UP, "force": FORCE, "forced": FORCED}
_PHASES["discard"] = DISCARD
_PER_SUIT = conquian.RANKS_PER_SUIT
_TRIPLES = conquian._TRIPLES  # the 3-card melds holding each card
REJECTION_TRIES = 30
# the cards that partner card i in a hand (its rank, or its suit within two ranks)
_PARTNERS: tuple[int, ...] = tuple(
    sum(
        1 << j
        for j in range(40)
        if j != i
        and (
            j % _PER_SUIT == i % _PER_SUIT or (j // _PER_SUIT == i // _PER_SUIT and abs(j - i) <= 2)
        )
    )
    for i in range(40)
)


def _fits(card: int, opened: int) -> bool:
    """Can ``opened`` (a seat's open cards) take ``card`` with open cards only?"""
    pool = opened | 1 << card
    return bool(opened) and conquian._may_fit(card, pool) and conquian._covers(pool)


class FastDeal:
    """One deal of Conquian in bit masks, for rollouts: the engine's rules (§2.3–2.5)
    without events, copies of lists of cards or checks of proposed arrangements."""

    __slots__ = ("hands", "how_passed", "opened", "owner", "phase", "stock", "turn", "up", "winner")

    def __init__(
        self,
        hands: list[int],
        opened: list[int],
        stock: list[int],
        up: int,
        how: str,
        owner: int,
        turn: int,
        phase: int,
    ) -> None:
        self.hands = hands
        self.opened = opened
        self.stock = stock  # card indexes, the top last
        self.up = up  # the face-up card's index (-1: none)
        self.how_passed = how == "turned_up"  # FORCE after a pass (not after a refusal)
        self.owner = owner  # who turned up, passed or discarded the face-up card
        self.turn = turn
        self.phase = phase
        self.winner: int | None = None

    def copy(self) -> FastDeal:
        deal = FastDeal(
            list(self.hands),
            list(self.opened),
            list(self.stock),
            self.up,
            "",
            self.owner,
            self.turn,
            self.phase,
        )
        deal.how_passed = self.how_passed
        return deal

    def take(self, extra: int) -> None:
        """The seat to move takes the face-up card, laying ``extra`` (hand cards) with it."""
        seat = self.turn
        self.opened[seat] |= 1 << self.up | extra
        self.hands[seat] &= ~extra
        self.up = -1
        if not self.hands[seat]:
            self.winner, self.phase = seat, OVER
        else:
            self.phase = DISCARD

    def discard(self, card: int) -> None:
        seat = self.turn
        self.hands[seat] &= ~(1 << card)
        self.up, self.owner, self.how_passed = card, seat, False
        self.turn, self.phase = 1 - seat, CHOOSE

    def let_go(self) -> None:
        """Refuse (CHOOSE) or pass (TURNED_UP) the face-up card."""
        seat = self.turn
        passed = self.phase == TURNED_UP
        if _fits(self.up, self.opened[seat]):
            self.how_passed, self.owner = passed, seat
            self.turn, self.phase = 1 - seat, FORCE
        elif passed:
            self._pass_on(seat)
        else:
            self._turn_up(seat)

    def answer_force(self, force: bool) -> None:
        player = 1 - self.turn
        if force:
            self.turn, self.phase = player, FORCED
        elif self.how_passed:
            self._pass_on(player)
        else:
            self._turn_up(player)

    def _pass_on(self, seat: int) -> None:
        self.owner, self.how_passed = seat, False
        self.turn, self.phase = 1 - seat, CHOOSE

    def _turn_up(self, seat: int) -> None:
        if not self.stock:
            self.phase, self.up = OVER, -1  # a drawn deal
            return
        self.up = self.stock.pop()
        self.owner, self.how_passed = seat, True
        self.turn, self.phase = seat, TURNED_UP


def _take_extra(deal: FastDeal) -> int | None:
    """The hand cards laid with the face-up card when taking it lays the most, or None."""
    seat = deal.turn
    required = deal.opened[seat] | 1 << deal.up
    optional = deal.hands[seat]
    if not conquian._may_fit(deal.up, required | optional):
        return None
    found = conquian._best_cover(required, optional, {})
    return None if found is None else found[0]


def _rollout_discard(hand: int, their_open: int) -> int:
    """The card with the fewest partners, keeping back one that fits the opponent's melds;
    ties: the higher rank, then the later suit (the timer's discard)."""
    best, best_key = -1, (99, 0, 0, 0)
    rest = hand
    while rest:
        low = rest & -rest
        rest ^= low
        i = low.bit_length() - 1
        key = (
            _fits(i, their_open),
            (hand & _PARTNERS[i]).bit_count(),
            -(i % _PER_SUIT),
            -(i // _PER_SUIT),
        )
        if key < best_key:
            best, best_key = i, key
    return best


def fast_rollout(deal: FastDeal) -> int | None:
    """Both seats play the rollout player to the end of the deal; the winner or None.
    (Letting go, as the simple player does, a card that only joins the open melds while
    every hand card has a partner measured no better for the opponent and worse for
    both seats: 54.9 % and 45.6 % of decided deals, against 57.3 % and 57.5 %.)"""
    while deal.phase != OVER:
        phase = deal.phase
        seat = deal.turn
        if phase in (CHOOSE, TURNED_UP):
            extra = _take_extra(deal)
            if extra is None:
                deal.let_go()
            else:
                deal.take(extra)
        elif phase == DISCARD:
            deal.discard(_rollout_discard(deal.hands[seat], deal.opened[1 - seat]))
        elif phase == FORCE:
            deal.answer_force(deal.hands[1 - seat].bit_count() >= conquian_bot.FORCE_MIN_HAND)
        else:  # FORCED
            extra = _take_extra(deal)
            deal.take(extra or 0)
    return deal.winner


def _pairs_in(card: int, hand: int) -> bool:
    """Two cards of ``hand`` make a 3-card meld with ``card``."""
    for triple in _TRIPLES[card]:  # noqa: SIM110 (a loop is faster than any())
        if triple & hand == triple ^ 1 << card:
            return True
    return False


def conquian_sampler(
    view: View, unseen: int, rng: random.Random, let_go: Sequence[int] = ()
) -> Callable[[], FastDeal]:
    """Deals agreeing with ``view``: the unseen cards dealt at random to the opponent's
    hand and the stock (the dead pile never comes back into play). A card the opponent
    let go (``let_go``) did not make a meld with two of its hand cards, or it would have
    taken it: hands that contradict this are dealt again (up to REJECTION_TRIES times)."""
    seat = view["viewer"]
    other = 1 - seat
    hidden = [i for i in range(40) if unseen >> i & 1]
    their_count = view["hand_counts"][other]
    need = their_count + view["stock_count"]
    hands = [0, 0]
    hands[seat] = mask_of(parse_cards(view["hand"]))
    opened = [mask_of(c for meld in view["melds"][s] for c in parse_cards(meld)) for s in (0, 1)]
    up = card_index(parse_card(view["face_up"])) if view.get("face_up") else -1
    if len(hidden) < need:  # memory incomplete (a seat taken over mid-deal): borrow
        placed = hands[seat] | opened[0] | opened[1] | unseen | (1 << up if up >= 0 else 0)
        hidden += [i for i in range(40) if not placed >> i & 1][: need - len(hidden)]
    how = view.get("face_up_how") or ""
    owner = view.get("face_up_from") or 0
    turn = view["turn"]
    phase = _PHASES[view["phase"]]

    def sample() -> FastDeal:
        for _ in range(REJECTION_TRIES):
            rng.shuffle(hidden)
            theirs = sum(1 << i for i in hidden[:their_count])
            if not any(_pairs_in(card, theirs) for card in let_go):
                break  # consistent with the cards they let go
        dealt = list(hands)
        dealt[other] = theirs
        stock = hidden[their_count:need]
        return FastDeal(dealt, list(opened), stock, up, how, owner, turn, phase)

    return sample


def _play_line(deal: FastDeal, action: Action) -> None:
    if isinstance(action, conquian.Take):
        melded = mask_of(c for meld in action.melds for c in meld)
        deal.take(melded & deal.hands[deal.turn])
    elif isinstance(action, conquian.Discard):
        deal.discard(card_index(action.card))
    elif isinstance(action, (conquian.Refuse, conquian.Pass)):
        deal.let_go()
    elif isinstance(action, (conquian.Force, conquian.DeclineForce)):
        deal.answer_force(isinstance(action, conquian.Force))
    else:
        raise TypeError(f"{action!r} is not a Conquian action")


def conquian_playout(deal: FastDeal, line: tuple[Action, ...], seat: int) -> float:
    """Play ``line`` then the rollout players to the end of the deal: 1 won, -1 lost, 0 drawn."""
    deal = deal.copy()
    for action in line:
        if deal.phase == OVER:
            break
        _play_line(deal, action)
    winner = fast_rollout(deal)
    return 0.0 if winner is None else 1.0 if winner == seat else -1.0
