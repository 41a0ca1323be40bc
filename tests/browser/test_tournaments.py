"""A tournament in the browser, in Arabic at a phone's width (390 × 844, touch).

Two accounts, each in a browser of its own. The first taps the header's cup, finds the
tournaments' list and makes a paid Conquian knock-out of four seats with the form
(first with a start in the past: the server's refusal is shown in words beside the
field, and the field is focused); both register from the tournament's page (a question
first: the fee is charged) and their coins go down by the fee. At its start the two
empty seats get bots (docs/tournaments.md: "a knock-out starts once full, either
format at its time with at least min_fill people; bots take a knock-out's empty
seats"). Each player's table is one tap from the top of the page (and from the
bracket, where it says "play", not "watch"), and the table links back; a third account
watching a table is told that a prize tournament's rounds are shown once over; the
players play their tables out (the engine's simple player deciding from what each
table page shows),
while the first browser keeps the tournament's page open: it changes by itself as the
tables finish (tables finished, who went through, the final, the result), drawn again
only when the tournament's ``version`` moved. Then the complaint window (the prizes
held, the complaint button), and the result with the prize paid: the pool is the fees
less the house's share, the one place paid for two players with a standing, and each
account's balance is its grant less the fee plus its prize.
"""

from __future__ import annotations

import json
import random
import re
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from .conftest import DESKTOP, PHONE_390
from .helpers import (
    REPO,
    Server,
    bearer,
    controller_move,
    looks_right,
    match_over,
    new_account,
    phone_page,
    screenshot,
)

AR = json.loads((REPO / "static" / "i18n" / "ar.json").read_text(encoding="utf-8"))
EN = json.loads((REPO / "static" / "i18n" / "en.json").read_text(encoding="utf-8"))

FEE = 50
GRANT = 1000  # SAHRAT_WELCOME_GRANT's default: a new account's coins
HOUSE_PERMILLE = 100
COMPLAINT_SECONDS = 12
# Short tables: a Conquian match of one deal won; the runner looks every 0.3 s; new
# accounts may enter a paid tournament at once (no free matches played first).
TOURNAMENT_ENV = {
    "SAHRAT_TOURNAMENT_TICK_SECONDS": "0.3",
    "SAHRAT_TOURNAMENT_CONQUIAN_WINS": "1",
    "SAHRAT_TOURNAMENT_COMPLAINT_MINUTES": str(COMPLAINT_SECONDS / 60),
    "SAHRAT_TOURNAMENT_HOUSE_PERMILLE": str(HOUSE_PERMILLE),
    "SAHRAT_COIN_TABLE_MIN_MATCHES": "0",
    # A counted match at a free table (a tournament's table is one) earns coins: none
    # here, so that a balance moves by the tournament's fee and prize alone.
    "SAHRAT_FREE_TABLE_EARNINGS": "0",
}
PLAY_SECONDS = 420.0

# The tournament as the page that shows it holds it (tournament/page.js).
SHOWN = "() => JSON.parse(JSON.stringify(window.sahratTournament?.data ?? null))"
DRAWS = "() => window.sahratTournament?.draws ?? 0"
# Its version and how often it drew, read at once.
DRAWN = "() => [window.sahratTournament?.data?.version ?? -1, window.sahratTournament?.draws ?? 0]"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """This module's own server: short tournament tables, a short complaint window."""
    folder = tmp_path_factory.mktemp("tournament-server")
    with Server.start(folder, TOURNAMENT_ENV) as running:
        yield running


def balance(server: Server, auth: dict[str, Any]) -> int:
    me = httpx.get(server.url + "/api/me", headers=bearer(auth["token"]), timeout=10)
    me.raise_for_status()
    return int(me.json()["balance"])


def tournament_coins(server: Server, auth: dict[str, Any], tournament: int) -> list[int]:
    """The amounts of the account's ledger entries with the tournament's escrow, oldest
    first."""
    got = httpx.get(server.url + "/api/me/ledger", headers=bearer(auth["token"]), timeout=10)
    got.raise_for_status()
    entries = [e for e in got.json()["entries"] if e["counterparty"] == f"tour:{tournament}"]
    return [int(e["amount"]) for e in reversed(entries)]


def phone(new_page: Any, auth: dict[str, Any], network: str) -> Any:
    """An Arabic phone page (``phone_page``) signed in as ``auth``, at 390 px."""
    return phone_page(new_page, network, "#nav-tournaments", PHONE_390, auth)


def shown(page: Any) -> dict[str, Any]:
    found = page.evaluate(SHOWN)
    assert found is not None
    return dict(found)


