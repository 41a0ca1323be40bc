"""One name, one account, whatever its case, its Unicode form or invisible marks.

An impostor signs up as ``Boss`` beside ``boss``, as ``boss`` with an invisible
Arabic letter mark (U+061C), in full-width letters, or with a tatweel stretching an
Arabic name: each is refused — 409 ``name_taken`` when it is another form of a taken
name, 422 naming the character when it holds one that makes names look alike. And
the migration that makes names unique in that form keeps accounts that already
collide (the oldest keeps the name's key; the others still log in by their name).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa
from alembic import command
from sqlalchemy.ext.asyncio import create_async_engine

from pgtest import fresh_database
from sahrat.server.auth import hash_password
from sahrat.server.migrate import alembic_config

from .harness import ServerProcess

PASSWORD = "long enough"


async def _sign_ups(server: ServerProcess) -> dict[str, httpx.Response]:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as http:
        found = {}
        for name in [
            "boss",
            "Boss",
            "BOSS",
            "ｂｏｓｓ",  # full-width: NFKC makes it "boss"
            "boss\u061c",  # ARABIC LETTER MARK
            "\u202eboss",  # RIGHT-TO-LEFT OVERRIDE
            "bo\u200bss",  # ZERO WIDTH SPACE
            "نجمة",
            "نجـمة",  # a tatweel inside
            "نَجمة",  # a vowel mark
            "علي",
            "علی",  # with the Persian yeh, which looks the same
        ]:
            found[name] = await http.post("/api/users", json={"name": name, "password": PASSWORD})
        found["login BOSS"] = await http.post(
            "/api/login", json={"name": "BOSS", "password": PASSWORD}
        )
    return found


def test_names_that_look_alike_are_one_name(
    start_server: Callable[..., ServerProcess],
) -> None:
    found = asyncio.run(_sign_ups(start_server()))
    status = {name: response.status_code for name, response in found.items()}
    assert status == {
        "boss": 201,
        "Boss": 409,
        "BOSS": 409,
        "ｂｏｓｓ": 409,
        "boss\u061c": 422,
        "\u202eboss": 422,
        "bo\u200bss": 422,
        "نجمة": 201,
        "نجـمة": 422,
        "نَجمة": 422,
        "علي": 201,
        "علی": 409,
        "login BOSS": 200,
    }
    for name in ("Boss", "ｂｏｓｓ", "علی"):
        assert found[name].json()["detail"]["code"] == "name_taken"
    for name, char in [
        ("boss\u061c", "U+061C"),
        ("\u202eboss", "U+202E"),
        ("bo\u200bss", "U+200B"),
        ("نجـمة", "U+0640"),
        ("نَجمة", "U+064E"),
    ]:
        problem = found[name].json()["detail"][0]
        assert problem["loc"] == ["body", "name"], problem
        assert char in problem["msg"], problem
    assert found["login BOSS"].json()["user"]["id"] == found["boss"].json()["user"]["id"]


@contextlib.contextmanager
def _empty_database(kind: str, tmp_path: Path) -> Iterator[str]:
    if kind == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'old.db'}"
    else:
        with fresh_database("sahrat_names", "the name migration test") as url:
            yield url


OLD_NAMES = ["boss", "Boss", "boss\u061c", "layla"]


async def _old_accounts(url: str) -> None:
    engine = create_async_engine(url)
    users = sa.table(
        "users",
        sa.column("name"),
        sa.column("password_hash"),
        sa.column("guest"),
        sa.column("is_admin"),
        sa.column("suspended"),
    )
    secret = hash_password(PASSWORD)
    async with engine.begin() as connection:
        for name in OLD_NAMES:
            await connection.execute(
                users.insert().values(
                    name=name, password_hash=secret, guest=False, is_admin=False, suspended=False
                )
            )
    await engine.dispose()


async def _logins(server: ServerProcess) -> dict[str, int]:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as http:
        found = {}
        for name in OLD_NAMES:
            login = await http.post("/api/login", json={"name": name, "password": PASSWORD})
            assert login.status_code == 200, login.text
            assert login.json()["user"]["name"] == name
            found[name] = login.json()["user"]["id"]
        again = await http.post("/api/users", json={"name": "BoSS", "password": PASSWORD})
        assert again.status_code == 409, again.text
    return found


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_the_migration_keeps_names_that_already_collide(kind: str, tmp_path: Path) -> None:
    with _empty_database(kind, tmp_path) as url:
        command.upgrade(alembic_config(url), "0004")
        asyncio.run(_old_accounts(url))
        server = ServerProcess(url, tmp_path).start()  # migrates to head
        try:
            ids = asyncio.run(_logins(server))
        finally:
            server.stop()
        assert len(set(ids.values())) == len(OLD_NAMES)  # each still its own account
