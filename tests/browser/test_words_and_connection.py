"""The table's words and its connection's state, on a phone (390×844, touch), in Arabic
and in English.

The connection: the page talks to the server through a TCP relay of this test's that
can stop passing bytes without closing anything, as a network does when a phone loses
its signal (the browser's socket stays "open" and hears nothing). The page must notice
by itself (a ping or a command left unanswered: static/js/conn.js), say so at once,
take no moves, and come back on its own once the network does, with the move sent into
the silence played exactly once (docs/protocol.md, "Reconnecting": a command sent
again with its cid gets its first answer).
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from .conftest import PHONE_390
from .helpers import (
    axe_violations,
    bot_action,
    play_konkan,
    screenshot,
    seq,
    state,
    wait_seq_after,
)
from .test_client import create_table, guest, play_until_over
from .test_table_layout import wait_my_turn

STATIC = Path(__file__).resolve().parents[2] / "static"
CATALOGUE = {
    lang: json.loads((STATIC / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))
    for lang in ("ar", "en")
}


class Relay:
    """A TCP relay to the server that can go silent: while it is frozen, every connection
    it holds and every one it accepts passes nothing either way and is never closed,
    until it thaws; then those silent connections are cut (as a network that comes back
    finds them gone) and new ones pass again."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.lock = threading.Lock()
        self.frozen = False
        self.silent: list[socket.socket] = []  # the sockets of connections gone silent
        self.live: list[tuple[socket.socket, socket.socket]] = []
        self.open = True
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while self.open:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.upstream)
            pair = (client, server)
            with self.lock:
                if self.frozen:
                    self.silent += pair
                else:
                    self.live.append(pair)
            for src, dst in (pair, pair[::-1]):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                with self.lock:
                    gone_silent = src in self.silent
                if not gone_silent:  # a silent connection's bytes are swallowed
                    dst.sendall(data)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)

    def freeze(self) -> None:
        with self.lock:
            self.frozen = True
            for pair in self.live:
                self.silent += pair
            self.live = []

    def thaw(self) -> None:
        with self.lock:
            self.frozen = False
            silent, self.silent = self.silent, []
        for sock in silent:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def close(self) -> None:
        self.open = False
        self.thaw()
        with self.lock:
            live, self.live = self.live, []
        for pair in live:
            for sock in pair:
                sock.close()
        self.listener.close()


@pytest.fixture
def relay(server: Any) -> Any:
    address = urlsplit(server.url)
    running = Relay((str(address.hostname), int(address.port or 80)))
    yield running
    running.close()


def at_my_draw(page: Any) -> None:
    """Play my turns (as the simple player) until it is my turn to draw."""
    while True:
        wait_my_turn(page)
        view = state(page)["view"]
        if view["phase"] == "draw":
            return
        before = seq(page)
        play_konkan(page, bot_action(view))  # a lay-down, or the discard that ends the turn
        wait_seq_after(page, before)


LOST = "() => !document.querySelector('#conn-banner').hidden"
MY_DRAWS = (
    "() => window.sahrat.log.filter((e) => e.ev.type === 'draw'"
    " && e.ev.seat === window.sahrat.seat).length"
)


