"""Where a table is served (``server/cluster/placement.py``): the ``Placement`` protocol,
and ``Solo``, the placement of a process that runs alone, whose answers make the
single-process path fall out (every table here, every lease held, nobody to tell).

The hub on ``Solo`` runs here on SQLite, in process: a table it creates is served
here, found by its invite code, listed, and operated on through the one ``OPS`` map.
"""

from __future__ import annotations

import asyncio
import inspect
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from sahrat.server.cluster.cluster import Cluster, placement_for
from sahrat.server.cluster.placement import (
    Moved,
    Placement,
    Solo,
    TableQuery,
    retrying,
)
from sahrat.server.hub import OPS, PLAYER_OPS, Hub
from sahrat.server.migrate import migrate
from sahrat.server.socket.dispatch import handle_text
from sahrat.server.table.connection import Connection
from sahrat.server.table.errors import TableError
from sahrat.settings import Settings
from sahrat.store.db import make_engine
from sahrat.store.models import User


@dataclass
class FakeTable:
    """As much of a table as ``Solo`` reads."""

    id: int
    status: str = "waiting"
    private: bool = False
    game: str = "konkan"
    in_lobby: bool = True
    invite_code: str | None = None

    def info(self, viewer: int | None = None) -> dict[str, Any]:
        return {"id": self.id, "viewer": viewer}


@dataclass
class FakeHost:
    tables: dict[int, Any] = field(default_factory=dict)
    stored: dict[int, Any] = field(default_factory=dict)  # what the database has live

    async def live_table_ids(self) -> list[int]:
        return list(self.stored)

    async def load_tables(self, table_ids: Any) -> dict[int, Any]:
        loaded = {table_id: self.stored[table_id] for table_id in table_ids}
        self.tables.update(loaded)
        return loaded


def _members(protocol: type) -> set[str]:
    return {
        name
        for name, value in vars(protocol).items()
        if not name.startswith("_") and inspect.isfunction(value)
    }


def test_solo_and_the_cluster_provide_every_member_of_the_protocol() -> None:
    members = _members(Placement)
    assert {"locate", "acquire", "holds", "broadcast", "call", "attach"} <= members
    for placement in (Solo, Cluster):
        missing = {name for name in members if not callable(getattr(placement, name, None))}
        assert not missing, (placement.__name__, missing)
        for name in members:  # the same way of being called: awaited or not
            expected = inspect.iscoroutinefunction(getattr(Placement, name))
            assert inspect.iscoroutinefunction(getattr(placement, name)) == expected, name


def test_solo_starts_by_loading_every_unfinished_table() -> None:
    host = FakeHost(stored={1: FakeTable(1), 2: FakeTable(2, status="playing")})
    asyncio.run(Solo(host).start())
    assert set(host.tables) == {1, 2}


def test_solo_finds_every_table_here_and_none_elsewhere() -> None:
    async def run() -> None:
        table = FakeTable(5)
        solo = Solo(FakeHost(tables={5: table}))
        assert await solo.locate(5) is table
        with pytest.raises(TableError) as refused:
            await solo.locate(6)
        assert refused.value.code == "no_such_table"

    asyncio.run(run())


def test_solo_holds_every_lease_and_tells_nobody() -> None:
    async def run() -> None:
        solo = Solo(FakeHost(tables={5: FakeTable(5)}))
        assert await solo.acquire(5) and solo.holds(5) and solo.holds(99)
        await solo.release(5)
        solo.release_soon(5)
        solo.stop_taking()
        assert solo.holds(5)  # still: a lease alone is never lost
        solo.broadcast({"k": "rename", "u": 1, "n": "x"})  # nothing to do, nothing raised
        await solo.stop()

    asyncio.run(run())


def test_a_call_never_leaves_a_process_alone() -> None:
    async def run() -> None:
        solo = Solo(FakeHost())
        with pytest.raises(LookupError):
            await solo.call("elsewhere", "info", 1, {})
        with pytest.raises(LookupError):
            solo.attach(1, "elsewhere", Connection(user_id=1), "name", None)

    asyncio.run(run())


def test_solo_lists_the_tables_a_query_shows_oldest_first() -> None:
    tables = {
        4: FakeTable(4),
        1: FakeTable(1, status="playing"),
        2: FakeTable(2, private=True),
        3: FakeTable(3, game="conquian"),
        6: FakeTable(6, status="playing", in_lobby=False),
        5: FakeTable(5, status="finished"),
    }
    solo = Solo(FakeHost(tables=tables))

    def ids(**given: Any) -> list[int]:
        fields = {"viewer": 7, "private": False, "statuses": ("waiting", "playing")} | given
        query = TableQuery(**fields)
        found = asyncio.run(solo.list_tables(query))
        assert all(info["viewer"] == 7 for info in found)
        return [info["id"] for info in found]

    assert ids() == [1, 3, 4, 6]
    assert ids(private=True) == [1, 2, 3, 4, 6]
    assert ids(game="konkan") == [1, 4, 6]
    assert ids(statuses=("playing",)) == [1, 6]
    assert ids(lobby=True) == [1, 3, 4]
    assert ids(after=3) == [4, 6]
    assert ids(limit=2) == [1, 3]


