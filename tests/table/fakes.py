"""What a table part is built with in a unit test: a process around it that keeps
everything in memory (``FakeServices``), a log writer that is durable at once or fails
on demand, connections whose sent messages can be read back, and log entries."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from sahrat.server.table import Connection, ServerDefaults, Table, TableError
from sahrat.settings import Settings
from sahrat.store.log import Append

PATIENCE = 5.0  # how long a test waits for something that must happen (a loaded machine)


def settings(**values: Any) -> Settings:
    """Settings with these values (by field name), the defaults otherwise."""
    return Settings.model_validate(
        {Settings.model_fields[name].alias or name: value for name, value in values.items()}
    )


class FakeWriter:
    """A log writer: an append is durable at once, unless ``failing`` (it raises) or
    ``held`` (it waits until the event is set)."""

    def __init__(self) -> None:
        self.appended: list[Append] = []
        self.failing: Exception | None = None
        self.held: asyncio.Event | None = None

    async def append(self, item: Append) -> None:
        if self.held is not None:
            await self.held.wait()
        if self.failing is not None:
            raise self.failing
        self.appended.append(item)

    @property
    def entries(self) -> list[dict[str, Any]]:
        return [entry for item in self.appended for entry in item.entries]


@dataclass
class FakeServices:
    """``TableServices`` in memory: what the table stored is kept in lists to read."""

    settings: Settings = field(
        default_factory=lambda: settings(grace_seconds=0.05, bot_delay_seconds=0.01)
    )
    defaults: ServerDefaults = field(default_factory=lambda: ServerDefaults(0, 0, 30, 0))
    writer: FakeWriter = field(default_factory=FakeWriter)
    names: dict[int, str] = field(default_factory=dict)
    suspended: set[int] = field(default_factory=set)
    balances: dict[int, int] = field(default_factory=dict)
    lease: bool = True
    seats_stored: list[tuple[Any, ...]] = field(default_factory=list)
    seats_removed: list[int] = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)
    options_stored: list[dict[str, Any]] = field(default_factory=list)
    closed: list[bool] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    forgotten: list[str] = field(default_factory=list)
    tasks: list[asyncio.Task[None]] = field(default_factory=list)

    async def store_seat(
        self,
        table_id: int,
        seat: int,
        user_id: int | None,
        bot_level: str | None,
        left: bool,
        address: str | None = None,
    ) -> None:
        self.seats_stored.append((seat, user_id, bot_level, left))

    async def remove_seat(self, table_id: int, seat: int) -> None:
        self.seats_removed.append(seat)

    async def store_status(self, table_id: int, status: str) -> None:
        self.statuses.append(status)

    async def store_options(self, table_id: int, options: dict[str, Any]) -> None:
        self.options_stored.append(options)

    async def store_closed(self, table_id: int, free_seats: bool) -> None:
        self.closed.append(free_seats)

    async def check_can_sit(self, user_id: int, stake: int) -> None:
        if stake > self.balances.get(user_id, 0):
            raise TableError("not_enough_coins", "not enough coins")

    async def coin_balances(self, user_ids: list[int]) -> dict[int, int]:
        return {user: self.balances.get(user, 0) for user in user_ids}

    def background(self, task: asyncio.Task[None]) -> None:
        self.tasks.append(task)

    def drop(self, table_id: int, reason: str) -> None:
        self.dropped.append(reason)

    def may_write(self, table_id: int) -> bool:
        return self.lease

    def forget_later(self, table_id: int) -> None:
        self.forgotten.append("later")

    def forget_closed(self, table_id: int) -> None:
        self.forgotten.append("closed")


@dataclass
class Entry:
    """A row of a table's event log, as the hub hands them to ``Table.restore``."""

    seq: int
    kind: str
    data: dict[str, Any]
    seat: int | None = None
    client_id: str | None = None


def start_entry(seed: str, seq: int = 1) -> Entry:
    return Entry(seq, "start", {"seed": seed})


def sent(conn: Connection) -> list[dict[str, Any]]:
    """The messages queued on ``conn`` since the last call (they are taken)."""
    out = []
    while not conn.outbox.empty():
        text = conn.outbox.get_nowait()
        if isinstance(text, str):
            out.append(orjson.loads(text))
    return out


def kinds(conn: Connection) -> list[str]:
    return [message["type"] for message in sent(conn)]


def playing_table(
    services: FakeServices,
    *,
    game: str = "konkan",
    seed: str = "unit",
    seats: list[int | None] | None = None,
    options: dict[str, Any] | None = None,
    deadline: float | None = None,
    **extra: Any,
) -> Table:
    """A table playing the match dealt from ``seed`` (restored from its start entry),
    its players the users 1, 2, 3 by default."""
    seats = seats if seats is not None else [1, 2, 3]
    chosen = {"players": len(seats), **(options or {})} if game != "conquian" else options or {}
    table = Table(
        services,  # type: ignore[arg-type]
        table_id=7,
        game=game,
        options=chosen,
        private=False,
        invite_code=None,
        creator_id=1,
        status="playing",
        seq=1,
        seats=seats,
        deadline=deadline if deadline is not None else time.time() + 60,
        **extra,
    )
    table.restore([start_entry(seed)])
    return table


async def eventually(check: Callable[[], bool], timeout: float = PATIENCE) -> None:
    """Wait until ``check()`` holds (failing the test if it never does)."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "it never happened"
        await asyncio.sleep(0.005)
