"""A finished match's analysis over REST (docs/analysis.md, "REST"): who may ask, the
bounded queue, progress by rounds, the stored analysis served afterwards (by a fresh
app on the same database too), and a failed analysis.

The app runs in this process (httpx against the ASGI app, its lifespan as in
production) with ``SAHRAT_ANALYSIS_WORKERS=0``, and a stand-in analyser whose rounds
wait for the test's word: the queue's behaviour is the subject, not the analysis's
speed or its figures. The finished matches are written into the database as a table
writes them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from fastapi import FastAPI

from sahrat.analysis import AnalysisPlan, NotAnalysable, RoundJob
from sahrat.bots import simple_konkan
from sahrat.rules import konkan
from sahrat.rules.options import KonkanOptions
from sahrat.rules.record import record_of
from sahrat.server.analysis_pool import AnalysisPool
from sahrat.server.app import create_app
from sahrat.settings import Settings
from sahrat.store.db import make_engine, make_sessions
from sahrat.store.models import Match

from .harness import Api, ServerProcess

ROUNDS = 2  # the stand-in cuts every match into this many rounds
WAIT = 10.0  # seconds a step of the stand-in or of a test waits at most


class SlowAnalyser:
    """Rounds that wait for ``release``; ``fail`` makes every round raise."""

    def __init__(self) -> None:
        self.gate = threading.Semaphore(0)
        self.fail = False
        self.plans: list[int] = []  # the matches planned, by their first seat's name

    def plan(self, record: Mapping[str, Any]) -> AnalysisPlan:
        data = dict(record)
        if data.get("options") == {"unknown": True}:
            raise NotAnalysable("an option this version does not know")
        self.plans.append(len(self.plans))
        jobs = [RoundJob(data, n + 1, n * 10, n * 10 + 9) for n in range(ROUNDS)]
        return AnalysisPlan(data, list(data.get("seats") or []), jobs)

    def analyse_round(self, job: RoundJob) -> dict[str, Any]:
        if not self.gate.acquire(timeout=WAIT):
            raise TimeoutError("the test never released the round")
        if self.fail:
            raise RuntimeError("a round that cannot be analysed")
        return {"round": job.round, "first_step": job.first_step}

    def assemble(
        self, analysis_plan: AnalysisPlan, rounds: list[dict[str, Any]], seconds: float
    ) -> dict[str, Any]:
        return {"format": 1, "seats": analysis_plan.seats, "rounds": rounds, "seconds": seconds}

    def release(self, rounds: int = 1) -> None:
        for _ in range(rounds):
            self.gate.release()


@dataclass
class App:
    app: FastAPI
    client: httpx.AsyncClient
    database: str
    owner: dict[str, str] = field(default_factory=dict)  # the last table's creator
    invite: str = ""  # and its invite code

    @property
    def pool(self) -> AnalysisPool:
        pool: AnalysisPool = self.app.state.analysis
        return pool

    async def guest(self) -> tuple[dict[str, str], int]:
        response = await self.client.post("/api/guests")
        assert response.status_code == 201, response.text
        data = response.json()
        return {"Authorization": f"Bearer {data['token']}"}, int(data["user"]["id"])

    async def finished(
        self, game: str = "konkan", private: bool = False, record: dict[str, Any] | None = None
    ) -> int:
        """A finished match of a fresh table of ``game``, stored as the table stores one."""
        auth, user_id = await self.guest()
        body = {"game": game, "options": {"players": 2} if game != "conquian" else {}}
        table = await self.client.post(
            "/api/tables", json={**body, "private": private}, headers=auth
        )
        assert table.status_code == 201, table.text
        self.owner, self.invite = auth, str(table.json().get("invite_code") or "")
        record = record or {"game": game, "seats": ["a", "bot 1"], "actions": []}
        return await _store(self.database, table.json()["id"], [user_id, None], game, record)

    async def wait(self, match_id: int, status: str, **fields: Any) -> dict[str, Any]:
        return await _wait(self.client, match_id, status, **fields)


async def _store(
    database: str, table_id: int, players: list[int | None], game: str, record: dict[str, Any]
) -> int:
    """A finished match of ``table_id``, written as the table writes one."""
    engine = make_engine(database)
    try:
        async with make_sessions(engine)() as session, session.begin():
            row = Match(
                table_id=table_id,
                game=game,
                winner_seat=0,
                players=players,
                score_sheet={"rounds": [], "totals": [0, 0], "over": True},
                record=record,
            )
            session.add(row)
            await session.flush()
            return int(row.id)
    finally:
        await engine.dispose()


async def _wait(
    client: httpx.AsyncClient,
    match_id: int,
    status: str,
    headers: dict[str, str] | None = None,
    wait: float = WAIT,
    **fields: Any,
) -> dict[str, Any]:
    """The GET answer once it has ``status`` (and ``fields``); fails after ``wait``."""
    body: dict[str, Any] = {}
    for _ in range(int(wait / 0.02)):
        response = await client.get(f"/api/matches/{match_id}/analysis", headers=headers)
        assert response.status_code == 200, response.text
        body = response.json()
        if body["status"] == status and all(body[k] == v for k, v in fields.items()):
            return body
        await asyncio.sleep(0.02)
    raise AssertionError(f"match {match_id} never reached {status} {fields}: {body}")


@asynccontextmanager
async def started(
    database: str,
    tmp_path: Path,
    queue: int = 8,
    analyser: SlowAnalyser | None = None,
    workers: int = 0,
) -> AsyncIterator[App]:
    settings = Settings(
        database_url=database,
        SAHRAT_NEW_ACCOUNTS_PER_ADDRESS_HOUR=1_000_000,
        SAHRAT_LOGINS_PER_ADDRESS_MINUTE=1_000_000,
        SAHRAT_ANALYSIS_WORKERS=workers,
        SAHRAT_ANALYSIS_QUEUE=queue,
    )
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        if analyser is not None:
            app.state.analysis.analyser = analyser
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://sahrat") as client:
            yield App(app, client, database)


def _path(match_id: int) -> str:
    return f"/api/matches/{match_id}/analysis"


def _code(response: httpx.Response) -> str:
    code: str = response.json()["detail"]["code"]
    return code


async def _who_may_ask(database: str, tmp_path: Path) -> None:
    analyser = SlowAnalyser()
    async with started(database, tmp_path, analyser=analyser) as app:
        for method in ("get", "post"):
            missing = await app.client.request(method, _path(999_999))
            assert missing.status_code == 404 and _code(missing) == "no_such_match", method
        private = await app.finished(private=True)
        owner, invite = app.owner, app.invite
        assert invite
        stranger, _ = await app.guest()
        for headers in ({}, stranger):
            for method in ("get", "post"):
                refused = await app.client.request(method, _path(private), headers=headers)
                assert refused.status_code == 404, (method, headers, refused.text)
                assert _code(refused) == "no_such_match"
        assert app.pool.entries == {}  # a stranger queued nothing
        shown = await app.client.get(_path(private), headers=owner)
        assert shown.status_code == 200 and shown.json()["status"] == "none"
        asked = await app.client.post(_path(private), headers=owner)
        assert asked.status_code == 202, asked.text

        conquian = await app.finished("conquian")
        refused = await app.client.post(_path(conquian))
        assert refused.status_code == 409 and _code(refused) == "not_analysable"
        assert (await app.client.get(_path(conquian))).json()["status"] == "none"
        odd = {
            "game": "konkan",
            "seats": ["a", "bot 1"],
            "actions": [],
            "options": {"unknown": True},
        }
        unreplayable = await app.finished(record=odd)
        refused = await app.client.post(_path(unreplayable))
        assert refused.status_code == 409 and _code(refused) == "not_analysable"
        assert list(app.pool.entries) == [private]  # the refused match holds no place
        analyser.release(ROUNDS)
        done = await _wait(app.client, private, "done", headers=owner)
        assert done["analysis"]["seats"] == ["a", "bot 1"]
        # Done, it is still the table's to show: the stranger sees nothing of it.
        for method in ("get", "post"):
            refused = await app.client.request(method, _path(private), headers=stranger)
            assert refused.status_code == 404, (method, refused.text)
        wrong = await app.client.get(f"{_path(private)}?invite=wrong")
        assert wrong.status_code == 404
        invited = await app.client.get(f"{_path(private)}?invite={invite}")
        assert invited.status_code == 200 and invited.json() == done


def test_who_may_ask_for_an_analysis(database: str, tmp_path: Path) -> None:
    asyncio.run(_who_may_ask(database, tmp_path))


async def _queue(database: str, tmp_path: Path) -> None:
    analyser = SlowAnalyser()
    async with started(database, tmp_path, queue=3, analyser=analyser) as app:
        ids = [await app.finished() for _ in range(4)]
        first = await app.client.post(_path(ids[0]))
        assert first.status_code == 202, first.text
        assert first.json()["status"] in ("queued", "running")
        running = await app.wait(ids[0], "running", progress=0.0)
        assert running["position"] is None
        for n, match_id in enumerate(ids[1:3], start=1):
            queued = await app.client.post(_path(match_id))
            assert queued.status_code == 202, queued.text
            assert queued.json() == {
                "status": "queued",
                "position": n,
                "progress": 0.0,
                "analysis": None,
            }
        # Asked again, a queued match keeps its place and is not queued twice.
        again = await app.client.post(_path(ids[2]))
        assert again.status_code == 202 and again.json()["position"] == 2
        assert list(app.pool.entries) == ids[:3]
        assert len(analyser.plans) == 3
        # The queue holds 3 (queued and running): the fourth waits for a place.
        full = await app.client.post(_path(ids[3]))
        assert full.status_code == 503 and _code(full) == "analysis_busy"
        assert int(full.headers["retry-after"]) >= 1
        assert (await app.client.get(_path(ids[3]))).json()["status"] == "none"

        # Progress by rounds, then done: the next one moves up.
        analyser.release()
        await app.wait(ids[0], "running", progress=0.5)
        assert (await app.client.get(_path(ids[1]))).json()["position"] == 1
        analyser.release()
        done = await app.wait(ids[0], "done")
        assert done["analysis"]["rounds"] == [
            {"round": n + 1, "first_step": n * 10} for n in range(ROUNDS)
        ]
        await app.wait(ids[1], "running")
        assert (await app.client.get(_path(ids[2]))).json()["position"] == 1
        # A place is free again.
        assert (await app.client.post(_path(ids[3]))).status_code == 202
        # Done: the POST answers the analysis at once, and queues nothing.
        kept = await app.client.post(_path(ids[0]))
        assert kept.status_code == 200 and kept.json() == done
        assert ids[0] not in app.pool.entries
        analyser.release(3 * ROUNDS)
        for match_id in ids[1:]:
            await app.wait(match_id, "done")
        assert len(analyser.plans) == 4


def test_the_queue_is_bounded_and_ordered(database: str, tmp_path: Path) -> None:
    asyncio.run(_queue(database, tmp_path))


async def _stored(database: str, tmp_path: Path) -> None:
    analyser = SlowAnalyser()
    async with started(database, tmp_path, analyser=analyser) as app:
        match_id = await app.finished()
        assert (await app.client.post(_path(match_id))).status_code == 202
        analyser.release(ROUNDS)
        done = await app.wait(match_id, "done")
    # A fresh app on the same database (another process, or after a restart) serves it
    # without analysing anything: its analyser would fail.
    failing = SlowAnalyser()
    failing.fail = True
    async with started(database, tmp_path, analyser=failing) as app:
        served = await app.client.get(_path(match_id))
        assert served.status_code == 200 and served.json() == done
        asked = await app.client.post(_path(match_id))
        assert asked.status_code == 200 and asked.json() == done
        assert failing.plans == []


def test_a_done_analysis_is_stored_and_served(database: str, tmp_path: Path) -> None:
    asyncio.run(_stored(database, tmp_path))


async def _failed(database: str, tmp_path: Path) -> None:
    analyser = SlowAnalyser()
    analyser.fail = True
    async with started(database, tmp_path, analyser=analyser) as app:
        match_id = await app.finished()
        assert (await app.client.post(_path(match_id))).status_code == 202
        analyser.release(ROUNDS)
        failed = await app.wait(match_id, "failed")
        assert failed["analysis"] is None
        # Asked again, it is tried again.
        analyser.fail = False
        again = await app.client.post(_path(match_id))
        assert again.status_code == 202, again.text
        analyser.release(ROUNDS)
        await app.wait(match_id, "done")
        assert len(analyser.plans) == 2


def test_a_failed_analysis_says_so(database: str, tmp_path: Path) -> None:
    asyncio.run(_failed(database, tmp_path))


def _short_konkan(seed: str) -> dict[str, Any]:
    """A whole two-seat, one-round Konkan match played by the simple player."""
    values = {"players": 2, "rounds": 1}
    first = state = konkan.new_game(KonkanOptions.for_game("konkan", values), seed)
    moves: list[Any] = []
    while not state.over:
        move = simple_konkan.act(konkan.view(state, konkan.to_act(state)))
        state, _ = konkan.apply(state, move)
        moves.append(move)
    return {**record_of("konkan", first, moves, ["a", "bot 1"]).to_json(), "options": values}


def _endless_konkan() -> dict[str, Any]:
    """A match whose one round takes the analysis minutes: two seats that only let the
    turn timer move run the stock through again and again."""
    values = {"players": 2, "rounds": 1, "max_reshuffles": 10}
    first = state = konkan.new_game(KonkanOptions.for_game("konkan", values), "e" * 64)
    moves: list[Any] = []
    while len(moves) < 4000 and not state.over:
        move = konkan.timeout_action(state)
        state, _ = konkan.apply(state, move)
        moves.append(move)
    return {**record_of("konkan", first, moves, ["a", "bot 1"]).to_json(), "options": values}


def _workers(pool: AnalysisPool) -> list[Any]:
    """The pool's worker processes (the executor's own)."""
    processes: dict[int, Any] = getattr(pool._executor, "_processes", None) or {}
    return list(processes.values())


async def _real(tmp_path: Path) -> None:
    database = f"sqlite+aiosqlite:///{tmp_path / 'sahrat.db'}"
    async with started(database, tmp_path, workers=1) as app:
        match_id = await app.finished(record=_short_konkan("d" * 64))
        asked = await app.client.post(_path(match_id))
        assert asked.status_code == 202, asked.text
        done = await _wait(app.client, match_id, "done", wait=120)
        analysis = done["analysis"]
        assert (analysis["format"], analysis["game"]) == (1, "konkan")
        assert analysis["seats"] == ["a", "bot 1"]
        assert [r["round"] for r in analysis["rounds"]] == [1]
        assert analysis["decisions"], "a whole round has decisions"
        # The rounds ran in a worker process of the pool, not here.
        assert app.pool.workers == 1 and app.pool._executor is not None

        # A worker that dies (killed, out of memory) fails its match, not the pool.
        endless = await app.finished(record=_endless_konkan())
        assert (await app.client.post(_path(endless))).status_code == 202
        await app.wait(endless, "running")
        (killed,) = _workers(app.pool)
        os.kill(killed.pid, signal.SIGKILL)
        await _wait(app.client, endless, "failed", wait=30)
        again = await app.finished(record=_short_konkan("f" * 64))
        assert (await app.client.post(_path(again))).status_code == 202
        assert (await _wait(app.client, again, "done", wait=120))["analysis"]["decisions"]

        # At shutdown a round being analysed is cut short: the worker ends at once.
        assert (await app.client.post(_path(endless))).status_code == 202  # tried again
        await app.wait(endless, "running")
        workers = _workers(app.pool)
        assert workers and all(worker.is_alive() for worker in workers)
        assert killed not in workers
        stopping = time.monotonic()
    assert time.monotonic() - stopping < 10
    assert not any(worker.is_alive() for worker in workers)


def test_the_real_analysis_in_a_worker_process(tmp_path: Path) -> None:
    asyncio.run(_real(tmp_path))


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux's /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                found.append(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


async def _served(server: ServerProcess) -> None:
    api = Api(server)
    try:
        token, user = await api.guest()
        table = await api.create_table(token, "konkan", {"players": 2})
        players: list[int | None] = [user["id"], None]
        url = server.database_url
        short = await _store(url, table["id"], players, "konkan", _short_konkan("d" * 64))
        assert (await api.http.post(_path(short))).status_code == 202
        done = await _wait(api.http, short, "done", wait=120)
        assert done["analysis"]["decisions"]
        endless = await _store(url, table["id"], players, "konkan", _endless_konkan())
        assert (await api.http.post(_path(endless))).status_code == 202
        await _wait(api.http, endless, "running")
    finally:
        await api.aclose()


def test_a_killed_server_leaves_no_worker_behind(
    start_server: Callable[..., ServerProcess],
) -> None:
    """``sahrat serve`` analyses in a worker process of its own; killed outright (no
    shutdown), its worker ends too instead of finishing a round for nobody."""
    server = start_server(SAHRAT_ANALYSIS_WORKERS="1")
    asyncio.run(_served(server))
    assert server.proc is not None
    workers = _children(server.proc.pid)
    assert workers, "no worker process"
    server.kill()
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(pid) for pid in workers), workers
