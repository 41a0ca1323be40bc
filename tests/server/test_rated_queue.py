"""Rated quick play's queue on one real server (SQLite, then PostgreSQL): players who
queue are seated together at a rated table and dealt their hand, a lone player gets
bots after the wait, DELETE and a silent client leave the queue, two accounts of one
network never meet, and what the queue refuses (docs/rating.md, "Pairing";
docs/protocol.md, "Rated quick play")."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select, update

from pgtest import store_url
from sahrat.server.matchmaking.former import CLAIM_SECONDS, Former, QueuedTable
from sahrat.server.matchmaking.pairing import Rules
from sahrat.server.migrate import migrate
from sahrat.settings import Settings
from sahrat.store import queue
from sahrat.store.db import make_engine, make_sessions
from sahrat.store.models import QueueEntry, RatedCooldown, User

from .harness import Api, ServerProcess, WireClient, auth_headers, make_admin

FAST = {"SAHRAT_QUEUE_WAVE_SECONDS": "0.2", "SAHRAT_BOT_DELAY_SECONDS": "0.02"}
PEOPLE = {**FAST, "SAHRAT_QUEUE_BOT_WAIT_SECONDS": "600"}  # nobody gets bots here
BOTS = {**FAST, "SAHRAT_QUEUE_BOT_WAIT_SECONDS": "0.5"}
STALE_SECONDS = 3.0
STALE = {**PEOPLE, "SAHRAT_QUEUE_STALE_SECONDS": str(STALE_SECONDS)}
SEATED_WITHIN = 15.0  # a generous bound for a wave or two on a loaded machine


async def queue_for(api: Api, token: str, body: dict[str, Any], **headers: str) -> httpx.Response:
    return await api.http.post("/api/queue", json=body, headers={**auth_headers(token), **headers})


async def status_of(api: Api, token: str, **headers: str) -> dict[str, Any]:
    response = await api.http.get("/api/queue", headers={**auth_headers(token), **headers})
    assert response.status_code == 200, response.text
    return dict(response.json())


async def seated(api: Api, token: str, **headers: str) -> dict[str, Any]:
    """Poll as the client does (the poll is the heartbeat) until seated."""
    deadline = asyncio.get_running_loop().time() + SEATED_WITHIN
    while True:
        found = await status_of(api, token, **headers)
        if found["status"] == "seated":
            return found
        assert found["status"] == "waiting", found
        assert asyncio.get_running_loop().time() < deadline, f"not seated: {found}"
        await asyncio.sleep(0.1)


def run(server: ServerProcess, scenario: Callable[[Api], Any]) -> Any:
    async def go() -> Any:
        api = Api(server)
        try:
            return await scenario(api)
        finally:
            await api.aclose()

    return asyncio.run(go())


def test_two_players_are_seated_together_and_dealt(
    module_servers: Callable[..., ServerProcess],
) -> None:
    server = module_servers(**PEOPLE)

    async def scenario(api: Api) -> None:
        (one, first), (two, second) = await api.guest(), await api.guest()
        body = {"game": "konkan", "threshold": 51, "players": 2, "speed": "fast"}
        joined = await queue_for(api, one, body)
        assert joined.status_code == 200, joined.text
        assert joined.json() | {"rating": None} == {
            "status": "waiting",
            "table_id": None,
            "waited_seconds": 0,
            "game": "konkan",
            "pool": "konkan51",
            "players": 2,
            "threshold": 51,
            "speed": "fast",
            "turn_seconds": 15,
            "rating": None,
        }
        assert (await queue_for(api, two, body)).status_code == 200
        mine, theirs = await seated(api, one), await seated(api, two)
        assert mine["table_id"] == theirs["table_id"] is not None
        table = await api.get(f"/api/tables/{mine['table_id']}", one)
        assert table["rated"] is True and table["status"] == "playing"
        assert sorted(seat["user_id"] for seat in table["seats"]) == sorted(
            [first["id"], second["id"]]
        )
        assert table["options"]["turn_seconds"] == 15 and table["options"]["players"] == 2
        # the hand is dealt: the player's socket opens on a view with their cards
        client = await WireClient.connect(server, mine["table_id"], one, name="one")
        try:
            assert client.view is not None and len(client.view["hand"]) > 0
        finally:
            await client.close()
        # a second GET still says where they sit
        assert (await status_of(api, one))["table_id"] == mine["table_id"]

    run(server, scenario)


def test_a_lone_player_is_seated_with_bots_after_the_wait(
    module_servers: Callable[..., ServerProcess],
) -> None:
    server = module_servers(**BOTS)

    async def scenario(api: Api) -> None:
        token, user = await api.guest()
        body = {"game": "konkan", "players": 4, "speed": "normal", "threshold": 71}
        assert (await queue_for(api, token, body)).json()["pool"] == "konkan71"
        table_id = (await seated(api, token))["table_id"]
        table = await api.get(f"/api/tables/{table_id}", token)
        assert table["rated"] is True and table["status"] == "playing"
        people = [seat for seat in table["seats"] if seat["user_id"] is not None]
        assert [seat["user_id"] for seat in people] == [user["id"]]
        assert len(table["seats"]) == 4
        assert table["options"]["threshold"] == 71

    run(server, scenario)


def test_conquian_pairs_too(module_servers: Callable[..., ServerProcess]) -> None:
    server = module_servers(**PEOPLE)

    async def scenario(api: Api) -> None:
        (one, _), (two, _) = await api.guest(), await api.guest()
        for token in (one, two):
            answer = await queue_for(api, token, {"game": "conquian", "speed": "slow"})
            assert answer.json()["pool"] == "conquian" and answer.json()["players"] == 2
        assert (await seated(api, one))["table_id"] == (await seated(api, two))["table_id"]

    run(server, scenario)


def test_delete_leaves_the_queue(module_servers: Callable[..., ServerProcess]) -> None:
    server = module_servers(**PEOPLE)

    async def scenario(api: Api) -> None:
        token, _ = await api.guest()
        body = {"game": "konkan", "players": 3, "speed": "slow"}
        assert (await queue_for(api, token, body)).status_code == 200
        assert (await status_of(api, token))["status"] == "waiting"
        left = await api.http.delete("/api/queue", headers=auth_headers(token))
        assert left.status_code == 204
        assert (await status_of(api, token))["status"] == "none"
        again = await api.http.delete("/api/queue", headers=auth_headers(token))
        assert again.status_code == 204  # nothing to leave is no error

    run(server, scenario)


def test_a_silent_client_leaves_the_queue(module_servers: Callable[..., ServerProcess]) -> None:
    server = module_servers(**STALE)

    async def scenario(api: Api) -> None:
        token, _ = await api.guest()
        polled, _ = await api.guest()
        body = {"game": "konkan", "players": 4, "speed": "fast"}
        clock = asyncio.get_running_loop().time
        assert (await queue_for(api, token, body)).status_code == 200
        silent_since = clock()
        assert (await queue_for(api, polled, {**body, "players": 3})).status_code == 200
        while clock() - silent_since < STALE_SECONDS + 0.5:  # one polls, the other is silent
            assert (await status_of(api, polled))["status"] == "waiting"
            await asyncio.sleep(0.2)
        assert (await status_of(api, token))["status"] == "none"

    run(server, scenario)


def test_one_network_never_twice_at_a_table(module_servers: Callable[..., ServerProcess]) -> None:
    server = module_servers(**PEOPLE)
    household = {"X-Forwarded-For": "2001:db8:77:100::1"}
    neighbour = {"X-Forwarded-For": "2001:db8:77:1ff::2"}  # the same /56

    async def scenario(api: Api) -> None:
        (first, one), (second, _), (third, three) = [await api.guest() for _ in range(3)]
        body = {"game": "konkan", "players": 2, "speed": "slow", "threshold": 71}
        assert (await queue_for(api, first, body, **household)).status_code == 200
        assert (await queue_for(api, second, body, **neighbour)).status_code == 200
        for _ in range(10):  # five waves and more: the two are never paired
            assert (await status_of(api, first, **household))["status"] == "waiting"
            assert (await status_of(api, second, **neighbour))["status"] == "waiting"
            await asyncio.sleep(0.1)
        assert (await queue_for(api, third, body)).status_code == 200
        table_id = (await seated(api, third))["table_id"]
        assert (await seated(api, first, **household))["table_id"] == table_id  # the oldest
        assert (await status_of(api, second, **neighbour))["status"] == "waiting"
        table = await api.get(f"/api/tables/{table_id}", third)
        assert sorted(s["user_id"] for s in table["seats"]) == sorted([one["id"], three["id"]])
        await api.http.delete("/api/queue", headers={**auth_headers(second), **neighbour})

    run(server, scenario)


BAD_BODIES: list[tuple[dict[str, Any], str, str]] = [
    ({}, "queue_bad_game", "game"),
    ({"game": "poker"}, "queue_bad_game", "game"),
    ({"game": "konkan", "threshold": 60}, "queue_bad_threshold", "threshold"),
    ({"game": "konkan", "threshold": "51"}, "queue_bad_threshold", "threshold"),
    ({"game": "conquian", "threshold": 51}, "queue_bad_threshold", "threshold"),
    ({"game": "konkan", "players": 5}, "queue_bad_players", "players"),
    ({"game": "konkan", "players": True}, "queue_bad_players", "players"),
    ({"game": "conquian", "players": 4}, "queue_bad_players", "players"),
    ({"game": "konkan", "speed": "blitz"}, "queue_bad_speed", "speed"),
    ({"game": "konkan", "stake": 10}, "queue_unknown_field", "stake"),
]


def test_bad_bodies_are_refused_naming_the_field(
    module_servers: Callable[..., ServerProcess],
) -> None:
    server = module_servers(**PEOPLE)

    async def scenario(api: Api) -> None:
        token, _ = await api.guest()
        for body, code, field in BAD_BODIES:
            answer = await queue_for(api, token, body)
            assert answer.status_code == 422, (body, answer.text)
            assert answer.json()["detail"]["code"] == code, body
            assert answer.json()["detail"]["field"] == field, body
        not_an_object = await api.http.post(
            "/api/queue", json=["konkan"], headers=auth_headers(token)
        )
        assert not_an_object.status_code == 422
        assert (await status_of(api, token))["status"] == "none"  # nothing queued
        assert (await api.http.post("/api/queue", json={"game": "konkan"})).status_code == 401

    run(server, scenario)


async def _write(database: str, work: Callable[[Any], Any]) -> None:
    engine = make_engine(database)
    try:
        async with make_sessions(engine)() as session, session.begin():
            await work(session)
    finally:
        await engine.dispose()


def test_a_player_in_cooldown_or_suspended_may_not_queue(
    module_servers: Callable[..., ServerProcess],
) -> None:
    server = module_servers(**PEOPLE)
    admin, password = make_admin(server.database_url, "queue-boss")

    async def scenario(api: Api) -> None:
        (leaver, left), (banned, suspended) = await api.guest(), await api.guest()
        now = datetime.now(UTC)

        async def bar(session: Any) -> None:
            session.add(
                RatedCooldown(
                    user_id=left["id"],
                    score=3.0,
                    leaves=3,
                    until=now + timedelta(minutes=10),
                    changed_at=now,
                )
            )

        await _write(server.database_url, bar)
        refused = await queue_for(api, leaver, {"game": "konkan"})
        assert refused.status_code == 403, refused.text
        detail = refused.json()["detail"]
        assert detail["code"] == "rated_cooldown"
        assert 540 < detail["seconds_left"] <= 600 and "10 minutes" in detail["message"]
        assert (await status_of(api, leaver))["status"] == "none"

        login = await api.http.post("/api/login", json={"name": admin, "password": password})
        boss = login.json()["token"]
        # one who queued and is suspended while waiting: the table that would have
        # seated them is not formed; they leave the queue, the other waits on
        body = {"game": "konkan", "players": 3, "speed": "fast", "threshold": 71}
        assert (await queue_for(api, banned, body)).status_code == 200
        suspend = await api.http.post(
            f"/api/admin/players/{suspended['id']}/suspend", json={}, headers=auth_headers(boss)
        )
        assert suspend.status_code == 200, suspend.text
        refused = await queue_for(api, banned, {"game": "konkan"})
        assert refused.status_code == 403 and refused.json()["detail"]["code"] == "suspended"
        (other, _), (third, _) = await api.guest(), await api.guest()
        assert (await queue_for(api, other, body)).status_code == 200
        assert (await queue_for(api, third, body)).status_code == 200
        for _ in range(10):  # five waves and more
            assert (await status_of(api, other))["status"] == "waiting"
            await asyncio.sleep(0.1)
        assert (await status_of(api, banned))["status"] == "none"
        await api.http.delete("/api/queue", headers=auth_headers(other))
        await api.http.delete("/api/queue", headers=auth_headers(third))

    run(server, scenario)


def test_queueing_again_keeps_the_place_and_a_change_replaces_it(
    module_servers: Callable[..., ServerProcess],
) -> None:
    server = module_servers(**PEOPLE)

    async def scenario(api: Api) -> None:
        token, _ = await api.guest()
        body = {"game": "konkan", "players": 4, "speed": "slow", "threshold": 71}
        await queue_for(api, token, body)
        await asyncio.sleep(1.1)
        again = (await queue_for(api, token, body)).json()
        assert again["status"] == "waiting" and again["waited_seconds"] >= 1
        changed = (await queue_for(api, token, {**body, "speed": "normal"})).json()
        assert changed["speed"] == "normal" and changed["waited_seconds"] == 0
        assert (await status_of(api, token))["speed"] == "normal"  # one entry, replaced
        await api.http.delete("/api/queue", headers=auth_headers(token))

    run(server, scenario)


# --- two processes' waves at once (PostgreSQL: FOR UPDATE SKIP LOCKED and the claims) ----


def test_two_formers_at_once_never_seat_an_entry_twice(tmp_path: Path) -> None:
    """Two formers (as two processes: an engine each) run their waves at the same
    moments over one queue: every entry is seated once, at one table of people of its
    own shape."""
    with store_url("postgres", tmp_path, "sahrat_queue", "the queue's exclusion") as url:
        asyncio.run(_two_formers(url))


async def _two_formers(url: str) -> None:
    await migrate(url)
    engines = [make_engine(url), make_engine(url)]
    tables: list[list[int]] = []

    async def seat(table: QueuedTable) -> int:
        await asyncio.sleep(0.01)  # the hub's work, while the other wave runs
        tables.append([user_id for user_id, _network in table.seats])
        return len(tables)

    formers = [
        Former(Settings(), make_sessions(engine), seat, Rules(bot_wait=600.0)) for engine in engines
    ]
    try:
        sessions = make_sessions(engines[0])
        async with sessions() as session, session.begin():
            people = [User(name=f"queuer-{i}", guest=True) for i in range(24)]
            session.add_all(people)
        now = datetime.now(UTC)
        for round_ in range(3):  # entries arrive; both processes' waves run together
            async with sessions() as session, session.begin():
                for i, person in enumerate(people[round_ * 8 : round_ * 8 + 8]):
                    wanted = queue.Wanted(
                        "konkan",
                        "konkan51",
                        4 if i % 2 else 2,
                        51,
                        "normal",
                        30,
                        1500,
                        f"198.51.100.{round_ * 8 + i}",
                    )
                    await queue.put_entry(session, person.id, wanted, now)
            for _ in range(3):
                await asyncio.gather(*(former.wave() for former in formers))
        seated = [user_id for table in tables for user_id in table]
        assert sorted(seated) == sorted(person.id for person in people)  # each once
        assert sorted(len(table) for table in tables) == [2] * 6 + [4] * 3
        async with sessions() as session:
            rows = (await session.scalars(select(QueueEntry))).all()
        assert len(rows) == 24 and all(row.table_id is not None for row in rows)
        assert all(row.claimed_by is None for row in rows)
    finally:
        for engine in engines:
            await engine.dispose()


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_dead_processs_claims_go_back_to_the_queue(kind: str, tmp_path: Path) -> None:
    """Entries a process claimed and never seated (it died while forming) are formed by
    another's wave once the claim is CLAIM_SECONDS old — and not before."""
    with store_url(kind, tmp_path, "sahrat_queue", "the queue's claims") as url:
        asyncio.run(_dead_claims(url))


