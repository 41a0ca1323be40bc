"""The game record: a match as options, seats, deck order or seed, and actions.

Tests, bug reports, rule disputes and the server's recovery all use this one
format (documented in ``docs/game-record.md``). Replaying a record gives the
same state every time; it stops at the first illegal action and says which.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from . import konkan
from .cards import Card, conquian_deck, parse_cards
from .errors import BadRecord, RuleError
from .options import KONKAN_GAMES, ConquianOptions, KonkanOptions

FORMAT = 1
GAMES = (*KONKAN_GAMES, "conquian")


def engine_for(game: str) -> ModuleType:
    """The engine module of a game: ``konkan`` for both Konkan tables, ``conquian``."""
    if game in KONKAN_GAMES:
        return konkan
    if game == "conquian":
        return importlib.import_module("sahrat.rules.conquian")
    raise BadRecord(f"unknown game {game!r}; known games: {list(GAMES)}")


def options_for(game: str, values: Mapping[str, Any]) -> KonkanOptions | ConquianOptions:
    if game in KONKAN_GAMES:
        return KonkanOptions.for_game(game, values)
    if game == "conquian":
        return ConquianOptions.from_dict(values)
    raise BadRecord(f"unknown game {game!r}; known games: {list(GAMES)}")


@dataclass
class GameRecord:
    game: str
    options: dict[str, Any] = field(default_factory=dict)
    seats: list[str] = field(default_factory=list)
    seed: str = "0"
    first_dealer: int | None = None
    decks: list[Any] = field(default_factory=list)
    actions: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"format": FORMAT, "game": self.game, "options": self.options}
        out["seats"] = self.seats
        out["seed"] = self.seed
        if self.first_dealer is not None:
            out["first_dealer"] = self.first_dealer
        if self.decks:
            out["decks"] = self.decks
        out["actions"] = self.actions
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GameRecord:
        if not isinstance(data, Mapping):
            raise BadRecord("a game record is a JSON object")
        known = {"format", "game", "options", "seats", "seed", "first_dealer", "decks", "actions"}
        known |= {"comment", "expect"}
        unknown = set(data) - known
        if unknown:
            raise BadRecord(f"unknown fields in the record: {sorted(unknown)}")
        if data.get("format", FORMAT) != FORMAT:
            raise BadRecord(f"record format {data.get('format')!r} is not {FORMAT}")
        game = data.get("game")
        if not isinstance(game, str):
            raise BadRecord("the record needs a game")
        actions = data.get("actions", [])
        if not isinstance(actions, list) or not all(isinstance(a, dict) for a in actions):
            raise BadRecord("actions must be a list of objects")
        seed = data.get("seed", "0")
        first_dealer = data.get("first_dealer")
        if first_dealer is not None and not isinstance(first_dealer, int):
            raise BadRecord("first_dealer must be a seat number")
        return cls(
            game=game,
            options=dict(data.get("options") or {}),
            seats=list(data.get("seats") or []),
            seed=str(seed),
            first_dealer=first_dealer,
            decks=list(data.get("decks") or []),
            actions=list(actions),
        )

    @classmethod
    def load(cls, path: str) -> GameRecord:
        with open(path, encoding="utf-8") as handle:
            try:
                data = json.load(handle)
            except json.JSONDecodeError as error:
                raise BadRecord(f"{path} is not JSON: {error}") from None
        return cls.from_json(data)


def _deck_order(game: str, spec: Any, players: int, dealer: int) -> list[Card]:
    """A deck as a full list (top first) or as ``{"hands": {seat: cards}, "stock": cards}``."""
    if isinstance(spec, (list, str)):
        return parse_cards(spec)
    if not isinstance(spec, Mapping):
        raise BadRecord("a deck is a list of cards or {hands, stock}")
    hands = {int(seat): parse_cards(cards) for seat, cards in (spec.get("hands") or {}).items()}
    stock = parse_cards(spec.get("stock") or [])
    if game in KONKAN_GAMES:
        return konkan.stacked_deck(hands, stock, players=players, dealer=dealer)
    return stacked_conquian_deck(hands, stock, dealer=dealer)


def stacked_conquian_deck(
    hands: Mapping[int, Sequence[Card]], stock: Sequence[Card], *, dealer: int
) -> list[Card]:
    """Conquian deals 10 to the non-dealer, then 10 to the dealer; the rest is the stock."""
    pool = conquian_deck()
    for card in [*[c for h in hands.values() for c in h], *stock]:
        if card not in pool:
            raise BadRecord(f"{card} is stacked twice or is not a Conquian card")
        pool.remove(card)
    order: list[Card] = []
    for seat in (1 - dealer, dealer):
        hand = list(hands.get(seat, ()))
        if len(hand) > 10:
            raise BadRecord(f"seat {seat} is dealt 10 cards, not {len(hand)}")
        while len(hand) < 10:
            hand.append(pool.pop(0))
        order += hand
    return order + list(stock) + pool


def start(record: GameRecord) -> Any:
    """The initial state of a record's game."""
    engine = engine_for(record.game)
    options = options_for(record.game, record.options)
    players = options.players
    if record.seats and len(record.seats) != players:
        raise BadRecord(f"{len(record.seats)} seats named for a {players}-player table")
    first_dealer = record.first_dealer
    if record.decks and first_dealer is None:
        raise BadRecord("a record with stacked decks must name the first dealer")
    decks = []
    dealer = first_dealer if first_dealer is not None else 0
    for index, spec in enumerate(record.decks):
        # Konkan's dealer moves one seat each deal (no redeals in stacked records);
        # Conquian's alternates between the two seats.
        deal_dealer = (dealer + index) % players
        decks.append(_deck_order(record.game, spec, players, deal_dealer))
    return engine.new_game(options, record.seed, decks, first_dealer)


