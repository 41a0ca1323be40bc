"""Protocol fuzzing: many connections send hostile messages to a live server.

Several tables (two-player Conquian, three- and four-player Konkan, Konkan
against a bot, a table still waiting), each with its seated players, a second
connection of one player, spectators and a player of another table, send
``SAHRAT_FUZZ_COMMANDS`` messages in all (default 10,000; the full run is 100,000,
``docs/hardening.md``): malformed JSON, wrong types, unknown fields, payloads
over and exactly at the size limit, binary frames, commands naming other seats
or other tables, out-of-turn and illegal moves, replays of earlier messages
(same cid), stale and future seqs — seeded by ``SAHRAT_FUZZ_SEED`` (printed).
Between bursts the seat to act plays a legal move, so the matches go on.

Checked: every message gets exactly one answer, in order, on its own connection
(a ``reply`` with its cid for a command with a usable cid, else an ``error``, a
``pong`` for a ping), with a code documented in docs/protocol.md or
docs/konkan.md; no connection is dropped, no answer is late (a hang), no
traceback in the server's log; every legal move in between is accepted. After
the fuzz the server still answers a ping and a legal move, and each table's
event log, replayed through the engine with ``check_invariants`` after every
step, ends in the state whose views every connection last received; each
accepted (seat, cid) is in the log exactly once (a replay is never applied
twice). Results go to ``test-artifacts/hardening/protocol_fuzz.json``.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import sqlite3
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from sahrat.rules.record import GameRecord, engine_for, replay
from server.harness import (
    ALL_CARDS,
    REPO,
    Api,
    ServerProcess,
    WireClient,
    assert_seqs_consecutive,
    engine_and_player,
    wire_action,
)

from .conftest import NO_RATE_LIMITS, env_count, env_seed, write_results

MAX_BYTES = 16384  # SAHRAT_MAX_MESSAGE_BYTES's default, which the server runs with
ANSWER_SECONDS = 30.0  # an answer later than this is a hang
BURST = 24  # messages per connection between two drains (the outbox holds 1024)
DRIVER_MOVES = 2  # legal moves per playing table between bursts


# --- the documented codes ----------------------------------------------------------------


def _section(text: str, start: str, end: str) -> str:
    begin = text.index(start)
    return text[begin : text.index(end, begin + len(start))]


def _first_cells(section: str) -> set[str]:
    codes: set[str] = set()
    for line in section.splitlines():
        if line.startswith("| `"):
            codes |= set(re.findall(r"`([a-z_]+)`", line.split("|")[1]))
    return codes


def documented_codes() -> tuple[set[str], set[str]]:
    """(reply codes, error-message codes) as docs/protocol.md and docs/konkan.md list them."""
    protocol = (REPO / "docs" / "protocol.md").read_text()
    konkan = (REPO / "docs" / "konkan.md").read_text()
    section = _section(protocol, "### Error codes", "\n### ")
    # The replies' own codes, then the engines' tables (the "engine codes" row names none).
    replies = _first_cells(_section(section, "**Replies**", "**`error` messages**"))
    replies |= _first_cells(_section(konkan, "## Error codes", "\n## "))
    errors = _first_cells(section[section.index("**`error` messages**") :])
    return replies, errors


REPLY_CODES, ERROR_CODES = documented_codes()


def test_documented_codes_are_read() -> None:
    assert {"spectator", "stale", "not_your_seat", "bad_command", "unavailable"} <= REPLY_CODES
    assert {"not_your_turn", "invalid_lay_off", "cannot_force", "meld_cards_changed"} <= REPLY_CODES
    assert {
        "bad_json",
        "bad_message",
        "bad_command",
        "bad_reaction",
        "too_many_reactions",
        "message_too_large",
    } <= ERROR_CODES


# --- connections and what each message must get -------------------------------------------


@dataclass
class Expect:
    """The one answer a sent message must get: ``reply`` (with ``cid``), ``error``,
    ``pong``, or ``either`` (a reply with ``cid`` or an error); ``code`` when certain."""

    kind: str
    cid: str | None = None
    code: str | None = None


@dataclass
class FuzzTable:
    id: int
    game: str
    players: int
    bots: set[int] = field(default_factory=set)
    conns: list[Conn] = field(default_factory=list)

    def seat_conn(self, seat: int) -> Conn:
        return next(c for c in self.conns if c.seat == seat and c.primary)


@dataclass(eq=False)
class Conn:
    client: WireClient
    table: FuzzTable
    seat: int | None
    primary: bool = True  # the seat's main connection (a second one may exist)
    sent: list[tuple[Expect, str | bytes]] = field(default_factory=list)
    scanned: int = 0  # messages of client.messages looked at
    matched: int = 0  # answers matched to sent messages

    @property
    def name(self) -> str:
        return self.client.name


@dataclass
class Tally:
    sent: int = 0
    answered: int = 0
    commands: int = 0  # messages of type "command" among them
    replies: int = 0
    errors: int = 0
    pongs: int = 0
    accepted: int = 0
    legal_moves: int = 0
    crashes: int = 0
    hangs: int = 0
    codes: Counter[str] = field(default_factory=Counter)
    categories: Counter[str] = field(default_factory=Counter)
    accepted_cids: dict[int, Counter[tuple[int, str]]] = field(default_factory=dict)


class Failure(AssertionError):
    pass


def _describe(conn: Conn, index: int) -> str:
    expect, raw = conn.sent[index]
    shown = raw[:300] if isinstance(raw, (str, bytes)) else raw
    return f"{conn.name} message #{index} ({expect}): {shown!r}"


def collect(conn: Conn, tally: Tally) -> None:
    """Match newly received answers, in order, to the messages sent."""
    messages = conn.client.messages
    while conn.scanned < len(messages):
        message = messages[conn.scanned]
        conn.scanned += 1
        kind = message["type"]
        if kind not in ("reply", "error", "pong"):
            continue
        if conn.matched >= len(conn.sent):
            raise Failure(f"{conn.name}: an answer to nothing: {json.dumps(message)[:500]}")
        expect, _raw = conn.sent[conn.matched]
        where = _describe(conn, conn.matched)
        conn.matched += 1
        tally.answered += 1
        payload = message["payload"]
        if kind == "pong":
            tally.pongs += 1
            assert expect.kind == "pong", f"a pong for {where}"
            continue
        if kind == "error":
            tally.errors += 1
            code = payload["code"]
            tally.codes[f"error:{code}"] += 1
            assert expect.kind in ("error", "either"), f"an error {code} for {where}"
            assert code in ERROR_CODES, f"undocumented error code {code!r} for {where}"
            assert expect.code in (None, code), f"error {code} for {where}"
            assert payload["message"], where
            continue
        tally.replies += 1
        assert expect.kind in ("reply", "either"), f"a reply {payload} for {where}"
        assert payload["cid"] == expect.cid, f"reply for cid {payload['cid']!r} to {where}"
        if payload["ok"]:
            assert set(payload) == {"cid", "ok"}, (payload, where)
            assert expect.code is None, f"accepted: {where}"
            tally.accepted += 1
            tally.codes["ok"] += 1
            assert conn.seat is not None, f"a spectator's command accepted: {where}"
            tally.accepted_cids.setdefault(conn.table.id, Counter())[
                (conn.seat, payload["cid"])
            ] += 1
            continue
        code = payload["error"]["code"]
        tally.codes[code] += 1
        assert code in REPLY_CODES, f"undocumented reply code {code!r} for {where}"
        assert code != "unavailable", f"unavailable (a server exception?) for {where}"
        assert expect.code in (None, code), f"reply {code} for {where}"
        assert payload["error"]["message"], where
        if code == "stale":
            assert payload["snapshot"]["table"]["seq"] == message["seq"], where


async def drain(conns: list[Conn], tally: Tally) -> None:
    """Wait until every message sent so far is answered (a dropped connection is a crash,
    an answer later than ANSWER_SECONDS a hang)."""

    async def one(conn: Conn) -> None:
        def done() -> bool:
            collect(conn, tally)
            return conn.matched == len(conn.sent)

        try:
            await conn.client.wait_until(done, timeout=ANSWER_SECONDS)
        except Failure:
            raise
        except AssertionError as error:
            if conn.client.closed:
                tally.crashes += 1
                what = f"dropped (close code {conn.client.ws.close_code})"
            else:
                tally.hangs += 1
                what = f"no answer within {ANSWER_SECONDS}s"
            pending = conn.sent[conn.matched][1] if conn.matched < len(conn.sent) else None
            shown = pending[:300] if pending is not None else None
            raise Failure(
                f"{conn.name}: {what}; {len(conn.sent) - conn.matched} unanswered, "
                f"the first: {shown!r} ({error})"
            ) from None

    await asyncio.gather(*(one(conn) for conn in conns))


async def send(conn: Conn, raw: str | bytes, expect: Expect, tally: Tally, category: str) -> None:
    conn.sent.append((expect, raw))
    tally.sent += 1
    tally.categories[category] += 1
    if isinstance(raw, str) and raw.startswith('{"type": "command"'):
        tally.commands += 1
    await conn.client.ws.send(raw)


# --- hostile messages ------------------------------------------------------------------------

BAD_CARDS = ["", "ZZ", "1H", "10H", "7h", "JK", "JKR", " 7H", "7H ", "XJ", "🂡", "7H,8H", "A"]
UNICODE = "abcXYZ019-_ سهرات ☃é\u200f\t"
KONKAN_TYPES = [
    "draw",
    "take_discard",
    "lay_down",
    "swap_joker",
    "discard",
    "commit",
    "claim_redeal",
    "end_turn",
]
CONQUIAN_TYPES = ["take", "refuse", "pass", "discard", "force", "decline_force"]
ODD_VALUES: list[Any] = [None, True, False, 0, -1, 1.5, 2**63, "", "x", [], {}, [[]], {"a": 1}]


class Fuzzer:
    """Hostile messages from a seeded generator; each with the answer it must get."""

    def __init__(self, rng: random.Random, known_bugs: bool) -> None:
        self.rng = rng
        self.known_bugs = known_bugs
        self.cid_count = 0
        self.history: dict[int, list[tuple[Expect, str | bytes]]] = {}  # by table
        self.categories: list[tuple[str, int, Callable[[Conn], tuple[str | bytes, Expect]]]] = [
            ("bad_json", 8, self.bad_json),
            ("binary", 4, self.binary),
            ("too_large", 3, self.too_large),
            ("at_limit", 1, self.at_limit),
            ("envelope", 8, self.envelope),
            ("bad_fields", 14, self.bad_fields),
            ("hostile_action", 30, self.hostile_action),
            ("other_seat", 8, self.other_seat),
            ("out_of_turn", 6, self.out_of_turn),
            ("replay", 10, self.replay),
            ("stale", 5, self.stale),
            ("ping", 3, self.ping),
            ("bad_react", 2, self.bad_react),
        ]
        if known_bugs:
            self.categories.append(("known_bugs", 2, self.known_bug))
        self.weights = [weight for _name, weight, _make in self.categories]

    def make(self, conn: Conn) -> tuple[str, str | bytes, Expect]:
        name, _weight, make = self.rng.choices(self.categories, self.weights)[0]
        raw, expect = make(conn)
        self.history.setdefault(conn.table.id, []).append((expect, raw))
        return name, raw, expect

    # -- pieces

    def cid(self) -> str:
        self.cid_count += 1
        if self.rng.random() < 0.2:
            tail = "".join(self.rng.choice(UNICODE) for _ in range(self.rng.randint(0, 8)))
            return f"f{self.cid_count}{tail}"[:64]
        return f"f{self.cid_count}"

    def text(self, limit: int = 12) -> str:
        return "".join(self.rng.choice(UNICODE) for _ in range(self.rng.randint(0, limit)))

    def card(self, conn: Conn) -> Any:
        roll = self.rng.random()
        hand = (conn.client.view or {}).get("hand") or []
        if roll < 0.45 and hand:
            return self.rng.choice(hand)
        if roll < 0.8:
            return self.rng.choice(sorted(ALL_CARDS))
        if roll < 0.95:
            return self.rng.choice(BAD_CARDS)
        return self.rng.choice(ODD_VALUES)

    def cards(self, conn: Conn) -> Any:
        if self.rng.random() < 0.05:
            return self.rng.choice(ODD_VALUES)
        if self.rng.random() < 0.05:
            return " ".join(str(self.card(conn)) for _ in range(3))
        return [self.card(conn) for _ in range(self.rng.randint(0, 6))]

    def melds(self, conn: Conn) -> Any:
        if self.rng.random() < 0.1:
            return self.rng.choice(ODD_VALUES)
        return [self.cards(conn) for _ in range(self.rng.randint(0, 4))]

    def meld_id(self) -> Any:
        if self.rng.random() < 0.2:
            return self.rng.choice(ODD_VALUES)
        return self.rng.randint(-2, 12)

    def lay_offs(self, conn: Conn) -> Any:
        if self.rng.random() < 0.15:
            return self.rng.choice(ODD_VALUES)
        out = []
        for _ in range(self.rng.randint(0, 3)):
            item: dict[str, Any] = {"meld": self.meld_id(), "cards": self.cards(conn)}
            if self.rng.random() < 0.2:
                item["joker_low"] = self.rng.choice([True, False, "yes", None])
            if self.rng.random() < 0.1:
                item[self.text(6) or "x"] = 1
            out.append(item)
        return out

    def action(self, conn: Conn) -> Any:
        rng = self.rng
        if rng.random() < 0.05:
            return rng.choice(ODD_VALUES[:9])  # not even an object (bad_command)
        types = KONKAN_TYPES if conn.table.game != "conquian" else CONQUIAN_TYPES
        if rng.random() < 0.1:
            types = CONQUIAN_TYPES if types is KONKAN_TYPES else KONKAN_TYPES
        kind: Any = rng.choice(types)
        if rng.random() < 0.05:
            kind = rng.choice([*ODD_VALUES, "DRAW", "discard ", self.text()])
        action: dict[str, Any] = {"type": kind}
        if kind in ("take_discard", "lay_down", "swap_joker", "take") or rng.random() < 0.05:
            action["melds"] = self.melds(conn)
        if kind in ("take_discard", "lay_down", "swap_joker") and rng.random() < 0.5:
            action["lay_offs"] = self.lay_offs(conn)
        if kind == "swap_joker":
            action["meld"] = self.meld_id()
            action["cards"] = self.cards(conn)
        if kind == "discard" or rng.random() < 0.05:
            action["card"] = self.card(conn)
        if rng.random() < 0.1:
            action[rng.choice(["table", "table_id", "cid", "by", self.text(6) or "y"])] = (
                rng.choice(ODD_VALUES)
            )
        if rng.random() < 0.1:
            action["seat"] = rng.choice([*ODD_VALUES, conn.seat, 0, 1, 2, 3, 4])
        if rng.random() < 0.1 and isinstance(action.get("type"), str):
            action.pop("type")
        return action

    def seq(self, conn: Conn) -> Any:
        current = conn.client.seq or 0
        roll = self.rng.random()
        if roll < 0.75:
            return current
        return self.rng.choice(
            [current - 1, current - 3, current + 1, current + 7, 0, 2**31, 2**63, 10**30]
        )

    def command(self, conn: Conn, action: Any, seq: Any = None, cid: str | None = None) -> str:
        seq = self.seq(conn) if seq is None else seq
        message = {"type": "command", "cid": cid or self.cid(), "seq": seq, "action": action}
        return json.dumps(message, ensure_ascii=self.rng.random() < 0.5)

    # -- categories

    def bad_json(self, conn: Conn) -> tuple[str | bytes, Expect]:
        rng = self.rng
        valid = self.command(conn, {"type": "draw"})
        choices = [
            valid[: rng.randint(0, len(valid) - 1)],  # truncated
            "{" + self.text(30),
            "{'type': 'command'}",
            '{"type": "command",}',
            '{"type": "command" "cid": "x"}',
            "[1, 2",
            "\x00",
            " ",
            "ping",
            '{"type": "ping"}}',
            '{"type": "ping"} {"type": "ping"}',
            valid + ",",
            "{" * rng.randint(1, 50),
        ]
        return rng.choice(choices), Expect("error", code="bad_json")

    def binary(self, conn: Conn) -> tuple[str | bytes, Expect]:
        rng = self.rng
        if rng.random() < 0.5:
            raw = self.command(conn, {"type": "draw"}).encode()
        else:
            raw = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 200)))
        return raw, Expect("error", code="bad_message")

    def too_large(self, conn: Conn) -> tuple[str | bytes, Expect]:
        rng = self.rng
        size = MAX_BYTES + rng.choice([1, 2, 100, MAX_BYTES, 3 * MAX_BYTES])
        if rng.random() < 0.002:  # just under SAHRAT_MAX_FRAME_BYTES (above it: 1009)
            size = (1 << 20) - 256
        filler = rng.choice(["x", "س", "☃", "🂡"])  # 1, 2, 3 and 4 bytes in UTF-8
        head = '{"type": "command", "cid": "big", "seq": 1, "action": {"type": "draw", "pad": "'
        count = (size - len(head.encode()) - 3) // len(filler.encode()) + 1
        raw = head + filler * count + '"}}'
        assert len(raw.encode()) > MAX_BYTES
        if rng.random() < 0.3:
            raw = ("[" * 20 + "0" + "]" * 20 + " ") * (size // 42 + 1)
        return raw, Expect("error", code="message_too_large")

    def at_limit(self, conn: Conn) -> tuple[str | bytes, Expect]:
        """A command of exactly MAX_BYTES (allowed), bloated by an unknown field."""
        cid = self.cid()
        head = json.dumps({"type": "command", "cid": cid, "seq": self.seq(conn), "action": {}})
        head = head[:-1] + ', "pad": "'
        raw = head + "x" * (MAX_BYTES - len(head.encode()) - 2) + '"}'
        assert len(raw.encode()) == MAX_BYTES
        return raw, Expect("reply", cid, "bad_command")

    def envelope(self, conn: Conn) -> tuple[str | bytes, Expect]:
        rng = self.rng
        roll = rng.random()
        if roll < 0.3:  # valid JSON, not an object
            value = rng.choice([1, -2.5, "command", None, True, [], [{"type": "command"}], "{}"])
            return json.dumps(value), Expect("error", code="bad_message")
        if roll < 0.55:
            kind = rng.choice(
                [None, 1, [], {}, "COMMAND", "command ", "commands", "pong", "reply", "update"]
            )
            message = {"type": kind, "cid": self.cid(), "seq": 1, "action": {"type": "draw"}}
            return json.dumps(message), Expect("error", code="bad_message")
        if roll < 0.62:  # a table message with a field its schema does not have
            kind = rng.choice(["continue", "rematch", "hint", "react"])
            message = {"type": kind, rng.choice(["seat", "x", "reaction2"]): self.text()}
            return json.dumps(message), Expect(
                "error", code="bad_reaction" if kind == "react" else "bad_message"
            )
        if roll < 0.7:
            return json.dumps({"cid": self.cid(), "seq": 1, "action": {}}), Expect(
                "error", code="bad_message"
            )
        if roll < 0.85:  # its schema forbids extra fields: refused, not answered pong
            return json.dumps({"type": "ping", "extra": self.text()}), Expect(
                "error", code="bad_message"
            )
        return json.dumps({"type": "command"}), Expect("error", code="bad_command")

    def bad_fields(self, conn: Conn) -> tuple[str | bytes, Expect]:
        """A command with at least one field that cannot validate."""
        rng = self.rng
        cid: Any = self.cid()
        message: dict[str, Any] = {"type": "command", "cid": cid, "seq": conn.client.seq or 0}
        message["action"] = {"type": "draw"}
        broken = rng.choice(["cid", "seq", "action", "extra", "missing"])
        if broken == "cid":
            cid = message["cid"] = rng.choice(["", "c" * 65, "ك" * 65, None, 7, [], {}, 1.5])
        elif broken == "seq":
            message["seq"] = rng.choice([-1, -(2**40), 1.5, None, [], {}, "x", "1.5"])
        elif broken == "action":
            message["action"] = rng.choice([None, 1, "draw", [], [{"type": "draw"}], True])
        elif broken == "extra":
            key = rng.choice(["table", "table_id", "seat", "token", "since", self.text() + "z"])
            message[key] = rng.choice(ODD_VALUES)
        else:
            message.pop(rng.choice(["cid", "seq", "action"]))
            cid = message.get("cid")
        raw = json.dumps(message, ensure_ascii=rng.random() < 0.5)
        if isinstance(cid, str) and cid:
            return raw, Expect("reply", cid, "bad_command")
        return raw, Expect("error", code="bad_command")

    def hostile_action(self, conn: Conn) -> tuple[str | bytes, Expect]:
        cid = self.cid()
        action = self.action(conn)
        if not isinstance(action, dict):
            return self.command(conn, action, cid=cid), Expect("reply", cid, "bad_command")
        return self.command(conn, action, cid=cid), Expect("reply", cid)

    def other_seat(self, conn: Conn) -> tuple[str | bytes, Expect]:
        """A move (often the one the actor could play) for another seat."""
        view = conn.client.view or {}
        others = [s for s in range(conn.table.players) if s != conn.seat]
        simple = list(view.get("simple_actions") or [])
        if simple and self.rng.random() < 0.5:
            action = dict(self.rng.choice(simple))
        else:
            action = self.action(conn)
            if not isinstance(action, dict):
                action = {"type": "draw"}
        action["seat"] = self.rng.choice(others)
        cid = self.cid()
        return self.command(conn, action, cid=cid), Expect("reply", cid)

    def out_of_turn(self, conn: Conn) -> tuple[str | bytes, Expect]:
        """A move that is often legal for someone, sent by whoever this is."""
        hand = (conn.client.view or {}).get("hand") or []
        choices: list[dict[str, Any]] = [{"type": "draw"}, {"type": "end_turn"}]
        if conn.table.game == "conquian":
            choices = [{"type": "pass"}, {"type": "refuse"}, {"type": "force"}]
        if hand:
            choices.append({"type": "discard", "card": self.rng.choice(hand)})
        cid = self.cid()
        return self.command(conn, self.rng.choice(choices), cid=cid), Expect("reply", cid)

    def replay(self, conn: Conn) -> tuple[str | bytes, Expect]:
        """An earlier message of this table, sent again verbatim (same cid, same seq)."""
        earlier = self.history.get(conn.table.id) or []
        if not earlier:
            return self.ping(conn)
        expect, raw = self.rng.choice(earlier[-400:])
        if expect.kind in ("reply", "either"):
            return raw, Expect(expect.kind, expect.cid, "bad_command" if expect.code else None)
        return raw, expect

    def stale(self, conn: Conn) -> tuple[str | bytes, Expect]:
        current = conn.client.seq or 0
        seq = self.rng.choice([max(0, current - self.rng.randint(1, 5)), current + 1])
        action = dict(self.rng.choice((conn.client.view or {}).get("simple_actions") or [{}]))
        action.pop("seat", None)
        cid = self.cid()
        return self.command(conn, action or {"type": "draw"}, seq=seq, cid=cid), Expect(
            "reply", cid
        )

    def ping(self, conn: Conn) -> tuple[str | bytes, Expect]:
        return '{"type": "ping"}', Expect("pong")

    def bad_react(self, conn: Conn) -> tuple[str | bytes, Expect]:
        reaction = self.rng.choice([None, 1, "", "HELLO", "gg", self.text(), ["hello"], {}])
        message: dict[str, Any] = {"type": "react", "reaction": reaction}
        if self.rng.random() < 0.3:
            message = {"type": "react", "reaction": "hello", "text": self.text()}
        return json.dumps(message), Expect("error", code="bad_reaction")

    def known_bug(self, conn: Conn) -> tuple[str | bytes, Expect]:
        raw, expect = self.rng.choice(KNOWN_BUGS)
        return raw, expect


# Messages that once dropped the connection unanswered (docs/hardening.md, "Bugs found
# and fixed"): nesting deeper than Python's json module recurses, an integer longer
# than int() converts, a lone surrogate echoed in a reply.
KNOWN_BUGS: list[tuple[str, Expect]] = [
    ("[" * 3000 + "]" * 3000, Expect("error", code="bad_json")),
    (
        '{"type": "command", "cid": "deep", "seq": 1, "action": '
        + '{"a": ' * 1500
        + "1"
        + "}" * 1500
        + "}",
        Expect("either", "deep"),
    ),
    (
        '{"type": "command", "cid": "long", "seq": 1' + "0" * 5000 + ', "action": {}}',
        Expect("either", "long"),
    ),
    ('{"type": "command", "cid": "\\ud800", "seq": 1, "action": {}}', Expect("error")),
]


# --- the tables ------------------------------------------------------------------------------


async def _post(api: Api, path: str, token: str, body: dict[str, Any]) -> dict[str, Any]:
    response = await api.http.post(path, json=body, headers={"Authorization": f"Bearer {token}"})
    assert response.status_code in (200, 201), (path, response.status_code, response.text)
    return dict(response.json())


async def build_tables(api: Api, server: ServerProcess) -> tuple[list[FuzzTable], list[Conn]]:
    """Four playing tables, one against a bot, one waiting; seats, spectators, strays."""
    specs: list[tuple[str, dict[str, Any], int, bool]] = [
        ("conquian", {}, 2, False),
        ("conquian", {"wins_needed": 1}, 2, False),
        ("konkan", {"players": 4}, 4, False),
        ("konkan71", {"players": 3, "rounds": 3}, 3, False),
        ("konkan", {"players": 2, "rounds": 3}, 1, True),  # one person and a bot
        ("conquian", {}, 1, False),  # waiting for its second player
    ]
    tables: list[FuzzTable] = []
    conns: list[Conn] = []
    tokens: list[list[str]] = []
    for game, options, humans, bots in specs:
        guests = [await api.guest() for _ in range(humans)]
        info = await _post(api, "/api/tables", guests[0][0], {"game": game, "options": options})
        for token, _user in guests[1:]:
            info = await _post(api, f"/api/tables/{info['id']}/join", token, {})
        if bots:
            info = await _post(
                api,
                f"/api/tables/{info['id']}/start",
                guests[0][0],
                {"bots": True, "level": "simple"},
            )
        players = len(info["seats"])
        table = FuzzTable(int(info["id"]), game, players)
        table.bots = {s["seat"] for s in info["seats"] if s["bot"]}
        token_of = {user["id"]: token for token, user in guests}
        by_seat = [
            token_of[s["user_id"]]
            for s in sorted(info["seats"], key=lambda s: s["seat"])
            if s["user_id"] is not None
        ]
        tokens.append(by_seat)
        for seat, token in enumerate(by_seat):
            client = await WireClient.connect(server, table.id, token, name=f"t{table.id}s{seat}")
            table.conns.append(Conn(client, table, seat))
        tables.append(table)
    # A second connection of one player, a spectator at each table, and a player of
    # one table watching another.
    big = tables[2]
    client = await WireClient.connect(server, big.id, tokens[2][0], name=f"t{big.id}s0b")
    big.conns.append(Conn(client, big, 0, primary=False))
    for table in tables:
        token, _user = await api.guest()
        client = await WireClient.connect(server, table.id, token, name=f"t{table.id}spec")
        table.conns.append(Conn(client, table, None))
    stray = await WireClient.connect(server, big.id, tokens[0][0], name=f"t{big.id}stray")
    big.conns.append(Conn(stray, big, None))
    for table in tables:
        for conn in table.conns:
            assert conn.client.seat == conn.seat, (conn.name, conn.client.seat)
        conns += table.conns
    return tables, conns


async def fresh_table(api: Api, server: ServerProcess) -> FuzzTable:
    """A new two-player Conquian table with both players connected."""
    guests = [await api.guest() for _ in range(2)]
    info = await api.create_table(guests[0][0], "conquian", {})
    info = await api.join(guests[1][0], info["id"])
    table = FuzzTable(int(info["id"]), "conquian", 2)
    token_of = {user["id"]: token for token, user in guests}
    for seat in sorted(info["seats"], key=lambda s: s["seat"]):
        client = await WireClient.connect(
            server, table.id, token_of[seat["user_id"]], name=f"t{table.id}s{seat['seat']}"
        )
        table.conns.append(Conn(client, table, seat["seat"]))
    return table


def actor(table: FuzzTable) -> Conn | None:
    """The primary connection of the person to act, if a person is to act."""
    seated = [c for c in table.conns if c.seat is not None and c.primary]
    if not seated:
        return None
    view = seated[0].client.view
    if view is None or view["match_over"] or view["turn"] is None or view["turn"] in table.bots:
        return None
    return table.seat_conn(view["turn"])


async def legal_move(table: FuzzTable, tally: Tally, fuzzer: Fuzzer) -> bool:
    """The person to act plays the simple player's move; it must be accepted."""
    latest = max(c.client.seq or 0 for c in table.conns)
    for other in table.conns:  # everyone has seen the latest step
        await other.client.wait_until(lambda o=other: (o.client.seq or 0) >= latest)
    conn = actor(table)
    if conn is None:
        return False
    # A round that just ended holds play until everyone continued (the clients do at once).
    await conn.client.wait_until(lambda c=conn: c.client.round_break is None)
    conn = actor(table)
    if conn is None:
        return False
    engine, player = engine_and_player(table.game)
    assert conn.client.view is not None
    cid = f"legal-{fuzzer.cid()}"
    raw = json.dumps(
        {
            "type": "command",
            "cid": cid,
            "seq": conn.client.seq,
            "action": wire_action(engine, player(conn.client.view)),
        }
    )
    await send(conn, raw, Expect("reply", cid), tally, "legal")
    fuzzer.history.setdefault(table.id, []).append((Expect("reply", cid), raw))
    await drain([conn], tally)
    reply = next(
        m
        for m in reversed(conn.client.messages)
        if m["type"] == "reply" and m["payload"]["cid"] == cid
    )
    assert reply["payload"]["ok"], f"a legal move was refused: {raw} -> {reply}"
    tally.legal_moves += 1
    if table.bots:  # let the bot answer before the next burst reads the views
        await asyncio.sleep(0.05)
    return True


