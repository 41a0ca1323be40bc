"""Checking the shuffles of a match against its commitments (``docs/fairness.md``).

Pure like the rest of the engine: no I/O, no clock, no global random state.

* :func:`verify_round` checks one round's revealed values: that the round
  seed and salt hash to the commitment, and (given the dealer) that the deck
  they give deals the hands someone saw.
* :func:`verify_record` checks a whole match record: it checks the first
  dealer drawn from the match seed, derives every round's seed, salt and
  commitment from the match seed, recomputes every
  deck order from the round seed, and replays the record through the engine,
  checking that the commitment published with each deal and the values
  revealed at each round's end agree, that every hand dealt and every card
  drawn or turned up from the stock is the one the recomputed order puts
  there (reshuffles included), and that every action is accepted (so every
  card played was in the hand the seed dealt).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .cards import Card, conquian_deck, konkan_deck, parse_card
from .errors import BadRecord, RuleError
from .events import Event
from .options import KONKAN_GAMES
from .record import GAMES, GameRecord, engine_for, start
from .rng import SeedStream, round_secret, seed_commitment

KONKAN_HAND = 14
CONQUIAN_HAND = 10


def commitment_of(round_seed: str, salt: str) -> str:
    """``SHA-256(salt ":" round seed)`` in hex: what a round's commitment must be."""
    return hashlib.sha256(f"{salt}:{round_seed}".encode()).hexdigest()


def deck_order(game: str, round_seed: str, deal: int = 0) -> list[Card]:
    """The deck of deal ``deal`` of a round (0; 1, 2… after Konkan redeals), top card
    first: the game's canonical deck shuffled by the stream ``round seed/deal/deal``."""
    if game in KONKAN_GAMES:
        deck = konkan_deck()
    elif game == "conquian":
        deck = conquian_deck()
    else:
        raise BadRecord(f"unknown game {game!r}; known games: {list(GAMES)}")
    SeedStream(round_seed, "deal", deal).shuffle(deck)
    return deck


def deal_layout(
    game: str, order: Sequence[Card], players: int, dealer: int
) -> tuple[dict[int, list[Card]], list[Card]]:
    """How a deck order is dealt: the hands by seat, and the stock top card first.

    Konkan: 15 cards to the seat after the dealer, then 14 to each next seat.
    Conquian: 10 to the non-dealer, 10 to the dealer; the stock's top card is
    the one the non-dealer turns up.
    """
    if not 0 <= dealer < players:
        raise BadRecord(f"dealer {dealer} is not a seat of {players}")
    hands: dict[int, list[Card]] = {}
    position = 0
    if game in KONKAN_GAMES:
        for offset in range(players):
            seat = (dealer + 1 + offset) % players
            size = KONKAN_HAND + (1 if offset == 0 else 0)
            hands[seat] = list(order[position : position + size])
            position += size
    else:
        if players != 2:
            raise BadRecord("conquian is played by 2 players")
        for seat in (1 - dealer, dealer):
            hands[seat] = list(order[position : position + CONQUIAN_HAND])
            position += CONQUIAN_HAND
    return hands, list(order[position:])


def _same_cards(a: Sequence[Card], b: Sequence[Card]) -> bool:
    return Counter(a) == Counter(b)


def _strs(cards: Sequence[Card]) -> list[str]:
    return [str(card) for card in cards]


# --- one round from its revealed values ---------------------------------------------------


@dataclass
class RoundReport:
    """What was checked of one round, and what did not agree."""

    round: int | None
    commitment: str | None = None
    round_seed: str | None = None
    salt: str | None = None
    deals: int = 0
    hands_checked: int = 0
    cards_drawn: int = 0
    reshuffles: int = 0
    revealed: bool = False
    problems: list[str] = field(default_factory=list)
    deck: list[str] = field(default_factory=list)
    hands: dict[int, list[str]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "round": self.round,
            "ok": self.ok,
            "commitment": self.commitment,
            "round_seed": self.round_seed,
            "salt": self.salt,
            "revealed": self.revealed,
            "deals": self.deals,
            "hands_checked": self.hands_checked,
            "cards_drawn": self.cards_drawn,
            "reshuffles": self.reshuffles,
            "problems": list(self.problems),
        }
        if self.deck:
            out["deck"] = list(self.deck)
        if self.hands:
            out["hands"] = {str(seat): cards for seat, cards in self.hands.items()}
        return out


