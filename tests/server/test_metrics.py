"""``/metrics`` on a live server: the counts move with what the server did."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

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


async def _play_some(server: ServerProcess) -> None:
    # Deltas: on PostgreSQL the database is shared by the session's tests, so this
    # process also serves their unfinished tables (and their turn timers write).
    before = _samples(server)
    api = Api(server)
    table_id, tokens, _info = await seated_table(api, "conquian", {}, 2)
    await api.aclose()
    seats = [
        await WireClient.connect(server, table_id, token, name=f"seat{seat}")
        for seat, token in enumerate(tokens)
    ]
    moves = await play("conquian", seats, until=lambda _view: (seats[0].seq or 0) >= 8)
    during = _samples(server)
    for client in seats:
        await client.close()
    await asyncio.sleep(0.5)
    after = _samples(server)

    def delta(name: str, *labels: tuple[str, str], at: dict[Any, float] = during) -> float:
        key = (name, tuple(sorted(labels)))
        return at.get(key, 0.0) - before.get(key, 0.0)

    assert delta("sahrat_live_tables") == 1
    assert delta("sahrat_connections") == 2
    assert delta("sahrat_connections", at=after) == 0
    assert delta("sahrat_commands_total", ("result", "ok")) == moves
    assert delta("sahrat_command_seconds_count") == moves
    assert delta("sahrat_log_write_seconds_count") >= 1  # group commit: batches <= steps


def test_metrics_count_commands_log_writes_and_connections(
    start_server: Callable[..., ServerProcess],
) -> None:
    asyncio.run(_play_some(start_server()))
