"""The play of a table (``Match``): a match starts in one place, each step is adopted in
one place, and a restore from the log goes through the same two, so it rebuilds the
table that wrote the log."""

from __future__ import annotations

from typing import Any

from sahrat.bots.levels import bot_for
from sahrat.rules.record import engine_for, options_for
from sahrat.server.table.match import DEDUPE_SIZE, Match
from sahrat.server.table.messages import accepted
from sahrat.server.table.moves import Step

from .fakes import Entry, start_entry

GAME = "konkan"


def new_match(seed: str = "match-1") -> Match:
    engine = engine_for(GAME)
    match = Match(engine, GAME, options_for(GAME, {"players": 3}), "waiting", 0)
    match.start(engine.new_game(match.options, seed), seed, 1)
    return match


def play(match: Match, moves: int) -> list[Entry]:
    """Play ``moves`` steps (bots' moves for seats 0 and 1, the timer's for seat 2, the
    player's own with a client id) and return them as the log keeps them."""
    engine = engine_for(GAME)
    bots = [bot_for(GAME, "simple") for _ in range(3)]
    entries = []
    for index in range(moves):
        state = match.state
        seat = engine.to_act(state)
        if seat == 2:
            action, by, cid = engine.timeout_action(state), "timer", None
        else:
            action, by, cid = bots[seat](engine.view(state, seat)), "player", f"c{index}"
        after, events = engine.apply(state, action)
        step = Step(match.seq + 1, engine.action_to_json(action), events, by, seat, cid)
        match.adopt(step, after)
        if cid is not None:
            match.remember(seat, cid, accepted(cid))
        entry = step.entry()
        entries.append(Entry(entry["seq"], "action", entry["data"], seat, cid))
    return entries


def fingerprint(match: Match) -> dict[str, Any]:
    engine = engine_for(GAME)
    return {
        "seq": match.seq,
        "status": match.status,
        "views": [engine.view(match.state, seat) for seat in (None, 0, 1, 2)],
        "actions": match.actions,
        "own_turns": match.tally.own_turns,
        "timer_turns": match.tally.timer_turns,
        "recent": [(step.seq, step.by, step.seat, step.cid) for step in match.recent],
        "first_dealer": match.first_dealer,
        "start_seq": match.start_seq,
    }


def test_a_restore_rebuilds_the_match_its_steps_made() -> None:
    live = new_match()
    entries = play(live, 60)
    restored = Match(engine_for(GAME), GAME, options_for(GAME, {"players": 3}), "playing", 61)
    restored.restore([start_entry("match-1"), *entries])
    assert fingerprint(restored) == fingerprint(live)
    # ...the answers to its players' commands too: a resent command is a duplicate
    player_entry = next(entry for entry in entries if entry.client_id is not None)
    assert player_entry.seat is not None and player_entry.client_id is not None
    assert restored.answer(player_entry.seat, player_entry.client_id) == accepted(
        player_entry.client_id
    )
    assert restored.answer(2, "never-sent") is None


def test_a_start_forgets_the_last_match_but_not_the_answers() -> None:
    match = new_match()
    answered = next(entry for entry in play(match, 12) if entry.client_id is not None)
    match.finish()
    assert match.status == "finished"
    assert match.tally.own_turns and match.actions and match.recent
    match.reopen()
    assert match.status == "waiting"
    engine = engine_for(GAME)
    match.start(engine.new_game(match.options, "match-2"), "match-2", match.seq + 1)
    assert match.status == "playing" and match.seq == 14 and match.start_seq == 14
    assert match.seed == "match-2" and match.state.seed == "match-2"
    assert match.actions == [] and not match.recent and match.tally.own_turns == {}
    # the answers are the table's (docs/protocol.md, "De-duplication"), not the match's
    assert answered.seat is not None and answered.client_id is not None
    assert match.answer(answered.seat, answered.client_id) == accepted(answered.client_id)


def test_missed_steps_are_given_while_all_of_them_are_remembered() -> None:
    match = new_match()
    play(match, 5)  # steps 2..6
    assert match.missed_since(6) == []
    assert [step.seq for step in match.missed_since(3) or []] == [4, 5, 6]
    assert [step.seq for step in match.missed_since(1) or []] == [2, 3, 4, 5, 6]
    assert match.missed_since(7) is None  # from the future: a snapshot instead
    assert match.missed_since(0) is None  # step 1 (the start) is no step to resend


def test_the_answers_kept_are_the_last_2048() -> None:
    match = new_match()
    for index in range(DEDUPE_SIZE + 10):
        match.remember(0, f"c{index}", accepted(f"c{index}"))
    assert match.answer(0, "c9") is None
    assert match.answer(0, "c10") == accepted("c10")
    assert match.answer(0, f"c{DEDUPE_SIZE + 9}") is not None


def test_a_closed_table_is_closed() -> None:
    match = new_match()
    match.close()
    assert match.status == "closed" and not match.playing
