"""Table chat on phones, in Arabic, at 390×844 with touch (docs/social.md, "Chat"): two
players at a coin table and a third watching. The chat button with its unread count
sits in the table's bar, clear of the hand and the piles; its panel covers the table
while open. The spectator's message stays with the spectators during the coin match;
a muted player's messages are hidden (and the mute kept in localStorage); every message
is text (markup shows as typed) in a <bdi dir="auto">; a quick phrase reads in the
reader's language; a message is reported.

The coin table needs a server of its own: guests at coin tables, from one address.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from server.harness import make_admin

from .conftest import PHONE_390
from .helpers import Server, screenshot
from .test_client import create_table, guest

COIN_ENV = {
    "SAHRAT_GUESTS_AT_COIN_TABLES": "true",
    "SAHRAT_COIN_TABLE_MIN_MATCHES": "0",
    "SAHRAT_ONE_ADDRESS_PER_COIN_TABLE": "false",
    "SAHRAT_TURN_SECONDS_OVERRIDE": "300",  # nobody moves here: no timer plays meanwhile
}


@pytest.fixture(scope="module")
def coin_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("chat-server")
    with Server.start(folder, COIN_ENV) as running:
        yield running


def coin_table(server: Server, folder: Path) -> int:
    """A two-seat Conquian coin table an admin opens without sitting."""
    name, password = make_admin(f"sqlite+aiosqlite:///{folder / 'sahrat.db'}", "chat-boss")
    with httpx.Client(base_url=server.url, timeout=10) as http:
        token = http.post("/api/login", json={"name": name, "password": password}).json()["token"]
        created = http.post(
            "/api/admin/tables",
            json={"game": "conquian", "options": {"stake": 10}},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert created.status_code == 201, created.text
        return int(created.json()["id"])


def phone(new_page: Any, server: Server, table: int, sit: bool) -> Any:
    page = new_page("ar", PHONE_390, touch=True)
    page.goto(server.url + "/")
    page.wait_for_selector("#guest")
    guest(page)
    page.goto(f"{server.url}/#/t/{table}")
    page.wait_for_function("() => !!window.sahrat?.info")
    if sit:
        page.tap("#take-seat")
    return page


def user_id(page: Any) -> int:
    return int(page.evaluate("() => JSON.parse(localStorage.getItem('sahrat.user')).id"))


def say(page: Any, text: str) -> None:
    """Open the panel if need be, type, send, and see one's own message come back."""
    if not page.locator("#chat-panel[open]").count():
        page.tap("#chat-button")
    page.fill("#chat-text", text)
    page.press("#chat-text", "Enter")
    page.wait_for_function(
        "(t) => [...document.querySelectorAll('#chat-log .chat-line.mine .chat-text')]"
        ".some((e) => e.textContent === t)",
        arg=text,
    )


def close_panel(page: Any) -> None:
    page.tap("#chat-close")
    page.wait_for_selector("#chat-panel", state="hidden")


# The texts shown (in the panel) and the ids held, in one step.
SHOWN = """() => ({
  shown: [...document.querySelectorAll('#chat-log .chat-line')].map((li) => ({
    id: li.dataset.id, user: Number(li.dataset.user), channel: li.dataset.channel,
    text: li.querySelector('.chat-text').textContent })),
  held: window.sahrat.chat.messages.map((m) => m.id),
  unread: window.sahrat.chat.unread,
  badge: document.querySelector('#chat-unread')?.textContent ?? null })"""

CLEAR_OF_THE_GAME = """() => {
  const box = (s) => document.querySelector(s)?.getBoundingClientRect();
  const button = box('#chat-button');
  const hit = (r) => r && !(r.right <= button.left || r.left >= button.right
    || r.bottom <= button.top || r.top >= button.bottom);
  return { button: !!button && button.width > 0 && button.height > 0,
    over: ['#hand', '#stock', '#face-up', '#felt'].filter((s) => hit(box(s))) };
}"""