@dataclass
class ReplayResult:
    state: Any
    applied: int
    error: RuleError | None = None
    error_index: int | None = None
    events: list[Any] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None


def replay(
    record: GameRecord,
    *,
    on_step: Callable[[Any, Any], None] | None = None,
) -> ReplayResult:
    """Replay every action; stop at the first illegal one."""
    engine = engine_for(record.game)
    state = start(record)
    if on_step is not None:
        on_step(state, None)
    events: list[Any] = []
    for index, raw in enumerate(record.actions):
        try:
            action = engine.action_from_json(raw)
            state, new_events = engine.apply(state, action)
        except RuleError as error:
            return ReplayResult(state, index, error, index, events)
        events += new_events
        if on_step is not None:
            on_step(state, action)
    return ReplayResult(state, len(record.actions), events=events)


def replay_summary(record: GameRecord) -> dict[str, Any]:
    """What ``sahrat replay --json`` prints: the final state, the score sheet, any error."""
    try:
        result = replay(record)
    except RuleError as error:
        return {"ok": False, "applied": 0, "error": {"index": None, **error.to_dict()}}
    engine = engine_for(record.game)
    state = result.state
    final = engine.view(state, None)
    final["hands"] = [engine.view(state, seat)["hand"] for seat in range(state.players)]
    out: dict[str, Any] = {
        "ok": result.ok,
        "game": record.game,
        "applied": result.applied,
        "state": final,
        "score_sheet": engine.score_sheet(state),
    }
    if result.error is not None:
        out["error"] = {"index": result.error_index, **result.error.to_dict()}
    return out


def record_of(
    game: str, state0: Any, actions: Sequence[Any], seats: Sequence[str] = ()
) -> GameRecord:
    """The record of a game played from ``state0`` (seeded, not stacked) with ``actions``."""
    engine = engine_for(game)
    return GameRecord(
        game=game,
        options=state0.options.to_json(),
        seats=list(seats),
        seed=state0.seed,
        first_dealer=state0.dealer,
        actions=[engine.action_to_json(action) for action in actions],
    )


__all__ = [
    "FORMAT",
    "GAMES",
    "GameRecord",
    "ReplayResult",
    "engine_for",
    "options_for",
    "record_of",
    "replay",
    "replay_summary",
    "start",
]