@pytest.mark.parametrize("lang", ["ar", "en"])
def test_a_silent_network_is_said_stops_the_moves_and_recovers(
    new_page: Any, relay: Relay, lang: str
) -> None:
    words = CATALOGUE[lang]
    page = new_page(lang, PHONE_390, touch=True)
    page.goto(relay.url + "/")
    guest(page)
    create_table(page, "konkan", {"players": 2})
    page.click("#start-bots")
    page.wait_for_selector("#hand [data-card]")
    page.wait_for_selector("#conn-status.online")
    assert page.evaluate(LOST) is False
    at_my_draw(page)
    hand = len(state(page)["view"]["hand"])
    draws = page.evaluate(MY_DRAWS)

    # The network goes silent; the draw tapped now goes nowhere and gets no reply.
    relay.freeze()
    page.tap("#draw")
    page.wait_for_function("() => window.sahratConn.pending.size === 1")  # sent, unanswered
    # Said within a few seconds (conn.js: a command's reply is awaited 4 s), with room
    # for a loaded machine.
    page.wait_for_function(LOST, timeout=15_000)
    banner = page.locator("#conn-banner")
    assert banner.get_attribute("role") == "alert"
    assert banner.inner_text().strip() == words["conn.lost_banner"]
    assert page.locator("#conn-status").inner_text() == words["conn.reconnecting"]
    # No move can be made: the hand, the piles and the buttons are inert...
    assert page.evaluate("() => document.querySelector('#middle').inert") is True
    card = page.locator("#hand [data-card] >> nth=0").bounding_box()
    assert card
    page.touchscreen.tap(card["x"] + card["width"] / 2, card["y"] + card["height"] / 2)
    assert page.locator("#hand .card.selected").count() == 0
    # ...and a command is refused at once, without being sent.
    refused = page.evaluate("() => window.sahratConn.command({ type: 'end_turn' })")
    assert refused == {"ok": False, "error": {"code": "disconnected"}}
    assert page.evaluate("() => window.sahratConn.pending.size") == 1  # the draw, waiting
    screenshot(page, f"connection-lost-{lang}-phone")
    assert axe_violations(page) == []

    # The network comes back: the page reconnects by itself, resumes, and the draw sent
    # into the silence is played once.
    relay.thaw()
    page.wait_for_selector("#conn-status.online", timeout=30_000)
    page.wait_for_function("() => window.sahratConn.pending.size === 0")
    assert page.evaluate(LOST) is False
    assert page.evaluate("() => document.querySelector('#middle').inert") is False
    view = state(page)["view"]
    assert view["phase"] == "play" and len(view["hand"]) == hand + 1
    assert page.evaluate(MY_DRAWS) == draws + 1
    # The moves are back: a tap picks a card again.
    page.tap("#hand [data-card] >> nth=0")
    assert page.locator("#hand .card.selected").count() == 1
    screenshot(page, f"connection-back-{lang}-phone")


# --- the words ---------------------------------------------------------------------------

RULES = {
    lang: json.loads((STATIC / "rules" / f"{lang}.json").read_text(encoding="utf-8"))
    for lang in ("ar", "en")
}
SYMBOLS = re.compile("[Σ★]|#\\d")  # a symbol, or a meld's number, where a word belongs


def spoken(words: dict[str, str], card: str) -> str:
    """A card as the catalogue says it: rank and suit in words (a joker: its word)."""
    face = card.rstrip("'")
    if face == "JK":
        return words["card.joker"]
    rank, suit = face[:-1], face[-1]
    return (
        words["card.spoken"]
        .replace("{rank}", words[f"rank.{rank}"])
        .replace("{suit}", words[f"suit.{suit}"])
    )


def fill(phrase: str, **values: object) -> str:
    for name, value in values.items():
        phrase = phrase.replace("{" + name + "}", str(value))
    return phrase