def verify_round(
    game: str,
    round_seed: str,
    salt: str,
    commitment: str,
    *,
    players: int | None = None,
    dealer: int | None = None,
    hands: Mapping[int, Sequence[Card]] | None = None,
    deal: int = 0,
    round_number: int | None = None,
) -> RoundReport:
    """Check one round's revealed seed and salt against its published commitment and,
    given the dealer, the hands someone saw against the deck the seed gives."""
    report = RoundReport(round_number, commitment.lower(), round_seed, salt, deals=1)
    report.revealed = True
    if commitment_of(round_seed, salt) != commitment.lower():
        report.problems.append(
            f"commitment mismatch: SHA-256(salt:round_seed) is "
            f"{commitment_of(round_seed, salt)}, not the published {commitment.lower()}"
        )
    order = deck_order(game, round_seed, deal)
    report.deck = _strs(order)
    if players is None:
        players = 2 if game == "conquian" else 4
    if dealer is None:
        if hands:
            report.problems.append("checking hands needs the dealer's seat")
        return report
    dealt, _stock = deal_layout(game, order, players, dealer)
    report.hands = {seat: _strs(cards) for seat, cards in sorted(dealt.items())}
    for seat, seen in sorted((hands or {}).items()):
        if seat not in dealt:
            report.problems.append(f"seat {seat} is not a seat of {players}")
        elif not _same_cards(seen, dealt[seat]):
            report.problems.append(
                f"deck mismatch: the seed deals seat {seat} {' '.join(_strs(dealt[seat]))}, "
                f"not {' '.join(_strs(seen))}"
            )
        else:
            report.hands_checked += 1
    return report


# --- a whole match record ----------------------------------------------------------------


@dataclass
class VerifyReport:
    """The result of checking a match record: every round, and what did not agree."""

    game: str
    seed: str
    rounds: list[RoundReport] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    actions: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems and all(r.ok for r in self.rounds)

    def all_problems(self) -> list[str]:
        out = list(self.problems)
        for r in self.rounds:
            out += [f"round {r.round}: {problem}" for problem in r.problems]
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "game": self.game,
            "seed": self.seed,
            "match_commitment": seed_commitment(self.seed),
            "actions": self.actions,
            "rounds": [r.to_json() for r in self.rounds],
            "problems": self.all_problems(),
            "notes": list(self.notes),
        }


