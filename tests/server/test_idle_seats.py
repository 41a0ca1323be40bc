"""Nobody earns coins for a match they did not play, and a seat the turn timer keeps
playing is forfeited (docs/economy.md).

The farm: a guest opens a free table, starts it with bots and never connects; the
timer plays the seat to the end. That seat earns nothing. A seat the timer played
``SAHRAT_TIMER_TURNS_TO_FORFEIT`` turns in a row is marked left, and at a free table
a bot takes it over; the player's next move takes it back. (Against a bot from the
start, a quick deal let the bot go out before the third idle turn: the forfeit
test's players are both people, both idle.)"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from .harness import Api, ServerProcess, WireClient, auth_headers, play_seat, seated_table


async def _balance(api: Api, token: str) -> int:
    return int((await api.get("/api/me", token))["balance"])


async def _start_with_bots(api: Api, token: str, game: str, options: dict[str, Any]) -> int:
    table_id = int((await api.create_table(token, game, options))["id"])
    response = await api.http.post(
        f"/api/tables/{table_id}/start",
        json={"bots": True, "level": "simple"},
        headers=auth_headers(token),
    )
    assert response.status_code == 200, response.text
    return table_id


async def _finished(api: Api, table_id: int, timeout: float = 120) -> list[dict[str, Any]]:
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        matches = await api.get(f"/api/tables/{table_id}/matches")
        if matches:
            return list(matches)
        await asyncio.sleep(0.2)
    raise AssertionError(f"table {table_id}: the match did not finish in {timeout} s")


async def _never_connected(server: ServerProcess) -> None:
    api = Api(server)
    try:
        idle, _ = await api.guest()
        before = await _balance(api, idle)
        table_id = await _start_with_bots(api, idle, "conquian", {"wins_needed": 1})
        info = await api.get(f"/api/tables/{table_id}")
        assert info["status"] == "playing"
        await _finished(api, table_id)
        assert await _balance(api, idle) == before, "a seat nobody played earned coins"
    finally:
        await api.aclose()


def test_a_table_started_and_never_played_earns_nothing(
    start_server: Callable[..., ServerProcess],
) -> None:
    server = start_server(
        SAHRAT_TURN_SECONDS_OVERRIDE="0.05",
        SAHRAT_BOT_DELAY_SECONDS="0",
        SAHRAT_FREE_TABLE_EARNINGS="10",
    )
    asyncio.run(_never_connected(server))


async def _played_and_forfeited(server: ServerProcess) -> None:
    """Both players idle: the timer plays both seats (it never lays a card down, so
    nobody goes out, whatever the deal) until each is forfeited to a bot; then one of
    them comes back."""
    api = Api(server)
    try:
        table_id, tokens, _info = await seated_table(api, "konkan", {"players": 2, "rounds": 1}, 2)
        token = tokens[0]
        before = await _balance(api, token)
        me = await WireClient.connect(server, table_id, token, name="me")

        def my_seat() -> dict[str, Any] | None:
            tables = [m for m in me.messages if m["type"] == "table"]
            return tables[-1]["payload"]["seats"][me.seat] if tables else None

        # Idle: the timer plays my turns until the seat is forfeited to a bot.
        await me.wait_until(lambda: bool((seat := my_seat()) and seat["left"]), timeout=60)
        seat = my_seat()
        assert seat is not None and seat["bot"], seat  # a bot plays it at a free table
        # Any command of mine takes the seat back, refused or not; then I play the match
        # to its end. (At once: the table message that says the seat is mine again may
        # come up to two seconds later, merged, and a player who waits for it idles
        # while the timer plays their turns: three of them forfeit the seat again.)
        reply = await me.command({"type": "discard", "card": "2C"})
        assert reply["payload"]["ok"] or reply["payload"]["error"]["code"] in (
            "not_your_turn",
            "wrong_phase",
            "card_not_in_hand",
            "stale",
        ), reply
        await play_seat(me, "konkan")
        await _finished(api, table_id)
        await me.roundtrip()
        await me.wait_until(lambda: bool((seat := my_seat()) and not seat["left"]))
        seat = my_seat()
        assert seat is not None and not seat["bot"], seat  # mine at the end, as I played it
        assert await _balance(api, token) == before + 10  # I came back and played it out
    finally:
        await api.aclose()


def test_a_seat_left_to_the_timer_is_forfeited_and_taken_back(
    start_server: Callable[..., ServerProcess],
) -> None:
    server = start_server(
        SAHRAT_TURN_SECONDS_OVERRIDE="0.5",
        # The bots that take the forfeited seats wait a little, so my command (sent as
        # the forfeit is announced) comes before they could end the round.
        SAHRAT_BOT_DELAY_SECONDS="0.2",
        SAHRAT_FREE_TABLE_EARNINGS="10",
        SAHRAT_TIMER_TURNS_TO_FORFEIT="3",
        # a one-round match counts here (the minimums are test_real_play.py's)
        SAHRAT_COUNTED_MIN_ROUNDS="1",
        SAHRAT_COUNTED_MIN_TURNS="1",
    )
    asyncio.run(_played_and_forfeited(server))
