"""Conquian, classic two-player: the whole of RULES.md Part 2, phase by phase.

A match is made from its options, a seed and (for tests) explicit deck
orders; every change is an action passed to :func:`apply`, which returns a
*new* state and the events it caused, or raises a :class:`RuleError` and
leaves the state it was given untouched. The shape and the public names
mirror :mod:`sahrat.rules.konkan`, so records, replays and simulations drive
both games the same way.

The phases of a turn (exactly one seat acts at any moment)::

    CHOOSE     an opponent's card is face up (discarded or passed): Take | Refuse
    TURNED_UP  the player turned this card up from the stock:       Take | Pass
    FORCE      the opponent is asked about a refused/passed card:   Force | DeclineForce
    FORCED     the forced player must lay the card:                 Take
    DISCARD    after a take that did not win:                       Discard
    OVER       the match has ended

Decisions where RULES.md leaves room (see also ``docs/conquian.md``):

* **Turning up is automatic.** The non-dealer's first card, and the card
  after a refusal, are turned up by the engine as part of the deal or of the
  refusal: there is no separate "turn up" action, since the player has no
  choice to make.
* **A take names the whole new arrangement.** ``Take.melds`` lists every
  meld the player will have after the take (old open cards, the face-up
  card, any hand cards added), which is how rearranging is expressed.
  Melds are stored sorted (each meld low to high, melds by their lowest
  card), so the same arrangement always gives the same state.
* **A forced take is an ordinary take** (§2.3 "takes it, lays it, and
  discards as usual"): the forced player may rearrange and may add hand
  cards too, and wins if that makes 11. Forcing is only *allowed* when the
  card fits the open melds alone (§2.4), and the turn timer's forced take
  uses no hand card.
* **The forcing question** is asked only when the refused or passed card
  fits the player's open melds (rearranging allowed, no hand card). Fitting
  depends on open cards only, so asking reveals nothing hidden. Declining
  lets the refusal or pass stand.
* **A draw** happens when a face-up card is refused (or a forcing question
  about a refusal is declined) and the stock is empty; the refused card
  goes to the dead pile.
* **Double after a draw** (option): the deal that follows a drawn deal is
  worth 2 points. It does not compound: a deal after two draws in a row is
  worth 2, not 4. The match goes to the first with ``wins_needed`` points.
* **Every match ends** (``docs/rules.md`` §2.6): drawn deals could follow each
  other forever (two turn timers refuse every card), so the match also ends
  with its ``max_drawn_deals``-th drawn deal. The player with more points
  wins it; equal points are a tied match with no ``match_winner``, and a coin
  table splits the pot (:func:`sahrat.store.ledger.payout_shares`). A deal
  itself always ends: every turn-up uses a stock card, and every take lays
  the face-up card and discards from a hand that never grows.
* **The turn timer** refuses, passes, declines to force, makes the forced
  take with open cards only, and discards the hand card with the fewest
  partners (see :func:`timeout_action`).
* Hands are kept sorted; the first dealer is drawn from the seed; the deal
  then alternates, draws included.
* **Provably fair shuffles** (``docs/fairness.md``): deal ``n`` is shuffled
  from its own seed; its commitment is in the ``deal`` event and in every
  view, and the seed and salt are revealed in the ``deal_end`` event (and in
  the deal's result).

Melds are checked with bit masks over the 40 cards (card index = suit * 10 +
position in ``A 2 3 4 5 6 7 J Q K``): every legal meld is precomputed once,
so a meld is valid exactly when its mask is in that table, and "can these
cards all be melded" is a short search that always covers the lowest card.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from itertools import combinations
from typing import Any, TypeVar

from .cards import CONQUIAN_RANKS, Card, conquian_deck, format_cards, parse_cards
from .errors import (
    BadAction,
    BadCard,
    BadRecord,
    CannotForce,
    CardNotInHand,
    DuplicateCard,
    GameOver,
    InvalidMeld,
    MeldCardsChanged,
    NoFaceUpCard,
    NotYourTurn,
    RuleError,
    TakenCardNotMelded,
    WrongPhase,
)
from .events import Event
from .options import ConquianOptions
from .rng import RoundSecret, rng_for, round_secret

PLAYERS = 2
DECK_SIZE = 40
HAND_SIZE = 10
WINNING_COUNT = 11
MIN_MELD = 3
MAX_SET = 4
MAX_RUN = 8
RANKS_PER_SUIT = len(CONQUIAN_RANKS)  # 10: A 2 3 4 5 6 7 J Q K

# --- cards as bits ----------------------------------------------------------------

DECK: tuple[Card, ...] = tuple(conquian_deck())  # suit by suit, A..K: index order
_INDEX: dict[Card, int] = {card: i for i, card in enumerate(DECK)}
_ORDER_TEXT = "A 2 3 4 5 6 7 J Q K"

Melds = tuple[tuple[Card, ...], ...]
T = TypeVar("T")


def card_index(card: Card) -> int:
    """The card's bit (0..39); raises :class:`BadCard` for a card not in the 40-card deck."""
    try:
        return _INDEX[card]
    except KeyError:
        raise BadCard(
            f"{card} is not one of the 40 Conquian cards (no 8, 9, 10 or joker)"
        ) from None


def mask_of(cards: Iterable[Card]) -> int:
    mask = 0
    index = _INDEX
    for card in cards:
        bit = index.get(card)
        mask |= 1 << (bit if bit is not None else card_index(card))
    return mask


def cards_of(mask: int) -> tuple[Card, ...]:
    """The cards of a mask in index order (a run low to high, a set by suit)."""
    out = []
    while mask:
        low = mask & -mask
        out.append(DECK[low.bit_length() - 1])
        mask ^= low
    return tuple(out)


