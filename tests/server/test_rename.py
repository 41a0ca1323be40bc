"""A player changes their display name (``PATCH /api/me``), on a live server.

The new name is what everyone sees from then on: ``/api/me``, the tables, the
leaderboard, the other players' match history — and a registered account logs in
with it. A name is checked as at sign-up: another form of a taken name (its case,
its full-width letters) is 409 ``name_taken``, a name with a bidi control or an
invisible character is a 422 naming the field, and each refusal changes nothing.
Renames are limited per account (429 ``too_many_renames``).
"""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

import httpx

from .harness import Api, ServerProcess, WireClient, auth_headers, play

MODULE_SERVER_ENV = {
    "SAHRAT_BOT_DELAY_SECONDS": "0",
    "SAHRAT_BOT_LEVEL": "simple",
    # one-deal (and one-round) matches count here (the minimums are test_real_play.py's)
    "SAHRAT_COUNTED_MIN_DEALS": "1",
    "SAHRAT_COUNTED_MIN_ROUNDS": "1",
    "SAHRAT_COUNTED_MIN_TURNS": "1",
}
PASSWORD = "long enough"
ONE_DEAL = {"game": "conquian", "options": {"wins_needed": 1}}


async def sign_up(http: httpx.AsyncClient, prefix: str = "p") -> tuple[str, dict[str, Any]]:
    made = await http.post(
        "/api/users", json={"name": f"{prefix}{secrets.token_hex(4)}", "password": PASSWORD}
    )
    assert made.status_code == 201, made.text
    return made.json()["token"], made.json()["user"]


async def finished(http: httpx.AsyncClient, table_id: int) -> dict[str, Any]:
    """The table's finished match (waits for it)."""
    for _ in range(600):
        found = (await http.get(f"/api/tables/{table_id}/matches")).json()
        if found:
            return dict(found[0])
        await asyncio.sleep(0.1)
    raise AssertionError(f"table {table_id}'s match did not finish")


async def play_a_match(server: ServerProcess, http: httpx.AsyncClient, *tokens: str) -> Any:
    """The players of ``tokens`` play one Conquian deal to its end, every move their own
    (the simple player's); the finished match."""
    made = await http.post("/api/tables", json=ONE_DEAL, headers=auth_headers(tokens[0]))
    assert made.status_code == 201, made.text
    table = int(made.json()["id"])
    for token in tokens[1:]:
        joined = await http.post(f"/api/tables/{table}/join", json={}, headers=auth_headers(token))
        assert joined.status_code == 200, joined.text
    seats = [
        await WireClient.connect(server, table, token, name=f"seat{i}")
        for i, token in enumerate(tokens)
    ]
    try:
        await play("conquian", seats, until=lambda view: False)
    finally:
        for seat in seats:
            await seat.close()
    return await finished(http, table)


async def rename(http: httpx.AsyncClient, token: str, name: Any) -> httpx.Response:
    return await http.patch("/api/me", json={"name": name}, headers=auth_headers(token))


async def me(http: httpx.AsyncClient, token: str) -> dict[str, Any]:
    found = await http.get("/api/me", headers=auth_headers(token))
    assert found.status_code == 200, found.text
    return dict(found.json())


def full_width(name: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in name)


def test_a_new_name_shows_everywhere(module_server: ServerProcess) -> None:
    async def scenario() -> None:
        api = Api(module_server)
        http = api.http
        try:
            (a, user_a), (b, _) = await sign_up(http), await sign_up(http)
            match = await play_a_match(module_server, http, a, b)
            seat_a = match["players"].index(user_a["id"])
            waiting = await api.create_table(a, "conquian", {})  # a's seat in the list
            new = f"ليلى-{secrets.token_hex(3)}"

            done = await rename(http, a, new)
            assert done.status_code == 200, done.text
            assert done.json()["name"] == new and done.json()["id"] == user_a["id"]
            assert (await me(http, a))["name"] == new
            table = await api.get(f"/api/tables/{waiting['id']}")
            assert table["seats"][0]["user_id"] == user_a["id"]
            assert table["seats"][0]["name"] == new
            listed = await api.get("/api/tables?limit=200")
            assert any(
                s["name"] == new for t in listed if t["id"] == waiting["id"] for s in t["seats"]
            )
            for by in ("coins", "wins"):
                board = await api.get(f"/api/leaderboard?by={by}&limit=100")
                rows = {row["user_id"]: row["name"] for row in board}
                assert rows[user_a["id"]] == new, by
            history = await api.get("/api/me/matches", b)
            assert history[0]["id"] == match["id"]
            assert history[0]["names"][seat_a] == new
            # The registered account logs in with its new name, no longer the old one.
            login = await http.post("/api/login", json={"name": new, "password": PASSWORD})
            assert login.status_code == 200 and login.json()["user"]["id"] == user_a["id"]
            old = await http.post("/api/login", json={"name": user_a["name"], "password": PASSWORD})
            assert old.status_code == 401
        finally:
            await api.aclose()

    asyncio.run(scenario())


