"""A flood of wrong passwords slows the attacker and never locks the owner out: a live
server with the real login limits, attacked as a griefer would.

Strangers send fifty wrong passwords for a player's name, and fifty for an admin's,
from addresses of their own. Their addresses are then refused (429 with
``Retry-After``), while the player, from the network they signed up on, and the admin,
from theirs, sign in at once with their passwords, and the player's signed-in session
works all along.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable
from typing import Any

import httpx

from .harness import ServerProcess, make_admin

# why this module runs on SQLite only in make test (conftest.py)
ONE_DATABASE = "the login limits are buckets in each process's memory (Redis in a cluster)"

# The defaults of settings.py, named here so that the test keeps them whatever the
# harness lifts for the other tests.
REAL_LOGIN_LIMITS = {
    "SAHRAT_LOGINS_PER_ADDRESS_MINUTE": "10",
    "SAHRAT_LOGINS_PER_ADDRESS_NAME_HOUR": "10",
    "SAHRAT_LOGINS_PER_NAME_HOUR": "20",
    "SAHRAT_LOGINS_PER_MINUTE": "600",
}
OWNER = "198.51.100.10"
ADMIN = "198.51.100.11"
WRONG_PASSWORDS = 50


def _from(address: str) -> dict[str, str]:
    """As the trusted proxy (127.0.0.1) sends a request of a client at ``address``."""
    return {"X-Forwarded-For": address}


async def _login(http: httpx.AsyncClient, name: str, password: str, address: str) -> httpx.Response:
    body = {"name": name, "password": password}
    return await http.post("/api/login", json=body, headers=_from(address))


async def _flood(http: httpx.AsyncClient, name: str, addresses: list[str]) -> list[int]:
    """``WRONG_PASSWORDS`` wrong passwords for ``name``, shared among ``addresses``, each
    address sending its next one as soon as its previous one is answered."""
    per_address = WRONG_PASSWORDS // len(addresses)

    async def one_address(address: str) -> list[int]:
        return [
            (await _login(http, name, "wrong " + secrets.token_hex(4), address)).status_code
            for _ in range(per_address)
        ]

    found = await asyncio.gather(*(one_address(address) for address in addresses))
    return [status for statuses in found for status in statuses]


async def _attack(server: ServerProcess, database: str) -> dict[str, Any]:
    admin, admin_password = make_admin(database)
    async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as http:
        victim, password = f"victim-{secrets.token_hex(3)}", "the owner's own password"
        made = await http.post(
            "/api/users", json={"name": victim, "password": password}, headers=_from(OWNER)
        )
        assert made.status_code == 201, made.text
        session = {"Authorization": f"Bearer {made.json()['token']}", **_from(OWNER)}
        found: dict[str, Any] = {
            "victim_flood": await _flood(http, victim, ["203.0.113.1", "203.0.113.2"]),
            "session": (await http.get("/api/me", headers=session)).status_code,
            "admin_flood": await _flood(http, admin, ["203.0.113.3", "203.0.113.4"]),
        }
        found["attacker"] = await _login(http, victim, "one more", "203.0.113.1")
        found["admin_attacker"] = await _login(http, admin, "one more", "203.0.113.3")
        found["owner"] = await _login(http, victim, password, OWNER)
        found["admin"] = await _login(http, admin, admin_password, ADMIN)
        found["session_after"] = (await http.get("/api/me", headers=session)).status_code
    return found


def _throttled(response: httpx.Response) -> None:
    assert response.status_code == 429, response.text
    assert response.json()["detail"]["code"] == "too_many_logins"
    assert int(response.headers["Retry-After"]) >= 1


def test_a_password_flood_locks_out_the_attacker_not_the_owner(
    start_server: Callable[..., ServerProcess], database: str
) -> None:
    found = asyncio.run(_attack(start_server(**REAL_LOGIN_LIMITS), database))
    # Every wrong password was refused, either checked (401) or throttled (429).
    for flood in (found["victim_flood"], found["admin_flood"]):
        assert len(flood) == WRONG_PASSWORDS and set(flood) <= {401, 429}, flood
    # The name's own bucket (20 an hour for networks that never signed in to it) caps
    # what strangers may try on a player's account, from any number of addresses.
    assert found["victim_flood"].count(401) <= 20, found["victim_flood"]
    _throttled(found["attacker"])
    _throttled(found["admin_attacker"])
    assert found["owner"].status_code == 200, found["owner"].text
    assert found["admin"].status_code == 200, found["admin"].text
    assert found["session"] == found["session_after"] == 200
