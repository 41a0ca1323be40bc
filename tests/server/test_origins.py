"""Another site's page cannot act for its visitors: a live server, sent the requests a
foreign page's form or script makes from its visitor's browser.

Every state-changing request that no bearer token authenticates (a guest, a sign-up,
a login) is refused with 403 ``bad_origin`` when the browser says it comes from
another site (an ``Origin`` the server does not serve, or, without one,
``Sec-Fetch-Site: cross-site``), and changes nothing: no account is made, no token
issued. The server's own pages, the origins ``SAHRAT_ALLOWED_ORIGINS`` lists, and
programs that send neither header go on as before.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable
from typing import Any

import httpx

from .harness import ServerProcess, auth_headers, make_admin

# why this module runs on SQLite only in make test (conftest.py)
ONE_DATABASE = "the origin check is a middleware that answers before any route reads the database"

EVIL = "https://evil.example"
FOREIGN_PAGES: dict[str, dict[str, str]] = {
    "foreign origin": {"Origin": EVIL, "Sec-Fetch-Site": "cross-site"},
    "foreign origin alone": {"Origin": EVIL},
    "opaque origin": {"Origin": "null"},
    "cross-site fetch without origin": {"Sec-Fetch-Site": "cross-site"},
    "same host, another port": {"Origin": "http://127.0.0.1:1"},
}


async def _players(http: httpx.AsyncClient, boss: dict[str, str]) -> int:
    """How many accounts exist (the admin API, page by page)."""
    count, offset = 0, 0
    while True:
        page = await http.get(
            "/api/admin/players", params={"limit": 500, "offset": offset}, headers=boss
        )
        assert page.status_code == 200, page.text
        count += len(page.json())
        if len(page.json()) < 500:
            return count
        offset += 500


def _credentials() -> dict[str, str]:
    return {"name": f"p-{secrets.token_hex(4)}", "password": "a long password"}


async def _requests(
    http: httpx.AsyncClient, headers: dict[str, str], login: dict[str, str]
) -> list[httpx.Response]:
    """A guest, a sign-up and a login, sent with ``headers``."""
    return [
        await http.post("/api/guests", headers=headers),
        await http.post("/api/users", json=_credentials(), headers=headers),
        await http.post("/api/login", json=login, headers=headers),
    ]


async def _attack(server: ServerProcess, origins: dict[str, dict[str, str]]) -> dict[str, Any]:
    name, password = make_admin(server.database_url)
    async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as http:
        signed = await http.post("/api/login", json={"name": name, "password": password})
        assert signed.status_code == 200, signed.text
        boss = auth_headers(signed.json()["token"])
        player = _credentials()
        assert (await http.post("/api/users", json=player)).status_code == 201
        found: dict[str, Any] = {}
        for label, headers in origins.items():
            before = await _players(http, boss)
            found[label] = await _requests(http, headers, player)
            found[label + " made"] = await _players(http, boss) - before
        # A program with a bearer token is not a page that borrowed a visitor's cookie.
        found["bearer"] = await http.post(
            "/api/tables", json={"game": "konkan", "options": {}}, headers={**boss, "Origin": EVIL}
        )
    return found


def _refused(response: httpx.Response) -> None:
    assert response.status_code == 403, response.text
    assert response.json()["detail"]["code"] == "bad_origin", response.text
    assert "token" not in response.text
    assert response.headers["x-frame-options"] == "DENY"  # the edge's headers, as always


def test_another_sites_page_cannot_make_accounts_or_sign_in(
    module_servers: Callable[..., ServerProcess],
) -> None:
    server = module_servers()
    own = f"http://127.0.0.1:{server.port}"
    allowed = {
        "own page": {"Origin": own, "Sec-Fetch-Site": "same-origin"},
        "own page, origin alone": {"Origin": own},
        "a program": {},
        "typed into the address bar": {"Sec-Fetch-Site": "none"},
    }
    found = asyncio.run(_attack(server, {**FOREIGN_PAGES, **allowed}))
    for label in FOREIGN_PAGES:
        for response in found[label]:
            _refused(response)
        assert found[label + " made"] == 0, label
    for label in allowed:
        assert [r.status_code for r in found[label]] == [201, 201, 200], (label, found[label])
        assert found[label + " made"] == 2, label
    assert found["bearer"].status_code == 201, found["bearer"].text


def test_the_listed_origins_may_sign_in_and_no_other(
    module_servers: Callable[..., ServerProcess],
) -> None:
    listed = "https://cards.example"
    server = module_servers(SAHRAT_ALLOWED_ORIGINS=listed)
    found = asyncio.run(
        _attack(
            server, {"listed": {"Origin": listed, "Sec-Fetch-Site": "cross-site"}, **FOREIGN_PAGES}
        )
    )
    assert [r.status_code for r in found["listed"]] == [201, 201, 200], found["listed"]
    for label in FOREIGN_PAGES:
        for response in found[label]:
            _refused(response)
        assert found[label + " made"] == 0, label
