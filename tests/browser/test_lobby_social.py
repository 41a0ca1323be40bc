"""The lobby as a regular sees it: a face and a name (changed in place, a taken or
hidden-character name refused in the reader's language), the leaderboard by coins
and by wins, my past matches as "lost · 2nd of 2 · 312 pts" rows linking to their
replays; and the fairness line's "SHA-256" reading left to right in Arabic."""

from __future__ import annotations

import hashlib
import json
import random
import re
import secrets
from pathlib import Path
from typing import Any

import httpx
import pytest

from .conftest import DESKTOP, PHONE_390
from .helpers import axe_violations, screenshot
from .test_replay_controls import FOREIGN_TEXT, auth, bots_match, own_match

STATIC = Path(__file__).resolve().parents[2] / "static"
AR = json.loads((STATIC / "i18n" / "ar.json").read_text(encoding="utf-8"))
EN = json.loads((STATIC / "i18n" / "en.json").read_text(encoding="utf-8"))
ONE_ROUND = {"game": "konkan", "options": {"players": 2, "rounds": 1, "break_seconds": 0}}
MINE = "#top, #me-card, #coins, #history"  # the lobby's parts this file is about
ONE_DEAL = {"game": "conquian", "options": {"wins_needed": 1, "break_seconds": 0}}


def fill(phrase: str, **values: Any) -> str:
    for key, value in values.items():
        phrase = phrase.replace("{" + key + "}", str(value))
    return phrase


def shown_names(page: Any) -> list[str]:
    """The player names on the page (their own words, in any script)."""
    return list(
        page.eval_on_selector_all(
            "#me-name, .leader-name, .match-others bdi, .seat-name",
            "els => els.map((e) => e.textContent.trim()).filter(Boolean)",
        )
    )


def expected_row(match: dict[str, Any], user_id: int, words: dict[str, str]) -> list[str]:
    """The words a history row must hold for this match, from its score sheet."""
    seat = match["players"].index(user_id)
    sheet = match["score_sheet"]
    totals = sheet["totals"]
    if match["game"] == "conquian":
        place = 1 + sum(1 for x in totals if x > totals[seat])
        score = fill(words["history.deals_won"], n=totals[seat])
    else:
        place = sheet["places"][seat]
        score = fill(words["history.points"], n=totals[seat])
    result = "won" if match["winner_seat"] == seat else "lost"
    ordinal = words[f"history.ord_{place}"]
    return [
        words[f"history.{result}"],
        fill(words["history.place"], place=ordinal, n=len(match["players"])),
        score,
    ]


def test_my_face_my_name_and_my_past_matches_in_arabic(new_page: Any, server: Any) -> None:
    page = new_page("ar", PHONE_390)
    page.click("#guest")
    page.wait_for_selector("#logout")
    user = page.evaluate("() => JSON.parse(localStorage.getItem('sahrat.user'))")
    token = page.evaluate("() => localStorage.getItem('sahrat.token')")
    match = bots_match(server.url, ONE_ROUND, token)
    page.reload()
    row = page.locator(f'#history .match-row[data-match="{match["id"]}"]')
    row.wait_for()
    assert row.locator("a").get_attribute("href") == f"#/m/{match['id']}"
    text = row.inner_text()
    for part in expected_row(match, user["id"], AR):
        assert part in text, (part, text)
    # Bots played the guest's seat: the match did not count, and the row says so.
    assert row.locator(".counted.no").inner_text() == AR["history.not_counted"]
    assert AR["game.konkan"] in text
    # Faces: the bot's beside the row, mine in my card; decorative (the name is written).
    assert row.locator(".face svg").count() == 1
    assert page.locator("#me-card .face svg").count() == 1
    for face in page.locator(".face").all():
        assert face.get_attribute("aria-hidden") == "true"
    assert page.inner_text("#me-name") == user["name"]
    # A face is the name's, whatever its case, and another name's face differs.
    same = page.evaluate(
        """async () => {
            const { avatar } = await import('/js/avatar.js');
            const a = avatar('Layla', 40).innerHTML, b = avatar('layla', 40).innerHTML;
            const c = avatar('Laylb', 40).innerHTML;
            const el = avatar('ليلى');
            const width = el.querySelector('svg').getAttribute('width');
            return [a === b, a === c, el instanceof HTMLElement, width];
        }"""
    )
    assert same == [True, False, True, "32"]

    # A new name, typed in the lobby: the card, the session and the server agree.
    new = f"سهران{random.randrange(10**6):06d}"
    print(f"new name: {new}")
    page.click("#rename summary")
    page.fill("#rename-input", new)
    page.click("#rename-save")
    page.wait_for_function(
        f"() => document.querySelector('#me-name')?.textContent === {json.dumps(new)}"
    )
    assert page.locator(".toast", has_text=fill(AR["me.renamed"], name=new)).count() == 1
    stored = page.evaluate("() => JSON.parse(localStorage.getItem('sahrat.user')).name")
    with httpx.Client(base_url=server.url, timeout=10) as http:
        assert http.get("/api/me", headers=auth(token)).json()["name"] == stored == new
        other = f"Taken{secrets.token_hex(3)}"
        made = http.post("/api/users", json={"name": other, "password": "long enough"})
        assert made.status_code == 201, made.text
    # A taken name (in another case), a name with a bidi control and one that mixes
    # alphabets in a word (an Arabic-Indic five for an o): refused, in Arabic.
    if not page.is_visible("#rename-input"):  # the card was drawn again, closed
        page.click("#rename summary")
    refusals = (
        (other.upper(), AR["err.name_taken"]),
        ("\u202eabc", AR["err.name_hidden_chars"]),
        ("b\u0665ss", AR["err.name_mixes_scripts"]),
    )
    for refused, says in refusals:
        page.fill("#rename-input", refused)
        page.click("#rename-save")
        page.locator(".toast.error", has_text=says).first.wait_for()
        assert page.inner_text("#me-name") == new
    with httpx.Client(base_url=server.url, timeout=10) as http:
        assert http.get("/api/me", headers=auth(token)).json()["name"] == new
    page.fill("#rename-input", new)
    page.locator("#me-card").scroll_into_view_if_needed()
    screenshot(page, "lobby-me-ar-390")
    page.locator("#history").scroll_into_view_if_needed()
    screenshot(page, "lobby-history-ar-390")
    assert axe_violations(page) == []
    assert page.evaluate(FOREIGN_TEXT, ["ar", shown_names(page), MINE]) == []
    # The row opens the replay.
    row.locator("a").click()
    page.wait_for_selector("#replay-play")
    assert page.url.endswith(f"#/m/{match['id']}")


