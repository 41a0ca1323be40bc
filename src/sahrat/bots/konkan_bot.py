"""The strong Konkan player. It sees only its seat's view (``konkan.view(state, seat)``).

Strategy, decision by decision:

* **Drawing.** It takes the discard-pile card only when it is used at once: to go
  out as a Hand, to open (when opening now is the plan), or — once open — in a
  new meld or a lay-off. A committed player takes it when it brings the Konkan
  shape closer. Otherwise it draws from the stock.
* **Opening.** A Hand (or Konkan) is laid as soon as the meld search finds one.
  An opening is laid at once, *unless* the hand is close to a Hand (at most
  :data:`HAND_WAIT_LEFT` cards outside the melds), nobody else has opened (so
  nobody can go out except by a Hand of their own), the stock is still deep,
  and we are not already late in the round: then it keeps its cards, because
  going out all at once scores −60 and doubles everyone else.
* **Once open** it lays every meld it can, lays off whatever fits on any meld
  (keeping a card to discard; a joker only when the hand is nearly empty), and
  swaps a joker out of a table meld whenever it holds the card(s) the joker
  stands for: the joker is worth more in hand than a card that cannot be laid.
* **Discarding** weighs, for every card that is not a joker and not in one of
  its own melds: how much it helps the hand (set partners, run neighbours,
  minus the copies of the missing cards already dead), the danger of feeding
  the next player (a card that extends any table meld when the next player has
  opened, cards near what that player picked up, cards they threw away are
  safe), and its cost if the round ended now (high cards are dumped first once
  we have opened or others have, since unmelded cards cost their value).
* **Konkan commitment** (last round only): it commits at the start of a turn
  when a 10-run + 4-set or 11-run + 3-set is at most one card away (two with a
  deep stock when far behind) and its total is not the best; committed, it
  takes whatever brings the shape closer and discards what the shape needs
  least.

Memory: :class:`KonkanBot` keeps, per seat it plays, what it could see at its
own turns: the card on top of the pile (the previous seat's discard), which of
its own discards the next player picked up (they show up in that player's
melds), and the faces that are dead (in melds or seen discarded). The
stateless :func:`act` plays without memory.

Every decision is made inside a guard: if anything unexpected happens the
player falls back to the simplest legal move (draw; discard the highest card
that is not a joker; end the turn with a hand of jokers).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sahrat.bots.konkan_view import KonkanSeat, TableMeld
from sahrat.rules.cards import SUITS, Card, Rank, parse_card, parse_cards
from sahrat.rules.konkan import (
    Action,
    Commit,
    Discard,
    Draw,
    EndTurn,
    LayDown,
    LayOff,
    SwapJoker,
    TakeDiscard,
    hand_card_value,
)
from sahrat.rules.melds import Meld, lay_off
from sahrat.rules.options import HandValues
from sahrat.rules.search import SearchResult, best_melds, hand_out, konkan_out

View = Mapping[str, Any]

HAND_WAIT_LEFT = 3  # wait for a Hand with at most this many cards outside the melds
HAND_WAIT_STOCK = 30  # ... and at least this many cards in the stock
FEED_PENALTY = 100.0  # discarding a card the next player can lay off at once
NEAR_PICK_PENALTY = 6.0  # a card next to one the next player picked from the pile
SAFE_BONUS = 3.0  # a face the next player threw away themselves


# --- memory ----------------------------------------------------------------------------


@dataclass
class Memory:
    """What one seat has seen at its own turns (never anything outside its views)."""

    round: int = -1
    rounds_scored: int = 0
    discarded_by: dict[int, set[str]] = field(default_factory=dict)
    picked_by: dict[int, set[str]] = field(default_factory=dict)
    seen_discards: Counter[str] = field(default_factory=Counter)
    my_last_discard: str | None = None
    last_top: str | None = None

    def observe(self, view: View, me: KonkanSeat) -> None:
        """Fold a new view in; forgets everything when a new round was dealt."""
        round_no = view.get("round", 0)
        scored = len(view.get("scores") or ())
        if round_no != self.round or scored != self.rounds_scored:
            self._reset(round_no, scored)
        if me.phase != "draw" and me.drawn is not None:
            return  # mid-turn: nothing new from the others
        top = view.get("discard_top")
        if top and top != self.last_top and top != self.my_last_discard:
            previous = (me.seat - 1) % me.players
            face = parse_card(top).face
            self.discarded_by.setdefault(previous, set()).add(face)
            self.seen_discards[face] += 1
        self.last_top = top
        if self.my_last_discard is not None:
            for meld in me.melds:
                if meld.owner != me.seat and any(
                    str(card) == self.my_last_discard for card in meld.meld.cards
                ):
                    face = parse_card(self.my_last_discard).face
                    self.picked_by.setdefault(meld.owner, set()).add(face)
            self.my_last_discard = None

    def _reset(self, round_no: int, scored: int) -> None:
        self.round = round_no
        self.rounds_scored = scored
        self.discarded_by = {}
        self.picked_by = {}
        self.seen_discards = Counter()
        self.my_last_discard = None
        self.last_top = None

    def note_action(self, action: Action) -> None:
        if isinstance(action, Discard):
            self.my_last_discard = str(action.card)
            self.last_top = str(action.card)


# --- the player --------------------------------------------------------------------------


class KonkanBot:
    """A strong Konkan player with memory for one seat: call :meth:`act` with each view."""

    def __init__(self, *, strict: bool = False) -> None:
        self.memory = Memory()
        self.strict = strict  # tests: let an unexpected error surface instead of falling back

    def __call__(self, view: View) -> Action:
        return self.act(view)

    def act(self, view: View) -> Action:
        try:
            me = KonkanSeat(view)
            self.memory.observe(view, me)
            action = decide(me, self.memory)
        except Exception:  # a bot must always answer: the simplest legal move
            if self.strict:
                raise
            action = fallback(view)
        self.memory.note_action(action)
        return action


def act(view: View) -> Action:
    """Stateless play: the strong player without memory of earlier turns."""
    try:
        me = KonkanSeat(view)
        memory = Memory()
        memory.observe(view, me)
        return decide(me, memory)
    except Exception:
        return fallback(view)


def fallback(view: View) -> Action:
    """Draw; else discard the highest card that is not a joker; else end the turn."""
    seat = view["viewer"]
    if view["phase"] == "draw":
        return Draw(seat)
    hand = [card for card in parse_cards(view["hand"]) if not card.is_joker]
    if not hand:
        return EndTurn(seat)
    values = HandValues(view["options"]["hand_values"])
    return Discard(seat, max(hand, key=lambda c: (hand_card_value(c, values), c.sort_key)))


def decide(me: KonkanSeat, memory: Memory) -> Action:
    if me.phase == "draw":
        if "commit" in me.simple and should_commit(me):
            return Commit(me.seat)
        return draw_step(me)
    if "commit" in me.simple and should_commit(me):  # the opener's first turn
        return Commit(me.seat)
    if me.me_committed:
        return committed_play(me)
    return play_step(me, memory)


# --- drawing ---------------------------------------------------------------------------------


def _with_card(melds: Sequence[Sequence[Card]], card: Card) -> tuple[tuple[Card, ...], ...] | None:
    """The melds using exactly ``card`` (swapping in for its twin), or None."""
    out = [list(meld) for meld in melds]
    if any(card in meld for meld in out):
        return tuple(tuple(m) for m in out)
    for meld in out:
        for index, other in enumerate(meld):
            if not card.is_joker and other.face == card.face:
                meld[index] = card
                return tuple(tuple(m) for m in out)
    return None


def going_out(me: KonkanSeat, hand: Sequence[Card]) -> SearchResult | None:
    """A Konkan or a Hand in ``hand`` that this table accepts."""
    found = konkan_out(hand, me.ace) or hand_out(hand, me.ace)
    if found is None:
        return None
    return found if found.value >= me.opening_target or me.exempt else None


def draw_step(me: KonkanSeat) -> Action:
    top = me.top
    if me.me_committed:
        if top is not None and konkan_distance([*me.hand, top]) < konkan_distance(me.hand):
            return TakeDiscard(me.seat)
        return Draw(me.seat)
    if top is None or not any(not c.is_joker for c in me.hand):
        return Draw(me.seat)
    hand = [*me.hand, top]
    if not me.me_opened:
        return _take_to_open(me, hand, top) or Draw(me.seat)
    found = best_melds(hand, me.ace)
    melds = _with_card(found.melds, top) if found.melds else None
    if melds is not None:
        return TakeDiscard(me.seat, melds)
    for table_meld in me.melds:
        if _fits(table_meld.meld, top):
            return TakeDiscard(me.seat, lay_offs=(LayOff(table_meld.id, (top,)),))
    return Draw(me.seat)


def _take_to_open(me: KonkanSeat, hand: list[Card], top: Card) -> Action | None:
    out = going_out(me, hand)
    if out is not None:
        melds = _with_card(out.melds, top)
        if melds is not None:
            return TakeDiscard(me.seat, melds)
    found = best_melds(hand, me.ace)
    if not found.melds or found.value < me.opening_target:
        return None
    melds = _with_card(found.melds, top)
    if melds is None or wait_for_hand(me, found):
        return None
    return TakeDiscard(me.seat, melds)


# --- playing after the draw ------------------------------------------------------------------


def play_step(me: KonkanSeat, memory: Memory) -> Action:
    hand = me.hand
    if not me.me_opened:
        out = going_out(me, hand)
        if out is not None:
            return LayDown(me.seat, out.melds)
        found = best_melds(hand, me.ace)
        if found.melds and found.value >= me.opening_target and not wait_for_hand(me, found):
            return LayDown(me.seat, found.melds)
        return choose_discard(me, memory, found)
    found = best_melds(hand, me.ace)
    if found.melds:
        return LayDown(me.seat, found.melds)
    swap = joker_swap(me)
    if swap is not None:
        return swap
    lay = a_lay_off(me)
    if lay is not None:
        return LayDown(me.seat, lay_offs=(lay,))
    return choose_discard(me, memory, found)


def wait_for_hand(me: KonkanSeat, found: SearchResult) -> bool:
    """Keep an opening back to try for a Hand? Only when it is near and safe to wait."""
    if any(me.opened[s] for s in me.others()):
        return False
    if me.stock_count < HAND_WAIT_STOCK:
        return False
    left = [card for card in found.left if not card.is_joker]
    return len(left) <= HAND_WAIT_LEFT


def _fits(meld: Meld, card: Card) -> bool:
    try:
        lay_off(meld, [card])
    except ValueError:
        return False
    return True


def _joker_lay_off(table_meld: TableMeld, joker: Card) -> LayOff | None:
    for low in (False, True):
        try:
            lay_off(table_meld.meld, [joker], joker_low=low)
        except ValueError:
            continue
        return LayOff(table_meld.id, (joker,), low)
    return None


def a_lay_off(me: KonkanSeat) -> LayOff | None:
    """One lay-off that keeps a real card to discard; a joker only late."""
    reals = [card for card in me.hand if not card.is_joker]
    if len(reals) >= 2:
        for card in sorted(reals, key=lambda c: -me.value(c)):
            for table_meld in me.melds:
                if _fits(table_meld.meld, card):
                    return LayOff(table_meld.id, (card,))
    jokers = [card for card in me.hand if card.is_joker]
    if jokers and reals and len(me.hand) <= 4:
        for table_meld in me.melds:
            lay = _joker_lay_off(table_meld, jokers[0])
            if lay is not None:
                return lay
    return None


def joker_swap(me: KonkanSeat) -> SwapJoker | None:
    """Take a joker from the table when we hold what it stands for."""
    by_face: dict[str, list[Card]] = {}
    for card in me.hand:
        if not card.is_joker:
            by_face.setdefault(card.face, []).append(card)
    for table_meld in me.melds:
        meld = table_meld.meld
        if meld.joker is None or not meld.joker_for:
            continue
        if not all(face in by_face for face in meld.joker_for):
            continue
        given = tuple(by_face[face][0] for face in meld.joker_for)
        rest = [card for card in me.hand if card not in given]
        if sum(1 for card in rest if not card.is_joker) < 1:
            continue
        found = best_melds([*rest, meld.joker], me.ace)
        if any(meld.joker in m for m in found.melds):
            return SwapJoker(me.seat, table_meld.id, given, melds=found.melds)
        if not me.must_lay_swapped and _early(me):
            return SwapJoker(me.seat, table_meld.id, given)
    return None


def _early(me: KonkanSeat) -> bool:
    """Time enough to build with a joker in hand (it costs 15 if the round ends)."""
    return len(me.hand) >= 6 and min(me.hand_counts[s] for s in me.others()) >= 5


# --- discarding --------------------------------------------------------------------------------


_ACE_HIGH = 14


def _positions(card: Card) -> tuple[int, ...]:
    assert card.rank is not None
    rank = int(card.rank)
    return (1, _ACE_HIGH) if rank == 1 else (rank,)


def _near(a: Card, b: Card) -> int:
    """2 for a set partner or a run neighbour, 1 for a run card two away, else 0."""
    if a.is_joker or b.is_joker or a.face == b.face:
        return 0
    if a.rank == b.rank:
        return 2
    if a.suit != b.suit:
        return 0
    gap = min(abs(p - q) for p in _positions(a) for q in _positions(b))
    return 2 if gap == 1 else 1 if gap == 2 else 0


def _dead_faces(me: KonkanSeat, memory: Memory) -> Counter[str]:
    dead: Counter[str] = Counter(memory.seen_discards)
    for table_meld in me.melds:
        for card in table_meld.meld.real_cards:
            dead[card.face] += 1
    return dead


def keep_value(card: Card, hand: Sequence[Card], dead: Counter[str]) -> float:
    """How much ``card`` helps the hand: partners and neighbours, less when the cards
    that would complete them are dead."""
    score = 0.0
    for other in hand:
        near = _near(card, other)
        if not near:
            continue
        score += near * _liveness(card, other, dead)
    return score


def _liveness(a: Card, b: Card, dead: Counter[str]) -> float:
    """The share of the cards that would complete ``a``+``b`` still unseen (0.25..1)."""
    assert a.rank is not None and b.rank is not None and a.suit is not None
    if a.rank == b.rank:
        faces = [f"{a.face[:-1]}{suit.value}" for suit in SUITS if suit not in (a.suit, b.suit)]
    else:
        lo = min(int(a.rank), int(b.rank))
        hi = max(int(a.rank), int(b.rank))
        ranks = [lo - 1, hi + 1] if hi - lo == 1 else [lo + 1]
        faces = [
            f"{Rank(r if r <= 13 else 1).symbol}{a.suit.value}"
            for r in ranks
            if 1 <= r <= _ACE_HIGH
        ]
    if not faces:
        return 0.25
    live = sum(max(0, 2 - dead[face]) for face in faces)
    return max(0.25, live / (2 * len(faces)))


def discard_danger(me: KonkanSeat, memory: Memory, card: Card) -> float:
    """How much discarding ``card`` helps the next player."""
    nxt = me.next_seat
    danger = 0.0
    if me.opened[nxt] and any(_fits(m.meld, card) for m in me.melds):
        danger += FEED_PENALTY
    picked = memory.picked_by.get(nxt, set())
    for face in picked:
        if _near(card, parse_card(face)):
            danger += NEAR_PICK_PENALTY
    if card.face in memory.discarded_by.get(nxt, set()):
        danger -= SAFE_BONUS
    if not me.opened[nxt] and not me.committed[nxt]:
        danger += 0.05 * me.value(card)  # high cards help an opening
    return danger


def value_weight(me: KonkanSeat) -> float:
    """How much a card's point value matters if it is left in hand."""
    if not me.me_opened:
        return 0.0
    threat = min(me.hand_counts[s] for s in me.others())
    others_open = sum(1 for s in me.others() if me.opened[s])
    weight = 0.15 + 0.1 * others_open
    if threat <= 3:
        weight += 0.3
    return weight


