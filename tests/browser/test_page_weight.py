"""What the lobby fetches: only what it shows. A table's modules (and the game modules
they bring), the replay's and the other language's catalogue are fetched when they are
needed — a table opened, a replay opened, a language switch — and the static files
come compressed from their versioned paths. A page left open across a new version
reloads into it when it needs a module the server no longer has."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from .conftest import DESKTOP
from .helpers import REPO, Server, answers_ready, free_port, sahrat_bin, state

pytestmark = pytest.mark.browser

LATER = (
    "js/table.js",
    "js/view.js",
    "vendor/preact/preact.module.js",
    "js/replay.js",
    "js/konkan.js",
    "js/conquian.js",
    "js/fairness.js",
)


class Recorded:
    """A fresh browser context whose page's requests (and JavaScript errors) are kept."""

    def __init__(self, browser: Any, server: Server, lang: str) -> None:
        self.context = browser.new_context(viewport=DESKTOP, reduced_motion="reduce")
        self.context.add_init_script(f"localStorage.setItem('sahrat.lang', '{lang}')")
        self.page = self.context.new_page()
        self.page.set_default_timeout(10_000)
        self.urls: list[str] = []
        self.encodings: dict[str, str] = {}
        self.errors: list[str] = []
        self.page.on("request", lambda request: self.urls.append(request.url))
        self.page.on("response", self._response)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.goto(server.url + "/")
        self.page.wait_for_selector("#quick-play:enabled")
        self.page.wait_for_load_state("networkidle")

    def _response(self, response: Any) -> None:
        self.encodings[response.url] = response.all_headers().get("content-encoding", "")

    def fetched(self, path: str) -> bool:
        return any(re.search(rf"/static/[0-9a-f]+/{re.escape(path)}$", url) for url in self.urls)


@pytest.fixture
def recorded(browser: Any, server: Server) -> Iterator[Callable[[str], Recorded]]:
    made: list[Recorded] = []

    def make(lang: str) -> Recorded:
        made.append(Recorded(browser, server, lang))
        return made[-1]

    yield make
    for one in made:
        one.context.close()
    assert not [error for one in made for error in one.errors]


@pytest.mark.parametrize(("lang", "other"), [("ar", "en"), ("en", "ar")])
def test_the_lobby_fetches_only_what_it_shows(
    recorded: Callable[[str], Recorded], lang: str, other: str
) -> None:
    lobby = recorded(lang)
    static = [url for url in lobby.urls if "/api/" not in url and not url.endswith("/")]
    assert static and all(re.search(r"/static/[0-9a-f]+/", url) for url in static), static
    assert lobby.fetched("js/lobby.js") and lobby.fetched(f"i18n/{lang}.json")
    assert not [path for path in LATER if lobby.fetched(path)], lobby.urls
    assert not lobby.fetched(f"i18n/{other}.json")
    # Compressed on the way (Chromium accepts brotli and gzip even over plain http).
    assert all(lobby.encodings.get(url) in ("br", "gzip") for url in static), lobby.encodings

    # The other language: fetched at the switch, and the page redrawn in it.
    lobby.page.click("#lang-toggle")
    lobby.page.wait_for_function(f"() => document.documentElement.lang === '{other}'")
    assert lobby.fetched(f"i18n/{other}.json")
    assert lobby.page.locator("#quick-play").is_enabled()


def test_a_table_and_a_replay_load_their_modules_when_opened(
    recorded: Callable[[str], Recorded],
) -> None:
    lobby = recorded("en")
    page = lobby.page
    # Quick play: a free Konkan table with bots, opened and dealt.
    page.click("#quick-play")
    page.wait_for_function("() => !!window.sahrat?.view", timeout=20_000)
    current = state(page)
    assert current["info"]["game"] == "konkan"
    hand = current["view"]["hand"]
    assert len(hand) >= 14
    page.wait_for_function(
        f"() => document.querySelectorAll('#hand [data-card]').length >= {len(hand)}"
    )
    assert lobby.fetched("js/table.js") and lobby.fetched("js/konkan.js")
    assert not lobby.fetched("js/replay.js")
    assert not lobby.fetched("js/conquian.js")  # the other game's drawing is not needed

    # A replay (of a match that does not exist): its module comes and draws its screen.
    page.evaluate("() => { location.hash = '#/m/999999999'; }")
    page.wait_for_selector("#replay")
    assert lobby.fetched("js/replay.js")


@pytest.fixture
def own_static(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A server of its own, on a copy of static/ that the test may change."""
    static = tmp_path / "static"
    shutil.copytree(REPO / "static", static)
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'sahrat.db'}",
        "SAHRAT_BOT_DELAY_SECONDS": "0.1",
        "SAHRAT_STATIC_DIR": str(static),
    }
    with (tmp_path / "server.log").open("wb") as log:
        proc = subprocess.Popen(
            [*sahrat_bin(), "serve", "--port", str(port)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            if answers_ready(url, proc):
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError((tmp_path / "server.log").read_text())
            time.sleep(0.1)
        yield url, static
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_a_page_of_an_old_version_reloads_into_the_new_one(
    browser: Any, own_static: tuple[str, Path]
) -> None:
    """A new version deployed while the lobby is open: opening a table asks for a module
    of the old version (404), so the page reloads into the new one, at that table."""
    url, static = own_static
    context = browser.new_context(viewport=DESKTOP, reduced_motion="reduce")
    try:
        page = context.new_page()
        page.set_default_timeout(10_000)
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(url + "/")
        page.wait_for_selector("#quick-play:enabled")
        entry = page.evaluate(
            "() => new URL(document.querySelector('script[type=module]').src).pathname"
        )
        assert re.fullmatch(r"/static/[0-9a-f]+/js/app\.js", entry), entry
        table_js = static / "js" / "table.js"
        table_js.write_text(table_js.read_text(encoding="utf-8") + "\n// new\n", encoding="utf-8")
        # The server has the new version only.
        assert entry not in httpx.get(url + "/", timeout=10).text
        page.click("#quick-play")
        page.wait_for_function("() => !!window.sahrat?.view", timeout=20_000)
        now = page.evaluate(
            "() => new URL(document.querySelector('script[type=module]').src).pathname"
        )
        assert now != entry  # the page was reloaded into the new version
        assert re.search(r"#/t/\d+$", page.url)
        assert not errors, errors
    finally:
        context.close()