@pytest.mark.parametrize("lang", ["ar", "en"])
def test_the_first_visit_has_one_play_now_how_to_play_and_the_rules(
    new_page: Any, lang: str
) -> None:
    words, rules = CATALOGUE[lang], RULES[lang]
    page = new_page(lang, PHONE_390, touch=True)
    page.wait_for_selector("#quick-play:enabled")
    # One "play now": the quick-play button; the guest's sign-in is a quieter button.
    play_now = page.locator("button", has_text=words["lobby.quick_play"])
    assert play_now.count() == 1 and play_now.is_visible()
    assert page.locator("#guest").evaluate("e => e.classList.contains('primary')") is False
    # A short how-to-play, with the rules a tap away.
    steps = page.locator("#howto li")
    assert steps.all_inner_texts() == [words[f"howto.step{n}"] for n in (1, 2, 3)]
    screenshot(page, f"first-visit-{lang}-phone")
    assert axe_violations(page) == []
    page.tap("#howto-rules")
    page.wait_for_selector("#rules h1")
    for game, other in (("konkan", "conquian"), ("conquian", "konkan")):
        if game == "conquian":
            page.tap(f'#rules nav a[href="#/rules/{game}"]')
            page.wait_for_function(
                "(t) => document.querySelector('#rules h1')?.textContent === t",
                arg=fill(words["rules.title"], game=rules[game]["title"]),
            )
        text = rules[game]
        assert page.inner_text("#rules h1") == fill(words["rules.title"], game=text["title"])
        assert page.locator("#rules section h2").all_inner_texts() == [
            s["title"] for s in text["sections"]
        ]
        assert page.locator("#rules section li").count() == sum(
            len(s["items"]) for s in text["sections"]
        )
        current = page.locator("#rules nav a[aria-current=page]")
        assert current.get_attribute("href") == f"#/rules/{game}"
        assert page.locator(f'#rules nav a[href="#/rules/{other}"]').count() == 1
        screenshot(page, f"rules-{game}-{lang}-phone")
        assert axe_violations(page) == []


@pytest.mark.parametrize(("locale", "shown"), [("en-US", "en"), ("ar-KW", "ar"), ("fr-FR", "ar")])
def test_the_browsers_language_is_the_first_language(
    browser: Any, server: Any, locale: str, shown: str
) -> None:
    """A reader who never chose sees the first of the browser's languages the page has
    (Arabic when it has none of them); a choice, once made, is kept."""
    context = browser.new_context(viewport=PHONE_390, locale=locale)
    try:
        page = context.new_page()
        page.goto(server.url + "/")
        page.wait_for_selector("#quick-play")
        assert page.evaluate("navigator.languages[0]") == locale
        assert page.evaluate("document.documentElement.lang") == shown
        assert page.evaluate("document.documentElement.dir") == ("rtl" if shown == "ar" else "ltr")
        assert page.evaluate("localStorage.getItem('sahrat.lang')") is None  # nothing chosen
        page.click("#lang-toggle")
        other = "en" if shown == "ar" else "ar"
        page.wait_for_function(f"() => document.documentElement.lang === '{other}'")
        page.reload()
        page.wait_for_selector("#quick-play")
        assert page.evaluate("document.documentElement.lang") == other
    finally:
        context.close()


# Each seat's sentence, role and first word beside the hand counts of the same moment.
SEAT_SENTENCES = """() => [[...document.querySelectorAll('#seats .seat')].map((box) => ({
    role: box.getAttribute('role'), label: box.getAttribute('aria-label') || '',
    seat: Number(box.dataset.seat), first: box.innerText.trim().split(/\\s+/)[0] })),
  window.sahrat.view.hand_counts]"""