def test_chat_on_phones_players_a_spectator_and_a_muted_player(
    new_page: Any, coin_server: Server
) -> None:
    table = coin_table(coin_server, coin_server.folder)
    host = phone(new_page, coin_server, table, sit=True)
    other = phone(new_page, coin_server, table, sit=True)
    for page in (host, other):
        page.wait_for_function("() => window.sahrat?.info?.status === 'playing'")
        page.wait_for_selector("#hand [data-card]")
    watcher = phone(new_page, coin_server, table, sit=False)
    watcher.wait_for_function("() => window.sahrat?.seat === null && !!window.sahrat?.view")
    assert host.evaluate("() => window.sahrat.info.coin_table && window.sahrat.info.chat")
    host_id, other_id, watcher_id = user_id(host), user_id(other), user_id(watcher)

    # Closed, the chat is a button in the bar: not over the hand, the piles or the felt.
    for page in (host, other, watcher):
        placed = page.evaluate(CLEAR_OF_THE_GAME)
        assert placed == {"button": True, "over": []}, placed
        inside = page.evaluate(
            "() => { const r = document.querySelector('#chat-button').getBoundingClientRect();"
            " return r.left >= 0 && r.right <= innerWidth && r.top >= 0"
            " && r.width >= 24 && r.height >= 24 || [r.left, r.right, r.top, r.width, r.height]; }"
        )
        assert inside is True, inside

    # A player speaks: the other player's badge counts it, unread.
    first = "يلا يا شباب، let's go 👋"
    say(host, first)
    other.wait_for_selector("#chat-unread")
    seen = other.evaluate(SHOWN)
    assert seen["badge"] == "1" and seen["unread"] == 1, seen
    screenshot(other, "chat-unread-ar-phone")
    close_panel(host)

    # The spectator speaks: spectators read it, the players do not (a coin match plays).
    watched = "العب السبعة!"
    say(watcher, watched)
    spectator_line = next(
        line for line in watcher.evaluate(SHOWN)["shown"] if line["text"] == watched
    )
    assert spectator_line["channel"] == "spectators"
    assert watcher.locator(".chat-line.spectator .chat-watching").count() == 1
    assert watcher.locator("#chat-note").is_visible()  # says why the players do not read it
    # The other player answers after it: once the answer reaches the host, so would have
    # the spectator's message (one socket's messages come in order): it did not.
    say(other, "<b>زين</b> & thanks")
    close_panel(other)
    host.wait_for_function(
        "(u) => window.sahrat.chat.messages.some((m) => m.user_id === u)", arg=other_id
    )
    held = host.evaluate("() => window.sahrat.chat.messages.map((m) => [m.user_id, m.channel])")
    assert held == [[host_id, "players"], [other_id, "players"]], held
    assert watcher_id not in [user for user, _ in held]
    watcher.wait_for_function(
        "(u) => window.sahrat.chat.messages.some((m) => m.user_id === u)", arg=other_id
    )
    # Text is text: the markup shows as typed, in a <bdi dir="auto">.
    host.tap("#chat-button")
    host.wait_for_selector("#chat-panel[open]")
    line = host.locator(f'.chat-line[data-user="{other_id}"] .chat-text')
    assert line.text_content() == "<b>زين</b> & thanks"
    assert host.locator("#chat-log b").count() == 0
    assert line.evaluate("(e) => [e.tagName, e.getAttribute('dir')]") == ["BDI", "auto"]
    # A quick phrase, in Gulf words, read in each reader's language; unread till read.
    host.locator('#chat-phrases [data-phrase="hurry"]').tap()
    other.wait_for_function("() => window.sahrat.chat.messages.some((m) => m.phrase === 'hurry')")
    assert other.evaluate(SHOWN)["badge"] == "1"
    host.wait_for_selector(".chat-line.mine .chat-text:text-is('بسرعة الله يخليك')")
    # The open panel covers the table on a phone (it is modal: the table is inert).
    box = host.evaluate(
        "() => { const r = document.querySelector('#chat-panel').getBoundingClientRect();"
        " return [r.width, r.height, innerWidth, innerHeight,"
        " !!document.querySelector('dialog:modal#chat-panel')]; }"
    )
    assert box[0] >= box[2] - 1 and box[1] >= box[3] - 1 and box[4], box
    screenshot(host, "chat-panel-ar-phone")

    # The other player mutes the host: the host's messages are hidden for them only.
    other.tap("#chat-button")
    other.wait_for_selector("#chat-panel[open]")
    other.locator(f'.chat-line[data-user="{host_id}"] .chat-mute').first.tap()
    other.wait_for_function(
        "(u) => !document.querySelector(`#chat-log .chat-line[data-user='${u}']`)", arg=host_id
    )
    assert str(host_id) in other.evaluate("() => localStorage.getItem('sahrat.chat.muted')")
    assert other.locator("#chat-muted .chip").count() == 1
    close_panel(other)
    later = "وحدة ثانية؟ one more"
    close_panel(host)
    say(host, later)
    watcher.wait_for_function(
        "(t) => window.sahrat.chat.messages.some((m) => m.text === t)", arg=later
    )
    other.wait_for_function(
        "(t) => window.sahrat.chat.messages.some((m) => m.text === t)", arg=later
    )
    muted = other.evaluate(SHOWN)
    assert muted["badge"] is None and muted["unread"] == 0, muted  # a muted message: unread
    other.tap("#chat-button")
    other.wait_for_selector("#chat-panel[open]")
    shown = other.evaluate(SHOWN)["shown"]
    assert [line["user"] for line in shown] == [other_id], shown
    # ...and the spectator, who muted nobody, reads them all.
    watcher_lines = watcher.evaluate(SHOWN)["shown"]
    assert [line["user"] for line in watcher_lines] == [
        host_id,
        watcher_id,
        other_id,
        host_id,
        host_id,
    ], watcher_lines

    # The spectator reports the host's first message.
    watcher.locator(f'.chat-line[data-user="{host_id}"] .chat-report').first.tap()
    watcher.tap("#confirm-yes")
    watcher.wait_for_selector(
        f'.chat-line[data-user="{host_id}"] .chat-report[disabled]', state="attached"
    )
    assert re.search("وصل البلاغ", watcher.inner_text("#toasts"))