def _all_melds() -> list[int]:
    melds = []
    for pos in range(RANKS_PER_SUIT):
        bits = [1 << (suit * RANKS_PER_SUIT + pos) for suit in range(4)]
        for size in (3, 4):
            for combo in combinations(bits, size):
                melds.append(sum(combo))
    for suit in range(4):
        base = suit * RANKS_PER_SUIT
        for start in range(RANKS_PER_SUIT):
            for length in range(MIN_MELD, MAX_RUN + 1):
                if start + length <= RANKS_PER_SUIT:
                    melds.append(sum(1 << (base + start + k) for k in range(length)))
    return melds


def _lowest(mask: int) -> int:
    return (mask & -mask).bit_length() - 1


ALL_MELDS: tuple[int, ...] = tuple(_all_melds())
_MELD_SET: frozenset[int] = frozenset(ALL_MELDS)
# melds grouped by their lowest card, and by every card they contain
_BY_LOW: tuple[tuple[int, ...], ...] = tuple(
    tuple(m for m in ALL_MELDS if _lowest(m) == i) for i in range(DECK_SIZE)
)
_CONTAINING: tuple[tuple[int, ...], ...] = tuple(
    tuple(m for m in ALL_MELDS if m >> i & 1) for i in range(DECK_SIZE)
)


# The 3-card melds holding each card. A card can join a group of cards in some meld only
# if one of these fits the group: any set or run holding the card holds a 3-card one.
_TRIPLES: tuple[tuple[int, ...], ...] = tuple(
    tuple(m for m in _CONTAINING[i] if m.bit_count() == MIN_MELD) for i in range(DECK_SIZE)
)


def _may_fit(index: int, pool: int) -> bool:
    """A quick necessary test: some 3-card meld holds card ``index`` within ``pool``."""
    for triple in _TRIPLES[index]:  # noqa: SIM110 (a loop is faster than any())
        if triple & pool == triple:
            return True
    return False


def _covers(mask: int) -> bool:
    """Can every card of ``mask`` be put in disjoint valid melds?

    The lowest card must be in some meld, and every other card of that meld
    is higher, so trying the melds that start at the lowest card is complete.
    """
    if not mask:
        return True
    for meld in _BY_LOW[(mask & -mask).bit_length() - 1]:  # a loop: faster than any()
        if meld & mask == meld and _covers(mask ^ meld):
            return True
    return False


def _partition(mask: int) -> list[int] | None:
    """One way to meld every card of ``mask`` (the first the search finds), or ``None``."""
    if not mask:
        return []
    for meld in _BY_LOW[_lowest(mask)]:
        if meld & mask == meld:
            rest = _partition(mask ^ meld)
            if rest is not None:
                return [meld, *rest]
    return None


def _best_optional(optional: int, memo: dict[int, tuple[int, list[int]]]) -> tuple[int, list[int]]:
    """The most cards of ``optional`` that disjoint melds can hold (and those melds)."""
    if optional.bit_count() < MIN_MELD:
        return 0, []
    if optional in memo:
        return memo[optional]
    low = optional & -optional
    best = _best_optional(optional ^ low, memo)  # the lowest card stays in the hand
    for meld in _BY_LOW[low.bit_length() - 1]:
        if meld & optional == meld:
            used, melds = _best_optional(optional ^ meld, memo)
            if used.bit_count() + meld.bit_count() > best[0].bit_count():
                best = (used | meld, [meld, *melds])
    memo[optional] = best
    return best


def _best_cover(
    required: int, optional: int, memo: dict[int, tuple[int, list[int]]]
) -> tuple[int, list[int]] | None:
    """Melds holding every card of ``required`` and as many of ``optional`` as possible.

    Returns (optional cards used, melds), or ``None`` when ``required`` cannot
    all be melded. A full use of ``optional`` stops the search early.
    """
    if not required:
        return _best_optional(optional, memo)
    pool = required | optional
    best: tuple[int, list[int]] | None = None
    for meld in _CONTAINING[_lowest(required)]:
        if meld & pool != meld:
            continue
        sub = _best_cover(required & ~meld, optional & ~meld, memo)
        if sub is None:
            continue
        used = (meld & optional) | sub[0]
        if best is None or used.bit_count() > best[0].bit_count():
            best = (used, [meld, *sub[1]])
            if used == optional:
                break
    return best


def _sorted_melds(masks: Iterable[int]) -> Melds:
    return tuple(cards_of(m) for m in sorted(masks, key=_lowest))


def is_meld(cards: Sequence[Card]) -> bool:
    """A set of 3–4 of one rank, or a run of 3–8 of one suit in ``A 2 3 4 5 6 7 J Q K``."""
    if not all(card in _INDEX for card in cards):
        return False
    mask = mask_of(cards)
    return mask.bit_count() == len(cards) and mask in _MELD_SET


def meld_problem(cards: Sequence[Card]) -> str | None:
    """Why ``cards`` are not a Conquian meld, in plain words (``None`` when they are)."""
    if is_meld(cards):
        return None
    text = format_cards(cards) or "an empty meld"
    if len(cards) < MIN_MELD:
        return f"{text} is not a meld: a meld has at least {MIN_MELD} cards"
    if any(card not in _INDEX for card in cards):
        return f"{text} is not a meld: it holds a card that is not in the Conquian deck"
    if len({card.rank for card in cards}) == 1:
        return f"{text} is not a meld: a set has {MIN_MELD} or {MAX_SET} cards of one rank"
    if len({card.suit for card in cards}) != 1:
        return f"{text} is not a meld: a set is one rank and a run is one suit"
    if len(cards) > MAX_RUN:
        return f"{text} is not a meld: a run has at most {MAX_RUN} cards"
    return f"{text} is not a meld: a run is consecutive in {_ORDER_TEXT} (the ace is only low)"