def choose_discard(me: KonkanSeat, memory: Memory, found: SearchResult) -> Action:
    melded = {card for meld in found.melds for card in meld}
    reals = [card for card in me.hand if not card.is_joker]
    if not reals:
        return EndTurn(me.seat)
    candidates = [card for card in reals if card not in melded] or reals
    pool = [card for card in me.hand if card not in melded]
    dead = _dead_faces(me, memory)
    weight = value_weight(me)

    def cost(card: Card) -> tuple[float, tuple[int, int, int]]:
        keep = keep_value(card, pool, dead)
        score = keep + discard_danger(me, memory, card) - weight * me.value(card)
        return score, card.sort_key

    return Discard(me.seat, min(candidates, key=cost))


# --- Konkan -------------------------------------------------------------------------------------


def _face_counts(cards: Sequence[Card]) -> tuple[Counter[tuple[int, int]], int]:
    counts: Counter[tuple[int, int]] = Counter()
    jokers = 0
    for card in cards:
        if card.is_joker:
            jokers += 1
        else:
            assert card.suit is not None and card.rank is not None
            counts[(card.suit.index, int(card.rank))] += 1
    return counts, jokers


def konkan_distance(cards: Sequence[Card]) -> int:
    """How many more real cards a Konkan (10-run + 4-set, or 11-run + 3-set) needs."""
    counts, jokers = _face_counts(cards)
    suits_held = Counter(rank for _suit, rank in counts)  # per rank: how many suits we hold
    most = max(suits_held.values(), default=0)
    best = 99
    for suit in range(4):
        row = [counts[(suit, 1 if position == _ACE_HIGH else position)] for position in range(15)]
        for run_length, set_size in ((10, 4), (11, 3)):
            for start in range(1, _ACE_HIGH - run_length + 2):
                window = range(start, start + run_length)
                missing_run = sum(1 for position in window if not row[position])
                # a run card held once is not left for a set of its rank
                alone = {1 if p == _ACE_HIGH else p for p in window if row[p] == 1}
                full = any(n == most and rank not in alone for rank, n in suits_held.items())
                have = most if full else max(most - 1, 0)
                missing_set = set_size - min(have, set_size)
                fill = min(jokers, (missing_run > 0) + (missing_set > 0))
                best = min(best, missing_run + missing_set - fill)
                if jokers >= 2 and not missing_run:
                    # One joker may stand in the run for a card the set needs, the other
                    # joins the set (AC…8C JK TC JC beside 9H 9C' JK'): that card's suit
                    # counts for the set.
                    for rank in alone:
                        short = set_size - min(suits_held[rank], set_size)
                        best = min(best, short - (short > 0))
    return best