def test_chat_off_from_the_create_form_and_the_side_panel_in_english(new_page: Any) -> None:
    """The create form's "table chat" box, unticked, opens a table with no chat; with it
    ticked (the default) the chat is a panel at the side of a wide screen."""
    page = new_page("en")
    guest(page)
    page.uncheck('#create-table [name="chat"]')
    create_table(page, "konkan", {"players": 2})
    page.wait_for_function("() => window.sahrat?.info?.chat === false")
    assert page.locator("#chat-button").count() == 0
    page.click("a.back")
    page.wait_for_selector('#create-table [name="chat"]')
    assert page.is_checked('#create-table [name="chat"]')  # on by default
    create_table(page, "konkan", {"players": 2})
    page.wait_for_function("() => window.sahrat?.info?.chat === true")
    page.click("#chat-button")
    page.wait_for_selector("#chat-panel[open]")
    page.click('#chat-phrases [data-phrase="yalla"]')
    page.wait_for_selector('.chat-line.mine .chat-text:text-is("Let\'s go!")')
    side = page.evaluate(
        "() => { const r = document.querySelector('#chat-panel').getBoundingClientRect();"
        " return [Math.round(r.left), Math.round(r.right), r.width, r.height, innerWidth,"
        " innerHeight]; }"
    )
    _left, right, width, height, wide, high = side
    assert width <= wide / 2 and right == wide and height >= high - 1, side  # at the end (LTR)
    screenshot(page, "chat-panel-en-desktop")
