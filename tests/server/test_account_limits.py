"""Accounts and logins cost a cheater something: a live server, attacked as a farm would.

* A flood of guests (or sign-ups) from one address gets 429 ``too_many_accounts`` with
  ``Retry-After`` after the limit, and so does a flood from many addresses once the
  server-wide limit is spent; two IPv6 addresses in one /56 (a residential customer's
  allocation) are one address, and so are an IPv4 address and its IPv4-mapped form.
* ``X-Forwarded-For`` from a client the server does not trust as its proxy changes
  nothing: the limits (and the one-account-per-address rule of coin tables) still
  see the client's own address. And the deployment files trust nginx alone, which
  writes the address it saw.
* Garbage or oversized ``X-Forwarded-For`` from the trusted proxy is an unknown
  address, never a 500 (it used to overflow ``seats.address`` on PostgreSQL).
* A flood of bad logins is answered at once — 401 while a hashing thread is free,
  503 ``busy`` with ``Retry-After`` when every thread and queue place is taken, and
  429 ``too_many_logins`` per address and per name — instead of slowing everything.
"""

from __future__ import annotations

import asyncio
import re
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from pydantic import ValidationError

from sahrat.server.addresses import network_key
from sahrat.settings import Settings

from .harness import REPO, Api, ServerProcess, auth_headers, make_admin

LIMITED = {
    "SAHRAT_NEW_ACCOUNTS_PER_ADDRESS_HOUR": "5",
    "SAHRAT_NEW_ACCOUNTS_PER_MINUTE": "12",
    "SAHRAT_NETWORK_SHARE_PERCENT": "50",  # a network's five fit in its share of the twelve
}


def _from(address: str) -> dict[str, str]:
    """A request as the trusted proxy (127.0.0.1, uvicorn's default) sends it for a
    client at ``address``."""
    return {"X-Forwarded-For": address}


async def _guest(http: httpx.AsyncClient, headers: dict[str, str] | None = None) -> int:
    return (await http.post("/api/guests", headers=headers or {})).status_code


def _refused(response: httpx.Response, code: str) -> None:
    assert response.status_code == 429, response.text
    assert response.json()["detail"]["code"] == code
    assert int(response.headers["Retry-After"]) >= 1


async def _account_flood(server: ServerProcess) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as http:
        # One address: five accounts an hour, then 429 — guests and sign-ups alike.
        assert [await _guest(http) for _ in range(5)] == [201] * 5
        _refused(await http.post("/api/guests"), "too_many_accounts")
        signed = await http.post("/api/users", json={"name": "farmer", "password": "x" * 12})
        _refused(signed, "too_many_accounts")
        # One IPv6 /56 is one subscriber's: the addresses of its /64s share one limit.
        statuses = [await _guest(http, _from(f"2001:db8:5:{i}::1")) for i in range(1, 7)]
        assert statuses == [201] * 5 + [429]
        # From everywhere: twelve a minute in all (ten taken above; a few seconds of
        # this test may have refilled a fraction of one).
        statuses = [await _guest(http, _from(f"198.51.100.{i}")) for i in range(1, 6)]
        assert statuses[:2] == [201, 201] and statuses[-1] == 429, statuses


def test_a_flood_of_new_accounts_is_refused(start_server: Callable[..., ServerProcess]) -> None:
    asyncio.run(_account_flood(start_server(**LIMITED)))


async def _forged(server: ServerProcess, database: str) -> None:
    # A forged header does not get two accounts of one address to a coin table...
    name, password = make_admin(database)
    api = Api(server)
    try:
        login = await api.http.post("/api/login", json={"name": name, "password": password})
        boss = {"Authorization": f"Bearer {login.json()['token']}"}
        created = await api.http.post(
            "/api/admin/tables", json={"game": "conquian", "options": {"stake": 10}}, headers=boss
        )
        assert created.status_code == 201, created.text
        table_id = created.json()["id"]
        statuses = []
        for token, _user in [await api.guest() for _ in range(2)]:
            headers = auth_headers(token)  # claims an address of its own
            joined = await api.http.post(f"/api/tables/{table_id}/join", json={}, headers=headers)
            statuses.append(joined.status_code)
        assert statuses == [200, 409]
        # ...nor past the limit of new accounts (three an hour; two taken above): each
        # request claims another address, the server sees 127.0.0.1 each time.
        statuses = [await _guest(api.http, _from(f"203.0.113.{i}")) for i in range(1, 4)]
        assert statuses == [201, 429, 429]
    finally:
        await api.aclose()


def test_a_forged_forwarded_for_changes_nothing(
    start_server: Callable[..., ServerProcess], database: str
) -> None:
    """The server trusts only its proxy's address (here one that is not the client)."""
    server = start_server(FORWARDED_ALLOW_IPS="192.0.2.1", SAHRAT_NEW_ACCOUNTS_PER_ADDRESS_HOUR="3")
    asyncio.run(_forged(server, database))


