"""Browser tests: a real ``sahrat serve`` and Debian's Chromium driven by Playwright.

Never ``playwright install``: the browser is ``/usr/bin/chromium``. When it is
missing the session installs it with apt (as root), or skips — but fails when
the environment variable ``CI`` is set, so CI never silently skips these tests.
Screenshots go to ``test-artifacts/screenshots/`` (printed at the end).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from .helpers import REPO, SCREENSHOTS, Server

CHROMIUM = "/usr/bin/chromium"
INSTALL_LOCK = Path(tempfile.gettempdir()) / "sahrat-chromium-install.lock"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 360, "height": 740}
PHONE_390 = {"width": 390, "height": 844}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "browser: runs in a real Chromium (tests/browser)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.browser)


def _ensure_chromium() -> None:
    if Path(CHROMIUM).exists():
        return
    if hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
        # One install for all the test processes (pytest-xdist starts several at once,
        # and apt takes its lock for one of them only): the others wait, then find it.
        with open(INSTALL_LOCK, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not Path(CHROMIUM).exists():
                env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
                wait = ["-o", "DPkg::Lock::Timeout=300"]  # another apt run (a daily update)
                subprocess.run(["apt-get", *wait, "update", "-qq"], check=True, env=env)
                subprocess.run(
                    ["apt-get", *wait, "install", "-y", "-qq", "chromium"], check=True, env=env
                )
        return
    message = f"{CHROMIUM} is missing (install Debian's chromium package)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    sync_api = pytest.importorskip("playwright.sync_api")
    _ensure_chromium()
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("browser-server")
    with Server.start(folder) as running:
        yield running


@pytest.fixture(scope="session", autouse=True)
def _screenshot_folder() -> Iterator[None]:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    yield
    shots = sorted(SCREENSHOTS.glob("*.png"))
    if shots:
        print(f"\nbrowser screenshots: {SCREENSHOTS.relative_to(REPO)}/ ({len(shots)} files)")


@pytest.fixture
def new_page(browser: object, server: Server) -> Iterator[Callable[..., object]]:
    """Open pages in fresh browser contexts (each its own localStorage: its own player).

    JavaScript errors on any page fail the test.
    """
    contexts: list[object] = []
    errors: list[str] = []

    def make(
        lang: str = "ar", viewport: dict[str, int] | None = None, touch: bool = False
    ) -> object:
        context = browser.new_context(  # type: ignore[attr-defined]
            viewport=viewport or DESKTOP,
            locale="ar" if lang == "ar" else "en-GB",
            has_touch=touch,
            reduced_motion="reduce",  # no animation: screenshots and clicks see the final place
        )
        # The language is the player's choice, kept in localStorage.
        context.add_init_script(f"localStorage.setItem('sahrat.lang', '{lang}')")
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(10_000)
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on("dialog", lambda dialog: dialog.accept())
        page.goto(server.url + "/")
        return page

    yield make
    for context in contexts:
        context.close()  # type: ignore[attr-defined]
    assert not errors, f"JavaScript errors: {errors}"