class _Checker:
    """Follows a replay event by event, against decks recomputed from the round seeds."""

    def __init__(self, record: GameRecord, players: int) -> None:
        self.game = record.game
        self.seed = record.seed
        self.players = players
        self.report = VerifyReport(record.game, record.seed)
        self.current: RoundReport | None = None
        self.stock: list[Card] = []  # the recomputed stock, top card first
        self.deal_in_round = 0

    def round_report(self, number: int) -> RoundReport:
        if self.current is None or self.current.round != number:
            secret = round_secret(self.seed, number)
            self.current = RoundReport(number, secret.commitment, secret.seed, secret.salt)
            self.report.rounds.append(self.current)
            self.deal_in_round = 0
        else:
            self.deal_in_round += 1
        return self.current

    def deal(
        self, number: int, dealer: int, published: str | None, hands: Mapping[int, Sequence[Card]]
    ) -> None:
        """A deal of round ``number``: its commitment and every hand."""
        current = self.round_report(number)
        assert current.round_seed is not None and current.salt is not None
        current.deals += 1
        if commitment_of(current.round_seed, current.salt) != current.commitment:
            current.problems.append("the derived commitment is not SHA-256(salt:round_seed)")
        if published != current.commitment:
            current.problems.append(
                f"commitment mismatch: the deal published {published}, "
                f"the match seed gives {current.commitment}"
            )
        order = deck_order(self.game, current.round_seed, self.deal_in_round)
        expected, self.stock = deal_layout(self.game, order, self.players, dealer)
        for seat in range(self.players):
            got = hands.get(seat)
            if got is None or not _same_cards(got, expected[seat]):
                shown = " ".join(_strs(got)) if got is not None else "nothing"
                current.problems.append(
                    f"deck mismatch: seat {seat} was dealt {shown}; "
                    f"the round seed deals {' '.join(_strs(expected[seat]))}"
                )
            else:
                current.hands_checked += 1

    def from_stock(self, card: Card, what: str) -> None:
        current = self.current
        assert current is not None
        if not self.stock:
            current.problems.append(f"{what} {card}, but the recomputed stock is empty")
            return
        expected = self.stock.pop(0)
        if expected != card:
            current.problems.append(
                f"deck mismatch: {what} {card} where the round seed puts {expected}"
            )
        else:
            current.cards_drawn += 1

    def reshuffle(self, number: int, pile: Sequence[Card]) -> None:
        """Konkan: the discard pile but its top card, oldest first, shuffled into the stock
        by the stream ``round seed/reshuffle/deal/number``; its last card is the new top."""
        current = self.current
        assert current is not None and current.round_seed is not None
        cards = list(pile)
        SeedStream(current.round_seed, "reshuffle", self.deal_in_round, number).shuffle(cards)
        self.stock = cards[::-1]
        current.reshuffles += 1

    def reveal(self, number: int, public: Mapping[str, Any]) -> None:
        """The round's end: the revealed seed and salt against the commitment."""
        current = self.current
        if current is None or current.round != number:
            self.report.problems.append(f"round {number} ended without being dealt")
            return
        seed, salt = public.get("round_seed"), public.get("round_salt")
        current.revealed = True
        if seed != current.round_seed or salt != current.salt:
            current.problems.append(
                "the revealed round seed and salt are not the ones the match seed gives"
            )
        if not isinstance(seed, str) or not isinstance(salt, str):
            current.problems.append("the round's end reveals no round seed and salt")
            return
        if commitment_of(seed, salt) != current.commitment:
            current.problems.append(
                f"commitment mismatch: SHA-256(salt:round_seed) of the revealed values is "
                f"{commitment_of(seed, salt)}, not the published {current.commitment}"
            )
        if public.get("round_commitment") != current.commitment:
            current.problems.append("the round's end names another commitment")


def _round_number(game: str, state: Any) -> int:
    return int(state.round) if game in KONKAN_GAMES else int(state.deals)


def _dealt_hands(events: Sequence[Event]) -> dict[int, list[Card]]:
    hands: dict[int, list[Card]] = {}
    for event in events:
        if event.type == "dealt" and event.seat is not None and event.private is not None:
            hands[event.seat] = [parse_card(text) for text in event.private["cards"]]
    return hands