@pytest.mark.parametrize("lang", ["ar", "en"])
def test_the_table_in_words(new_page: Any, lang: str) -> None:
    words = CATALOGUE[lang]
    page = new_page(lang, PHONE_390, touch=True)
    guest(page)
    create_table(page, "conquian", {"wins_needed": 1})
    page.click("#start-bots")
    page.wait_for_selector("#hand [data-card]")
    me = state(page)["seat"]

    # Cards say their rank and suit in words; each seat is a sentence; no symbol stands
    # where a word belongs.
    for card in page.locator("#hand [data-card]").all():
        assert card.get_attribute("aria-label") == spoken(words, card.get_attribute("data-card"))
    seats = page.locator("#seats .seat")
    assert seats.count() == 2
    # The bot plays on while this reads: each seat's sentence is read with the counts of
    # the same moment (one step in the page), and again once a move is drawn.
    sentences: list[dict[str, Any]] = []
    for _ in range(50):
        sentences, counts = page.evaluate(SEAT_SENTENCES)
        if all(fill(words["seat.cards"], n=counts[s["seat"]]) in s["label"] for s in sentences):
            break
        page.wait_for_timeout(100)
    for sentence in sentences:
        assert sentence["role"] == "group"
        label, seat = sentence["label"], sentence["seat"]
        assert label.startswith(words["table.you"] if seat == me else sentence["first"])
        assert fill(words["seat.cards"], n=counts[seat]) in label, (label, counts)
        assert fill(words["seat.points"], n=0) in label, label
    assert not SYMBOLS.search(page.inner_text("#seats")), page.inner_text("#seats")
    assert page.locator("#seats .total").first.inner_text().startswith(words["sheet.points"])
    rules = page.locator("#rules-link")
    assert rules.get_attribute("href") == "#/rules/conquian"
    assert rules.get_attribute("target") == "_blank"
    screenshot(page, f"table-words-{lang}-phone")
    assert axe_violations(page) == []

    # The end of the stock in words of what happened (the engines' events): a Konkan
    # reshuffle, a Konkan round over with no winner, a Conquian deal drawn (no reshuffle).
    lines = page.evaluate(
        """async () => {
            const d = await import('/js/describe.js');
            const nameOf = window.sahrat.nameOf;
            const meld = { owner: 1, cards: ['2C', '3C', '4C'] };
            const withMeld = Object.assign((s) => nameOf(s),
              { mine: nameOf.mine, meld: () => meld });
            return {
              conquian: d.describeEvent({ type: 'stock_exhausted', seat: 0, card: '5C' }, nameOf),
              void: d.describeEvent({ type: 'stock_exhausted', seat: 0, reshuffles: 3 }, nameOf),
              reshuffle: d.describeEvent({ type: 'reshuffle', seat: null, reshuffles: 1 }, nameOf),
              layOff: d.describeEvent(
                { type: 'lay_off', seat: 1, id: 4, added: ['5C'], cards: ['2C', '3C', '4C', '5C'] },
                withMeld),
              hint: d.describeSuggestion(
                { type: 'lay_down', lay_offs: [{ meld: 4, cards: ['5C'] }] }, withMeld),
              swap: d.describeSuggestion({ type: 'swap_joker', meld: 4, cards: ['5C'] }, withMeld),
              owner: nameOf(1),
              said: d.describeEvent({ type: 'discard', seat: 1, card: '9S' }, nameOf, true),
            };
        }"""
    )
    assert lines["conquian"] == words["ev.stock_out_deal"]
    assert lines["void"] == words["ev.stock_out_round"]
    assert lines["reshuffle"] == words["ev.reshuffle"]
    # What a screen reader is told of a move says its cards in words.
    assert spoken(words, "9S") in lines["said"] and "♠" not in lines["said"], lines["said"]
    # A meld is named by its owner and cards, never by its number.
    for key in ("layOff", "hint", "swap"):
        assert not SYMBOLS.search(lines[key]), lines[key]
        assert lines["owner"] in lines[key] and "2♣ 3♣ 4♣" in lines[key], lines[key]

    # The round's summary is the score table: every deal so far and the totals.
    play_until_over([page], budget=90)
    page.wait_for_selector("#match-over")
    if not page.locator("#summary").count():  # closed as it came: the results show it again
        page.tap("#show-results")
    page.wait_for_selector("#summary #summary-sheet")
    deals = len(state(page)["view"]["results"])
    assert deals >= 1
    sheet = page.locator("#summary-sheet table.sheet")
    assert sheet.locator("tbody tr").count() == deals
    assert sheet.locator("tfoot").inner_text().startswith(words["sheet.total"])
    screenshot(page, f"summary-sheet-{lang}-phone")
    assert axe_violations(page) == []
    log = page.inner_text("#log")
    assert log.strip()

    # A rematch starts the move log afresh: nothing of the finished match is in it.
    page.tap("#rematch")
    page.wait_for_function(
        "() => window.sahrat.info.status === 'playing' && !window.sahrat.view.match_over"
    )
    page.wait_for_selector("#summary", state="detached")
    entries = page.evaluate("() => window.sahrat.log.map((e) => e.ev.type)")
    assert "match_end" not in entries and "deal_end" not in entries, entries
    assert page.locator("#seats .last-move").count() <= 2
