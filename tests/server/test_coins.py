"""Coin tables on a real server (SQLite and PostgreSQL): an admin made with ``sahrat
admin create`` opens a 3-player coin table over REST, three players play it to the end
over WebSockets, the pot is paid 70/30 in the match's own transaction, and the ledger
balances. Also: a join without the stake is refused, admin endpoints need an admin."""

from __future__ import annotations

import asyncio
from typing import Any

from sahrat.store import ledger
from sahrat.store.db import make_engine, make_sessions

from .harness import Api, ServerProcess, WireClient, auth_headers, make_admin, play

STAKE = 100


async def _check_ledger(database: str) -> ledger.InvariantReport:
    engine = make_engine(database)
    try:
        async with make_sessions(engine)() as session:
            report = await ledger.check_invariant(session)
    finally:
        await engine.dispose()
    assert report.ok, report
    return report


async def _coin_match(server: ServerProcess, admin: tuple[str, str], database: str) -> None:
    api = Api(server)
    http = api.http
    try:
        login = await http.post("/api/login", json={"name": admin[0], "password": admin[1]})
        assert login.status_code == 200, login.text
        boss = auth_headers(login.json()["token"])
        created = await http.post(
            "/api/admin/tables",
            json={"game": "konkan", "options": {"players": 3, "stake": STAKE, "rounds": 1}},
            headers=boss,
        )
        assert created.status_code == 201, created.text
        table_id = created.json()["id"]
        assert created.json()["coin_table"] is True

        guests = [await api.guest() for _ in range(3)]
        before = {
            user["id"]: (await api.get("/api/me", token))["balance"] for token, user in guests
        }
        assert all(balance >= STAKE for balance in before.values())
        for token, _user in guests:
            info = await api.join(token, table_id)
        assert info["status"] == "playing"
        token_of = {user["id"]: token for token, user in guests}
        by_seat = [token_of[s["user_id"]] for s in sorted(info["seats"], key=lambda s: s["seat"])]
        for token, user in guests:
            me = await api.get("/api/me", token)
            assert me["balance"] == before[user["id"]] - STAKE  # the stake is in the pot

        seats = [
            await WireClient.connect(server, table_id, token, name=f"seat{seat}")
            for seat, token in enumerate(by_seat)
        ]
        await play("konkan", seats, until=lambda view: False)
        final = seats[0].view
        assert final is not None and final["match_over"]
        places: list[int] = final["places"]
        assert sorted(places)[:2] == [1, 2] and places.count(1) == places.count(2) == 1
        await seats[0].wait_for(
            lambda m: m["type"] == "table" and m["payload"]["status"] == "finished"
        )

        pot = 3 * STAKE
        paid = {1: pot * 70 // 100, 2: pot - pot * 70 // 100}
        assert paid == {1: 210, 2: 90}
        users = [s["user_id"] for s in sorted(info["seats"], key=lambda s: s["seat"])]
        for seat, user_id in enumerate(users):
            me = await api.get("/api/me", token_of[user_id])
            expected = before[user_id] - STAKE + paid.get(places[seat], 0)
            assert me["balance"] == expected, (seat, places, me)
            book = (await http.get(f"/api/admin/players/{user_id}/ledger", headers=boss)).json()
            reasons = [(e["reason"], e["amount"]) for e in book["entries"]]
            if places[seat] in paid:
                assert reasons[0] == ("payout", paid[places[seat]])
            assert ("stake", -STAKE) in reasons

        # The match and its settlement were written together.
        matches = await api.get(f"/api/tables/{table_id}/matches")
        assert len(matches) == 1 and matches[0]["score_sheet"]["places"] == places
        mine = await api.get("/api/me/matches", token_of[users[0]])
        assert [m["table_id"] for m in mine] == [table_id] and mine[0]["seat"] == 0

        check = (await http.get("/api/admin/ledger/check", headers=boss)).json()
        assert check["ok"] is True, check
        report = await _check_ledger(database)
        assert report.held == report.granted
        for client in seats:
            await client.close()
    finally:
        await api.aclose()


def test_a_coin_table_pays_70_30(module_server: ServerProcess) -> None:
    admin = make_admin(module_server.database_url)
    asyncio.run(_coin_match(module_server, admin, module_server.database_url))


async def _refusals(server: ServerProcess, admin: tuple[str, str]) -> None:
    api = Api(server)
    http = api.http
    try:
        login = await http.post("/api/login", json={"name": admin[0], "password": admin[1]})
        boss = auth_headers(login.json()["token"])
        token, _user = await api.guest()
        player = auth_headers(token)
        assert (await http.get("/api/admin/players")).status_code == 401
        forbidden = await http.get("/api/admin/players", headers=player)
        assert forbidden.status_code == 403
        assert forbidden.json()["detail"]["code"] == "not_admin"
        body: dict[str, Any] = {"game": "konkan", "options": {"players": 2, "stake": 5000}}
        assert (await http.post("/api/admin/tables", json=body, headers=player)).status_code == 403
        created = await http.post("/api/admin/tables", json=body, headers=boss)
        assert created.status_code == 201
        table_id = created.json()["id"]
        refused = await http.post(f"/api/tables/{table_id}/join", json={}, headers=player)
        assert refused.status_code == 409
        assert refused.json()["detail"]["code"] == "not_enough_coins"
        assert (await api.get(f"/api/tables/{table_id}"))["seats"][0]["user_id"] is None
    finally:
        await api.aclose()


def test_joining_without_the_stake_and_admin_authorization(module_server: ServerProcess) -> None:
    admin = make_admin(module_server.database_url)
    asyncio.run(_refusals(module_server, admin))
