"""Rated play in the browser, in Arabic at a phone's width, with touch.

Two players (each a fresh guest in a browser context of their own, from networks of
their own: the queue never seats two accounts of one network together) tap the rated
quick-play button for Conquian; the queue seats them at one rated table; each seat
shows its rating, "?" after it while provisional; they play the match out and each page
shows every seat's rating change, and offers another rated game instead of a rematch.
Then: my profile with its chart, the rating tab of the leaderboard, the wait cancelled
by a tap and by leaving the lobby, and a cool-down after leaving a rated match, its time
left in Arabic words.

The match is played through the page's own controller (``window.sahrat.send``, the
engine's simple player deciding from the view the page shows): the other browser tests
make moves with taps; here the point is the rated flow around the match.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from .conftest import PHONE, PHONE_390
from .helpers import (
    REPO,
    Server,
    bearer,
    controller_move,
    looks_right,
    match_over,
    phone_page,
    screenshot,
    state,
)

AR = json.loads((REPO / "static" / "i18n" / "ar.json").read_text(encoding="utf-8"))

# The server for this file: the queue forms tables every fifth of a second, and a lone
# player gets a bot after a few seconds (the first test's two players queue together,
# well within it). A match counts for its players' ratings whatever the turns each
# played (docs/rating.md: 10 of one's own by default, which a quick deal may not give).
QUEUE_ENV = {
    "SAHRAT_COUNTED_MIN_TURNS": "1",
    "SAHRAT_QUEUE_WAVE_SECONDS": "0.2",
    "SAHRAT_QUEUE_BOT_WAIT_SECONDS": "8",
    "SAHRAT_QUEUE_STALE_SECONDS": "15",
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """This module's own server (the session's has the queue's default waits)."""
    folder = tmp_path_factory.mktemp("rated-server")
    with Server.start(folder, QUEUE_ENV) as running:
        yield running


WAITING = '#queue-wait[data-state="waiting"]'  # queued (not only on the way)


def phone(new_page: Any, network: str, viewport: dict[str, int] = PHONE_390) -> Any:
    """A visitor's Arabic phone page (``phone_page``), once the rated button is enabled."""
    return phone_page(new_page, network, "#rated-play:enabled", viewport)


def choose_conquian(page: Any) -> None:
    page.locator("#rated-options summary").tap()
    page.select_option("#rated-game", "conquian")
    # The choice is kept, and the button says it.
    assert AR["rating.pool.conquian"] in page.inner_text("#rated-play")
    assert page.locator("#rated-players").count() == 0  # Conquian is two players


def token(page: Any) -> str:
    return str(page.evaluate("() => localStorage.getItem('sahrat.token')"))


def queue_status(server: Server, page: Any) -> dict[str, Any]:
    answer = httpx.get(server.url + "/api/queue", headers=bearer(token(page)), timeout=10)
    answer.raise_for_status()
    return dict(answer.json())


def play_out(pages: list[Any], budget: float) -> None:
    """Each page whose turn it is makes the simple player's move through its controller;
    a page done reading a deal's summary continues (the next deal waits for both)."""
    end = time.monotonic() + budget
    while not all(match_over(page) for page in pages):
        assert time.monotonic() < end, "the match did not end in time"
        moved = False
        for page in pages:
            if not match_over(page):
                moved = controller_move(page) or moved
        if not moved:
            time.sleep(0.05)


def shown_rating(rating: dict[str, Any]) -> str:
    """A rating as the page must show it: its number, and "?" while provisional."""
    return f"{rating['value']}{'?' if rating['provisional'] else ''}"