def check_meld(cards: Sequence[Card]) -> tuple[Card, ...]:
    """The meld in table order, or :class:`InvalidMeld` saying what is wrong."""
    problem = meld_problem(cards)
    if problem is not None:
        raise InvalidMeld(problem)
    return cards_of(mask_of(cards))


def _flat(groups: Iterable[Iterable[T]]) -> list[T]:
    return [item for group in groups for item in group]


def fits_melds(melds: Iterable[Iterable[Card]], card: Card) -> bool:
    """Can ``card`` join these open melds, rearranging them, with no hand card (§2.4)?"""
    opened = mask_of(_flat(melds))
    bit = card_index(card)
    pool = opened | 1 << bit
    return bool(opened) and _may_fit(bit, pool) and _covers(pool)


def can_reach_eleven(melds: Iterable[Iterable[Card]], hand: Iterable[Card], card: Card) -> bool:
    """Would taking ``card`` let this player have exactly 11 cards in valid melds (a win)?"""
    cards = [*_flat(melds), *hand, card]
    mask = mask_of(cards)
    return len(cards) == WINNING_COUNT and mask.bit_count() == WINNING_COUNT and _covers(mask)


def best_take(
    melds: Iterable[Iterable[Card]], hand: Iterable[Card], card: Card, *, use_hand: bool = True
) -> Melds | None:
    """An arrangement that takes ``card`` laying as many hand cards as possible (all of
    them when that wins), or ``None`` when the card cannot be taken. Deterministic."""
    bit = card_index(card)
    required = mask_of(_flat(melds)) | 1 << bit
    optional = mask_of(hand) & ~required if use_hand else 0
    if not _may_fit(bit, required | optional):
        return None  # the common case, answered without a search
    found = _best_cover(required, optional, {})
    return None if found is None else _sorted_melds(found[1])


# --- phases, actions, state ---------------------------------------------------------------


class Phase(Enum):
    CHOOSE = "choose"  # an opponent's card is face up: take it or refuse it
    TURNED_UP = "turned_up"  # the player turned this card up: take it or pass it
    FORCE = "force"  # the opponent answers: force the refused/passed card or not
    FORCED = "forced"  # the forced player must take the card
    DISCARD = "discard"  # after a take that did not win
    OVER = "over"  # the match has ended


class FaceUp(Enum):
    """How the face-up card got there."""

    DISCARDED = "discarded"  # the opponent's discard
    PASSED = "passed"  # the opponent turned it up and passed it
    TURNED_UP = "turned_up"  # the player to move turned it up


class Finish(Enum):
    WIN = "win"
    DRAW = "draw"


@dataclass(frozen=True, slots=True)
class Take:
    """Take the face-up card: ``melds`` is the player's complete arrangement afterwards."""

    seat: int
    melds: Melds


@dataclass(frozen=True, slots=True)
class Refuse:
    """Refuse the opponent's card: it goes to the dead pile and the next card is turned up."""

    seat: int


@dataclass(frozen=True, slots=True)
class Pass:
    """Pass a card you turned up yourself: it becomes the opponent's card, no discard."""

    seat: int


@dataclass(frozen=True, slots=True)
class Discard:
    seat: int
    card: Card


@dataclass(frozen=True, slots=True)
class Force:
    """Make the opponent take the card they just refused or passed (§2.4)."""

    seat: int


@dataclass(frozen=True, slots=True)
class DeclineForce:
    """Let the opponent's refusal or pass stand."""

    seat: int


Action = Take | Refuse | Pass | Discard | Force | DeclineForce


@dataclass(frozen=True, slots=True)
class DealResult:
    deal: int  # 1-based
    dealer: int
    finish: Finish
    winner: int | None
    points: int  # scored by the winner (0 for a draw)
    melds: tuple[Melds, ...]
    hands: tuple[tuple[Card, ...], ...]
    secret: RoundSecret | None = None  # revealed now; None when the deck was stacked

    def to_json(self, *, hands: bool = False) -> dict[str, Any]:
        """The result; the cards left in the hands only when asked (after the match),
        so that no view ever shows a hand: unmelded cards are not scored (§2.6). The
        deal's seed and salt are revealed with it (docs/fairness.md)."""
        secret = self.secret
        out: dict[str, Any] = {
            "deal": self.deal,
            "dealer": self.dealer,
            "finish": self.finish.value,
            "winner": self.winner,
            "points": self.points,
            "round_commitment": secret.commitment if secret else None,
            "round_seed": secret.seed if secret else None,
            "round_salt": secret.salt if secret else None,
        }
        if hands:
            out["melds"] = [_melds_json(melds) for melds in self.melds]
            out["hands"] = [_strs(hand) for hand in self.hands]
        return out


@dataclass(slots=True)
class ConquianState:
    """Everything about a Conquian match. Treat as read-only: :func:`apply` copies it."""

    options: ConquianOptions
    seed: str
    decks: tuple[tuple[Card, ...], ...]
    deals: int  # deals made so far; the current deal is number ``deals``
    secret: RoundSecret  # the current deal's seed, salt and commitment (docs/fairness.md)
    stacked: bool  # the current deal came from ``decks``, not from its seed
    dealer: int
    turn: int  # the seat to act (in FORCE: the seat asked whether to force)
    phase: Phase
    hands: list[list[Card]]  # sorted
    melds: list[Melds]  # per seat, sorted
    open_masks: list[int]  # per seat, the bits of ``melds``: kept for speed
    stock: list[Card]  # the top is the last element
    dead: list[Card]  # face down, never reused
    face_up: Card | None = None
    face_up_from: int | None = None  # who discarded, passed or turned it up
    face_up_how: FaceUp | None = None
    deal_value: int = 1  # points the current deal is worth
    points: list[int] = field(default_factory=lambda: [0] * PLAYERS)
    results: list[DealResult] = field(default_factory=list)
    match_winner: int | None = None

    @property
    def players(self) -> int:
        return PLAYERS

    @property
    def over(self) -> bool:
        return self.phase is Phase.OVER

    def clone(self) -> ConquianState:
        return ConquianState(
            self.options,
            self.seed,
            self.decks,
            self.deals,
            self.secret,
            self.stacked,
            self.dealer,
            self.turn,
            self.phase,
            [list(self.hands[0]), list(self.hands[1])],
            list(self.melds),
            list(self.open_masks),
            list(self.stock),
            list(self.dead),
            self.face_up,
            self.face_up_from,
            self.face_up_how,
            self.deal_value,
            list(self.points),
            list(self.results),
            self.match_winner,
        )


