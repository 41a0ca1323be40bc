"""What a cheap request may cost the server: a whole replay of a long match.

A hostile table makes long matches (two seats that let the turn timer draw and
discard, every round run through its stock ten times); anyone may then ask for
their replays. Here a match of ``SAHRAT_REPLAY_ACTIONS`` actions (``make hardening``:
near the longest the engine allows) is read page by page from a live server, every
step checked against the engine, and what it cost is written to
``test-artifacts/hardening/replay_cost.json``: pages, bytes, bytes per step at the
start and at the end (equal when no step rebuilds the match's history), seconds
(reported, never asserted)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest

from sahrat.rules import konkan
from sahrat.rules.record import GameRecord, replay
from sahrat.server.api.matches import REPLAY_PAGE_MAX
from server.harness import Api, ServerProcess
from server.test_replay_cost import _finished, _table, long_record

from .conftest import env_count, write_results


async def _read_whole_replay(server: ServerProcess, actions: int) -> dict[str, Any]:
    record = long_record(actions)
    expected: list[dict[str, Any]] = []

    def keep(state: Any, _action: Any) -> None:
        view = konkan.view(state, None, history=False)
        expected.append({"view": view, "hands": [[str(c) for c in h] for h in state.hands]})

    replay(GameRecord.from_json(record), on_step=keep)
    api = Api(server)
    try:
        token, user = await api.guest()
        table = await _table(api, token)
        match_id = await _finished(server, table["id"], [user["id"], None], record)
        began = time.perf_counter()
        start: int | None = 0
        pages, sizes, first_page_seconds = 0, [], 0.0
        while start is not None:
            reply = await api.http.get(
                f"/api/matches/{match_id}/replay?from={start}&limit={REPLAY_PAGE_MAX}"
            )
            assert reply.status_code == 200, reply.text
            page = reply.json()
            assert page["from"] == start and page["total"] == len(expected)
            assert page["steps"] == expected[start : start + len(page["steps"])], start
            first_page_seconds = first_page_seconds or time.perf_counter() - began
            sizes.append(len(reply.content) / len(page["steps"]))
            pages += 1
            start = page["next"]
        return {
            "actions": len(record["actions"]),
            "pages": pages,
            "bytes_per_step_first_page": round(sizes[0]),
            "bytes_per_step_last_page": round(sizes[-1]),
            "first_page_seconds": round(first_page_seconds, 2),
            "whole_replay_seconds": round(time.perf_counter() - began, 2),
        }
    finally:
        await api.aclose()


def test_a_whole_replay_of_a_long_match(
    start_server: Callable[..., ServerProcess], request: pytest.FixtureRequest
) -> None:
    actions = env_count("SAHRAT_REPLAY_ACTIONS", 3000)
    results = asyncio.run(_read_whole_replay(start_server(), actions))
    write_results("replay_cost", results, request.node)
    assert results["pages"] == -(-(results["actions"] + 1) // REPLAY_PAGE_MAX)
    # A step late in the match is no larger than one of the deal: nothing per step
    # grows with the rounds played.
    assert results["bytes_per_step_last_page"] < 1.5 * results["bytes_per_step_first_page"]
