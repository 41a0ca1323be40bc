"""An update carries what a step changed in each seat's view (docs/protocol.md,
"Updates"): a client that applies every update to the snapshot it got holds, after
each step, exactly the view the engine gives its seat — over whole matches of both
games, every seat and a spectator, every kind of step the simple players make."""

from __future__ import annotations

import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sahrat.rules.errors import RuleError
from sahrat.rules.record import engine_for, options_for
from sahrat.server.table.audience import Audience
from sahrat.server.table.connection import Connection
from sahrat.server.table.match import Match
from sahrat.server.table.moves import Step
from sahrat.server.table.pace import Pace
from sahrat.server.table.seating import Seating
from sahrat.simulate import bot_for
from sahrat.view_changes import apply_update, changes_of, diff_views

from .fakes import FakeServices, sent

SPECTATOR = 99  # a user with no seat


def _audience(game: str, players: int, seed: str) -> tuple[Audience, Match, Any]:
    engine = engine_for(game)
    users = list(range(1, players + 1))
    services = FakeServices(names={user: f"u{user}" for user in [*users, SPECTATOR]})
    seating = Seating(list(users), [None] * players)
    values: dict[str, Any] = {"rounds": 2} if game == "konkan" else {"wins_needed": 2}
    if game == "konkan":
        values["players"] = players
    options = options_for(game, values)
    match = Match(engine, game, options, "waiting", 0)
    match.start(engine.new_game(options, seed), seed, 1)
    pace = Pace(services.settings, engine, seating, match, time.time() + 60)
    audience = Audience(
        services,  # type: ignore[arg-type]
        engine,
        seating,
        match,
        pace,
        table_id=1,
        game=game,
        private=False,
        invite_code=None,
        creator_id=1,
        on_away=lambda seat: None,
    )
    return audience, match, engine


def _play(game: str, players: int, seed: str, steps: int) -> int:
    """Play up to ``steps`` steps through an audience; check every connection's view
    after each. Returns the number of views checked."""
    audience, match, engine = _audience(game, players, seed)
    conns = [Connection(user_id=user) for user in [*range(1, players + 1), SPECTATOR]]
    views: dict[Connection, Any] = {}
    for conn in conns:
        audience.add(conn)
        audience.greet(conn, None)
        [snapshot] = sent(conn)
        views[conn] = snapshot["payload"]["view"]
    bot = bot_for(game)
    checked = 0
    for _ in range(steps):
        state = match.state
        if state.over:
            break
        seat = engine.to_act(state)
        action = bot(engine.view(state, seat))
        try:
            after, events = engine.apply(state, action)
        except RuleError:
            action = engine.timeout_action(state)
            after, events = engine.apply(state, action)
        step = Step(match.seq + 1, engine.action_to_json(action), events, "bot", seat, None)
        match.adopt(step, after)
        audience.publish(step, state)
        for conn in conns:
            [update] = sent(conn)
            assert update["type"] == "update" and update["seq"] == step.seq
            payload = update["payload"]
            assert payload["view"] is None, "a seat that was shown a view got it whole"
            views[conn] = apply_update(views[conn], payload)
            expected = engine.view(after, conn.seat)
            assert views[conn] == expected, (seed, step.seq, conn.seat, payload)
            checked += 1
    return checked


@pytest.mark.parametrize(("game", "players"), [("konkan", 2), ("konkan", 4), ("conquian", 2)])
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**9))
def test_updates_applied_to_the_snapshot_give_each_seats_view(
    game: str, players: int, seed: int
) -> None:
    print(f"seed {seed}")
    assert _play(game, players, f"changes-{seed}", 400) > 0


def test_a_step_costs_one_text_per_audience_not_per_seat() -> None:
    """Four seats and spectators: the seats the step did not touch (neither the one
    that moved nor the one to move next) and the spectators share one text (the same
    changes, the public events)."""
    audience, match, engine = _audience("konkan", 4, "texts")
    conns = [Connection(user_id=user) for user in [1, 2, 3, 4, SPECTATOR, SPECTATOR]]
    for conn in conns:
        audience.add(conn)
        audience.greet(conn, None)
        sent(conn)
    state = match.state
    seat = engine.to_act(state)
    action = engine.timeout_action(state)
    after, events = engine.apply(state, action)
    touched = {seat, engine.to_act(after)}
    step = Step(match.seq + 1, engine.action_to_json(action), events, "timer", seat, None)
    match.adopt(step, after)
    audience.publish(step, state)
    texts = [conn.outbox.get_nowait() for conn in conns]
    others = [text for conn, text in zip(conns, texts, strict=True) if conn.seat not in touched]
    assert len(touched) == 2 and len(others) == 4  # two seats and two spectators
    assert len(set(others)) == 1  # one text
    for moved in touched:  # its own hand, or its possible moves: a text of its own
        assert texts[[conn.seat for conn in conns].index(moved)] not in others


def test_a_seat_shown_no_view_before_the_step_gets_the_whole_view() -> None:
    """After a restore nobody was shown the state a step is played from: each
    connection then gets the whole view, never changes against a view it lacks."""
    audience, match, engine = _audience("conquian", 2, "whole")
    conn = Connection(user_id=1)
    audience.add(conn)  # added, never greeted: shown nothing
    state = match.state
    action = engine.timeout_action(state)
    after, events = engine.apply(state, action)
    step = Step(match.seq + 1, engine.action_to_json(action), events, "timer", 0, None)
    match.adopt(step, after)
    audience.publish(step, state)
    [update] = sent(conn)
    assert update["payload"]["view"] == engine.view(after, 0)
    assert update["payload"]["changes"] is None


def test_changes_name_what_changed_and_what_went() -> None:
    old = {"turn": 0, "hand": ["7H"], "drawn": "7H", "melds": [{"id": 1}]}
    new = {"turn": 1, "hand": ["7H"], "melds": [{"id": 1}], "discard_top": "9S"}
    assert changes_of(old, new) == ({"turn": 1, "discard_top": "9S"}, ["drawn"])
    assert diff_views({0: new, 1: new}, {0: old}) == {
        0: ({"turn": 1, "discard_top": "9S"}, ["drawn"]),
        1: None,
    }
    applied = apply_update(old, {"changes": {"turn": 1, "discard_top": "9S"}, "gone": ["drawn"]})
    assert applied == new
    assert old["drawn"] == "7H"  # the view held is not changed in place