def test_the_proxy_writes_the_address_it_saw_and_alone_is_trusted() -> None:
    conf = (REPO / "deploy" / "nginx.conf").read_text()
    set_headers = re.findall(r"proxy_set_header X-Forwarded-For (\S+);", conf)
    assert set_headers and set(set_headers) == {"$remote_addr"}, set_headers
    assert conf.count("proxy_pass ") == len(set_headers)  # every location sets it
    services = yaml.safe_load((REPO / "docker-compose.yml").read_text())["services"]
    proxy = services["proxy"]["networks"]["default"]["ipv4_address"]
    for name in (n for n in services if n.startswith("app")):
        trusted = services[name]["environment"]["FORWARDED_ALLOW_IPS"]
        assert trusted == proxy, (name, trusted)


BAD_FORWARDED = [
    "x" * 100,
    "2001:db8:" + "ffff:" * 20 + "1",
    "::ffff:" + "9" * 80,
    " ".join(["1.2.3.4"] * 12),
    "not an address",
    "[2001:db8::1]:443" + "0" * 60,
    "1.2.3.4, 5.6.7.8, " + "9" * 70,
]


async def _garbage(server: ServerProcess, database: str) -> list[int]:
    name, password = make_admin(database)
    api = Api(server)
    statuses: list[int] = []
    try:
        login = await api.http.post("/api/login", json={"name": name, "password": password})
        boss = {"Authorization": f"Bearer {login.json()['token']}"}
        created = await api.http.post(
            "/api/admin/tables",
            json={"game": "konkan", "options": {"stake": 10, "players": 4}},
            headers=boss,
        )
        coin_table = created.json()["id"]
        for forwarded in BAD_FORWARDED:
            made = await api.http.post("/api/guests", headers=_from(forwarded))
            statuses.append(made.status_code)
            headers = {"Authorization": f"Bearer {made.json()['token']}", **_from(forwarded)}
            free = await api.http.post(
                "/api/tables", json={"game": "konkan", "options": {}}, headers=headers
            )
            statuses.append(free.status_code)
            left = await api.http.post(f"/api/tables/{free.json()['id']}/leave", headers=headers)
            statuses.append(left.status_code)
            joined = await api.http.post(f"/api/tables/{coin_table}/join", json={}, headers=headers)
            statuses.append(joined.status_code)
            left = await api.http.post(f"/api/tables/{coin_table}/leave", headers=headers)
            statuses.append(left.status_code)
            logged = await api.http.post(
                "/api/login", json={"name": "nobody", "password": "x"}, headers=_from(forwarded)
            )
            statuses.append(logged.status_code)
    finally:
        await api.aclose()
    return statuses


def test_a_garbage_forwarded_for_is_an_unknown_address_never_a_500(
    module_server: ServerProcess,
) -> None:
    statuses = asyncio.run(_garbage(module_server, module_server.database_url))
    assert all(status < 500 for status in statuses), statuses
    assert statuses == [201, 201, 200, 200, 200, 401] * len(BAD_FORWARDED)


def test_network_keys() -> None:
    same = {network_key("2001:db8:1:2aa::a"), network_key("2001:DB8:1:2ff:ffff:0:0:9")}
    assert same == {"2001:db8:1:200::/56"}
    assert network_key("2001:db8:1:100::a") == "2001:db8:1:100::/56"
    assert network_key("203.0.113.7") == "203.0.113.7"
    assert network_key("203.0.113.8") == "203.0.113.8"  # IPv4: the whole address
    assert network_key("::ffff:203.0.113.7") == "203.0.113.7"
    for bad in [None, "", "x" * 100, "1.2.3.4, 5.6.7.8", "999.1.1.1", "testclient"]:
        assert network_key(bad) is None, bad
    for key in ["2001:db8:1:200::/56", "203.0.113.7"]:  # a key is its own key
        assert network_key(key) == key
    # a key stored under a longer prefix (a /64, before /56 was the rule) is its /56
    assert network_key("2001:db8:1:2::/64") == "2001:db8:1::/56"
    assert network_key("::ffff:203.0.113.7/128") == "203.0.113.7"
    assert network_key("2001:db8::/48") is None and network_key("203.0.113.0/24") is None
    longest = network_key("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")
    assert longest is not None and len(longest) <= 43  # seats.address
    # SAHRAT_IPV6_NETWORK_PREFIX chooses the grouping (32 to 64)
    assert network_key("2001:db8:1:2::a", prefix=64) == "2001:db8:1:2::/64"
    assert network_key("2001:db8:1:2::a", prefix=48) == "2001:db8:1::/48"
    assert network_key("2001:db8:1:2::/64", prefix=48) == "2001:db8:1::/48"
    assert network_key("2001:db8::/48", prefix=48) == "2001:db8::/48"
    assert network_key("203.0.113.7", prefix=32) == "203.0.113.7"
    for wrong in (31, 65):
        with pytest.raises(ValidationError):
            Settings(SAHRAT_IPV6_NETWORK_PREFIX=wrong)


