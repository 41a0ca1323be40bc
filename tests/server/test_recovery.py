"""Durability and reconnection: a SIGKILLed server restarts from its event log with
no acknowledged move lost; a client reconnecting with ``since`` gets the missed
updates; the turn timer moves for a seat that does nothing."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from sahrat.bots import simple_conquian
from sahrat.rules import conquian

from .harness import (
    Api,
    ServerProcess,
    WireClient,
    assert_no_leaks,
    assert_seqs_consecutive,
    play,
    seated_table,
    wire_action,
)


async def _connect_all(
    server: ServerProcess, table_id: int, tokens: list[str], since: int | None = None
) -> list[WireClient]:
    return [
        await WireClient.connect(server, table_id, token, name=f"seat{seat}", since=since)
        for seat, token in enumerate(tokens)
    ]


async def _kill_and_resume(
    server: ServerProcess,
    table_id: int,
    tokens: list[str],
    seats: list[WireClient],
    last_seq: int | None,
    before: list[dict[str, Any] | None],
) -> list[WireClient]:
    """SIGKILL the server under its players, start it again, and reconnect each seat
    where it left off: nothing missed, the very same views."""
    server.kill()
    for client in seats:
        await client.wait_closed()
    server.start()
    again = await _connect_all(server, table_id, tokens, since=last_seq)
    for seat, client in enumerate(again):
        resume = client.messages[0]
        assert resume["type"] == "resume", resume
        assert resume["payload"]["missed"] == []
        view = resume["payload"]["snapshot"]["view"]
        assert view == before[seat], f"seat {seat}'s view changed over the restart"
    return again


async def _restart(server: ServerProcess) -> None:
    api = Api(server)
    table_id, tokens, info = await seated_table(api, "konkan", {"players": 2}, 2)
    await api.aclose()
    seats = await _connect_all(server, table_id, tokens)
    start = info["seq"]
    await play("konkan", seats, until=lambda view: (seats[0].seq or 0) >= start + 12)
    last_seq = seats[0].seq
    assert last_seq == start + 12
    before = [client.view for client in seats]
    assert before[0] is not None and before[0]["round"] == 1 and not before[0]["match_over"]
    last_update = seats[0].of_type("update")[-1]
    events_before = {
        seat: {m["seq"]: m["payload"]["events"] for m in client.of_type("update")}
        for seat, client in enumerate(seats)
    }
    last_reply = next(
        m
        for client in seats
        for m in reversed(client.messages)
        if m["type"] == "reply" and m["seq"] == last_seq
    )
    last_actor = next(c for c in seats if last_reply in c.messages)

    again = await _kill_and_resume(server, table_id, tokens, seats, last_seq, before)
    for client in again:
        snapshot = client.messages[0]["payload"]["snapshot"]
        assert snapshot["table"]["seq"] == last_seq
        assert snapshot["table"]["status"] == "playing"
        # The stored turn deadline is re-armed, not reset.
        assert snapshot["deadline"] is not None
        assert abs(snapshot["deadline"] - last_update["payload"]["deadline"]) < 0.01

    # Steps from before the crash are rebuilt from the log, as each seat first saw them.
    for seat, token in enumerate(tokens):
        late = await WireClient.connect(server, table_id, token, name="late", since=last_seq - 3)
        resume = late.messages[0]
        assert resume["type"] == "resume"
        missed = resume["payload"]["missed"]
        assert [u["events"] for u in missed] == [
            events_before[seat][s] for s in range(last_seq - 2, last_seq + 1)
        ]
        await late.close()

    # The last acknowledged command is still remembered: resending it applies nothing.
    actor_again = again[seats.index(last_actor)]
    cid = last_reply["payload"]["cid"]
    mark = len(actor_again.messages)
    echo = await actor_again.command({"type": "draw"}, cid=cid, seq=last_seq - 1)
    assert echo["payload"] == {"cid": cid, "ok": True}
    await actor_again.roundtrip()
    assert not [m for m in actor_again.messages[mark:] if m["type"] == "update"]

    # And the round plays on to its end.
    moves = await play("konkan", again, until=lambda view: view["round"] >= 2)
    assert moves > 0
    for client in again:
        assert client.seq == last_seq + moves
        assert_seqs_consecutive(client)
    assert_no_leaks(again)
    for client in again:
        await client.close()


def test_restart_after_sigkill_loses_no_acknowledged_move(
    start_server: Callable[..., ServerProcess],
) -> None:
    # A local time far from UTC: stored deadlines must come back as the same instants.
    asyncio.run(_restart(start_server(TZ="Asia/Riyadh")))


async def _restart_after_rematch(server: ServerProcess) -> None:
    """A table restored after a SIGKILL in its second match is the second match alone:
    the same views, nothing missed, and a client last seen in the first match is given
    the new match whole, as a live table gives it."""
    api = Api(server)
    table_id, tokens, _info = await seated_table(api, "conquian", {"wins_needed": 1}, 2)
    await api.aclose()
    seats = await _connect_all(server, table_id, tokens)
    await play("conquian", seats, until=lambda view: False)
    for client in seats:
        await client.wait_until(lambda c=client: bool(c.view and c.view["match_over"]))
    first_end = seats[0].seq
    assert first_end is not None
    for client in seats:
        await client.send({"type": "rematch"})
    for client in seats:
        await client.wait_until(lambda c=client: c.view is not None and not c.view["match_over"])
    start = seats[0].seq
    assert start is not None and start > first_end
    await play("conquian", seats, until=lambda view: (seats[0].seq or 0) >= start + 4)
    last_seq = seats[0].seq
    before = [client.view for client in seats]

    again = await _kill_and_resume(server, table_id, tokens, seats, last_seq, before)
    # Last seen at the first match's end: a snapshot of the new match, not its steps.
    late = await WireClient.connect(server, table_id, tokens[0], name="late", since=first_end)
    assert late.messages[0]["type"] == "snapshot", late.messages[0]["type"]
    assert late.messages[0]["payload"]["view"] == before[0]
    moves = await play("conquian", again, until=lambda view: (again[0].seq or 0) >= last_seq + 3)
    assert moves > 0
    for client in (*again, late):
        await client.close()


def test_restart_in_a_rematch_restores_the_current_match(
    start_server: Callable[..., ServerProcess],
) -> None:
    asyncio.run(_restart_after_rematch(start_server()))


async def _reconnect(server: ServerProcess) -> None:
    api = Api(server)
    table_id, tokens, info = await seated_table(api, "conquian", {"wins_needed": 1}, 2)
    watcher_token, _ = await api.guest()
    await api.aclose()
    seats = await _connect_all(server, table_id, tokens)
    reference = await WireClient.connect(server, table_id, watcher_token, name="reference")
    dropper = await WireClient.connect(server, table_id, watcher_token, name="watcher")
    await play(
        "conquian",
        seats,
        watchers=[reference, dropper],
        until=lambda view: (seats[0].seq or 0) >= info["seq"] + 3,
    )

    # The watcher and the seat not to move drop; the other seat plays on its turn.
    view = seats[0].view
    assert view is not None and not view["match_over"]
    mover = view["turn"]
    away = 1 - mover
    since = seats[away].seq
    assert since is not None
    await dropper.close()
    await seats[away].close()
    moved = 0
    client = seats[mover]
    while client.may_move and client.seat == mover and moved < 3:
        action = wire_action(conquian, simple_conquian.act(client.view))
        reply = await client.command(action)
        assert reply["payload"]["ok"], reply
        assert client.seq is not None
        await reference.wait_seq(client.seq)
        moved += 1
    now = seats[mover].seq
    assert now is not None and now > since

    public = {m["seq"]: m["payload"]["events"] for m in reference.of_type("update")}
    back = await WireClient.connect(server, table_id, watcher_token, name="back", since=since)
    resume = back.messages[0]
    assert resume["type"] == "resume" and resume["seq"] == now
    missed = resume["payload"]["missed"]
    assert len(missed) == now - since
    for offset, update in enumerate(missed):
        assert update["events"] == public[since + 1 + offset]
        assert update["view"] is None and update["by"] == "player"
    assert resume["payload"]["snapshot"]["table"]["seq"] == now
    assert resume["payload"]["snapshot"]["seat"] is None

    seat_back = await WireClient.connect(
        server, table_id, tokens[away], name=f"seat{away}", since=since
    )
    resume = seat_back.messages[0]
    assert resume["type"] == "resume"
    assert len(resume["payload"]["missed"]) == now - since
    for offset, update in enumerate(resume["payload"]["missed"]):
        for event, seen in zip(update["events"], public[since + 1 + offset], strict=True):
            if event.get("seat") != away:
                assert event == seen
    snapshot = resume["payload"]["snapshot"]
    assert snapshot["seat"] == away and snapshot["table"]["seq"] == now
    assert snapshot["view"]["hand"], "the seat gets its hand back"
    seats[away] = seat_back

    # Too old or ahead of the table: a plain snapshot.
    for bad in (0, now + 10):
        fresh = await WireClient.connect(server, table_id, watcher_token, name="fresh", since=bad)
        assert fresh.messages[0]["type"] == "snapshot"
        await fresh.close()

    # The reconnected seat plays on to the end of the match.
    await play("conquian", seats, watchers=[back], until=lambda view: False)
    assert seats[0].view is not None and seats[0].view["match_over"]
    assert_seqs_consecutive(back)
    assert_seqs_consecutive(seat_back)
    for client in [*seats, reference, back]:
        await client.close()


def test_reconnect_with_since_gets_the_missed_updates(server: ServerProcess) -> None:
    asyncio.run(_reconnect(server))


async def _timer(server: ServerProcess) -> None:
    # Both players' sockets are open before the match starts (the second one joins
    # after), so each sees the start and the timer's first move, however slowly the
    # machine connects them: the turn timer starts with the match.
    api = Api(server)
    (first, _), (second, _) = await api.guest(), await api.guest()
    waiting = await api.create_table(first, "conquian", {"wins_needed": 1})
    table_id = int(waiting["id"])
    clients = [
        await WireClient.connect(server, table_id, token, name=f"user{index}")
        for index, token in enumerate((first, second))
    ]
    info = await api.join(second, table_id)
    await api.aclose()
    assert info["status"] == "playing", info
    start = info["seq"]
    starts = []
    for client in clients:
        starts.append(
            await client.wait_for(lambda m: m["type"] == "snapshot" and m["seq"] == start)
        )
    seats = sorted(clients, key=lambda c: c.seat if c.seat is not None else -1)
    assert [c.seat for c in seats] == [0, 1]
    idle = starts[0]["payload"]["view"]["turn"]  # the seat to act when the match starts
    snapshot = starts[0]["payload"]
    assert snapshot["deadline"] is not None
    assert snapshot["deadline"] - time.time() < 1.5  # the override, not the table's 30 s
    for client in seats:
        update = await client.wait_for(lambda m: m["type"] == "update", timeout=6)
        assert update["payload"]["by"] == "timer", update
        assert update["seq"] == start + 1
        assert update["payload"]["events"][0]["seat"] == idle
    # The timer keeps moving for whoever does nothing.
    for client in seats:
        await client.wait_for(lambda m: m["type"] == "update" and m["seq"] >= start + 3, timeout=8)
        assert_seqs_consecutive(client)
        updates = client.of_type("update")
        assert all(u["payload"]["by"] == "timer" for u in updates)
    for client in seats:
        await client.close()


def test_turn_timer_moves_for_an_idle_seat(
    start_server: Callable[..., ServerProcess],
) -> None:
    # (no forfeit here: test_idle_seats.py checks that a bot takes over an idle seat)
    asyncio.run(
        _timer(start_server(SAHRAT_TURN_SECONDS_OVERRIDE="1", SAHRAT_TIMER_TURNS_TO_FORFEIT="0"))
    )
