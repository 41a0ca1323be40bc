"""The table (``Table``) with its parts, in process, its services in memory: every move
(a command, the timer's, a bot's) goes through one durable path, the parts hand their
moves back to it, and closing the table stops every part."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import pytest

from sahrat.rules import konkan
from sahrat.rules.record import engine_for, options_for
from sahrat.server.table import Connection, Table
from sahrat.server.table.protocol import Command

from .fakes import FakeServices, eventually, kinds, playing_table, sent, settings

ENGINE = engine_for("konkan")


def first_to_act(seed: str = "unit", players: int = 3) -> int:
    seat = ENGINE.to_act(ENGINE.new_game(options_for("konkan", {"players": players}), seed))
    assert seat is not None
    return seat


def connect_all(table: Table, users: list[int]) -> list[Connection]:
    conns = [Connection(user_id=user) for user in users]
    for conn in conns:
        table.connect(conn, None)
    for conn in conns:
        sent(conn)
    return conns


def the_timers_move(table: Table) -> dict[str, Any]:
    """What the seat to act may send: the engine's timeout move, without its seat."""
    action = dict(ENGINE.action_to_json(ENGINE.timeout_action(table.match.state)))
    action.pop("seat")
    return action


@pytest.mark.asyncio
async def test_a_step_is_told_only_once_it_is_durable() -> None:
    services = FakeServices()
    table = playing_table(services)
    conns = connect_all(table, [1, 2, 3, 99])
    seat = first_to_act()
    services.writer.held = asyncio.Event()
    command = Command(type="command", cid="c1", seq=1, action=the_timers_move(table))
    playing = asyncio.create_task(table.command(conns[seat], command))
    await asyncio.sleep(0.05)
    assert all(kinds(conn) == [] for conn in conns)  # nothing before the log has it
    services.writer.held.set()
    await playing
    assert [entry["seq"] for entry in services.writer.entries] == [2]
    mine = sent(conns[seat])
    assert [m["type"] for m in mine] == ["update", "reply"]  # the update first
    assert mine[1]["payload"] == {"cid": "c1", "ok": True}
    assert all(kinds(conn) == ["update"] for i, conn in enumerate(conns) if i != seat)
    # the same command again gets its first answer, and nothing is played twice
    await table.command(conns[seat], command)
    assert sent(conns[seat])[0]["payload"] == {"cid": "c1", "ok": True}
    assert len(services.writer.entries) == 1
    table.close()


@pytest.mark.asyncio
async def test_a_malformed_action_is_refused_and_an_engine_failure_is_a_logged_bug(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    services = FakeServices()
    table = playing_table(services)
    conns = connect_all(table, [1, 2, 3])
    conn = conns[first_to_act()]
    for junk in ({"type": ["draw"]}, {"type": {"draw": 1}}, {"type": 7}, {"type": "fly"}):
        await table.command(conn, Command(type="command", cid="j", seq=1, action=junk))
        assert sent(conn)[-1]["payload"]["error"]["code"] == "bad_action", junk
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]

    def broken(state: Any, action: Any) -> Any:
        raise TypeError("a bug in the engine")

    monkeypatch.setattr(konkan, "apply", broken)
    legal = Command(type="command", cid="b", seq=1, action=the_timers_move(table))
    await table.command(conn, legal)
    assert sent(conn)[-1]["payload"]["error"]["code"] == "server_error"
    assert any("engine failed" in record.getMessage() for record in caplog.records)
    assert services.writer.entries == [] and table.seq == 1
    table.close()


@pytest.mark.asyncio
async def test_the_timers_move_goes_through_the_same_path() -> None:
    services = FakeServices(settings=settings(turn_seconds_override=0.1))
    table = playing_table(services, deadline=time.time() + 0.05)
    conns = connect_all(table, [1, 2, 3])
    await eventually(lambda: bool(services.writer.entries))
    table.close()
    first = services.writer.entries[0]
    assert first["seq"] == 2 and first["data"]["by"] == "timer"
    assert first["seat"] == first_to_act()
    updates = [m for m in sent(conns[0]) if m["type"] == "update"]
    assert updates[0]["seq"] == 2 and updates[0]["payload"]["by"] == "timer"


