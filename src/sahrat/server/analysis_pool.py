"""The analyses of finished matches a process makes (docs/analysis.md, "REST"): a
bounded queue, and a pool of worker processes that analyse the matches a round at a
time.

Analysing a match costs minutes of CPU (``sahrat.analysis``), far too much for the
event loop or a thread beside it: the rounds run in worker processes started with
"spawn" (a fork would copy the server's loop, sockets and locks into the child),
``SAHRAT_ANALYSIS_WORKERS`` of them (0: one thread of this process, for tests). A
process holds at most ``SAHRAT_ANALYSIS_QUEUE`` matches, queued and running: beyond
that a request is refused (:class:`Busy`, the REST's 503 with Retry-After), so that
requests cannot pile up work without bound. A match queued or running is never queued
twice.

A match's way: :func:`sahrat.analysis.plan` replays its record (cheap, in a thread,
while the request waits: a record that cannot be analysed is refused at once), its
rounds go to the pool, :func:`sahrat.analysis.assemble` puts them together, and the
analysis is stored (``match_analyses``), once: when another process stored it first,
its row is kept. From then on every process serves it from the database.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from concurrent.futures import BrokenExecutor, Executor, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

import sahrat.analysis
from sahrat.analysis import AnalysisPlan, RoundJob
from sahrat.store.models import MatchAnalysis

log = logging.getLogger("sahrat.analysis")

Status = Literal["none", "queued", "running", "done", "failed"]
RETRY_AFTER_SECONDS = 30  # a match's analysis takes about that long or more: ask again then
FAILED_KEPT = 64  # failed matches remembered for GET (a new POST tries again)
WORKER_NICENESS = 5  # the analysis yields the CPU to the tables served beside it
PARENT_CHECK_SECONDS = 1.0


class Analyser(Protocol):
    """What analyses a match: ``sahrat.analysis`` itself, or a stand-in in tests.
    ``analyse_round`` must be picklable (a module's function) for worker processes."""

    def plan(self, record: Mapping[str, Any]) -> AnalysisPlan: ...

    def analyse_round(self, job: RoundJob) -> dict[str, Any]: ...

    def assemble(
        self, analysis_plan: AnalysisPlan, rounds: list[dict[str, Any]], seconds: float
    ) -> dict[str, Any]: ...


class Busy(Exception):
    """The queue is full: ask again in ``retry_after`` seconds."""

    def __init__(self, retry_after: int) -> None:
        super().__init__("the analysis queue is full")
        self.retry_after = retry_after


@dataclass
class Entry:
    """A match this process holds: queued (its plan being made, or made), or running."""

    match_id: int
    status: Literal["queued", "running"] = "queued"
    plan: AnalysisPlan | None = None
    rounds: int = 0
    done: int = 0


@dataclass(frozen=True)
class Progress:
    """Where a match's analysis stands in this process (``none``: nothing here)."""

    status: Status
    position: int | None = None  # 1: the next to run
    progress: float | None = None  # rounds done / rounds
    analysis: dict[str, Any] | None = field(default=None)


def _worker_start() -> None:
    """A worker's start: below the server's priority, so that the tables of a process
    analysing matches still move at once; and ended with the server, even a server
    killed outright (a round can take minutes: an orphan would run it for nobody)."""
    with contextlib.suppress(OSError, AttributeError):
        os.nice(WORKER_NICENESS)
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="sahrat-analysis-parent", daemon=True).start()