# --- after the fuzz --------------------------------------------------------------------------


def read_log(database: str) -> dict[int, list[dict[str, Any]]]:
    path = database.split("///", 1)[1]
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        rows = db.execute(
            "SELECT table_id, seq, kind, seat, client_id, data FROM log_entries "
            "ORDER BY table_id, seq"
        ).fetchall()
    out: dict[int, list[dict[str, Any]]] = {}
    for table_id, seq, kind, seat, client_id, data in rows:
        entry = {"seq": seq, "kind": kind, "seat": seat, "client_id": client_id}
        entry["data"] = json.loads(data) if isinstance(data, str) else data
        out.setdefault(table_id, []).append(entry)
    return out


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value))


async def check_table(
    api: Api, table: FuzzTable, entries: list[dict[str, Any]], tally: Tally
) -> dict[str, Any]:
    """Replay the table's log with the invariants after every step; the views every
    connection last got are the replayed state's; every accepted cid logged once."""
    info = await api.get(f"/api/tables/{table.id}")
    starts = [i for i, e in enumerate(entries) if e["kind"] == "start"]
    if not starts:
        assert info["status"] == "waiting", info
        for conn in table.conns:
            assert conn.client.view is None, conn.name
        assert not tally.accepted_cids.get(table.id), "a move accepted at a waiting table"
        return {"table": table.id, "status": "waiting", "steps": 0}
    assert len(starts) == 1, "one match per table here"
    start = entries[starts[0]]
    actions = entries[starts[0] + 1 :]
    seqs = [e["seq"] for e in entries[starts[0] :]]
    assert seqs == list(range(start["seq"], start["seq"] + len(seqs))), seqs
    assert all(e["kind"] == "action" for e in actions)
    record = GameRecord(
        game=table.game,
        options=info["options"],
        seed=start["data"]["seed"],
        first_dealer=start["data"].get("first_dealer"),
        actions=[e["data"]["action"] for e in actions],
    )
    engine = engine_for(table.game)
    problems: list[str] = []
    steps = 0

    def on_step(state: Any, _action: Any) -> None:
        nonlocal steps
        steps += 1
        problems.extend(engine.check_invariants(state))

    result = replay(record, on_step=on_step)
    assert result.ok, f"table {table.id}: the log does not replay: {result.error}"
    assert not problems, f"table {table.id}: {problems[:5]}"
    state = result.state
    last_seq = seqs[-1]
    assert info["seq"] == last_seq, (info["seq"], last_seq)
    for conn in table.conns:
        await conn.client.wait_until(lambda c=conn: c.client.seq == last_seq)
        expected = _plain(engine.view(state, conn.seat))
        assert _plain(conn.client.view) == expected, f"{conn.name}: last view differs"
        assert_seqs_consecutive(conn.client)
    logged = Counter((e["seat"], e["client_id"]) for e in actions if e["client_id"] is not None)
    assert all(n == 1 for n in logged.values()), "a cid applied twice"
    assert all(e["data"]["by"] in ("player", "bot") for e in actions), "a timer moved"
    accepted = set(tally.accepted_cids.get(table.id, Counter()))
    assert accepted == set(logged), (
        f"table {table.id}: accepted but not logged {sorted(accepted - set(logged))[:5]}, "
        f"logged but never accepted {sorted(set(logged) - accepted)[:5]}"
    )
    if state.over:
        matches = await api.get(f"/api/tables/{table.id}/matches")
        assert len(matches) == 1
        full = await api.get(f"/api/matches/{matches[0]['id']}")
        assert GameRecord.from_json(full["record"]).actions == record.actions
    return {
        "table": table.id,
        "game": table.game,
        "status": info["status"],
        "steps": len(actions),
        "over": bool(state.over),
    }


