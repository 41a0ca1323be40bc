"""The break between two deals, in two browsers: the summary stays up with a countdown,
nobody can move and no turn clock runs; it ends when both players press "continue"."""

from __future__ import annotations

import time
from typing import Any

from .conftest import PHONE
from .helpers import (
    axe_violations,
    bot_action,
    match_over,
    my_turn,
    play_conquian,
    screenshot,
    seq,
    state,
    wait_seq_after,
)
from .test_client import conquian_for_two


def _round_break(page: Any) -> Any:
    return page.evaluate("() => window.sahrat?.roundBreak ?? null")


def test_the_next_deal_waits_for_both_players(new_page: Any) -> None:
    host, other = new_page("ar", PHONE), new_page("en")
    conquian_for_two(host, other, {"wins_needed": 3})
    # Play the first deal by clicks until it ends (its summary opens with the break).
    end = time.monotonic() + 90
    while not any(_round_break(page) for page in (host, other)):
        assert time.monotonic() < end, "the first deal did not end in time"
        assert not match_over(host)
        for page in (host, other):
            if my_turn(page) and state(page)["view"]["deal"] == 1:
                before = seq(page)
                play_conquian(page, bot_action(state(page)["view"]))
                wait_seq_after(page, before)
        time.sleep(0.05)
    for page in (host, other):
        page.wait_for_selector("#summary-continue")
        page.wait_for_function(
            "() => /\\d/.test(document.querySelector('#break-countdown')?.textContent || '')"
        )
    assert host.locator(".seat.turn").count() == 0  # no turn, no turn clock, in the break
    screenshot(host, "round-break-ar-phone")
    assert axe_violations(host) == [] and axe_violations(other) == []
    host.click("#summary-continue")
    # The other player sees whom the table waits for: only themselves now.
    other.wait_for_function("() => window.sahrat.roundBreak?.waiting.length === 1")
    assert _round_break(host) is not None
    other.click("#summary-continue")
    for page in (host, other):
        page.wait_for_function("() => window.sahrat.roundBreak === null")
        page.wait_for_selector("#summary", state="detached")
    assert state(host)["view"]["deal"] == 2
    assert my_turn(host) or my_turn(other)
