"""What the tournament tests share (docs/tournaments.md): a server that plays short
tournament matches, making and registering over REST, a driver that plays every
entrant who comes to their tables over real WebSockets (one may drop out, one may never
come), and reading the tournament's ledger entries from the database.

Short matches: Konkan tables of one round (``SAHRAT_TOURNAMENT_KONKAN_ROUNDS=1``),
Conquian tables of one deal won (``SAHRAT_TOURNAMENT_CONQUIAN_WINS=1``); bots move at
once (``SAHRAT_BOT_DELAY_SECONDS=0``); the runner looks every 0.2 s; a seat nobody plays
is played by the timer after ``TURN_SECONDS`` and forfeited to a bot after two timer
turns in a row; the complaint window lasts ``COMPLAINT_SECONDS``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from fractions import Fraction
from typing import Any

import httpx
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from sahrat.ratings import NEW_MU, SHOWN_NEW, SHOWN_SCALE

from .harness import Api, ServerProcess, WireClient, auth_headers, engine_and_player, wire_action

TURN_SECONDS = 4
COMPLAINT_SECONDS = 3
HOUSE_PERMILLE = 100  # the house's share of the fees, in thousandths
FEE = 100  # the entry fee of the paid tournaments played here
WELCOME = 1000  # SAHRAT_WELCOME_GRANT's default (docs/economy.md): a new account's coins
TOURNAMENT_ENV = {
    "SAHRAT_BOT_DELAY_SECONDS": "0",
    "SAHRAT_TOURNAMENT_TICK_SECONDS": "0.2",
    "SAHRAT_TOURNAMENT_KONKAN_ROUNDS": "1",
    "SAHRAT_TOURNAMENT_CONQUIAN_WINS": "1",
    "SAHRAT_TOURNAMENT_COMPLAINT_MINUTES": str(COMPLAINT_SECONDS / 60),
    "SAHRAT_TOURNAMENT_HOUSE_PERMILLE": str(HOUSE_PERMILLE),
    "SAHRAT_TURN_SECONDS_OVERRIDE": str(TURN_SECONDS),
    # two: a turn the timer plays for a player while the server restarts forfeits nothing
    "SAHRAT_TIMER_TURNS_TO_FORFEIT": "2",
    "SAHRAT_GRACE_SECONDS": "30",
}
RUN_SECONDS = 300.0  # a whole small tournament, restart included


def iso_in(seconds: float) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat()


def prize_pool(payers: int, fee: int = FEE) -> int:
    """The prize pool of ``payers`` fees: the fees less the house's share, rounded down."""
    return payers * fee - payers * fee * HOUSE_PERMILLE // 1000


@dataclass(frozen=True)
class RatedPeople:
    """People with settled ratings of their own (``rated_people``): ``accounts`` the
    (token, user) of each, in the order of the ratings, ``rating`` user id -> shown
    rating; each registers through the API their account was made with."""

    apis: Sequence[Api]
    accounts: list[tuple[str, dict[str, Any]]]
    rating: dict[int, int]

    @property
    def tokens(self) -> dict[int, str]:
        """User id -> token."""
        return {user["id"]: token for token, user in self.accounts}

    def api_of(self, index: int) -> Api:
        return self.apis[index % len(self.apis)]

    async def register(self, tournament_id: int) -> None:
        """Register everyone, in the order of the ratings."""
        for index, (token, _user) in enumerate(self.accounts):
            await register(self.api_of(index), token, tournament_id)


async def rated_people(
    database: str, apis: Sequence[Api], prefix: str, ratings: Sequence[int]
) -> RatedPeople:
    """One new account per rating (named after ``prefix``), made through the APIs in
    turn (the i-th through ``apis[i % len(apis)]``: one process each, as a load balancer
    spreads them), each then given that rating (``set_rating``): with ratings all
    different, the seeds are their order."""
    accounts = [await apis[i % len(apis)].account(prefix) for i in range(len(ratings))]
    rating = {user["id"]: r for (_token, user), r in zip(accounts, ratings, strict=True)}
    for user, shown in rating.items():
        await set_rating(database, user, shown)
    return RatedPeople(list(apis), accounts, rating)