def forceable(state: ConquianState, seat: int, card: Card | None = None) -> bool:
    """Could ``seat`` be forced to take ``card`` (default: the face-up card)? §2.4."""
    card = card if card is not None else state.face_up
    if card is None:
        return False
    opened = state.open_masks[seat]
    bit = card_index(card)
    pool = opened | 1 << bit
    return bool(opened) and _may_fit(bit, pool) and _covers(pool)


# --- starting a match and dealing ------------------------------------------------------


def new_game(
    options: ConquianOptions | None = None,
    seed: str = "0",
    decks: Sequence[Sequence[Card]] = (),
    first_dealer: int | None = None,
) -> ConquianState:
    """A match ready for its first action. ``decks`` stacks the first deals (top card first:
    10 to the non-dealer, 10 to the dealer, then the stock from its top)."""
    options = options or ConquianOptions()
    checked = tuple(_check_deck(deck, index) for index, deck in enumerate(decks))
    if first_dealer is None:
        first_dealer = rng_for(seed, "first_dealer").randrange(PLAYERS)
    elif first_dealer not in (0, 1):
        raise BadRecord(f"first dealer {first_dealer} is not seat 0 or 1")
    state = ConquianState(
        options=options,
        seed=seed,
        decks=checked,
        deals=0,
        secret=round_secret(seed, 1),
        stacked=False,
        dealer=first_dealer,
        turn=1 - first_dealer,
        phase=Phase.TURNED_UP,
        hands=[[], []],
        melds=[(), ()],
        open_masks=[0, 0],
        stock=[],
        dead=[],
    )
    _deal(state, [])
    return state


def _check_deck(deck: Sequence[Card], index: int) -> tuple[Card, ...]:
    if len(deck) != DECK_SIZE or Counter(deck) != Counter(DECK):
        raise BadRecord(f"deck {index} is not the 40 cards of Conquian, each once")
    return tuple(DECK[_INDEX[card]] for card in deck)


def stacked_deck(
    hands: Mapping[int, Sequence[Card]], stock: Sequence[Card] = (), *, dealer: int
) -> list[Card]:
    """A deck order that deals ``hands`` (by seat) and puts ``stock`` on top of the stock.

    Cards not named fill the hands and then the rest of the stock in canonical
    order. For readable scenarios.
    """
    named = [*_flat(hands.values()), *stock]
    remaining = Counter(DECK)
    for card in named:
        if remaining[card] == 0:
            raise BadRecord(f"{card} is stacked twice or is not a Conquian card")
        remaining[card] -= 1
    pool = [card for card in DECK if remaining[card]]
    order: list[Card] = []
    for seat in (1 - dealer, dealer):
        hand = list(hands.get(seat, ()))
        if len(hand) > HAND_SIZE:
            raise BadRecord(f"seat {seat} is dealt {HAND_SIZE} cards, not {len(hand)}")
        while len(hand) < HAND_SIZE:
            hand.append(pool.pop(0))
        order += hand
    return order + list(stock) + pool


def _sort_key(card: Card) -> int:
    return _INDEX[card]


def _deal(state: ConquianState, events: list[Event]) -> None:
    """Deal in place: 10 to the non-dealer, 10 to the dealer, 20 to the stock (§2.1),
    then the non-dealer turns up the top of the stock (§2.3.1)."""
    state.secret = round_secret(state.seed, state.deals + 1)
    state.stacked = state.deals < len(state.decks)
    if state.stacked:
        order = list(state.decks[state.deals])
    else:
        order = list(DECK)
        rng_for(state.secret.seed, "deal", 0).shuffle(order)
    state.deals += 1
    dealer = state.dealer
    first = 1 - dealer
    hands: list[list[Card]] = [[], []]
    hands[first] = sorted(order[:HAND_SIZE], key=_sort_key)
    hands[dealer] = sorted(order[HAND_SIZE : 2 * HAND_SIZE], key=_sort_key)
    state.hands = hands
    state.melds = [(), ()]
    state.open_masks = [0, 0]
    state.stock = order[2 * HAND_SIZE :][::-1]
    state.dead = []
    previous = state.results[-1] if state.results else None
    after_draw = previous is not None and previous.finish is Finish.DRAW
    state.deal_value = 2 if state.options.double_after_draw and after_draw else 1
    events.append(
        Event(
            "deal",
            None,
            {
                "deal": state.deals,
                "dealer": dealer,
                "value": state.deal_value,
                "stock_count": len(state.stock),
                "round_commitment": _commitment(state),
            },
        )
    )
    for seat in (0, 1):
        events.append(Event("dealt", seat, {"count": HAND_SIZE}, {"cards": _strs(hands[seat])}))
    _turn_up(state, first, events)


def _commitment(state: ConquianState) -> str | None:
    """The current deal's commitment, or ``None`` when its deck was stacked (a test)."""
    return None if state.stacked else state.secret.commitment


def _turn_up(state: ConquianState, seat: int, events: list[Event]) -> None:
    card = state.stock.pop()
    state.face_up = card
    state.face_up_from = seat
    state.face_up_how = FaceUp.TURNED_UP
    state.turn = seat
    state.phase = Phase.TURNED_UP
    events.append(Event("turn_up", seat, {"card": str(card), "stock_count": len(state.stock)}))


