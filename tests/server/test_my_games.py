"""My games, over real HTTP and sockets: the tables I am seated at, private ones
included, with whose move it is, and the names friends go by.

A player at a private table who lost the page finds the table again in
``GET /api/me/tables`` (and opens it by its address without the invite code), while a
stranger still learns nothing of it. Whose turn the list says is the turn the table's
socket shows. A finished match stays listed while its table is open, and leaves the
list once the table leaves memory. Names hold spaces and any alphabet, trimmed and
collapsed; a control or bidi character is refused with its own code; a guest is named
in the page's language.
"""

from __future__ import annotations

import asyncio
import unicodedata
from typing import Any

from sahrat.names import GUEST_WORDS

from .harness import Api, ServerProcess, WireClient, auth_headers, play

CONQUIAN_ONE_DEAL = {"wins_needed": 1, "break_seconds": 0}


def _arabic_words(name: str) -> bool:
    """Each word of the name is Arabic letters or ASCII digits."""
    return all(
        word.isdigit() or all("ARABIC" in unicodedata.name(c) for c in word)
        for word in name.split(" ")
    )


async def _private_for_two(api: Api, game: str, options: dict[str, Any]) -> tuple[Any, ...]:
    creator, creator_user = await api.guest()
    friend, friend_user = await api.guest()
    made = await api.http.post(
        "/api/tables",
        json={"game": game, "options": options, "private": True},
        headers=auth_headers(creator),
    )
    assert made.status_code == 201, made.text
    table_id, code = made.json()["id"], made.json()["invite_code"]
    joined = await api.http.post(
        "/api/tables/join", json={"invite_code": code}, headers=auth_headers(friend)
    )
    assert joined.status_code == 200, joined.text
    assert joined.json()["status"] == "playing"
    return table_id, (creator, creator_user), (friend, friend_user)


async def _my_games(server: ServerProcess) -> None:
    api = Api(server)
    try:
        table_id, (creator, creator_user), (friend, friend_user) = await _private_for_two(
            api, "konkan", {"players": 2}
        )
        stranger, _ = await api.guest()
        public = await api.create_table(stranger, "konkan", {"players": 3})

        mine = await api.get("/api/me/tables", creator)
        assert [line["table"]["id"] for line in mine] == [table_id]
        line = mine[0]
        assert line["table"]["private"] is True and line["table"]["status"] == "playing"
        assert line["table"]["invite_code"]  # shown to its seated players
        seat = line["seat"]
        assert line["table"]["seats"][seat]["user_id"] == creator_user["id"]
        assert line["finished"] is False and line["left"] is False

        # Whose move the list says is the one the table's socket shows.
        client = await WireClient.connect(server, table_id, creator, name="creator")
        try:
            assert client.view is not None
            turn = client.view["turn"]
            assert line["turn"] == turn
            assert line["yours"] is (turn == seat)
            names = {s["seat"]: s["name"] for s in line["table"]["seats"]}
            assert line["turn_name"] == names[turn]
            theirs = (await api.get("/api/me/tables", friend))[0]
            assert theirs["table"]["id"] == table_id and theirs["seat"] != seat
            assert theirs["yours"] is (turn == theirs["seat"]) is (not line["yours"])
        finally:
            await client.close()

        # The stranger's own list has only their public table; the lobby still hides the
        # private one, and its address is open to its players only.
        assert [x["table"]["id"] for x in await api.get("/api/me/tables", stranger)] == [
            public["id"]
        ]
        assert table_id not in [t["id"] for t in await api.get("/api/tables?limit=200")]
        for token in (creator, friend):
            assert (await api.get(f"/api/tables/{table_id}", token))["id"] == table_id
        refused = await api.http.get(f"/api/tables/{table_id}", headers=auth_headers(stranger))
        assert refused.status_code == 404 and refused.json()["detail"]["code"] == "no_such_table"
        no_token = await api.http.get("/api/me/tables")
        assert no_token.status_code == 401

        # A seat walked away from during the match is still mine: listed, marked left.
        left = await api.http.post(f"/api/tables/{table_id}/leave", headers=auth_headers(friend))
        assert left.status_code == 200, left.text
        theirs = (await api.get("/api/me/tables", friend))[0]
        assert theirs["table"]["id"] == table_id and theirs["left"] is True
        assert (await api.get(f"/api/tables/{table_id}", friend))["id"] == table_id
        assert friend_user["id"] in [s["user_id"] for s in theirs["table"]["seats"]]
    finally:
        await api.aclose()


def test_my_games_lists_my_private_table_with_whose_turn(
    start_server: Any,
) -> None:
    asyncio.run(_my_games(start_server()))