def test_two_players_meet_at_a_rated_table_and_see_their_changes(
    new_page: Any, server: Server
) -> None:
    one = phone(new_page, "203.0.113.10")
    two = phone(new_page, "198.51.100.20")
    for page in (one, two):
        choose_conquian(page)
    # One tap each: a guest account, then the queue.
    one.locator("#rated-play").tap()
    one.wait_for_selector(WAITING)
    two.locator("#rated-play").tap()
    for page in (one, two):
        page.wait_for_url(re.compile(r"#/t/\d+"), timeout=15_000)
        page.wait_for_function("() => !!window.sahrat?.view")
    table = int(one.url.rsplit("/", 1)[1])
    assert int(two.url.rsplit("/", 1)[1]) == table

    # A rated table: each seat's rating beside its name (new players: provisional).
    for page in (one, two):
        info = state(page)["info"]
        assert info["rated"] is True
        assert all(seat["user_id"] is not None for seat in info["seats"])  # no bot
        page.wait_for_selector(".seat .seat-rating")
        for seat in info["seats"]:
            shown = page.inner_text(f'.seat[data-seat="{seat["seat"]}"] .seat-rating')
            assert shown == shown_rating(seat["rating"])
            assert shown.endswith("?")  # a first rated match: provisional
    screenshot(one, "rated-table-ar-390")

    play_out([one, two], budget=300)

    # The end: every seat's change, before → after, on both pages.
    for page in (one, two):
        page.wait_for_selector("#rating-changes li", timeout=15_000)
        changes = page.evaluate("() => window.sahrat.ratingChanges")
        assert changes["pool"] == "conquian"
        assert sorted(c["seat"] for c in changes["changes"]) == [0, 1]
        winner = page.evaluate("() => window.sahrat.view.winner")
        for change in changes["changes"]:
            row = page.locator(f'#rating-changes li[data-seat="{change["seat"]}"]')
            text = row.inner_text()
            assert str(change["before"]) in text and str(change["after"]) in text
            delta = change["after"] - change["before"]
            # The winner of a two-seat match gains, the other loses (Plackett-Luce).
            if winner is not None:
                assert (delta > 0) == (change["seat"] == winner), change
            sign = "+" if delta > 0 else "\u2212" if delta < 0 else "±"
            assert row.locator(".delta").inner_text() == f"{sign}{abs(delta)}"
        # Another rated game instead of a rematch.
        assert page.locator("#rated-again").is_visible()
        assert page.locator("#rematch").count() == 0
    one.locator("#rating-changes").scroll_into_view_if_needed()
    looks_right(one, "rated-end-ar-390")

    # My profile: a chart of the one match, my number after it.
    me = one.evaluate("() => JSON.parse(localStorage.getItem('sahrat.user')).id")
    mine = next(
        c for c in one.evaluate("() => window.sahrat.ratingChanges.changes") if c["user_id"] == me
    )
    one.locator("#summary-close").tap()
    one.wait_for_selector("#my-rating")
    one.wait_for_function(
        "(n) => document.querySelector('#my-rating').textContent.includes(String(n))",
        arg=mine["after"],
    )
    one.locator("#my-rating").tap()
    one.wait_for_selector('#profile .pool-card[data-pool="conquian"] svg.rating-chart')
    card = one.locator('#profile .pool-card[data-pool="conquian"]')
    assert (
        card.locator(".rating").inner_text()
        == f"{mine['after']}{'?' if mine['provisional'] else ''}"
    )
    assert card.locator("svg circle").count() == 1  # one rated match played
    looks_right(one, "rated-profile-ar-390")

    # The leaderboard's rating tab: a provisional player is not on it yet.
    one.locator("a.brand").tap()
    one.wait_for_selector("#board-rating")
    one.locator("#board-rating").tap()
    one.wait_for_selector("#board-pool")
    assert one.get_attribute("#board-rating", "aria-selected") == "true"
    one.select_option("#board-pool", "conquian")
    one.wait_for_function(
        "(me) => !document.querySelector(`#leaderboard .leader-row[data-user='${me}']`)", arg=me
    )

    # "Play another rated game" queues at once from the lobby; the cancel button ends it.
    two.locator("#rated-again").tap()
    two.wait_for_selector(WAITING)
    two.wait_for_function(
        "() => /^\\d+:\\d\\d$/.test(document.querySelector('#queue-waited').textContent)"
    )
    assert queue_status(server, two)["status"] == "waiting"
    looks_right(two, "rated-waiting-ar-390")
    two.locator("#queue-cancel").tap()
    two.wait_for_selector("#rated-play")
    assert queue_status(server, two)["status"] == "none"


def test_leaving_the_lobby_cancels_the_wait(new_page: Any, server: Server) -> None:
    page = phone(new_page, "192.0.2.30")
    page.locator("#rated-play").tap()
    page.wait_for_selector(WAITING)
    assert queue_status(server, page)["status"] == "waiting"
    page.evaluate("() => { location.hash = '#/m/999999'; }")  # another screen
    page.wait_for_selector("#replay")
    deadline = time.monotonic() + 5
    while queue_status(server, page)["status"] != "none":
        assert time.monotonic() < deadline, "the wait was not cancelled"
        time.sleep(0.1)


def test_a_player_who_left_a_rated_match_sees_the_cooldown_in_arabic(
    new_page: Any, server: Server
) -> None:
    page = phone(new_page, "192.0.2.40", PHONE)  # the narrowest phone
    page.locator("#rated-play").tap()
    page.wait_for_selector(WAITING)
    # Alone: a bot takes the other seat after the queue's bot wait.
    page.wait_for_url(re.compile(r"#/t/\d+"), timeout=20_000)
    page.wait_for_function("() => !!window.sahrat?.view")
    assert state(page)["info"]["rated"] is True
    page.locator("#leave-match").tap()
    # Warned before leaving: last in the match, and a while away from rated play.
    assert page.locator("#confirm p").inner_text() == AR["table.leave_rated_confirm"]
    page.locator("#confirm-yes").tap()
    # Back in the lobby: the cool-down comes with my account (GET /api/me), or with the
    # queue's refusal (403 rated_cooldown) if the button is tapped before that.
    page.wait_for_selector("#rated-play")
    with contextlib.suppress(Exception):
        page.locator("#rated-play:enabled").tap(timeout=1000)
    cooldown = page.locator("#queue-cooldown")
    cooldown.wait_for()
    left = page.evaluate(
        "() => fetch('/api/me', {headers: {Authorization: 'Bearer ' +"
        " localStorage.getItem('sahrat.token')}}).then((r) => r.json())"
    )["cooldown"]["seconds_left"]
    minutes = math.ceil(left / 60)
    text = cooldown.inner_text()
    before, after = AR["queue.cooldown"].split("{left}")
    assert text.startswith(before) and text.endswith(after), text
    # Intl's Arabic plural of minutes (3 to 10: دقائق), the digits Latin as on the rest
    # of the page; the minute may have turned between the two answers.
    assert re.search(rf"\b({minutes}|{minutes - 1}|{minutes + 1}) (دقائق|دقيقة|دقيقتان)", text), (
        text
    )
    assert page.locator("#rated-play").is_disabled()
    looks_right(page, "rated-cooldown-ar-360")
