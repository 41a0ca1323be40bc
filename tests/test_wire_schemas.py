"""The JSON schemas of the games' views, events, actions and typed server messages
(``docs/schemas/``, written by ``python -m sahrat.wire_schemas``) are the code's, and
what the engines and the server emit fits them exactly.

Seeded matches of every game are played in-process by the engines' bots (and by the
turn timer, whose matches reach the rare ends: turn limits, empty stocks, drawn-deal
limits), and the Konkan rules scenarios are replayed; after every step each seat's
view, the spectator's view and every event as each of them sees it are validated
twice: by the pydantic models and by the committed JSON schema files (``jsonschema``,
Draft 2020-12). Every event type and every view field the schemas name must be seen
at least once, so a schema can neither miss what the engine sends nor promise what it
never sends. The seeds are in the test ids.
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, cast

import orjson
import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from pydantic import ValidationError

from sahrat import wire_schemas
from sahrat.bots.levels import bot_for
from sahrat.rules import conquian, konkan
from sahrat.rules.cards import conquian_deck, konkan_deck, parse_cards
from sahrat.rules.events import Event
from sahrat.rules.options import KonkanOptions
from sahrat.rules.record import GameRecord, engine_for, options_for, start
from sahrat.server.table import Connection, Table
from sahrat.server.table.messages import error_message
from sahrat.server.table.protocol import Command
from table.fakes import Entry, FakeServices, settings

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "docs" / "schemas"
SCENARIOS = Path(__file__).parent / "scenarios"
REGENERATE = "regenerate with: .venv/bin/python -m sahrat.wire_schemas"

Player = Callable[[Any, dict[str, Any]], Any]


def kind(game: str) -> str:
    return "Conquian" if game == "conquian" else "Konkan"


@functools.cache
def file_validator(name: str) -> Draft202012Validator:
    """A validator of the committed schema file ``docs/schemas/<name>.json``."""
    schema = json.loads((SCHEMAS / f"{name}.json").read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def problems(name: str, data: Any, *, by_file: bool = True) -> list[str]:
    """Why ``data`` (as the wire carries it) does not fit schema ``name``, by the models
    and (``by_file``) by the committed file; empty when it fits."""
    text = orjson.dumps(data)
    found: list[str] = []
    try:
        wire_schemas.adapter(name).validate_json(text)
    except ValidationError as error:
        found.append(f"model: {error}")
    if by_file:
        errors = file_validator(name).iter_errors(json.loads(text))
        found += [f"file: {e.message} at {list(e.absolute_path)}" for e in errors]
    return found


# --- 1. the committed files are what the code generates ------------------------------------


def test_committed_schemas_are_what_the_code_generates() -> None:
    for name in wire_schemas.SCHEMAS:
        path = SCHEMAS / f"{name}.json"
        assert path.is_file(), f"docs/schemas/{name}.json is missing: {REGENERATE}"
        assert path.read_text(encoding="utf-8") == wire_schemas.schema_text(name), (
            f"docs/schemas/{name}.json differs from the code: {REGENERATE}"
        )


def test_every_schema_file_comes_from_the_code() -> None:
    """No stale file: each one is written by ``sahrat schemas`` or by this module."""
    from sahrat.cli import SCHEMA_MODELS

    known = set(SCHEMA_MODELS) | set(wire_schemas.SCHEMAS)
    stale = sorted(p.name for p in SCHEMAS.glob("*.json") if p.stem not in known)
    assert stale == [], f"docs/schemas has files no code writes: {stale}"


def test_the_writer_writes_the_committed_files(tmp_path: Path) -> None:
    assert wire_schemas.main(["--out", str(tmp_path)]) == 0
    for name in wire_schemas.SCHEMAS:
        assert (tmp_path / f"{name}.json").read_text() == (SCHEMAS / f"{name}.json").read_text()


def test_card_patterns_name_exactly_the_decks() -> None:
    """The card patterns accept every card of each deck and nothing else of that form."""
    ranks = [*"A23456789TJQK", "10"]
    texts = {r + s + mark for r in ranks for s in "SHDCX" for mark in ("", "'", "''")}
    texts |= {"JK", "JK'", "JK''", "jk", "7h"}

    def accepted(name: str) -> set[str]:
        adapter = wire_schemas.adapter(name)
        ok = set()
        for text in texts:
            action = {"type": "discard", "card": text}
            try:
                adapter.validate_python(action)
            except ValidationError:
                continue
            ok.add(text)
        return ok

    assert accepted("KonkanAction") == {str(card) for card in konkan_deck()}
    assert accepted("ConquianAction") == {str(card) for card in conquian_deck()}


def test_the_event_types_are_the_engines() -> None:
    """Every ``Event("type"`` the engines' source makes is in the schema, and no other."""
    for game, engine in (("konkan", konkan), ("conquian", conquian)):
        source = Path(cast(str, engine.__file__)).read_text(encoding="utf-8")
        made = set(re.findall(r'Event\(\s*"([a-z_]+)"', source))
        schema = json.loads((SCHEMAS / f"{kind(game)}Event.json").read_text())
        named = set(schema["discriminator"]["mapping"])
        assert made == named, game


# --- 2. real views and events fit, every step of whole matches ------------------------------


@dataclass
class Seen:
    """What a game's plays showed: event types, view fields, and what did not fit."""

    events: set[str] = field(default_factory=set)
    by_file: dict[str, int] = field(default_factory=dict)  # events checked by the files
    view_keys: set[str] = field(default_factory=set)
    actions: set[str] = field(default_factory=set)
    steps: int = 0
    wrong: list[str] = field(default_factory=list)


def check_step(
    game: str, engine: ModuleType, state: Any, events: list[Event], seen: Seen, where: str
) -> None:
    """Validate every seat's and the spectator's view and events after one step: by the
    models always; by the committed files every tenth step's views, the last step's,
    and the first 25 events of each type (the pure-Python file check is the slow one)."""
    name = kind(game)
    views_by_file = seen.steps % 10 == 0 or state.over
    seen.steps += 1
    for viewer in [*range(state.options.players), None]:
        view = engine.view(state, viewer)
        seen.view_keys |= set(view)
        found = problems(f"{name}View", view, by_file=views_by_file)
        seen.wrong += [f"{where} view of {viewer}: {p}" for p in found]
        for action in view.get("simple_actions", []):
            if action.get("seat") != viewer:
                seen.wrong.append(f"{where}: simple action {action} is not seat {viewer}'s")
        for event in events:
            shown = event.for_seat(viewer)
            seen.events.add(shown["type"])
            checked = seen.by_file[shown["type"]] = seen.by_file.get(shown["type"], 0) + 1
            found = problems(f"{name}Event", shown, by_file=checked <= 25)
            seen.wrong += [f"{where} event {shown} to {viewer}: {p}" for p in found]
            private = {"dealt": "cards", "draw": "card"}.get(shown["type"])
            if private is not None and (private in shown) != (viewer == event.seat):
                seen.wrong.append(f"{where}: {shown} shown to {viewer}")


def timer_player(engine: ModuleType) -> Player:
    return lambda state, view: engine.timeout_action(state)


def bot_player(game: str, level: str) -> Player:
    bot = bot_for(game, level, seed="wire")
    return lambda state, view: bot(view)


# (game, options, who plays, seed): the bots' matches meld, lay off, swap and force; the
# timers' reach the rare ends (reshuffles and turn limits, exhausted stocks, drawn deals).
MATCHES = [
    ("konkan", {}, "strong", "wire-a"),
    ("konkan", {"players": 2, "rounds": 3, "swapped_joker_must_be_laid": True}, "strong", "wire-b"),
    ("konkan71", {"players": 3, "rounds": 2, "hand_rummy": True}, "simple", "wire-c"),
    ("konkan", {"rounds": 1, "max_extra_rounds": 0, "max_round_turns": 100}, "timer", "wire-d"),
    (
        "konkan",
        {"players": 2, "rounds": 1, "max_extra_rounds": 0, "max_reshuffles": 0},
        "timer",
        "wire-e",
    ),
    ("conquian", {}, "strong", "wire-f"),
    ("conquian", {}, "simple", "wire-i"),  # forces, and a declined force
    ("conquian", {"max_drawn_deals": 2}, "timer", "wire-h"),
]


@functools.cache
def play(game: str, options_json: str, who: str, seed: str) -> Seen:
    engine = engine_for(game)
    options = options_for(game, json.loads(options_json))
    state = engine.new_game(options, seed)
    seen = Seen()
    players = [
        timer_player(engine) if who == "timer" else bot_player(game, who)
        for _ in range(options.players)
    ]
    # the deal: the events new_game made are those of the match's start (step 0)
    check_step(game, engine, state, [], seen, f"{seed} step 0")
    while not state.over:
        seat = engine.to_act(state)
        action = players[seat](state, engine.view(state, seat))
        wire_action = {k: v for k, v in engine.action_to_json(action).items() if k != "seat"}
        seen.actions.add(wire_action["type"])
        seen.wrong += [
            f"{seed} action {wire_action}: {p}"
            for p in problems(f"{kind(game)}Action", wire_action)
        ]
        state, events = engine.apply(state, action)
        check_step(game, engine, state, events, seen, f"{seed} step {seen.steps}")
    return seen


@pytest.mark.parametrize(("game", "options", "who", "seed"), MATCHES, ids=[m[3] for m in MATCHES])
def test_every_view_and_event_of_a_match_fits(
    game: str, options: dict[str, Any], who: str, seed: str
) -> None:
    seen = play(game, json.dumps(options, sort_keys=True), who, seed)
    assert seen.steps > 20
    assert seen.wrong == [], "\n".join(seen.wrong[:5])


def scenario_files() -> list[Path]:
    return sorted((SCENARIOS / "konkan").glob("*.json"))


@functools.cache
def replay_scenarios() -> Seen:
    """Every Konkan rules scenario replayed up to its first refused action (stacked decks:
    no round commitments; redeals, commitments, joker swaps, exhausted stocks)."""
    seen = Seen()
    for path in scenario_files():
        record = GameRecord.from_json(json.loads(path.read_text(encoding="utf-8")))
        engine = engine_for(record.game)
        state = start(record)
        check_step(record.game, engine, state, [], seen, f"{path.name} step 0")
        for index, raw in enumerate(record.actions):
            try:
                state, events = engine.apply(state, engine.action_from_json(raw))
            except ValueError:
                break
            seen.actions.add(raw["type"])
            check_step(record.game, engine, state, events, seen, f"{path.name} step {index + 1}")
    return seen


def test_every_view_and_event_of_the_rules_scenarios_fits() -> None:
    seen = replay_scenarios()
    assert seen.steps > 300
    assert seen.wrong == [], "\n".join(seen.wrong[:5])


@functools.cache
def joker_hand() -> Seen:
    """A hand of jokers alone: seat 1 lays all but a joker and a card, discards the card,
    and draws the other joker; its only move is ``end_turn`` (stacked deck, seed
    wire-jokers)."""
    seen = Seen()
    hand = parse_cards("JK 5C 2H 3H 4H 5H 6H 7H 8H 9H TH KS KH KD KC")
    deck = konkan.stacked_deck({1: hand}, parse_cards("6C JK'"), players=2, dealer=0)
    state = konkan.new_game(KonkanOptions(players=2), "wire-jokers", [deck], 0)
    run, kings = hand[2:11], hand[11:]
    moves: list[konkan.Action | None] = [
        konkan.LayDown(1, (tuple(run), tuple(kings))),
        konkan.Discard(1, hand[1]),
        None,  # seat 0: the timer draws
        None,  # ...and discards
        konkan.Draw(1),
        konkan.EndTurn(1),
    ]
    for index, move in enumerate(moves):
        action = konkan.timeout_action(state) if move is None else move
        seen.actions.add(konkan.action_to_json(action)["type"])
        state, events = konkan.apply(state, action)
        check_step("konkan", konkan, state, events, seen, f"wire-jokers step {index + 1}")
    return seen


def test_a_hand_of_jokers_alone_fits() -> None:
    seen = joker_hand()
    assert "end_turn" in seen.events
    assert seen.wrong == [], "\n".join(seen.wrong[:5])


def test_the_schemas_promise_nothing_the_engines_never_send() -> None:
    """Across the matches (and the scenarios), every event type, view field and action
    type a schema names was sent at least once."""
    for game in ("Konkan", "Conquian"):
        seen = Seen()
        plays = [
            play(g, json.dumps(o, sort_keys=True), w, s)
            for g, o, w, s in MATCHES
            if kind(g) == game
        ]
        if game == "Konkan":
            plays += [replay_scenarios(), joker_hand()]
        for one in plays:
            seen.events |= one.events
            seen.view_keys |= one.view_keys
            seen.actions |= one.actions
        events = json.loads((SCHEMAS / f"{game}Event.json").read_text())["discriminator"]["mapping"]
        assert seen.events == set(events), game
        view = json.loads((SCHEMAS / f"{game}View.json").read_text())["properties"]
        assert seen.view_keys == set(view), game
        actions = json.loads((SCHEMAS / f"{game}Action.json").read_text())["discriminator"][
            "mapping"
        ]
        assert seen.actions == set(actions), game


# --- 3. a changed view or event is refused --------------------------------------------------


def konkan_view() -> dict[str, Any]:
    state = konkan.new_game(KonkanOptions(), "wire-mutant")
    view: dict[str, Any] = konkan.view(state, konkan.to_act(state))
    assert problems("KonkanView", view) == []
    return view


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda v: v.update(extra=1), "an extra field"),
        (lambda v: v.pop("stock_count"), "a missing field"),
        (lambda v: v.pop("opening_target"), "a view without its opening target"),
        (lambda v: v.update(opening_target=None), "an opening target that is no number"),
        (lambda v: v.update(turn="1"), "a seat as text"),
        (lambda v: v.update(round_commitment="abc"), "a commitment that is no SHA-256"),
        (lambda v: v["hand"].append("1X"), "a card that is none"),
        (
            lambda v: v["melds"].append({"id": 0, "owner": 0, "kind": "run", "cards": []}),
            "a meld without joker_for",
        ),
        (lambda v: v["simple_actions"].append({"type": "discard"}), "an action missing its card"),
        (lambda v: v.update(options={**v["options"], "colour": "red"}), "an unknown option"),
    ],
    ids=lambda x: x if isinstance(x, str) else "",
)
def test_a_changed_view_is_refused(change: Callable[[dict[str, Any]], Any], why: str) -> None:
    view = konkan_view()
    change(view)
    found = problems("KonkanView", view)
    assert any(p.startswith("model:") for p in found), why
    assert any(p.startswith("file:") for p in found), why


