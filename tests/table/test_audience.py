"""Who is told (``Audience``): connections follow the seating, a step goes out as one text
per seat, ``table`` messages are merged to one per gap, and a seat whose sockets are all
gone gets a grace period that ends by telling the table."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from sahrat.rules.record import engine_for, options_for
from sahrat.server.table import audience as audience_module
from sahrat.server.table.audience import Audience
from sahrat.server.table.connection import Connection
from sahrat.server.table.match import Match
from sahrat.server.table.moves import Step
from sahrat.server.table.pace import Pace, Plan, RoundBreak, timeout_steps
from sahrat.server.table.seating import Seating
from sahrat.view_changes import apply_update

from .fakes import FakeServices, eventually, kinds, sent

GAME = "konkan"
ENGINE = engine_for(GAME)


class Built:
    """An audience over a playing match of users 1 and 2 (seat 2 free), its services
    in memory, and the seats it said were away."""

    def __init__(
        self,
        seats: list[int | None] | None = None,
        *,
        spectator_delay: bool = False,
        rounds: int = 5,
    ) -> None:
        self.services = FakeServices(names={1: "amal", 2: "badr", 3: "dana"})
        self.seating = Seating(seats or [1, 2, None], [None, None, None])
        options = options_for(GAME, {"players": 3, "rounds": rounds})
        self.match = Match(ENGINE, GAME, options, "waiting", 0)
        self.match.start(ENGINE.new_game(options, "audience-1"), "audience-1", 1)
        self.pace = Pace(self.services.settings, ENGINE, self.seating, self.match, time.time() + 60)
        self.away: list[int] = []
        self.audience = Audience(
            self.services,  # type: ignore[arg-type]
            ENGINE,
            self.seating,
            self.match,
            self.pace,
            table_id=7,
            game=GAME,
            private=True,
            invite_code="door",
            creator_id=1,
            on_away=self.away.append,
            spectator_delay=spectator_delay,
        )

    def connect(self, user_id: int) -> Connection:
        conn = Connection(user_id=user_id)
        self.audience.add(conn)
        self.audience.greet(conn, None)
        return conn


def publish(built: Built, step: Step, state: Any) -> None:
    """A durable step adopted and sent, as the table does it (``Table._commit``)."""
    built.audience.publish(step, built.match.adopt(step, state))


@pytest.mark.asyncio
async def test_table_messages_are_merged_to_one_per_gap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(audience_module, "TABLE_MESSAGE_GAP", 0.2)
    built = Built()
    conn = built.connect(1)
    sent(conn)
    for _ in range(5):
        built.audience.table_changed()
    assert kinds(conn) == ["table"]  # the first change after a quiet spell: at once
    await asyncio.sleep(0.1)
    assert kinds(conn) == []
    await eventually(lambda: not conn.outbox.empty())
    assert kinds(conn) == ["table"]  # the four later ones, merged
    await asyncio.sleep(0.3)
    assert kinds(conn) == []


@pytest.mark.asyncio
async def test_only_the_seated_and_the_creator_see_the_invite_code() -> None:
    built = Built()
    player, spectator = built.connect(2), built.connect(3)
    sent(player), sent(spectator)
    built.audience.send_table()
    [to_player], [to_spectator] = sent(player), sent(spectator)
    assert to_player["payload"]["invite_code"] == "door"
    assert to_spectator["payload"]["invite_code"] is None
    assert to_spectator["payload"]["spectators"] == ["dana"]


@pytest.mark.asyncio
async def test_a_seat_taken_reseats_its_users_sockets_with_a_snapshot_first() -> None:
    built = Built()
    conn = built.connect(3)
    assert conn.seat is None and kinds(conn) == ["snapshot"]
    built.seating.sit(2, 3, None)
    built.audience.table_changed()
    snapshot, table = sent(conn)
    assert (snapshot["type"], table["type"]) == ("snapshot", "table")
    assert snapshot["payload"]["seat"] == 2
    assert conn.seat == 2


@pytest.mark.asyncio
async def test_a_step_goes_out_as_each_seat_sees_it() -> None:
    built = Built()
    conns = [built.connect(1), built.connect(2), built.connect(3), built.connect(3)]
    shown = [sent(conn)[0]["payload"]["view"] for conn in conns]  # each one's snapshot
    (step, state), *_ = timeout_steps(ENGINE, built.match.state, built.match.seq)
    publish(built, step, state)
    updates = [sent(conn) for conn in conns]
    assert all([message["type"] for message in got] == ["update"] for got in updates)
    # what changed, not the whole view: applied to the snapshot, it is the view now
    assert all(got[0]["payload"]["view"] is None for got in updates)
    views = [
        apply_update(view, got[0]["payload"]) for view, got in zip(shown, updates, strict=True)
    ]
    assert views[0] == ENGINE.view(state, 0) and views[1] == ENGINE.view(state, 1)
    assert views[2] == views[3] == ENGINE.view(state, None)
    assert updates[2] == updates[3]  # the spectators' one text
    assert all(got[0]["seq"] == 2 and got[0]["payload"]["by"] == "timer" for got in updates)


@pytest.mark.asyncio
async def test_a_reconnect_gets_what_it_missed_then_a_snapshot() -> None:
    built = Built()
    for step, state in timeout_steps(ENGINE, built.match.state, built.match.seq):
        built.match.adopt(step, state)
    conn = Connection(user_id=1)
    built.audience.add(conn)
    built.audience.greet(conn, built.match.missed_since(1))
    [resume] = sent(conn)
    assert resume["type"] == "resume" and resume["payload"]["missed"]
    assert all(update["view"] is None for update in resume["payload"]["missed"])
    assert resume["payload"]["snapshot"]["seat"] == 0


@pytest.mark.asyncio
async def test_a_grace_period_ends_by_telling_the_table_unless_the_player_is_back() -> None:
    built = Built()  # grace_seconds is 0.05 in the fake services
    conn = built.connect(1)
    assert built.audience.remove(conn, playing=True) == 0
    await eventually(lambda: built.away == [0])
    await asyncio.sleep(0.1)
    assert built.away == [0]  # once
    again = built.connect(2)
    assert built.audience.remove(again, playing=True) == 1
    built.connect(2)  # back within the grace period
    await asyncio.sleep(0.15)
    assert built.away == [0]
    assert built.audience.remove(built.connect(1), playing=False) is None  # not playing


@pytest.mark.asyncio
async def test_one_reaction_a_second() -> None:
    built = Built()
    conn, other = built.connect(1), built.connect(2)
    sent(conn), sent(other)
    built.audience.react(conn, "hello")
    built.audience.react(conn, "wow")
    [reaction] = sent(other)
    assert reaction["payload"] == {"seat": 0, "user_id": 1, "name": "amal", "reaction": "hello"}
    refused = sent(conn)[-1]
    assert refused["type"] == "error" and refused["payload"]["code"] == "too_many_reactions"


@pytest.mark.asyncio
async def test_closing_stops_its_timers_and_closes_every_connection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(audience_module, "TABLE_MESSAGE_GAP", 0.1)
    built = Built()
    conn, leaving = built.connect(2), built.connect(1)
    built.audience.table_changed()
    built.audience.table_changed()  # a merged message is due
    built.audience.remove(leaving, playing=True)  # a grace period runs
    sent(conn)
    built.audience.close(4503, "moved")
    await asyncio.sleep(0.2)
    assert built.away == []
    assert conn.closed and conn.close_code == 4503
    assert kinds(conn) == []


@pytest.mark.asyncio
async def test_a_delayed_tables_spectator_sees_a_round_only_once_it_is_over() -> None:
    """docs/protocol.md, "Spectators": at a table with ``spectator_delay`` a spectator's
    snapshot has no view while a round is played and no update reaches it; at the
    round's end (the break) and at the match's end it gets the table as it is."""
    built = Built(spectator_delay=True)
    player, spectator = built.connect(1), built.connect(3)
    [first] = sent(spectator)
    assert first["type"] == "snapshot" and first["payload"]["seat"] is None
    assert first["payload"]["view"] is None and first["payload"]["deadline"] is None
    assert first["payload"]["table"]["spectator_delay"] is True
    assert sent(player)[0]["payload"]["view"] == ENGINE.view(built.match.state, 0)
    steps = timeout_steps(ENGINE, built.match.state, built.match.seq)
    for step, state in steps:
        publish(built, step, state)
    assert kinds(player) == ["update"] * len(steps)
    assert sent(spectator) == []  # nothing of the round in play
    # a reconnect in the round: a snapshot without the view, never the steps it missed
    late = Connection(user_id=3)
    built.audience.add(late)
    built.audience.greet(late, built.match.missed_since(1))
    [again] = sent(late)
    assert again["type"] == "snapshot" and again["payload"]["view"] is None
    # the round is over: the break shows the table as it is, to the spectator too
    built.pace.adopt(Plan(time.time() + 30, RoundBreak(time.time() + 30, {0, 1})))
    (step, state), *_ = timeout_steps(ENGINE, built.match.state, built.match.seq)
    publish(built, step, state)
    [shown] = sent(spectator)
    assert shown["type"] == "snapshot" and shown["payload"]["view"] == ENGINE.view(state, None)
    assert shown["payload"]["round_break"] is not None


@pytest.mark.asyncio
async def test_a_delayed_tables_spectator_sees_the_match_end_as_it_happens() -> None:
    """The match's last step is published while the table still plays (the table is
    marked finished after it): a delayed spectator gets its snapshot, with the view of
    the match's end, at once (docs/protocol.md, "Delayed spectators")."""
    built = Built(spectator_delay=True, rounds=1)
    spectator = built.connect(3)
    sent(spectator)
    state = built.match.state
    for _ in range(2000):  # the timer alone plays the one round out (the stock runs dry)
        steps = timeout_steps(ENGINE, state, built.match.seq)
        assert steps, "the round stopped with nobody to act and the match not over"
        for step, state in steps:
            publish(built, step, state)
        if state.over:
            break
    assert state.over and built.match.playing
    [shown] = sent(spectator)
    assert shown["type"] == "snapshot"
    assert shown["payload"]["view"] == ENGINE.view(state, None)
    assert shown["payload"]["view"]["match_over"] is True


@pytest.mark.asyncio
async def test_a_tables_spectator_without_the_delay_sees_every_step() -> None:
    built = Built()
    spectator = built.connect(3)
    [first] = sent(spectator)
    assert first["payload"]["view"] == ENGINE.view(built.match.state, None)
    assert first["payload"]["table"]["spectator_delay"] is False
    (step, state), *_ = timeout_steps(ENGINE, built.match.state, built.match.seq)
    publish(built, step, state)
    assert kinds(spectator) == ["update"]
