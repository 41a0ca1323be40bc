"""An evening among friends on phones, in Arabic: a guest named in Arabic renames
itself «أبو فهد …» (a name with spaces), sits at a private table with a friend, closes
the tab, opens the site again and is offered the seat at once; the lobby's "my games"
lists the private table with whose turn it is, and one tap lands back in the seat,
where the name with its space is shown. And a turn that comes while the tab is in the
background: the title says so, and the bell (turned on with a tap) notifies."""

from __future__ import annotations

import json
import random
import time
import unicodedata
from pathlib import Path
from typing import Any

import httpx

from .conftest import PHONE_390
from .helpers import axe_violations, screenshot, state

STATIC = Path(__file__).resolve().parents[2] / "static"
AR = json.loads((STATIC / "i18n" / "ar.json").read_text(encoding="utf-8"))


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _arabic(text: str) -> bool:
    letters = [c for c in text if unicodedata.category(c)[0] == "L"]
    return bool(letters) and all("ARABIC" in unicodedata.name(c) for c in letters)


def test_a_closed_tab_finds_its_private_seat_again(new_page: Any, server: Any) -> None:
    page = new_page("ar", PHONE_390, touch=True)
    errors: list[str] = []
    page.click("#guest")
    # The generated name is Arabic, and the lobby offers to change it on this first visit.
    page.wait_for_selector("#name-prompt:not([hidden])")
    generated = page.evaluate("() => JSON.parse(localStorage.getItem('sahrat.user')).name")
    assert _arabic(generated) and not generated.startswith("guest"), generated
    assert generated in page.inner_text("#name-prompt")
    screenshot(page, "name-prompt-ar-390")
    assert axe_violations(page) == []
    name = f"أبو فهد {random.randrange(10**5):05d}"
    page.fill("#first-name-input", f"  {name.replace(' ', '   ')} ")  # spaces collapsed
    page.tap("#first-name-save")
    page.wait_for_function(
        f"() => document.querySelector('#me-name')?.textContent === {json.dumps(name)}"
    )
    assert page.is_hidden("#name-prompt")
    assert page.is_hidden("#resume-seat")  # no table yet: nothing to offer
    token = page.evaluate("() => localStorage.getItem('sahrat.token')")

    # A private table for two, and a friend who joins by its invite code.
    with httpx.Client(base_url=server.url, timeout=10) as http:
        made = http.post(
            "/api/tables",
            json={"game": "konkan", "options": {"players": 2}, "private": True},
            headers=_auth(token),
        )
        assert made.status_code == 201, made.text
        table_id, code = made.json()["id"], made.json()["invite_code"]
        friend = http.post("/api/guests", json={"lang": "ar"}).json()
        joined = http.post(
            "/api/tables/join", json={"invite_code": code}, headers=_auth(friend["token"])
        )
        assert joined.status_code == 200 and joined.json()["status"] == "playing", joined.text
        lines = http.get("/api/me/tables", headers=_auth(token)).json()
        assert [line["table"]["id"] for line in lines] == [table_id]

    # My games shows it (the lobby lists no private table) and one tap seats me.
    row = page.locator(f'#my-game-list .my-game[data-table="{table_id}"]')
    row.wait_for()
    assert page.locator(f'#table-list [data-table="{table_id}"]').count() == 0
    assert AR["mygames.private"] in row.inner_text()
    row.locator(".back-to-seat").tap()
    page.wait_for_function("() => !!window.sahrat?.view")
    seat = state(page)["seat"]
    assert state(page)["info"]["seats"][seat]["name"] == name
    # My friend, at the table on their phone, sees my name with its space.
    other = new_page("ar", PHONE_390, touch=True)
    other.evaluate(
        "([auth, id]) => { localStorage.setItem('sahrat.token', auth.token);"
        " localStorage.setItem('sahrat.user', JSON.stringify(auth.user));"
        " location.hash = `#/t/${id}`; }",
        [friend, table_id],
    )
    other.wait_for_function("() => !!window.sahrat?.view")
    assert state(other)["seat"] == 1 - seat
    other.wait_for_function(f"() => document.body.innerText.includes({json.dumps(name)})")
    screenshot(other, "name-with-space-at-table-ar-390")

    # The tab is closed; the site opened again in a new tab is at the lobby, offering
    # the seat at once (not taking it by itself), and "my games" lists the table.
    context = page.context
    page.close()
    again = context.new_page()
    again.on("pageerror", lambda error: errors.append(str(error)))
    again.set_default_timeout(10_000)
    again.goto(server.url + "/")
    again.wait_for_selector("#resume-seat:not([hidden])")
    assert "#/t/" not in again.url  # offered, not taken by itself
    offer = again.inner_text("#resume-seat")
    assert f"#{table_id}" in offer, offer
    row = again.locator(f'#my-game-list .my-game[data-table="{table_id}"]')
    row.wait_for()
    # Whose turn it says is the table's: mine, or my friend's by name (read again until
    # the two agree: the turn may pass between a read and the lobby's next refresh).
    deadline = time.monotonic() + 12
    with httpx.Client(base_url=server.url, timeout=10) as http:
        while True:
            line = http.get("/api/me/tables", headers=_auth(token)).json()[0]
            says = (
                AR["mygames.your_turn"]
                if line["yours"]
                else AR["mygames.between"]
                if line["turn"] is None
                else line["turn_name"] or AR["mygames.turn_bot"]
            )
            shown = row.inner_text()
            if says in shown or time.monotonic() > deadline:
                break
            again.wait_for_timeout(200)
    assert says in shown, (says, shown)
    assert again.locator("#name-prompt").is_hidden()  # asked once, not again
    screenshot(again, "my-games-ar-390")
    assert axe_violations(again) == []
    width = again.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 390, width
    row.locator(".back-to-seat").tap()
    again.wait_for_function("() => !!window.sahrat?.view")
    assert again.url.endswith(f"#/t/{table_id}")
    back = state(again)
    assert back["seat"] == seat and back["info"]["id"] == table_id
    assert back["view"]["hand"], back["view"]  # my own hand: seated, not watching
    screenshot(again, "my-games-back-ar-390")
    assert not errors, errors


