"""One name, one account, whatever its case, its Unicode form or invisible marks.

An impostor signs up as ``Boss`` beside ``boss``, as ``boss`` with an invisible
Arabic letter mark (U+061C), in full-width letters, or with a tatweel stretching an
Arabic name: each is refused — 409 ``name_taken`` when it is another form of a taken
name, 422 naming the character when it holds one that makes names look alike. And
the migration that makes names unique in that form keeps accounts that already
collide (the oldest keeps the name's key; the others still log in by their name).

Look-alikes across scripts are the same attack: ``b٥ss`` (an Arabic-Indic five) beside
``boss``, ``١ila`` or ``اila`` (an Arabic-Indic one, an alef) beside ``lila``, ``b0ss``
(a zero). Names are compared by their Unicode confusables skeleton (UTS #39), and a
word that mixes alphabets, or digits of two kinds, is refused: 422
``name_mixes_scripts``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa
from alembic import command
from sqlalchemy.ext.asyncio import create_async_engine

from pgtest import fresh_database
from sahrat.cli import main
from sahrat.names import name_key, script_problem
from sahrat.server.auth import hash_password
from sahrat.server.migrate import alembic_config
from sahrat.settings import get_settings

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
    ]:  # format and bidi controls: a code of their own (docs/social.md)
        problem = found[name].json()["detail"]
        assert problem["code"] == "name_hidden_chars", problem
        assert char in problem["message"], problem
    for name, char in [
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


# Pairs that UTS #39's confusables.txt makes one name (first the taken one, then the
# look-alike), and names that only resemble each other and stay two.
LOOK_ALIKE = [
    ("boss", "b\u0665ss"),  # ARABIC-INDIC DIGIT FIVE for o
    ("boss", "b\u06f5ss"),  # EXTENDED ARABIC-INDIC DIGIT FIVE
    ("boss", "b\u043ess"),  # CYRILLIC SMALL LETTER O
    ("boss", "b0ss"),  # DIGIT ZERO is a capital O, and case does not count
    ("boss", "BOSS"),
    ("lila", "\u0661ila"),  # ARABIC-INDIC DIGIT ONE for l
    ("lila", "\u0627ila"),  # ARABIC LETTER ALEF
    ("lila", "1ila"),
    ("master", "rnaster"),  # r and n side by side are an m
    ("Mike", "mike"),  # both an m, whichever case comes first
    ("paypal", "\u0440aypal"),  # CYRILLIC SMALL LETTER ER
    ("علي", "علی"),  # ARABIC LETTER FARSI YEH
    ("كتاب", "کتاب"),  # ARABIC LETTER KEHEH
    ("فهد٥", "فهد۵"),  # the Persian form of the digit five
]
DIFFERENT = [("boss", "bass"), ("lila", "lilo"), ("فهد", "فهر"), ("فهد", "fahd"), ("m", "n")]


@pytest.mark.parametrize(("name", "other"), LOOK_ALIKE)
def test_look_alikes_have_one_key(name: str, other: str) -> None:
    assert name_key(name) == name_key(other)


@pytest.mark.parametrize(("name", "other"), DIFFERENT)
def test_different_names_have_different_keys(name: str, other: str) -> None:
    assert name_key(name) != name_key(other)


@pytest.mark.parametrize(
    "name", ["boss", "lila_99", "فهد", "أبو_فهد", "فهد2024", "فهد٢٠٢٤", "fahd-فهد", "x", "_-_"]
)
def test_a_name_in_one_alphabet_a_word_is_fine(name: str) -> None:
    assert script_problem(name) is None


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("b\u0665ss", "Arabic"),  # a Latin word with an Arabic-Indic digit
        ("\u0627ila", "Arabic"),
        ("b\u043ess", "Cyrillic"),
        ("\u03bfk", "Greek"),
        ("فهد٢2", "digits"),  # Arabic-Indic and ASCII digits in one word
        ("فهد٢۲", "digits"),  # Arabic-Indic and Persian digits
    ],
)
def test_a_word_that_mixes_alphabets_is_refused(name: str, problem: str) -> None:
    found = script_problem(name)
    assert found is not None and problem in found, found


async def _look_alike_sign_ups(server: ServerProcess) -> dict[str, httpx.Response]:
    """Each name with a word of its own after it (the PostgreSQL database is shared by
    the tests of a worker): ``boss_<tag>``, ``b٥ss_<tag>``..."""
    tag = secrets.token_hex(3)
    async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as http:
        found = {}
        for name in [
            "boss",
            "lila",
            "b\u0665ss",
            "b\u06f5ss",
            "b\u043ess",
            "Boss",
            "b0ss",
            "\u0661ila",
            "\u0627ila",
            "1ila",
            "فهد",
            "فهد۵",
            "فهد٥",
            "أبو_فهد",
            "فهد2024",
            "layla_99",
            "fahd-فهد",
        ]:
            body = {"name": f"{name}_{tag}", "password": PASSWORD}
            found[name] = await http.post("/api/users", json=body)
        guest = await http.post("/api/guests")
        me = {"Authorization": f"Bearer {guest.json()['token']}"}
        for name in ["b\u0665ss", "b0ss", "\u0627ila", "فهد٥"]:
            body = {"name": f"{name}_{tag}"}
            found[f"rename {name}"] = await http.patch("/api/me", json=body, headers=me)
        found["me"] = await http.get("/api/me", headers=me)
    return found


def test_look_alikes_across_scripts_are_refused(
    start_server: Callable[..., ServerProcess],
) -> None:
    found = asyncio.run(_look_alike_sign_ups(start_server()))
    status = {name: response.status_code for name, response in found.items()}
    assert status == {
        "boss": 201,
        "lila": 201,
        "b\u0665ss": 422,
        "b\u06f5ss": 422,
        "b\u043ess": 422,  # a Cyrillic letter is not a letter a name may hold at all
        "Boss": 409,
        "b0ss": 409,
        "\u0661ila": 422,
        "\u0627ila": 422,
        "1ila": 409,
        "فهد": 201,
        "فهد۵": 201,
        "فهد٥": 409,
        "أبو_فهد": 201,
        "فهد2024": 201,
        "layla_99": 201,
        "fahd-فهد": 201,
        "rename b\u0665ss": 422,
        "rename b0ss": 409,
        "rename \u0627ila": 422,
        "rename فهد٥": 409,
        "me": 200,
    }
    for name in ["b\u0665ss", "b\u06f5ss", "\u0661ila", "\u0627ila", "rename b\u0665ss"]:
        detail = found[name].json()["detail"]
        assert detail["code"] == "name_mixes_scripts", (name, detail)
        assert "Latin" in detail["message"] and "Arabic" in detail["message"], detail
    for name in ["Boss", "b0ss", "1ila", "فهد٥", "rename b0ss", "rename فهد٥"]:
        assert found[name].json()["detail"]["code"] == "name_taken", name
    # no refused rename took effect: the guest keeps its generated name (no "_<tag>")
    assert "_" not in found["me"].json()["name"]


# Accounts made before names were compared by their skeleton, with the keys they had
# (the NFKC form, case-folded; "Boss" suffixed by migration 0005), and the keys they
# must have after migration 0008: the oldest of each look-alike keeps it.
BEFORE_SKELETONS = [
    ("b\u0665ss", "b\u0665ss", "boss"),
    ("boss", "boss", "boss#2"),
    ("lila", "lila", "lila"),
    ("\u0627ila", "\u0627ila", "lila#4"),
    ("b0ss", "b0ss", "boss#5"),
    ("Boss", "boss#6", "boss#6"),
    ("layla", "layla", "layla"),
]


async def _accounts_with_keys(url: str) -> None:
    engine = create_async_engine(url)
    secret = hash_password(PASSWORD)
    async with engine.begin() as connection:
        for name, key, _ in BEFORE_SKELETONS:  # ids 1, 2, ... in this order
            await connection.execute(
                sa.text(
                    "INSERT INTO users (name, name_key, password_hash, guest, is_admin,"
                    " suspended) VALUES (:name, :key, :secret, false, false, false)"
                ),
                {"name": name, "key": key, "secret": secret},
            )
    await engine.dispose()


async def _keys(url: str) -> list[str]:
    engine = create_async_engine(url)
    async with engine.connect() as connection:
        found = await connection.execute(sa.text("SELECT name_key FROM users ORDER BY id"))
        keys = [row[0] for row in found]
    await engine.dispose()
    return keys


async def _logins_after_skeletons(server: ServerProcess) -> dict[str, int]:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as http:
        found = {}
        for name, _, _ in BEFORE_SKELETONS:
            login = await http.post("/api/login", json={"name": name, "password": PASSWORD})
            assert login.status_code == 200, login.text
            found[name] = login.json()["user"]["id"]
        for name in ["bOss", "1ila", "LAYLA"]:
            again = await http.post("/api/users", json={"name": name, "password": PASSWORD})
            assert again.status_code == 409, (name, again.text)
    return found


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_the_migration_to_skeletons_keeps_look_alikes_apart(kind: str, tmp_path: Path) -> None:
    with _empty_database(kind, tmp_path) as url:
        command.upgrade(alembic_config(url), "0007")
        asyncio.run(_accounts_with_keys(url))
        server = ServerProcess(url, tmp_path).start()  # migrates to head
        try:
            ids = asyncio.run(_logins_after_skeletons(server))
        finally:
            server.stop()
        assert list(ids.values()) == list(range(1, len(BEFORE_SKELETONS) + 1))
        assert asyncio.run(_keys(url)) == [after for _, _, after in BEFORE_SKELETONS]
        command.downgrade(alembic_config(url), "0007")
        assert asyncio.run(_keys(url)) == [before for _, before, _ in BEFORE_SKELETONS]


class AdminCreate:
    """``sahrat admin create NAME`` on a database, run in this process (the command's
    own code, without a new interpreter for each name): its exit code and its stderr."""

    def __init__(
        self, database: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        for key in [k for k in os.environ if k.startswith("SAHRAT_")]:
            monkeypatch.delenv(key)
        monkeypatch.setenv("DATABASE_URL", database)
        self.capsys = capsys

    def __call__(self, name: str) -> tuple[int, str]:
        get_settings.cache_clear()
        try:
            code = main(["admin", "create", name])
        finally:
            get_settings.cache_clear()
        return code, self.capsys.readouterr().err


def test_admin_create_refuses_look_alikes_as_sign_up_does(
    database: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    admin_create = AdminCreate(database, monkeypatch, capsys)
    tag = secrets.token_hex(3)  # the PostgreSQL database is shared by a worker's tests
    code, err = admin_create(f"boss_{tag}")
    assert code == 0, err
    code, err = admin_create(f"b\u0665ss_{tag}")
    assert code == 2 and "mixes Latin with Arabic" in err, (code, err)
    for name in [f"B0SS_{tag}", f"Boss_{tag.upper()}"]:
        code, err = admin_create(name)
        assert code == 1 and "is taken" in err, (name, code, err)
    code, err = admin_create(f"bo\u0640ss_{tag}")  # a tatweel, as at sign-up
    assert code == 2 and "U+0640" in err, (code, err)
