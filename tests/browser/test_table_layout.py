"""The table as a card room: the seats around the table in the order of play, focus that
stays on a card through the page's updates, and the round summary as a modal <dialog>.

Played in Arabic at 390×844 and in English at 1280×800: one person and three bots at a
4-seat Konkan table. Play passes to the right (RULES.md §1.1, "to the right" = the next
seat): seen from above, counter-clockwise, so from my seat at the bottom the next player
sits on my right, the one after across the table, the last on my left.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from .conftest import DESKTOP, PHONE, PHONE_390
from .helpers import (
    OUTSIDE,
    axe_violations,
    bot_action,
    play_conquian,
    play_konkan,
    screenshot,
    state,
)
from .test_client import EN, create_table, guest

CASES = [("ar", PHONE_390, "phone"), ("en", DESKTOP, "desktop")]


def boxes(page: Any) -> dict[int, dict[str, float]]:
    """Each seat's box on the screen, by seat number."""
    found = page.eval_on_selector_all(
        "#seats .seat",
        """els => els.map((e) => { const r = e.getBoundingClientRect();
             return { seat: +e.dataset.seat, x: r.left + r.width / 2, y: r.top + r.height / 2,
                      left: r.left, right: r.right, top: r.top, bottom: r.bottom }; })""",
    )
    return {box["seat"]: box for box in found}


def overlaps(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        a["left"] < b["right"]
        and b["left"] < a["right"]
        and a["top"] < b["bottom"]
        and b["top"] < a["bottom"]
    )


# Where the minus sign and the first digit of every negative number under a selector are
# drawn (left edges of their glyphs).
NEGATIVES = """(selector) => [...document.querySelectorAll(`${selector} *`)]
  .flatMap((el) => [...el.childNodes])
  .filter((n) => n.nodeType === 3 && /^-\\d/.test(n.textContent))
  .map((text) => {
    const at = (i) => {
      const r = document.createRange();
      r.setStart(text, i);
      r.setEnd(text, i + 1);
      return r.getBoundingClientRect().left;
    };
    return { minus: at(0), digit: at(1), text: text.textContent, in: text.parentElement.outerHTML };
  })"""
IN_SUMMARY = "() => document.querySelector('#summary').contains(document.activeElement)"


def wait_my_turn(page: Any, timeout: float = 20_000) -> None:
    page.wait_for_function(
        "() => { const s = window.sahrat; return !!(s && s.view && !s.busy"
        " && s.view.turn === s.seat && !s.roundBreak && !s.view.match_over); }",
        timeout=timeout,
    )


def play_to_summary(page: Any, play: Any) -> None:
    """Play the seat's turns as the simple player until the round's (deal's) summary
    opens; the bots play theirs."""
    end = time.monotonic() + 120
    while not page.locator("#summary").count():
        assert time.monotonic() < end, "the round did not end in time"
        try:
            wait_my_turn(page, 3_000)
        except Exception:  # the bots are playing, or the round is over
            continue
        view = state(page)["view"]
        if page.locator("#summary").count():
            break
        play(page, bot_action(view))
    page.wait_for_selector("dialog#summary[open]")


