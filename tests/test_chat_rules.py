"""Table chat's rules (``sahrat.server.social.chat``; docs/social.md, "Chat"): the text a
message may hold, the rate, who reads what, and who may report a message."""

from __future__ import annotations

from typing import Any

import pytest

from sahrat.server.social.chat import (
    MAX_CHARS,
    PHRASES,
    RATE_COUNT,
    RATE_WINDOW,
    ChatMessage,
    ChatRoom,
    check_text,
    may_report,
    players_read_spectators,
    reads,
)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def room(clock: Clock | None = None) -> ChatRoom:
    return ChatRoom(clock=clock or Clock(), wall=lambda: 1_800_000_000.0)


def said(result: ChatMessage | dict[str, Any]) -> ChatMessage:
    assert isinstance(result, ChatMessage), result
    return result


def code(result: ChatMessage | dict[str, Any]) -> str:
    assert isinstance(result, dict), result
    return str(result["code"])


@pytest.mark.parametrize(
    "text",
    [
        "زين، well played 👍",
        "a" * MAX_CHARS,
        "ب" * MAX_CHARS,
        "می\u200cخواهم",  # a Persian word with its non-joiner
        "👨\u200d👩\u200d👧",  # an emoji family: joiners
        "🏴\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f",  # a subdivision flag
        "<b>not markup</b> & 'quotes'",
    ],
)
def test_text_a_message_may_hold(text: str) -> None:
    assert check_text(f"  {text} ") == (text, None)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "chat_empty"),
        (" \t \u3000 ", "chat_empty"),
        ("a" * (MAX_CHARS + 1), "chat_too_long"),
        ("line\nbreak", "chat_bad_text"),
        ("nul\x00", "chat_bad_text"),
        ("\x1b[31mred", "chat_bad_text"),
        ("del\x7f", "chat_bad_text"),
        ("c1\x85inside", "chat_bad_text"),
        ("\u202eoverride", "chat_bad_text"),
        ("\u202aembedding\u202c", "chat_bad_text"),
        ("\u2067isolate\u2069", "chat_bad_text"),
        ("mark\u200f", "chat_bad_text"),
        ("arabic mark\u061c", "chat_bad_text"),
        ("zero\u200bwidth", "chat_bad_text"),
        ("bom\ufeff", "chat_bad_text"),
        ("line\u2028separator", "chat_bad_text"),
    ],
)
def test_text_refused(text: str, expected: str) -> None:
    cleaned, problem = check_text(text)
    assert cleaned is None and problem is not None and problem["code"] == expected


def test_the_rate_is_per_user_over_a_sliding_window() -> None:
    clock = Clock()
    chat = room(clock)
    for _ in range(RATE_COUNT):
        said(chat.say(user_id=1, name="a", seat=0, body={"phrase": "yalla"}, spectators_open=True))
        clock.now += 0.5
    assert code(
        chat.say(user_id=1, name="a", seat=0, body={"text": "x"}, spectators_open=True)
    ) == ("chat_too_fast")
    said(chat.say(user_id=2, name="b", seat=1, body={"text": "x"}, spectators_open=True))
    clock.now = 100.0 + RATE_WINDOW  # the first send leaves the window
    said(chat.say(user_id=1, name="a", seat=0, body={"text": "again"}, spectators_open=True))
    assert code(
        chat.say(user_id=1, name="a", seat=0, body={"text": "x"}, spectators_open=True)
    ) == ("chat_too_fast")


def test_refused_messages_do_not_count_and_bodies_are_exact() -> None:
    chat = room()
    for body in ({"text": "\u202e"}, {"phrase": "nope"}, {}, {"text": "a", "phrase": "nice"}):
        chat.say(user_id=1, name="a", seat=0, body=body, spectators_open=True)
    assert chat.messages == type(chat.messages)()
    for phrase in PHRASES[:RATE_COUNT]:
        said(chat.say(user_id=1, name="a", seat=0, body={"phrase": phrase}, spectators_open=True))


def test_history_keeps_the_last_fifty() -> None:
    clock = Clock()
    chat = room(clock)
    ids = []
    for n in range(60):
        clock.now += RATE_WINDOW  # never too fast
        ids.append(
            said(
                chat.say(user_id=1, name="a", seat=0, body={"text": str(n)}, spectators_open=True)
            ).id
        )
    kept = chat.readable(9, player=False, spectators_open=True)
    assert [m.id for m in kept] == ids[-50:]
    assert chat.find(ids[0]) is None and chat.find(ids[-1]) is not None


def test_who_reads_what() -> None:
    assert players_read_spectators(coin_table=True, playing=True) is False
    assert players_read_spectators(coin_table=True, playing=False) is True
    assert players_read_spectators(coin_table=False, playing=True) is True
    chat = room()
    player = said(chat.say(user_id=1, name="a", seat=0, body={"text": "p"}, spectators_open=False))
    watcher = said(
        chat.say(user_id=5, name="w", seat=None, body={"text": "s"}, spectators_open=False)
    )
    assert (player.channel, watcher.channel) == ("players", "spectators")
    for open_now in (True, False):
        assert reads(player, 2, player=True, spectators_open=open_now)
        assert reads(player, 6, player=False, spectators_open=open_now)
        assert reads(watcher, 6, player=False, spectators_open=open_now)
    assert not reads(watcher, 2, player=True, spectators_open=False)
    assert reads(watcher, 2, player=True, spectators_open=True)
    # The blocks' hook: a viewer who blocked the sender reads nothing of theirs.
    assert not reads(player, 2, player=True, spectators_open=True, blocked=lambda v, s: s == 1)
    assert reads(player, 1, player=True, spectators_open=True, blocked=lambda v, s: True)  # own


def test_who_may_report() -> None:
    chat = room()
    player = said(chat.say(user_id=1, name="a", seat=0, body={"text": "p"}, spectators_open=False))
    hidden = said(
        chat.say(user_id=5, name="w", seat=None, body={"text": "s"}, spectators_open=False)
    )
    shown = said(chat.say(user_id=5, name="w", seat=None, body={"text": "s"}, spectators_open=True))
    assert not may_report(player, 1, seated=True)  # one's own
    assert may_report(player, 2, seated=True) and may_report(player, 6, seated=False)
    assert not may_report(hidden, 2, seated=True)  # the players were not sent it
    assert may_report(hidden, 6, seated=False)
    assert may_report(shown, 2, seated=True)