async def make_tournament(api: Api, token: str, **body: Any) -> dict[str, Any]:
    response = await api.http.post("/api/tournaments", json=body, headers=auth_headers(token))
    assert response.status_code == 201, response.text
    return dict(response.json())


async def register(api: Api, token: str, tournament_id: int) -> dict[str, Any]:
    response = await api.http.post(
        f"/api/tournaments/{tournament_id}/entries", headers=auth_headers(token)
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


async def detail(api: Api, tournament_id: int, token: str | None = None) -> dict[str, Any]:
    return dict(await api.get(f"/api/tournaments/{tournament_id}", token))


async def wait_state(
    api: Api, tournament_id: int, states: Collection[str], timeout: float = RUN_SECONDS
) -> dict[str, Any]:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        found = await detail(api, tournament_id)
        if found["state"] in states:
            return found
        assert asyncio.get_running_loop().time() < deadline, found
        await asyncio.sleep(0.2)


@dataclass
class Driver:
    """Plays the people entered in a tournament at each of their tables, each seat
    over its own WebSocket with the simple player, until the tournament is past its
    tables. ``absent``: users who never come; ``walk_out``: users who never open their
    first table either, but leave it (over REST) as soon as its match is dealt, before
    any move: dropped at their first table without a move of their own, a no-show
    whatever the match's length (one who never comes is forfeited by the timer only if
    the match lasts two of their turns); ``leave_after``: users who leave their table
    of round ``leave_in`` (default 1, their first) after that many moves of their own (a
    bot finishes it). A connection the server drops (a restart) is opened again while
    the table plays. ``played``: the users' moves by table; ``left_at``: the table each
    leaver (or walker-out) left."""

    server: ServerProcess
    api: Api
    game: str
    tokens: Mapping[int, str]  # user id -> token
    absent: Collection[int] = ()
    walk_out: Collection[int] = ()
    leave_after: Mapping[int, int] = field(default_factory=dict)
    leave_in: Mapping[int, int] = field(default_factory=dict)  # user -> round they leave in
    tasks: dict[tuple[int, int], asyncio.Task[None]] = field(default_factory=dict)
    left: set[int] = field(default_factory=set)
    played: dict[int, list[int]] = field(default_factory=dict)  # table id -> users who moved
    left_at: dict[int, int] = field(default_factory=dict)  # user -> table id they left
    # awaited after each accepted move of a user, with (table id, user): a test's restart
    # at a known point of play (a look at the tournament every 0.2 s can miss a table)
    after_move: Callable[[int, int], Awaitable[None]] | None = None

    async def run(
        self,
        tournament_id: int,
        until: Collection[str] = ("complaints", "finished", "cancelled"),
        during: Callable[[dict[str, Any]], Any] | None = None,
    ) -> dict[str, Any]:
        """Drive until the tournament is in a state of ``until``; ``during(detail)`` is
        awaited at every look (a test's restart)."""
        deadline = asyncio.get_running_loop().time() + RUN_SECONDS
        try:
            while True:
                try:
                    found = await detail(self.api, tournament_id)
                except httpx.HTTPError:  # the server restarting
                    await asyncio.sleep(0.2)
                    continue
                if found["state"] in until:
                    return found
                self._seat_everyone(found)
                if during is not None:
                    await during(found)
                assert asyncio.get_running_loop().time() < deadline, found
                await asyncio.sleep(0.2)
        finally:
            for task in self.tasks.values():
                task.cancel()
            await asyncio.gather(*self.tasks.values(), return_exceptions=True)

    def _seat_everyone(self, found: dict[str, Any]) -> None:
        users = {e["entry"]: e["user_id"] for e in found["entrants"]}
        for round_ in found["rounds"]:
            for table in round_["tables"]:
                if table["state"] == "finished" or table["table_id"] is None:
                    continue
                for entry in table["seats"]:
                    user = users.get(entry)
                    if user is None or user in self.absent or user in self.left:
                        continue
                    key = (table["table_id"], user)
                    task = self.tasks.get(key)
                    if task is not None and (not task.done() or self._table_done(task)):
                        continue
                    if user not in self.walk_out:
                        self.tasks[key] = asyncio.create_task(self._play(*key, round_["round"]))
                    elif table["state"] == "playing":
                        self.tasks[key] = asyncio.create_task(self._walk_out(*key))

    @staticmethod
    def _table_done(task: asyncio.Task[None]) -> bool:
        return not task.cancelled() and task.exception() is None

    async def _walk_out(self, table_id: int, user: int) -> None:
        response = await self.api.http.post(
            f"/api/tables/{table_id}/leave", headers=auth_headers(self.tokens[user])
        )
        assert response.status_code == 200, response.text
        self.left.add(user)
        self.left_at[user] = table_id

    async def _play(self, table_id: int, user: int, round_no: int = 1) -> None:
        """Play one seat until the match is over (or leave, for a drop-out)."""
        leaving = user in self.leave_after and self.leave_in.get(user, 1) == round_no
        engine, player = engine_and_player(self.game)
        token = self.tokens[user]
        client = await WireClient.connect(self.server, table_id, token, name=f"u{user}")
        moves = 0
        try:
            while True:
                await client.wait_until(
                    lambda: (
                        client.closed
                        or (
                            client.view is not None
                            and (client.view["match_over"] or client.may_move)
                        )
                    ),
                    timeout=60,
                )
                if client.closed:
                    raise ConnectionError("the server closed the socket")
                view = client.view
                assert view is not None
                if view["match_over"]:
                    return
                if leaving and moves >= self.leave_after[user]:
                    response = await self.api.http.post(
                        f"/api/tables/{table_id}/leave", headers=auth_headers(token)
                    )
                    assert response.status_code == 200, response.text
                    self.left.add(user)
                    self.left_at[user] = table_id
                    return
                reply = await client.command(wire_action(engine, player(view)))
                error = reply["payload"].get("error")
                assert reply["payload"].get("ok") or error["code"] in ("stale", "round_break"), (
                    reply
                )
                if reply["payload"].get("ok"):
                    moves += 1
                    self.played.setdefault(table_id, []).append(user)
                    if self.after_move is not None:
                        await self.after_move(table_id, user)
        finally:
            with contextlib.suppress(Exception):
                await client.close()


# --- the ledger, read from the database --------------------------------------------------


@dataclass(frozen=True)
class Movement:
    key: str
    debit: str
    credit: str
    amount: int
    reason: str


async def tournament_ledger(database: str, tournament_id: int) -> list[Movement]:
    """Every ledger entry of a tournament (its keys are ``tournament:<id>:...``), in the
    order they were posted."""
    engine = create_async_engine(database)
    try:
        async with engine.connect() as conn:
            rows = await conn.execute(
                text(
                    "SELECT idempotency_key, debit_account, credit_account, amount, reason "
                    "FROM ledger_entries WHERE idempotency_key LIKE :prefix ORDER BY id"
                ),
                {"prefix": f"tournament:{tournament_id}:%"},
            )
            return [Movement(str(k), str(d), str(c), int(a), str(r)) for k, d, c, a, r in rows]
    finally:
        await engine.dispose()


async def balances(database: str, accounts: Collection[str]) -> dict[str, int]:
    engine = create_async_engine(database)
    try:
        async with engine.connect() as conn:
            rows = await conn.execute(
                text("SELECT account_id, balance FROM balances"),
            )
            found = {str(a): int(b) for a, b in rows}
    finally:
        await engine.dispose()
    return {account: found.get(account, 0) for account in accounts}


async def first_match(database: str, table_id: int) -> dict[str, Any]:
    """The first finished match of a game table: its score sheet and seats' users."""
    engine = create_async_engine(database)
    try:
        async with engine.connect() as conn:
            row = (
                await conn.execute(
                    text(
                        "SELECT id, score_sheet, players FROM matches WHERE table_id = :t "
                        "ORDER BY id LIMIT 1"
                    ),
                    {"t": table_id},
                )
            ).first()
    finally:
        await engine.dispose()
    assert row is not None, f"table {table_id} has no finished match"
    sheet, players = row[1], row[2]
    if isinstance(sheet, str):
        sheet, players = json.loads(sheet), json.loads(players)
    return {"id": int(row[0]), "score_sheet": sheet, "players": players}


async def set_rating(database: str, user_id: int, shown: int, pool: str = "konkan51") -> None:
    """Give a user a settled rating in ``pool`` shown as ``shown`` (as rated matches
    elsewhere would have left it), so that a tournament seeds them by it."""
    mu = NEW_MU + (shown - SHOWN_NEW) / SHOWN_SCALE
    engine = create_async_engine(database)
    try:
        async with engine.begin() as conn:
            await conn.execute(
                text(
                    "INSERT INTO ratings (user_id, pool, mu, sigma, games, shown, provisional, "
                    "last_played_at) VALUES (:u, :pool, :mu, 3.0, 30, :shown, :p, :at)"
                ),
                {
                    "u": user_id,
                    "pool": pool,
                    "mu": mu,
                    "shown": shown,
                    "p": False,
                    "at": datetime.now(UTC),
                },
            )
    finally:
        await engine.dispose()


# --- the written rules, again (docs/tournaments.md), for the expected values -------------


def table_points(places: Mapping[int, int]) -> dict[int, Fraction]:
    """Placement points of one table: place p of n scores 3(n+1-2p)/(n-1); players tied
    for a place take the positions it spans and each the average of their points."""
    size = len(places)
    ranked = sorted(places, key=lambda e: places[e])
    points: dict[int, Fraction] = {}
    position = 1
    for place in sorted(set(places.values())):
        tied = [e for e in ranked if places[e] == place]
        spanned = range(position, position + len(tied))
        each = sum((Fraction(3 * (size + 1 - 2 * p), size - 1) for p in spanned), Fraction(0))
        each /= len(tied)
        points.update(dict.fromkeys(tied, each))
        position += len(tied)
    return points


def konkan_table_sizes(players: int) -> list[int]:
    """Konkan tables: of 4, and as few of 3 as the count allows (4k+1, 4k+2, 4k+3 take
    three, two, one table of 3); 5 players a 3 and a 2; up to 4 one table."""
    if players <= 4:
        return [players]
    if players == 5:
        return [3, 2]
    threes = {0: 0, 1: 3, 2: 2, 3: 1}[players % 4]
    return [4] * ((players - 3 * threes) // 4) + [3] * threes


PRIZE_PERCENT = {  # places paid -> percent of the pool, best first ("The split")
    1: (100,),
    2: (70, 30),
    3: (50, 30, 20),
    4: (40, 30, 20, 10),
    5: (35, 25, 18, 12, 10),
    6: (30, 22, 16, 13, 10, 9),
}


def places_paid(players: int) -> int:
    """Places paid by the players with a standing: up to 2, 1; 4, 2; 8, 3; 16, 4; 32, 6."""
    for most, places in ((2, 1), (4, 2), (8, 3), (16, 4), (32, 6)):
        if players <= most:
            return places
    raise AssertionError("a field this size is not played here")


def split_prizes(pool: int, places: list[int]) -> list[int]:
    """The coins of each standing line, best first (``places`` their places): the pool
    split by the percent of the places paid (fewer players than places: as many places
    as players), each share rounded down and the rest to the first; players sharing a
    place share the prizes of the positions they span, rounded down, the odd coins one
    each from the first of them."""
    paid = min(places_paid(len(places)), len(places))
    shares = [pool * percent // 100 for percent in PRIZE_PERCENT[paid]]
    shares[0] += pool - sum(shares)
    shares += [0] * (len(places) - len(shares))
    coins = [0] * len(places)
    start = 0
    while start < len(places):
        end = start
        while end < len(places) and places[end] == places[start]:
            end += 1
        each, extra = divmod(sum(shares[start:end]), end - start)
        for index in range(start, end):
            coins[index] = each + (index - start < extra)
        start = end
    return coins


async def check_ledger(
    database: str,
    tid: int,
    fee: int,
    payers: Collection[int],
    pool: int,
    won: Mapping[int, int],
    welcome: int,
) -> None:
    """Every coin of a paid tournament through the ledger: each payer's fee into the
    escrow, each prize out of it, the rest (the house's share) to the house, nothing
    twice; the escrow empty and each payer's balance its welcome less the fee plus the
    prize."""
    ledger = await tournament_ledger(database, tid)
    want = [(f"user:{u}", f"tour:{tid}", fee, "tournament_fee") for u in payers]
    want += [(f"tour:{tid}", f"user:{u}", c, "tournament_prize") for u, c in won.items() if c]
    want.append((f"tour:{tid}", "house", fee * len(payers) - pool, "tournament_house"))
    assert sorted((m.debit, m.credit, m.amount, m.reason) for m in ledger) == sorted(want)
    keys = [m.key for m in ledger]
    assert len(set(keys)) == len(keys)
    assert {m.key for m in ledger if m.reason == "tournament_house"} == {f"tournament:{tid}:house"}
    found = await balances(database, [f"tour:{tid}", *(f"user:{u}" for u in payers)])
    assert found[f"tour:{tid}"] == 0
    for user in payers:
        assert found[f"user:{user}"] == welcome - fee + won.get(user, 0)


@dataclass
class WindowWatch:
    """Looks at a tournament in its complaint window: the result is held (prizes in
    the standings, ``complaint_until`` set) and no prize nor the house's share has left
    the escrow yet. The ledger is read first and the state after: a state still
    ``complaints`` then means the payment (one transaction with the state) had not
    happened when the ledger was read."""

    api: Api
    database: str
    seen: list[dict[str, Any]] = field(default_factory=list)

    async def __call__(self, found: dict[str, Any]) -> None:
        if found["state"] != "complaints" or self.seen:
            return
        ledger = await tournament_ledger(self.database, found["id"])
        again = await detail(self.api, found["id"])
        if again["state"] != "complaints":
            return
        assert {m.reason for m in ledger} <= {"tournament_fee"}, ledger
        assert again["complaint_until"] is not None
        assert all(line["prize"] is not None for line in again["standings"])
        self.seen.append(again)


def restart(server: ServerProcess, api: Api) -> None:
    """SIGKILL the server (what is durable is all that survives) and start it again:
    on its port, or, when another server took that port in between (xdist workers start
    servers all the time), on another one, which the REST client then follows (the
    sockets ask ``server`` for the port at every connect)."""
    server.kill()
    server.start(port=server.port)
    api.http.base_url = httpx.URL(server.base_url)


@dataclass
class RestartInRound:
    """A SIGKILL and restart at the first move of a person at a table of round
    ``round_no``: that table is being played. Give ``look`` to ``Driver.run`` as its
    ``during`` (it learns the round's tables, then awaits ``then``, e.g. a WindowWatch)
    and ``after_move`` to the driver. ``restarted``: the table it happened at."""

    server: ServerProcess
    api: Api
    round_no: int
    then: Callable[[dict[str, Any]], Awaitable[None]] | None = None
    tables: set[int] = field(default_factory=set)
    restarted: list[int] = field(default_factory=list)

    async def look(self, found: dict[str, Any]) -> None:
        if len(found["rounds"]) >= self.round_no:
            round_tables = found["rounds"][self.round_no - 1]["tables"]
            self.tables.update(t["table_id"] for t in round_tables if t["table_id"])
        if self.then is not None:
            await self.then(found)

    async def after_move(self, table_id: int, _user: int) -> None:
        if not self.restarted and table_id in self.tables:
            self.restarted.append(table_id)
            restart(self.server, self.api)
