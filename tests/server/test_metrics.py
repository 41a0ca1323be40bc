"""``/metrics`` on a live server: the counts move with what the server did."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import httpx
from prometheus_client.parser import text_string_to_metric_families

from .harness import Api, ServerProcess, WireClient, play, seated_table


def _samples(server: ServerProcess) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = httpx.get(f"{server.base_url}/metrics", timeout=5).text
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


async def _play_some(server: ServerProcess) -> tuple[int, int]:
    api = Api(server)
    table_id, tokens, _info = await seated_table(api, "conquian", {}, 2)
    await api.aclose()
    seats = [
        await WireClient.connect(server, table_id, token, name=f"seat{seat}")
        for seat, token in enumerate(tokens)
    ]
    moves = await play("conquian", seats, until=lambda _view: (seats[0].seq or 0) >= 8)
    during = _samples(server)
    assert during[("sahrat_connections", ())] == 2
    for client in seats:
        await client.close()
    return moves, int(during[("sahrat_live_tables", ())])


def test_metrics_count_commands_log_writes_and_connections(
    start_server: Callable[..., ServerProcess],
) -> None:
    server = start_server()
    moves, live = asyncio.run(_play_some(server))
    after = _samples(server)
    assert live == 1
    assert after[("sahrat_commands_total", (("result", "ok"),))] == moves
    assert after[("sahrat_command_seconds_count", ())] == moves
    # the match's start and every move were written (group commit: batches <= steps)
    assert 1 <= after[("sahrat_log_write_seconds_count", ())] <= moves + 1
    assert after[("sahrat_connections", ())] == 0
