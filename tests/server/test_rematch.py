"""A rematch: once a match is over, its players ask for another one at the same seats;
the last one to ask starts it. Bots' seats are in the list as the match ends; spectators
and leavers cannot ask, and asking again changes nothing.
And hints: the bot's suggestion goes to the asking seat only, never at a coin table."""

from __future__ import annotations

import asyncio
from typing import Any

from .harness import (
    Api,
    ServerProcess,
    WireClient,
    auth_headers,
    play,
    play_seat,
    seated_table,
)

MODULE_SERVER_ENV = {"SAHRAT_BOT_DELAY_SECONDS": "0"}


def _tables(client: WireClient) -> list[dict[str, Any]]:
    return [m["payload"] for m in client.messages if m["type"] == "table"]


async def _two_players(server: ServerProcess) -> None:
    api = Api(server)
    table_id, tokens, _info = await seated_table(api, "conquian", {"wins_needed": 1}, 2)
    seats = [
        await WireClient.connect(server, table_id, token, name=f"seat{seat}")
        for seat, token in enumerate(tokens)
    ]
    watcher_token, _ = await api.guest()
    watcher = await WireClient.connect(server, table_id, watcher_token, name="watcher")
    try:
        await play("conquian", seats, until=lambda view: False)
        for client in seats:
            await client.wait_until(lambda c=client: bool(c.view and c.view["match_over"]))
        first_seq = seats[0].seq
        assert first_seq is not None
        # Asking too early, or as a spectator, is refused.
        index = await watcher.send({"type": "rematch"})
        refused = await watcher.wait_for(lambda m: m["type"] == "error", after=index)
        assert refused["payload"]["code"] == "spectator", refused
        await seats[0].send({"type": "rematch"})
        await seats[1].wait_until(
            lambda: bool(_tables(seats[1])) and _tables(seats[1])[-1]["rematch"] == [0]
        )
        assert _tables(seats[1])[-1]["status"] == "finished"
        await seats[1].send({"type": "rematch"})
        for client in (*seats, watcher):
            await client.wait_until(
                lambda c=client: c.view is not None and not c.view["match_over"]
            )
        assert seats[0].seq is not None and seats[0].seq > first_seq
        assert {client.seat for client in seats} == {0, 1}  # same seats
        info = await api.get(f"/api/tables/{table_id}")
        assert info["status"] == "playing" and info["rematch"] == []
        # The new match plays to its end too, and both are kept.
        await play("conquian", seats, until=lambda view: False)
        await seats[0].wait_until(lambda: bool(seats[0].view and seats[0].view["match_over"]))
        assert len(await api.get(f"/api/tables/{table_id}/matches")) == 2
    finally:
        for client in (*seats, watcher):
            await client.close()
        await api.aclose()


def test_two_players_play_a_rematch(module_server: ServerProcess) -> None:
    asyncio.run(_two_players(module_server))


async def _against_a_bot(server: ServerProcess, api: Api) -> tuple[int, WireClient]:
    """A guest's one-win Conquian table started with a simple bot, and the guest's socket."""
    token, _ = await api.guest()
    info = await api.create_table(token, "conquian", {"wins_needed": 1})
    table_id = int(info["id"])
    response = await api.http.post(
        f"/api/tables/{table_id}/start",
        json={"bots": True, "level": "simple"},
        headers=auth_headers(token),
    )
    assert response.status_code == 200, response.text
    return table_id, await WireClient.connect(server, table_id, token, name="me")


async def _with_bots(server: ServerProcess) -> None:
    api = Api(server)
    _, me = await _against_a_bot(server, api)
    try:
        await play_seat(me, "conquian")
        await me.send({"type": "rematch"})  # the bot agrees at once
        await me.wait_until(lambda: me.view is not None and not me.view["match_over"])
    finally:
        await me.close()
        await api.aclose()


def test_a_rematch_against_bots_starts_at_once(module_server: ServerProcess) -> None:
    asyncio.run(_with_bots(module_server))


async def _bots_ask_at_once(server: ServerProcess) -> dict[str, Any]:
    """docs/protocol.md: bots' seats ask for a rematch at once, as the match ends."""
    api = Api(server)
    table_id, me = await _against_a_bot(server, api)
    try:
        await play_seat(me, "conquian")
        finished = await me.wait_for(
            lambda m: m["type"] == "table" and m["payload"]["status"] == "finished"
        )
        return {
            "told": finished["payload"]["rematch"],
            "rest": (await api.get(f"/api/tables/{table_id}"))["rematch"],
        }
    finally:
        await me.close()
        await api.aclose()


def test_bots_seats_ask_for_a_rematch_as_the_match_ends(module_server: ServerProcess) -> None:
    # Nobody has asked yet: the bot's seat (1) is in the list all the same.
    assert asyncio.run(_bots_ask_at_once(module_server)) == {"told": [1], "rest": [1]}


# --- hints (same server) -------------------------------------------------------------


async def _hints(server: ServerProcess) -> None:
    api = Api(server)
    free_id, free_tokens, _ = await seated_table(api, "conquian", {}, 2)
    coin_id, coin_tokens, _ = await seated_table(api, "conquian", {"stake": 10}, 2)
    clients = [
        await WireClient.connect(server, free_id, token, name=f"free{seat}")
        for seat, token in enumerate(free_tokens)
    ]
    coin = await WireClient.connect(server, coin_id, coin_tokens[0], name="coin")
    try:
        assert clients[0].view is not None
        actor = clients[clients[0].view["turn"]]
        waiter = clients[1 - clients.index(actor)]
        index = await actor.send({"type": "hint"})
        hint = await actor.wait_for(lambda m: m["type"] in ("hint", "error"), after=index)
        assert hint["type"] == "hint", hint
        # The suggestion is a move the engine accepts for that seat, sent to it alone.
        reply = await actor.command(hint["payload"]["action"])
        assert reply["payload"]["ok"], (hint, reply)
        await waiter.roundtrip()
        assert not [m for m in waiter.messages if m["type"] == "hint"]
        # Not your turn, or a coin table: refused.
        index = await actor.send({"type": "hint"})
        refused = await actor.wait_for(lambda m: m["type"] in ("hint", "error"), after=index)
        assert refused["payload"]["code"] in ("not_your_turn", "too_many_hints"), refused
        index = await coin.send({"type": "hint"})
        refused = await coin.wait_for(lambda m: m["type"] in ("hint", "error"), after=index)
        assert refused["payload"]["code"] == "no_hints_at_coin_tables", refused
    finally:
        for client in (*clients, coin):
            await client.close()
        await api.aclose()


def test_a_hint_goes_to_its_seat_only_and_never_at_coin_tables(
    module_server: ServerProcess,
) -> None:
    asyncio.run(_hints(module_server))
