"""Konkan melds: runs and sets with at most one joker (RULES.md §1.4).

A run is written from its low end to its high end. Its cards sit at
*positions* 1..14, where the ace is 1 when low (``A 2 3``) and 14 when high
(``Q K A``); a run never holds both, never wraps (``K A 2``) and is at most
13 cards long. A set is 3 or 4 cards of one rank in different suits.

A joker stands for one specific card. In a run, its position fixes it. When
a joker is laid at the end of a run, it stands above the run's high end
(below when the player asks for the low end, or when above is impossible);
when it closes a gap it stands for the missing card. In a 3-card set it
stands for both missing suits, in a 4-card set for the one missing suit.
Once on the table a joker keeps what it stands for until it is swapped out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from .cards import RANKS, SUITS, Card, Rank, Suit, parse_cards
from .errors import InvalidLayOff, InvalidMeld, InvalidSwap

MAX_RUN = 13
ACE_HIGH = 14


class MeldKind(Enum):
    RUN = "run"
    SET = "set"


class AceValue(Enum):
    """How an ace counts in a meld (table option, RULES.md §1.11)."""

    ALWAYS_11 = "always_11"
    LOW_1_ELSE_10 = "low_1_else_10"


def position_rank(position: int) -> Rank:
    return Rank.ACE if position == ACE_HIGH else Rank(position)


def rank_value(rank: Rank) -> int:
    """Face value for 2–10, 10 for J Q K; aces are handled by the callers."""
    return min(int(rank), 10)


def meld_card_value(rank: Rank, *, low_run_ace: bool, ace: AceValue) -> int:
    """The value of one card standing in a meld, for the opening threshold."""
    if rank is Rank.ACE:
        if ace is AceValue.ALWAYS_11:
            return 11
        return 1 if low_run_ace else 10
    return rank_value(rank)


@dataclass(frozen=True, slots=True)
class Meld:
    """A valid meld on the table or proposed for it.

    ``cards`` is in table order: a run from its low end up, with the joker at
    the position it stands for; a set by suit with the joker last. ``start``
    is the position of a run's first card (unused for sets). ``joker_for``
    lists the faces the joker stands for (empty without a joker).
    """

    kind: MeldKind
    cards: tuple[Card, ...]
    start: int = 0
    joker_for: tuple[str, ...] = ()

    @property
    def joker(self) -> Card | None:
        for card in self.cards:
            if card.is_joker:
                return card
        return None

    @property
    def real_cards(self) -> tuple[Card, ...]:
        return tuple(card for card in self.cards if not card.is_joker)

    @property
    def rank(self) -> Rank:
        """The rank of a set."""
        for card in self.cards:
            if card.rank is not None:
                return card.rank
        raise InvalidMeld("a meld needs real cards")

    @property
    def suit(self) -> Suit:
        """The suit of a run."""
        for card in self.cards:
            if card.suit is not None:
                return card.suit
        raise InvalidMeld("a meld needs real cards")

    @property
    def end(self) -> int:
        """Position of a run's last card."""
        return self.start + len(self.cards) - 1

    def ranks_stood_for(self) -> list[Rank]:
        """The rank every card stands for, jokers included, in table order."""
        if self.kind is MeldKind.SET:
            return [self.rank] * len(self.cards)
        return [position_rank(self.start + i) for i in range(len(self.cards))]

    def value(self, ace: AceValue = AceValue.ALWAYS_11) -> int:
        """The meld's worth for the opening threshold (a joker counts as what it stands for)."""
        if self.kind is MeldKind.SET:
            return len(self.cards) * meld_card_value(self.rank, low_run_ace=False, ace=ace)
        low = self.start == 1
        return sum(
            meld_card_value(rank, low_run_ace=low, ace=ace) for rank in self.ranks_stood_for()
        )

    def __str__(self) -> str:
        text = " ".join(str(card) for card in self.cards)
        if self.joker_for:
            text += f" (JK={'/'.join(self.joker_for)})"
        return text

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind.value,
            "cards": [str(card) for card in self.cards],
            "joker_for": list(self.joker_for),
        }

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> Meld:
        """The meld of a view exactly as it lies on the table (inverse of ``to_json``).

        Rebuilding a run from its cards alone could misplace the joker
        (``3H … QH JK AH`` would read as the ace-low ``AH JK 3H … QH``), so the
        run's start comes from a real card that is not an ace.
        """
        cards = tuple(parse_cards(data["cards"]))
        joker_for = tuple(str(face) for face in data.get("joker_for", ()))
        if data["kind"] == MeldKind.SET.value:
            return Meld(MeldKind.SET, cards, 0, joker_for)
        for index, card in enumerate(cards):
            if card.rank is not None and card.rank is not Rank.ACE:
                return Meld(MeldKind.RUN, cards, int(card.rank) - index, joker_for)
        raise InvalidMeld(f"{_fmt(cards)}: a run needs a card that is not an ace or a joker")


