"""The browser client in a real Chromium against a real server (see conftest.py)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from sahrat.rules import conquian, konkan
from sahrat.rules.options import ConquianOptions, KonkanOptions
from sahrat.rules.rng import round_secret

from .conftest import DESKTOP, PHONE
from .helpers import (
    axe_violations,
    bot_action,
    close_round_summary,
    close_summary,
    match_over,
    my_turn,
    play_conquian,
    play_konkan,
    screenshot,
    seq,
    state,
    wait_seq_after,
)

STATIC = Path(__file__).resolve().parents[2] / "static"
AR = json.loads((STATIC / "i18n" / "ar.json").read_text(encoding="utf-8"))
EN = json.loads((STATIC / "i18n" / "en.json").read_text(encoding="utf-8"))


def guest(page: Any) -> None:
    page.click("#guest")
    page.wait_for_selector("#logout")


def create_table(page: Any, game: str, options: dict[str, int]) -> int:
    page.select_option("#new-game", game)
    for name, value in options.items():
        field = page.locator(f'#create-table [name="{name}"]')
        if not field.is_visible():
            page.click("#create-table details.more summary")
        field.fill(str(value))
    page.click("#create")
    page.wait_for_url(re.compile(r"#/t/\d+"))
    page.wait_for_selector("#waiting")
    return int(page.url.rsplit("/", 1)[1])


def test_a_double_tap_on_create_makes_one_table(new_page: Any) -> None:
    page = new_page("en")
    guest(page)
    posted: list[str] = []

    def note(request: Any) -> None:
        if request.method == "POST" and request.url.endswith("/api/tables"):
            posted.append(request.url)

    page.on("request", note)
    page.dblclick("#create")
    page.wait_for_url(re.compile(r"#/t/\d+"))
    page.wait_for_selector("#waiting")
    assert len(posted) == 1, posted


def test_a_double_tap_on_play_as_guest_makes_one_guest(new_page: Any) -> None:
    page = new_page("en")
    made: list[str] = []
    page.on("request", lambda r: made.append(r.url) if r.url.endswith("/api/guests") else None)
    page.dblclick("#guest")
    page.wait_for_selector("#logout")  # both taps came before the answer to the first
    assert len(made) == 1, made


def test_a_double_tap_on_start_starts_once(new_page: Any) -> None:
    page = new_page("en")
    guest(page)
    refused: list[int] = []
    page.on("response", lambda r: refused.append(r.status) if r.status >= 400 else None)
    create_table(page, "konkan", {"players": 2})
    page.dblclick("#start-bots")
    page.wait_for_selector("#hand [data-card]")
    assert refused == []
    assert page.inner_text("#last-error") == ""


def play_until_over(pages: list[Any], budget: float, on_turn: Any = None) -> None:
    """Let each page whose turn it is make the simple player's move by clicking."""
    end = time.monotonic() + budget
    while not all(match_over(page) for page in pages):
        # (the last summary is left open: it carries the match result)
        assert time.monotonic() < end, "the match did not end in time"
        moved = False
        for page in pages:
            close_round_summary(page)  # a player done reading: the next round waits for all
            if not my_turn(page):
                continue
            current = state(page)
            if on_turn is not None and on_turn(page, current):
                continue
            before = seq(page)
            action = bot_action(current["view"])
            if current["view"]["game"] == "conquian":
                play_conquian(page, action)
            else:
                play_konkan(page, action)
            wait_seq_after(page, before)
            moved = True
        if not moved:
            time.sleep(0.05)


def _phrases(catalogue: dict[str, str]) -> set[str]:
    """A catalogue's keys without its "KEY.mine" variants (the phrase about the reader's
    own seat, where the language's verbs change with the person)."""
    return {key for key in catalogue if not key.endswith(".mine")}