def shown_now(page: Any) -> dict[str, Any] | None:
    """What the page shows, or None while it has not fetched it (just opened)."""
    found = page.evaluate(SHOWN)
    return None if found is None else dict(found)


def wait_shown(page: Any, test: str, timeout: float = 30_000) -> None:
    """Wait until the tournament the page shows passes ``test`` (JS over ``d``)."""
    page.wait_for_function(
        f"() => {{ const d = window.sahratTournament?.data; return !!d && ({test}); }}",
        timeout=timeout,
    )


def start_minute(page: Any, ahead_seconds: int) -> str:
    """The datetime-local value of the first whole minute at least ``ahead_seconds`` from
    now, in the browser's own time zone."""
    return str(
        page.evaluate(
            """(ahead) => { const d = new Date(Date.now() + ahead * 1000);
              if (d.getSeconds() || d.getMilliseconds()) d.setMinutes(d.getMinutes() + 1, 0, 0);
              const p = (n) => String(n).padStart(2, '0');
              const day = `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
              return `${day}T${p(d.getHours())}:${p(d.getMinutes())}`; }""",
            ahead_seconds,
        )
    )


def register(page: Any) -> None:
    """Register from the tournament's page: a tap, then yes to the fee's question."""
    button = page.locator("#tour-register")
    assert f"{FEE}" in button.inner_text()
    button.tap()
    dialog = page.locator("#confirm")
    dialog.wait_for()
    assert f"{FEE}" in dialog.inner_text()
    page.locator("#confirm-yes").tap()
    page.wait_for_selector("#tour-withdraw")
    assert page.inner_text("#tour-me") == AR["tour.you_registered"]


def entry_of(detail: dict[str, Any], user_id: int) -> int:
    return int(next(e["entry"] for e in detail["entrants"] if e["user_id"] == user_id))


def table_for(detail: dict[str, Any], entry: int, done: set[int]) -> int | None:
    """The game table where ``entry`` plays now (one it has not played out yet)."""
    for round_ in detail["rounds"]:
        for table in round_["tables"]:
            if (
                entry in table["seats"]
                and table["table_id"] is not None
                and table["table_id"] not in done
                and table["state"] != "finished"
            ):
                return int(table["table_id"])
    return None


def watch_delayed(new_page: Any, server: Server, table: int, n: int) -> None:
    """A third account watches a table of the paid tournament while its players have not
    moved yet (the test moves for them): a prize tournament's spectator sees a round
    only once it is over (docs/protocol.md, "Delayed spectators"), so the page says so,
    with no card of the round, no view and the way to the tournament."""
    watcher = phone(new_page, new_account(server, f"متفرج {n:05d}"), "192.0.2.33")
    watcher.goto(f"{server.url}/#/t/{table}")
    watcher.wait_for_selector("#delayed")
    assert watcher.inner_text("#delayed h2") == AR["table.delayed_title"]
    assert watcher.evaluate("() => window.sahrat.view") is None
    assert watcher.locator("#spectating").is_visible()
    assert watcher.locator(".card").count() == 0
    assert watcher.locator("#take-seat").count() == 0
    assert watcher.locator("#tournament-link").is_visible()
    looks_right(watcher, "tournament-delayed-spectator-ar-390")
    watcher.close()


