"""Leaving a game against bots in the browser, as a player does it over and over:
quick play, "leave", quick play again. The table of a bot game its only person left
is closed (docs/protocol.md, "Leaving a match"), so it never counts against the
player's open tables: the fourth quick play deals a hand, with no refusal shown
(there used to be one, in English on the Arabic page)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

STATIC = Path(__file__).resolve().parents[2] / "static"
AR = json.loads((STATIC / "i18n" / "ar.json").read_text(encoding="utf-8"))


def _quick_play(page: Any) -> None:
    page.wait_for_selector("#quick-play:enabled")
    page.click("#quick-play")
    page.wait_for_function("() => !!window.sahrat?.view", timeout=20_000)


def test_leaving_bot_games_again_and_again(new_page: Any) -> None:
    page = new_page("ar")
    for _ in range(3):
        _quick_play(page)
        leave = page.locator("#leave-match")
        # Only bots play with me: the button and its question say the match ends.
        assert leave.inner_text() == AR["table.leave_bot_game"]
        leave.click()
        assert page.locator("#confirm p").inner_text() == AR["table.leave_bot_game_confirm"]
        page.click("#confirm-yes")
        page.wait_for_selector("#quick-play")
    assert page.locator(".toast.error").count() == 0
    _quick_play(page)  # a fourth table: the three left ones are closed
    assert page.locator(".toast.error").count() == 0