def should_commit(me: KonkanSeat) -> bool:
    """Commit only very close to a Konkan, when our total is not the best."""
    if me.me_opened or me.me_committed or not me.last_round:
        return False
    mine = me.totals[me.seat]
    behind = mine > min(me.totals[s] for s in me.others())
    if not behind:
        return False
    distance = konkan_distance(me.hand)
    if len(me.hand) == 15:  # the opener, before its first discard
        distance = min(konkan_distance([c for c in me.hand if c is not card]) for card in me.hand)
    if distance <= 1:
        return True
    far_behind = mine - min(me.totals) >= 100
    return distance == 2 and far_behind and me.stock_count >= 40


def committed_play(me: KonkanSeat) -> Action:
    found = konkan_out(me.hand, me.ace)
    if found is not None and (found.value >= me.opening_target or me.exempt):
        return LayDown(me.seat, found.melds)
    reals = [card for card in me.hand if not card.is_joker]
    if not reals:
        return EndTurn(me.seat)
    hand = me.hand

    def cost(card: Card) -> tuple[int, int, tuple[int, int, int]]:
        rest = [c for c in hand if c is not card]
        fits_next = me.opened[me.next_seat] and any(_fits(m.meld, card) for m in me.melds)
        return konkan_distance(rest), int(fits_next), card.sort_key

    return Discard(me.seat, min(reals, key=cost))