class AnalysisPool:
    """This process's analyses: ``request`` a match, ``progress`` of one, ``close`` at
    shutdown. ``sessions`` opens database sessions (the hub's)."""

    def __init__(
        self,
        workers: int,
        queue_size: int,
        sessions: Callable[[], AsyncSession],
        analyser: Analyser | None = None,
    ) -> None:
        self.workers = workers
        self.queue_size = queue_size
        self.sessions = sessions
        self.analyser: Analyser = analyser or sahrat.analysis
        self.entries: OrderedDict[int, Entry] = OrderedDict()  # in the order asked
        self.failed: OrderedDict[int, str] = OrderedDict()
        self._ready: asyncio.Queue[Entry] | None = None
        self._runners: list[asyncio.Task[None]] = []
        self._executor: Executor | None = None

    # --- asking ------------------------------------------------------------------------

    def progress(self, match_id: int) -> Progress | None:
        """Queued or running here, or failed here (and not stored since): else None."""
        entry = self.entries.get(match_id)
        if entry is None:
            return Progress("failed") if match_id in self.failed else None
        if entry.status == "running":
            return Progress("running", progress=entry.done / entry.rounds if entry.rounds else 0.0)
        queued = [e for e in self.entries.values() if e.status == "queued"]
        return Progress("queued", position=queued.index(entry) + 1, progress=0.0)

    async def request(self, match_id: int, record: Mapping[str, Any]) -> Progress:
        """Queue a match (NotAnalysable when it cannot be analysed, Busy when the queue is
        full); a match held already is not queued again."""
        held = self.progress(match_id)
        if held is not None and held.status != "failed":
            return held
        if len(self.entries) >= self.queue_size:
            raise Busy(RETRY_AFTER_SECONDS)
        entry = self.entries[match_id] = Entry(match_id)  # its place, while it is planned
        self.failed.pop(match_id, None)
        try:
            entry.plan = await asyncio.to_thread(self.analyser.plan, record)
        except BaseException:
            self.entries.pop(match_id, None)
            raise
        entry.rounds = len(entry.plan.jobs)
        self._start()
        assert self._ready is not None
        self._ready.put_nowait(entry)
        held = self.progress(match_id)
        assert held is not None
        return held

    # --- running -----------------------------------------------------------------------

    def _start(self) -> None:
        if self._ready is not None:
            return
        self._ready = asyncio.Queue()
        self._executor = self._new_executor()
        # A match's rounds all go to the pool at once: one runner a worker, so that as many
        # matches run as there are workers, each as fast as its rounds allow.
        self._runners = [
            asyncio.create_task(self._runner(), name=f"analysis-runner-{n}")
            for n in range(max(1, self.workers))
        ]

    def _new_executor(self) -> Executor:
        if self.workers > 0:
            return ProcessPoolExecutor(
                self.workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_worker_start,
            )
        return ThreadPoolExecutor(1, thread_name_prefix="sahrat-analysis")

    async def _runner(self) -> None:
        assert self._ready is not None
        while True:
            entry = await self._ready.get()
            executor = self._executor
            try:
                await self._run(entry)
            except asyncio.CancelledError:
                raise
            except Exception as error:
                log.exception("the analysis of match %d failed", entry.match_id)
                if isinstance(error, BrokenExecutor) and executor is self._executor:
                    # A worker died (killed, out of memory): that pool takes no more work.
                    if executor is not None:
                        executor.shutdown(wait=False, cancel_futures=True)
                    self._executor = self._new_executor()
                self.failed[entry.match_id] = "failed"
                while len(self.failed) > FAILED_KEPT:
                    self.failed.popitem(last=False)
            finally:
                if self.entries.get(entry.match_id) is entry:
                    del self.entries[entry.match_id]

    async def _run(self, entry: Entry) -> None:
        assert entry.plan is not None and self._executor is not None
        entry.status = "running"
        started = time.perf_counter()
        loop = asyncio.get_running_loop()
        futures = [
            loop.run_in_executor(self._executor, self.analyser.analyse_round, job)
            for job in entry.plan.jobs
        ]

        async def counted(future: asyncio.Future[dict[str, Any]]) -> dict[str, Any]:
            result = await future
            entry.done += 1
            return result

        try:
            rounds = list(await asyncio.gather(*(counted(f) for f in futures)))
        except BaseException:
            for future in futures:
                future.cancel()
            raise
        body = await asyncio.to_thread(
            self.analyser.assemble, entry.plan, rounds, time.perf_counter() - started
        )
        await self._store(entry.match_id, body, time.perf_counter() - started)

    async def _store(self, match_id: int, body: dict[str, Any], seconds: float) -> None:
        """Insert the analysis; one another process stored first is kept as it is."""
        try:
            async with self.sessions() as session, session.begin():
                if await session.get(MatchAnalysis, match_id) is None:
                    session.add(MatchAnalysis(match_id=match_id, seconds=seconds, body=body))
        except IntegrityError:
            log.info("match %d was analysed by another process first", match_id)

    async def close(self) -> None:
        """Stop at shutdown: the queue is dropped, a round being analysed is cut short
        (the worker processes end now, not when their round is done)."""
        for runner in self._runners:
            runner.cancel()
        for runner in self._runners:
            with contextlib.suppress(asyncio.CancelledError):
                await runner
        self._runners = []
        executor, self._executor = self._executor, None
        if executor is None:
            return
        # The executor's own processes (it offers no other way to end a running task).
        workers = list(dict(getattr(executor, "_processes", None) or {}).values())
        executor.shutdown(wait=False, cancel_futures=True)
        for worker in workers:
            with contextlib.suppress(Exception):
                worker.terminate()
        for worker in workers:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(worker.join, 5)


async def stored(sessions: Callable[[], AsyncSession], match_id: int) -> dict[str, Any] | None:
    """A match's stored analysis, or None."""
    async with sessions() as session:
        row = await session.get(MatchAnalysis, match_id)
    return dict(row.body) if row is not None else None