def _strs(cards: Iterable[Card]) -> list[str]:
    return [str(card) for card in cards]


def _melds_json(melds: Melds) -> list[list[str]]:
    return [_strs(meld) for meld in melds]


# --- applying actions ------------------------------------------------------------------


def apply(state: ConquianState, action: Action) -> tuple[ConquianState, list[Event]]:
    """Apply one action; returns the new state and its events, or raises a RuleError."""
    if state.phase is Phase.OVER:
        raise GameOver("the match is over")
    handler = _HANDLERS.get(type(action))
    if handler is None:
        raise BadAction(f"{action!r} is not a Conquian action")
    if action.seat != state.turn:
        raise NotYourTurn(f"it is seat {state.turn}'s move, not seat {action.seat}'s")
    new = state.clone()
    events: list[Event] = []
    handler(new, action, events)
    return new, events


def _expected(state: ConquianState) -> str:
    """What the seat to act may do now, for error messages."""
    card = state.face_up
    return {
        Phase.CHOOSE: f"take or refuse {card}",
        Phase.TURNED_UP: f"take or pass {card}, which you turned up",
        Phase.FORCE: f"force seat {1 - state.turn} to take {card}, or decline",
        Phase.FORCED: f"take {card}: you were forced to",
        Phase.DISCARD: "discard a card from your hand",
        Phase.OVER: "nothing: the match is over",
    }[state.phase]


def _wrong(state: ConquianState, what: str) -> WrongPhase:
    return WrongPhase(f"{what} is not allowed now; you must {_expected(state)}")


def _take(state: ConquianState, action: Take, events: list[Event]) -> None:
    if state.phase is Phase.DISCARD:
        raise NoFaceUpCard("there is no face-up card to take: you have taken; discard a card")
    if state.phase is Phase.FORCE:
        raise _wrong(state, "taking")
    card = state.face_up
    assert card is not None
    seat = action.seat
    arrangement, laid = _check_arrangement(state, seat, card, action.melds)
    hand = state.hands[seat]
    for hand_card in laid:
        hand.remove(hand_card)
    state.melds[seat] = arrangement
    state.open_masks[seat] |= mask_of(laid) | 1 << _INDEX[card]
    forced = state.phase is Phase.FORCED
    state.face_up = state.face_up_from = state.face_up_how = None
    events.append(
        Event(
            "take",
            seat,
            {
                "card": str(card),
                "forced": forced,
                "laid": _strs(laid),
                "melds": _melds_json(arrangement),
                "hand_count": len(hand),
            },
        )
    )
    if not hand:  # all 11 cards in valid melds (§2.5)
        _end_deal(state, seat, events)
    else:
        state.phase = Phase.DISCARD


def _check_arrangement(
    state: ConquianState, seat: int, taken: Card, melds: Sequence[Sequence[Card]]
) -> tuple[Melds, list[Card]]:
    """Check a proposed arrangement (§2.2, §2.3); return it in table order and the hand
    cards it lays. Raises the first problem found, naming the card or the meld."""
    mask = 0
    for card in _flat(melds):
        bit = 1 << card_index(card)
        if mask & bit:
            raise DuplicateCard(f"{card} is named twice in one action")
        mask |= bit
    taken_bit = 1 << _INDEX[taken]
    if not mask & taken_bit:
        raise TakenCardNotMelded(
            f"the taken card {taken} must go into one of your melds; it never goes to the hand"
        )
    opened = state.open_masks[seat]
    if opened & ~mask:
        missing = format_cards(cards_of(opened & ~mask))
        raise MeldCardsChanged(
            f"{missing} must stay in your melds: open cards never go back to the hand"
        )
    added = mask & ~opened & ~taken_bit
    theirs = added & state.open_masks[1 - seat]
    if theirs:
        raise MeldCardsChanged(
            f"{format_cards(cards_of(theirs))} belongs to seat {1 - seat}'s melds: "
            "no one takes from or adds to an opponent's melds"
        )
    not_held = added & ~mask_of(state.hands[seat])
    if not_held:
        raise CardNotInHand(f"{format_cards(cards_of(not_held))} is not in your hand")
    meld_masks = []
    for meld in melds:
        meld_mask = mask_of(meld)
        if meld_mask not in _MELD_SET:
            raise InvalidMeld(meld_problem(meld) or f"{format_cards(meld)} is not a meld")
        meld_masks.append(meld_mask)
    return _sorted_melds(meld_masks), list(cards_of(added))


def _refuse(state: ConquianState, action: Refuse, events: list[Event]) -> None:
    if state.phase is not Phase.CHOOSE:
        raise _wrong(state, "refusing")
    card = state.face_up
    assert card is not None
    events.append(Event("refuse", action.seat, {"card": str(card)}))
    if forceable(state, action.seat, card):
        _ask_force(state, action.seat, card, events)
    else:
        _bury_and_turn_up(state, action.seat, events)


def _pass(state: ConquianState, action: Pass, events: list[Event]) -> None:
    if state.phase is not Phase.TURNED_UP:
        raise _wrong(state, "passing")
    card = state.face_up
    assert card is not None
    events.append(Event("pass", action.seat, {"card": str(card)}))
    if forceable(state, action.seat, card):
        _ask_force(state, action.seat, card, events)
    else:
        _pass_on(state, action.seat)


def _ask_force(state: ConquianState, player: int, card: Card, events: list[Event]) -> None:
    """The card fits ``player``'s open melds: the opponent is asked at once (§2.4)."""
    state.turn = 1 - player
    state.phase = Phase.FORCE
    after = "pass" if state.face_up_how is FaceUp.TURNED_UP else "refuse"
    events.append(
        Event("force_question", state.turn, {"card": str(card), "player": player, "after": after})
    )


