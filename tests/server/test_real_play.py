"""Only real play earns coins, qualifies an account and counts on the leaderboard
(docs/economy.md, "What counts"), attacked on a live server (SQLite and PostgreSQL).

The farm: a 2-seat Conquian free table with ``wins_needed`` 1 and ``max_drawn_deals``
1, both seats refusing or passing every card — the deal is drawn in some forty moves,
the match is over in well under a second, and it used to pay each seat 10 coins and
count as "a finished match of one's own" towards a coin table. The same with one
account against a bot. A bot table left at once (with one move or none), whose bot
then won "for" the account. A rematch only bots played, which counted because the
count was per table. And leaving a finished table, which erased its match from the
player's history and from the qualification count.

Each attack prints what it gets (coins a minute, seconds to qualify); the figures of
docs/hardening.md come from these lines, run before and after the fix.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import re
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from alembic import command
from sqlalchemy.ext.asyncio import create_async_engine

from pgtest import fresh_database
from sahrat.server.auth import hash_password
from sahrat.server.migrate import alembic_config

from .harness import ServerProcess, WireClient, play, play_seat

# The rule as shipped (SAHRAT_COUNTED_MIN_* at their defaults), at machine speed.
RULES = {
    "SAHRAT_BOT_DELAY_SECONDS": "0",
    "SAHRAT_BOT_LEVEL": "simple",
    "SAHRAT_GUESTS_AT_COIN_TABLES": "false",
    "SAHRAT_COIN_TABLE_MIN_MATCHES": "3",
    "SAHRAT_GRACE_SECONDS": "0.5",
}
# Short real matches count here, so that a test shows the one condition it is about
# (finishing in one's seat, the network, the cap, a rematch) with one-deal matches.
SHORT_COUNT = {
    **RULES,
    "SAHRAT_COUNTED_MIN_DEALS": "1",
    "SAHRAT_COUNTED_MIN_TURNS": "1",
    "SAHRAT_COIN_TABLE_MIN_MATCHES": "2",
    "SAHRAT_FREE_TABLE_EARNINGS": "10",
    "SAHRAT_FREE_TABLE_EARNINGS_PER_DAY": "25",
}
FARM = {"wins_needed": 1, "max_drawn_deals": 1, "break_seconds": 0}
ONE_DEAL = {"wins_needed": 1, "break_seconds": 0}
COIN_TABLE = {"game": "conquian", "options": {"stake": 10}}
REFUSAL = {"choose": "refuse", "turned_up": "pass", "force": "decline_force"}

_hosts = itertools.count(1)


@dataclass
class Player:
    http: httpx.AsyncClient
    token: str
    id: int
    address: str

    @property
    def headers(self) -> dict[str, str]:
        # the server trusts X-Forwarded-For from 127.0.0.1 (its test proxy)
        return {"Authorization": f"Bearer {self.token}", "X-Forwarded-For": self.address}

    async def post(self, path: str, body: dict[str, Any] | None = None) -> httpx.Response:
        return await self.http.post(path, json=body or {}, headers=self.headers)

    async def get(self, path: str) -> Any:
        response = await self.http.get(path, headers=self.headers)
        assert response.status_code == 200, response.text
        return response.json()

    async def balance(self) -> int:
        return int((await self.get("/api/me"))["balance"])

    async def history(self) -> list[dict[str, Any]]:
        return list(await self.get("/api/me/matches?limit=100"))

    async def open_table(self, options: dict[str, Any], bots: bool = False) -> int:
        made = await self.post("/api/tables", {"game": "conquian", "options": options})
        assert made.status_code == 201, made.text
        table = int(made.json()["id"])
        if bots:
            started = await self.post(f"/api/tables/{table}/start", {"level": "simple"})
            assert started.status_code == 200, started.text
        return table

    async def join(self, table: int) -> None:
        joined = await self.post(f"/api/tables/{table}/join")
        assert joined.status_code == 200, joined.text

    async def leave(self, table: int) -> None:
        left = await self.post(f"/api/tables/{table}/leave")
        assert left.status_code == 200, left.text

    async def coin_table(self) -> httpx.Response:
        """Try to open a coin table (seated at it): the qualification check."""
        return await self.post("/api/tables", COIN_TABLE)


async def sign_up(http: httpx.AsyncClient, address: str | None = None) -> Player:
    made = await http.post(
        "/api/users", json={"name": f"r{secrets.token_hex(4)}", "password": "long enough"}
    )
    assert made.status_code == 201, made.text
    data = made.json()
    host = next(_hosts)
    own = address or f"198.51.{100 + host // 250}.{host % 250 + 1}"
    return Player(http, data["token"], int(data["user"]["id"]), own)


def so_far(response: httpx.Response) -> int:
    """The counted matches a coin-table refusal says the account has."""
    assert response.status_code == 403, response.text
    detail = response.json()["detail"]
    assert detail["code"] == "coin_table_needs_matches", detail
    found = re.search(r"\((\d+) so far\)", detail["message"])
    assert found, detail
    return int(found.group(1))


async def matches_of(http: httpx.AsyncClient, table: int, count: int = 1) -> list[dict[str, Any]]:
    """The table's finished matches, once it has ``count`` of them (oldest first)."""
    for _ in range(600):
        found = (await http.get(f"/api/tables/{table}/matches")).json()
        if len(found) >= count:
            return sorted(found, key=lambda match: match["id"])
        await asyncio.sleep(0.05)
    raise AssertionError(f"table {table} did not finish {count} matches")