def test_a_changed_event_is_refused() -> None:
    good = {"type": "pass", "seat": 0, "card": "7H"}
    assert problems("ConquianEvent", good) == []
    for bad in (
        {**good, "hand_count": 3},  # a field the pass event does not have
        {"type": "pass", "seat": 0},  # its card missing
        {**good, "type": "passed"},  # no such event
        {**good, "card": "8H"},  # no 8 in Conquian
        {**good, "seat": 2},  # two seats only
    ):
        found = problems("ConquianEvent", bad)
        assert any(p.startswith("model:") for p in found), bad
        assert any(p.startswith("file:") for p in found), bad


# --- 4. the server's messages fit the typed envelopes ------------------------------------------


def stub_services() -> FakeServices:
    """The process around a table, in memory (no database): the names it shows."""
    return FakeServices(
        settings=settings(hint_level="simple"),
        names={1: "amal", 2: "badr", 3: "dana", 4: "fahd"},
    )


def drain(conn: Connection) -> Iterator[dict[str, Any]]:
    while not conn.outbox.empty():
        text = conn.outbox.get_nowait()
        if isinstance(text, str):
            yield orjson.loads(text)


@pytest.mark.parametrize(
    ("game", "seed"), [("konkan", "wire-s1"), ("konkan71", "wire-s2"), ("conquian", "wire-s3")]
)
def test_the_servers_messages_fit_the_typed_envelopes(game: str, seed: str) -> None:
    """A table of the server (no sockets, no database) plays the match dealt from
    ``seed`` through its commands, its players' moves chosen by bots; every message it
    sends (snapshots, updates, replies, breaks, a resume, table messages, a reaction, a
    hint), for each seat and a spectator, fits ``<Game>ServerMessage.json``."""
    name = f"{kind(game)}ServerMessage"

    async def run() -> list[dict[str, Any]]:
        options = options_for(game, {"players": 3} if game != "conquian" else {})
        players = int(options.players)
        table = Table(
            stub_services(),  # type: ignore[arg-type]
            table_id=7,
            game=game,
            options=options.to_json(),
            private=False,
            invite_code=None,
            creator_id=1,
            status="playing",
            seq=1,
            seats=list(range(1, players + 1)),
            deadline=time.time() + 30,
        )
        table.restore([Entry(1, "start", {"seed": seed})])  # the match of that deal
        engine = table.engine
        watchers = [Connection(user_id=user) for user in [*range(1, players + 1), 99]]
        for conn in watchers:
            table.connect(conn, None)
        bots = [bot_for(game, "simple") for _ in range(players)]
        sent: list[dict[str, Any]] = []
        moves = 0
        while not table.match.state.over:
            if table.pace.round_break is not None:  # everyone has read the summary
                for conn in watchers[:players]:
                    table.continue_play(conn)
            state = table.match.state
            seat = engine.to_act(state)
            if moves == 0:
                await table.hint(watchers[seat])  # the bot's suggestion for that turn
                stale = Command(type="command", cid="c-stale", seq=0, action={"type": "pass"})
                await table.command(watchers[seat], stale)  # refused with a snapshot
            action = dict(engine.action_to_json(bots[seat](engine.view(state, seat))))
            action.pop("seat")
            command = Command(type="command", cid=f"c{moves}", seq=table.seq, action=action)
            await table.command(watchers[seat], command)
            moves += 1
            sent += [m for conn in watchers for m in drain(conn)]
        late = [Connection(user_id=user) for user in (1, 99)]
        for conn, since in zip(late, (table.seq - 5, table.seq - 3), strict=True):
            table.connect(conn, since)  # a resume with the missed updates
        table.react(late[0], "good_game")
        late[0].send(error_message(table.seq, "bad_json", "not JSON"))
        late[0].send({"type": "pong", "seq": table.seq, "payload": {}})
        for conn in [*watchers, *late]:
            sent += list(drain(conn))
        table.close()
        return sent

    sent = asyncio.run(run())
    kinds = {message["type"] for message in sent}
    assert kinds >= {
        "snapshot",
        "update",
        "resume",
        "table",
        "break",
        "reaction",
        "reply",
        "error",
        "hint",
        "pong",
    }
    resumes = [m for m in sent if m["type"] == "resume"]
    assert resumes and all(m["payload"]["missed"] for m in resumes)
    replies = [m["payload"] for m in sent if m["type"] == "reply"]
    assert any(reply.get("snapshot") for reply in replies)  # the stale command's
    wrong = [
        f"{m['type']} seq {m['seq']}: {p}"
        for m in sent
        for p in problems(name, m, by_file=m["type"] != "update" or m["seq"] % 10 == 0)
    ]
    assert wrong == [], "\n".join(wrong[:5])
    # ...and a message changed by one field is refused
    update = next(m for m in sent if m["type"] == "update")
    assert problems(name, {**update, "payload": {**update["payload"], "extra": 1}})
    assert problems(name, {**update, "payload": {**update["payload"], "by": "robot"}})