def _bury_and_turn_up(state: ConquianState, seat: int, events: list[Event]) -> None:
    """The refusal stands: the card goes face down, the refuser turns up the next one."""
    card = state.face_up
    assert card is not None
    state.dead.append(card)
    state.face_up = state.face_up_from = state.face_up_how = None
    if not state.stock:  # §2.5: stock empty and the face-up card refused
        events.append(Event("stock_exhausted", seat, {"card": str(card)}))
        _end_deal(state, None, events)
        return
    _turn_up(state, seat, events)


def _pass_on(state: ConquianState, seat: int) -> None:
    """The pass stands: the card stays face up as the opponent's card."""
    state.face_up_how = FaceUp.PASSED
    state.face_up_from = seat
    state.turn = 1 - seat
    state.phase = Phase.CHOOSE


def _force(state: ConquianState, action: Force, events: list[Event]) -> None:
    if state.phase is not Phase.FORCE:
        raise CannotForce(
            f"there is no refused or passed card to force now; you must {_expected(state)}"
        )
    forced = 1 - action.seat
    state.turn = forced
    state.phase = Phase.FORCED
    events.append(Event("force", action.seat, {"card": str(state.face_up), "forced": forced}))


def _decline_force(state: ConquianState, action: DeclineForce, events: list[Event]) -> None:
    if state.phase is not Phase.FORCE:
        raise _wrong(state, "declining to force")
    player = 1 - action.seat
    events.append(Event("decline_force", action.seat, {"card": str(state.face_up)}))
    if state.face_up_how is FaceUp.TURNED_UP:
        _pass_on(state, player)
    else:
        _bury_and_turn_up(state, player, events)


def _discard(state: ConquianState, action: Discard, events: list[Event]) -> None:
    if state.phase is not Phase.DISCARD:
        raise _wrong(state, "discarding")
    seat = action.seat
    hand = state.hands[seat]
    if action.card not in hand:
        raise CardNotInHand(f"{action.card} is not in your hand")
    card = DECK[_INDEX[action.card]]
    hand.remove(card)
    state.face_up = card
    state.face_up_from = seat
    state.face_up_how = FaceUp.DISCARDED
    state.turn = 1 - seat
    state.phase = Phase.CHOOSE
    events.append(Event("discard", seat, {"card": str(card), "hand_count": len(hand)}))


def _end_deal(state: ConquianState, winner: int | None, events: list[Event]) -> None:
    """Score the deal (§2.6); end the match or deal again with the other dealer."""
    points = state.deal_value if winner is not None else 0
    result = DealResult(
        deal=state.deals,
        dealer=state.dealer,
        finish=Finish.WIN if winner is not None else Finish.DRAW,
        winner=winner,
        points=points,
        melds=tuple(state.melds),
        hands=tuple(tuple(hand) for hand in state.hands),
        secret=None if state.stacked else state.secret,
    )
    state.results.append(result)
    if winner is not None:
        state.points[winner] += points
    events.append(Event("deal_end", winner, {**result.to_json(), "totals": list(state.points)}))
    if winner is not None and state.points[winner] >= state.options.wins_needed:
        _end_match(state, winner, events)
        return
    draws = sum(r.finish is Finish.DRAW for r in state.results)
    if winner is None and draws >= state.options.max_drawn_deals:
        events.append(Event("draw_limit", None, {"draws": draws}))
        _end_match(state, _leader(state.points), events)
        return
    state.dealer = 1 - state.dealer
    _deal(state, events)


def _leader(points: Sequence[int]) -> int | None:
    """The seat with more points, or ``None`` when they are equal (a tied match)."""
    if points[0] == points[1]:
        return None
    return 0 if points[0] > points[1] else 1


def _end_match(state: ConquianState, winner: int | None, events: list[Event]) -> None:
    state.phase = Phase.OVER
    state.match_winner = winner
    events.append(
        Event(
            "match_end",
            None,
            {"winner": winner, "totals": list(state.points), "seed": state.seed},
        )
    )


_HANDLERS: dict[type[Any], Any] = {
    Take: _take,
    Refuse: _refuse,
    Pass: _pass,
    Discard: _discard,
    Force: _force,
    DeclineForce: _decline_force,
}


# --- what a seat may do and see -----------------------------------------------------------


def to_act(state: ConquianState) -> int | None:
    """The one seat whose move it is, or ``None`` when the match is over."""
    return None if state.phase is Phase.OVER else state.turn


def simple_actions(state: ConquianState) -> list[Action]:
    """The legal actions that need no meld choice: refuse, pass, force or decline, discard,
    and (when forced) the take that uses open cards only. Other takes are validated when
    proposed (:func:`check_action`); :func:`best_take` finds one."""
    phase = state.phase
    seat = state.turn
    if phase is Phase.CHOOSE:
        return [Refuse(seat)]
    if phase is Phase.TURNED_UP:
        return [Pass(seat)]
    if phase is Phase.DISCARD:
        return [Discard(seat, card) for card in state.hands[seat]]
    if phase is Phase.FORCE:
        return [Force(seat), DeclineForce(seat)]
    if phase is Phase.FORCED:
        return [_forced_take(state)]
    return []


def _forced_take(state: ConquianState) -> Take:
    """The forced take with open cards only: it exists because the card was forceable."""
    seat = state.turn
    assert state.face_up is not None
    melds = _partition(state.open_masks[seat] | 1 << _INDEX[state.face_up])
    assert melds is not None
    return Take(seat, _sorted_melds(melds))


def check_action(state: ConquianState, action: Action) -> RuleError | None:
    """``None`` if ``action`` is legal now, else the error it would raise (state untouched)."""
    try:
        apply(state, action)
    except RuleError as error:
        return error
    return None