async def refuse_all(client: WireClient) -> int:
    """Play a Conquian seat without ever taking a card: refuse, pass, decline to force,
    until the match is over. Returns the number of moves made."""
    moves = 0
    while True:
        await client.wait_until(
            lambda: client.view is not None and (client.view["match_over"] or client.may_move)
        )
        view = client.view
        assert view is not None
        if view["match_over"]:
            return moves
        reply = await client.command({"type": REFUSAL[view["phase"]]})
        problem = reply["payload"].get("error")
        assert reply["payload"].get("ok") or problem["code"] in ("stale", "round_break"), reply
        moves += 1


async def connect(server: ServerProcess, table: int, player: Player, name: str) -> WireClient:
    return await WireClient.connect(server, table, player.token, name=name)


async def refusal_match(server: ServerProcess, a: Player, b: Player) -> dict[str, Any]:
    """The farm: a and b at a one-deal, one-draw Conquian table, refusing every card."""
    table = await a.open_table(FARM)
    await b.join(table)
    seats = [await connect(server, table, p, f"farm{i}") for i, p in enumerate((a, b))]
    try:
        await asyncio.gather(*(refuse_all(seat) for seat in seats))
    finally:
        for seat in seats:
            await seat.close()
    return (await matches_of(a.http, table))[-1]


async def real_match(
    server: ServerProcess, a: Player, b: Player, game: str, options: dict[str, Any]
) -> dict[str, Any]:
    """a and b play a match to its end, every move their own (the simple player)."""
    made = await a.post("/api/tables", {"game": game, "options": options})
    assert made.status_code == 201, made.text
    table = int(made.json()["id"])
    await b.join(table)
    seats = [await connect(server, table, p, f"seat{i}") for i, p in enumerate((a, b))]
    try:
        await play(game, seats, until=lambda view: False)
    finally:
        for seat in seats:
            await seat.close()
    return (await matches_of(a.http, table))[-1]


async def bot_match(server: ServerProcess, player: Player, options: dict[str, Any]) -> int:
    """The player against a bot, every move of the player's own; the table."""
    table = await player.open_table(options, bots=True)
    client = await connect(server, table, player, "me")
    try:
        await play_seat(client, "conquian")
    finally:
        await client.close()
    await matches_of(player.http, table)
    return table


def per_minute(coins: int, seconds: float) -> float:
    return coins / seconds * 60 if seconds > 0 else 0.0


# --- 1. the coin tap ------------------------------------------------------------------


