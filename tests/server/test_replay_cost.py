"""Replays of long matches on a live server: ``GET /api/matches/{id}/replay`` answers a
bounded page (never the whole match at once), a step of round 20 costs what a step of
round 1 costs, a process replays only so many matches at once (503 beyond), and a
private table's matches are shown only to those its table admits.

A long match is what a hostile table makes: two seats that only let the turn timer
draw and discard, every round running through its stock again and again. Playing one
over the wire takes as long as the timers, so the test writes such a finished match
into the server's database, as the table would have, and then attacks the replay."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import cache
from typing import Any

from sahrat.rules import konkan
from sahrat.rules.options import KonkanOptions
from sahrat.rules.record import GameRecord, record_of, replay
from sahrat.server.api.matches import REPLAY_PAGE, REPLAY_PAGE_MAX
from sahrat.store.db import make_engine, make_sessions
from sahrat.store.models import Match

from .harness import Api, ServerProcess, auth_headers

LONG = 12_000  # actions: several rounds, each its stock run through up to 10 times


@cache
def long_record(actions: int = LONG) -> dict[str, Any]:
    values = {"players": 2, "rounds": 20, "max_reshuffles": 10}  # the rest: defaults
    first = state = konkan.new_game(KonkanOptions.for_game("konkan", values), "c" * 64)
    moves = []
    while len(moves) < actions and not state.over:
        move = konkan.timeout_action(state)
        state, _ = konkan.apply(state, move)
        moves.append(move)
    return {**record_of("konkan", first, moves, ["a", "b"]).to_json(), "options": values}


async def _table(api: Api, token: str, private: bool = False) -> dict[str, Any]:
    response = await api.http.post(
        "/api/tables",
        json={"game": "konkan", "options": {"players": 2}, "private": private},
        headers=auth_headers(token),
    )
    assert response.status_code == 201, response.text
    info: dict[str, Any] = response.json()
    return info


async def _finished(
    server: ServerProcess,
    table_id: int,
    players: list[int | None],
    record: dict[str, Any] | None = None,
) -> int:
    """A finished long match of ``table_id``, stored as the table stores one."""
    engine = make_engine(server.database_url)
    try:
        async with make_sessions(engine)() as session, session.begin():
            row = Match(
                table_id=table_id,
                game="konkan",
                winner_seat=None,
                players=players,
                score_sheet={"rounds": [], "totals": [0, 0], "over": True},
                record=record or long_record(),
            )
            session.add(row)
            await session.flush()
            return int(row.id)
    finally:
        await engine.dispose()


def _expected_steps(steps: list[int]) -> dict[int, dict[str, Any]]:
    wanted, found = set(steps), {}

    def keep(state: Any, _action: Any) -> None:
        step = len(found_steps)
        found_steps.append(step)
        if step in wanted:
            found[step] = {
                "view": konkan.view(state, None, history=False),
                "hands": [[str(card) for card in hand] for hand in state.hands],
            }

    found_steps: list[int] = []
    replay(GameRecord.from_json(long_record()), on_step=keep)
    return found


async def _long_replay(server: ServerProcess) -> None:
    api = Api(server)
    try:
        token, user = await api.guest()
        table = await _table(api, token)
        match_id = await _finished(server, table["id"], [user["id"], None])
        total = len(long_record()["actions"]) + 1

        # No login needed for a public table's match; one page by default.
        first = await api.http.get(f"/api/matches/{match_id}/replay")
        assert first.status_code == 200, first.text
        page = first.json()
        assert (page["from"], page["total"], page["next"]) == (0, total, REPLAY_PAGE)
        assert len(page["steps"]) == REPLAY_PAGE

        # A page is bounded, whatever the client asks for.
        for query in (f"limit={REPLAY_PAGE_MAX + 1}", "limit=0", "from=-1", "from=2147483648"):
            refused = await api.http.get(f"/api/matches/{match_id}/replay?{query}")
            assert refused.status_code == 422, (query, refused.text)

        # The last page, deep in the match: a step there is no larger than one of the
        # deal (no score sheet is rebuilt into each step), and it is the engine's state.
        start = total - REPLAY_PAGE_MAX
        last = await api.http.get(
            f"/api/matches/{match_id}/replay?from={start}&limit={REPLAY_PAGE_MAX}"
        )
        assert last.status_code == 200, last.text
        tail = last.json()
        assert (tail["from"], tail["next"], len(tail["steps"])) == (start, None, REPLAY_PAGE_MAX)
        assert tail["steps"][-1]["view"]["round"] > 3
        per_step_first = len(first.content) / len(page["steps"])
        per_step_last = len(last.content) / len(tail["steps"])
        assert per_step_last < 1.5 * per_step_first, (per_step_first, per_step_last)
        for step in tail["steps"]:
            assert "scores" not in step["view"] and "options" not in step["view"]

        sampled = [0, 1, 99, 100, 101, start, start + 1, total - 1]
        expected = _expected_steps(sampled)
        for step in sampled:
            got = await api.http.get(f"/api/matches/{match_id}/replay?from={step}&limit=1")
            assert got.json()["steps"] == [expected[step]], step
        beyond = (await api.http.get(f"/api/matches/{match_id}/replay?from={total}")).json()
        assert (beyond["steps"], beyond["next"], beyond["total"]) == ([], None, total)
    finally:
        await api.aclose()


def test_a_long_match_replays_a_bounded_page_at_a_time(module_server: ServerProcess) -> None:
    asyncio.run(_long_replay(module_server))


async def _replays_at_once(server: ServerProcess) -> None:
    api = Api(server)
    try:
        token, user = await api.guest()
        table = await _table(api, token)
        ids = [await _finished(server, table["id"], [user["id"], None]) for _ in range(4)]

        async def health() -> int:
            return (await api.http.get("/healthz")).status_code

        asked = [
            asyncio.create_task(api.http.get(f"/api/matches/{match_id}/replay")) for match_id in ids
        ]
        assert await health() == 200  # answered while the replays are being made
        replies = [await reply for reply in asked]
        codes = sorted(reply.status_code for reply in replies)
        assert 200 in codes and 503 in codes, codes
        for reply in replies:
            if reply.status_code == 503:
                assert reply.json()["detail"]["code"] == "busy"
                assert reply.headers["retry-after"]
        # One at a time, every one is answered.
        for match_id in ids:
            assert (await api.http.get(f"/api/matches/{match_id}/replay")).status_code == 200
    finally:
        await api.aclose()


def test_replays_at_once_are_bounded(start_server: Callable[..., ServerProcess]) -> None:
    asyncio.run(_replays_at_once(start_server(SAHRAT_REPLAY_BUILDS="1")))


async def _private_matches(server: ServerProcess) -> None:
    api = Api(server)
    try:
        owner, owner_user = await api.guest()
        stranger, _ = await api.guest()
        table = await _table(api, owner, private=True)
        invite = table["invite_code"]
        assert invite
        match_id = await _finished(server, table["id"], [owner_user["id"], None])
        paths = [
            f"/api/matches/{match_id}",
            f"/api/matches/{match_id}/replay?limit=1",
            f"/api/tables/{table['id']}/matches",
        ]
        for path in paths:
            for who in (None, stranger):
                headers = auth_headers(who) if who else {}
                refused = await api.http.get(path, headers=headers)
                assert refused.status_code == 404, (path, who, refused.text)
            shown = await api.http.get(path, headers=auth_headers(owner))
            assert shown.status_code == 200, (path, shown.text)
            sep = "&" if "?" in path else "?"
            invited = await api.http.get(f"{path}{sep}invite={invite}")
            assert invited.status_code == 200, (path, invited.text)
    finally:
        await api.aclose()


def test_a_private_tables_match_is_shown_only_to_those_it_admits(
    module_server: ServerProcess,
) -> None:
    asyncio.run(_private_matches(module_server))