async def _login_flood(server: ServerProcess) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as http:

        async def bad_login(name: str, address: str) -> httpx.Response:
            body = {"name": name, "password": "wrong " + secrets.token_hex(4)}
            return await http.post("/api/login", json=body, headers=_from(address))

        # Many addresses and names at once: a hashing thread and two waiting places.
        flood = await asyncio.gather(
            *(bad_login(f"who{i}", f"198.51.100.{i}") for i in range(1, 25)),
            http.get("/api/tables"),
        )
        lobby = flood.pop()
        # One address, many names: four a minute.
        one_address = [(await bad_login(f"n{i}", "203.0.113.9")) for i in range(6)]
        # One name (in any case), many addresses: three an hour.
        one_name = [
            (await bad_login("Victim" if i % 2 else "victim", f"192.0.2.{i}")) for i in range(1, 6)
        ]
    return {"flood": flood, "lobby": lobby, "address": one_address, "name": one_name}


def test_a_login_flood_is_refused_at_once(start_server: Callable[..., ServerProcess]) -> None:
    server = start_server(
        SAHRAT_HASH_THREADS="1",
        SAHRAT_HASH_QUEUE="2",
        SAHRAT_LOGINS_PER_ADDRESS_MINUTE="4",
        SAHRAT_LOGINS_PER_NAME_HOUR="3",
    )
    found = asyncio.run(_login_flood(server))
    statuses = [r.status_code for r in found["flood"]]
    assert set(statuses) == {401, 503}, statuses
    assert 3 <= statuses.count(401) < len(statuses), statuses
    for response in found["flood"]:
        if response.status_code == 503:
            assert response.json()["detail"]["code"] == "busy"
            assert int(response.headers["Retry-After"]) >= 1
    assert found["lobby"].status_code == 200
    assert [r.status_code for r in found["address"]] == [401] * 4 + [429] * 2
    _refused(found["address"][-1], "too_many_logins")
    assert [r.status_code for r in found["name"]] == [401] * 3 + [429] * 2
    _refused(found["name"][-1], "too_many_logins")


def test_settings_document_every_new_limit() -> None:
    doc = (Path(REPO) / "docs" / "operations.md").read_text()
    for code in ("too_many_accounts", "too_many_logins", "busy", "FORWARDED_ALLOW_IPS"):
        assert code in doc, code


async def _one_network(server: ServerProcess, database: str) -> list[int]:
    name, password = make_admin(database)
    api = Api(server)
    try:
        login = await api.http.post("/api/login", json={"name": name, "password": password})
        boss = {"Authorization": f"Bearer {login.json()['token']}"}
        created = await api.http.post(
            "/api/admin/tables",
            json={"game": "konkan", "options": {"stake": 10, "players": 4}},
            headers=boss,
        )
        table_id = created.json()["id"]
        statuses = []
        for address in [
            "2001:db8:7:7::1",  # a subscriber's /64...
            "2001:db8:7:8::1",  # ...and another /64 of the same /56
            "2001:db8:7:100::1",  # the next /56: another subscriber
            "198.51.100.77",
            "::ffff:198.51.100.77",  # the same IPv4 address, IPv4-mapped
            "198.51.100.78",
        ]:
            token, _user = await api.guest()
            headers = {"Authorization": f"Bearer {token}", **_from(address)}
            joined = await api.http.post(f"/api/tables/{table_id}/join", json={}, headers=headers)
            statuses.append(joined.status_code)
            if joined.status_code == 409:
                assert joined.json()["detail"]["code"] == "same_address", joined.text
    finally:
        await api.aclose()
    return statuses


def test_an_ipv6_slash_56_is_one_address_at_a_coin_table(module_server: ServerProcess) -> None:
    found = asyncio.run(_one_network(module_server, module_server.database_url))
    assert found == [200, 409, 200, 200, 409, 200]


async def _one_slash_56(server: ServerProcess) -> list[int]:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as http:
        return [await _guest(http, _from(f"2001:db8:0:{i:x}::1")) for i in range(1, 13)]


def test_the_slash_64s_of_one_slash_56_share_the_limit_of_new_accounts(
    start_server: Callable[..., ServerProcess],
) -> None:
    """Ten accounts an hour (the default) for a network, from any of its 256 /64s."""
    server = start_server(SAHRAT_NEW_ACCOUNTS_PER_ADDRESS_HOUR="10")
    assert asyncio.run(_one_slash_56(server)) == [201] * 10 + [429] * 2