# --- the test ----------------------------------------------------------------------------------


async def fuzz(
    server: ServerProcess, database: str, total: int, seed: int, tally: Tally
) -> dict[str, Any]:
    rng = random.Random(seed)
    known_bugs = os.environ.get("SAHRAT_FUZZ_KNOWN_BUGS", "1") == "1"
    fuzzer = Fuzzer(rng, known_bugs)
    api = Api(server)
    started = time.monotonic()
    try:
        tables, conns = await build_tables(api, server)
        while tally.sent < total:
            for table in tables:
                for _ in range(DRIVER_MOVES):
                    if not await legal_move(table, tally, fuzzer):
                        break
            await drain(conns, tally)

            async def burst(conn: Conn) -> None:
                for _ in range(BURST):
                    category, raw, expect = fuzzer.make(conn)
                    await send(conn, raw, expect, tally, category)

            budget = total - tally.sent
            active = conns if budget >= len(conns) * BURST else conns[: max(1, budget // BURST)]
            await asyncio.gather(*(burst(conn) for conn in active))
            await drain(conns, tally)
            assert server.proc is not None and server.proc.poll() is None, "the server died"
        fuzz_seconds = time.monotonic() - started
        # Still alive: a ping on every connection, a legal move on every playing table.
        for conn in conns:
            await send(conn, '{"type": "ping"}', Expect("pong"), tally, "final_ping")
        await drain(conns, tally)
        moved = [await legal_move(table, tally, fuzzer) for table in tables]
        await drain(conns, tally)
        fresh = await fresh_table(api, server)  # in case every match has ended
        assert await legal_move(fresh, tally, fuzzer)
        moved.append(True)
        health = await api.http.get("/healthz")
        assert health.status_code == 200, health.text
        log = read_log(database)
        checked = [await check_table(api, t, log.get(t.id, []), tally) for t in tables]
        for conn in conns:
            assert not conn.client.closed, f"{conn.name} was dropped"
            await conn.client.close()
        server_log = Path(server.log_path).read_text(errors="replace")
        assert "Traceback" not in server_log, server.log_tail(80)
        return {
            "seed": seed,
            "commands_requested": total,
            "messages_sent": tally.sent,
            "command_messages_sent": tally.commands,
            "answered": tally.answered,
            "replies": tally.replies,
            "errors": tally.errors,
            "pongs": tally.pongs,
            "accepted": tally.accepted,
            "legal_moves": tally.legal_moves,
            "crashes": tally.crashes,
            "hangs": tally.hangs,
            "connections": len(conns),
            "tables": checked,
            "final_legal_moves": sum(moved),
            "codes": dict(sorted(tally.codes.items())),
            "categories": dict(sorted(tally.categories.items())),
            "known_bug_messages": known_bugs,
            "fuzz_seconds": round(fuzz_seconds, 1),
            "total_seconds": round(time.monotonic() - started, 1),
        }
    finally:
        await api.aclose()


def test_protocol_fuzz(
    start_server: Any, sqlite_database: str, request: pytest.FixtureRequest
) -> None:
    total = env_count("SAHRAT_FUZZ_COMMANDS", 5000)  # make hardening: 100000
    seed = env_seed("SAHRAT_FUZZ_SEED")
    print(f"\nprotocol fuzz: {total} messages, SAHRAT_FUZZ_SEED={seed}")
    server = start_server(
        SAHRAT_BOT_DELAY_SECONDS="0",
        SAHRAT_TURN_SECONDS_OVERRIDE="3600",
        SAHRAT_GRACE_SECONDS="3600",
        **NO_RATE_LIMITS,
    )
    results: dict[str, Any] = {"seed": seed, "crashes": None}
    tally = Tally()
    try:
        results = asyncio.run(fuzz(server, sqlite_database, total, seed, tally))
    except BaseException as error:
        results["failure"] = str(error)[:2000]
        results.update(
            messages_sent=tally.sent,
            answered=tally.answered,
            crashes=tally.crashes,
            hangs=tally.hangs,
            legal_moves=tally.legal_moves,
        )
        results["reproduce"] = f"SAHRAT_FUZZ_SEED={seed} SAHRAT_FUZZ_COMMANDS={total}"
        raise
    finally:
        write_results("protocol_fuzz", results, request.node)
    assert results["messages_sent"] >= total
    assert results["answered"] == results["messages_sent"]
    assert results["crashes"] == 0 and results["hangs"] == 0


# --- bugs found and fixed: each stays a test ------------------------------------------------


@pytest.fixture(scope="module")
def bug_server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder = tmp_path_factory.mktemp("known-bugs")
    server = ServerProcess(f"sqlite+aiosqlite:///{folder / 'sahrat.db'}", folder)
    server.start()
    yield server
    server.stop()


async def _answered(server: ServerProcess, raw: str, expect: Expect) -> None:
    """One message on a fresh connection to a playing table: answered, then a ping too."""
    api = Api(server)
    try:
        guests = [await api.guest() for _ in range(2)]
        info = await api.create_table(guests[0][0], "conquian", {})
        await api.join(guests[1][0], info["id"])
        client = await WireClient.connect(server, info["id"], guests[0][0], name="bug")
        conn = Conn(client, FuzzTable(int(info["id"]), "conquian", 2), 0)
        tally = Tally()
        await send(conn, raw, expect, tally, "known_bug")
        await send(conn, '{"type": "ping"}', Expect("pong"), tally, "ping")
        await drain([conn], tally)
        await client.close()
    finally:
        await api.aclose()


@pytest.mark.parametrize("index", range(len(KNOWN_BUGS)), ids=["deep", "deeper", "long", "lone"])
def test_known_bug_message_is_answered(bug_server: ServerProcess, index: int) -> None:
    raw, expect = KNOWN_BUGS[index]
    asyncio.run(_answered(bug_server, raw, expect))


async def _connect_with_since(server: ServerProcess, since: str) -> None:
    api = Api(server)
    try:
        token, _user = await api.guest()
        info = await api.create_table(token, "conquian", {})
        url = server.ws_url(info["id"], token) + f"&since={since}"
        import websockets

        async with websockets.connect(url, open_timeout=10) as ws:
            first = json.loads(await asyncio.wait_for(ws.recv(), 10))
            assert first["type"] == "snapshot", first
    finally:
        await api.aclose()


@pytest.mark.parametrize("since", ["%C2%B2", "9" * 5000], ids=["superscript", "long"])
def test_unusable_since_is_ignored(bug_server: ServerProcess, since: str) -> None:
    asyncio.run(_connect_with_since(bug_server, since))
