"""A table socket's client messages, decoded and checked in one pass (msgspec).

Each struct here mirrors, field for field, the pydantic model of ``table/protocol.py``
that documents the message (those models stay the JSON schemas of docs/schemas/ and
serve REST); ``tests/server/test_decode.py`` holds the two to the same answers. One
``msgspec`` decode of the text, a union tagged by ``type``, gives the typed message.

What the decoder accepts is what orjson reads, as the server did before: nesting at
most 1024 deep, no lone surrogate, an integer outside 64 bits read as a float. msgspec
alone refuses lone surrogates too, but it reads any integer exactly and its nesting
bound is Python's recursion limit, so:

* a text of :data:`SHALLOW` characters or more (only such a text can nest past 1024),
  and any text msgspec refuses or that raises anything, is read again by orjson, whose
  answer is final (``bad_json``, or its value converted to the same structs);
* an accepted free-form object (a command's ``action``, a chat's ``payload``) must
  write back through orjson, which refuses an integer outside 64 bits (and nesting
  past 254), and a command's ``seq`` must be at most :data:`SEQ_MAX`; if not, the
  text takes the orjson path too.

So the fast path never accepts what orjson reads differently, and no text can raise
anything but :class:`NotJSON` or :class:`Invalid`. One thing is stricter than the
pydantic models' lax mode: a command's ``seq`` is a JSON integer, never a string, a
float or a boolean (docs/protocol.md, "Commands").
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

import msgspec
import orjson

# A command's client id: 1 to 64 characters (code points, as pydantic counts), and no
# NUL (the model's pattern ^[^\x00]+$), checked by hand: a pattern would cost msgspec a
# regular expression search per command, as long as the rest of its decode.
Cid = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
NUL = "\x00"
Seq = Annotated[int, msgspec.Meta(ge=0)]
SEQ_MAX = 2**64 - 1  # orjson reads a larger integer as a float, which pydantic refused

SHALLOW = 2 * 1024 + 2  # a text this long or longer may nest past orjson's 1024 levels


class _Message(msgspec.Struct, tag_field="type", forbid_unknown_fields=True):
    """A client message: its ``type`` is its struct's tag, no field beyond its own."""


class Command(_Message, tag="command"):
    """``protocol.Command``: play an action for the connection's seat."""

    cid: Cid
    seq: Seq
    action: dict[str, Any]


class React(_Message, tag="react"):
    """``protocol.React``: one of the preset reactions (``protocol.REACTIONS``)."""

    reaction: Literal[
        "hello", "good_game", "well_played", "thanks", "oops", "hurry", "wow", "laugh"
    ]


class Chat(_Message, tag="chat"):
    """``protocol.Chat``: its payload is an object, checked by the table's chat
    (``table/chat.py``), which answers each way it can be wrong with its own code."""

    payload: dict[str, Any]


class Ping(_Message, tag="ping"):
    """``protocol.Ping``."""


class Continue(_Message, tag="continue"):
    """``protocol.Continue``."""


class Hint(_Message, tag="hint"):
    """``protocol.Hint``."""


class Rematch(_Message, tag="rematch"):
    """``protocol.Rematch``."""


class Resync(_Message, tag="resync"):
    """``protocol.Resync``."""


Message: TypeAlias = Command | React | Chat | Ping | Continue | Hint | Rematch | Resync

# The message types by their tag.
KINDS: dict[str, type[Message]] = {
    str(cls.__struct_config__.tag): cls
    for cls in (Command, React, Chat, Ping, Continue, Hint, Rematch, Resync)
}

_DECODER = msgspec.json.Decoder(Message)  # strict: no string for a number, nor a number


class NotJSON(ValueError):
    """The text is not JSON as orjson reads it; the message is orjson's."""


class Invalid(ValueError):
    """JSON, but no valid client message.

    ``kind``: the ``type`` it names when that is a known one, else None; ``problem``:
    what is wrong, naming the field; ``cid``: a command's non-empty string ``cid``
    (even one too long or with a NUL), which its refusal echoes, else None."""

    def __init__(self, kind: str | None, problem: str, cid: str | None) -> None:
        super().__init__(problem)
        self.kind = kind
        self.problem = problem
        self.cid = cid


def decode(text: str) -> Message:
    """The typed message ``text`` is; raises :class:`NotJSON` or :class:`Invalid`."""
    if len(text) < SHALLOW:
        try:
            message = _DECODER.decode(text)
        except Exception:  # refused, too deep, not UTF-8...: orjson decides
            pass
        else:
            if _reads_as_orjson(message):
                return message
    return _decode_with_orjson(text)


def cid_of(text: str) -> str | None:
    """The ``cid`` a refusal of ``text`` echoes: a command's usable one, valid or not."""
    try:
        message = decode(text)
    except Invalid as error:
        return error.cid
    except NotJSON:
        return None
    return message.cid if isinstance(message, Command) else None


def _reads_as_orjson(message: Message) -> bool:
    """Whether orjson reads the message's values as msgspec did (see the module's doc)."""
    if isinstance(message, Command):
        free: dict[str, Any] = message.action
        if message.seq > SEQ_MAX or NUL in message.cid:  # the orjson path refuses them
            return False
    elif isinstance(message, Chat):
        free = message.payload
    else:
        return True
    try:
        orjson.dumps(free)
    except TypeError:  # an integer outside 64 bits, or nesting past orjson's writer
        return False
    return True


def _decode_with_orjson(text: str) -> Message:
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as error:
        raise NotJSON(str(error)) from None
    try:
        message: Message = msgspec.convert(data, Message, strict=True)
    except msgspec.ValidationError as error:
        raise _invalid(data, str(error)) from None
    if isinstance(message, Command) and NUL in message.cid:
        raise _invalid(data, "Expected `str` without NUL (\\u0000) - at `$.cid`")
    return message


def _invalid(data: Any, problem: str) -> Invalid:
    kind = data.get("type") if isinstance(data, dict) else None
    if not isinstance(kind, str) or kind not in KINDS:
        return Invalid(None, problem, None)
    cid = data.get("cid") if kind == "command" else None
    # msgspec's "Expected `int` >= 0 - at `$.seq`" reads "seq: Expected `int` >= 0".
    what, at, path = problem.rpartition(" - at `$.")
    if at and path.endswith("`"):
        problem = f"{path[:-1]}: {what}"
    return Invalid(kind, problem, cid if isinstance(cid, str) and cid else None)
