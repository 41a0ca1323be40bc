"""The leaderboard by coins and by wins, and my match history, on a live server.

The leaderboard ranks registered accounts with a counted match (docs/economy.md) —
not guests, not an account whose seat a bot played — by coins (the default) or by
counted matches won (first place), and the two orders differ when coins and wins do.
``GET /api/me/matches`` gives each match my place, my total, every seat's total and
the players' names, newest first.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

from sqlalchemy.ext.asyncio import create_async_engine

from sahrat.store import ledger
from sahrat.store.db import make_sessions

from .harness import Api, ServerProcess, WireClient, auth_headers, play_seat
from .test_rename import finished, play_a_match, sign_up

MODULE_SERVER_ENV = {
    "SAHRAT_BOT_DELAY_SECONDS": "0",
    "SAHRAT_BOT_LEVEL": "simple",
    # one-deal (and one-round) matches count here (the minimums are test_real_play.py's)
    "SAHRAT_COUNTED_MIN_DEALS": "1",
    "SAHRAT_COUNTED_MIN_ROUNDS": "1",
    "SAHRAT_COUNTED_MIN_TURNS": "1",
    "SAHRAT_GRACE_SECONDS": "0.5",  # a socket closed for good: a bot plays on soon
}
BONUS = 5000


async def grant(database_url: str, user_id: int, amount: int) -> None:
    """The house gives a player coins, in the database (as earnings would)."""
    engine = create_async_engine(database_url)
    try:
        async with make_sessions(engine)() as session, session.begin():
            key = f"test-bonus:{user_id}:{secrets.token_hex(4)}"
            assert await ledger.grant(session, user_id, amount, key, "earnings")
    finally:
        await engine.dispose()


def ordered(board: list[dict[str, Any]], by: str) -> bool:
    other = "wins" if by == "coins" else "coins"
    keys = [(-row[by], -row[other]) for row in board]
    return keys == sorted(keys)


def test_the_leaderboard_ranks_players_by_coins_or_by_wins(module_server: ServerProcess) -> None:
    async def scenario() -> None:
        api = Api(module_server)
        http = api.http
        try:
            (a, user_a), (b, user_b) = await sign_up(http), await sign_up(http)
            idle, user_idle = await sign_up(http)
            guest, user_guest = await api.guest()
            match = await play_a_match(module_server, http, a, b)
            assert match["winner_seat"] is not None  # one deal, one winner
            winner = match["players"][match["winner_seat"]]
            loser = user_b["id"] if winner == user_a["id"] else user_a["id"]
            # A guest plays a match of its own (against a third account: a or b winning it
            # would tie their wins); the idle account lets a bot play its seat.
            third, _ = await sign_up(http)
            await play_a_match(module_server, http, guest, third)
            table = (await api.create_table(idle, "conquian", {"wins_needed": 1}))["id"]
            started = await http.post(
                f"/api/tables/{table}/start", json={"level": "simple"}, headers=auth_headers(idle)
            )
            assert started.status_code == 200, started.text
            # its socket opens and closes for good: after the grace period a bot plays on
            away = await WireClient.connect(module_server, table, idle, name="idle")
            await away.close()
            await finished(http, table)
            # The loser has more coins than the winner: the two boards disagree.
            await grant(module_server.database_url, loser, BONUS)

            boards = {
                by: await api.get(f"/api/leaderboard?by={by}&limit=100") for by in ("coins", "wins")
            }
            assert await api.get("/api/leaderboard?limit=100") == boards["coins"]  # the default
            for by, board in boards.items():
                assert ordered(board, by), (by, board)
                ids = [row["user_id"] for row in board]
                assert user_a["id"] in ids and user_b["id"] in ids, by
                assert user_idle["id"] not in ids and user_guest["id"] not in ids, by
            coins_ids = [row["user_id"] for row in boards["coins"]]
            wins_ids = [row["user_id"] for row in boards["wins"]]
            assert coins_ids.index(loser) < coins_ids.index(winner)
            assert wins_ids.index(winner) < wins_ids.index(loser)
            # Each row's figures are the account's own: its balance, its first places.
            for token, user in ((a, user_a), (b, user_b)):
                row = next(r for r in boards["wins"] if r["user_id"] == user["id"])
                mine = (await http.get("/api/me", headers=auth_headers(token))).json()
                history = await api.get("/api/me/matches", token)
                assert row["coins"] == mine["balance"]
                assert row["wins"] == sum(m["won"] for m in history)
                assert row["wins"] == sum(m["place"] == 1 for m in history)
            assert next(r for r in boards["wins"] if r["user_id"] == loser)["coins"] > BONUS
            bad = await http.get("/api/leaderboard", params={"by": "luck"})
            assert bad.status_code == 422
        finally:
            await api.aclose()

    asyncio.run(scenario())


def test_my_history_gives_place_totals_and_names(module_server: ServerProcess) -> None:
    async def scenario() -> None:
        api = Api(module_server)
        http = api.http
        try:
            (a, user_a), (b, user_b) = await sign_up(http), await sign_up(http)
            first = await play_a_match(module_server, http, a, b)
            # Then a Konkan round against a bot: a's seat played by a, the other by the bot.
            table = await api.create_table(a, "konkan", {"players": 2, "rounds": 1})
            started = await http.post(
                f"/api/tables/{table['id']}/start",
                json={"level": "simple"},
                headers=auth_headers(a),
            )
            assert started.status_code == 200, started.text
            client = await WireClient.connect(module_server, table["id"], a, name="a")
            try:
                await play_seat(client, "konkan")
            finally:
                await client.close()
            second = await finished(http, table["id"])

            mine = await api.get("/api/me/matches", a)
            assert [m["id"] for m in mine] == [second["id"], first["id"]]  # newest first
            konkan, conquian = mine
            sheet = second["score_sheet"]
            seat = second["players"].index(user_a["id"])
            assert konkan["seat"] == seat and konkan["game"] == "konkan"
            assert konkan["totals"] == sheet["totals"]
            assert konkan["total"] == sheet["totals"][seat]
            assert konkan["place"] == sheet["places"][seat]
            assert konkan["won"] == (konkan["place"] == 1 and second["winner_seat"] == seat)
            assert konkan["names"][seat] == user_a["name"]
            assert konkan["names"][1 - seat] is None  # the bot's seat
            # Conquian: the place by deals won, the same from both sides.
            theirs = (await api.get("/api/me/matches", b))[0]
            assert theirs["id"] == conquian["id"] == first["id"]
            assert {conquian["place"], theirs["place"]} == {1, 2}
            assert conquian["won"] == (conquian["place"] == 1)
            assert conquian["totals"] == theirs["totals"] == first["score_sheet"]["totals"]
            names = {user_a["id"]: user_a["name"], user_b["id"]: user_b["name"]}
            assert conquian["names"] == [names[uid] for uid in first["players"]]
            assert conquian["finished_at"] and conquian["table_id"] == first["table_id"]
            limited = await api.get("/api/me/matches?limit=1", a)
            assert [m["id"] for m in limited] == [second["id"]]
            assert (await http.get("/api/me/matches")).status_code == 401
        finally:
            await api.aclose()

    asyncio.run(scenario())
