"""Friends on two phones, in Arabic (docs/social.md, "Friends"): «أبو فهد» adds his
friend by name from the lobby; the friend, in his own lobby, accepts the request; both
see each other online. Then «أبو فهد» opens a private table and invites him from its
waiting room (where he also asks the player seated there to be friends): the invitation
reaches the friend's lobby by itself, and one tap on "join" seats him at the private
table (no invite code typed)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import httpx

from .conftest import PHONE_390
from .helpers import axe_violations, screenshot, state

STATIC = Path(__file__).resolve().parents[2] / "static"
AR = json.loads((STATIC / "i18n" / "ar.json").read_text(encoding="utf-8"))

SIGN_IN = (
    "([auth, hash]) => { localStorage.setItem('sahrat.token', auth.token);"
    " localStorage.setItem('sahrat.user', JSON.stringify(auth.user)); location.hash = hash; }"
)


def _account(http: httpx.Client, name: str) -> dict[str, Any]:
    made = http.post("/api/users", json={"name": name, "password": "long enough"})
    assert made.status_code == 201, made.text
    return dict(made.json())


def _phone(new_page: Any, auth: dict[str, Any], hash_: str = "#/") -> Any:
    page = new_page("ar", PHONE_390, touch=True)
    page.evaluate(SIGN_IN, [auth, hash_])
    page.reload()
    page.wait_for_selector("#friends h2")
    return page


def test_a_friend_request_accepted_and_an_invitation_that_seats_the_friend(
    new_page: Any, server: Any
) -> None:
    n = random.randrange(10**5)
    with httpx.Client(base_url=server.url, timeout=10) as http:
        host = _account(http, f"أبو فهد {n:05d}")
        friend = _account(http, f"سالم {n:05d}")

    # «أبو فهد» adds his friend by name.
    page = _phone(new_page, host)
    assert page.inner_text("#friends h2") == AR["friends.title"]
    page.fill("#friend-name", friend["user"]["name"])
    page.tap("#friend-add")
    page.wait_for_selector(
        f'#friend-requests-out [data-user="{friend["user"]["id"]}"]', state="attached"
    )

    # The friend sees the request in his lobby and accepts it.
    other = _phone(new_page, friend)
    request = other.locator(f'#friend-requests-in [data-user="{host["user"]["id"]}"]')
    request.wait_for()
    assert host["user"]["name"] in request.inner_text()
    screenshot(other, "friend-request-ar-390")
    assert axe_violations(other) == []
    request.locator(".accept-friend").tap()
    # Online: his page asks the server every few seconds.
    mine = other.locator(
        f'#friend-list .friend[data-user="{host["user"]["id"]}"][data-online="true"]'
    )
    mine.wait_for()
    assert AR["friends.online"] in mine.inner_text()

    # «أبو فهد» opens a private table, where a player he does not know yet sits down
    # with its code, and invites his friend from the waiting room.
    with httpx.Client(base_url=server.url, timeout=10) as http:
        made = http.post(
            "/api/tables",
            json={"game": "konkan", "options": {"players": 4}, "private": True},
            headers={"Authorization": f"Bearer {host['token']}"},
        )
        assert made.status_code == 201, made.text
        table_id = made.json()["id"]
        stranger = _account(http, f"ضيف الطاولة {n:05d}")
        sat = http.post(
            "/api/tables/join",
            json={"invite_code": made.json()["invite_code"]},
            headers={"Authorization": f"Bearer {stranger['token']}"},
        )
        assert sat.status_code == 200, sat.text
    page.evaluate("(id) => { location.hash = `#/t/${id}`; }", table_id)
    page.wait_for_function("() => window.sahrat?.info?.seats.filter((s) => s.user_id).length === 2")
    page.tap("#invite-friends")
    button = page.locator(
        f'#invite-list .friend[data-user="{friend["user"]["id"]}"] .invite-friend'
    )
    button.wait_for()
    screenshot(page, "invite-a-friend-ar-390")
    assert axe_violations(page) == []
    button.tap()
    page.wait_for_function(
        "(sent) => document.querySelector('#invite-list .invite-friend').textContent === sent",
        arg=AR["invite.sent_short"],
    )
    # The player at the table, not a friend yet: a friend request from the table.
    page.tap(f'#seat-strangers [data-user="{stranger["user"]["id"]}"]')
    page.wait_for_selector("#seat-strangers .add-seat-friend", state="detached")
    with httpx.Client(base_url=server.url, timeout=10) as http:
        theirs = http.get(
            "/api/friends", headers={"Authorization": f"Bearer {stranger['token']}"}
        ).json()
    assert [r["user_id"] for r in theirs["incoming"]] == [host["user"]["id"]]
    page.keyboard.press("Escape")

    # The invitation reaches the friend's lobby by itself; one tap seats him.
    other.wait_for_selector("#invitation-banner:not([hidden])", timeout=12_000)
    text = other.inner_text("#invitation-banner")
    assert host["user"]["name"] in text and f"#{table_id}" in text, text
    screenshot(other, "invitation-banner-ar-390")
    assert axe_violations(other) == []
    width = other.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 390, width
    other.tap("#invitation-join")
    other.wait_for_function(
        f"() => window.sahrat?.info?.id === {table_id} && window.sahrat.seat !== null"
    )
    seated = state(other)
    assert seated["info"]["private"] is True
    assert seated["info"]["seats"][seated["seat"]]["user_id"] == friend["user"]["id"]
    assert other.is_hidden("#invitation-banner")
    # The host's table shows him seated.
    page.wait_for_function(
        f"() => window.sahrat.info.seats.some((s) => s.user_id === {friend['user']['id']})"
    )
    screenshot(other, "invited-friend-seated-ar-390")