def test_drawn_refusal_matches_earn_nothing(module_servers: Callable[..., ServerProcess]) -> None:
    server = module_servers(**RULES)

    async def scenario() -> None:
        async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as http:
            a, b = await sign_up(http), await sign_up(http)
            before = await a.balance(), await b.balance()
            started = time.monotonic()
            finished = [await refusal_match(server, a, b) for _ in range(5)]
            seconds = time.monotonic() - started
            gained = await a.balance() - before[0], await b.balance() - before[1]
            print(
                f"\ndrawn-refusal farm, 2 accounts: {len(finished)} matches in {seconds:.2f} s, "
                f"{gained[0]} coins to one account: {per_minute(gained[0], seconds):.0f} coins "
                "a minute per account"
            )
            # What the attack is: drawn matches, nobody's win.
            assert all(match["winner_seat"] is None for match in finished), finished
            assert gained == (0, 0)
            mine = await a.history()
            assert [m["id"] for m in mine] == [m["id"] for m in reversed(finished)]
            assert [m.get("counted") for m in mine] == [False] * len(finished)
            assert not await _ranked(http, a.id, b.id)

    asyncio.run(scenario())


def test_refusing_against_a_bot_earns_nothing(module_servers: Callable[..., ServerProcess]) -> None:
    """One account alone: a bot opposite, one deal, one draw; the account refuses every
    card. The bot may go out (one deal won: too short to count) or the deal is drawn."""
    server = module_servers(**RULES)

    async def scenario() -> None:
        async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as http:
            a = await sign_up(http)
            before = await a.balance()
            started = time.monotonic()
            for _ in range(4):
                table = await a.open_table(FARM, bots=True)
                client = await connect(server, table, a, "farm")
                try:
                    assert await refuse_all(client) > 0  # moves of its own, every match
                finally:
                    await client.close()
                await matches_of(http, table)
            seconds = time.monotonic() - started
            gained = await a.balance() - before
            print(
                f"\ndrawn-refusal farm, 1 account against a bot: 4 matches in {seconds:.2f} s, "
                f"{gained} coins: {per_minute(gained, seconds):.0f} coins a minute"
            )
            assert gained == 0
            assert [m.get("counted") for m in await a.history()] == [False] * 4
            assert so_far(await a.coin_table()) == 0

    asyncio.run(scenario())


def test_a_real_match_pays_each_player(module_servers: Callable[..., ServerProcess]) -> None:
    """Two accounts on two networks play a 3-round Konkan match to its end, every move
    their own: it counts for both (default minimums), pays each 10 coins, and ranks
    them. A match the rules leave undecided, or with a void round, would not count: it
    is played again (such matches are rare)."""
    server = module_servers(**RULES)

    async def scenario() -> None:
        async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as http:
            a, b = await sign_up(http), await sign_up(http)
            options = {"players": 2, "rounds": 3, "break_seconds": 0}
            for _ in range(3):
                before = await a.balance(), await b.balance()
                match = await real_match(server, a, b, "konkan", options)
                paid = await a.balance() - before[0], await b.balance() - before[1]
                counts = await _counts_by_the_rule(http, match, min_played=3, min_turns=10)
                assert paid == ((10, 10) if counts else (0, 0)), (paid, match["score_sheet"])
                mine = (await a.history())[0]
                assert mine["id"] == match["id"] and mine["counted"] is counts
                if counts:
                    break
            else:
                raise AssertionError("three matches in a row did not count")
            board = await http.get("/api/leaderboard", params={"by": "wins", "limit": 100})
            rows = {row["user_id"]: row for row in board.json()}
            assert a.id in rows and b.id in rows
            winner = match["players"][match["winner_seat"]]
            assert rows[winner]["wins"] >= 1

    asyncio.run(scenario())


