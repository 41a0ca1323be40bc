"""Rated play on a real server (SQLite, then PostgreSQL), with real accounts over the
WebSocket (docs/rating.md): an admin's rated table, people and a bot playing whole
one-round matches. Every rating stored and shown is what openskill's own Plackett–Luce
``rate()`` gives for the places in the match's score sheet, each person rated against
the opponents that count for them (docs/rating.md, "What a match is rated against"):
bots, and accounts that played the match and have not met them too often lately; a
player who leaves, or whose seat the timer forfeits, is last and gets a cool-down from
rated play."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from openskill.models import PlackettLuce

from sahrat import wire_schemas

from .harness import Api, ServerProcess, WireClient, auth_headers, make_admin, play_seat

# One-round matches are really played here, and a seat with one turn of its own counts
# (the defaults ask for 3 rounds and 10 turns: test_rating_farming.py).
PLAYED_ENV = {"SAHRAT_COUNTED_MIN_ROUNDS": "1", "SAHRAT_COUNTED_MIN_TURNS": "1"}
MODULE_SERVER_ENV = {"SAHRAT_BOT_DELAY_SECONDS": "0", **PLAYED_ENV}
# the timer plays an idle seat's turn after 2 s, and one such turn forfeits the seat
FORFEIT_ENV = {
    **MODULE_SERVER_ENV,
    "SAHRAT_TURN_SECONDS_OVERRIDE": "2",
    "SAHRAT_TIMER_TURNS_TO_FORFEIT": "1",
}
ONE_ROUND = {"rounds": 1}
MATCH_SECONDS = 120.0


def expected_after(ranks: list[int], bots: set[int]) -> dict[int, tuple[int, bool]]:
    """By seat, the shown number and provisional flag openskill gives new players for
    ``ranks`` (bots at a new player's rating: docs/rating.md): the mean scaled to
    1500 + 40 (mu - 25), provisional while sigma > 6."""
    model = PlackettLuce()
    teams = [[model.rating()] for _ in ranks]
    rated = model.rate(teams, ranks=ranks)
    return {
        seat: (round(1500 + 40 * (team[0].mu - 25)), team[0].sigma > 6.0)
        for seat, team in enumerate(rated)
        if seat not in bots
    }


def rated_against(ranks: list[int], me: int, field: list[int]) -> tuple[int, bool]:
    """What openskill gives new player ``me`` rated against the seats ``field`` only
    (everyone new, bots too), with their ranks in the match."""
    model = PlackettLuce()
    seats = [me, *field]
    rated = model.rate([[model.rating()] for _ in seats], ranks=[ranks[s] for s in seats])
    return round(1500 + 40 * (rated[0][0].mu - 25)), rated[0][0].sigma > 6.0


async def login(api: Api, admin: tuple[str, str]) -> str:
    response = await api.http.post("/api/login", json={"name": admin[0], "password": admin[1]})
    assert response.status_code == 200, response.text
    return str(response.json()["token"])


async def rated_table(api: Api, boss: str, players: int) -> dict[str, Any]:
    response = await api.http.post(
        "/api/admin/tables",
        json={"game": "konkan", "options": {"players": players, **ONE_ROUND}, "rated": True},
        headers=auth_headers(boss),
    )
    assert response.status_code == 201, response.text
    info = dict(response.json())
    assert info["rated"] is True and info["coin_table"] is False
    return info


async def join(api: Api, token: str, table_id: int) -> dict[str, Any]:
    response = await api.http.post(
        f"/api/tables/{table_id}/join", json={}, headers=auth_headers(token)
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


async def start_with_bot(api: Api, boss: str, table_id: int) -> None:
    response = await api.http.post(
        f"/api/tables/{table_id}/start",
        json={"bots": True, "level": "simple"},
        headers=auth_headers(boss),
    )
    assert response.status_code == 200, response.text


async def finished_match(api: Api, table_id: int) -> dict[str, Any]:
    deadline = asyncio.get_running_loop().time() + MATCH_SECONDS
    while asyncio.get_running_loop().time() < deadline:
        matches = await api.get(f"/api/tables/{table_id}/matches")
        if matches:
            return dict(matches[0])
        await asyncio.sleep(0.2)
    raise AssertionError(f"table {table_id}: no finished match")


def engine_places(match: dict[str, Any]) -> list[int]:
    places = match["score_sheet"]["places"]
    assert all(isinstance(place, int) for place in places), places
    return list(places)


def competition(keys: list[tuple[int, int]]) -> list[int]:
    """1 + the seats strictly ahead: a shared place for equal keys."""
    return [1 + sum(other < key for other in keys) for key in keys]


async def ratings_message(client: WireClient) -> dict[str, Any]:
    message = await client.wait_for(lambda m: m["type"] == "ratings", timeout=MATCH_SECONDS)
    return dict(message["payload"])


async def check_stored(
    api: Api, user_id: int, token: str, match_id: int, shown: tuple[int, bool]
) -> None:
    """The player's public ratings, their /api/me and the table's seats agree."""
    profile = await api.get(f"/api/users/{user_id}/ratings")
    assert [pool["pool"] for pool in profile["pools"]] == ["konkan51"]
    pool = profile["pools"][0]
    assert (pool["rating"], pool["provisional"], pool["games"]) == (*shown, 1)
    assert [(p["match_id"], p["rating"], p["provisional"]) for p in pool["history"]] == [
        (match_id, *shown)
    ]
    me = await api.get("/api/me", token)
    assert me["ratings"] == {"konkan51": {"rating": shown[0], "provisional": shown[1], "games": 1}}


async def seat_ratings_shown(client: WireClient, want: dict[int, tuple[int, bool]]) -> None:
    """The table's info shows the new ratings once its (merged) message comes."""

    def shown() -> bool:
        tables = [m for m in client.messages if m["type"] == "table"]
        if not tables:
            return False
        seats = tables[-1]["payload"]["seats"]
        return all(
            seats[seat]["rating"] == {"value": value, "provisional": provisional}
            for seat, (value, provisional) in want.items()
        )

    await client.wait_until(shown, timeout=10)


# --- a whole match ---------------------------------------------------------------------------


async def _whole_match(server: ServerProcess, admin: tuple[str, str]) -> None:
    api = Api(server)
    try:
        boss = await login(api, admin)
        # a registered account: it counts as an opponent for the others (a guest would not)
        guest, guest_user = await api.account()
        # only an admin opens a rated table: players get rated play from the queue
        refused = await api.http.post(
            "/api/tables",
            json={"game": "konkan", "options": {}, "rated": True},
            headers=auth_headers(guest),
        )
        assert refused.status_code == 403
        assert refused.json()["detail"]["code"] == "rated_by_queue"

        info = await rated_table(api, boss, players=3)
        table_id = int(info["id"])
        info = await join(api, boss, table_id)
        info = await join(api, guest, table_id)
        new = {"value": 1500, "provisional": True}
        assert [seat["rating"] for seat in info["seats"]] == [new, new, None]  # an empty seat
        await start_with_bot(api, boss, table_id)
        info = await api.get(f"/api/tables/{table_id}")
        bot_seat = {"value": 1500, "provisional": False}  # the bots' fixed rating
        assert [seat["rating"] for seat in info["seats"]] == [new, new, bot_seat]
        me = await WireClient.connect(server, table_id, boss, name="boss")
        other = await WireClient.connect(server, table_id, guest, name="guest")
        assert (me.seat, other.seat) == (0, 1)
        await asyncio.gather(play_seat(me, "konkan"), play_seat(other, "konkan"))

        match = await finished_match(api, table_id)
        # the engine's places, as they are (a shared place is a tie); the bot takes part
        want = expected_after(engine_places(match), bots={2})
        sent = [await ratings_message(me), await ratings_message(other)]
        assert sent[0] == sent[1]
        # a page opened after the end (a reload) is told the same changes
        again = await WireClient.connect(server, table_id, guest, name="again")
        assert await ratings_message(again) == sent[0]
        await again.close()
        assert sent[0]["pool"] == "konkan51"
        users = [seat["user_id"] for seat in info["seats"]]
        assert [
            (c["seat"], c["user_id"], c["before"], c["after"], c["provisional"], c["unrated"])
            for c in sent[0]["changes"]
        ] == [(seat, users[seat], 1500, *want[seat], None) for seat in (0, 1)]
        admin_id = users[0]
        await check_stored(api, admin_id, boss, int(match["id"]), want[0])
        await check_stored(api, int(guest_user["id"]), guest, int(match["id"]), want[1])
        await seat_ratings_shown(me, want)
        # every message of the rated table is one the published schema describes
        schema = wire_schemas.adapter("KonkanServerMessage")
        for message in me.messages:
            schema.validate_json(json.dumps(message))

        # no rematch at a rated table: the client offers a new rated game instead
        index = len(me.messages)
        await me.send({"type": "rematch"})
        error = await me.wait_for(lambda m: m["type"] == "error", after=index)
        assert error["payload"]["code"] == "rated_no_rematch"
        assert (await api.get(f"/api/tables/{table_id}"))["rematch"] == []
        # a match played to the end is no leave
        assert (await api.get("/api/me", guest))["cooldown"] is None
        await me.close()
        await other.close()
    finally:
        await api.aclose()


def test_a_rated_match_moves_ratings_as_openskill_does(module_server: ServerProcess) -> None:
    admin = make_admin(module_server.database_url)
    asyncio.run(_whole_match(module_server, admin))


# --- a leaver --------------------------------------------------------------------------------


async def _leaver(server: ServerProcess, admin: tuple[str, str]) -> None:
    api = Api(server)
    try:
        boss = await login(api, admin)
        guest, guest_user = await api.guest()
        guest_id = int(guest_user["id"])
        table_id = int((await rated_table(api, boss, players=3))["id"])
        await join(api, boss, table_id)
        await join(api, guest, table_id)
        await start_with_bot(api, boss, table_id)
        me = await WireClient.connect(server, table_id, boss, name="boss")
        left = await api.http.post(f"/api/tables/{table_id}/leave", headers=auth_headers(guest))
        assert left.status_code == 200, left.text
        assert left.json()["seats"][1]["left"] is True

        # barred from rated play at once (5 minutes: SAHRAT_RATED_COOLDOWN_MINUTES)
        cooldown = (await api.get("/api/me", guest))["cooldown"]
        assert cooldown is not None and 0 < cooldown["seconds_left"] <= 300, cooldown
        other_table = int((await rated_table(api, boss, players=2))["id"])
        barred = await api.http.post(
            f"/api/tables/{other_table}/join", json={}, headers=auth_headers(guest)
        )
        assert barred.status_code == 403, barred.text
        assert barred.json()["detail"]["code"] == "rated_cooldown"
        assert "minutes" in barred.json()["detail"]["message"]

        await play_seat(me, "konkan")  # the bot plays the leaver's seat meanwhile
        match = await finished_match(api, table_id)
        places = engine_places(match)
        # the leaver is last whatever the bot in their seat did; the others by the engine
        ranks = competition([(0, places[0]), (1, 0), (0, places[2])])
        assert ranks[1] == 3
        # the leaver made no move: they are rated (last) against the others, but do not
        # count for them; the admin is rated against the bot alone
        changes = (await ratings_message(me))["changes"]
        assert [(c["user_id"], c["after"], c["unrated"]) for c in changes] == [
            (match["players"][0], rated_against(ranks, 0, [2])[0], None),
            (guest_id, rated_against(ranks, 1, [0, 2])[0], None),
        ]

        # the admin's view: the place the update used, the leave, the cool-down
        seen = await api.get(f"/api/admin/players/{guest_id}/ratings", boss)
        assert [(h["match_id"], h["place"], h["reason"]) for h in seen["history"]] == [
            (match["id"], 3, "match")
        ]
        assert [(leave["table_id"], leave["reason"]) for leave in seen["leaves"]] == [
            (table_id, "left")
        ]
        assert seen["cooldown"]["leaves"] == 1 and seen["cooldown"]["seconds_left"] > 0
        lifted = await api.http.delete(
            f"/api/admin/players/{guest_id}/cooldown", headers=auth_headers(boss)
        )
        assert lifted.status_code == 200, lifted.text
        assert lifted.json()["until"] is None and lifted.json()["seconds_left"] == 0
        assert lifted.json()["leaves"] == 1  # the record stays: a next leave escalates
        assert (await api.get("/api/me", guest))["cooldown"] is None
        await join(api, guest, other_table)  # free to play rated again
        await me.close()
    finally:
        await api.aclose()


def test_a_leaver_is_last_and_gets_a_cool_down(module_server: ServerProcess) -> None:
    admin = make_admin(module_server.database_url)
    asyncio.run(_leaver(module_server, admin))


# --- a seat the timer forfeits ---------------------------------------------------------------


async def _forfeited(server: ServerProcess, admin: tuple[str, str]) -> None:
    api = Api(server)
    try:
        boss = await login(api, admin)
        guest, guest_user = await api.guest()
        guest_id = int(guest_user["id"])
        table_id = int((await rated_table(api, boss, players=2))["id"])
        await join(api, boss, table_id)
        await join(api, guest, table_id)  # the table is full: the match starts
        me = await WireClient.connect(server, table_id, boss, name="boss")
        # the guest is there but never moves: the timer plays their turn, which forfeits
        # the seat (a bot plays it on); a dropped connection would not be a forfeit
        idle = await WireClient.connect(server, table_id, guest, name="idle")
        await play_seat(me, "konkan", timeout=MATCH_SECONDS)
        match = await finished_match(api, table_id)
        want = expected_after([1, 2], bots=set())  # the forfeited seat last
        changes = (await ratings_message(me))["changes"]
        # the forfeited guest never moved: rated (last) against the admin, but nobody
        # the admin was rated against: their rating stays
        assert [(c["seat"], c["user_id"], c["after"], c["unrated"]) for c in changes] == [
            (0, match["players"][0], 1500, "no_opponent"),
            (1, guest_id, want[1][0], None),
        ]
        seen = await api.get(f"/api/admin/players/{guest_id}/cooldown", boss)
        assert seen["leaves"] == 1 and seen["seconds_left"] > 0, seen
        leaves = (await api.get(f"/api/admin/players/{guest_id}/ratings", boss))["leaves"]
        assert [leave["reason"] for leave in leaves] == ["forfeit"]
        assert (await api.get("/api/me", boss))["cooldown"] is None
        await me.close()
        await idle.close()
    finally:
        await api.aclose()


def test_a_timer_forfeit_is_a_leave(module_servers: Callable[..., ServerProcess]) -> None:
    server = module_servers(**FORFEIT_ENV)
    admin = make_admin(server.database_url)
    asyncio.run(_forfeited(server, admin))


# --- a restart in the middle -----------------------------------------------------------------


async def _restarted(server: ServerProcess, admin: tuple[str, str]) -> None:
    """A leave, then the server is killed and restarted mid-match: the restored table is
    rated still, and the match's end moves each rating once, the leave counted once."""
    api = Api(server)
    try:
        boss = await login(api, admin)
        guest, guest_user = await api.guest()
        guest_id = int(guest_user["id"])
        table_id = int((await rated_table(api, boss, players=3))["id"])
        await join(api, boss, table_id)
        await join(api, guest, table_id)
        await start_with_bot(api, boss, table_id)
        left = await api.http.post(f"/api/tables/{table_id}/leave", headers=auth_headers(guest))
        assert left.status_code == 200, left.text
    finally:
        await api.aclose()
    server.kill()
    server.start()
    api = Api(server)
    try:
        info = await api.get(f"/api/tables/{table_id}")
        assert info["rated"] is True and info["status"] == "playing"
        assert info["seats"][1]["left"] is True
        assert info["seats"][0]["rating"] == {"value": 1500, "provisional": True}
        me = await WireClient.connect(server, table_id, boss, name="boss")
        await play_seat(me, "konkan")
        match = await finished_match(api, table_id)
        places = engine_places(match)
        ranks = competition([(0, places[0]), (1, 0), (0, places[2])])
        changes = (await ratings_message(me))["changes"]
        assert [c["after"] for c in changes] == [
            rated_against(ranks, 0, [2])[0],  # the leaver made no move: not counted
            rated_against(ranks, 1, [0, 2])[0],
        ]
        seen = await api.get(f"/api/admin/players/{guest_id}/ratings", boss)
        assert [(h["match_id"], h["place"]) for h in seen["history"]] == [(match["id"], 3)]
        assert seen["pools"][0]["games"] == 1
        assert seen["cooldown"]["leaves"] == 1 and len(seen["leaves"]) == 1
        await me.close()
    finally:
        await api.aclose()
    server.kill()  # and once more after the end: nothing is replayed into the ratings
    server.start()
    api = Api(server)
    try:
        profile = await api.get(f"/api/users/{guest_id}/ratings")
        assert [len(pool["history"]) for pool in profile["pools"]] == [1]
        assert profile["pools"][0]["games"] == 1
    finally:
        await api.aclose()


def test_a_restart_moves_ratings_once(start_server: Callable[..., ServerProcess]) -> None:
    server = start_server(**MODULE_SERVER_ENV)
    admin = make_admin(server.database_url)
    asyncio.run(_restarted(server, admin))
