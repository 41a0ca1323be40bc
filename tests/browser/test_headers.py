"""The page under its own Content-Security-Policy: nothing it needs is refused (its
scripts, styles, icon, REST calls, and the WebSocket it opens with a ticket)."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.browser


def test_the_page_plays_under_its_security_policy(new_page: Any) -> None:
    page = new_page("en")
    refused: list[str] = []
    page.on(
        "console",
        lambda message: (
            refused.append(message.text)
            if "Content Security Policy" in message.text or "Refused to" in message.text
            else None
        ),
    )
    page.reload()  # the whole page load under watch
    table = page.evaluate(
        """async () => {
            const guest = await (await fetch("/api/guests", {method: "POST"})).json();
            localStorage.setItem("sahrat.token", guest.token);
            localStorage.setItem("sahrat.user", JSON.stringify(guest.user));
            const res = await fetch("/api/tables", {
                method: "POST",
                headers: {"Content-Type": "application/json",
                          Authorization: `Bearer ${guest.token}`},
                body: JSON.stringify({game: "conquian", options: {}}),
            });
            return (await res.json()).id;
        }"""
    )
    page.evaluate("(id) => { location.hash = `#/t/${id}`; }", table)
    page.wait_for_function("() => window.sahratConn?.ws?.readyState === WebSocket.OPEN")
    url = page.evaluate("() => window.sahratConn.ws.url")
    assert "ticket=" in url and "token=" not in url
    assert not refused, refused
