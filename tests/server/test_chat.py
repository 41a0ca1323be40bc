"""Table chat over real sockets (docs/social.md, "Chat"): players' and spectators'
messages kept apart at a coin table in play, the history a new connection gets, the
limits with their codes (length, control characters, rate), the table's ``chat``
setting, reports kept for the admins, and a suspended sender refused."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import orjson

from sahrat import wire_schemas

from .harness import Api, Message, ServerProcess, WireClient, auth_headers, make_admin

STAKE = 10


async def admin_headers(api: Api, server: ServerProcess) -> dict[str, str]:
    name, password = make_admin(server.database_url, "chat-boss")
    login = await api.http.post("/api/login", json={"name": name, "password": password})
    assert login.status_code == 200, login.text
    return auth_headers(login.json()["token"])


async def table_of_two(
    api: Api, boss: dict[str, str], options: dict[str, Any], **extra: Any
) -> tuple[int, list[tuple[str, dict[str, Any]]], Message]:
    """An admin's table (not seated) that two guests fill: its id, the guests by seat."""
    created = await api.http.post(
        "/api/admin/tables", json={"game": "conquian", "options": options, **extra}, headers=boss
    )
    assert created.status_code == 201, created.text
    table_id = int(created.json()["id"])
    guests = [await api.guest() for _ in range(2)]
    info: Message = {}
    for token, _user in guests:
        info = await api.join(token, table_id)
    assert info["status"] == "playing", info
    by_user = {user["id"]: (token, user) for token, user in guests}
    seats = sorted(info["seats"], key=lambda s: s["seat"])
    return table_id, [by_user[s["user_id"]] for s in seats], info


async def say(client: WireClient, payload: dict[str, Any]) -> Message:
    """Send a chat payload; its answer to the sender: its own ``chat`` or an ``error``."""
    index = await client.send({"type": "chat", "payload": payload})
    return await client.wait_for(lambda m: m["type"] in ("chat", "error"), after=index)


def assert_fit_the_schema(game: str, *clients: WireClient) -> int:
    """Every message the clients got (chat, chat_history and errors among them) fits the
    game's server-message schema, every object closed."""
    adapter = wire_schemas.adapter(
        "ConquianServerMessage" if game == "conquian" else "KonkanServerMessage"
    )
    checked = 0
    for client in clients:
        for message in client.messages:
            adapter.validate_json(orjson.dumps(message))
            checked += 1
    return checked


def chats(client: WireClient) -> list[dict[str, Any]]:
    return [m["payload"] for m in client.of_type("chat")]


async def report(api: Api, table_id: int, message_id: str, token: str) -> httpx.Response:
    return await api.http.post(
        f"/api/tables/{table_id}/chat/{message_id}/report", headers=auth_headers(token)
    )


