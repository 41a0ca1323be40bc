"""The log writer's fast path (two driver calls a batch; on SQLite its own connection)
writes exactly what the ORM path writes, and a bad append fails alone."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import insert, select
from sqlalchemy.exc import IntegrityError

from pgtest import store_url
from sahrat.store.db import make_engine, make_sessions
from sahrat.store.log import Append, LogWriter
from sahrat.store.models import Base, GameTable, LogEntry, Match, User


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with store_url(
        request.param, tmp_path, "sahrat_test_log", "the log writer on PostgreSQL"
    ) as url:
        yield url


def _entry(seq: int, data: dict[str, object]) -> dict[str, object]:
    return {"seq": seq, "kind": "action", "seat": seq % 2, "client_id": f"c{seq}", "data": data}


async def _scenario(url: str) -> None:
    engine = make_engine(url)
    async with engine.begin() as conn:
        await conn.run_sync(Base.metadata.create_all)
        await conn.execute(insert(User.__table__), [{"name": "u", "name_key": "u"}])
        await conn.execute(
            insert(GameTable.__table__),
            [{"game": "conquian", "options": {}, "creator_id": 1} for _ in range(2)],
        )
    sessions = make_sessions(engine)
    writer = LogWriter(sessions)
    writer.start()
    deadline = datetime(2026, 12, 1, 3, 30, 15, 123456, tzinfo=UTC)
    data = {"action": {"type": "discard", "card": "7H'"}, "by": "player", "note": "é ✓", "n": 1.5}
    nested = {"k": {"3": [1, None]}}
    try:
        # a plain batch (the fast path) and a batch with a match row (the ORM path)
        plain = [
            Append(
                1, [_entry(1, data), _entry(2, {"k": {"3": [1, None]}})], 2, "playing", deadline
            ),
            Append(2, [_entry(1, data)], 1, "playing", None),
        ]
        await asyncio.gather(*(writer.append(item) for item in plain))
        match = {
            "game": "conquian",
            "winner_seat": 0,
            "players": [1, None],
            "score_sheet": {"points": [1, 0]},
            "record": {"seed": "s"},
        }
        await writer.append(Append(2, [_entry(2, data)], 2, "finished", deadline, match))
        # an append for a table that does not exist fails alone, the others commit
        bad = Append(99, [_entry(1, data)], 1, "playing", None)
        good = Append(1, [_entry(3, data)], 3, "playing", None)
        results = await asyncio.gather(
            writer.append(bad), writer.append(good), return_exceptions=True
        )
        assert isinstance(results[0], IntegrityError)  # what the table takes as a takeover
        assert results[1] is None
        # the same seq written twice (another process wrote it first) is that error too
        with pytest.raises(IntegrityError):
            await writer.append(Append(1, [_entry(3, data)], 3, "playing", None))
        async with sessions() as session:
            rows = (await session.scalars(select(LogEntry).order_by(LogEntry.id))).all()
            tables = (await session.scalars(select(GameTable).order_by(GameTable.id))).all()
        assert [(r.table_id, r.seq, r.seat, r.client_id) for r in rows] == [
            (1, 1, 1, "c1"),
            (1, 2, 0, "c2"),
            (2, 1, 1, "c1"),
            (2, 2, 0, "c2"),
            (1, 3, 1, "c3"),
        ]
        assert rows[0].data == data
        assert rows[1].data == nested
        assert all(r.created_at is not None for r in rows)
        assert [(t.seq, t.status) for t in tables] == [(3, "playing"), (2, "finished")]
        assert tables[0].deadline_at is None
        stored = tables[1].deadline_at
        assert stored is not None
        assert stored.replace(tzinfo=UTC) == deadline  # SQLite keeps it without its zone
        async with sessions() as session:
            matches = (await session.scalars(select(Match))).all()
        assert [(m.table_id, m.winner_seat, m.score_sheet) for m in matches] == [
            (2, 0, {"points": [1, 0]})
        ]
    finally:
        await writer.stop()
        await engine.dispose()


def test_the_fast_path_writes_what_the_orm_path_writes(database_url: str) -> None:
    asyncio.run(_scenario(database_url))