@pytest.mark.asyncio
async def test_a_move_that_could_not_be_saved_is_asked_for_again() -> None:
    services = FakeServices(settings=settings(turn_seconds_override=30))
    services.writer.failing = RuntimeError("the database is gone")
    table = playing_table(services, deadline=time.time() + 0.05)
    await asyncio.sleep(0.3)  # the timer's move failed: nothing was played
    assert table.seq == 1 and services.writer.entries == []
    services.writer.failing = None
    await eventually(lambda: table.seq == 2)  # a second later, once more
    assert services.writer.entries[0]["data"]["by"] == "timer"
    table.close()


@pytest.mark.asyncio
async def test_a_grace_period_ends_with_a_bot_playing_the_seat() -> None:
    services = FakeServices()  # grace 0.05 s, a bot's pause 0.01 s
    table = playing_table(services, options={"bot_level": "simple"})
    conns = connect_all(table, [1, 2, 3])
    seat = first_to_act()
    table.disconnect(conns[seat])
    await eventually(lambda: bool(services.seats_stored))
    assert table.seating.bots[seat] == "simple" and seat in table.seating.away
    assert services.seats_stored == [(seat, seat + 1, "simple", False)]
    await eventually(lambda: bool(services.writer.entries))
    assert services.writer.entries[0]["data"]["by"] == "bot"
    assert services.writer.entries[0]["seat"] == seat
    table.close()


@pytest.mark.asyncio
async def test_closing_the_table_stops_every_part() -> None:
    seat = first_to_act()
    bots: list[str | None] = [None, None, None]
    bots[seat] = "simple"
    services = FakeServices(
        settings=settings(grace_seconds=0.1, bot_delay_seconds=0.1, turn_seconds_override=0.1)
    )
    table = playing_table(services, deadline=time.time() + 0.1, bots=bots)  # a bot waits
    conns = connect_all(table, [1, 2, 3])
    other = (seat + 1) % 3
    table.disconnect(conns[other])  # a grace period runs, a merged table message is due
    table.broadcast_table()
    table.close()
    await asyncio.sleep(0.4)
    assert services.writer.entries == []  # no timer's move, no bot's
    assert other not in table.seating.away  # the grace period never ended
    assert all(conn.closed for conn in conns)


@pytest.mark.asyncio
async def test_the_last_seat_taken_deals_the_match() -> None:
    services = FakeServices(balances={1: 20, 2: 20})
    table = Table(
        services,  # type: ignore[arg-type]
        table_id=7,
        game="konkan",
        options={"players": 2, "stake": 10},
        private=False,
        invite_code=None,
        creator_id=1,
        status="waiting",
        seq=0,
        seats=[None, None],
    )
    watcher = Connection(user_id=5)
    table.connect(watcher, None)
    await table.join(1, None, "198.51.100.1")
    assert table.status == "waiting" and table.seats == [1, None]
    await table.join(2, None, "203.0.113.2")
    assert table.status == "playing" and table.seq == 1
    [start] = services.writer.appended
    assert start.entries[0]["kind"] == "start" and start.ledger  # the stakes move with it
    snapshots = [m for m in sent(watcher) if m["type"] == "snapshot"]
    assert snapshots[-1]["payload"]["view"] is not None
    table.close()


@pytest.mark.asyncio
async def test_the_last_person_leaving_a_free_match_of_bots_abandons_it() -> None:
    services = FakeServices(settings=settings(bot_delay_seconds=30))
    table = playing_table(services, seats=[1, None, None], bots=[None, "simple", "simple"])
    [conn] = connect_all(table, [1])
    await table.leave(1)
    assert table.status == "closed" and services.closed == [False]
    assert services.forgotten == ["closed"] and conn.closed