async def _coin_table(server: ServerProcess) -> None:
    api = Api(server)
    try:
        boss = await admin_headers(api, server)
        table_id, seats, info = await table_of_two(api, boss, {"stake": STAKE})
        assert info["coin_table"] is True and info["chat"] is True
        (a_token, a_user), (b_token, b_user) = seats
        a = await WireClient.connect(server, table_id, a_token, name="a")
        b = await WireClient.connect(server, table_id, b_token, name="b")
        s_token, s_user = await api.guest()
        s = await WireClient.connect(server, table_id, s_token, name="s")
        assert (a.seat, b.seat, s.seat) == (0, 1, None)

        # A player's message is the table's: both players and the spectator read it.
        words = "  يلا يا شباب، let's go 👋🏽  "
        mine = await say(a, {"text": words})
        assert mine["type"] == "chat", mine
        said = mine["payload"]
        assert said["text"] == words.strip() and said["phrase"] is None
        assert (said["seat"], said["channel"], said["user_id"]) == (0, "players", a_user["id"])
        for reader in (b, s):
            got = await reader.wait_for(lambda m: m["type"] == "chat")
            assert got["payload"] == said
        phrase = await say(b, {"phrase": "yalla"})
        assert phrase["payload"]["phrase"] == "yalla" and phrase["payload"]["text"] is None
        await s.wait_for(lambda m: m["type"] == "chat" and m["payload"]["phrase"] == "yalla")

        # A spectator's message during play at a coin table: spectators only.
        watcher = await say(s, {"text": "play the seven!"})
        assert watcher["payload"]["channel"] == "spectators"
        assert watcher["payload"]["seat"] is None
        s2_token, s2_user = await api.guest()
        s2 = await WireClient.connect(server, table_id, s2_token, name="s2")
        history = await s2.wait_for(lambda m: m["type"] == "chat_history")
        assert [m["id"] for m in history["payload"]["messages"]] == [
            said["id"],
            phrase["payload"]["id"],
            watcher["payload"]["id"],
        ]
        # (the spectator's message went out before the players' pongs: none came)
        await a.roundtrip()
        await b.roundtrip()
        for player in (a, b):
            assert [m["channel"] for m in chats(player)] == ["players", "players"], player.tail()
        # A player who opens the table again gets the players' messages only.
        a2 = await WireClient.connect(server, table_id, a_token, name="a2")
        history = await a2.wait_for(lambda m: m["type"] == "chat_history")
        assert [m["id"] for m in history["payload"]["messages"]] == [
            said["id"],
            phrase["payload"]["id"],
        ]
        await a2.close()

        # Reports: of a message you were sent, once each; not your own, not one you
        # were not sent.
        first = await report(api, table_id, said["id"], b_token)
        assert first.status_code == 201, first.text
        again = await report(api, table_id, said["id"], b_token)
        assert again.status_code == 200 and again.json()["id"] == first.json()["id"]
        own = await report(api, table_id, said["id"], a_token)
        assert own.status_code == 409 and own.json()["detail"]["code"] == "chat_own_message"
        unseen = await report(api, table_id, watcher["payload"]["id"], a_token)
        assert unseen.status_code == 404, unseen.text
        assert unseen.json()["detail"]["code"] == "no_such_message"
        by_watcher = await report(api, table_id, watcher["payload"]["id"], s2_token)
        assert by_watcher.status_code == 201, by_watcher.text
        stranger_token, _ = await api.guest()  # not at the table
        stranger = await report(api, table_id, said["id"], stranger_token)
        assert stranger.status_code == 404, stranger.text
        forbidden = await api.http.get("/api/admin/chat/reports", headers=auth_headers(b_token))
        assert forbidden.status_code == 403
        listed = await api.http.get("/api/admin/chat/reports", headers=boss)
        assert listed.status_code == 200, listed.text
        rows = [r for r in listed.json() if r["table_id"] == table_id]
        assert [(r["message_id"], r["reporter_id"]) for r in rows] == [
            (watcher["payload"]["id"], s2_user["id"]),
            (said["id"], b_user["id"]),
        ]
        newest, oldest = rows
        assert oldest["text"] == words.strip() and oldest["sender_id"] == a_user["id"]
        assert oldest["sender_name"] == a_user["name"] and oldest["channel"] == "players"
        assert oldest["sender_seat"] == 0 and oldest["sender_suspended"] is False
        assert newest["sender_id"] == s_user["id"] and newest["channel"] == "spectators"
        assert newest["sender_seat"] is None and newest["text"] == "play the seven!"

        # The admin suspends the reported player: their chat is refused from then on.
        suspended = await api.http.post(
            f"/api/admin/players/{a_user['id']}/suspend", json={"suspended": True}, headers=boss
        )
        assert suspended.status_code == 200, suspended.text
        await a.wait_until(lambda: a.seat is None)  # a suspended player only watches
        refused = await say(a, {"text": "hello?"})
        assert refused["type"] == "error" and refused["payload"]["code"] == "suspended"
        listed = await api.http.get("/api/admin/chat/reports", headers=boss)
        mine_now = [r for r in listed.json() if r["message_id"] == said["id"]]
        assert mine_now and mine_now[0]["sender_suspended"] is True
        assert {"chat", "chat_history", "error"} <= {m["type"] for m in s2.messages + a.messages}
        assert assert_fit_the_schema("conquian", a, b, s, s2)
        for client in (a, b, s, s2):
            await client.close()
    finally:
        await api.aclose()


def test_players_and_spectators_apart_at_a_coin_table_and_reports(
    module_server: ServerProcess,
) -> None:
    asyncio.run(_coin_table(module_server))


