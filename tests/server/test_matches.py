"""Whole games over the wire: a Conquian match and a Konkan round, played by the
engine's simple players through real WebSockets, with a spectator watching; the
finished match's record replays; no connection ever sees another seat's cards."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from sahrat.rules.record import GameRecord, replay

from .harness import (
    Api,
    ServerProcess,
    WireClient,
    assert_no_leaks,
    assert_public_parts_agree,
    assert_seqs_consecutive,
    play,
    seated_table,
    visible_cards,
)


async def _conquian_match(server: ServerProcess) -> None:
    api = Api(server)
    try:
        table_id, tokens, info = await seated_table(api, "conquian", {"wins_needed": 1}, 2)
        assert info["seq"] == 1  # the start entry
        seats = [
            await WireClient.connect(server, table_id, token, name=f"seat{seat}")
            for seat, token in enumerate(tokens)
        ]
        watcher_token, _ = await api.guest()
        watcher = await WireClient.connect(server, table_id, watcher_token, name="watcher")
        for seat, client in enumerate(seats):
            assert client.seat == seat
            assert client.view is not None and client.view["viewer"] == seat
            assert len(client.view["hand"]) == 10
        assert watcher.seat is None and watcher.view is not None
        assert "hand" not in watcher.view

        moves = await play("conquian", seats, watchers=[watcher], until=lambda view: False)
        final_seq = info["seq"] + moves
        for client in [*seats, watcher]:
            await client.wait_seq(final_seq)
            assert client.seq == final_seq
            assert_seqs_consecutive(client)
            assert len(client.of_type("update")) == moves
        final = seats[0].view
        assert final is not None and final["match_over"]
        winner = final["winner"]

        # The table reports the end of the match to everyone.
        await watcher.wait_for(
            lambda m: m["type"] == "table" and m["payload"]["status"] == "finished"
        )
        assert assert_no_leaks(seats, [watcher]) > 3 * moves
        assert assert_public_parts_agree(seats, watcher) == 2 * moves

        matches = await api.get(f"/api/tables/{table_id}/matches")
        assert len(matches) == 1, matches
        summary = matches[0]
        assert summary["game"] == "conquian"
        assert summary["winner_seat"] == winner
        assert summary["score_sheet"]["over"] is True
        assert summary["score_sheet"]["winner"] == winner
        assert summary["score_sheet"]["deals"], summary
        assert [s["user_id"] for s in info["seats"]] == summary["players"]

        detail = await api.get(f"/api/matches/{summary['id']}")
        record = GameRecord.from_json(detail["record"])
        assert len(record.actions) == moves
        result = replay(record)
        assert result.ok, result.error
        assert result.state.over and result.state.match_winner == winner
        # The replay shows the deal and then the table after every action, hands face up.
        steps: list[dict[str, Any]] = []
        start: int | None = 0
        while start is not None:  # a page at a time
            page = await api.get(f"/api/matches/{summary['id']}/replay?from={start}&limit=50")
            assert page["from"] == start and page["total"] == moves + 1
            steps += page["steps"]
            start = page["next"]
        assert len(steps) == moves + 1
        assert [len(hand) for hand in steps[0]["hands"]] == [10, 10]
        assert steps[-1]["view"]["match_over"] is True
        assert "hand" not in steps[0]["view"]
        for client in [*seats, watcher]:
            await client.close()
    finally:
        await api.aclose()


def test_conquian_match_over_the_wire(module_server: ServerProcess) -> None:
    asyncio.run(_conquian_match(module_server))


async def _konkan_round(server: ServerProcess) -> None:
    api = Api(server)
    try:
        table_id, tokens, info = await seated_table(api, "konkan", {"players": 4}, 4)
        seats = [
            await WireClient.connect(server, table_id, token, name=f"seat{seat}")
            for seat, token in enumerate(tokens)
        ]
        watcher_token, _ = await api.guest()
        watcher = await WireClient.connect(server, table_id, watcher_token, name="watcher")
        assert watcher.view is not None and "hand" not in watcher.view

        def next_round(view: dict[str, Any]) -> bool:
            return bool(view["round"] >= 2)

        moves = await play("konkan", seats, watchers=[watcher], until=next_round)
        assert moves > 4
        for client in [*seats, watcher]:
            assert client.seq == info["seq"] + moves
            assert_seqs_consecutive(client)
        view = seats[0].view
        assert view is not None and (view["round"] == 2 or view["match_over"])
        assert view["scores"], "round 1 has a result"
        assert assert_no_leaks(seats, [watcher]) > 3 * moves
        assert assert_public_parts_agree(seats, watcher) == 4 * moves
        for client in [*seats, watcher]:
            await client.close()
    finally:
        await api.aclose()


def test_konkan_round_over_the_wire(module_server: ServerProcess) -> None:
    asyncio.run(_konkan_round(module_server))


def test_leak_checker_catches_a_leak() -> None:
    """The checker itself: a card of seat 1's hand in seat 0's update is a leak."""

    class Fake:
        def __init__(self, messages: list[dict[str, Any]]) -> None:
            self.messages = messages
            # as WireClient keeps them: the view after each message (these send it whole)
            self.views = [message["payload"]["view"] for message in messages]

    def update(seq: int, viewer: int, hand: list[str], events: list[Any]) -> dict[str, Any]:
        view = {"viewer": viewer, "hand": hand, "melds": [], "face_up": None}
        return {"type": "update", "seq": seq, "payload": {"events": events, "view": view}}

    honest = [
        Fake([update(2, 0, ["1H", "2H"], [{"type": "dealt", "seat": 1, "count": 10}])]),
        Fake(
            [
                update(
                    2,
                    1,
                    ["3S", "4S"],
                    [{"type": "dealt", "seat": 1, "count": 10, "cards": ["3S", "4S"]}],
                )
            ]
        ),
    ]
    assert assert_no_leaks(honest) == 2  # type: ignore[arg-type]
    leaky = [
        Fake([update(2, 0, ["1H", "2H"], [{"type": "dealt", "seat": 1, "cards": ["3S"]}])]),
        honest[1],
    ]
    with pytest.raises(AssertionError, match="3S"):
        assert_no_leaks(leaky)  # type: ignore[arg-type]
    assert visible_cards(
        {
            "type": "update",
            "payload": {"events": [], "view": {"hand": ["7H'"], "melds": [["7H", "JK"]]}},
        }
    ) == {"7H", "JK"}