def test_catalogues_match_and_cover_every_key() -> None:
    assert _phrases(AR) == _phrases(EN)
    for catalogue in (AR, EN):
        for key in catalogue.keys() - _phrases(catalogue):
            base = key.removesuffix(".mine")
            assert base in catalogue, key  # a variant of a phrase that exists
            assert set(re.findall(r"\{\w+\}", catalogue[key])) <= set(
                re.findall(r"\{\w+\}", catalogue[base])
            ), key  # and filled in from the same words
    # Arabic conjugates: "you" won, discarded, went out in its own words.
    assert AR["ev.match_won.mine"] != AR["ev.match_won"]
    assert AR["summary.out_out.mine"] != AR["summary.out_out"]
    used = set()
    for source in (STATIC / "js").rglob("*.js"):  # table/ too
        used |= set(re.findall(r"""\bt\("([a-z_0-9.]+)\"""", source.read_text(encoding="utf-8")))
    assert used <= AR.keys(), sorted(used - AR.keys())
    assert AR["konkan.stock"] == "السحبة" and AR["konkan.discard_pile"] == "كومة النار"


def test_lobby_languages_and_screenshots(new_page: Any) -> None:
    page = new_page("ar")
    page.wait_for_selector("#guest")
    assert page.evaluate("document.documentElement.dir") == "rtl"
    assert page.evaluate("document.documentElement.lang") == "ar"
    guest(page)
    create_table(page, "konkan", {"players": 4})
    # The creator starts a free table with bots in the empty seats.
    page.click("#start-bots")
    page.wait_for_function("() => window.sahrat?.view")
    page.click("a.back")
    page.wait_for_selector(".table-row")
    # A new account starts with the welcome grant, shown in the lobby.
    page.wait_for_selector("#balance")
    assert page.locator("#coins").is_visible()
    screenshot(page, "lobby-ar-desktop")
    assert axe_violations(page) == []
    page.set_viewport_size(PHONE)
    screenshot(page, "lobby-ar-phone")
    page.click("#lang-toggle")  # the other catalogue loads on the first switch
    page.wait_for_function("() => document.documentElement.dir === 'ltr'")
    assert page.locator("h2", has_text=EN["lobby.tables"]).count() == 1
    screenshot(page, "lobby-en-phone")
    assert axe_violations(page) == []
    page.set_viewport_size(DESKTOP)
    screenshot(page, "lobby-en-desktop")


def conquian_for_two(host: Any, other: Any, options: dict[str, int]) -> int:
    """Two guests, ``host`` opening a Conquian table and ``other`` joining it from the
    lobby; returns the table's id once both pages show the deal."""
    guest(host)
    table = create_table(host, "conquian", options)
    guest(other)
    other.click(f'[data-table="{table}"] .join')
    other.wait_for_url(re.compile(rf"#/t/{table}$"))
    for page in (host, other):
        page.wait_for_function("() => !!window.sahrat?.view")
        page.wait_for_selector("#hand [data-card]")  # the game's drawing has loaded
    return table


def test_a_conquian_player_asks_for_a_suggestion(new_page: Any) -> None:
    # At a free table the player whose move it is may ask the expert; the suggestion is
    # a move of the phase the table is in, in words of what to do.
    host, other = new_page("ar"), new_page("en")
    conquian_for_two(host, other, {"wins_needed": 1})
    turn = state(host)["view"]["turn"]
    mover, waiter = (host, other) if state(host)["seat"] == turn else (other, host)
    assert waiter.locator("#ask-hint").count() == 0
    phase = state(mover)["view"]["phase"]
    mover.click("#ask-hint")
    mover.wait_for_selector("#hint-line")
    hint = mover.evaluate("() => window.sahrat.hint")
    moves = {"choose": {"take", "refuse"}, "turned_up": {"take", "pass"}, "discard": {"discard"}}
    assert hint["type"] in moves.get(phase, {"force", "decline_force", "take"}), (phase, hint)
    words = mover.inner_text("#hint-line")
    lead = "الاقتراح: " if mover is host else "Suggested: "
    assert words.startswith(lead) and len(words) > len(lead), words
    screenshot(mover, "conquian-hint-desktop")


