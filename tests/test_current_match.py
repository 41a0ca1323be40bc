"""A restore reads a table's log from its current match's start: a table that played
many matches (rematch after rematch) costs one match to restore, not its history."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import insert

from pgtest import store_url
from sahrat.store.db import make_engine, make_sessions
from sahrat.store.log import QUERY_CHUNK, current_match_entries
from sahrat.store.models import Base, GameTable, LogEntry, User


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with store_url(
        request.param, tmp_path, "sahrat_test_current", "current matches on PostgreSQL"
    ) as url:
        yield url


def _log(table_id: int, kinds: str) -> list[dict[str, object]]:
    """Entries seq 1.. of ``kinds``: S a match's start, a an action."""
    return [
        {
            "table_id": table_id,
            "seq": seq,
            "kind": "start" if kind == "S" else "action",
            "seat": None if kind == "S" else seq % 2,
            "client_id": None,
            "data": {"n": seq},
        }
        for seq, kind in enumerate(kinds, start=1)
    ]


async def _scenario(url: str) -> None:
    engine = make_engine(url)
    tables = QUERY_CHUNK + 3  # more tables than one query takes
    async with engine.begin() as conn:
        await conn.run_sync(Base.metadata.create_all)
        await conn.execute(insert(User.__table__), [{"name": "u", "name_key": "u"}])
        await conn.execute(
            insert(GameTable.__table__),
            [{"game": "conquian", "options": {}, "creator_id": 1} for _ in range(tables)],
        )
        rows = _log(1, "SaaaSaaSa")  # two rematches: the third match is current
        rows += _log(2, "Saa")  # one match
        rows += _log(3, "")  # nothing written yet
        rows += _log(4, "SaaaaS")  # a rematch just dealt: its start alone
        for table_id in range(5, tables + 1):
            rows += _log(table_id, "SaSa")
        await conn.execute(insert(LogEntry.__table__), rows)
    sessions = make_sessions(engine)
    try:
        async with sessions() as session:
            found = await current_match_entries(session, list(range(1, tables + 1)))
            assert [e.seq for e in found[1]] == [8, 9]
            assert [e.kind for e in found[1]] == ["start", "action"]
            assert [e.seq for e in found[2]] == [1, 2, 3]
            assert found[3] == []
            assert [(e.seq, e.kind) for e in found[4]] == [(6, "start")]
            for table_id in range(5, tables + 1):
                assert [e.seq for e in found[table_id]] == [3, 4], table_id
                assert all(e.table_id == table_id for e in found[table_id])
            assert found[1][1].data == {"n": 9}
            none = await current_match_entries(session, [])
            assert none == {}
    finally:
        await engine.dispose()


def test_a_restore_reads_each_table_from_its_current_start(database_url: str) -> None:
    asyncio.run(_scenario(database_url))