async def _dead_claims(url: str) -> None:
    await migrate(url)
    engine = make_engine(url)
    tables: list[list[int]] = []

    async def seat(table: QueuedTable) -> int:
        tables.append([user_id for user_id, _network in table.seats])
        return len(tables)

    former = Former(Settings(), make_sessions(engine), seat, Rules(bot_wait=600.0))
    sessions = make_sessions(engine)
    try:
        now = datetime.now(UTC)
        async with sessions() as session, session.begin():
            people = [User(name=f"claimed-{i}", guest=True) for i in range(4)]
            session.add_all(people)
            await session.flush()
            for i, person in enumerate(people):
                wanted = queue.Wanted(
                    "konkan", "konkan51", 2, 51, "normal", 30, 1500, f"198.51.100.{i}"
                )
                await queue.put_entry(session, person.id, wanted, now)
        dead, alive = [p.id for p in people[:2]], [p.id for p in people[2:]]
        async with sessions() as session, session.begin():
            assert await queue.claim(session, dead, "dead", now) == set(dead)
            assert await queue.claim(session, alive, "alive", now) == set(alive)
            assert await queue.claim(session, dead, "another", now) == set()  # taken
        assert await former.wave() == [] and tables == []  # claimed: nobody else forms them
        async with sessions() as session, session.begin():
            # time passes: the dead process's claim grows old while its players poll
            ago = now - timedelta(seconds=CLAIM_SECONDS + 1)
            await session.execute(
                update(QueueEntry).where(QueueEntry.claimed_by == "dead").values(claimed_at=ago)
            )
        assert await former.wave() == [1]
        assert tables == [dead]
        async with sessions() as session:
            rows = {row.user_id: row for row in (await session.scalars(select(QueueEntry))).all()}
        assert [rows[u].table_id for u in dead] == [1, 1]
        assert [rows[u].claimed_by for u in alive] == ["alive", "alive"]  # a live claim stays
    finally:
        await engine.dispose()