def test_two_browsers_play_a_conquian_deal(new_page: Any) -> None:
    host, other = new_page("ar"), new_page("en")
    conquian_for_two(host, other, {"wins_needed": 1})
    assert host.locator("#hand [data-card]").count() == 10
    shots: set[str] = set()

    def look(page: Any, current: dict[str, Any]) -> bool:
        # Screenshot each side once it is its turn with something on the table.
        name = "conquian-ar-desktop" if page is host else "conquian-en-desktop"
        if name not in shots and any(current["view"]["melds"]):
            screenshot(page, name)
            shots.add(name)
        return False

    play_until_over([host, other], budget=60, on_turn=look)
    for page in (host, other):
        page.wait_for_selector("#match-over")
    assert state(host)["view"]["winner"] in (0, 1, None)
    # The match end: standings for both seats, the replay one click away, a rematch.
    for page in (host, other):
        page.wait_for_selector("#standings tbody tr >> nth=1")
        page.wait_for_selector("#replay-link")
    screenshot(host, "match-end-ar-desktop")
    screenshot(other, "match-end-en-desktop")
    winner = state(host)["view"]["winner"]
    if winner is not None:  # the winner reads "you won" in its language's grammar
        for page, catalogue in ((host, AR), (other, EN)):
            mine = state(page)["seat"] == winner
            key = (
                "ev.match_won.mine" if mine and "ev.match_won.mine" in catalogue else "ev.match_won"
            )
            before, after = catalogue[key].split("{who}")
            text = page.inner_text("#match-result")
            assert text.startswith(before) and text.endswith(after), text
            name = text.removeprefix(before).removesuffix(after)
            assert (name == catalogue["table.you"]) == mine, text
    assert axe_violations(host) == [] and axe_violations(other) == []
    # A player who reopens the finished match's page may still ask for the rematch.
    other.reload()
    other.click("#show-results")
    assert other.locator("#rematch").is_enabled()
    host.click("#rematch")
    other.wait_for_selector("#rematch-waiting")  # the other player sees who asked
    close_summary(host)
    host.click("#open-sheet")
    assert host.locator("#score-sheet tbody tr").count() >= 1
    screenshot(host, "conquian-ar-sheet")
    host.click("#score-sheet-close")
    # A quick reaction reaches the other browser, in its language.
    host.click("#reactions summary")
    host.click('[data-reaction="well_played"]')
    other.wait_for_selector(f'.toast.reaction:has-text("{EN["react.well_played"]}")')
    # The other player agrees too: a new match at the same seats, for both.
    other.click("#rematch")
    for page in (host, other):
        page.wait_for_function(
            "() => window.sahrat.info.status === 'playing' && !window.sahrat.view.match_over"
        )
        page.wait_for_selector("#summary", state="detached")
    assert host.locator("#hand [data-card]").count() == 10
    # My history lists the finished match; its replay steps through the moves.
    host.click("a.back")
    host.click("#history a")
    host.wait_for_selector("#replay .replay-actions li")
    host.click("#replay-next")
    host.click("#replay-next")
    assert host.locator(".replay-actions li.current").count() == 1
    # Every hand is face up at every step of the replay.
    assert host.locator("#replay-board .replay-seat").count() == 2
    assert host.locator("#replay-board .hand-cards .card").count() >= 1
    step = AR["replay.step"].replace("{n}", "2").split("{total}")[0]
    assert step in host.locator("#replay-step").inner_text()
    screenshot(host, "replay-ar-desktop")
    assert axe_violations(host) == []
    host.click("#lang-toggle")
    host.wait_for_function("() => document.documentElement.lang === 'en'")
    screenshot(host, "replay-en-desktop")
    assert axe_violations(host) == []


