"""Cards, decks and their text form.

A card is a rank and a suit, or a joker. Konkan plays with two 52-card decks
and two jokers, so two ``7H`` are different cards: every card also carries a
copy index (0 for the first deck, 1 for the second).

Text form (round-trips: ``Card.parse(str(card)) == card``):

* ranks ``A 2 3 4 5 6 7 8 9 T J Q K`` (``10`` is accepted when parsing),
  suits ``S H D C``: ``7H``, ``TS``, ``AD``;
* jokers ``JK``;
* the copy from the second deck carries a trailing apostrophe: ``7H'``, ``JK'``.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum, IntEnum

from .errors import BadCard


class Suit(Enum):
    """The four suits, in the order used for sorting and notation."""

    SPADES = "S"
    HEARTS = "H"
    DIAMONDS = "D"
    CLUBS = "C"

    @property
    def index(self) -> int:
        return _SUIT_INDEX[self]

    def __repr__(self) -> str:
        return f"Suit.{self.name}"


_SUIT_INDEX = {suit: i for i, suit in enumerate(Suit)}
SUITS: tuple[Suit, ...] = tuple(Suit)


class Rank(IntEnum):
    """Ranks with the ace low (1). Ace-high runs are handled by the melds."""

    ACE = 1
    TWO = 2
    THREE = 3
    FOUR = 4
    FIVE = 5
    SIX = 6
    SEVEN = 7
    EIGHT = 8
    NINE = 9
    TEN = 10
    JACK = 11
    QUEEN = 12
    KING = 13

    @property
    def symbol(self) -> str:
        return _RANK_SYMBOLS[self]

    def __repr__(self) -> str:
        return f"Rank.{self.name}"


_RANK_SYMBOLS = {
    Rank.ACE: "A",
    Rank.TWO: "2",
    Rank.THREE: "3",
    Rank.FOUR: "4",
    Rank.FIVE: "5",
    Rank.SIX: "6",
    Rank.SEVEN: "7",
    Rank.EIGHT: "8",
    Rank.NINE: "9",
    Rank.TEN: "T",
    Rank.JACK: "J",
    Rank.QUEEN: "Q",
    Rank.KING: "K",
}
_RANK_BY_SYMBOL = {symbol: rank for rank, symbol in _RANK_SYMBOLS.items()}
_RANK_BY_SYMBOL["10"] = Rank.TEN
_SUIT_BY_SYMBOL = {suit.value: suit for suit in Suit}
RANKS: tuple[Rank, ...] = tuple(Rank)


class Card:
    """One physical card. ``rank`` and ``suit`` are ``None`` for a joker.

    Cards are immutable values compared and hashed by a small integer key
    (suit, rank and copy), which keeps the meld search and the engine fast.
    """

    __slots__ = ("copy", "key", "rank", "suit")

    rank: Rank | None
    suit: Suit | None
    copy: int
    key: int

    def __init__(self, rank: Rank | None, suit: Suit | None, copy: int = 0) -> None:
        if (rank is None) != (suit is None):
            raise BadCard("a card has both a rank and a suit, or neither (a joker)")
        if copy not in (0, 1):
            raise BadCard(f"copy must be 0 or 1 (two decks), not {copy!r}")
        if rank is None or suit is None:
            key = 104 + copy
        else:
            key = copy * 52 + _SUIT_INDEX[suit] * 13 + int(rank) - 1
        object.__setattr__(self, "rank", rank)
        object.__setattr__(self, "suit", suit)
        object.__setattr__(self, "copy", copy)
        object.__setattr__(self, "key", key)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("cards are immutable")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Card) and self.key == other.key

    def __hash__(self) -> int:
        return self.key

    def __lt__(self, other: Card) -> bool:
        return self.sort_key < other.sort_key

    def __reduce__(self) -> tuple[type[Card], tuple[Rank | None, Suit | None, int]]:
        return (Card, (self.rank, self.suit, self.copy))

    @property
    def is_joker(self) -> bool:
        return self.key >= 104

    @property
    def face(self) -> str:
        """The card's face without its copy index (``7H`` for both ``7H`` and ``7H'``)."""
        return _FACES[self.key]

    @property
    def sort_key(self) -> tuple[int, int, int]:
        """Suit, then rank, then copy; jokers last."""
        return _SORT_KEYS[self.key]

    def __str__(self) -> str:
        return _TEXTS[self.key]

    def __repr__(self) -> str:
        return f"Card.parse({_TEXTS[self.key]!r})"

    @staticmethod
    def parse(text: str) -> Card:
        """Parse the text form; raises :class:`BadCard` naming the text."""
        return parse_card(text)


def _tables() -> tuple[list[str], list[str], list[tuple[int, int, int]]]:
    faces = [""] * 106
    texts = [""] * 106
    sort_keys = [(0, 0, 0)] * 106
    for copy in (0, 1):
        for suit in SUITS:
            for rank in RANKS:
                key = copy * 52 + _SUIT_INDEX[suit] * 13 + int(rank) - 1
                faces[key] = _RANK_SYMBOLS[rank] + suit.value
                texts[key] = faces[key] + "'" * copy
                sort_keys[key] = (_SUIT_INDEX[suit], int(rank), copy)
        faces[104 + copy] = "JK"
        texts[104 + copy] = "JK" + "'" * copy
        sort_keys[104 + copy] = (4, 0, copy)
    return faces, texts, sort_keys


_FACES, _TEXTS, _SORT_KEYS = _tables()


def joker(copy: int = 0) -> Card:
    return Card(None, None, copy)


def parse_card(text: str) -> Card:
    known = _PARSED.get(text) if isinstance(text, str) else None  # a list is no key
    if known is not None:
        return known
    card = _parse_card(text)
    if len(_PARSED) < 4096:
        _PARSED[text] = card
    return card


_PARSED: dict[str, Card] = {}


def _parse_card(text: str) -> Card:
    if not isinstance(text, str):
        raise BadCard(f"{text!r} is not a card: expected text such as 7H")
    raw = text.strip()
    body = raw.rstrip("'")
    copy = len(raw) - len(body)
    if copy > 1:
        raise BadCard(f"{text!r} is not a card: at most one apostrophe (second deck)")
    upper = body.upper()
    if upper == "JK":
        return Card(None, None, copy)
    if len(upper) < 2:
        raise BadCard(f"{text!r} is not a card: expected rank+suit such as 7H, TS or JK")
    rank = _RANK_BY_SYMBOL.get(upper[:-1])
    suit = _SUIT_BY_SYMBOL.get(upper[-1])
    if rank is None:
        raise BadCard(f"{text!r} is not a card: unknown rank {upper[:-1]!r}")
    if suit is None:
        raise BadCard(f"{text!r} is not a card: unknown suit {upper[-1]!r}")
    return Card(rank, suit, copy)


def parse_cards(text: str | Iterable[str]) -> list[Card]:
    """Parse ``"7H 8H 9H"`` or ``["7H", "8H", "9H"]``."""
    if isinstance(text, str):
        return [parse_card(item) for item in text.split()]
    if isinstance(text, (dict, int, float)) or text is None:  # JSON that is no list of cards
        raise BadCard(f"{text!r} is not a list of cards")
    return [parse_card(item) for item in text]


def format_cards(cards: Iterable[Card]) -> str:
    return " ".join(str(card) for card in cards)


def konkan_deck() -> list[Card]:
    """The 106 cards of Konkan in a fixed canonical order: two decks, two jokers."""
    return list(_KONKAN_DECK)


_KONKAN_DECK = tuple(
    [Card(rank, suit, copy) for copy in (0, 1) for suit in SUITS for rank in RANKS]
    + [Card(None, None, 0), Card(None, None, 1)]
)


CONQUIAN_RANKS: tuple[Rank, ...] = tuple(
    rank for rank in RANKS if rank not in (Rank.EIGHT, Rank.NINE, Rank.TEN)
)


def conquian_deck() -> list[Card]:
    """The 40 cards of Conquian (one deck without 8, 9 and 10), canonical order."""
    return [Card(rank, suit, 0) for suit in SUITS for rank in CONQUIAN_RANKS]