# The tab's visibility, and a Notification that records what it was asked to show (a
# headless browser has neither a background nor a notification centre).
FAKE_BACKGROUND = """
window.__hidden = false;
window.__notes = [];
window.__asked = 0;
window.__closed = 0;
Object.defineProperty(Document.prototype, "hidden",
  { get() { return window.__hidden; }, configurable: true });
Object.defineProperty(Document.prototype, "visibilityState",
  { get() { return window.__hidden ? "hidden" : "visible"; }, configurable: true });
class FakeNotification {
  static permission = "default";
  static requestPermission() {
    window.__asked += 1;
    FakeNotification.permission = "granted";
    return Promise.resolve("granted");
  }
  constructor(title, options) {
    window.__notes.push({ title, body: options.body, lang: options.lang });
  }
  close() { window.__closed += 1; }
}
window.Notification = FakeNotification;
"""
HIDE = "(on) => { window.__hidden = on; document.dispatchEvent(new Event('visibilitychange')); }"


def test_my_turn_in_a_background_tab(new_page: Any, server: Any) -> None:
    page = new_page("ar", PHONE_390, touch=True)
    page.context.add_init_script(FAKE_BACKGROUND)
    page.reload()
    page.click("#guest")
    page.wait_for_selector("#name-prompt:not([hidden])")
    page.tap("#first-name-keep")
    token = page.evaluate("() => localStorage.getItem('sahrat.token')")
    with httpx.Client(base_url=server.url, timeout=10) as http:
        made = http.post(
            "/api/tables",
            json={"game": "konkan", "options": {"players": 2}, "private": True},
            headers=_auth(token),
        )
        assert made.status_code == 201, made.text
        table_id = made.json()["id"]
    # The bell asks the browser's permission when tapped, and not before.
    page.wait_for_selector("#turn-bell")
    assert page.evaluate("() => window.__asked") == 0
    page.tap("#turn-bell")
    page.wait_for_selector('#turn-bell[aria-pressed="true"]')
    assert page.evaluate("() => window.__asked") == 1
    page.tap(f'#my-game-list .my-game[data-table="{table_id}"] .back-to-seat')
    page.wait_for_function("() => !!window.sahrat?.info")
    assert page.title() == AR["app.name"]

    # In the background, the match starts (a bot in the other seat): when the turn comes
    # to me, the title says so and one notification tells which table.
    page.evaluate(HIDE, True)
    with httpx.Client(base_url=server.url, timeout=10) as http:
        started = http.post(f"/api/tables/{table_id}/start", json={}, headers=_auth(token))
        assert started.status_code == 200, started.text
    page.wait_for_function("() => window.sahrat?.myTurnNow()", timeout=15_000)
    turn_title = f"● {AR['table.your_turn_title']} — {AR['app.name']}"
    page.wait_for_function(f"() => document.title === {json.dumps(turn_title)}")
    notes = page.evaluate("() => window.__notes")
    assert len(notes) == 1, notes
    assert notes[0]["title"] == AR["table.your_turn_title"]
    assert f"#{table_id}" in notes[0]["body"] and notes[0]["lang"] == "ar", notes

    # Seen again: the usual title, and the notification is gone.
    page.evaluate(HIDE, False)
    assert page.title() == AR["app.name"]
    assert page.evaluate("() => window.__closed") >= 1
    assert len(page.evaluate("() => window.__notes")) == 1