@pytest.mark.parametrize("lang", ["ar"])
def test_konkan_round_with_bots(new_page: Any, server: Any, lang: str) -> None:
    page = new_page(lang)
    guest(page)
    table = create_table(page, "konkan", {"players": 3, "rounds": 1})
    page.click("#start-bots")
    auto = None
    page.wait_for_function(
        "() => document.querySelector('#last-error')?.textContent || window.sahrat?.view"
    )
    if not state(page)["view"]:  # bots not in yet: the terminal client plays the other seats
        assert page.locator("#last-error").inner_text() == AR["err.no_bots_yet"]
        auto = [server.auto_player(table), server.auto_player(table)]
    page.wait_for_function("() => !!window.sahrat?.view", timeout=20_000)
    catalogue = AR if lang == "ar" else EN
    done: set[str] = set()

    def checks(page: Any, current: dict[str, Any]) -> bool:
        view = current["view"]
        opened = view["opened"][current["seat"]]
        if "refused" not in done and view["phase"] == "draw" and not opened:
            # Draw from the stock: the simple player could take the discard (opening at
            # once) or commit, and the refused lay-down below needs an unopened hand.
            before = seq(page)
            play_konkan(page, {"type": "draw"})
            wait_seq_after(page, before)
            return True
        if "refused" not in done and view["phase"] == "play" and not opened:
            # Three cards can never reach 51: "lay down" is disabled, the reason shown in Arabic.
            for card in view["hand"][:3]:
                page.click(f'#hand [data-card="{card}"]')
            page.click("#make-meld")
            page.wait_for_selector("#opening-total")
            assert page.locator("#lay-down").is_disabled()
            shown = page.locator("#refused-why").inner_text()
            assert shown == catalogue["konkan.why_invalid"] or shown.startswith(
                catalogue["konkan.why_below"].split("{")[0]
            )
            page.click("#clear")
            done.add("refused")
            return True
        if "reload" not in done:
            # A reload mid-round comes back to the same table, hand and seq.
            before = state(page)
            page.reload()
            page.wait_for_function("() => !!window.sahrat?.view")
            page.wait_for_selector("#hand [data-card]")
            after = state(page)
            assert after["info"]["seq"] == before["info"]["seq"]
            assert sorted(after["view"]["hand"]) == sorted(before["view"]["hand"])
            done.add("reload")
            screenshot(page, "konkan-ar-desktop")
            assert axe_violations(page) == []
            page.set_viewport_size(PHONE)
            screenshot(page, "konkan-ar-phone")
            page.click("#lang-toggle")
            page.wait_for_function("() => document.documentElement.dir === 'ltr'")
            screenshot(page, "konkan-en-phone")
            assert axe_violations(page) == []
            page.set_viewport_size(DESKTOP)
            screenshot(page, "konkan-en-desktop")
            page.click("#lang-toggle")
            return True
        if "drop" not in done and view["melds"]:
            # A dropped socket reconnects by itself and resumes from the last seq.
            page.evaluate("window.sahratConn.drop()")
            page.wait_for_selector("#conn-status.reconnecting", timeout=5_000)
            page.wait_for_selector("#conn-status.online", timeout=10_000)
            done.add("drop")
            screenshot(page, "konkan-ar-melds")
            return True
        return False

    try:
        play_until_over([page], budget=240, on_turn=checks)
    finally:
        for proc in auto or []:
            proc.kill()
    assert {"refused", "reload"} <= done
    # The round's end reveals its seed and salt; the page checks them against the
    # commitment it was shown (SHA-256 in the browser) and says so.
    page.wait_for_function(
        "(texts) => texts.some((t) => document.body.innerText.includes(t))",
        arg=[
            catalogue["fair.verified"].replace("{sha}", "SHA-256"),  # the term isolated
            catalogue["fair.verified_late"],
            catalogue["fair.hand_verified"],
        ],
        timeout=10_000,
    )
    assert catalogue["fair.mismatch"] not in page.locator("body").inner_text()
    assert catalogue["fair.hand_mismatch"] not in page.locator("body").inner_text()
    screenshot(page, "konkan-ar-round-end")
    assert axe_violations(page) == []
    page.wait_for_selector("#match-over")
    close_summary(page)
    page.click("#open-sheet")
    assert page.locator("#score-sheet tbody tr").count() == 1
    screenshot(page, "konkan-ar-sheet")


@pytest.mark.parametrize(("game", "players"), [("konkan", 4), ("konkan", 3), ("conquian", 2)])
def test_the_page_deals_a_revealed_seed_like_the_engine(
    new_page: Any, game: str, players: int
) -> None:
    """The round-end check recomputes, in the browser, the deck a revealed round seed
    gives and the cards it deals each seat: it must be the engine's deal exactly."""
    engine = konkan if game == "konkan" else conquian
    options = KonkanOptions(players=players) if game == "konkan" else ConquianOptions()
    page = new_page("en")
    for match_seed in ("table-7", "4b1d9e0c2f"):
        state = engine.new_game(options, match_seed)
        round_seed = round_secret(match_seed, 1).seed
        hands = page.evaluate(
            """async ([game, seed, players, dealer]) => {
                const m = await import("/js/fairness.js");
                const order = await m.dealtOrder(game, seed, 0);
                return [...Array(players).keys()].map((seat) =>
                    m.handFrom(order, { game, players, dealer, seat }).sort());
            }""",
            [game, round_seed, players, int(state.dealer)],
        )
        assert hands == [sorted(str(card) for card in hand) for hand in state.hands]