async def _counts_by_the_rule(
    http: httpx.AsyncClient, match: dict[str, Any], *, min_played: int, min_turns: int
) -> bool:
    """Whether docs/economy.md's rule counts this two-person match (every move of the
    players' own, on two networks, both in their seats at the end): decided, enough
    rounds won, enough turns each. Turns: runs of one seat's moves in the record (a
    round's end splits them further, so this is at most the server's count)."""
    sheet = match["score_sheet"]
    results = sheet.get("deals") or sheet.get("rounds") or []
    won = sum(1 for result in results if result["winner"] is not None)
    record = (await http.get(f"/api/matches/{match['id']}")).json()["record"]
    runs: dict[int, int] = {}
    last = None
    for action in record["actions"]:
        if action["seat"] != last:
            runs[action["seat"]] = runs.get(action["seat"], 0) + 1
            last = action["seat"]
    enough_turns = all(runs.get(seat, 0) >= min_turns for seat in range(len(match["players"])))
    return match["winner_seat"] is not None and won >= min_played and enough_turns


def test_the_daily_cap_stops_a_farmer(module_servers: Callable[..., ServerProcess]) -> None:
    """Earnings of 10 a match, a cap of 25 a day: one account playing real one-deal
    matches against a bot (short matches count on this server) is paid 10, 10, 5, 0."""
    server = module_servers(**SHORT_COUNT)

    async def scenario() -> None:
        async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as http:
            a = await sign_up(http)
            paid: list[int] = []
            started = time.monotonic()
            for _ in range(8):  # a drawn one-deal match counts for nobody: play another
                before = await a.balance()
                table = await bot_match(server, a, ONE_DEAL)
                gained = await a.balance() - before
                (match,) = await matches_of(http, table)
                if match["winner_seat"] is None:
                    assert gained == 0, match
                    continue
                paid.append(gained)
                if len(paid) == 4:
                    break
            seconds = time.monotonic() - started
            print(
                f"\nreal play against a bot under a daily cap of 25: paid {paid} in "
                f"{seconds:.2f} s, {sum(paid)} coins"
            )
            assert paid == [10, 10, 5, 0]
            ledger = await a.get("/api/me/ledger")
            earned = [e["amount"] for e in ledger["entries"] if e["reason"] == "earnings"]
            assert sorted(earned) == [5, 10, 10]  # a capped match has no entry at all

    asyncio.run(scenario())


def test_a_match_against_ones_own_network_counts_for_nobody(
    module_servers: Callable[..., ServerProcess],
) -> None:
    """Two accounts from one network play a real match: it pays and counts for neither.
    The same account against another network's: it does."""
    server = module_servers(**SHORT_COUNT)

    async def scenario() -> None:
        async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as http:
            a = await sign_up(http)
            twin = await sign_up(http, address=a.address)
            other = await sign_up(http)
            for b, counts in ((twin, False), (other, True)):
                for _ in range(3):  # until a decided match (a drawn one counts for nobody)
                    before = await a.balance(), await b.balance()
                    match = await real_match(server, a, b, "conquian", ONE_DEAL)
                    if match["winner_seat"] is not None:
                        break
                assert match["winner_seat"] is not None, "three drawn matches in a row"
                paid = await a.balance() - before[0], await b.balance() - before[1]
                assert paid == ((10, 10) if counts else (0, 0)), b
                assert [m["counted"] for m in (await a.history())[:1]] == [counts]
                assert (await b.history())[0]["counted"] is counts

    asyncio.run(scenario())


# --- 2. qualifying for a coin table ---------------------------------------------------------


def test_drawn_refusal_matches_do_not_qualify_for_a_coin_table(
    module_servers: Callable[..., ServerProcess],
) -> None:
    server = module_servers(**RULES)  # a coin table asks for 3 counted matches

    async def scenario() -> None:
        async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as http:
            a, b = await sign_up(http), await sign_up(http)
            started = time.monotonic()
            assert so_far(await a.coin_table()) == 0
            counts: list[int | str] = []
            for played in range(1, 4):
                await refusal_match(server, a, b)
                attempt = await a.coin_table()
                if attempt.status_code == 201:
                    counts.append("qualified")
                    print(
                        f"\na fresh account qualified for coin tables with {played} drawn-"
                        f"refusal matches in {time.monotonic() - started:.2f} s"
                    )
                    break
                counts.append(so_far(attempt))
            else:
                print(
                    f"\nnot qualified after 3 drawn-refusal matches "
                    f"({time.monotonic() - started:.2f} s): still coin_table_needs_matches"
                )
            assert counts == [0, 0, 0]

    asyncio.run(scenario())


