"""The table socket's decoder (``socket/decode.py``) answers as the server did before it.

The server used to read a client message with ``orjson.loads`` and check it with the
pydantic models of ``table/protocol.py``; :func:`_before` is that path, written out
from the previous ``socket/dispatch.py``. Generated messages, valid and not (wrong
types, fields missing or more, long and NUL cids, negative and huge seqs, actions that
are no object, unknown reactions, duplicate keys, lone surrogates, junk), go through
``handle_text`` against a table that records what it is asked: each must be answered
as before — the same thing done with the same values, or the same code, with a
refused command's ``cid`` echoed. The one difference is documented (docs/protocol.md,
"Commands"): a ``seq`` that is not a JSON integer (``"3"``, ``true``, ``3.0``), which
pydantic's lax mode took, is refused.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Coroutine
from typing import Any, get_args

import msgspec
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from sahrat.server.socket import decode
from sahrat.server.socket.dispatch import BARE_MESSAGES, handle_text
from sahrat.server.table import protocol

Outcome = tuple[Any, ...]
SEQ = 7  # the fake table's seq


# --- the path before: orjson.loads, then the pydantic models ---------------------------------


def _before(text: str) -> Outcome:
    """What the server did with ``text`` before the decoder (at a table whose chat is on)."""
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError:
        return ("error", "bad_json")
    kind = data.get("type") if isinstance(data, dict) else None
    if not isinstance(kind, str) or kind not in (*BARE_MESSAGES, "command", "react", "chat"):
        return ("error", "bad_message")
    if kind == "command":
        cid = data.get("cid") if isinstance(data.get("cid"), str) else None
        try:
            command = protocol.Command.model_validate(data)
        except ValidationError:
            return ("reply", "bad_command", cid) if cid else ("error", "bad_command")
        if type(data["seq"]) is not int:  # taken by pydantic's lax mode; refused now
            return ("reply", "bad_command", cid)
        return ("command", command.cid, command.seq, command.action)
    if kind == "react":
        try:
            return ("react", protocol.React.model_validate(data).reaction)
        except ValidationError:
            return ("error", "bad_reaction")
    if kind == "chat":
        if set(data) != {"type", "payload"}:
            return ("error", "bad_chat")
        if not isinstance(data["payload"], dict):  # the table's chat refused it so
            return ("error", "bad_chat")
        return ("chat", data["payload"])
    if set(data) != {"type"}:
        return ("error", "bad_message")
    return ("pong",) if kind == "ping" else (kind,)


# --- the path now: handle_text against a table that records -----------------------------------


class _Conn:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)


class _Chat:
    def __init__(self, done: list[Outcome]) -> None:
        self.done = done

    def say(self, conn: Any, body: Any) -> None:
        self.done.append(("chat", body))


class _Table:
    seq = SEQ

    def __init__(self) -> None:
        self.done: list[Outcome] = []
        self.chat = _Chat(self.done)

    async def command(self, conn: Any, command: protocol.CommandFields) -> None:
        self.done.append(("command", command.cid, command.seq, command.action))

    def react(self, conn: Any, reaction: str) -> None:
        self.done.append(("react", reaction))

    def continue_play(self, conn: Any) -> None:
        self.done.append(("continue",))

    async def hint(self, conn: Any) -> None:
        self.done.append(("hint",))

    async def ask_rematch(self, conn: Any) -> None:
        self.done.append(("rematch",))

    def snapshot(self, conn: Any) -> dict[str, Any]:
        return {"view": None}


def _run(coroutine: Coroutine[Any, Any, None]) -> None:
    """Run a coroutine that never waits (the table here answers at once)."""
    try:
        coroutine.send(None)
    except StopIteration:
        return
    raise AssertionError("handle_text waited")


def _now(text: str) -> Outcome:
    table, conn = _Table(), _Conn()
    _run(handle_text(table, conn, text))  # type: ignore[arg-type]
    answers = table.done + [_answer(message) for message in conn.sent]
    assert len(answers) == 1, (text, answers)  # exactly one thing done or said
    return answers[0]


def _answer(message: dict[str, Any]) -> Outcome:
    assert message["seq"] == SEQ, message
    if message["type"] == "pong":
        return ("pong",)
    if message["type"] == "snapshot":  # the answer to a resync
        return ("resync",)
    payload = message["payload"]
    if message["type"] == "reply":
        assert payload["ok"] is False and payload["cid"], message
        return ("reply", payload["error"]["code"], payload["cid"])
    assert message["type"] == "error", message
    assert payload["message"], message
    return ("error", payload["code"])


def _typed(value: Any) -> Any:
    """``value`` with each number's type kept (1, 1.0 and True differ; so do 0.0, -0.0)."""
    if isinstance(value, dict):
        return {key: _typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_typed(item) for item in value]
    return (type(value).__name__, repr(value))