@pytest.mark.parametrize(("lang", "viewport", "size"), CASES, ids=[c[2] for c in CASES])
def test_seats_focus_and_summary(
    new_page: Any, lang: str, viewport: dict[str, int], size: str
) -> None:
    page = new_page(lang, viewport)
    guest(page)
    create_table(page, "konkan", {"players": 4, "rounds": 1})
    page.click("#start-bots")
    page.wait_for_selector("#hand [data-card]")
    page.wait_for_selector("#seats .seat.at-left")
    me = state(page)["seat"]

    # --- the seats around the table, in the direction of play ---------------------------
    at = boxes(page)
    assert len(at) == 4
    mine, right, across, left = (at[(me + k) % 4] for k in range(4))
    assert mine["y"] > max(right["y"], across["y"], left["y"])  # mine at the bottom
    assert across["y"] < min(right["y"], left["y"])  # the one across at the top
    assert right["x"] > mine["x"] > left["x"]  # the next to play on my right, on the screen too
    assert right["x"] > across["x"] > left["x"]
    for a in at:
        for b in at:
            assert a == b or not overlaps(at[a], at[b]), (a, b)
    # The order of play is shown, and it is a picture the mirrored page does not turn round.
    assert page.locator("#direction").get_attribute("aria-label")
    assert page.eval_on_selector("#seats .ring", "e => getComputedStyle(e).direction") == "ltr"
    assert page.eval_on_selector(".seat.mine .who", "e => getComputedStyle(e).direction") == (
        "rtl" if lang == "ar" else "ltr"
    )
    # Every seat says who, how many cards and the score; nothing of it is cut or off screen.
    for seat in range(4):
        box = page.locator(f'#seats .seat[data-seat="{seat}"]')
        assert box.locator(".avatar").count() == 1
        assert box.locator(".count bdi").inner_text().isdigit()
        assert box.locator(".total bdi").inner_text() == "0"
        assert box.locator(".who").inner_text()
    assert page.evaluate(OUTSIDE) == []
    for selector in (
        "#turn-line",
        ".actions",
        "#hand [data-card] >> nth=0",
        "#hand [data-card] >> nth=-1",
    ):
        shown = page.locator(selector).first.bounding_box()
        assert shown and shown["y"] >= 0 and shown["y"] + shown["height"] <= viewport["height"], (
            selector
        )
    screenshot(page, f"table-seats-{lang}-{size}")
    assert axe_violations(page) == []

    # --- a card picked keeps its element and the focus ----------------------------------
    wait_my_turn(page)
    if state(page)["view"]["phase"] == "draw":  # (the first player of a round starts with 15 cards)
        page.click("#draw")
        page.wait_for_function("() => window.sahrat.view.phase === 'play'")
    card = page.locator("#hand [data-card] >> nth=2")
    card.focus()
    page.evaluate("() => { document.activeElement.sahratMark = 'picked'; }")
    page.keyboard.press("Enter")  # picks it: the page draws itself again
    page.wait_for_function("() => document.activeElement.getAttribute('aria-pressed') === 'true'")
    assert page.evaluate("() => document.activeElement.sahratMark") == "picked"
    assert page.locator("#hand .card.selected").count() == 1
    # Discard another card: the bots play, the page takes their updates, the focus stays.
    picked = page.evaluate("() => document.activeElement.dataset.card")
    page.keyboard.press("Enter")  # unpick it
    other = page.locator("#hand [data-card]:not(:focus) >> nth=0").get_attribute("data-card")
    logged = page.evaluate("() => window.sahrat.logged || 0")
    play_konkan(page, {"type": "discard", "card": other})
    page.locator(f'#hand [data-card="{picked}"]').focus()
    page.evaluate("() => { document.activeElement.sahratMark = 'kept'; }")
    page.wait_for_function(f"() => (window.sahrat.logged || 0) >= {logged} + 3", timeout=20_000)
    assert page.evaluate("() => document.activeElement.sahratMark") == "kept"
    assert page.evaluate("() => document.activeElement.dataset.card") == picked
    # Sorting moves the cards: the focused one is still the same element, still focused.
    before = page.eval_on_selector_all("#hand [data-card]", "els => els.map((e) => e.dataset.card)")
    page.keyboard.press("r")
    page.wait_for_function(
        "() => document.querySelector('#sort-rank').getAttribute('aria-pressed') === 'true'"
    )
    after = page.eval_on_selector_all("#hand [data-card]", "els => els.map((e) => e.dataset.card)")
    assert sorted(after) == sorted(before)
    assert page.evaluate("() => document.activeElement.sahratMark") == "kept"
    page.keyboard.press("s")

    # --- the round's summary: a modal <dialog> in the top layer --------------------------
    play_to_summary(page, play_konkan)
    summary = page.locator("#summary")
    assert summary.evaluate("e => e.matches(':modal')")  # shown with showModal: the top layer
    title = summary.get_attribute("aria-labelledby")
    assert title and page.locator(f"#{title}").inner_text() == summary.locator("h2").inner_text()
    assert page.evaluate(IN_SUMMARY)
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    assert page.evaluate(IN_SUMMARY)
    assert page.evaluate(OUTSIDE) == []
    screenshot(page, f"table-summary-{lang}-{size}")
    assert axe_violations(page) == []
    # Every negative number in it (the one who went out scores −30 or less) reads with
    # its minus before the digits, measured on the rendered glyphs.
    negatives = page.evaluate(NEGATIVES, "#summary")
    assert negatives, "a round's summary shows the negative score of whoever went out"
    for shown in negatives:
        assert shown["minus"] < shown["digit"], shown
    page.keyboard.press("Escape")  # closes it; the page under it is the page again
    page.wait_for_selector("#summary", state="detached")