def test_the_leaderboard_by_coins_and_by_wins_in_english(new_page: Any, server: Any) -> None:
    name = f"reg{secrets.token_hex(3)}"
    with httpx.Client(base_url=server.url, timeout=10) as http:
        made = http.post("/api/users", json={"name": name, "password": "long enough"})
        assert made.status_code == 201, made.text
        token, user = made.json()["token"], made.json()["user"]
    match = own_match(server.url, token, ONE_DEAL)  # a match of its own: ranked
    with httpx.Client(base_url=server.url, timeout=10) as http:
        balance = http.get("/api/me", headers=auth(token)).json()["balance"]
        wins = sum(m["won"] for m in http.get("/api/me/matches", headers=auth(token)).json())
    page = new_page("en", DESKTOP)
    page.click("details.account summary")
    page.fill("details.account [name=name]", name)
    page.fill("details.account [name=password]", "long enough")
    page.click("details.account button[type=submit]")
    page.wait_for_selector("#logout")
    # The board drawn signed out holds this row too, without "me": the one drawn after
    # signing in must mark it (and no later answer to the signed-out load may undo that).
    mine = page.locator(f'#leaderboard[data-by="coins"] .leader-row.me[data-user="{user["id"]}"]')
    mine.wait_for()
    assert page.get_attribute("#board-coins", "aria-selected") == "true"
    assert fill(EN["board.coins_n"], n=balance) in mine.inner_text()
    assert page.locator("#leaderboard .leader-row.me").count() == 1
    assert mine.locator(".face").count() == 1
    # The wins tab: the same player, counted by matches won.
    page.click("#board-wins")
    by_wins = page.locator(f'#leaderboard[data-by="wins"] .leader-row[data-user="{user["id"]}"]')
    by_wins.wait_for()
    assert page.get_attribute("#board-wins", "aria-selected") == "true"
    assert page.get_attribute("#board-coins", "aria-selected") == "false"
    assert fill(EN["board.wins_n"], n=wins) in by_wins.inner_text()
    values = page.eval_on_selector_all(
        "#leaderboard .leader-value", "els => els.map((e) => parseInt(e.textContent, 10))"
    )
    assert values == sorted(values, reverse=True)
    # The arrow keys move between the tabs.
    page.focus("#board-wins")
    page.keyboard.press("ArrowLeft")
    page.wait_for_selector('#leaderboard[data-by="coins"]')
    assert page.evaluate("() => document.activeElement.id") == "board-coins"
    # My history: a row for the Conquian deal, in English.
    row = page.locator(f'#history .match-row[data-match="{match["id"]}"]')
    for part in expected_row(match, user["id"], EN):
        assert part.casefold() in row.inner_text().casefold()  # "Lost": a capital by CSS
    # It played the match itself, in its seat, against bots: the match counted.
    assert row.locator(".counted.yes").inner_text() == EN["history.counted"]
    page.locator("#coins").scroll_into_view_if_needed()
    screenshot(page, "lobby-board-en-1280")
    assert axe_violations(page) == []
    assert page.evaluate(FOREIGN_TEXT, ["en", shown_names(page), MINE]) == []