def partners(card: Card, hand: Sequence[Card]) -> int:
    """Hand cards that could meld with ``card``: its rank, or its suit within two ranks."""
    i = _INDEX[card]
    count = 0
    for other in hand:
        j = _INDEX[other]
        if j == i:
            continue
        same_rank = j % RANKS_PER_SUIT == i % RANKS_PER_SUIT
        near_in_suit = j // RANKS_PER_SUIT == i // RANKS_PER_SUIT and abs(j - i) <= 2
        count += same_rank or near_in_suit
    return count


def timeout_discard(hand: Sequence[Card]) -> Card:
    """The timer's discard: the card with the fewest partners in the hand (see
    :func:`partners`); ties go to the higher rank, then to the later suit (S H D C)."""
    return min(
        hand,
        key=lambda c: (
            partners(c, hand),
            -(_INDEX[c] % RANKS_PER_SUIT),
            -(_INDEX[c] // RANKS_PER_SUIT),
        ),
    )


def timeout_action(state: ConquianState) -> Action:
    """The turn timer's move: refuse, pass, decline to force, make the forced take with
    open cards only, or discard by :func:`timeout_discard`."""
    seat = state.turn
    phase = state.phase
    if phase is Phase.CHOOSE:
        return Refuse(seat)
    if phase is Phase.TURNED_UP:
        return Pass(seat)
    if phase is Phase.FORCE:
        return DeclineForce(seat)
    if phase is Phase.FORCED:
        return _forced_take(state)
    if phase is Phase.DISCARD:
        return Discard(seat, timeout_discard(state.hands[seat]))
    raise GameOver("the match is over")


def view(state: ConquianState, seat: int | None, *, history: bool = True) -> dict[str, Any]:
    """What ``seat`` may know (``None``: a spectator): its own hand only, both players'
    melds, the face-up card, counts of the stock and of the face-down dead pile.
    ``history=False`` leaves out the options and the finished deals' ``results``, which
    grow with the match (a replay step)."""
    return _seat_view(_public_view(state, history), state, seat)


def views(
    state: ConquianState, seats: Iterable[int | None], *, history: bool = True
) -> dict[int | None, dict[str, Any]]:
    """``view`` for each of ``seats`` at once: the part everyone sees is built once and
    shared by the views (treat them as read-only), each seat adds its own hand."""
    public = _public_view(state, history)
    return {seat: _seat_view(public, state, seat) for seat in seats}


def _public_view(state: ConquianState, history: bool) -> dict[str, Any]:
    over = state.phase is Phase.OVER
    data: dict[str, Any] = {
        "game": "conquian",
        "viewer": None,
        "deal": state.deals,
        "dealer": state.dealer,
        "deal_value": state.deal_value,
        "round_commitment": _commitment(state),
        "turn": None if over else state.turn,
        "phase": state.phase.value,
        "hand_counts": [len(hand) for hand in state.hands],
        "melds": [_melds_json(melds) for melds in state.melds],
        "face_up": str(state.face_up) if state.face_up is not None else None,
        "face_up_from": state.face_up_from,
        "face_up_how": state.face_up_how.value if state.face_up_how is not None else None,
        "stock_count": len(state.stock),
        "dead_count": len(state.dead),
        "points": list(state.points),
        "match_over": over,
        "winner": state.match_winner,
    }
    if history:
        data["options"] = state.options.to_json()
        data["results"] = [result.to_json() for result in state.results]
    if state.phase is Phase.FORCE:  # whom the question is about, and what they did
        after = "pass" if state.face_up_how is FaceUp.TURNED_UP else "refuse"
        data["question"] = {"about": 1 - state.turn, "after": after}
    return data


def _seat_view(public: dict[str, Any], state: ConquianState, seat: int | None) -> dict[str, Any]:
    data = dict(public)
    data["viewer"] = seat
    if seat is not None:
        if seat not in (0, 1):
            raise BadAction(f"seat {seat} is not a seat at this table")
        data["hand"] = _strs(state.hands[seat])
        if seat == state.turn and state.phase is not Phase.OVER:
            data["simple_actions"] = [action_to_json(a) for a in simple_actions(state)]
    return data


# --- invariants ---------------------------------------------------------------------------


def check_invariants(state: ConquianState) -> list[str]:
    """Problems with ``state`` (empty when sound): the checks run after every action."""
    problems: list[str] = []
    cards = [*_flat(state.hands), *_flat(_flat(state.melds)), *state.stock, *state.dead]
    if state.face_up is not None:
        cards.append(state.face_up)
    if len(cards) != DECK_SIZE or Counter(cards) != Counter(DECK):
        problems.append(f"cards not conserved: {len(cards)} cards, duplicates or strays")
    for seat in (0, 1):
        for meld in state.melds[seat]:
            if not is_meld(meld) or tuple(meld) != cards_of(mask_of(meld)):
                problems.append(f"seat {seat}: {format_cards(meld)} is not a meld in table order")
        if mask_of(_flat(state.melds[seat])) != state.open_masks[seat]:
            problems.append(f"seat {seat}: open mask out of step with the melds")
        if state.hands[seat] != sorted(state.hands[seat], key=_sort_key):
            problems.append(f"seat {seat}: hand not sorted")
    problems += _turn_problems(state)
    totals = [0, 0]
    for result in state.results:
        if result.winner is not None:
            totals[result.winner] += result.points
    if totals != state.points:
        problems.append(f"points {state.points} differ from the deal results {totals}")
    return problems


def _turn_problems(state: ConquianState) -> list[str]:
    problems: list[str] = []
    phase = state.phase
    if phase is Phase.OVER:
        won = state.match_winner is not None and (
            state.points[state.match_winner] >= state.options.wins_needed
            or state.match_winner == _leader(state.points)
        )
        drawn_out = sum(r.finish is Finish.DRAW for r in state.results)
        tied = state.match_winner is None and _leader(state.points) is None
        if not (won or (tied and drawn_out >= state.options.max_drawn_deals)):
            problems.append(f"match over with winner {state.match_winner}, points {state.points}")
        if state.face_up is not None:
            problems.append("match over with a face-up card")
        return problems
    if state.turn not in (0, 1):
        problems.append(f"turn {state.turn} is not a seat")
        return problems
    counts = [len(state.hands[s]) + state.open_masks[s].bit_count() for s in (0, 1)]
    expected = [HAND_SIZE, HAND_SIZE]
    if phase is Phase.DISCARD:
        expected[state.turn] += 1
    if counts != expected:
        problems.append(f"seats hold {counts} cards, expected {expected}")
    if (state.face_up is None) != (phase is Phase.DISCARD):
        problems.append(f"face-up card {state.face_up} in phase {phase.value}")
    actor = state.turn
    owner = {
        Phase.CHOOSE: (1 - actor, (FaceUp.DISCARDED, FaceUp.PASSED)),
        Phase.TURNED_UP: (actor, (FaceUp.TURNED_UP,)),
        Phase.FORCE: (None, tuple(FaceUp)),
        Phase.FORCED: (None, tuple(FaceUp)),
    }.get(phase)
    if owner is not None:
        who, hows = owner
        if who is not None and state.face_up_from != who:
            problems.append(f"face-up card from seat {state.face_up_from} in {phase.value}")
        if state.face_up_how not in hows:
            problems.append(f"face-up card {state.face_up_how} in {phase.value}")
    if phase in (Phase.FORCE, Phase.FORCED):
        player = 1 - actor if phase is Phase.FORCE else actor
        if not forceable(state, player):
            problems.append(f"{state.face_up} cannot be forced on seat {player}")
    return problems


# --- JSON form of actions ------------------------------------------------------------------


def _meld_list(raw: Any) -> Melds:
    if not isinstance(raw, list) or not all(isinstance(m, (list, str)) for m in raw):
        raise BadAction("melds must be a list of melds, each a list of cards")
    try:
        return tuple(tuple(parse_cards(m)) for m in raw)
    except BadCard as error:
        raise BadAction(f"melds: {error.message}") from None


_ACTION_KEYS: dict[str, set[str]] = {
    "take": {"melds"},
    "refuse": set(),
    "pass": set(),
    "discard": {"card"},
    "force": set(),
    "decline_force": set(),
}


def action_from_json(data: Mapping[str, Any]) -> Action:
    """Parse ``{"seat": 0, "type": "take", "melds": [["4H", "5H", "6H"]]}`` and the like."""
    if not isinstance(data, Mapping):
        raise BadAction("an action is a JSON object")
    kind = data.get("type")
    seat = data.get("seat")
    if not isinstance(kind, str) or kind not in _ACTION_KEYS:
        raise BadAction(f"unknown action type {kind!r}; known: {sorted(_ACTION_KEYS)}")
    if isinstance(seat, bool) or not isinstance(seat, int):
        raise BadAction("an action needs the acting seat as a number")
    extra = set(data) - {"type", "seat"} - _ACTION_KEYS[kind]
    if extra:
        raise BadAction(f"unexpected fields for {kind}: {sorted(extra)}")
    if kind == "take":
        if "melds" not in data:
            raise BadAction("take needs melds: your whole arrangement after taking")
        return Take(seat, _meld_list(data["melds"]))
    if kind == "discard":
        card = data.get("card")
        if not isinstance(card, str):
            raise BadAction("discard needs a card")
        try:
            return Discard(seat, parse_cards([card])[0])
        except BadCard as error:
            raise BadAction(f"discard: {error.message}") from None
    simple: dict[str, type[Refuse | Pass | Force | DeclineForce]] = {
        "refuse": Refuse,
        "pass": Pass,
        "force": Force,
        "decline_force": DeclineForce,
    }
    return simple[kind](seat)


def action_to_json(action: Action) -> dict[str, Any]:
    match action:
        case Take():
            return {"seat": action.seat, "type": "take", "melds": _melds_json(action.melds)}
        case Refuse():
            return {"seat": action.seat, "type": "refuse"}
        case Pass():
            return {"seat": action.seat, "type": "pass"}
        case Discard():
            return {"seat": action.seat, "type": "discard", "card": str(action.card)}
        case Force():
            return {"seat": action.seat, "type": "force"}
        case DeclineForce():
            return {"seat": action.seat, "type": "decline_force"}
    raise BadAction(f"{action!r} is not a Conquian action")


def score_sheet(state: ConquianState) -> dict[str, Any]:
    """The match so far: deals with their results, points, and the result once over.
    The melds and hands each deal ended with are shown once the match is over."""
    return {
        "deals": [result.to_json(hands=state.over) for result in state.results],
        "totals": list(state.points),
        "wins_needed": state.options.wins_needed,
        "over": state.over,
        "winner": state.match_winner,
    }


def describe(state: ConquianState) -> str:
    """A short human-readable dump, for debugging and bug reports."""
    face = (
        f"{state.face_up} ({state.face_up_how.value} by {state.face_up_from})"
        if (state.face_up is not None and state.face_up_how is not None)
        else "none"
    )
    lines = [
        f"deal {state.deals} dealer {state.dealer} turn {state.turn} {state.phase.value} "
        f"points {state.points}"
    ]
    for seat in (0, 1):
        melds = " | ".join(format_cards(meld) for meld in state.melds[seat]) or "-"
        lines.append(f"  seat {seat}: hand {format_cards(state.hands[seat])}; melds {melds}")
    lines.append(f"  face up {face}; stock {len(state.stock)}; dead {len(state.dead)}")
    return "\n".join(lines)