async def _finished_then_gone(server: ServerProcess) -> None:
    api = Api(server)
    try:
        table_id, (creator, _), (friend, _) = await _private_for_two(
            api, "conquian", CONQUIAN_ONE_DEAL
        )
        seats = [
            await WireClient.connect(server, table_id, token, name=f"seat{i}")
            for i, token in enumerate((creator, friend))
        ]
        seats.sort(key=lambda c: c.seat if c.seat is not None else -1)
        await play("conquian", seats, until=lambda view: False)
        assert seats[0].view is not None and seats[0].view["match_over"]
        for token in (creator, friend):
            found = await api.get("/api/me/tables", token)
            assert [x["table"]["id"] for x in found] == [table_id]
            assert found[0]["finished"] is True and found[0]["turn"] is None
            assert found[0]["yours"] is False
        # Nobody watches any more: the finished table leaves memory, and the list.
        for client in seats:
            await client.close()
        for _ in range(100):
            if not await api.get("/api/me/tables", creator):
                break
            await asyncio.sleep(0.1)
        assert await api.get("/api/me/tables", creator) == []
        assert await api.get("/api/me/tables", friend) == []
    finally:
        await api.aclose()


def test_a_finished_match_stays_until_its_table_closes(start_server: Any) -> None:
    asyncio.run(_finished_then_gone(start_server(SAHRAT_FINISHED_TABLE_SECONDS="0.5")))


async def _names(server: ServerProcess) -> None:
    api = Api(server)
    try:
        # A guest's name is readable, in the page's language.
        arabic = await api.http.post("/api/guests", json={"lang": "ar"})
        english = await api.http.post("/api/guests", json={"lang": "en"})
        plain = await api.http.post("/api/guests")
        assert arabic.status_code == english.status_code == plain.status_code == 201
        ar_name = arabic.json()["user"]["name"]
        en_name = english.json()["user"]["name"]
        assert _arabic_words(ar_name) and " " in ar_name, ar_name
        noun, adjective, number = ar_name.split(" ")
        assert noun in GUEST_WORDS["ar"][0] and adjective in GUEST_WORDS["ar"][1]
        assert number.isdigit()
        assert en_name.split(" ")[1] in GUEST_WORDS["en"][0], en_name
        assert plain.json()["user"]["name"].split(" ")[1] in GUEST_WORDS["en"][0]
        bad_lang = await api.http.post("/api/guests", json={"lang": "fr"})
        assert bad_lang.status_code == 422

        # The guest renames itself on its first visit: spaces trimmed and collapsed.
        token = arabic.json()["token"]
        table = await api.create_table(token, "konkan", {"players": 3})
        renamed = await api.http.patch(
            "/api/me", json={"name": "  أبو   فهد "}, headers=auth_headers(token)
        )
        assert renamed.status_code == 200, renamed.text
        assert renamed.json()["name"] == "أبو فهد"
        shown = await api.get(f"/api/tables/{table['id']}", token)
        assert shown["seats"][0]["name"] == "أبو فهد"

        # One name, however its spaces or its look.
        for taken in ("أبو فهد", " أبو\u00a0فهد", "أبو  فهد"):
            signed = await api.http.post("/api/users", json={"name": taken, "password": "x" * 8})
            assert signed.status_code == 409, (taken, signed.text)
            assert signed.json()["detail"]["code"] == "name_taken"
        other = await api.http.post(
            "/api/users", json={"name": "Layla Ahmed", "password": "long enough"}
        )
        assert other.status_code == 201 and other.json()["user"]["name"] == "Layla Ahmed"

        # Control and bidi characters: refused with their own code, naming the character.
        for name, char in [
            ("\u202eabc def", "U+202E"),
            ("abc\u2066def", "U+2066"),
            ("abc\u0007def", "U+0007"),
            ("abc\u200fdef", "U+200F"),
        ]:
            refused = await api.http.patch(
                "/api/me", json={"name": name}, headers=auth_headers(token)
            )
            assert refused.status_code == 422, (name, refused.text)
            detail = refused.json()["detail"]
            assert detail["code"] == "name_hidden_chars" and char in detail["message"], detail
        # Other faults as before: FastAPI's shape, naming the field.
        for name in ("ab", "abc 😀", "نجـمة", "x" * 41):
            refused = await api.http.patch(
                "/api/me", json={"name": name}, headers=auth_headers(token)
            )
            assert refused.status_code == 422, (name, refused.text)
            assert refused.json()["detail"][0]["loc"] == ["body", "name"], refused.text
        assert (await api.get("/api/me", token))["name"] == "أبو فهد"
    finally:
        await api.aclose()


def test_names_with_spaces_any_script_and_readable_guests(start_server: Any) -> None:
    asyncio.run(_names(start_server()))