def test_sha256_reads_left_to_right_in_arabic(new_page: Any) -> None:
    """The fairness line's "SHA-256" is a left-to-right isolate inside the Arabic phrase
    (no invisible marks in the catalogue to keep it right): measured on the rendered
    glyphs, its letters come before its digits, and it stands where the phrase puts it:
    left of the tick and of the word before it, right of the word after it."""
    marks = re.compile("[\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]")
    for words in (AR, EN):
        assert not [k for k, v in words.items() if k.startswith("fair.") and marks.search(v)]
    page = new_page("ar")
    page.wait_for_selector("#guest")
    seed, salt = "ab" * 32, "cd" * 32
    commitment = hashlib.sha256(f"{salt}:{seed}".encode()).hexdigest()
    found = page.evaluate(
        """async ([seed, salt, commitment]) => {
            const f = await import('/js/fairness.js');
            const view = { round: 1, round_commitment: commitment };
            f.noteCommitment({ info: { seed_commitment: 'c' }, view });
            const block = f.fairnessBlock({
              round: 1, round_seed: seed, round_salt: salt, round_commitment: commitment });
            document.querySelector('main').replaceChildren(block);
            const status = block.querySelector('#fair-status');
            for (let i = 0; i < 50 && status.dataset.result === undefined; i++) {
              await new Promise((r) => setTimeout(r, 50));
            }
            // Every character of the status (its index in the text) with where it is drawn.
            const drawn = [];
            const walk = document.createTreeWalker(status, NodeFilter.SHOW_TEXT);
            let at = 0;
            for (let n = walk.nextNode(); n; n = walk.nextNode()) {
              for (let i = 0; i < n.length; i++, at++) {
                const r = document.createRange();
                r.setStart(n, i); r.setEnd(n, i + 1);
                const box = r.getBoundingClientRect();
                if (box.width) drawn.push([at, box.left, box.right]);
              }
            }
            const text = status.textContent;
            return {
              result: status.dataset.result,
              text,
              term: status.querySelector('.term')?.getAttribute('dir'),
              drawn,
              visual: [...drawn].sort((a, b) => a[1] - b[1]).map((d) => text[d[0]]).join(''),
            };
        }""",
        [seed, salt, commitment],
    )
    assert found["result"] == "verified", found
    assert found["text"] == AR["fair.verified"].replace("{sha}", "SHA-256")
    assert found["term"] == "ltr"
    visual = found["visual"]  # left to right on the screen
    assert "SHA-256" in visual, visual  # not "256-SHA"
    text = found["text"]
    boxes = {index: (left, right) for index, left, right in found["drawn"]}

    def span(start: int, length: int) -> tuple[float, float]:
        """Where text[start:start + length] is drawn: its leftmost and rightmost edges."""
        drawn = [boxes[i] for i in range(start, start + length) if i in boxes]
        return min(left for left, _ in drawn), max(right for _, right in drawn)

    before, after = AR["fair.verified"].split("{sha}")
    word_before, word_after = before.split()[-1], after.split()[0]
    term = span(text.index("SHA-256"), len("SHA-256"))
    tick = span(text.index("✓"), 1)
    preceding = span(len(before.rstrip()) - len(word_before), len(word_before))
    following = span(
        len(before) + len("SHA-256") + len(after) - len(after.lstrip()), len(word_after)
    )
    # Right to left as the phrase is read: the tick, the word before, the term, the word
    # after (one line: the page is wide).
    assert tick[0] >= preceding[1] - 1 and preceding[0] >= term[1] - 1, (visual, tick, term)
    assert term[0] >= following[1] - 1, (visual, term, following)


@pytest.mark.parametrize("lang", ["ar", "en"])
def test_the_create_form_chooses_the_bots_level(new_page: Any, lang: str) -> None:
    """The table options of the form include the bots' level (and the break between
    rounds): a table made with simple bots and started with bots seats simple bots."""
    from .helpers import state
    from .test_client import guest

    page = new_page(lang, DESKTOP)
    guest(page)
    page.select_option("#new-game", "conquian")
    page.click("#create-table details.more summary")
    level = page.locator('#create-table [name="bot_level"]')
    assert level.input_value() == "expert"  # the default, shown as chosen
    level.select_option("simple")
    page.locator('#create-table [name="break_seconds"]').fill("30")
    page.click("#create")
    page.wait_for_selector("#start-bots")
    page.click("#start-bots")
    page.wait_for_function("() => window.sahrat?.info?.status === 'playing'", timeout=20_000)
    info = state(page)["info"]
    assert info["options"]["bot_level"] == "simple"
    assert info["options"]["break_seconds"] == 30
    assert [s["bot_level"] for s in info["seats"] if s["bot"]] == ["simple"]
