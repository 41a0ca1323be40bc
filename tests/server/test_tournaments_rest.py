"""Tournaments' REST on a real server (SQLite, then PostgreSQL; docs/tournaments.md,
"REST" and "Coins"): every bad field refused with its own code, naming it, and
nothing made; who may make, register and complain; withdrawals and cancels refunding
every fee through the ledger; a knock-out short of its ``min_fill`` cancelled at its
time; a complaint holding the prizes and, upheld, cancelling the tournament; an
admin's schedule making its system tournament."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from .harness import Api, ServerProcess, WireClient, auth_headers, make_admin
from .tournament_support import (
    TOURNAMENT_ENV,
    Driver,
    balances,
    detail,
    iso_in,
    make_tournament,
    register,
    tournament_ledger,
    wait_state,
)

MODULE_SERVER_ENV = {**TOURNAMENT_ENV, "SAHRAT_GUESTS_AT_COIN_TABLES": "false"}
WINDOW_ENV = {**MODULE_SERVER_ENV, "SAHRAT_TOURNAMENT_COMPLAINT_MINUTES": "10"}
WELCOME = 1000


def plan(**changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": "Cup of the week",
        "game": "konkan",
        "format": "knockout",
        "seats": 8,
        "starts_at": iso_in(3600),
        "fee": 0,
    }
    body.update(changes)
    return {key: value for key, value in body.items() if value is not ...}


async def login(api: Api, name: str, password: str) -> str:
    response = await api.http.post("/api/login", json={"name": name, "password": password})
    assert response.status_code == 200, response.text
    return str(response.json()["token"])


def run(work: Any) -> Any:
    return asyncio.run(work)


BAD_BODIES = [
    (plan(colour="red"), "tournament_unknown_field", "colour"),
    (plan(name="  "), "tournament_name", "name"),
    (plan(name=7), "tournament_name", "name"),
    (plan(name="a\u202ename"), "tournament_name", "name"),
    (plan(game="chess"), "tournament_game", "game"),
    (plan(format="league"), "tournament_format", "format"),
    (plan(seats=5), "tournament_seats", "seats"),
    (plan(seats=True), "tournament_seats", "seats"),
    (plan(seats="8"), "tournament_seats", "seats"),
    (plan(rounds=3), "tournament_rounds", "rounds"),
    (plan(format="swiss", seats=10), "tournament_rounds", "rounds"),
    (plan(format="swiss", seats=10, rounds=13), "tournament_rounds", "rounds"),
    (plan(advance=3), "tournament_advance", "advance"),
    (plan(game="conquian", advance=2), "tournament_advance", "advance"),
    (plan(starts_at="tomorrow"), "tournament_starts_at", "starts_at"),
    (plan(starts_at="2026-12-24T18:00:00"), "tournament_starts_at", "starts_at"),
    (plan(starts_at="2020-01-01T18:00:00Z"), "tournament_starts_at", "starts_at"),
    (plan(starts_at=...), "tournament_starts_at", "starts_at"),
    (plan(fee=-1), "tournament_fee", "fee"),
    (plan(fee="10"), "tournament_fee", "fee"),
    (plan(fee=1.5), "tournament_fee", "fee"),
    (plan(min_fill=1), "tournament_min_fill", "min_fill"),
    (plan(min_fill=9), "tournament_min_fill", "min_fill"),
]


@pytest.mark.parametrize(("body", "code", "field"), BAD_BODIES)
def test_a_bad_field_is_refused_by_name_and_makes_nothing(
    module_server: ServerProcess, body: dict[str, Any], code: str, field: str
) -> None:
    async def scenario() -> None:
        api = Api(module_server)
        try:
            token, _user = await api.account("bad")
            response = await api.http.post(
                "/api/tournaments", json=body, headers=auth_headers(token)
            )
            assert response.status_code == 422, response.text
            assert response.json()["detail"]["code"] == code
            assert response.json()["detail"]["field"] == field
            listed = await api.get("/api/tournaments?state=coming")
            assert all(t["made_by"] != _user["name"] for t in listed["tournaments"])
        finally:
            await api.aclose()

    run(scenario())


def test_who_may_make_register_and_complain(module_server: ServerProcess) -> None:
    async def scenario() -> None:
        api = Api(module_server)
        try:
            guest_token, _guest = await api.guest()
            response = await api.http.post(
                "/api/tournaments", json=plan(), headers=auth_headers(guest_token)
            )
            assert response.status_code == 403
            assert response.json()["detail"]["code"] == "tournament_needs_account"
            maker, _ = await api.account("mk")
            free = await make_tournament(api, maker, **plan())
            paid = await make_tournament(api, maker, **plan(fee=5000))
            response = await api.http.post(
                "/api/tournaments", json=plan(), headers=auth_headers(maker)
            )
            assert response.status_code == 409
            assert response.json()["detail"]["code"] == "tournament_too_many"
            assert (free["made_by"], free["me"]["registered"]) == (_["name"], False)
            # anonymous: may not (no token); a guest may enter a free one, not a paid one
            anonymous = await detail(api, paid["id"])
            assert anonymous["me"] == {
                "registered": False,
                "may_register": False,
                "refusal": "no_token",
            }
            guest_view = await detail(api, paid["id"], guest_token)
            assert guest_view["me"]["refusal"] == "coin_table_needs_account"
            await register(api, guest_token, free["id"])
            for tid, code, status in (
                (free["id"], "tournament_registered", 409),
                (paid["id"], "coin_table_needs_account", 403),
            ):
                response = await api.http.post(
                    f"/api/tournaments/{tid}/entries", headers=auth_headers(guest_token)
                )
                assert (response.status_code, response.json()["detail"]["code"]) == (status, code)
            # an account short of the fee (5000 > the welcome grant): refused, nothing paid
            response = await api.http.post(
                f"/api/tournaments/{paid['id']}/entries", headers=auth_headers(maker)
            )
            assert (response.status_code, response.json()["detail"]["code"]) == (
                409,
                "not_enough_coins",
            )
            assert (await detail(api, paid["id"]))["registered"] == 0
            response = await api.http.delete(
                f"/api/tournaments/{paid['id']}/entries/me", headers=auth_headers(maker)
            )
            assert (response.status_code, response.json()["detail"]["code"]) == (
                409,
                "tournament_not_registered",
            )
            for token, code in (
                (guest_token, "tournament_no_window"),
                (maker, "tournament_not_entrant"),
            ):
                response = await api.http.post(
                    f"/api/tournaments/{free['id']}/complaints",
                    json={"text": "a bot played for me"},
                    headers=auth_headers(token),
                )
                assert response.json()["detail"]["code"] == code
            response = await api.http.post(
                f"/api/tournaments/{free['id']}/complaints",
                json={"text": ""},
                headers=auth_headers(guest_token),
            )
            assert (response.status_code, response.json()["detail"]["field"]) == (422, "text")
            missing = await api.http.get("/api/tournaments/999999")
            assert (missing.status_code, missing.json()["detail"]["code"]) == (
                404,
                "no_such_tournament",
            )
            bad = await api.http.get("/api/tournaments?state=someday")
            assert (bad.status_code, bad.json()["detail"]["code"]) == (422, "tournament_bad_state")
        finally:
            await api.aclose()

    run(scenario())


def test_a_withdrawal_and_a_cancel_refund_every_fee(module_server: ServerProcess) -> None:
    admin = make_admin(module_server.database_url)

    async def scenario() -> None:
        api = Api(module_server)
        try:
            boss = await login(api, *admin)
            people = [await api.account("rf") for _ in range(3)]
            made = await make_tournament(api, people[0][0], **plan(fee=50))
            tid = made["id"]
            for token, _user in people:
                await register(api, token, tid)
            response = await api.http.delete(
                f"/api/tournaments/{tid}/entries/me", headers=auth_headers(people[2][0])
            )
            assert response.status_code == 200 and response.json()["registered"] == 2
            response = await api.http.post(
                f"/api/admin/tournaments/{tid}/cancel", headers=auth_headers(boss)
            )
            assert response.status_code == 200 and response.json()["state"] == "cancelled"
            again = await api.http.post(
                f"/api/admin/tournaments/{tid}/cancel", headers=auth_headers(boss)
            )
            assert (again.status_code, again.json()["detail"]["code"]) == (409, "tournament_ended")
            users = [user["id"] for _token, user in people]
            ledger = await tournament_ledger(module_server.database_url, tid)
            want = {(f"user:{u}", f"tour:{tid}", 50, "tournament_fee") for u in users}
            want |= {(f"tour:{tid}", f"user:{u}", 50, "tournament_refund") for u in users}
            assert sorted((m.debit, m.credit, m.amount, m.reason) for m in ledger) == sorted(want)
            found = await balances(
                module_server.database_url, [f"tour:{tid}", *(f"user:{u}" for u in users)]
            )
            assert set(found.values()) == {0, WELCOME} and found[f"tour:{tid}"] == 0
        finally:
            await api.aclose()

    run(scenario())


def test_a_knockout_short_of_its_min_fill_is_cancelled_at_its_time(
    module_server: ServerProcess,
) -> None:
    async def scenario() -> None:
        api = Api(module_server)
        try:
            people = [await api.account("mf") for _ in range(2)]
            made = await make_tournament(
                api, people[0][0], **plan(seats=4, min_fill=3, fee=20, starts_at=iso_in(2))
            )
            for token, _user in people:
                await register(api, token, made["id"])
            done = await wait_state(api, made["id"], ("cancelled", "running"), timeout=30)
            assert done["state"] == "cancelled" and done["rounds"] == []
            ledger = await tournament_ledger(module_server.database_url, made["id"])
            assert (
                sorted(m.reason for m in ledger)
                == ["tournament_fee"] * 2 + ["tournament_refund"] * 2
            )
        finally:
            await api.aclose()

    run(scenario())


def test_a_complaint_holds_the_prizes_and_upheld_refunds_every_fee(
    module_servers: Callable[..., ServerProcess],
) -> None:
    server = module_servers(**WINDOW_ENV)
    admin = make_admin(server.database_url)

    async def scenario() -> None:
        api = Api(server)
        try:
            boss = await login(api, *admin)
            people = [await api.account("cp") for _ in range(4)]
            tokens = {user["id"]: token for token, user in people}
            made = await make_tournament(
                api, people[0][0], **plan(seats=4, fee=100, starts_at=iso_in(30))
            )
            tid = made["id"]
            for token, _user in people:
                await register(api, token, tid)  # full: a knock-out starts at once
            done = await Driver(server, api, "konkan", tokens).run(tid, until=("complaints",))
            assert done["complaints_open"] == 0 and done["complaint_until"] is not None
            held = [m.reason for m in await tournament_ledger(server.database_url, tid)]
            assert held == ["tournament_fee"] * 4  # the prizes wait for the window's end
            response = await api.http.post(
                f"/api/tournaments/{tid}/complaints",
                json={"text": "my seat was played by the timer"},
                headers=auth_headers(people[1][0]),
            )
            assert response.status_code == 201, response.text
            complaint = response.json()
            assert (complaint["state"], complaint["user_id"]) == ("open", people[1][1]["id"])
            second = await api.http.post(
                f"/api/tournaments/{tid}/complaints",
                json={"text": "again"},
                headers=auth_headers(people[1][0]),
            )
            assert second.json()["detail"]["code"] == "tournament_complaint_open"
            listed = await api.http.get(
                f"/api/admin/tournaments/{tid}/complaints", headers=auth_headers(boss)
            )
            assert [c["id"] for c in listed.json()["complaints"]] == [complaint["id"]]
            path = f"/api/admin/tournaments/{tid}/complaints/{complaint['id']}"
            bad = await api.http.post(path, json={"decision": "maybe"}, headers=auth_headers(boss))
            assert (bad.status_code, bad.json()["detail"]["code"]) == (422, "tournament_decision")
            upheld = await api.http.post(
                path, json={"decision": "upheld"}, headers=auth_headers(boss)
            )
            assert upheld.status_code == 200 and upheld.json()["state"] == "cancelled"
            again = await api.http.post(
                path, json={"decision": "dismissed"}, headers=auth_headers(boss)
            )
            assert again.json()["detail"]["code"] == "tournament_complaint_decided"
            ledger = await tournament_ledger(server.database_url, tid)
            want = {(f"user:{u}", f"tour:{tid}", 100, "tournament_fee") for u in tokens}
            want |= {(f"tour:{tid}", f"user:{u}", 100, "tournament_refund") for u in tokens}
            assert sorted((m.debit, m.credit, m.amount, m.reason) for m in ledger) == sorted(want)
        finally:
            await api.aclose()

    run(scenario())


def test_a_schedule_makes_its_system_tournament(module_server: ServerProcess) -> None:
    admin = make_admin(module_server.database_url)

    async def scenario() -> None:
        api = Api(module_server)
        try:
            boss = await login(api, *admin)
            player, _ = await api.account("sc")
            first = (datetime.now(UTC) + timedelta(minutes=30)).replace(microsecond=0)
            body = {**plan(name="Hourly cup"), "first_at": first.isoformat(), "every_minutes": 60}
            del body["starts_at"]
            refused = await api.http.post(
                "/api/admin/tournament-schedules", json=body, headers=auth_headers(player)
            )
            assert refused.json()["detail"]["code"] == "not_admin"
            bad = await api.http.post(
                "/api/admin/tournament-schedules",
                json={**body, "every_minutes": 5},
                headers=auth_headers(boss),
            )
            assert (bad.status_code, bad.json()["detail"]["field"]) == (422, "every_minutes")
            made = await api.http.post(
                "/api/admin/tournament-schedules", json=body, headers=auth_headers(boss)
            )
            assert made.status_code == 201, made.text
            schedule = made.json()
            deadline = asyncio.get_running_loop().time() + 30
            while True:  # open for registration 60 minutes before: made at the next tick
                listed = (await api.get("/api/tournaments?state=coming"))["tournaments"]
                mine = [t for t in listed if t["name"] == "Hourly cup"]
                if mine:
                    break
                assert asyncio.get_running_loop().time() < deadline
                await asyncio.sleep(0.2)
            assert len(mine) == 1 and mine[0]["made_by"] == "system"
            assert datetime.fromisoformat(mine[0]["starts_at"]) == first
            schedules = await api.http.get(
                "/api/admin/tournament-schedules", headers=auth_headers(boss)
            )
            (found,) = [s for s in schedules.json()["schedules"] if s["id"] == schedule["id"]]
            assert datetime.fromisoformat(found["next_at"]) == first + timedelta(minutes=60)
            path = f"/api/admin/tournament-schedules/{schedule['id']}"
            assert (await api.http.delete(path, headers=auth_headers(boss))).status_code == 204
            gone = await api.http.delete(path, headers=auth_headers(boss))
            assert (gone.status_code, gone.json()["detail"]["code"]) == (404, "no_such_schedule")
        finally:
            await api.aclose()

    run(scenario())


def test_anyone_may_watch_a_tournament_table_and_only_its_entrants_sit(
    module_server: ServerProcess,
) -> None:
    """A tournament's table is private to sit at, open to watch (docs/tournaments.md, "A
    round"): a stranger (an account, a guest, nobody signed in) gets its page with the
    tournament's id, watches it over a socket, sees its matches' list, and is refused a
    seat with ``tournament_table``; the lobby does not list it. The tournament here is
    free, so the watching is not delayed: the stranger's snapshot has the table's view,
    without a hand."""

    async def scenario() -> None:
        api = Api(module_server)
        try:
            people = [await api.account("wt") for _ in range(4)]
            tokens = {user["id"]: token for token, user in people}
            made = await make_tournament(api, people[0][0], **plan(seats=4, starts_at=iso_in(30)))
            tid = made["id"]
            for token, _user in people:
                await register(api, token, tid)  # full: a knock-out starts at once
            stranger, _ = await api.account("st")
            guest, _ = await api.guest()
            watched: list[int] = []

            async def watch(found: dict[str, Any]) -> None:
                tables = [t for r in found["rounds"] for t in r["tables"]]
                playing = [t["table_id"] for t in tables if t["state"] == "playing"]
                if watched or not playing:
                    return
                table_id = playing[0]
                watched.append(table_id)
                for token in (stranger, guest, None):
                    info = await api.get(f"/api/tables/{table_id}", token)
                    assert (info["tournament_id"], info["spectator_delay"]) == (tid, False)
                    assert info["private"] is True and info["invite_code"] is None
                matches = await api.http.get(f"/api/tables/{table_id}/matches")
                assert matches.status_code == 200, matches.text
                client = await WireClient.connect(module_server, table_id, stranger, name="st")
                try:
                    snapshot = client.of_type("snapshot")[0]["payload"]
                    assert snapshot["seat"] is None and snapshot["view"] is not None
                    assert snapshot["view"].get("hand") is None
                finally:
                    await client.close()
                for token in (stranger, guest):
                    refused = await api.http.post(
                        f"/api/tables/{table_id}/join", json={}, headers=auth_headers(token)
                    )
                    assert refused.status_code == 403, refused.text
                    assert refused.json()["detail"]["code"] == "tournament_table"
                lobby = await api.get("/api/tables?status=playing&limit=200")
                assert table_id not in {t["id"] for t in lobby}

            await Driver(module_server, api, "konkan", tokens).run(
                tid, until=("complaints", "finished"), during=watch
            )
            assert watched, "no table of the tournament was seen playing"
        finally:
            await api.aclose()

    run(scenario())


def test_a_paid_tournament_takes_one_account_per_network(module_server: ServerProcess) -> None:
    """docs/tournaments.md, "Coins": a paid tournament refuses a registration from the
    network of an entrant (IPv6: the same /56) with ``same_address``, changing nothing;
    another network may register; a free tournament takes both; a withdrawal frees the
    network."""

    def from_network(token: str, address: str) -> dict[str, str]:
        return {**auth_headers(token), "X-Forwarded-For": address}

    async def scenario() -> None:
        api = Api(module_server)
        try:
            (first, _a), (second, b), (third, _c) = [await api.account("nw") for _ in range(3)]
            paid = (await make_tournament(api, first, **plan(fee=10)))["id"]
            free = (await make_tournament(api, third, **plan()))["id"]
            home, same_home, next_door = (
                "2001:db8:77:aa00::1",
                "2001:db8:77:aa5f::2",
                "2001:db8:77:ab00::3",
            )

            async def enter(tid: int, token: str, address: str) -> Any:
                return await api.http.post(
                    f"/api/tournaments/{tid}/entries", headers=from_network(token, address)
                )

            assert (await enter(paid, first, home)).status_code == 200
            refused = await enter(paid, second, same_home)
            assert (refused.status_code, refused.json()["detail"]["code"]) == (409, "same_address")
            assert (await detail(api, paid))["registered"] == 1
            coins = await balances(module_server.database_url, [f"user:{b['id']}"])
            assert coins[f"user:{b['id']}"] == WELCOME  # no fee taken
            assert (await enter(paid, third, next_door)).status_code == 200
            for token, address in ((first, home), (second, same_home)):
                assert (await enter(free, token, address)).status_code == 200
            withdrawn = await api.http.delete(
                f"/api/tournaments/{paid}/entries/me", headers=from_network(first, home)
            )
            assert withdrawn.status_code == 200, withdrawn.text
            assert (await enter(paid, second, same_home)).status_code == 200
            assert (await detail(api, paid))["registered"] == 2
        finally:
            await api.aclose()

    run(scenario())