# --- 3. a bot's win is the bot's -------------------------------------------------------------


def test_a_seat_left_to_a_bot_wins_and_earns_nothing(
    module_servers: Callable[..., ServerProcess],
) -> None:
    """An account leaves its seat to a bot at once, three ways: after one move it leaves
    a match against another person (REST leave: a bot plays its seat, the other person
    plays on); after one move, or none, it closes its socket at a bot table (the grace
    period ends and a bot plays the hand to the end). Short matches count on this
    server, so only who finished in the seat matters: none of these matches is the
    account's — no coins, no win, no rank, no qualification."""
    server = module_servers(**SHORT_COUNT)

    async def one_move(client: WireClient) -> None:
        await client.wait_until(lambda: client.may_move)
        assert client.view is not None
        reply = await client.command({"type": REFUSAL.get(client.view["phase"], "refuse")})
        assert reply["payload"].get("ok"), reply

    async def scenario() -> None:
        async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as http:
            a, b = await sign_up(http), await sign_up(http)
            before = await a.balance()
            tables = []
            # Against a person: one move, then leave; the other plays the match out.
            table = await a.open_table(ONE_DEAL)
            await b.join(table)
            mine, theirs = (
                await connect(server, table, a, "a"),
                await connect(server, table, b, "b"),
            )
            playing = asyncio.create_task(play_seat(theirs, "conquian"))
            await one_move(mine)
            await a.leave(table)
            await mine.close()
            await playing
            await theirs.close()
            tables.append(table)
            # At bot tables: one move, or none, then the socket closes for good.
            for moves in (1, 0):
                table = await a.open_table(ONE_DEAL, bots=True)
                client = await connect(server, table, a, f"{moves} move")
                if moves:
                    await one_move(client)
                await client.close()
                tables.append(table)
            for table in tables:
                await matches_of(http, table)
            assert await a.balance() == before
            assert not await _ranked(http, a.id)
            assert so_far(await a.coin_table()) == 0
            history = await a.history()
            assert sorted(m["table_id"] for m in history) == sorted(tables)
            assert [m["counted"] for m in history] == [False] * 3

    asyncio.run(scenario())


async def _ranked(http: httpx.AsyncClient, *user_ids: int) -> set[int]:
    """Which of these users the leaderboard ranks (by coins or by wins)."""
    found: set[int] = set()
    for by in ("coins", "wins"):
        board = await http.get("/api/leaderboard", params={"by": by, "limit": 100})
        found |= {row["user_id"] for row in board.json()} & set(user_ids)
    return found


# --- 7. a rematch bots played ----------------------------------------------------------------


def test_a_rematch_only_bots_played_is_not_the_players(
    module_servers: Callable[..., ServerProcess],
) -> None:
    """An account plays a match against a bot, asks for a rematch and walks away (its
    socket closes; after the grace period a bot plays its hand): the bots play the whole
    rematch. The first match counts, the rematch does not (a coin table asks for 2
    here), and the rematch's win is not the account's."""
    server = module_servers(**SHORT_COUNT)

    async def scenario() -> None:
        async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as http:
            a = await sign_up(http)
            for _ in range(3):  # a decided first match (a drawn one counts for nobody)
                table = await a.open_table(ONE_DEAL, bots=True)
                client = await connect(server, table, a, "me")
                await play_seat(client, "conquian")
                (first,) = await matches_of(http, table)
                if first["winner_seat"] is not None:
                    break
                await client.close()
            assert first["winner_seat"] is not None, "three drawn matches in a row"
            assert so_far(await a.coin_table()) == 1
            asked = await client.send({"type": "rematch"})
            await client.wait_for(
                lambda m: m["type"] == "snapshot" and m["payload"]["table"]["status"] == "playing",
                after=asked,
            )
            await client.close()
            first, second = await matches_of(http, table, 2)
            assert second["players"] == first["players"]  # a's seat, played by a bot
            assert so_far(await a.coin_table()) == 1
            mine = {m["id"]: m for m in await a.history()}
            assert mine[first["id"]]["counted"] is True
            assert mine[second["id"]]["counted"] is False
            board = await http.get("/api/leaderboard", params={"by": "wins", "limit": 100})
            row = next(r for r in board.json() if r["user_id"] == a.id)
            assert row["wins"] == int(mine[first["id"]]["won"])

    asyncio.run(scenario())


