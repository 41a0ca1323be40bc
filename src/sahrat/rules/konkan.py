"""Konkan, the Gulf "Hand" game: the whole of RULES.md Part 1, phase by phase.

A game is made from its options, a seed and (for tests) explicit deck
orders; every change is an action passed to :func:`apply`, which returns a
*new* state and the events it caused, or raises a :class:`RuleError` and
leaves the state it was given untouched.

Decisions where RULES.md leaves room (the house text says every difference
between gatherings is a table option; these are the defaults players of the
Hand family expect):

* **The opening is one action.** The melds of a first lay-down are sent
  together in one ``lay_down`` (or ``take_discard``) and their total is
  checked against the threshold there; lay-offs in that same action count
  for nothing but are allowed because the player opens in it.
* **Lay-offs name melds already on the table.** New melds in the same
  action are simply laid larger.
* **A lay-down must leave a card to discard.** Going out always ends with a
  discard, so an action that would leave the hand empty, or holding only
  jokers, is refused (``must_keep_discard``).
* **A hand of jokers only.** If a player ever holds nothing but jokers
  after drawing (they kept one joker and drew the other), they cannot
  discard; they end the turn with ``end_turn`` instead.
* **Joker swaps on another player's meld** put cards on that meld, so they
  count like lay-offs on others' melds for "Hand" (allowed only with the
  "Hand Rummy" option).
* **Empty stock.** A draw from an empty stock turns the discard pile (all
  but its top card) into a new stock; when the table's reshuffles are used
  up, or there is nothing to reshuffle, the round ends void (§1.8).
* **Every round and every match ends** (``docs/rules.md`` §1.3, §1.9). A
  round has at most ``max_round_turns`` turns (a redeal counts as one): the
  turn that reaches the limit ends the round void, scored like a stock
  exhaustion. This also ends the one round that never touches the stock,
  where every player is committed and takes back the discard. A match has at
  most ``max_extra_rounds`` extra rounds; if a paid place is still tied after
  the last of them, the match ends and the tied players share that place
  (``places`` gives them the same number, and a shared first place has no
  ``match_winner``). Their coins are split by :func:`sahrat.store.ledger.payout_shares`.
* **A swapped joker that must be laid** (option): the swap action carries
  the melds or lay-offs that use the joker, and is refused whole without
  them, so nobody is left holding a joker they may neither keep nor discard.
* **The turn timer** draws, then discards the card drawn; when that is a
  joker (or it was laid, or the opener had no draw) it discards the
  highest-valued card that is not a joker.
* **Redeal** (option): claimed by the holder at the start of their first
  turn of the round; the same dealer deals again and the round is not
  counted.
* The first dealer is drawn from the seed; the dealer then moves one seat to
  the right (the next seat) every round, redeals excepted.
* **Provably fair shuffles** (``docs/fairness.md``): each round's deals and
  reshuffles come from the round's own seed; its commitment is in the
  ``deal`` event and in every view, and the round seed and salt are revealed
  in the ``round_end`` event (and in the round's entry of the score sheet).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from .cards import Card, Rank, format_cards, konkan_deck, parse_card, parse_cards
from .errors import (
    BadAction,
    BadRecord,
    BelowThreshold,
    CardNotInHand,
    CommitRefused,
    CommittedOnly,
    DiscardNotUsed,
    DuplicateCard,
    GameOver,
    JokerDiscard,
    MustKeepDiscard,
    NoSuchMeld,
    NotOpened,
    NotYourTurn,
    RedealRefused,
    RuleError,
    SwappedJokerNotLaid,
    WrongPhase,
)
from .events import Event
from .melds import Meld, MeldKind, build_meld, lay_off, rank_value, swap_joker
from .options import HandValues, KonkanOptions
from .rng import RoundSecret, rng_for, round_secret

DECK_SIZE = 106
HAND_SIZE = 14
NEVER_OPENED = 100
OUT_SCORE = -30
HAND_SCORE = -60


class Phase(Enum):
    DRAW = "draw"  # start of a turn: commit, claim a redeal, draw or take the discard
    PLAY = "play"  # after drawing: lay down, lay off, swap, then discard
    OVER = "over"  # the match has ended


class Finish(Enum):
    """How a round ended."""

    OUT = "out"
    HAND = "hand"
    KONKAN = "konkan"
    COMMITTED_KONKAN = "committed_konkan"
    VOID = "void"


# --- actions -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LayOff:
    """Cards laid off on meld ``meld`` (its id on the table)."""

    meld: int
    cards: tuple[Card, ...]
    joker_low: bool = False


@dataclass(frozen=True, slots=True)
class Draw:
    seat: int


@dataclass(frozen=True, slots=True)
class TakeDiscard:
    """Take the top of the discard pile together with the lay-down that uses it (§1.3)."""

    seat: int
    melds: tuple[tuple[Card, ...], ...] = ()
    lay_offs: tuple[LayOff, ...] = ()


@dataclass(frozen=True, slots=True)
class LayDown:
    """New melds and/or lay-offs, in one action. A first lay-down must reach the threshold."""

    seat: int
    melds: tuple[tuple[Card, ...], ...] = ()
    lay_offs: tuple[LayOff, ...] = ()


@dataclass(frozen=True, slots=True)
class SwapJoker:
    """Take the joker from meld ``meld`` by putting ``cards`` in its place, then
    optionally lay down ``melds`` and ``lay_offs`` (where the joker may go)."""

    seat: int
    meld: int
    cards: tuple[Card, ...]
    melds: tuple[tuple[Card, ...], ...] = ()
    lay_offs: tuple[LayOff, ...] = ()


@dataclass(frozen=True, slots=True)
class Discard:
    seat: int
    card: Card


@dataclass(frozen=True, slots=True)
class Commit:
    """Commit to Konkan in the last round (§1.7)."""

    seat: int


@dataclass(frozen=True, slots=True)
class ClaimRedeal:
    seat: int


@dataclass(frozen=True, slots=True)
class EndTurn:
    """End a turn without a discard; only for a hand of jokers alone."""

    seat: int


Action = Draw | TakeDiscard | LayDown | SwapJoker | Discard | Commit | ClaimRedeal | EndTurn


# --- state ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TableMeld:
    id: int
    owner: int
    meld: Meld


@dataclass(frozen=True, slots=True)
class RoundResult:
    round: int
    finish: Finish
    winner: int | None
    scores: tuple[int, ...]
    hands: tuple[tuple[Card, ...], ...]
    reshuffles: int
    secret: RoundSecret | None = None  # revealed now; None when the deck was stacked

    def to_json(self) -> dict[str, Any]:
        secret = self.secret
        return {
            "round": self.round,
            "finish": self.finish.value,
            "winner": self.winner,
            "scores": list(self.scores),
            "hands": [[str(card) for card in hand] for hand in self.hands],
            "reshuffles": self.reshuffles,
            "round_commitment": secret.commitment if secret else None,
            "round_seed": secret.seed if secret else None,
            "round_salt": secret.salt if secret else None,
        }


@dataclass(slots=True)
class KonkanState:
    """Everything about a Konkan match. Treat as read-only: :func:`apply` copies it."""

    options: KonkanOptions
    seed: str
    decks: tuple[tuple[Card, ...], ...]
    round: int
    deals: int  # deals made so far (redeals included); indexes ``decks``
    round_deal: int  # the current deal of the round: 0, then 1, 2… after redeals
    secret: RoundSecret  # the round's seed, salt and commitment (docs/fairness.md)
    stacked: bool  # the current deal came from ``decks``, not from the round seed
    dealer: int
    turn: int
    phase: Phase
    hands: list[list[Card]]
    opened: list[bool]
    committed: list[bool]
    acted: list[bool]
    melds: list[TableMeld]
    next_meld_id: int
    stock: list[Card]  # the top is the last element
    discard: list[Card]  # the top is the last element
    reshuffles: int
    last_opening: int
    round_turns: int = 0  # turns finished this round, redeals included (max_round_turns)
    # the current turn
    drawn: Card | None = None
    opened_at_turn_start: bool = False
    touched_others: bool = False
    turn_melds: list[int] = field(default_factory=list)
    turn_swapped: list[Card] = field(default_factory=list)
    # the match
    results: list[RoundResult] = field(default_factory=list)
    match_winner: int | None = None
    places: tuple[int, ...] = ()

    @property
    def players(self) -> int:
        return self.options.players

    @property
    def over(self) -> bool:
        return self.phase is Phase.OVER

    @property
    def is_last_round(self) -> bool:
        """Round 5 (the table's last) and every extra round (§1.9)."""
        return self.round >= self.options.rounds

    @property
    def totals(self) -> list[int]:
        totals = [0] * self.players
        for result in self.results:
            for seat, score in enumerate(result.scores):
                totals[seat] += score
        return totals

    def meld_by_id(self, meld_id: int) -> TableMeld:
        for table_meld in self.melds:
            if table_meld.id == meld_id:
                return table_meld
        raise NoSuchMeld(f"there is no meld {meld_id} on the table")

    def clone(self) -> KonkanState:
        return KonkanState(
            options=self.options,
            seed=self.seed,
            decks=self.decks,
            round=self.round,
            deals=self.deals,
            round_deal=self.round_deal,
            secret=self.secret,
            stacked=self.stacked,
            dealer=self.dealer,
            turn=self.turn,
            phase=self.phase,
            hands=[list(hand) for hand in self.hands],
            opened=list(self.opened),
            committed=list(self.committed),
            acted=list(self.acted),
            melds=list(self.melds),
            next_meld_id=self.next_meld_id,
            stock=list(self.stock),
            discard=list(self.discard),
            reshuffles=self.reshuffles,
            last_opening=self.last_opening,
            round_turns=self.round_turns,
            drawn=self.drawn,
            opened_at_turn_start=self.opened_at_turn_start,
            touched_others=self.touched_others,
            turn_melds=list(self.turn_melds),
            turn_swapped=list(self.turn_swapped),
            results=list(self.results),
            match_winner=self.match_winner,
            places=self.places,
        )


# --- values --------------------------------------------------------------------


def hand_card_value(card: Card, values: HandValues) -> int:
    """What a card left in hand costs at the end of a round (§1.8, §1.11)."""
    if card.rank is None:
        return 15 if values is HandValues.JOKER_15_ACE_11 else 10
    if card.rank is Rank.ACE:
        return 11 if values is HandValues.JOKER_15_ACE_11 else 10
    return rank_value(card.rank)


def hand_value(cards: Iterable[Card], values: HandValues) -> int:
    return sum(hand_card_value(card, values) for card in cards)


def opening_target(state: KonkanState) -> int:
    """The total a first lay-down must reach now (§1.5): the table's threshold, and with
    the escalating opening more than the last opening laid this round (§1.11)."""
    options = state.options
    if options.escalating_opening and state.last_opening:
        return max(options.threshold, state.last_opening + 1)
    return options.threshold


def is_konkan(melds: Sequence[Meld]) -> bool:
    """Exactly two melds: a 10-card run with a 4-card set, or an 11-card run with a 3-card set."""
    if len(melds) != 2:
        return False
    shapes = sorted((meld.kind.value, len(meld.cards)) for meld in melds)
    return shapes in ([("run", 10), ("set", 4)], [("run", 11), ("set", 3)])


# --- starting a match ------------------------------------------------------------


def new_game(
    options: KonkanOptions | None = None,
    seed: str = "0",
    decks: Sequence[Sequence[Card]] = (),
    first_dealer: int | None = None,
) -> KonkanState:
    """A match ready for its first turn. ``decks`` stacks the first deals (top card first)."""
    options = options or KonkanOptions()
    checked = tuple(_check_deck(deck, index) for index, deck in enumerate(decks))
    if first_dealer is None:
        first_dealer = rng_for(seed, "first_dealer").randrange(options.players)
    elif not 0 <= first_dealer < options.players:
        raise BadRecord(f"first dealer {first_dealer} is not a seat of {options.players}")
    n = options.players
    state = KonkanState(
        options=options,
        seed=seed,
        decks=checked,
        round=1,
        deals=0,
        round_deal=0,
        secret=round_secret(seed, 1),
        stacked=False,
        dealer=first_dealer,
        turn=0,
        phase=Phase.PLAY,
        hands=[[] for _ in range(n)],
        opened=[False] * n,
        committed=[False] * n,
        acted=[False] * n,
        melds=[],
        next_meld_id=0,
        stock=[],
        discard=[],
        reshuffles=0,
        last_opening=0,
    )
    _deal(state, [])
    return state


def _check_deck(deck: Sequence[Card], index: int) -> tuple[Card, ...]:
    if Counter(deck) != Counter(konkan_deck()):
        raise BadRecord(f"deck {index} is not the 106 cards of Konkan, each once")
    return tuple(deck)


def stacked_deck(
    hands: Mapping[int, Sequence[Card]],
    stock: Sequence[Card] = (),
    *,
    players: int,
    dealer: int,
) -> list[Card]:
    """A full deck order that deals ``hands`` (by seat) and puts ``stock`` on top of the stock.

    Seats not named get the lowest remaining cards in canonical order; the
    rest of the stock follows ``stock``. For readable scenarios.
    """
    remaining = Counter(konkan_deck())
    for card in [*[c for h in hands.values() for c in h], *stock]:
        if remaining[card] == 0:
            raise BadRecord(f"{card} is stacked twice")
        remaining[card] -= 1
    pool = [card for card in konkan_deck() if remaining[card]]
    opener = (dealer + 1) % players
    order: list[Card] = []
    for offset in range(players):
        seat = (opener + offset) % players
        size = HAND_SIZE + (1 if offset == 0 else 0)
        hand = list(hands.get(seat, ()))
        if len(hand) > size:
            raise BadRecord(f"seat {seat} is dealt {size} cards, not {len(hand)}")
        while len(hand) < size:
            hand.append(pool.pop(0))
        order += hand
    return order + list(stock) + pool


def _deal(state: KonkanState, events: list[Event], *, redeal: bool = False) -> None:
    """Deal in place: 15 to the opener (dealer's right), 14 to the others. A new round
    gets its own seed; a redeal shuffles again from the same round seed."""
    n = state.players
    if redeal:
        state.round_deal += 1
    else:
        state.round_deal = 0
        state.round_turns = 0
        state.secret = round_secret(state.seed, state.round)
    state.stacked = state.deals < len(state.decks)
    if state.stacked:
        order = list(state.decks[state.deals])
    else:
        order = konkan_deck()
        rng_for(state.secret.seed, "deal", state.round_deal).shuffle(order)
    state.deals += 1
    opener = (state.dealer + 1) % n
    hands: list[list[Card]] = [[] for _ in range(n)]
    position = 0
    for offset in range(n):
        seat = (opener + offset) % n
        size = HAND_SIZE + (1 if offset == 0 else 0)
        hands[seat] = order[position : position + size]
        position += size
    state.hands = hands
    state.stock = list(reversed(order[position:]))
    state.discard = []
    state.melds = []
    state.next_meld_id = 0
    state.opened = [False] * n
    state.committed = [False] * n
    state.acted = [False] * n
    state.reshuffles = 0
    state.last_opening = 0
    state.turn = opener
    state.phase = Phase.PLAY  # the opener starts without drawing
    _start_turn(state)
    events.append(
        Event(
            "deal",
            None,
            {
                "round": state.round,
                "dealer": state.dealer,
                "opener": opener,
                "hand_counts": [len(hand) for hand in hands],
                "stock_count": len(state.stock),
                "round_commitment": _commitment(state),
            },
        )
    )
    for seat, hand in enumerate(hands):
        events.append(Event("dealt", seat, {"count": len(hand)}, {"cards": _strs(hand)}))


def _commitment(state: KonkanState) -> str | None:
    """The current round's commitment, or ``None`` when its deck was stacked (a test)."""
    return None if state.stacked else state.secret.commitment


def _start_turn(state: KonkanState) -> None:
    state.drawn = None
    state.opened_at_turn_start = state.opened[state.turn]
    state.touched_others = False
    state.turn_melds = []
    state.turn_swapped = []


def _strs(cards: Iterable[Card]) -> list[str]:
    return [str(card) for card in cards]


# --- applying actions -------------------------------------------------------------


def apply(state: KonkanState, action: Action) -> tuple[KonkanState, list[Event]]:
    """Apply one action; returns the new state and its events, or raises a RuleError."""
    if state.phase is Phase.OVER:
        raise GameOver("the match is over")
    if not isinstance(action, _HANDLERS_TYPES):
        raise BadAction(f"{action!r} is not a Konkan action")
    if action.seat != state.turn:
        raise NotYourTurn(f"it is seat {state.turn}'s turn, not seat {action.seat}'s")
    new = state.clone()
    events: list[Event] = []
    _HANDLERS[type(action)](new, action, events)
    return new, events


def _require_phase(state: KonkanState, phase: Phase, what: str) -> None:
    if state.phase is not phase:
        when = "before drawing" if phase is Phase.DRAW else "after drawing"
        raise WrongPhase(f"{what} is only allowed {when}")


def _at_turn_start(state: KonkanState) -> bool:
    """Nothing done yet this turn: before the draw, or the opener's first turn untouched."""
    if state.phase is Phase.DRAW:
        return True
    return (
        state.phase is Phase.PLAY
        and state.drawn is None
        and not state.acted[state.turn]
        and not state.discard
        and not state.turn_melds
        and not state.turn_swapped
    )


def _commit(state: KonkanState, action: Commit, events: list[Event]) -> None:
    seat = action.seat
    if not state.is_last_round:
        raise CommitRefused("a Konkan can be committed to only in the last round")
    if state.committed[seat]:
        raise CommitRefused("you are already committed to Konkan")
    if state.opened[seat]:
        raise CommitRefused("a player who has opened cannot commit to Konkan")
    if not _at_turn_start(state):
        raise CommitRefused("commit at the start of your turn, before drawing")
    state.committed[seat] = True
    events.append(Event("commit", seat))


def _redeal_pattern(hand: Sequence[Card]) -> bool:
    """3 identical pairs and a joker, or 4 identical pairs (both copies of one card)."""
    faces = Counter(card.face for card in hand if not card.is_joker)
    pairs = sum(1 for count in faces.values() if count >= 2)
    jokers = sum(1 for card in hand if card.is_joker)
    return pairs >= 4 or (pairs >= 3 and jokers >= 1)


def _claim_redeal(state: KonkanState, action: ClaimRedeal, events: list[Event]) -> None:
    seat = action.seat
    if not state.options.redeal:
        raise RedealRefused("this table does not play the redeal option")
    if state.acted[seat] or not _at_turn_start(state) or state.committed[seat]:
        raise RedealRefused("a redeal is claimed before your first action of the round")
    if not _redeal_pattern(state.hands[seat]):
        raise RedealRefused("a redeal needs 3 identical pairs and a joker, or 4 identical pairs")
    if state.round_turns + 1 >= state.options.max_round_turns:
        raise RedealRefused("this round has reached its turn limit: no more redeals")
    state.round_turns += 1  # a redeal counts as a turn, so redeals cannot go on forever
    events.append(Event("redeal", seat, {"hand": _strs(state.hands[seat])}))
    _deal(state, events, redeal=True)


def _draw(state: KonkanState, action: Draw, events: list[Event]) -> None:
    _require_phase(state, Phase.DRAW, "drawing")
    if not state.stock:
        if state.reshuffles >= state.options.max_reshuffles or len(state.discard) < 2:
            events.append(Event("stock_exhausted", action.seat, {"reshuffles": state.reshuffles}))
            _end_round(state, None, Finish.VOID, events)
            return
        state.reshuffles += 1
        top = state.discard[-1]
        pile = state.discard[:-1]
        rng_for(state.secret.seed, "reshuffle", state.round_deal, state.reshuffles).shuffle(pile)
        state.stock = pile
        state.discard = [top]
        events.append(
            Event(
                "reshuffle",
                None,
                {"reshuffles": state.reshuffles, "stock_count": len(state.stock)},
            )
        )
    card = state.stock.pop()
    state.hands[action.seat].append(card)
    state.drawn = card
    state.phase = Phase.PLAY
    state.acted[action.seat] = True
    events.append(
        Event(
            "draw",
            action.seat,
            {"source": "stock", "stock_count": len(state.stock)},
            {"card": str(card)},
        )
    )


def _take_discard(state: KonkanState, action: TakeDiscard, events: list[Event]) -> None:
    _require_phase(state, Phase.DRAW, "taking the discard")
    seat = action.seat
    if not state.discard:
        raise WrongPhase("the discard pile is empty")
    card = state.discard[-1]
    committed_alone = state.committed[seat] and not action.melds and not action.lay_offs
    if not committed_alone and not action.melds and not action.lay_offs:
        raise DiscardNotUsed(
            f"taking {card} from the discard pile needs the lay-down that uses it, "
            "in the same action"
        )
    state.discard.pop()
    state.hands[seat].append(card)
    state.drawn = card
    state.phase = Phase.PLAY
    state.acted[seat] = True
    events.append(Event("take_discard", seat, {"card": str(card)}))
    if committed_alone:
        return
    _lay(state, seat, action.melds, action.lay_offs, events, must_use=card)


def _lay_down(state: KonkanState, action: LayDown, events: list[Event]) -> None:
    _require_phase(state, Phase.PLAY, "laying down")
    if not action.melds and not action.lay_offs:
        raise BadAction("a lay-down needs at least one meld or lay-off")
    _lay(state, action.seat, action.melds, action.lay_offs, events)
    state.acted[action.seat] = True


def _take_from_hand(hand: list[Card], cards: Iterable[Card]) -> None:
    for card in cards:
        if card not in hand:
            raise CardNotInHand(f"{card} is not in your hand")
        hand.remove(card)


def _check_distinct(groups: Iterable[Iterable[Card]]) -> None:
    seen: set[Card] = set()
    for group in groups:
        for card in group:
            if card in seen:
                raise DuplicateCard(f"{card} is named twice in one action")
            seen.add(card)


def _lay(
    state: KonkanState,
    seat: int,
    meld_cards: Sequence[Sequence[Card]],
    lay_offs: Sequence[LayOff],
    events: list[Event],
    *,
    must_use: Card | None = None,
) -> None:
    """New melds then lay-offs by ``seat``, checked as one whole (mutates ``state``)."""
    options = state.options
    hand = state.hands[seat]
    _check_distinct([*meld_cards, *(lay.cards for lay in lay_offs)])
    _take_from_hand(hand, [c for cards in meld_cards for c in cards])
    _take_from_hand(hand, [c for lay in lay_offs for c in lay.cards])
    melds = [build_meld(cards) for cards in meld_cards]

    if state.committed[seat] and (lay_offs or not is_konkan(melds) or len(hand) != 1):
        raise CommittedOnly(
            "a player committed to Konkan lays down only the complete Konkan: "
            "a 10-card run with a 4-card set, or an 11-card run with a 3-card set, "
            "keeping one card to discard"
        )

    total = sum(meld.value(options.ace_value) for meld in melds)
    if not state.opened[seat]:
        if not melds:
            raise NotOpened("lay-offs need you to have opened")
        required = opening_target(state)
        whole_hand = (
            not lay_offs
            and not state.opened_at_turn_start
            and len(hand) == 1
            and not hand[0].is_joker
        )
        exempt = options.hand_exempt_from_threshold and whole_hand
        if total < required and not exempt:
            raise BelowThreshold(
                f"a first lay-down must total at least {required}; these melds total {total}"
            )
        state.opened[seat] = True
        state.last_opening = total
        events.append(Event("open", seat, {"total": total}))

    for meld in melds:
        table_meld = TableMeld(state.next_meld_id, seat, meld)
        state.next_meld_id += 1
        state.melds.append(table_meld)
        state.turn_melds.append(table_meld.id)
        events.append(Event("meld", seat, {"id": table_meld.id, **meld.to_json()}))

    for lay in lay_offs:
        target = state.meld_by_id(lay.meld)
        updated = lay_off(target.meld, lay.cards, joker_low=lay.joker_low)
        _replace_meld(state, TableMeld(target.id, target.owner, updated))
        if target.owner != seat:
            state.touched_others = True
        events.append(
            Event(
                "lay_off", seat, {"id": target.id, "added": _strs(lay.cards), **updated.to_json()}
            )
        )

    if must_use is not None:
        in_new = any(must_use in cards for cards in meld_cards)
        in_lay_off = any(must_use in lay.cards for lay in lay_offs)
        used = in_new or (in_lay_off and state.opened_at_turn_start)
        if not used:
            where = "a new meld" if not state.opened_at_turn_start else "a meld or a lay-off"
            raise DiscardNotUsed(
                f"the card taken from the discard pile, {must_use}, must go into {where}"
            )
    _check_can_discard(hand)


def _check_can_discard(hand: Sequence[Card]) -> None:
    if not any(not card.is_joker for card in hand):
        raise MustKeepDiscard(
            "keep at least one card that is not a joker: going out ends with a discard"
        )


def _replace_meld(state: KonkanState, table_meld: TableMeld) -> None:
    state.melds = [table_meld if m.id == table_meld.id else m for m in state.melds]


def _swap_joker(state: KonkanState, action: SwapJoker, events: list[Event]) -> None:
    _require_phase(state, Phase.PLAY, "swapping a joker")
    seat = action.seat
    if state.committed[seat]:
        raise CommittedOnly("a player committed to Konkan may not swap a joker")
    if not state.opened[seat]:
        raise NotOpened("only a player who has opened may swap a joker")
    _check_distinct([action.cards])
    target = state.meld_by_id(action.meld)
    hand = state.hands[seat]
    _take_from_hand(hand, action.cards)
    updated, joker = swap_joker(target.meld, action.cards)
    _replace_meld(state, TableMeld(target.id, target.owner, updated))
    hand.append(joker)
    state.turn_swapped.append(joker)
    if target.owner != seat:
        state.touched_others = True
    state.acted[seat] = True
    events.append(
        Event(
            "swap_joker",
            seat,
            {
                "id": target.id,
                "given": _strs(action.cards),
                "joker": str(joker),
                **updated.to_json(),
            },
        )
    )
    if action.melds or action.lay_offs:
        _lay(state, seat, action.melds, action.lay_offs, events)
    if state.options.swapped_joker_must_be_laid and joker in hand:
        raise SwappedJokerNotLaid(
            f"at this table a swapped joker is laid down in the same action; {joker} was not"
        )
    _check_can_discard(hand)


def _discard(state: KonkanState, action: Discard, events: list[Event]) -> None:
    _require_phase(state, Phase.PLAY, "discarding")
    seat = action.seat
    hand = state.hands[seat]
    card = action.card
    if card not in hand:
        raise CardNotInHand(f"{card} is not in your hand")
    if card.is_joker:
        raise JokerDiscard("a joker is never discarded")
    hand.remove(card)
    state.discard.append(card)
    state.acted[seat] = True
    events.append(Event("discard", seat, {"card": str(card)}))
    if not hand:
        _end_round(state, seat, _finish_kind(state, seat), events)
    else:
        _turn_over(state, events)


def _end_turn(state: KonkanState, action: EndTurn, events: list[Event]) -> None:
    _require_phase(state, Phase.PLAY, "ending the turn")
    hand = state.hands[action.seat]
    if any(not card.is_joker for card in hand):
        raise BadAction("a turn ends with a discard; end_turn is only for a hand of jokers alone")
    events.append(Event("end_turn", action.seat))
    _turn_over(state, events)


def _turn_over(state: KonkanState, events: list[Event]) -> None:
    """A turn ended without going out: the next seat plays, unless the round has had its
    ``max_round_turns`` turns; then it ends void, scored like a stock exhaustion (§1.8)."""
    state.round_turns += 1
    if state.round_turns >= state.options.max_round_turns:
        events.append(Event("turn_limit", None, {"turns": state.round_turns}))
        _end_round(state, None, Finish.VOID, events)
        return
    _next_turn(state)


def _next_turn(state: KonkanState) -> None:
    state.turn = (state.turn + 1) % state.players
    state.phase = Phase.DRAW
    _start_turn(state)


def _finish_kind(state: KonkanState, seat: int) -> Finish:
    """How ``seat`` went out: a Hand (all in one turn), a Konkan, or plain."""
    if state.opened_at_turn_start:
        return Finish.OUT
    if state.touched_others and not state.options.hand_rummy:
        return Finish.OUT
    turn_melds = [m.meld for m in state.melds if m.id in state.turn_melds]
    if not state.touched_others and is_konkan(turn_melds):
        if state.committed[seat] and state.is_last_round:
            return Finish.COMMITTED_KONKAN
        return Finish.KONKAN
    return Finish.HAND


def round_scores(state: KonkanState, winner: int | None, finish: Finish) -> tuple[int, ...]:
    """RULES.md §1.8, row by row."""
    values = state.options.hand_values
    doubled = finish in (Finish.HAND, Finish.KONKAN, Finish.COMMITTED_KONKAN)
    scores = []
    for seat in range(state.players):
        if seat == winner:
            scores.append(HAND_SCORE if doubled else OUT_SCORE)
            continue
        never_opened = not state.opened[seat] or state.committed[seat]
        score = NEVER_OPENED if never_opened else hand_value(state.hands[seat], values)
        scores.append(score * 2 if doubled else score)
    return tuple(scores)


def _end_round(state: KonkanState, winner: int | None, finish: Finish, events: list[Event]) -> None:
    scores = round_scores(state, winner, finish)
    result = RoundResult(
        round=state.round,
        finish=finish,
        winner=winner,
        scores=scores,
        hands=tuple(tuple(hand) for hand in state.hands),
        reshuffles=state.reshuffles,
        secret=None if state.stacked else state.secret,
    )
    state.results.append(result)
    events.append(Event("round_end", winner, result.to_json()))
    totals = state.totals
    if finish is Finish.COMMITTED_KONKAN:
        assert winner is not None
        _end_match(state, winner, events)
        return
    if state.is_last_round and (_places_clear(state, totals) or _no_more_extra_rounds(state)):
        _end_match(state, None, events)
        return
    state.round += 1
    state.dealer = (state.dealer + 1) % state.players
    _deal(state, events)


def _places_clear(state: KonkanState, totals: Sequence[int]) -> bool:
    """First place is unique and, on a 3–4 player coin table, second place too (§1.9)."""
    ordered = sorted(totals)
    if ordered.count(ordered[0]) > 1:
        return False
    if state.options.coin_table and state.players >= 3:
        return ordered.count(ordered[1]) == 1
    return True


def _no_more_extra_rounds(state: KonkanState) -> bool:
    """The table's extra rounds are played: tied places now stay tied and share (§1.9)."""
    return state.round >= state.options.rounds + state.options.max_extra_rounds


def _end_match(state: KonkanState, konkan_winner: int | None, events: list[Event]) -> None:
    """Rank the seats (§1.9): equal totals share a place, numbered like ``1 1 3`` or
    ``1 2 2``; a completed committed Konkan is first alone. A shared first place has no
    single winner, so ``match_winner`` is then ``None``."""
    totals = state.totals
    order = sorted(range(state.players), key=lambda seat: (seat != konkan_winner, totals[seat]))
    places = [0] * state.players
    for index, seat in enumerate(order):
        previous = order[index - 1] if index else None
        tied = (
            previous is not None
            and totals[previous] == totals[seat]
            and previous != konkan_winner
            and seat != konkan_winner
        )
        places[seat] = places[previous] if tied and previous is not None else index + 1
    state.places = tuple(places)
    state.match_winner = order[0] if places.count(1) == 1 else None
    state.phase = Phase.OVER
    events.append(
        Event(
            "match_end",
            None,
            {
                "winner": state.match_winner,
                "places": list(places),
                "totals": totals,
                "seed": state.seed,
            },
        )
    )


_HANDLERS: dict[type[Any], Any] = {
    Draw: _draw,
    TakeDiscard: _take_discard,
    LayDown: _lay_down,
    SwapJoker: _swap_joker,
    Discard: _discard,
    Commit: _commit,
    ClaimRedeal: _claim_redeal,
    EndTurn: _end_turn,
}
_HANDLERS_TYPES = tuple(_HANDLERS)


# --- what a seat may do and see -------------------------------------------------------


def to_act(state: KonkanState) -> int | None:
    """The one seat whose move it is, or ``None`` when the match is over."""
    return None if state.over else state.turn


def simple_actions(state: KonkanState) -> list[Action]:
    """The legal actions that need no meld choice: commit, redeal, draw, discard, end turn.

    Lay-downs, lay-offs, swaps and taking the discard are checked when proposed
    (see :func:`check_action`); enumerating them all would be exponential.
    """
    if state.over:
        return []
    seat = state.turn
    actions: list[Action] = []
    if _at_turn_start(state):
        if state.is_last_round and not state.opened[seat] and not state.committed[seat]:
            actions.append(Commit(seat))
        if (
            state.options.redeal
            and not state.acted[seat]
            and not state.committed[seat]
            and _redeal_pattern(state.hands[seat])
        ):
            actions.append(ClaimRedeal(seat))
    if state.phase is Phase.DRAW:
        actions.append(Draw(seat))
        if state.committed[seat] and state.discard:
            actions.append(TakeDiscard(seat))
    else:
        hand = state.hands[seat]
        seen: set[Card] = set()
        for card in hand:
            if not card.is_joker and card not in seen:
                seen.add(card)
                actions.append(Discard(seat, card))
        if not seen:
            actions.append(EndTurn(seat))
    return actions


def check_action(state: KonkanState, action: Action) -> RuleError | None:
    """``None`` if ``action`` is legal now, else the error it would raise (state untouched)."""
    try:
        apply(state, action)
    except RuleError as error:
        return error
    return None


def timeout_action(state: KonkanState) -> Action:
    """The turn timer's move (§1.10): draw, then discard the card drawn, or when that is
    a joker (or already laid) the highest-valued card that is not a joker."""
    seat = state.turn
    if state.phase is Phase.DRAW:
        return Draw(seat)
    hand = state.hands[seat]
    drawn = state.drawn
    if drawn is not None and drawn in hand and not drawn.is_joker:
        return Discard(seat, drawn)
    candidates = [card for card in hand if not card.is_joker]
    if not candidates:
        return EndTurn(seat)
    values = state.options.hand_values
    best = max(candidates, key=lambda card: (hand_card_value(card, values), card.sort_key))
    return Discard(seat, best)


def view(state: KonkanState, seat: int | None, *, history: bool = True) -> dict[str, Any]:
    """What ``seat`` may know (``None``: a spectator). No other hand, no stock order.
    ``history=False`` leaves out the options and the finished rounds' results (``scores``),
    which grow with the match: a replay step costs the same in round 1 and round 40."""
    return _seat_view(_public_view(state, history), state, seat)


def views(
    state: KonkanState, seats: Iterable[int | None], *, history: bool = True
) -> dict[int | None, dict[str, Any]]:
    """``view`` for each of ``seats`` at once: the part everyone sees is built once and
    shared by the views (treat them as read-only), each seat adds its own hand."""
    public = _public_view(state, history)
    return {seat: _seat_view(public, state, seat) for seat in seats}


def _public_view(state: KonkanState, history: bool) -> dict[str, Any]:
    data: dict[str, Any] = {
        "game": "konkan",
        "viewer": None,
        "round": state.round,
        "last_round": state.is_last_round,
        "dealer": state.dealer,
        "turn": None if state.over else state.turn,
        "phase": state.phase.value,
        "hand_counts": [len(hand) for hand in state.hands],
        "opened": list(state.opened),
        "committed": list(state.committed),
        "melds": [{"id": m.id, "owner": m.owner, **m.meld.to_json()} for m in state.melds],
        "discard_top": str(state.discard[-1]) if state.discard else None,
        "discard_count": len(state.discard),
        "stock_count": len(state.stock),
        "reshuffles": state.reshuffles,
        "round_commitment": _commitment(state),
        "last_opening": state.last_opening,
        "opening_target": opening_target(state),
        "totals": state.totals,
        "match_over": state.over,
        "winner": state.match_winner,
        "places": list(state.places),
    }
    if history:
        data["options"] = state.options.to_json()
        data["scores"] = [result.to_json() for result in state.results]
    return data


def _seat_view(public: dict[str, Any], state: KonkanState, seat: int | None) -> dict[str, Any]:
    data = dict(public)
    data["viewer"] = seat
    if seat is not None:
        if not 0 <= seat < state.players:
            raise BadAction(f"seat {seat} is not a seat at this table")
        data["hand"] = _strs(state.hands[seat])
        if seat == state.turn and not state.over:
            data["drawn"] = str(state.drawn) if state.drawn else None
            data["simple_actions"] = [action_to_json(a) for a in simple_actions(state)]
    return data


# --- invariants ------------------------------------------------------------------------


def check_invariants(state: KonkanState) -> list[str]:
    """Problems with ``state`` (empty when sound): the checks run after every action."""
    problems: list[str] = []
    cards = [c for hand in state.hands for c in hand]
    cards += state.stock + state.discard
    cards += [c for m in state.melds for c in m.meld.cards]
    if len(cards) != DECK_SIZE or Counter(cards) != Counter(konkan_deck()):
        problems.append(f"cards not conserved: {len(cards)} cards, duplicates or strays")
    for table_meld in state.melds:
        try:
            rebuilt = build_meld(list(table_meld.meld.cards))
        except RuleError as error:
            problems.append(f"meld {table_meld.id} invalid: {error}")
            continue
        if rebuilt.kind is not table_meld.meld.kind:
            problems.append(f"meld {table_meld.id} changed kind")
        if table_meld.meld.kind is MeldKind.RUN and rebuilt.cards != table_meld.meld.cards:
            problems.append(f"meld {table_meld.id} is not in run order")
    if not state.over and not 0 <= state.turn < state.players:
        problems.append(f"turn {state.turn} is not a seat")
    if state.reshuffles > state.options.max_reshuffles:
        problems.append("more reshuffles than the table allows")
    if state.round_turns >= state.options.max_round_turns and not state.over:
        problems.append(f"round {state.round} is past its turn limit")
    if state.round > state.options.rounds + state.options.max_extra_rounds:
        problems.append(f"round {state.round} is past the last extra round")
    for result in state.results:
        if result.finish is not Finish.VOID and result.winner is not None:
            expected = HAND_SCORE if result.finish is not Finish.OUT else OUT_SCORE
            if result.scores[result.winner] != expected:
                problems.append(f"round {result.round}: winner scored {result.scores}")
    return problems


# --- JSON form of actions ------------------------------------------------------------------


def _meld_list(raw: Any, name: str) -> tuple[tuple[Card, ...], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(m, (list, str)) for m in raw):
        raise BadAction(f"{name} must be a list of melds, each a list of cards")
    return tuple(tuple(parse_cards(m)) for m in raw)


def _lay_off_list(raw: Any) -> tuple[LayOff, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise BadAction("lay_offs must be a list of {meld, cards}")
    out = []
    for item in raw:
        if not isinstance(item, dict) or not isinstance(item.get("meld"), int):
            raise BadAction("each lay-off is {meld: id, cards: [...]}")
        joker_low = item.get("joker_low", False)
        if not isinstance(joker_low, bool):
            raise BadAction("joker_low must be true or false")
        out.append(LayOff(item["meld"], tuple(parse_cards(item.get("cards", []))), joker_low))
    return tuple(out)


_ACTION_KEYS = {
    "draw": set(),
    "take_discard": {"melds", "lay_offs"},
    "lay_down": {"melds", "lay_offs"},
    "swap_joker": {"meld", "cards", "melds", "lay_offs"},
    "discard": {"card"},
    "commit": set(),
    "claim_redeal": set(),
    "end_turn": set(),
}


def action_from_json(data: Mapping[str, Any]) -> Action:
    """Parse ``{"seat": 0, "type": "discard", "card": "7H"}`` and the like."""
    kind = data.get("type")
    seat = data.get("seat")
    if not isinstance(kind, str) or kind not in _ACTION_KEYS:
        raise BadAction(f"unknown action type {kind!r}; known: {sorted(_ACTION_KEYS)}")
    if isinstance(seat, bool) or not isinstance(seat, int):
        raise BadAction("an action needs the acting seat as a number")
    extra = set(data) - {"type", "seat"} - _ACTION_KEYS[kind]
    if extra:
        raise BadAction(f"unexpected fields for {kind}: {sorted(extra)}")
    if kind == "draw":
        return Draw(seat)
    if kind == "take_discard":
        return TakeDiscard(
            seat, _meld_list(data.get("melds"), "melds"), _lay_off_list(data.get("lay_offs"))
        )
    if kind == "lay_down":
        return LayDown(
            seat, _meld_list(data.get("melds"), "melds"), _lay_off_list(data.get("lay_offs"))
        )
    if kind == "swap_joker":
        meld = data.get("meld")
        if isinstance(meld, bool) or not isinstance(meld, int):
            raise BadAction("swap_joker needs the meld id")
        return SwapJoker(
            seat,
            meld,
            tuple(parse_cards(data.get("cards", []))),
            _meld_list(data.get("melds"), "melds"),
            _lay_off_list(data.get("lay_offs")),
        )
    if kind == "discard":
        card = data.get("card")
        if not isinstance(card, str):
            raise BadAction("discard needs a card")
        return Discard(seat, parse_card(card))
    if kind == "commit":
        return Commit(seat)
    if kind == "claim_redeal":
        return ClaimRedeal(seat)
    return EndTurn(seat)


def _lay_offs_json(lay_offs: Sequence[LayOff]) -> list[dict[str, Any]]:
    out = []
    for lay in lay_offs:
        item: dict[str, Any] = {"meld": lay.meld, "cards": _strs(lay.cards)}
        if lay.joker_low:
            item["joker_low"] = True
        out.append(item)
    return out


def action_to_json(action: Action) -> dict[str, Any]:
    base: dict[str, Any] = {"seat": action.seat}
    match action:
        case Draw():
            return {**base, "type": "draw"}
        case TakeDiscard(melds=melds, lay_offs=lay_offs) | LayDown(melds=melds, lay_offs=lay_offs):
            kind = "take_discard" if isinstance(action, TakeDiscard) else "lay_down"
            out = {**base, "type": kind}
            if melds:
                out["melds"] = [_strs(m) for m in melds]
            if lay_offs:
                out["lay_offs"] = _lay_offs_json(lay_offs)
            return out
        case SwapJoker():
            out = {**base, "type": "swap_joker", "meld": action.meld, "cards": _strs(action.cards)}
            if action.melds:
                out["melds"] = [_strs(m) for m in action.melds]
            if action.lay_offs:
                out["lay_offs"] = _lay_offs_json(action.lay_offs)
            return out
        case Discard():
            return {**base, "type": "discard", "card": str(action.card)}
        case Commit():
            return {**base, "type": "commit"}
        case ClaimRedeal():
            return {**base, "type": "claim_redeal"}
        case EndTurn():
            return {**base, "type": "end_turn"}
    raise BadAction(f"{action!r} is not a Konkan action")


def score_sheet(state: KonkanState) -> dict[str, Any]:
    """The match so far: rounds with their scores, totals, and the result once over."""
    return {
        "rounds": [result.to_json() for result in state.results],
        "totals": state.totals,
        "over": state.over,
        "winner": state.match_winner,
        "places": list(state.places),
    }


def describe(state: KonkanState) -> str:
    """A short human-readable dump, for debugging and bug reports."""
    lines = [f"round {state.round} dealer {state.dealer} turn {state.turn} {state.phase.value}"]
    for seat, hand in enumerate(state.hands):
        flag = "opened" if state.opened[seat] else "closed"
        lines.append(f"  seat {seat} ({flag}): {format_cards(hand)}")
    for m in state.melds:
        lines.append(f"  meld {m.id} of {m.owner}: {m.meld}")
    lines.append(f"  discard {format_cards(state.discard[-3:])} stock {len(state.stock)}")
    return "\n".join(lines)