# --- 5. docs/protocol.md names everything a client meets ------------------------------------


def test_the_protocol_doc_names_every_code_event_field_and_message() -> None:
    """Every engine error code, every error code the server's source sends, every event
    type, view field and action type of the schemas, and every message type both ways
    is written in docs/protocol.md (as `code`)."""
    from sahrat.rules import errors
    from sahrat.server.socket.dispatch import BARE_MESSAGES
    from sahrat.server.table import protocol

    doc = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    names: set[str] = set()
    for value in vars(errors).values():
        if isinstance(value, type) and issubclass(value, errors.RuleError):
            names.add(value.code)
    names.discard(errors.RuleError.code)  # the base class: never raised as such
    patterns = [
        r'refusal\(\s*[\w.]+,\s*"([a-z_]+)"',
        r'"code":\s*"([a-z_]+)"',
        r'error_message\(\s*[^,()]+(?:\(\))?,\s*"([a-z_]+)"',
        r'refuse\(\s*conn,[^,]+,[^,]+,\s*"([a-z_]+)"',
        r'problem = "([a-z_]+)"',
        r'return "([a-z_]+)", "',
        r'TableError\(\s*"([a-z_]+)"',
    ]
    for path in sorted((ROOT / "src" / "sahrat" / "server").rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        for pattern in patterns:
            names |= set(re.findall(pattern, source))
    for game in ("Konkan", "Conquian"):
        for name in ("Event", "Action"):
            schema = json.loads((SCHEMAS / f"{game}{name}.json").read_text())
            names |= set(schema["discriminator"]["mapping"])
        names |= set(json.loads((SCHEMAS / f"{game}View.json").read_text())["properties"])
    names |= set(protocol.MESSAGE_PAYLOADS) | set(BARE_MESSAGES) | {"command", "react"}
    missing = sorted(name for name in names if f"`{name}`" not in doc)
    assert missing == [], f"docs/protocol.md does not name {missing}"