def test_a_taken_name_is_refused_in_any_form(module_server: ServerProcess) -> None:
    async def scenario() -> None:
        api = Api(module_server)
        http = api.http
        try:
            (a, user_a), (b, user_b) = await sign_up(http), await sign_up(http)
            guest, user_g = await api.guest()
            for taken in (
                user_a["name"],
                user_a["name"].upper(),
                full_width(user_a["name"]),  # NFKC makes it the same name
                user_g["name"].upper(),  # a guest's name is taken too
            ):
                refused = await rename(http, b, taken)
                assert refused.status_code == 409, (taken, refused.text)
                assert refused.json()["detail"]["code"] == "name_taken"
            assert (await me(http, b))["name"] == user_b["name"]
            assert (await me(http, a))["name"] == user_a["name"]
            assert (await me(http, guest))["name"] == user_g["name"]
            # Another form of one's own name is one's own to take.
            mine = await rename(http, a, user_a["name"].upper())
            assert mine.status_code == 200, mine.text
            assert (await me(http, a))["name"] == user_a["name"].upper()
            # A guest picks a name; the guest name it had is free again.
            chosen = f"g{secrets.token_hex(4)}"
            assert (await rename(http, guest, chosen)).status_code == 200
            after = await me(http, guest)
            assert after["name"] == chosen and after["guest"] is True
            assert (await rename(http, b, user_g["name"])).status_code == 200
        finally:
            await api.aclose()

    asyncio.run(scenario())


def test_invisible_and_bidi_characters_are_refused(module_server: ServerProcess) -> None:
    async def scenario() -> None:
        api = Api(module_server)
        http = api.http
        try:
            token, user = await api.guest()
            for bad, says in (
                ("\u202e" + "boss" + secrets.token_hex(2), "U+202E"),  # RIGHT-TO-LEFT OVERRIDE
                ("bo\u200bss" + secrets.token_hex(2), "U+200B"),  # ZERO WIDTH SPACE
                ("نجـمة" + secrets.token_hex(2), "U+0640"),  # a tatweel
                ("ab", "3 to 40"),
                ("x" * 41, "3 to 40"),
                (12345, ""),
            ):
                refused = await rename(http, token, bad)
                assert refused.status_code == 422, (bad, refused.text)
                detail = refused.json()["detail"]
                if says in ("U+202E", "U+200B"):  # a code of their own (docs/social.md)
                    assert detail["code"] == "name_hidden_chars", detail
                    assert says in detail["message"], detail
                    continue
                assert detail[0]["loc"] == ["body", "name"], detail
                assert says in detail[0]["msg"], detail
            extra = await http.patch(
                "/api/me", json={"name": "fine_name", "guest": False}, headers=auth_headers(token)
            )
            assert extra.status_code == 422
            assert (await http.patch("/api/me", json={"name": "nobody1"})).status_code == 401
            assert (await me(http, token))["name"] == user["name"]
        finally:
            await api.aclose()

    asyncio.run(scenario())


def test_renames_are_limited_per_account(module_server: ServerProcess) -> None:
    async def scenario() -> None:
        api = Api(module_server)
        http = api.http
        try:
            (a, user_a), (b, _) = await sign_up(http), await sign_up(http)
            # A refused name does not count; an unchanged one neither.
            assert (await rename(http, b, user_a["name"])).status_code == 409
            assert (await rename(http, b, "\u202eabc")).status_code == 422
            names = [f"n{secrets.token_hex(4)}" for _ in range(4)]
            for name in names[:3]:
                done = await rename(http, b, name)
                assert done.status_code == 200, done.text
            assert (await rename(http, b, names[2])).status_code == 200  # no change
            limited = await rename(http, b, names[3])
            assert limited.status_code == 429, limited.text
            assert limited.json()["detail"]["code"] == "too_many_renames"
            assert int(limited.headers["Retry-After"]) > 0
            assert (await me(http, b))["name"] == names[2]
            # Another account is not limited by it.
            assert (await rename(http, a, f"n{secrets.token_hex(4)}")).status_code == 200
        finally:
            await api.aclose()

    asyncio.run(scenario())