# --- building ----------------------------------------------------------------


def _split(cards: Sequence[Card]) -> tuple[list[Card], list[Card]]:
    reals = [card for card in cards if not card.is_joker]
    jokers = [card for card in cards if card.is_joker]
    return reals, jokers


def build_meld(cards: Sequence[Card], *, joker_low: bool | None = None) -> Meld:
    """Validate a proposed meld and return it in table order.

    ``joker_low`` says where a joker extending a run goes; by default it goes
    below when it is listed before every real card, above otherwise.
    Raises :class:`InvalidMeld` with the reason.
    """
    if len(cards) < 3:
        raise InvalidMeld(f"{_fmt(cards)}: a meld needs at least 3 cards")
    if len(set(cards)) != len(cards):
        raise InvalidMeld(f"{_fmt(cards)}: the same card is named twice")
    reals, jokers = _split(cards)
    if len(jokers) > 1:
        raise InvalidMeld(f"{_fmt(cards)}: at most one joker in a meld")
    if len(reals) < 2:
        raise InvalidMeld(f"{_fmt(cards)}: a meld needs at least two real cards")
    if all(card.rank == reals[0].rank for card in reals):
        return _build_set(reals, jokers[0] if jokers else None, cards)
    if joker_low is None and jokers:
        joker_low = cards.index(jokers[0]) == 0
    return _build_run(reals, jokers[0] if jokers else None, cards, joker_low=bool(joker_low))


def _fmt(cards: Sequence[Card]) -> str:
    return " ".join(str(card) for card in cards)


def _build_set(reals: list[Card], joker: Card | None, shown: Sequence[Card]) -> Meld:
    suits = [card.suit for card in reals]
    if len(set(suits)) != len(suits):
        raise InvalidMeld(f"{_fmt(shown)}: a set needs cards of different suits")
    size = len(reals) + (1 if joker else 0)
    if size > 4:
        raise InvalidMeld(f"{_fmt(shown)}: a set has at most 4 cards")
    ordered = sorted(reals, key=lambda card: card.sort_key)
    joker_for: tuple[str, ...] = ()
    if joker is not None:
        rank = reals[0].rank
        assert rank is not None
        missing = [suit for suit in SUITS if suit not in suits]
        joker_for = tuple(Card(rank, suit).face for suit in missing)
        ordered.append(joker)
    return Meld(MeldKind.SET, tuple(ordered), 0, joker_for)


def _positions(reals: Sequence[Card], ace_high: bool) -> list[int]:
    return [
        ACE_HIGH if ace_high and card.rank is Rank.ACE else int(card.rank or 0) for card in reals
    ]


def _build_run(
    reals: list[Card],
    joker: Card | None,
    shown: Sequence[Card],
    *,
    joker_low: bool = False,
    joker_position: int | None = None,
    ace_high_first: bool | None = None,
) -> Meld:
    suit = reals[0].suit
    if any(card.suit != suit for card in reals):
        raise InvalidMeld(f"{_fmt(shown)}: a run is all one suit and a set all one rank")
    has_ace = any(card.rank is Rank.ACE for card in reals)
    reason = "the cards are not consecutive"
    # When both readings are runs (A JK 3…Q or 3…Q JK A; A…K), the order the
    # player listed decides: an ace listed after every other real card is high.
    if ace_high_first is None:
        listed = [card for card in shown if not card.is_joker]
        ace_high_first = listed[-1].rank is Rank.ACE and len(listed) > 1
    for ace_high in ((True, False) if ace_high_first else (False, True)) if has_ace else (False,):
        positions = _positions(reals, ace_high)
        if len(set(positions)) != len(positions):
            raise InvalidMeld(f"{_fmt(shown)}: a run cannot hold two cards of the same rank")
        lo, hi = min(positions), max(positions)
        gaps = (hi - lo + 1) - len(positions)
        joker_at: int | None = None
        if joker is None:
            if gaps:
                continue
        elif joker_position is not None:
            if joker_position in positions:
                continue
            joker_at = joker_position
            span = [*positions, joker_at]
            if max(span) - min(span) + 1 != len(span):
                continue
        elif gaps == 1:
            joker_at = next(p for p in range(lo, hi + 1) if p not in positions)
        elif gaps == 0:
            below = lo - 1 if lo > 1 else None
            above = hi + 1 if hi < ACE_HIGH else None
            joker_at = (below if below is not None else above) if joker_low else above
            if joker_at is None:
                joker_at = below
            if joker_at is None:
                reason = "a run has no room for the joker"
                continue
        else:
            continue
        length = len(reals) + (1 if joker is not None else 0)
        if length > MAX_RUN:
            reason = f"a run is at most {MAX_RUN} cards"
            continue
        start = min(positions + ([joker_at] if joker_at is not None else []))
        if start < 1 or start + length - 1 > ACE_HIGH:
            continue
        slots: list[Card | None] = [None] * length
        for card, position in zip(reals, positions, strict=True):
            slots[position - start] = card
        joker_for: tuple[str, ...] = ()
        if joker is not None and joker_at is not None:
            slots[joker_at - start] = joker
            joker_for = (Card(position_rank(joker_at), suit).face,)
        ordered = tuple(card for card in slots if card is not None)
        return Meld(MeldKind.RUN, ordered, start, joker_for)
    if (
        has_ace
        and any(card.rank is Rank.KING for card in reals)
        and any(card.rank is Rank.TWO for card in reals)
    ):
        reason = "a run does not wrap around the ace (K A 2)"
    raise InvalidMeld(f"{_fmt(shown)}: {reason}")