# --- 10. leaving a finished table --------------------------------------------------------------


def test_leaving_a_finished_table_keeps_its_match(
    module_servers: Callable[..., ServerProcess],
) -> None:
    server = module_servers(**SHORT_COUNT)

    async def scenario() -> None:
        async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as http:
            a, b = await sign_up(http), await sign_up(http)
            for _ in range(3):  # a decided match (a drawn one counts for nobody)
                match = await real_match(server, a, b, "conquian", ONE_DEAL)
                if match["winner_seat"] is not None:
                    break
            assert match["winner_seat"] is not None, "three drawn matches in a row"
            history = await a.history(), await b.history()
            assert so_far(await a.coin_table()) == 1
            await a.leave(match["table_id"])
            await b.leave(match["table_id"])
            assert so_far(await a.coin_table()) == 1
            assert (await a.history(), await b.history()) == history  # nothing changed
            assert history[0][0]["id"] == match["id"] and history[0][0]["counted"] is True

    asyncio.run(scenario())


# --- the matches finished before match_players -------------------------------------------------


@contextlib.contextmanager
def _empty_database(kind: str, tmp_path: Path) -> Iterator[str]:
    if kind == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'old.db'}"
    else:
        with fresh_database("sahrat_backfill", "the match_players migration test") as url:
            yield url


async def _old_matches(url: str, names: tuple[str, str]) -> None:
    """A database as the server left it before ``match_players``: two accounts; a
    table where the first made a move of its own and the second's seat only the timer
    played (two finished matches); a table the second left once finished (its seat row
    gone) after a move of its own there (one match)."""
    users = sa.table(
        "users",
        *map(sa.column, ("id", "name", "name_key", "password_hash", "guest", "is_admin")),
        sa.column("suspended"),
    )
    game_tables = sa.table(
        "game_tables", *map(sa.column, ("id", "game", "private", "creator_id", "status", "seq"))
    )
    game_tables.append_column(sa.column("options", sa.JSON))
    seats = sa.table("seats", *map(sa.column, ("table_id", "seat", "user_id", "left", "address")))
    log = sa.table("log_entries", *map(sa.column, ("table_id", "seq", "kind", "seat", "client_id")))
    log.append_column(sa.column("data", sa.JSON))
    matches = sa.table("matches", *map(sa.column, ("table_id", "game", "winner_seat")))
    for name in ("players", "score_sheet", "record"):
        matches.append_column(sa.column(name, sa.JSON))
    secret = hash_password("long enough")
    engine = create_async_engine(url)
    async with engine.begin() as db:
        a, b = [
            (
                await db.execute(
                    users.insert()
                    .values(
                        name=name,
                        name_key=name.casefold(),
                        password_hash=secret,
                        guest=False,
                        is_admin=False,
                        suspended=False,
                    )
                    .returning(users.c.id)
                )
            ).scalar_one()
            for name in names
        ]
        kept, left = [
            (
                await db.execute(
                    game_tables.insert()
                    .values(
                        game="conquian",
                        options={"wins_needed": 1},
                        private=False,
                        creator_id=a,
                        status="finished",
                        seq=3,
                    )
                    .returning(game_tables.c.id)
                )
            ).scalar_one()
            for _ in range(2)
        ]
        home, away = "198.51.100.7", "203.0.113.9"
        await db.execute(
            seats.insert(),
            [
                {"table_id": table, "seat": seat, "user_id": user, "left": False, "address": where}
                for table, seat, user, where in (
                    (kept, 0, a, home),
                    (kept, 1, b, away),
                    (left, 0, a, home),
                )
            ],
        )
        start = {"seed": "old", "seats": [a, b]}
        steps = [  # table, seq, seat, client id (a command of the seat's player), by
            (kept, 2, 0, "a-1", "player"),
            (kept, 3, 1, None, "timer"),
            (left, 2, 1, "b-1", "player"),
        ]
        await db.execute(
            log.insert(),
            [
                {
                    "table_id": t,
                    "seq": 1,
                    "kind": "start",
                    "seat": None,
                    "client_id": None,
                    "data": start,
                }
                for t in (kept, left)
            ]
            + [
                {
                    "table_id": t,
                    "seq": seq,
                    "kind": "action",
                    "seat": seat,
                    "client_id": cid,
                    "data": {"action": {"seat": seat, "type": "refuse"}, "by": by},
                }
                for t, seq, seat, cid, by in steps
            ],
        )
        sheet = {"deals": [], "totals": [1, 0], "over": True, "winner": 0, "wins_needed": 1}
        row = {"game": "conquian", "winner_seat": 0, "players": [a, b], "score_sheet": sheet}
        await db.execute(
            matches.insert(),
            [{**row, "table_id": table, "record": {}} for table in (kept, kept, left)],
        )
    await engine.dispose()