def test_spectators_listed(new_page: Any) -> None:
    """The spectators TableInfo lists: a count, the names on demand; no list, no line."""
    page = new_page("ar", PHONE_390)
    guest(page)
    table = create_table(page, "konkan", {"players": 2, "rounds": 1})
    page.click("#start-bots")
    page.wait_for_selector("#hand [data-card]")
    assert page.locator("#spectators").count() == 0  # nobody watching: no line
    # Someone opens the table without a seat: the players see them watching.
    watcher = new_page("en", DESKTOP)
    guest(watcher)
    name = watcher.evaluate("() => JSON.parse(localStorage.getItem('sahrat.user')).name")
    watcher.evaluate(f"() => {{ location.hash = '#/t/{table}'; }}")
    watcher.wait_for_selector("#spectating")
    page.wait_for_selector("#spectators", timeout=15_000)
    assert "1" in page.locator("#spectators summary").inner_text()
    assert not page.locator("#spectators li >> nth=0").is_visible()  # names on demand
    page.click("#spectators summary")
    assert page.locator("#spectators li").all_inner_texts() == [name]
    # More names than the list carries, in both scripts; then a server that sends no list.
    info = state(page)["info"]
    names = ["سارة", "Omar", "ليلى"]
    page.evaluate(
        "(info) => window.sahratConn.handlers.message({ type: 'table', payload: info })",
        {**info, "spectators": names, "spectator_count": 60},
    )
    page.wait_for_function(
        "() => document.querySelector('#spectators summary').textContent.includes('60')"
    )
    assert page.locator("#spectators li bdi").all_inner_texts() == names
    screenshot(page, "table-spectators-ar-phone")
    page.evaluate(
        "(info) => window.sahratConn.handlers.message({ type: 'table', payload: info })",
        {k: v for k, v in info.items() if k not in ("spectators", "spectator_count")},
    )
    page.wait_for_selector("#spectators", state="detached")


def test_conquian_summary_is_a_deal(new_page: Any) -> None:
    """Conquian plays deals (RULES.md Part 2), Konkan rounds: its summary says "deal"."""
    page = new_page("en", DESKTOP)
    guest(page)
    create_table(page, "conquian", {})
    page.click("#start-bots")
    page.wait_for_selector("#seats .seat.at-top")
    at = boxes(page)
    me = state(page)["seat"]
    assert at[me]["y"] > at[1 - me]["y"]  # two players face each other
    assert page.locator("#direction").count() == 0  # two players: turns alternate, no arrow
    screenshot(page, "table-conquian-en-desktop")
    play_to_summary(page, play_conquian)
    assert page.locator("#summary-title").inner_text() == EN["summary.deal_title"]  # 3 wins needed
    page.wait_for_selector("#break-countdown")
    screenshot(page, "table-conquian-deal-en-desktop")
    assert (
        page.locator("#break-countdown")
        .inner_text()
        .startswith(EN["summary.next_deal_in"].split("{")[0])
    )


# Elements that stick out of the viewport's sides (what makes a page scroll sideways).
OUTSIDE_VIEWPORT = """() => [...document.querySelectorAll('body *')].filter((e) => {
  const r = e.getBoundingClientRect();
  return r.width > 0 && (r.right > innerWidth + 1 || r.left < -1);
}).map((e) => `${e.tagName}.${e.className} ${Math.round(e.getBoundingClientRect().left)}`
  + `..${Math.round(e.getBoundingClientRect().right)}`)"""


@pytest.mark.parametrize("lang", ["ar", "en"])
def test_a_small_phone_never_scrolls_sideways(new_page: Any, lang: str) -> None:
    """At 360 px (a common small phone) neither the lobby nor a Konkan table with its
    fifteen cards is wider than the screen, in either language."""
    page = new_page(lang, PHONE)
    page.wait_for_selector("#quick-play")
    for where in ("lobby", "table"):
        if where == "table":
            page.click("#quick-play")
            page.wait_for_selector("#hand [data-card]", timeout=20_000)
        width = page.evaluate("() => [document.documentElement.scrollWidth, innerWidth]")
        assert width[0] <= width[1], (where, width, page.evaluate(OUTSIDE_VIEWPORT)[:8])
    screenshot(page, f"table-{lang}-360")
