"""Bots at free tables (RULES.md §1.10): one person plays a whole match against bots,
and a player who leaves is replaced by a bot with the same hand, then takes the seat back."""

from __future__ import annotations

import asyncio
from typing import Any

from .harness import Api, ServerProcess, WireClient, engine_and_player, wire_action

MODULE_SERVER_ENV = {"SAHRAT_BOT_DELAY_SECONDS": "0"}


async def _until_my_turn_or_over(client: WireClient, timeout: float = 30.0) -> dict[str, Any]:
    def ready(_message: dict[str, Any]) -> bool:
        view = client.view
        return view is not None and (view["match_over"] or client.may_move)

    if not ready({}):
        await client.wait_for(ready, timeout=timeout)
    assert client.view is not None
    return client.view


async def _one_person_against_three_bots(server: ServerProcess) -> None:
    api = Api(server)
    try:
        token, _user = await api.guest()
        info = await api.create_table(token, "konkan", {"players": 4, "rounds": 1})
        started = await api.http.post(
            f"/api/tables/{info['id']}/start",
            json={"bots": True, "level": "strong"},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert started.status_code == 200, started.text
        assert [seat["bot"] for seat in started.json()["seats"]] == [False, True, True, True]
        me = await WireClient.connect(server, info["id"], token, name="me")
        engine, player = engine_and_player("konkan")
        for _ in range(500):
            view = await _until_my_turn_or_over(me)
            if view["match_over"]:
                break
            reply = await me.command(wire_action(engine, player(view)))
            assert reply["payload"]["ok"], reply
        assert me.view is not None and me.view["match_over"]
        bots_moved = [m for m in me.of_type("update") if m["payload"]["by"] == "bot"]
        assert bots_moved, "the bots never moved"
        updates = [m for m in me.messages if m["type"] == "update"]
        assert all((me.view_after(m) or {}).get("hand") is not None for m in updates)
        matches = await api.get(f"/api/tables/{info['id']}/matches")
        assert len(matches) == 1 and matches[0]["score_sheet"]["over"] is True
        await me.close()
    finally:
        await api.aclose()


def test_one_person_plays_a_whole_match_against_bots(module_server: ServerProcess) -> None:
    asyncio.run(_one_person_against_three_bots(module_server))


async def _leaver_is_replaced_and_comes_back(server: ServerProcess) -> None:
    api = Api(server)
    try:
        first, _ = await api.guest()
        second, _ = await api.guest()
        info = await api.create_table(first, "conquian", {"wins_needed": 3})
        await api.join(second, info["id"])
        watcher = await WireClient.connect(server, info["id"], first, name="first")
        hand_before = None
        leaving = await WireClient.connect(server, info["id"], second, name="second")
        hand_before = list(leaving.view["hand"]) if leaving.view else None
        await leaving.close()
        left = await api.http.post(
            f"/api/tables/{info['id']}/leave", headers={"Authorization": f"Bearer {second}"}
        )
        assert left.status_code == 200
        seat_of_second = 1 - (watcher.seat or 0)
        seat = left.json()["seats"][seat_of_second]
        assert seat["bot"] is True and seat["left"] is True
        # The same hand goes on: the bot moves for that seat, nothing is redealt.
        engine, player = engine_and_player("conquian")
        for _ in range(60):
            view = await _until_my_turn_or_over(watcher)
            if view["match_over"]:
                break
            if any(m["payload"]["by"] == "bot" for m in watcher.of_type("update")):
                break
            await watcher.command(wire_action(engine, player(view)))
        assert any(m["payload"]["by"] == "bot" for m in watcher.of_type("update"))
        assert watcher.view is not None and watcher.view["deal"] == 1, "leaving never redeals"
        assert hand_before is not None
        # Coming back takes the seat over again.
        back = await WireClient.connect(server, info["id"], second, name="back")
        table = await back.wait_for(
            lambda m: m["type"] == "table" and not m["payload"]["seats"][seat_of_second]["bot"]
        )
        assert table["payload"]["seats"][seat_of_second]["left"] is False
        await back.close()
        await watcher.close()
    finally:
        await api.aclose()


def test_a_leaver_is_replaced_by_a_bot_and_takes_the_seat_back(
    module_server: ServerProcess,
) -> None:
    asyncio.run(_leaver_is_replaced_and_comes_back(module_server))