async def _free_table_and_limits(server: ServerProcess) -> None:
    api = Api(server)
    try:
        boss = await admin_headers(api, server)
        table_id, seats, _info = await table_of_two(api, boss, {})
        (a_token, _), (b_token, _) = seats
        a = await WireClient.connect(server, table_id, a_token, name="a")
        b = await WireClient.connect(server, table_id, b_token, name="b")
        s_token, _ = await api.guest()
        s = await WireClient.connect(server, table_id, s_token, name="s")
        # At a free table the players read the spectators.
        watcher = await say(s, {"text": "nice move"})
        for player in (a, b):
            got = await player.wait_for(lambda m: m["type"] == "chat")
            assert got["payload"] == watcher["payload"]

        async def refused(payload: Any, code: str) -> None:
            index = await a.send({"type": "chat", "payload": payload})
            answer = await a.wait_for(lambda m: m["type"] in ("chat", "error"), after=index)
            assert answer["type"] == "error", (payload, answer)
            assert answer["payload"]["code"] == code, (payload, answer)

        await refused({"text": "x" * 201}, "chat_too_long")
        await refused({"text": "ب" * 201}, "chat_too_long")
        await refused({"text": "   \u00a0 "}, "chat_empty")
        for bad in ("two\nlines", "tab\there", "\u202eevil", "a\u2066b\u2069", "x\u200fy", "\x07"):
            await refused({"text": bad}, "chat_bad_text")
        await refused({"phrase": "you are slow"}, "bad_chat")
        await refused({"text": "hi", "phrase": "yalla"}, "bad_chat")
        await refused({"text": 5}, "bad_chat")
        await refused("hello", "bad_chat")
        index = await a.send({"type": "chat", "text": "flat"})
        flat = await a.wait_for(lambda m: m["type"] == "error", after=index)
        assert flat["payload"]["code"] == "bad_chat"
        # 200 characters once trimmed, joiners kept: accepted.
        longest = " " + "ل" * 199 + "\u200d" + " "
        ok = await say(a, {"text": longest})
        assert ok["type"] == "chat" and ok["payload"]["text"] == longest.strip()
        # The rate: five in ten seconds (the refused ones above did not count).
        for n in range(4):
            answer = await say(a, {"phrase": "nice"})
            assert answer["type"] == "chat", (n, answer)
        await refused({"phrase": "hurry"}, "chat_too_fast")
        await refused({"text": "still me"}, "chat_too_fast")
        # ...one user's limit: the other player still talks.
        assert (await say(b, {"phrase": "thanks"}))["type"] == "chat"
        # Nothing refused reached the others.
        await b.roundtrip()
        texts = [
            m["text"] or m["phrase"]
            for m in chats(b)
            if m["user_id"] != watcher["payload"]["user_id"]
        ]
        assert texts == [longest.strip(), "nice", "nice", "nice", "nice", "thanks"]
        assert assert_fit_the_schema("conquian", a, b, s)
        for client in (a, b, s):
            await client.close()
    finally:
        await api.aclose()


def test_free_table_spectators_reach_players_and_the_limits(module_server: ServerProcess) -> None:
    asyncio.run(_free_table_and_limits(module_server))


async def _chat_off(server: ServerProcess) -> None:
    api = Api(server)
    try:
        token, _ = await api.guest()
        response = await api.http.post(
            "/api/tables",
            json={"game": "konkan", "options": {"players": 2}, "chat": False},
            headers=auth_headers(token),
        )
        assert response.status_code == 201, response.text
        info = response.json()
        assert info["chat"] is False
        fetched = await api.get(f"/api/tables/{info['id']}")
        assert fetched["chat"] is False
        client = await WireClient.connect(server, info["id"], token, name="off")
        answer = await say(client, {"phrase": "hello"})
        assert answer["type"] == "error" and answer["payload"]["code"] == "chat_off"
        assert client.of_type("chat_history") == []
        # A table created without the setting has its chat on.
        other = await api.create_table(token, "konkan", {"players": 2})
        assert other["chat"] is True
        await client.close()
    finally:
        await api.aclose()


def test_a_table_with_chat_off(module_server: ServerProcess) -> None:
    asyncio.run(_chat_off(module_server))
