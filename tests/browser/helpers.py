"""Helpers for the browser tests: the server process, and playing moves by clicking.

The tests decide moves with the engine's simple players (``sahrat.bots``) from
the view the page itself shows (``window.sahrat.view``), then make them with
clicks, exactly as a person would.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from sahrat.bots import simple_conquian, simple_konkan
from sahrat.rules import conquian, konkan

REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "test-artifacts" / "screenshots"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def sahrat_bin() -> list[str]:
    script = Path(sys.executable).parent / "sahrat"
    return [str(script)] if script.exists() else [sys.executable, "-m", "sahrat.cli"]


def answers_ready(url: str, proc: subprocess.Popen[bytes]) -> bool:
    """Whether the server ``proc`` itself is ready at ``url``: another test's server that
    took the port first answers there too, while ours fails to bind."""
    with contextlib.suppress(httpx.HTTPError, ValueError):
        response = httpx.get(url + "/readyz", timeout=1)
        return response.status_code == 200 and response.json().get("pid") == proc.pid
    return False


@dataclass
class Server:
    url: str
    proc: subprocess.Popen[bytes]
    folder: Path
    helpers: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @classmethod
    @contextlib.contextmanager
    def start(cls, folder: Path, extra_env: dict[str, str] | None = None) -> Iterator[Server]:
        port = free_port()
        env = {
            **os.environ,
            "DATABASE_URL": f"sqlite+aiosqlite:///{folder / 'sahrat.db'}",
            "SAHRAT_GRACE_SECONDS": "5",
            # Bots think for a tenth of a second, so a whole round fits the test's budget.
            "SAHRAT_BOT_DELAY_SECONDS": "0.1",
            "SAHRAT_STATIC_DIR": str(REPO / "static"),
            # Every browser of the suite is a new guest from the same address: that
            # address may create them, faster than one network's share of the server's
            # minute (SAHRAT_NETWORK_SHARE_PERCENT of SAHRAT_NEW_ACCOUNTS_PER_MINUTE).
            "SAHRAT_NEW_ACCOUNTS_PER_ADDRESS_HOUR": "1000",
            "SAHRAT_NEW_ACCOUNTS_PER_MINUTE": "1000",
            # A one-deal match against bots counts (ranks its player, shows "counted").
            "SAHRAT_COUNTED_MIN_DEALS": "1",
            "SAHRAT_COUNTED_MIN_ROUNDS": "1",
            "SAHRAT_COUNTED_MIN_TURNS": "1",
            **(extra_env or {}),  # a test's own server (test_table_chat.py: coin tables)
        }
        log = (folder / "server.log").open("wb")
        proc = subprocess.Popen(
            [*sahrat_bin(), "serve", "--port", str(port)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        server = cls(f"http://127.0.0.1:{port}", proc, folder)
        try:
            deadline = time.monotonic() + 30
            while True:
                if answers_ready(server.url, proc):
                    break
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError((folder / "server.log").read_text())
                time.sleep(0.1)
            yield server
        finally:
            for helper in [*server.helpers, proc]:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(helper.pid, signal.SIGKILL)
                helper.wait()
            log.close()

    def auto_player(self, table_id: int) -> subprocess.Popen[bytes]:
        """The terminal client playing a seat of the table with the simple player."""
        out = (self.folder / f"auto-{table_id}.log").open("wb")
        proc = subprocess.Popen(
            [*sahrat_bin(), "play", "--server", self.url, "--table", str(table_id), "--auto"],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.helpers.append(proc)
        return proc


# --- accounts and phone pages -----------------------------------------------------------

# Signs a page in as an account (``{token, user}``, as POST /api/users answers), as the
# page itself does after signing in.
SIGN_IN = (
    "(auth) => { localStorage.setItem('sahrat.token', auth.token);"
    " localStorage.setItem('sahrat.user', JSON.stringify(auth.user)); }"
)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def new_account(server: Server, name: str) -> dict[str, Any]:
    """A new registered account (not a guest): ``{token, user}``."""
    made = httpx.post(
        server.url + "/api/users", json={"name": name, "password": "long enough"}, timeout=10
    )
    assert made.status_code == 201, made.text
    return dict(made.json())


def phone_page(
    new_page: Any,
    network: str,
    ready: str,
    viewport: dict[str, int],
    auth: dict[str, Any] | None = None,
) -> Any:
    """An Arabic page at a phone's width, with touch, whose requests come from
    ``network`` (the address the trusted proxy in front of the server saw), signed in as
    ``auth`` if given (else the visitor it opens as), once ``ready`` (a selector) shows."""
    page = new_page("ar", viewport=viewport, touch=True)
    page.context.set_extra_http_headers({"X-Forwarded-For": network})
    if auth is not None:
        page.evaluate(SIGN_IN, auth)
        page.reload()
    page.wait_for_selector(ready)
    return page


# --- reading the page ------------------------------------------------------------------


def state(page: Any) -> dict[str, Any]:
    """The table as the page holds it: {info, seat, view, ...} (window.sahrat)."""
    return page.evaluate(
        "() => window.sahrat && JSON.parse(JSON.stringify({info: window.sahrat.info,"
        " seat: window.sahrat.seat, view: window.sahrat.view}))"
    )


def seq(page: Any) -> int:
    return int(page.evaluate("() => window.sahrat?.info?.seq ?? -1"))


def wait_seq_after(page: Any, before: int, timeout: float = 10_000) -> None:
    page.wait_for_function(f"() => (window.sahrat?.info?.seq ?? -1) > {before}", timeout=timeout)


def close_summary(page: Any) -> None:
    button = page.locator("#summary-close")
    if button.count():
        button.click()


def press_continue(page: Any) -> None:
    """Press "continue" on a round's summary if it is there and enabled, found and
    pressed in one step (the break can end, and the button go, between two steps)."""
    page.evaluate("() => document.querySelector('#summary-continue:not([disabled])')?.click()")


def close_round_summary(page: Any) -> None:
    """Close a round's (deal's) summary, as a player done reading it, unless the match is
    over (its summary carries the result). Checked and clicked in one step in the page:
    an update between a check here and a click there could end the match in between."""
    page.evaluate(
        """() => { if (!window.sahrat?.view?.match_over)
            document.querySelector('#summary-close')?.click(); }"""
    )


# Elements that reach out of the viewport sideways (cut text, a page that scrolls sideways).
OUTSIDE = """() => [...document.querySelectorAll('body *')].filter((e) => {
    const r = e.getBoundingClientRect();
    return r.width && (r.left < -1 || r.right > innerWidth + 1) && !e.closest('.sr-only');
  }).map((e) => e.tagName + '#' + e.id + '.' + e.className).slice(0, 8)"""


def screenshot(page: Any, name: str) -> Path:
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    return path


def looks_right(page: Any, name: str) -> None:
    """A screenshot, nothing reaching out of the screen sideways, no axe violation."""
    screenshot(page, name)
    assert page.evaluate(OUTSIDE) == [], name
    assert axe_violations(page) == [], name


# --- making a move by clicking ------------------------------------------------------------


def click_card(page: Any, where: str, card: str) -> None:
    page.locator(f'{where} [data-card="{card}"]').first.click()


def play_konkan(page: Any, action: dict[str, Any]) -> None:
    """Make a Konkan engine action with clicks (the simple player's actions)."""
    kind = action["type"]
    if kind in ("draw", "commit", "end_turn", "claim_redeal"):
        ids = {"draw": "#draw", "commit": "#commit", "end_turn": "#end-turn"}
        page.click(ids.get(kind, "#redeal"))
        return
    if kind == "discard":
        click_card(page, "#hand", action["card"])
        page.click("#discard")
        return
    top = page.evaluate("() => window.sahrat.view.discard_top")
    for meld in action.get("melds", []):
        for card in meld:
            if kind == "take_discard" and card == top:
                # A tap on the pile proposes lay-downs; build this one by hand instead.
                click_card(page, "#discard-pile", card)
                page.click("#pick-by-hand")
            else:
                click_card(page, "#hand", card)
        page.click("#make-meld")
    for lay in action.get("lay_offs", []):
        for card in lay["cards"]:
            click_card(page, "#hand", card)
        page.click(f'.table-meld[data-meld="{lay["meld"]}"]')
    if kind == "swap_joker":
        for card in action["cards"]:
            click_card(page, "#hand", card)
        page.click(f'.table-meld[data-meld="{action["meld"]}"]')
        return
    if kind == "take_discard":
        page.click("#take-discard")
    elif page.locator("#lay-down:not([disabled])").count():
        page.click("#lay-down")  # else the lay-off was sent by tapping the meld


def play_conquian(page: Any, action: dict[str, Any]) -> None:
    """Make a Conquian engine action with clicks; a take rebuilds the whole arrangement."""
    kind = action["type"]
    if kind in ("refuse", "pass", "force", "decline_force"):
        page.click("#" + kind.replace("_", "-"))
        return
    if kind == "discard":
        click_card(page, "#hand", action["card"])
        page.click("#discard")
        return
    assert kind == "take", action
    page.click("#take")
    for meld in action["melds"]:
        for card in meld:
            click_card(page, "#take-editor", card)
        page.click("#new-group")
    page.click("#confirm-take")


def bot_action(view: dict[str, Any]) -> dict[str, Any]:
    if view["game"] == "conquian":
        data = conquian.action_to_json(simple_conquian.act(view))
    else:
        data = konkan.action_to_json(simple_konkan.act(view))
    data.pop("seat", None)
    return data


def my_turn(page: Any) -> bool:
    return bool(
        page.evaluate(
            "() => { const s = window.sahrat; return !!(s && s.view && s.seat !== null"
            " && s.view.turn === s.seat && !s.view.match_over && !s.busy && !s.roundBreak); }"
        )
    )


def match_over(page: Any) -> bool:
    return bool(page.evaluate("() => !!window.sahrat?.view?.match_over"))


def controller_move(page: Any) -> bool:
    """One move of the simple player through the table page's own controller
    (``window.sahrat.send``), if it is this seat's turn; a deal's summary is closed first
    (a player done reading it). Whether a move was accepted."""
    close_round_summary(page)
    if not my_turn(page):
        return False
    before = seq(page)
    reply = page.evaluate("(a) => window.sahrat.send(a)", bot_action(state(page)["view"]))
    if reply.get("ok"):
        wait_seq_after(page, before)
        return True
    return False


# --- accessibility ------------------------------------------------------------------------

AXE = Path(__file__).parent / "vendor" / "axe.min.js"  # axe-core 4.10.2, see vendor/README.md


def axe_violations(page: Any) -> list[str]:
    """The serious and critical axe-core violations of the page as it is now."""
    if not page.evaluate("() => !!window.axe"):
        # Evaluated through the debugging protocol: the page's CSP forbids inline scripts.
        page.evaluate("(source) => (0, eval)(source)", AXE.read_text(encoding="utf-8"))
    found = page.evaluate(
        """async () => {
            const result = await axe.run(document, { resultTypes: ['violations'] });
            return result.violations
              .filter((v) => v.impact === 'serious' || v.impact === 'critical')
              .map((v) => v.id + ': ' + v.nodes.slice(0, 3).map((n) => n.target.join(' ')))
        }"""
    )
    return list(found)
