"""The game record: a match as options, seats, deck order or seed, and actions.

Tests, bug reports, rule disputes and the server's recovery all use this one
format (documented in ``docs/game-record.md``). Replaying a record gives the
same state every time; it stops at the first illegal action and says which.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from . import conquian, konkan
from .cards import Card, conquian_deck, parse_cards
from .engine import Engine, GameEngine
from .errors import BadRecord, RuleError
from .options import KONKAN_GAMES, ConquianOptions, KonkanOptions

FORMAT = 1
GAMES = (*KONKAN_GAMES, "conquian")

# Each game's module, checked by mypy against the GameEngine protocol with its own state,
# action and options types (a module satisfies a protocol structurally: these
# assignments are where a missing member or a drifted signature is caught).
KONKAN: GameEngine[konkan.KonkanState, konkan.Action, KonkanOptions] = konkan
CONQUIAN: GameEngine[conquian.ConquianState, conquian.Action, ConquianOptions] = conquian


def engine_for(game: str) -> Engine:
    """The engine of a game: ``konkan`` for both Konkan tables, ``conquian``."""
    if game in KONKAN_GAMES:
        return KONKAN
    if game == "conquian":
        return CONQUIAN
    raise BadRecord(f"unknown game {game!r}; known games: {list(GAMES)}")


def options_for(game: str, values: Mapping[str, Any]) -> KonkanOptions | ConquianOptions:
    if game in KONKAN_GAMES:
        return KonkanOptions.for_game(game, values)
    if game == "conquian":
        return ConquianOptions.from_dict(values)
    raise BadRecord(f"unknown game {game!r}; known games: {list(GAMES)}")


# Bounds on what a record may hold: a record comes from a file or a request, and
# reading one must cost little whatever it says. A finished match is far below them.
MAX_RECORD_BYTES = 32 * 1024 * 1024
MAX_ACTIONS = 500_000
MAX_DECKS = 1_000
MAX_TEXT = 256  # a seed, a seat's name, an option's text value
MAX_NUMBER = 2**31 - 1


def _check_json(value: Any, what: str, depth: int) -> None:
    """``value`` is JSON nested at most ``depth`` levels below it, of short strings,
    booleans and 32-bit whole numbers (no floats, no nulls below the top)."""
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        if abs(value) > MAX_NUMBER:
            raise BadRecord(f"{what}: a number beyond ±{MAX_NUMBER} is out of range")
        return
    if isinstance(value, str):
        if len(value) > MAX_TEXT:
            raise BadRecord(f"{what}: a text of {len(value)} characters is too long")
        return
    if not isinstance(value, (list, dict)):
        raise BadRecord(f"{what}: {type(value).__name__} values are not allowed here")
    if depth == 0:
        raise BadRecord(f"{what} is nested too deep")
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in items:
        if isinstance(key, str) and len(key) > MAX_TEXT:
            raise BadRecord(f"{what}: a field name is too long")
        _check_json(item, f"{what}[{key!r}]", depth - 1)


def _list_of(data: Mapping[str, Any], name: str, limit: int) -> list[Any]:
    value = data.get(name)
    if value is None:
        return []
    if not isinstance(value, list):
        raise BadRecord(f"{name} must be a list, not {type(value).__name__}")
    if len(value) > limit:
        raise BadRecord(f"{name} holds {len(value)} entries, more than {limit}")
    return value


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
    def from_json(cls, data: Any) -> GameRecord:
        """Check a record's shape strictly (types, sizes, nesting): anything else is a
        :class:`BadRecord` naming the problem, never another exception."""
        if not isinstance(data, Mapping):
            raise BadRecord("a game record is a JSON object")
        known = {"format", "game", "options", "seats", "seed", "first_dealer", "decks", "actions"}
        known |= {"comment", "expect"}
        unknown = set(data) - known
        if unknown:
            raise BadRecord(f"unknown fields in the record: {sorted(map(str, unknown))[:5]}")
        record_format = data.get("format", FORMAT)
        if isinstance(record_format, bool) or record_format != FORMAT:
            raise BadRecord(f"record format {str(record_format)[:20]!r} is not {FORMAT}")
        game = data.get("game")
        if not isinstance(game, str) or game not in GAMES:
            raise BadRecord(f"the record needs a game, one of {list(GAMES)}")
        options = data.get("options") or {}
        if not isinstance(options, Mapping):
            raise BadRecord("options must be an object of option names and values")
        _check_json(dict(options), "options", 1)
        seats = _list_of(data, "seats", 4)
        if not all(isinstance(name, str) and len(name) <= MAX_TEXT for name in seats):
            raise BadRecord(f"seats must be names, texts of at most {MAX_TEXT} characters")
        seed = data.get("seed", "0")
        if not isinstance(seed, str) or not 0 < len(seed) <= MAX_TEXT:
            raise BadRecord(f"the seed must be a text of 1 to {MAX_TEXT} characters")
        first_dealer = data.get("first_dealer")
        if first_dealer is not None and (
            isinstance(first_dealer, bool) or not isinstance(first_dealer, int)
        ):
            raise BadRecord("first_dealer must be a seat number")
        decks = _list_of(data, "decks", MAX_DECKS)
        for index, deck in enumerate(decks):
            _check_json(deck, f"decks[{index}]", 3)  # {"hands": {"0": ["7H", ...]}}
        actions = _list_of(data, "actions", MAX_ACTIONS)
        for index, action in enumerate(actions):
            if not isinstance(action, dict):
                raise BadRecord(f"actions[{index}] must be an object")
            if not isinstance(action.get("type"), str):
                raise BadRecord(f"actions[{index}] needs a type, a text such as draw")
            _check_json(action, f"actions[{index}]", 4)  # {"lay_offs": [{"cards": ["7H"]}]}
        return cls(
            game=game,
            options=dict(options),
            seats=list(seats),
            seed=seed,
            first_dealer=first_dealer,
            decks=list(decks),
            actions=list(actions),
        )

    @classmethod
    def from_bytes(cls, raw: bytes) -> GameRecord:
        """A record, or a finished match as ``GET /api/matches/{id}`` returns it (the
        record is its ``record`` field), from the bytes of a JSON document."""
        if len(raw) > MAX_RECORD_BYTES:
            raise BadRecord(f"more than {MAX_RECORD_BYTES} bytes: too large for a record")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise BadRecord(f"not UTF-8 text (byte {error.start})") from None
        try:
            data = orjson.loads(text)  # nesting bounded, no NaN, no 5,000-digit numbers
        except orjson.JSONDecodeError as error:
            raise BadRecord(f"not JSON: {error}") from None
        if isinstance(data, Mapping) and isinstance(data.get("record"), Mapping):
            data = data["record"]
        return cls.from_json(data)

    @classmethod
    def load(cls, path: str) -> GameRecord:
        """Read a record file (or a saved ``GET /api/matches/{id}``)."""
        with open(path, "rb") as handle:
            return cls.from_bytes(handle.read(MAX_RECORD_BYTES + 1))


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


class Replayer:
    """A record's states, step by step from any step: step 0 is the deal, step ``n`` the
    state after ``n`` actions. The record is replayed once, keeping the state of every
    ``every``-th step (``apply`` never changes a state, it makes a new one, so keeping
    one is keeping a reference); the steps ``start`` to ``start + count`` then cost at
    most ``every + count`` actions, whatever the length of the match."""

    def __init__(self, record: GameRecord, every: int = 100) -> None:
        self.engine = engine_for(record.game)
        self.every = every
        self.actions: list[Any] = []  # parsed, those accepted
        self.kept: list[Any] = []

        def keep(state: Any, action: Any) -> None:
            if action is not None:
                self.actions.append(action)
            if len(self.actions) % every == 0:
                self.kept.append(state)

        result = replay(record, on_step=keep)
        self.steps = result.applied + 1
        self.error = result.error  # a stored match's record has none

    def states(self, start: int, count: int) -> Iterator[Any]:
        """The states of steps ``start`` to ``start + count - 1`` (fewer at the end)."""
        stop = min(start + count, self.steps)
        if not 0 <= start < stop:
            return
        index = start - start % self.every
        state = self.kept[index // self.every]
        while True:
            if index >= start:
                yield state
            if index + 1 >= stop:
                return
            state, _ = self.engine.apply(state, self.actions[index])
            index += 1


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
    "Replayer",
    "engine_for",
    "options_for",
    "record_of",
    "replay",
    "replay_summary",
    "start",
]