def _same(text: str) -> None:
    before, now = _before(text), _now(text)
    assert _typed(now) == _typed(before), (text, before, now)
    echoed = now[2] if now[0] == "reply" else now[1] if now[0] == "command" else None
    assert decode.cid_of(text) == echoed, text  # what a rate-limited refusal echoes


# --- generated messages ----------------------------------------------------------------------

SURROGATES = st.sampled_from(["\ud800", "\udfff", "a\udc00b", "\udbff\udfff", "\ud83d\ude00"])
leaves = (
    st.none()
    | st.booleans()
    | st.integers()  # beyond 64 bits too
    | st.sampled_from([2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63), -(2**63) - 1])
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
    | SURROGATES
)
values = st.recursive(
    leaves,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=8,
)
cids = (
    st.text(min_size=1, max_size=64).filter(lambda cid: "\x00" not in cid)
    | st.text(max_size=70)
    | st.sampled_from(["", "\x00", "a\x00b", "x" * 64, "x" * 65, "é" * 64, "😀" * 65, "a\n"])
    | SURROGATES
    | values
)
seqs = (
    st.integers(min_value=0, max_value=10**6)
    | st.integers(min_value=-3, max_value=2**66)
    | st.sampled_from([0, -1, 2**63, 2**64 - 1, 2**64, "x", 3.5, -1.0])
    | st.sampled_from(["3", " 3 ", "1_0", "3.0", True, False, 3.0])  # pydantic took these
    | values
)
actions = (
    st.dictionaries(st.sampled_from(["type", "card", "melds", "seat"]), values, max_size=3)
    | st.dictionaries(st.text(max_size=6), values, max_size=3)
    | values
)
reactions = st.sampled_from(protocol.REACTIONS) | st.text(max_size=12) | values
bodies = (
    st.fixed_dictionaries({}, optional={"text": values, "phrase": st.text(max_size=8)}) | values
)
extra = {"extra": values, "cid": cids, "seq": seqs, "payload": bodies}


def _message(kind: str, fields: dict[str, Any], others: tuple[str, ...]) -> Any:
    """Messages of ``kind``: its fields all there (valid most often), or some missing,
    or with one more."""
    whole = st.fixed_dictionaries({"type": st.just(kind), **fields})
    optional = {name: extra[name] for name in others}
    mangled = st.fixed_dictionaries({"type": st.just(kind)}, optional={**fields, **optional})
    return whole | mangled


# Commands valid but for (at most) one field, the most common kind of message.
near_commands = st.fixed_dictionaries(
    {
        "type": st.just("command"),
        "cid": st.text(min_size=1, max_size=64).filter(lambda cid: "\x00" not in cid),
        "seq": st.integers(min_value=0, max_value=10**6),
        "action": st.dictionaries(st.sampled_from(["type", "card", "melds"]), values, max_size=3),
    }
).flatmap(
    lambda command: st.sampled_from(["cid", "seq", "action", "extra", None]).flatmap(
        lambda field: st.builds(
            lambda value: {**command, field: value} if field else command,
            {"cid": cids, "seq": seqs, "action": actions, "extra": values, None: st.none()}[field],
        )
    )
)
messages = (
    near_commands
    | _message("command", {"cid": cids, "seq": seqs, "action": actions}, ("extra", "payload"))
    | _message("react", {"reaction": reactions}, ("extra", "cid"))
    | _message("chat", {"payload": bodies}, ("extra", "seq"))
    | st.sampled_from(BARE_MESSAGES).flatmap(lambda kind: _message(kind, {}, ("extra", "cid")))
    | st.fixed_dictionaries({"type": values}, optional={"cid": cids, "seq": seqs})
    | values
)


def _dumped(message: Any, ascii_only: bool) -> str:
    # The standard library writes integers of any size and, with ensure_ascii, escapes
    # lone surrogates as \udXXX; without it they stay raw in the text.
    return json.dumps(message, ensure_ascii=ascii_only)


def _duplicated(pairs: list[tuple[str, Any]]) -> str:
    """An object whose keys may repeat (orjson keeps the last)."""
    return "{" + ",".join(f"{json.dumps(k)}:{json.dumps(v)}" for k, v in pairs) + "}"


