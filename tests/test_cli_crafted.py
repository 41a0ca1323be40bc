"""``sahrat replay`` and ``sahrat verify`` on crafted files: whatever a file holds, the
command exits 0, 1 or 2 with a message, never with a traceback (docs/game-record.md:
0 every action accepted, 1 an action refused or a shuffle mismatch, 2 not a record)."""

from __future__ import annotations

import copy
import json
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sahrat.cli import main


@cache
def _honest_record() -> dict[str, Any]:
    """The first 120 actions of a 2-seat Konkan match of the simple players: draws,
    discards and lay-downs with melds and lay-offs."""
    from sahrat.rules import konkan
    from sahrat.rules.errors import RuleError
    from sahrat.rules.options import KonkanOptions
    from sahrat.rules.record import record_of
    from sahrat.simulate import bot_for

    bot = bot_for("konkan")
    state = first = konkan.new_game(KonkanOptions(players=2), "crafted")
    actions = []
    while not state.over and len(actions) < 120:
        action = bot(konkan.view(state, state.turn))
        try:
            state, _ = konkan.apply(state, action)
        except RuleError:
            action = konkan.timeout_action(state)
            state, _ = konkan.apply(state, action)
        actions.append(action)
    return record_of("konkan", first, actions, ["noura", "faisal"]).to_json()


def honest() -> dict[str, Any]:
    return copy.deepcopy(_honest_record())


def _run(
    command: str, raw: bytes, capsys: pytest.CaptureFixture[str], *extra: str
) -> tuple[int, str, str]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "match.json"
        path.write_bytes(raw)
        code = main([command, str(path), *extra])
    out, err = capsys.readouterr()
    return code, out, err


def _with(change: Callable[[dict[str, Any]], object]) -> bytes:
    record = honest()
    change(record)
    return json.dumps(record).encode()


def _deep(depth: int) -> bytes:
    return b'{"game": "konkan", "options": ' + b"[" * depth + b"]" * depth + b"}"


CRAFTED: dict[str, bytes] = {
    "deep nesting": _deep(100_000),
    "nesting within the parser's bound": _deep(900),
    "options as a list": _with(lambda r: r.update(options=[["players", 2]])),
    "an option of 5,000 digits": json.dumps(honest())
    .replace('"players": 2', '"players": ' + "9" * 5000)
    .encode(),
    "a first dealer of 5,000 digits": json.dumps(honest())
    .replace('"first_dealer": ', '"first_dealer": ' + "9" * 5000 + ', "x": ')
    .encode(),
    "not UTF-8": json.dumps(honest()).encode().replace(b'"noura"', b'"n\xffoura"'),
    "UTF-16": json.dumps(honest()).encode("utf-16"),
    "a seed that is a number": _with(lambda r: r.update(seed=5)),
    "a seed that is a list": _with(lambda r: r.update(seed=["a"])),
    "an empty seed": _with(lambda r: r.update(seed="")),
    "an action type that is a list": _with(lambda r: r["actions"][0].update(type=["draw"])),
    "an action that is a list": _with(lambda r: r["actions"].__setitem__(0, ["draw"])),
    "seats of numbers": _with(lambda r: r.update(seats=[1, 2])),
    "a float format": _with(lambda r: r.update(format=1.5)),
    "format true": _with(lambda r: r.update(format=True)),
    "an unknown game": _with(lambda r: r.update(game="poker")),
    "a record that is a list": b"[1, 2, 3]",
    "NaN": _with(lambda r: r.update(first_dealer=float("nan"))),
    "an empty file": b"",
}