# --- changing a meld on the table ---------------------------------------------


def lay_off(meld: Meld, added: Sequence[Card], *, joker_low: bool = False) -> Meld:
    """The meld with ``added`` laid off on it; raises :class:`InvalidLayOff`."""
    if not added:
        raise InvalidLayOff("nothing to lay off")
    existing_joker = meld.joker
    new_reals, new_jokers = _split(added)
    if len(new_jokers) + (1 if existing_joker else 0) > 1:
        raise InvalidLayOff(f"{_fmt(added)} on {meld}: at most one joker in a meld")
    reals = list(meld.real_cards) + new_reals
    shown = list(meld.cards) + list(added)
    try:
        if meld.kind is MeldKind.SET:
            if any(card.rank != meld.rank for card in new_reals):
                raise InvalidMeld(f"{_fmt(added)} is not of the set's rank")
            joker = existing_joker or (new_jokers[0] if new_jokers else None)
            return _build_set(reals, joker, shown)
        # A run keeps its ace where it was (high or low) as it grows.
        ace_high = meld.end == ACE_HIGH
        if existing_joker is not None:
            position = meld.start + meld.cards.index(existing_joker)
            return _build_run(
                reals, existing_joker, shown, joker_position=position, ace_high_first=ace_high
            )
        joker = new_jokers[0] if new_jokers else None
        return _build_run(reals, joker, shown, joker_low=joker_low, ace_high_first=ace_high)
    except InvalidMeld as error:
        raise InvalidLayOff(f"cannot lay off {_fmt(added)} on {meld}: {error.message}") from None


def swap_joker(meld: Meld, given: Sequence[Card]) -> tuple[Meld, Card]:
    """Put the real card(s) a joker stands for in its place; returns the meld and the joker.

    In a run, one card; in a set, the cards that make it 4 real cards.
    """
    joker = meld.joker
    if joker is None:
        raise InvalidSwap(f"{meld} holds no joker")
    if any(card.is_joker for card in given):
        raise InvalidSwap("a joker cannot be swapped for a joker")
    faces = sorted(card.face for card in given)
    if faces != sorted(meld.joker_for) or len(set(faces)) != len(faces):
        need = " and ".join(meld.joker_for)
        raise InvalidSwap(
            f"the joker in {meld} can be taken only by putting {need} in its place, "
            f"not {_fmt(given)}"
        )
    if meld.kind is MeldKind.SET:
        reals = list(meld.real_cards) + list(given)
        return _build_set(reals, None, reals), joker
    position = meld.cards.index(joker)
    cards = list(meld.cards)
    cards[position] = given[0]
    return Meld(MeldKind.RUN, tuple(cards), meld.start, ()), joker


def can_lay_off(meld: Meld, card: Card) -> bool:
    """Whether one card can be laid off on ``meld`` (a cheap test first, then the real one)."""
    if not might_lay_off(meld, card):
        return False
    try:
        lay_off(meld, [card])
    except InvalidLayOff:
        return False
    return True


def might_lay_off(meld: Meld, card: Card) -> bool:
    """A quick necessary condition for laying ``card`` off on ``meld`` alone."""
    if card.is_joker:
        limit = 4 if meld.kind is MeldKind.SET else MAX_RUN
        return meld.joker is None and len(meld.cards) < limit
    if meld.kind is MeldKind.SET:
        return card.rank == meld.rank and len(meld.cards) < 4
    if card.suit != meld.suit or card.rank is None:
        return False
    rank = int(card.rank)
    return rank in (meld.start - 1, meld.end + 1) or (rank == 1 and meld.end == 13)


ALL_FACES: tuple[str, ...] = tuple(Card(rank, suit).face for suit in SUITS for rank in RANKS)