texts = (
    st.builds(_dumped, near_commands, st.booleans())
    | st.builds(_dumped, messages, st.booleans())
    | st.builds(
        _duplicated,
        st.lists(
            st.tuples(
                st.sampled_from(["type", "cid", "seq", "action", "reaction", "payload"]),
                st.sampled_from(["command", "react", "chat", "ping", "", "c-1", 0, 1, "3"])
                | values,
            ),
            max_size=6,
        ),
    )
    | st.builds(  # a message cut or with junk put in
        lambda text, at, junk, cut: text[:at] + junk + text[at + cut :],
        st.builds(_dumped, messages, st.just(True)),
        st.integers(0, 80),
        st.sampled_from(["", ",", "}", "]", "[", '"', "\\", "NaN", "1e400", "\ufeff", " "]),
        st.integers(0, 3),
    )
    | st.text(max_size=40)
)


@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
def test_generated_messages_are_answered_as_before(text: str) -> None:
    _same(text)


# --- the structs mirror the models -----------------------------------------------------------

MODELS: dict[str, type[BaseModel]] = {
    "command": protocol.Command,
    "react": protocol.React,
    "chat": protocol.Chat,
    "ping": protocol.Ping,
    "continue": protocol.Continue,
    "hint": protocol.Hint,
    "rematch": protocol.Rematch,
    "resync": protocol.Resync,
}


def test_every_client_message_has_its_struct_with_the_models_fields() -> None:
    assert set(decode.KINDS) == set(MODELS) == {*BARE_MESSAGES, "command", "react", "chat"}
    for kind, model in MODELS.items():
        struct = decode.KINDS[kind]
        config = struct.__struct_config__
        assert config.tag_field == "type" and config.tag == kind, kind
        assert config.forbid_unknown_fields, kind  # as extra="forbid"
        assert model.model_config.get("extra") == "forbid", kind
        assert get_args(model.model_fields["type"].annotation) == (kind,), kind
        fields = [f.name for f in msgspec.structs.fields(struct)]
        assert ["type", *fields] == list(model.model_fields), kind
        assert all(f.required for f in msgspec.structs.fields(struct)), kind
    react = protocol.React.model_fields["reaction"].annotation
    mirrored = msgspec.structs.fields(decode.React)[0].type
    assert get_args(mirrored) == get_args(react) == protocol.REACTIONS


def test_the_cid_and_seq_bounds_are_the_models() -> None:
    schema = protocol.Command.model_json_schema()["properties"]
    cid = msgspec.json.schema(decode.Command)["$defs"]["Command"]["properties"]["cid"]
    for key in ("minLength", "maxLength"):
        assert cid[key] == schema["cid"][key], key
    assert schema["cid"]["pattern"] == r"^[^\x00]+$"  # the decoder looks for NUL by hand
    for cid_text in ('"\\u0000"', '"a\\u0000"', '"\\u0000b"'):
        text = f'{{"type": "command", "cid": {cid_text}, "seq": 0, "action": {{}}}}'
        assert _now(text) == ("reply", "bad_command", json.loads(cid_text)), text
        _same(text)
    assert schema["seq"]["minimum"] == 0
    _same('{"type": "command", "cid": "c", "seq": 0, "action": {}}')
    _same('{"type": "command", "cid": "c", "seq": -1, "action": {}}')


# --- orjson's guarantees kept ----------------------------------------------------------------


def _command(action: str, cid: str = '"c-1"', seq: str = "3") -> str:
    return f'{{"type": "command", "cid": {cid}, "seq": {seq}, "action": {action}}}'


def _nested(depth: int) -> str:
    """A command whose text nests ``depth`` deep (the object itself is the first level)."""
    inner = depth - 2  # the command, then its action
    return _command('{"x": ' + "[" * inner + "]" * inner + "}")


def _depth(value: Any) -> int:
    """How deep ``value`` nests (counted without recursion: it may be deeper than that)."""
    depth = 0
    while isinstance(value, dict | list) and value:
        value = next(iter(value.values())) if isinstance(value, dict) else value[0]
        depth += 1
    return depth + isinstance(value, dict | list)