async def _after_migration(server: ServerProcess, names: tuple[str, str]) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as http:
        players = []
        for name in names:
            login = await http.post("/api/login", json={"name": name, "password": "long enough"})
            assert login.status_code == 200, login.text
            data = login.json()
            players.append(Player(http, data["token"], int(data["user"]["id"]), "192.0.2.1"))
        a, b = players
        mine, theirs = await a.history(), await b.history()
        # Every match each sat in, newest first; counted as the old rule counted it.
        assert [(m["counted"], m["won"], m["place"]) for m in mine] == [
            (False, True, 1),
            (True, True, 1),
            (True, True, 1),
        ]
        assert [(m["counted"], m["won"], m["place"]) for m in theirs] == [
            (True, False, 2),  # its seat row is gone: the match is still its
            (False, False, 2),
            (False, False, 2),
        ]
        assert [m["table_id"] for m in mine] == [m["table_id"] for m in theirs]
        # Qualified before, still qualified (then refused for its coins: it has none).
        refused = await a.coin_table()
        assert refused.json()["detail"]["code"] == "not_enough_coins", refused.text
        assert so_far(await b.coin_table()) == 1
        board = await http.get("/api/leaderboard", params={"by": "wins", "limit": 100})
        wins = {row["user_id"]: row["wins"] for row in board.json()}
        assert wins == {a.id: 2, b.id: 0}


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_the_migration_keeps_what_older_matches_counted(kind: str, tmp_path: Path) -> None:
    """Matches finished before ``match_players`` get their players' rows, counted by the
    rule they were played under (a move of the seat's own at that table): accounts that
    qualified for coin tables before still do, and a table left since keeps its match."""
    names = (f"olda{secrets.token_hex(3)}", f"oldb{secrets.token_hex(3)}")
    with _empty_database(kind, tmp_path) as url:
        command.upgrade(alembic_config(url), "0006")
        asyncio.run(_old_matches(url, names))
        server = ServerProcess(url, tmp_path, {"SAHRAT_COIN_TABLE_MIN_MATCHES": "2"}).start()
        try:
            asyncio.run(_after_migration(server, names))
        finally:
            server.stop()
        rows = asyncio.run(_match_players(url))
        # own turns were never recorded; the network is the seat row's, where it remains
        assert [row[:3] for row in rows] == [
            (0, True, "198.51.100.7"),
            (0, True, "203.0.113.9"),
        ] * 2 + [
            (0, True, "198.51.100.7"),
            (0, True, None),
        ]


async def _match_players(url: str) -> list[tuple[Any, ...]]:
    engine = create_async_engine(url)
    try:
        async with engine.connect() as db:
            found = await db.execute(
                sa.text(
                    "SELECT own_turns, in_seat_at_end, network, match_id, seat "
                    "FROM match_players ORDER BY match_id, seat"
                )
            )
            return [
                (turns, bool(seated), network, *rest) for turns, seated, network, *rest in found
            ]
    finally:
        await engine.dispose()