@pytest.mark.parametrize("command", ["replay", "verify"])
@pytest.mark.parametrize("case", sorted(CRAFTED))
def test_a_crafted_file_is_refused_with_a_message(
    case: str, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(command, CRAFTED[case], capsys)
    assert code == 2, (case, err)
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("cannot read "), err


@pytest.mark.parametrize(
    "case",
    [
        "melds of cards that are objects",
        "melds that are objects",
        "lay-off cards that are a number",
        "a card that is a list",
        "a meld id that is a string",
    ],
)
def test_a_malformed_action_is_refused_by_its_index(
    case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A well-formed record with an action the engine cannot read: that action is
    refused (exit 1, its index and code), like any illegal action."""
    record = honest()
    index = next(i for i, a in enumerate(record["actions"]) if a["type"] == "lay_down")
    action = record["actions"][index]
    if case == "melds of cards that are objects":
        action["melds"] = [[{"rank": "7", "suit": "H"}]]
    elif case == "melds that are objects":
        action["melds"] = [{"cards": ["7H"]}]
    elif case == "lay-off cards that are a number":
        action["lay_offs"] = [{"meld": 0, "cards": 5}]
    elif case == "a card that is a list":
        action.update(type="discard", card=["7H"])
        action.pop("melds", None)
        action.pop("lay_offs", None)
    else:
        action["lay_offs"] = [{"meld": "0", "cards": ["7H"]}]
    raw = json.dumps(record).encode()
    code, out, err = _run("replay", raw, capsys)
    assert code == 1, err
    assert f"action {index}: " in out and "Traceback" not in err
    code, out, err = _run("verify", raw, capsys)
    assert code == 1, err
    assert out.strip().endswith("NOT verified")


@pytest.mark.parametrize(
    ("case", "change"),
    [
        ("a bad option", lambda r: r["options"].update(players=9)),
        ("an unknown option", lambda r: r["options"].update(colour="red")),
        ("a bad deck", lambda r: r.update(decks=[["7H"]], first_dealer=0)),
        ("a deck of unknown cards", lambda r: r.update(decks=[["ZZ"] * 106], first_dealer=0)),
        ("three seats at a two-seat table", lambda r: r.update(seats=["a", "b", "c"])),
        ("a first dealer that is no seat", lambda r: r.update(first_dealer=7)),
    ],
)
def test_replay_of_a_record_that_cannot_start_exits_2(
    case: str, change: Callable[[dict[str, Any]], object], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run("replay", _with(change), capsys)
    assert code == 2, (case, out, err)
    assert err.startswith("not a valid record: ") and len(err.strip().splitlines()) == 1


def test_both_commands_read_the_api_match_document(capsys: pytest.CaptureFixture[str]) -> None:
    """``GET /api/matches/{id}`` wraps the record in the match's summary."""
    match = {"id": 7, "table_id": 3, "game": "konkan", "winner_seat": None, "players": [1, 2]}
    raw = json.dumps({**match, "score_sheet": {}, "record": honest()}).encode()
    code, out, err = _run("replay", raw, capsys)
    assert code == 0, err
    assert out.startswith("120 actions applied")
    code, out, err = _run("verify", raw, capsys)
    assert code == 0, err
    assert out.strip().endswith("verified")


# --- the fuzzer -------------------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False)
    | st.text(max_size=8)
    | st.sampled_from(["7H", "JK'", "draw", "discard", "lay_down", "konkan", "conquian"]),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON document (the first 3 actions only, to keep it small)."""
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value[:3]):
            out += _paths(item, (*prefix, index))
    return out


PATHS = _paths(_honest_record())


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    record = honest()
    kind = draw(st.sampled_from(["value", "value", "delete", "deep", "huge", "bytes"]))
    path = draw(st.sampled_from(PATHS))
    parent: Any = record
    for step in path[:-1]:
        parent = parent[step]
    key = path[-1] if path else None
    if kind == "bytes" or key is None:
        raw = bytearray(json.dumps(record).encode())
        for _ in range(draw(st.integers(1, 4))):
            at = draw(st.integers(0, len(raw) - 1))
            raw[at] = draw(st.integers(0, 255))
        return bytes(raw)
    if kind == "delete":
        del parent[key]
        return json.dumps(record).encode()
    if kind == "value":
        parent[key] = draw(JSON_VALUES)
        return json.dumps(record).encode()
    marker = "__MUTATED__"
    parent[key] = marker
    text = json.dumps(record)
    depth = draw(st.integers(2, 3000))
    if kind == "deep":
        nested = "[" * depth + "]" * depth
    else:
        nested = draw(st.sampled_from(["", "-"])) + "9" * depth
    return text.replace(f'"{marker}"', nested).encode()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=mutated(), command=st.sampled_from(["replay", "verify"]))
def test_fuzzed_records_exit_cleanly(raw: bytes, command: str) -> None:
    """A valid record mutated anywhere (a value of another type, a deleted field, deep
    nesting, a huge number, corrupt bytes): 0, 1 or 2, never an exception."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "match.json"
        path.write_bytes(raw)
        with pytest.MonkeyPatch.context() as patch:
            errors: list[str] = []
            patch.setattr("sys.stderr", _Lines(errors))
            patch.setattr("sys.stdout", _Lines([]))
            code = main([command, str(path)])
    assert code in (0, 1, 2)
    if code == 2:
        assert len("".join(errors).strip().splitlines()) == 1, errors


class _Lines:
    """A stand-in for stdout or stderr that keeps what is written."""

    def __init__(self, into: list[str]) -> None:
        self.into = into

    def write(self, text: str) -> int:
        self.into.append(text)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False