@pytest.mark.parametrize("limit", [None, 50_000])
def test_nesting_is_bounded_as_orjson_bounds_it(limit: int | None) -> None:
    """1024 levels are read, 1025 are not JSON, whatever Python's recursion limit."""
    before = sys.getrecursionlimit()
    if limit is not None:
        sys.setrecursionlimit(limit)
    try:
        deepest = _now(_nested(1024))
        assert deepest[0] == "command" and _depth(deepest[3]) == 1023  # all but the command itself
        assert _before(_nested(1024))[0] == "command"
        assert _now(_nested(1025)) == _before(_nested(1025)) == ("error", "bad_json")
        assert _now("[" * 6000 + "]" * 6000) == ("error", "bad_json")
        _same('{"type": "command", "cid": "c", "seq": 1, "action": {"k": "' + "x" * 9000 + '"}}')
    finally:
        sys.setrecursionlimit(before)


def test_lone_surrogates_are_not_json() -> None:
    for text in (
        _command("{}", cid='"\\ud800"'),
        _command("{}", cid='"a\\udc00"'),
        _command('{"card": "\\ud800\\u0041"}'),
        _command("{}", cid='"\ud800"'),  # raw in the text, as no socket delivers it
        '{"type": "react", "reaction": "\\udfff"}',
    ):
        assert _now(text) == ("error", "bad_json"), text
        _same(text)
    assert _now(_command("{}", cid='"\\ud83d\\ude00"')) == ("command", "😀", 3, {})


def test_integers_past_64_bits_read_as_orjson_reads_them() -> None:
    for big in (2**64, -(2**63) - 1, 10**30):
        answer = _now(_command(f'{{"meld": {big}}}'))
        assert answer == ("command", "c-1", 3, {"meld": float(big)}), big
        assert isinstance(answer[3]["meld"], float)
    assert _now(_command("{}", seq=str(2**64 - 1)))[2] == 2**64 - 1
    assert _now(_command("{}", seq=str(2**64))) == ("reply", "bad_command", "c-1")
    assert _now(_command('{"n": 1e400}')) == ("error", "bad_json")


def test_a_seq_that_is_no_json_integer_is_refused() -> None:
    """Tighter than pydantic's lax mode, which read these as 3 (docs/protocol.md)."""
    for seq in ('"3"', "true", "3.0", '" 3 "'):
        text = _command("{}", seq=seq)
        assert protocol.Command.model_validate(orjson.loads(text)).seq in (1, 3)
        assert _now(text) == ("reply", "bad_command", "c-1"), seq
        with pytest.raises(decode.Invalid) as refused:
            decode.decode(text)
        assert refused.value.problem.startswith("seq: "), refused.value.problem


def test_repeated_keys_keep_the_last_as_orjson_does() -> None:
    text = '{"type": "command", "cid": "", "cid": "c-2", "seq": 1, "action": {}, "seq": 4}'
    assert _now(text) == ("command", "c-2", 4, {})
    text = '{"type": "command", "cid": "c-2", "seq": 1, "action": {}, "type": "ping"}'
    assert _now(text) == ("error", "bad_message")  # a ping with fields
    for text in (
        '{"type": "command", "cid": "c-2", "cid": "", "seq": 1, "action": {}}',
        '{"type": "ping", "type": "ping"}',
        '{"type": "react", "reaction": "oops", "reaction": "nope"}',
    ):
        _same(text)


def test_a_refused_command_names_the_field() -> None:
    for text, field in (
        (
            '{"type": "command", "cid": "c-1", "action": {}}',
            "seq",
        ),
        ('{"type": "command", "cid": "c-1", "seq": -2, "action": {}}', "seq"),
        (
            '{"type": "command", "cid": "c-1", "seq": 1, "action": []}',
            "action",
        ),
        ('{"type": "command", "cid": "c-1", "seq": 1, "action": {}, "sead": 0}', "sead"),
        (
            '{"type": "command", "cid": "' + "x" * 65 + '", "seq": 1, "action": {}}',
            "cid",
        ),
        ('{"type": "command", "cid": "a\\u0000", "seq": 1, "action": {}}', "cid"),
    ):
        with pytest.raises(decode.Invalid) as refused:
            decode.decode(text)
        assert field in refused.value.problem, (text, refused.value.problem)
        assert refused.value.kind == "command"
        _same(text)


def test_a_rate_limited_refusal_echoes_a_commands_cid() -> None:
    assert decode.cid_of(_command("{}")) == "c-1"
    assert decode.cid_of(_command("[]", cid='"' + "x" * 65 + '"')) == "x" * 65
    assert decode.cid_of(_command("{}", cid='""')) is None
    assert decode.cid_of(_command("{}", cid="7")) is None
    assert decode.cid_of('{"type": "react", "cid": "c-1", "reaction": "x"}') is None
    assert decode.cid_of('{"type": "command", "cid": "c-1", NaN}') is None