def test_two_players_register_and_watch_the_standings_live(new_page: Any, server: Server) -> None:
    n = random.randrange(10**5)
    first = new_account(server, f"سالم {n:05d}")
    second = new_account(server, f"نورة {n:05d}")
    one = phone(new_page, first, "203.0.113.31")
    two = phone(new_page, second, "198.51.100.32")

    # The header's cup opens the tournaments: none coming yet, and the form.
    one.locator("#nav-tournaments").tap()
    one.wait_for_selector("#tour-coming .muted")
    assert one.inner_text("#tournaments h1") == AR["tour.title"]
    assert one.evaluate("document.documentElement.dir") == "rtl"
    one.fill("#tour-new-name", f"كأس الخميس {n:05d}")
    one.select_option("#tour-new-game", "conquian")
    one.select_option("#tour-new-format", "knockout")
    one.select_option("#tour-new-seats", "4")
    assert one.locator("#tour-new-advance").is_hidden()  # one goes through from a pair
    assert one.locator("#tour-new-rounds").is_hidden()  # a knock-out's rounds follow
    one.fill("#tour-new-fee", str(FEE))
    # A start in the past: the server's code, in words, and the field to fix.
    one.fill("#tour-new-starts", "2020-01-01T18:00")
    one.locator("#tour-new-make").tap()
    one.wait_for_function("() => document.querySelector('#tour-new-error').textContent !== ''")
    assert one.inner_text("#tour-new-error") == AR["err.tournament_starts_at"]
    assert one.evaluate("document.activeElement.id") == "tour-new-starts"
    one.locator("#tour-make").scroll_into_view_if_needed()
    looks_right(one, "tournament-form-ar-390")

    # Starting at the first whole minute at least 40 s away: both register before it.
    one.fill("#tour-new-starts", start_minute(one, 40))
    one.locator("#tour-new-make").tap()
    one.wait_for_url(re.compile(r"#/tr/\d+$"))
    tournament = int(one.url.rsplit("/", 1)[1])
    wait_shown(one, "d.state === 'registering'")
    assert one.inner_text("#tour-state") == AR["tour.state.registering"]
    assert one.locator("#tour-entrants").is_visible()
    register(one)

    # The second player finds it in the list of coming tournaments.
    two.locator("#nav-tournaments").tap()
    row = two.locator(f'#tour-coming .tour-row[data-tournament="{tournament}"]')
    row.wait_for()
    assert AR["tour.state.registering"] in row.inner_text()
    looks_right(two, "tournaments-list-ar-390")
    row.locator("a").tap()
    two.wait_for_selector("#tour-register")
    register(two)

    # The first page sees the second entrant by itself (it asks every 3 s).
    wait_shown(one, "d.registered === 2")
    one.wait_for_function(
        "() => document.querySelector('#tour-registered').textContent.startsWith('2 ')"
    )
    for auth in (first, second):
        assert balance(server, auth) == GRANT - FEE
    looks_right(one, "tournament-registered-ar-390")

    # The start: two bots in the empty seats, round 1's tables in the bracket.
    wait_shown(one, "d.state === 'running' && d.rounds.length > 0", timeout=120_000)
    detail = shown(one)
    assert detail["round_count"] == 2  # 4 players in pairs: 4, then 2
    assert sum(e["bot"] for e in detail["entrants"]) == 2
    one.wait_for_selector("#tour-bracket .tour-table")
    assert one.inner_text("#tour-state") == AR["tour.state.running"]
    entries = {first["user"]["id"]: entry_of(detail, first["user"]["id"])}
    entries[second["user"]["id"]] = entry_of(detail, second["user"]["id"])

    # Each player taps their table in the bracket; the first keeps the tournament's
    # page open and plays in a second tab of the same browser.
    play_one = one.context.new_page()
    play_one.set_default_timeout(10_000)
    players = [(first, play_one, None), (second, two, two)]
    done: dict[int, set[int]] = {first["user"]["id"]: set(), second["user"]["id"]: set()}
    at_table: dict[int, int | None] = {first["user"]["id"]: None, second["user"]["id"]: None}
    redrawn_unchanged: list[tuple[int, int]] = []
    asked: list[str] = []  # the first page's polls while the tables play
    polls = re.compile(rf"/api/tournaments/{tournament}$")
    one.on("request", lambda r: asked.append(r.url) if polls.search(r.url) else None)
    last = tuple(one.evaluate(DRAWN))
    tables_seen_finished = 0
    shot_running = False
    watched: list[int] = []  # the table a third browser watched
    shot_mine = False
    end = time.monotonic() + PLAY_SECONDS
    while True:
        detail = shown(one)
        assert time.monotonic() < end, ("the tournament did not end in time", detail, at_table)
        if detail["state"] in ("complaints", "finished", "cancelled"):
            break
        # Drawn again only when the version moved.
        now = tuple(one.evaluate(DRAWN))
        if now[0] == last[0] and now[1] != last[1]:
            redrawn_unchanged.append(now)
        last = now
        finished = sum(t["state"] == "finished" for r in detail["rounds"] for t in r["tables"])
        if finished > tables_seen_finished:
            # A table finished: the page shows it without being asked.
            tables_seen_finished = finished
            one.wait_for_function(
                "(n) => document.querySelectorAll("
                "'#tour-bracket .tour-table[data-state=\"finished\"]').length >= n",
                arg=finished,
            )
            # A bot never goes through (the next player does).
            assert one.locator("#tour-bracket li.through .badge.bot").count() == 0
        moved = False
        for auth, page, tournament_page in players:
            user = auth["user"]["id"]
            table = at_table[user]
            if table is None:
                seen = shown_now(tournament_page or one)
                wanted = None if seen is None else table_for(seen, entries[user], done[user])
                if wanted is None:
                    continue
                if tournament_page is not None:  # one tap, from the page's top
                    link = page.locator("#tour-my-table")
                    link.wait_for()
                    assert link.get_attribute("href") == f"#/t/{wanted}"
                    assert link.inner_text() == AR["tour.play_table"]
                    box = page.locator(f'#tour-bracket a.tour-table[data-table="{wanted}"]')
                    assert box.locator(".tour-open").inner_text() == AR["tour.play_table"]
                    if not shot_mine:  # the first table: how the way to it looks
                        shot_mine = True
                        looks_right(page, "tournament-your-table-ar-390")
                    link.tap()
                else:
                    page.goto(f"{server.url}/#/t/{wanted}")
                page.wait_for_url(re.compile(rf"#/t/{wanted}$"))
                page.wait_for_function("() => !!window.sahrat?.view")
                at_table[user] = wanted
                # The table leads back to its tournament.
                assert page.get_attribute("#tournament-link", "href") == f"#/tr/{tournament}"
                if not watched:
                    watched.append(wanted)
                    watch_delayed(new_page, server, wanted, n)
                if not shot_running:
                    shot_running = True
                    one.locator("#tour-bracket").scroll_into_view_if_needed()
                    looks_right(one, "tournament-running-ar-390")
                continue
            if match_over(page):
                done[user].add(table)
                at_table[user] = None
                if tournament_page is not None:
                    page.go_back()  # to the tournament's page
                    page.wait_for_selector("#tour-name")
                continue
            moved = controller_move(page) or moved
        if not moved:
            time.sleep(0.1)
    # It kept asking (every 3 s), and drew again only when the answer was a new version.
    assert len(asked) >= 2 and redrawn_unchanged == []
    assert all(done.values()), done  # each played at least its first table

    # The result, the prizes held while the complaint window is open.
    detail = shown(one)
    assert detail["state"] == "complaints", detail["state"]
    one.wait_for_selector("#tour-result")
    one.wait_for_selector("#tour-held")
    assert one.locator("#tour-complain").is_visible()  # an entrant may complain
    # The pool: the fees paid less the house's share (rounded down).
    pool = 2 * FEE - 2 * FEE * HOUSE_PERMILLE // 1000
    assert detail["pool"] == pool
    assert one.inner_text("#tour-pool") == AR["tour.coins_n"].replace("{n}", str(pool))
    # The final's places are the result: both players have a standing, bots none.
    standing = {s["entry"]: s for s in detail["standings"]}
    assert set(standing) == set(entries.values())
    assert sorted(s["place"] for s in standing.values()) == [1, 2]
    rows = one.locator("#standings tbody tr")
    assert rows.count() == 2
    one.locator("#tour-complain").tap()
    one.wait_for_selector("#complaint-dialog textarea")
    looks_right(one, "tournament-complaint-ar-390")
    one.locator("#complaint-dialog button.close").tap()
    one.locator("#tour-result").scroll_into_view_if_needed()
    looks_right(one, "tournament-complaints-ar-390")

    # The window closes: the prize is paid, and the page stops asking.
    wait_shown(one, "d.state === 'finished'", timeout=(COMPLAINT_SECONDS + 30) * 1000)
    one.wait_for_selector("#tour-paid")
    assert one.inner_text("#tour-paid") == AR["tour.prizes_paid"]
    detail = shown(one)
    # Two players with a standing: one place paid, the whole pool to the first.
    winner = next(s for s in detail["standings"] if s["place"] == 1)
    other = next(s for s in detail["standings"] if s["place"] == 2)
    assert (winner["prize"], other["prize"] or 0) == (pool, 0)
    podium = one.locator("#tour-result .podium li.place-1")
    assert str(pool) in podium.inner_text()
    for auth in (first, second):
        won = entries[auth["user"]["id"]] == winner["entry"]
        # The ledger: the fee into the tournament's escrow, the prize out of it.
        assert tournament_coins(server, auth, tournament) == ([-FEE, pool] if won else [-FEE])
        assert balance(server, auth) == GRANT - FEE + (pool if won else 0)
    # Nothing is asked any more: no redraw, the version stays.
    draws = one.evaluate(DRAWS)
    time.sleep(4)
    assert one.evaluate(DRAWS) == draws
    one.evaluate("window.scrollTo(0, 0)")
    looks_right(one, "tournament-finished-ar-390")
    one.locator("#standings").scroll_into_view_if_needed()
    screenshot(one, "tournament-standings-ar-390")

    # The same page in English on a desktop: left to right, the same result.
    one.set_viewport_size(DESKTOP)
    one.locator("#lang-toggle").click()
    one.wait_for_function("() => document.documentElement.dir === 'ltr'")
    assert one.inner_text("#tour-standings h2") == EN["tour.standings"]
    one.evaluate("window.scrollTo(0, 0)")
    looks_right(one, "tournament-finished-en-desktop")
