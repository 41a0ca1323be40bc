"""The table's clock: one pending wake-up, which a later one replaces.

A move sets the next wake-up; the loop's timer is kept when the new one is later and
sets itself again for the rest when it fires (pacing.Clock). Whatever the timer does,
a wake-up runs only what was last asked for, never before its time, and once.
"""

from __future__ import annotations

import asyncio
import time

from sahrat.server.table.pacing import Clock

PATIENCE = 5.0  # how long a test waits for a wake-up that must come (a loaded machine)


class Wakeups:
    def __init__(self) -> None:
        self.fired: list[tuple[str, float]] = []

    def maker(self, name: str):  # type: ignore[no-untyped-def]
        async def fire() -> None:
            self.fired.append((name, time.time()))

        return lambda: fire()

    async def wait_for(self, count: int) -> None:
        deadline = time.monotonic() + PATIENCE
        while len(self.fired) < count and time.monotonic() < deadline:
            await asyncio.sleep(0.01)


def test_a_later_wake_up_replaces_an_earlier_one_and_runs_at_its_time() -> None:
    async def scenario() -> None:
        clock, wakeups = Clock(), Wakeups()
        now = time.time()
        clock.at(now + 0.05, wakeups.maker("first"))
        later = now + 0.3
        clock.at(later, wakeups.maker("second"))  # the timer set for the first stays
        await wakeups.wait_for(1)
        await asyncio.sleep(0.1)  # a second run would come in this time
        assert [name for name, _ in wakeups.fired] == ["second"]
        assert wakeups.fired[0][1] >= later

    asyncio.run(scenario())


def test_an_earlier_wake_up_replaces_a_later_one() -> None:
    async def scenario() -> None:
        clock, wakeups = Clock(), Wakeups()
        now = time.time()
        clock.at(now + 0.4, wakeups.maker("late"))
        soon = now + 0.05
        clock.at(soon, wakeups.maker("soon"))
        await wakeups.wait_for(1)
        await asyncio.sleep(0.5)  # past the late one's time: it must not run
        assert [name for name, _ in wakeups.fired] == ["soon"]
        assert wakeups.fired[0][1] >= soon

    asyncio.run(scenario())


def test_a_cancelled_wake_up_never_runs_and_the_clock_can_be_set_again() -> None:
    async def scenario() -> None:
        clock, wakeups = Clock(), Wakeups()
        now = time.time()
        clock.at(now + 0.05, wakeups.maker("cancelled"))
        clock.cancel()
        await asyncio.sleep(0.2)
        assert wakeups.fired == []
        clock.at(time.time() + 0.05, wakeups.maker("again"))
        await wakeups.wait_for(1)
        assert [name for name, _ in wakeups.fired] == ["again"]

    asyncio.run(scenario())


def test_many_moves_in_a_row_end_in_one_wake_up_at_the_last_deadline() -> None:
    async def scenario() -> None:
        clock, wakeups = Clock(), Wakeups()
        last = time.time()
        # Each move sets the deadline a turn's length after itself, as the turn clock
        # does; the moves go on for longer than one such turn (50 x 5 ms > 0.2 s), so
        # the loop's timer, kept from the first move, fires early and sets itself again.
        # (A deadline fixed in advance instead passes whenever a loaded machine runs
        # the moves slower than planned, and then its wake-up is rightly due.)
        for move in range(50):
            last = time.time() + 0.2
            clock.at(last, wakeups.maker(f"move {move}"))
            await asyncio.sleep(0.005)
        await wakeups.wait_for(1)
        await asyncio.sleep(0.1)
        assert [name for name, _ in wakeups.fired] == ["move 49"]
        assert wakeups.fired[0][1] >= last

    asyncio.run(scenario())
