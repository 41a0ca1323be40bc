"""A seat whose player walked away from a coin match is played by the turn timer at a
left seat's short pace, not at the table's turn time (RULES.md §1.10: never a bot).

The attack: at a coin table with the longest turn time (300 s), a player who is losing
leaves; the turn timer used to wait the full 300 s on each of the leaver's turns, so
the one who stayed waited hours and the pot stayed locked. Now a seat whose player
left (left, was suspended, or forfeited the seat to the timer) has
``SAHRAT_LEFT_SEAT_TURN_SECONDS`` a turn: the match goes on at the stayer's pace, and
the deadline every client is shown is that short one, also after a restart. A player
who merely dropped keeps the table's full time (and the grace period).

Each deadline is checked against the moment its message arrived: a deadline the
server set at most ``SHORT`` seconds after the step ends at most ``SHORT`` seconds
after its message came.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from .harness import (
    Api,
    Message,
    ServerProcess,
    WireClient,
    auth_headers,
    engine_and_player,
    seated_table,
    wire_action,
)

TURN = 300  # the table's turn time: the longest there is
SHORT = 1.0  # SAHRAT_LEFT_SEAT_TURN_SECONDS in these tests
COIN_TABLE = {"players": 2, "stake": 10, "turn_seconds": TURN, "rounds": 1}
MODULE_SERVER_ENV = {"SAHRAT_LEFT_SEAT_TURN_SECONDS": str(SHORT)}


class TimedClient(WireClient):
    """A client that notes when each message arrived (``arrivals``, by message index)."""

    def __init__(self, name: str, ws: Any) -> None:
        self.arrivals: list[float] = []
        super().__init__(name, ws)

    def _track(self, message: Message) -> dict[str, Any] | None:
        self.arrivals.append(time.time())
        return super()._track(message)


async def _next(
    client: TimedClient, pred: Callable[[Message], bool], after: int
) -> tuple[Message, float]:
    """The first message from index ``after`` on that ``pred`` accepts, with the time left
    before its deadline when it arrived."""
    message = await client.wait_for(pred, after=after)
    index = next(i for i in range(after, len(client.messages)) if client.messages[i] is message)
    payload = message["payload"]
    deadline = payload["deadline"] if "deadline" in payload else payload["snapshot"]["deadline"]
    return message, deadline - client.arrivals[index]


def _turn_of(client: WireClient, seat: int) -> Callable[[Message], bool]:
    """A message that starts ``seat``'s turn: an update handing it the turn, or the end
    of a round break (an extra round after a tie) before its first turn."""

    def starts(message: Message) -> bool:
        payload = message["payload"]
        if message["type"] == "update":
            view = client.view_after(message)
            assert view is not None
            return (
                payload["round_break"] is None and view["turn"] == seat and not view["match_over"]
            )
        ended = message["type"] == "break" and payload["round_break"] is None
        return ended and client.view is not None and client.view["turn"] == seat

    return starts


def _by_timer(seat: int) -> Callable[[Message], bool]:
    def played(message: Message) -> bool:
        if message["type"] != "update" or message["payload"]["by"] != "timer":
            return False
        return any(event.get("seat") == seat for event in message["payload"]["events"])

    return played


async def _play_my_turn(client: WireClient, game: str) -> None:
    """The simple player's moves for the client's seat until its turn passes."""
    engine, player = engine_and_player(game)
    await client.wait_until(lambda: client.view is not None and client.may_move)
    while client.may_move:
        assert client.view is not None
        reply = await client.command(wire_action(engine, player(client.view)))
        assert reply["payload"]["ok"], reply


async def _seated(api: Api, server: ServerProcess) -> tuple[int, list[str], list[TimedClient]]:
    table_id, tokens, info = await seated_table(api, "konkan", COIN_TABLE, 2)
    assert info["coin_table"] and info["options"]["turn_seconds"] == TURN
    clients = [
        await TimedClient.connect(server, table_id, token, name=f"seat{seat}")
        for seat, token in enumerate(tokens)
    ]
    return table_id, tokens, clients


async def _leave_a_coin_match(server: ServerProcess) -> dict[str, Any]:
    api = Api(server)
    try:
        table_id, tokens, (leaver, stayer) = await _seated(api, server)
        if leaver.may_move:
            await _play_my_turn(leaver, "konkan")
        # The leaver's connection drops: a dropped player keeps the table's turn time.
        await leaver.close()
        after = len(stayer.messages)
        await _play_my_turn(stayer, "konkan")
        _, dropped = await _next(stayer, _turn_of(stayer, 0), after)
        # Then the player leaves the match during that turn: the turn ends soon, and
        # everyone is shown its new deadline (a snapshot: no step changed it).
        after = len(stayer.messages)
        left = await api.http.post(f"/api/tables/{table_id}/leave", headers=auth_headers(tokens[0]))
        assert left.status_code == 200, left.text
        assert left.json()["seats"][0]["left"] and not left.json()["seats"][0]["bot"]
        snapshot, shortened = await _next(stayer, lambda m: m["type"] == "snapshot", after)
        await stayer.wait_for(_by_timer(0), after=after)
        # The match goes on: each of the leaver's turns is the timer's, at the short pace.
        later = []
        for _ in range(2):
            if stayer.view is None or stayer.view["match_over"]:
                break
            after = len(stayer.messages)
            await _play_my_turn(stayer, "konkan")
            if stayer.view is None or stayer.view["match_over"]:
                break
            message, remaining = await _next(stayer, _turn_of(stayer, 0), after)
            later.append(remaining)
            await stayer.wait_for(_by_timer(0), after=stayer.messages.index(message))
        return {
            "dropped": dropped,
            "shortened": shortened,
            "snapshot_seat": snapshot["payload"]["seat"],
            "later": later,
        }
    finally:
        await api.aclose()


def test_a_left_coin_seat_is_played_at_a_short_pace(module_server: ServerProcess) -> None:
    result = asyncio.run(_leave_a_coin_match(module_server))
    print(f"seconds left on the leaver's turns when they were shown: {result}")
    assert result["dropped"] > TURN / 2, result  # merely dropped: the table's time
    assert result["snapshot_seat"] == 1, result
    assert result["shortened"] <= SHORT, result  # left: the short time, from the leave
    assert all(remaining <= SHORT for remaining in result["later"]), result


async def _left_then_restarted(server: ServerProcess) -> dict[str, Any]:
    api = Api(server)
    try:
        table_id, tokens, (leaver, stayer) = await _seated(api, server)
        if stayer.may_move:
            await _play_my_turn(stayer, "konkan")
        await leaver.wait_until(lambda: leaver.may_move)
        after = len(stayer.messages)
        left = await api.http.post(f"/api/tables/{table_id}/leave", headers=auth_headers(tokens[0]))
        assert left.status_code == 200, left.text
        snapshot, shortened = await _next(stayer, lambda m: m["type"] == "snapshot", after)
        deadline = snapshot["payload"]["deadline"]
        seq = stayer.seq
        server.kill()
        await stayer.wait_closed()
        await leaver.wait_closed()
        server.start()
        back = await TimedClient.connect(server, table_id, tokens[1], name="back", since=seq)
        restored = back.messages[0]["payload"]["snapshot"]
        return {
            "shortened": shortened,
            "deadline": deadline,
            "restored": restored["deadline"],
            "seq": (seq, restored["table"]["seq"]),
        }
    finally:
        await api.aclose()


def test_a_left_seats_deadline_survives_a_restart(
    start_server: Callable[..., ServerProcess],
) -> None:
    # A left seat's turn long enough to kill and restart the server within it.
    seconds = 60
    server = start_server(SAHRAT_LEFT_SEAT_TURN_SECONDS=str(seconds))
    result = asyncio.run(_left_then_restarted(server))
    assert result["shortened"] <= seconds, result
    assert result["seq"][0] == result["seq"][1], result
    # The stored deadline is re-armed, not the table's 300 s from the restart.
    assert abs(result["restored"] - result["deadline"]) < 0.01, result


async def _forfeited(server: ServerProcess) -> dict[str, Any]:
    api = Api(server)
    try:
        _, _, (idle, stayer) = await _seated(api, server)
        idle.continues = False  # the idle player reads nothing and moves nothing

        def forfeited() -> bool:
            tables = stayer.of_type("table")
            return bool(tables) and tables[-1]["payload"]["seats"][0]["left"]

        while not forfeited():  # the timer plays the idle seat's turns until forfeited
            await stayer.wait_until(lambda: forfeited() or stayer.may_move, timeout=30)
            if stayer.may_move:
                await _play_my_turn(stayer, "konkan")
        assert not stayer.of_type("table")[-1]["payload"]["seats"][0]["bot"]  # a coin table
        later = []
        for _ in range(2):
            await stayer.wait_until(lambda: stayer.may_move or bool(stayer.view["match_over"]))
            if stayer.view is None or stayer.view["match_over"]:
                break
            after = len(stayer.messages)
            await _play_my_turn(stayer, "konkan")
            if stayer.view is None or stayer.view["match_over"]:
                break
            message, remaining = await _next(stayer, _turn_of(stayer, 0), after)
            later.append(remaining)
            await stayer.wait_for(_by_timer(0), after=stayer.messages.index(message))
        return {"later": later}
    finally:
        await api.aclose()


def test_a_seat_forfeited_to_the_timer_is_played_at_the_short_pace(
    module_servers: Callable[..., ServerProcess],
) -> None:
    # The table's time is short here too (the timer plays the idle seat until it is
    # forfeited), but longer than a left seat's.
    server = module_servers(
        SAHRAT_TURN_SECONDS_OVERRIDE="2",
        SAHRAT_LEFT_SEAT_TURN_SECONDS="0.5",
        SAHRAT_TIMER_TURNS_TO_FORFEIT="2",
    )
    result = asyncio.run(_forfeited(server))
    assert all(remaining <= 0.5 for remaining in result["later"]), result