def test_solo_finds_a_table_by_its_invite_code() -> None:
    solo = Solo(FakeHost(tables={1: FakeTable(1), 2: FakeTable(2, invite_code="abc")}))
    assert asyncio.run(solo.by_invite("abc")) == 2
    assert asyncio.run(solo.by_invite("abd")) is None


def test_a_moved_table_is_asked_again_then_refused_as_unavailable() -> None:
    tries: list[int] = []

    async def moving() -> Any:
        tries.append(1)
        if len(tries) < 3:
            raise Moved()
        return "done"

    assert asyncio.run(retrying(3, moving)) == "done"
    tries.clear()

    async def gone() -> Any:
        tries.append(1)
        raise Moved()

    with pytest.raises(TableError) as refused:
        asyncio.run(retrying(3, gone))
    assert refused.value.code == "unavailable" and len(tries) == 3


def _settings(tmp_path: Path, **given: Any) -> Settings:
    return Settings(
        **{
            "database_url": f"sqlite+aiosqlite:///{tmp_path / 'sahrat.db'}",
            "SAHRAT_REDIS_URL": None,
            "SAHRAT_GUESTS_AT_COIN_TABLES": True,
            "SAHRAT_COIN_TABLE_MIN_MATCHES": 0,
        }
        | given
    )


def test_the_settings_choose_the_placement(tmp_path: Path) -> None:
    assert placement_for(_settings(tmp_path), handle_text) is Solo
    clustered = _settings(
        tmp_path,
        SAHRAT_REDIS_URL="redis://127.0.0.1:1/0",  # never reached: nothing is started
        SAHRAT_CLUSTER_SECRET="s" * 32,
    )

    async def build() -> None:
        engine = make_engine(clustered.database_url)
        hub = Hub(clustered, engine, placement_for(clustered, handle_text))
        assert isinstance(hub.placement, Cluster) and hub.placement.host is hub
        await hub.placement.redis.aclose()
        await engine.dispose()

    asyncio.run(build())


def test_the_operations_are_one_map() -> None:
    assert set(OPS) == {"info", "mine", "join", "leave", "start", "options", "close", "chat_report"}
    assert set(PLAYER_OPS) <= set(OPS)


def test_a_hub_alone_serves_the_tables_it_creates(tmp_path: Path) -> None:
    settings = _settings(tmp_path)

    async def run() -> None:
        await migrate(settings.database_url)
        engine = make_engine(settings.database_url)
        hub = Hub(settings, engine, placement_for(settings, handle_text))
        await hub.start()
        try:
            async with hub.sessions() as session, session.begin():
                users = [User(name=f"p{i}", guest=True) for i in range(2)]
                session.add_all(users)
                await session.flush()
                ids = [user.id for user in users]
            info = await hub.create_table(ids[0], "konkan", {"players": 3}, private=True)
            table_id = info["id"]
            assert table_id in hub.tables and hub.may_write(table_id)
            assert await hub.locate(table_id) is hub.tables[table_id]
            code = hub.tables[table_id].invite_code
            assert code is not None and await hub.by_invite(code) == table_id
            with pytest.raises(TableError):
                await hub.by_invite(code + "x")
            # a private table: listed for whoever may see private ones, hidden otherwise
            assert [t["id"] for t in await hub.list_tables(ids[0], private=True)] == [table_id]
            assert await hub.list_tables(ids[0], private=False) == []
            with pytest.raises(TableError) as refused:  # a stranger: no such table
                await hub.call(table_id, "info", viewer=ids[1])
            assert refused.value.code == "no_such_table"
            joined = await hub.call(table_id, "join", user_id=ids[1], seat=None, invite=code)
            seated = {seat["user_id"]: seat["name"] for seat in joined["seats"] if seat["user_id"]}
            assert seated == {ids[0]: "p0", ids[1]: "p1"}  # names read as the seats were taken
            with pytest.raises(TableError) as refused:
                await hub.call(table_id, "shuffle")
            assert refused.value.code == "bad_operation"
            await hub.close_table(table_id)
            assert table_id not in hub.tables
            with pytest.raises(TableError):
                await hub.locate(table_id)
        finally:
            await hub.stop()
            await engine.dispose()

    asyncio.run(run())