def verify_record(
    record: GameRecord,
    *,
    commitments: Mapping[int, str] | None = None,
    match_commitment: str | None = None,
) -> VerifyReport:
    """Check every shuffle of a match record (see the module's docstring).

    ``commitments`` are round commitments someone saw during play (round
    number → hex), ``match_commitment`` the match seed's commitment shown by
    the table; each must equal what the record's seed gives.
    """
    engine = engine_for(record.game)
    if record.decks:
        report = VerifyReport(record.game, record.seed)
        report.problems.append(
            "the record deals from explicit decks, not from its seed: its shuffles "
            "cannot be checked"
        )
        return report
    state = start(record)
    checker = _Checker(record, state.players)
    report = checker.report
    if match_commitment is not None and seed_commitment(record.seed) != match_commitment.lower():
        report.problems.append(
            f"match commitment mismatch: SHA-256(seed) is {seed_commitment(record.seed)}, "
            f"not {match_commitment.lower()}"
        )
    drawn = SeedStream(record.seed, "first_dealer").randrange(state.players)
    if state.dealer != drawn:
        report.problems.append(
            f"first dealer mismatch: the record names seat {state.dealer}, "
            f"the match seed draws seat {drawn}"
        )
    view = engine.view(state, None)
    checker.deal(
        _round_number(record.game, state),
        state.dealer,
        view.get("round_commitment"),
        {seat: list(hand) for seat, hand in enumerate(state.hands)},
    )
    if record.game == "conquian":
        assert state.face_up is not None
        checker.from_stock(state.face_up, "turned up")
    for index, raw in enumerate(record.actions):
        before = state
        try:
            action = engine.action_from_json(raw)
            state, events = engine.apply(state, action)
        except RuleError as error:
            where = checker.current.problems if checker.current else report.problems
            where.append(
                f"action {index} is refused ({error.code}: {error}): the record's moves do "
                "not fit the cards its seed deals"
            )
            return report
        report.actions += 1
        _follow(checker, record.game, before, events)
    if not state.over:
        report.notes.append(
            f"the match is not over: the record stops in round {_round_number(record.game, state)}"
        )
    for number, wanted in sorted((commitments or {}).items()):
        derived = round_secret(record.seed, number).commitment
        played = any(r.round == number for r in report.rounds)
        if not played:
            report.problems.append(f"round {number} is not in the record")
        elif derived != wanted.lower():
            report.problems.append(
                f"round {number}: commitment mismatch: the record's seed gives {derived}, "
                f"not the {wanted.lower()} seen during play"
            )
    return report


def _number(event: Event) -> int:
    """The round a deal or round end is about: Konkan's round, Conquian's deal."""
    return int(event.public["round"] if "round" in event.public else event.public["deal"])


def _follow(checker: _Checker, game: str, before: Any, events: Sequence[Event]) -> None:
    """Check the events of one action: deals, cards from the stock, reshuffles, reveals."""
    for position, event in enumerate(events):
        kind = event.type
        if kind == "deal":
            checker.deal(
                _number(event),
                int(event.public["dealer"]),
                event.public.get("round_commitment"),
                _dealt_hands(events[position + 1 : position + 1 + before.players]),
            )
        elif kind == "draw" and event.public.get("source") == "stock":
            assert event.private is not None
            checker.from_stock(parse_card(event.private["card"]), "drew")
        elif kind == "turn_up":
            checker.from_stock(parse_card(event.public["card"]), "turned up")
        elif kind == "reshuffle":
            checker.reshuffle(int(event.public["reshuffles"]), before.discard[:-1])
        elif kind in ("round_end", "deal_end"):
            checker.reveal(_number(event), event.public)


# --- reading a record ----------------------------------------------------------------------


def record_from_json(data: Any) -> GameRecord:
    """A game record, or a finished match as ``GET /api/matches/{id}`` returns it
    (the record is its ``record`` field)."""
    if isinstance(data, Mapping) and isinstance(data.get("record"), Mapping):
        data = data["record"]
    return GameRecord.from_json(data)


def load_record(path: str) -> GameRecord:
    """A record file, or a saved ``GET /api/matches/{id}`` (see :meth:`GameRecord.load`)."""
    return GameRecord.load(path)


def parse_commitments(values: Sequence[str]) -> dict[int, str]:
    """``ROUND=HEX`` pairs (as given to ``sahrat verify --commitment``)."""
    out: dict[int, str] = {}
    for value in values:
        number, sep, text = value.partition("=")
        if not sep or not number.strip().isdigit() or not text.strip():
            raise BadRecord(f"{value!r} is not ROUND=COMMITMENT")
        out[int(number)] = text.strip().lower()
    return out


__all__ = [
    "RoundReport",
    "VerifyReport",
    "commitment_of",
    "deal_layout",
    "deck_order",
    "load_record",
    "parse_commitments",
    "record_from_json",
    "verify_record",
    "verify_round",
]
