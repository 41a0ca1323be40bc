"""The API explorer with the network cut: ``/docs`` (Swagger UI) and ``/redoc`` load
every script, style and icon from the server itself and show the API's operations.

Every request to anywhere but the server is aborted and recorded: a page that reached
for a CDN (or Google's fonts) fails the test even if it rendered. JavaScript errors and
Content-Security-Policy refusals fail it too. The one request off the server allowed is
ReDoc's own: the "API docs by Redocly" link at the foot of its menu shows the vendor's
logo from the vendor's site, and hides it when that fails (the bundle is kept unchanged)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from .conftest import DESKTOP
from .helpers import SCREENSHOTS, Server

pytestmark = pytest.mark.browser


REDOC_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg"


class Offline:
    """A browser context that reaches only the server; what it refused, what broke."""

    def __init__(self, browser: Any, server: Server) -> None:
        self.server = server
        self.context = browser.new_context(viewport=DESKTOP, locale="en-GB")
        self.blocked: list[str] = []
        self.errors: list[str] = []
        self.loaded: list[str] = []
        self.context.route("**/*", self._route)

    def _route(self, route: Any) -> None:
        url = route.request.url
        if url == self.server.url or url.startswith(self.server.url + "/"):
            self.loaded.append(url[len(self.server.url) :])
            route.continue_()
        else:
            self.blocked.append(url)
            route.abort("internetdisconnected")

    def open(self, path: str) -> Any:
        page = self.context.new_page()
        page.set_default_timeout(15_000)
        page.on("pageerror", lambda error: self.errors.append(f"{path}: {error}"))
        page.on(
            "console",
            lambda message: (
                self.errors.append(f"{path}: {message.text}")
                if "Content Security Policy" in message.text or "Refused to" in message.text
                else None
            ),
        )
        response = page.goto(self.server.url + path)
        # the explorer runs under its own policy: nothing from another origin
        policy = response.headers.get("content-security-policy", "")
        assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy, policy
        return page

    def check(self, allowed: frozenset[str] = frozenset()) -> None:
        """Nothing left the server, and nothing was refused or broke, but ``allowed``:
        URLs another origin serves that the page may try (and the CSP refuses)."""
        off = [url for url in self.blocked if url not in allowed]
        assert not off, f"requests off the server: {off}"
        errors = [e for e in self.errors if not any(url in e for url in allowed)]
        assert not errors, errors


@pytest.fixture
def offline(browser: Any, server: Server) -> Iterator[Callable[[], Offline]]:
    made: list[Offline] = []

    def make() -> Offline:
        made.append(Offline(browser, server))
        return made[-1]

    yield make
    for each in made:
        each.context.close()


def test_swagger_ui_shows_the_operations_offline(offline: Callable[[], Offline]) -> None:
    network = offline()
    page = network.open("/docs")
    operation = page.locator('.opblock-summary-path[data-path="/api/tables"]').first
    operation.wait_for(state="visible")
    assert page.locator(".info .title").inner_text().startswith("Sahrat")
    assert page.locator(".opblock").count() >= 20  # every REST operation, not a stub
    # open one operation: its parameters and responses render from the schema
    page.locator('.opblock-get .opblock-summary-path[data-path="/api/tables/{table_id}"]').click()
    page.locator(".opblock.is-open .parameters").wait_for(state="visible")
    assert "table_id" in page.locator(".opblock.is-open .parameters").inner_text()
    page.screenshot(path=str(SCREENSHOTS / "api-docs-swagger-ui.png"))
    assert "/docs-assets/swagger-ui/swagger-ui-bundle.js" in network.loaded
    assert "/openapi.json" in network.loaded
    network.check()


def test_redoc_shows_the_operations_offline(offline: Callable[[], Offline]) -> None:
    network = offline()
    page = network.open("/redoc")
    page.locator("h1", has_text="Sahrat").first.wait_for(state="visible")
    # the menu lists the operations; the selected one shows its path
    menu = page.locator("[role=menuitem]", has_text="Create Table").first
    menu.wait_for(state="visible")
    menu.click()
    page.get_by_text("/api/tables", exact=True).first.wait_for(state="visible")
    assert page.locator("[role=menuitem]").count() >= 20
    page.screenshot(path=str(SCREENSHOTS / "api-docs-redoc.png"))
    assert "/docs-assets/redoc/redoc.standalone.js" in network.loaded
    assert "/openapi.json" in network.loaded
    network.check(allowed=frozenset({REDOC_LOGO}))
