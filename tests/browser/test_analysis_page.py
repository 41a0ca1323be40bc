"""The analysis page of a finished match (#/m/<id>/analysis, docs/analysis.md), against
a hand-written analysis (fixtures/analysis_konkan.json) that the test serves in place of
the server's REST: asked for, queued, running, done; each player's figures, each round's
chart, the decisions worst first with their position, moves and facts in words, and
the puzzles judged by their grid — in Arabic on a 390 px phone with touch, and in
English on a desktop; no sideways scroll, axe clean."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from .conftest import DESKTOP, PHONE_390
from .helpers import OUTSIDE, axe_violations, screenshot
from .test_replay_controls import FOREIGN_TEXT, bots_match

STATIC = Path(__file__).resolve().parents[2] / "static"
CATALOGUES = {
    lang: json.loads((STATIC / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))
    for lang in ("ar", "en")
}
ANALYSIS = json.loads(
    (Path(__file__).parent / "fixtures" / "analysis_konkan.json").read_text(encoding="utf-8")
)
MATCH = 4242
SUITS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
ISOLATES = str.maketrans("", "", "\u2066\u2068\u2069")


def label(card: str) -> str:
    """A card as the page writes it in words (static/js/cards.js: label)."""
    face = card.rstrip("'")
    return ("10" if face[0] == "T" else face[:-1]) + SUITS[face[-1]]


def words(lang: str, key: str, **params: Any) -> str:
    text = str(CATALOGUES[lang][key])
    for name, value in params.items():
        text = text.replace("{" + name + "}", str(value))
    return text


def move_words(lang: str, move: dict[str, Any], done: bool, pile: str | None) -> str:
    card = move.get("card") or pile
    return words(
        lang, f"analysis.{'did' if done else 'do'}.{move['move']}", card=label(card or "2C")
    )


def text_of(page: Any, selector: str) -> str:
    return str(page.inner_text(selector)).translate(ISOLATES)


class Analyst:
    """Answers the page's analysis requests in place of the server: the POST with
    ``posted`` (status, body, headers), each GET with the next of ``states`` (the last
    one again once they run out)."""

    def __init__(
        self, posted: list[tuple[int, dict[str, Any], dict[str, str]]], states: list[Any]
    ) -> None:
        self.posted = posted
        self.states = states
        self.asked: list[str] = []

    def __call__(self, route: Any) -> None:
        method = route.request.method
        self.asked.append(method)
        if method == "POST":
            status, body, headers = self.posted.pop(0) if len(self.posted) > 1 else self.posted[0]
        else:
            status, body, headers = (
                200,
                self.states.pop(0) if len(self.states) > 1 else self.states[0],
                {},
            )
        route.fulfill(
            status=status, headers=headers, content_type="application/json", body=json.dumps(body)
        )


def open_analysis(page: Any, server: Any, analyst: Analyst, match: int = MATCH) -> None:
    page.route(f"**/api/matches/{match}/analysis*", analyst)
    page.goto(f"{server.url}/#/m/{match}/analysis")


def no_overflow(page: Any) -> None:
    assert page.evaluate(OUTSIDE) == []
    assert page.evaluate("() => document.scrollingElement.scrollWidth <= innerWidth")


def done(analysis: dict[str, Any] = ANALYSIS) -> dict[str, Any]:
    return {"status": "done", "position": None, "progress": 1, "analysis": analysis}


def tagged_worst_first(seat: int | None = None) -> list[dict[str, Any]]:
    shown = [d for d in ANALYSIS["decisions"] if d["tag"] and seat in (None, d["seat"])]
    return sorted(shown, key=lambda d: -d["lost"])


def test_the_analysis_on_a_phone_in_arabic(new_page: Callable[..., Any], server: Any) -> None:
    ar = CATALOGUES["ar"]
    page = new_page("ar", PHONE_390, touch=True)
    analyst = Analyst(
        [(202, {"status": "queued", "position": 2, "progress": 0}, {})],
        [
            {"status": "queued", "position": 1, "progress": 0},
            {"status": "running", "position": None, "progress": 0.5},
            done(),
        ],
    )
    open_analysis(page, server, analyst)
    # Asked for, then waited for: its place in the queue, then its progress.
    page.wait_for_selector('#analysis[data-status="queued"]')
    assert words("ar", "analysis.queued", n=2) in text_of(page, "#analysis-status")
    page.wait_for_function(
        "(next) => document.querySelector('#analysis-status')?.innerText.includes(next)",
        arg=ar["analysis.queued_next"],
    )
    page.wait_for_selector('#analysis[data-status="running"]')
    assert page.get_attribute("#analysis-progress", "value") == "0.5"
    assert words("ar", "analysis.running", pct=50) in text_of(page, "#analysis-status")
    page.wait_for_selector('#analysis[data-status="done"]', timeout=8000)
    assert analyst.asked[:4] == ["POST", "GET", "GET", "GET"], analyst.asked

    # Each player: name, accuracy, points lost per round, the counts of each tag.
    for player in ANALYSIS["players"]:
        box = text_of(page, f'.an-player[data-seat="{player["seat"]}"]')
        assert player["name"] in box
        assert words("ar", "analysis.percent", n=f"{player['accuracy']:.1f}") in box
        assert f"{player['lost_per_round']:.1f}" in box
        counts = page.locator(
            f'.an-player[data-seat="{player["seat"]}"] .an-count'
        ).all_inner_texts()
        assert [c.split()[-1] for c in counts] == [
            str(player["inaccuracies"]),
            str(player["mistakes"]),
            str(player["blunders"]),
        ]
    # Each round: one line a seat with a point a decision, a legend by name, the figures.
    for round_ in ANALYSIS["rounds"]:
        section = page.locator(f'.an-round[data-round="{round_["round"]}"]')
        paths = section.locator("svg.an-chart path.an-line")
        assert paths.count() == len(round_["seats"])
        for seat in round_["seats"]:
            d = section.locator(f'path.an-line[data-seat="{seat["seat"]}"]').get_attribute("d")
            assert d.count("L") + 1 == len(seat["curve"]), d
        assert section.locator(".an-legend li").all_inner_texts() == ANALYSIS["seats"]
        row = section.locator('.an-figures tbody tr[data-seat="0"]').inner_text()
        first = round_["seats"][0]
        assert f"{first['lost']:.1f}" in row and f"{abs(first['luck']):.1f}" in row
    # The round's fact: who kept a joker.
    assert words("ar", "analysis.fact.joker_kept", who=ANALYSIS["seats"][2]) in text_of(
        page, '.an-round[data-round="1"]'
    )
    no_overflow(page)
    screenshot(page, "analysis-summary-ar-390")
    assert axe_violations(page) == []
    assert page.evaluate(FOREIGN_TEXT, ["ar", ANALYSIS["seats"]]) == []

    # The decisions, worst first, the tagged ones only at first.
    page.locator("#analysis-tab-decisions").tap()
    items = page.locator(".an-decision")
    worst = tagged_worst_first()
    assert [int(i) for i in items.evaluate_all("(els) => els.map((e) => e.dataset.id)")] == [
        d["id"] for d in worst
    ]
    for d in worst[:3]:
        item = f'.an-decision[data-id="{d["id"]}"]'
        text = text_of(page, item)
        pile = d["position"]["pile"]
        assert ar[f"analysis.tag.{d['tag']}"] == page.inner_text(f"{item} .an-tag")
        assert page.locator(f"{item} .an-tag.tag-{d['tag']}").count() == 1
        assert words("ar", "analysis.lost_points", n=f"{d['lost']:.1f}") in text
        assert ANALYSIS["seats"][d["seat"]] in text
        assert move_words("ar", d["played"], True, pile) in text
        assert move_words("ar", d["best"], False, pile) in text_of(page, f"{item} .an-best")
        # The position: the seat's hand, the table's melds, the pile's card.
        hand = page.locator(f"{item} .an-hand [data-card]")
        assert sorted(hand.evaluate_all("(els) => els.map((e) => e.dataset.card)")) == sorted(
            d["position"]["hand"]
        )
        assert page.locator(f"{item} .an-table-melds .table-meld").count() == len(
            d["position"]["melds"]
        )
        assert page.locator(f'{item} .replay-pile [data-card="{pile}"]').count() == 1
        # The better move's melds, drawn.
        laid = sum(len(m) for m in d["best"].get("melds", []))
        assert page.locator(f"{item} .an-best .an-melds [data-card]").count() == laid
    facts = text_of(page, f'.an-decision[data-id="{worst[1]["id"]}"] .an-facts')
    assert words("ar", "analysis.fact.could_take_to_open", card=label("9S")) in facts
    hindsight = page.locator('.an-decision[data-id="5"] .an-hindsight')
    assert hindsight.inner_text() == ar["analysis.hindsight"]
    assert words(
        "ar", "analysis.fact.fed_out", card=label("QC"), next=ANALYSIS["seats"][3]
    ) in text_of(page, '.an-decision[data-id="5"]')
    screenshot(page, "analysis-decisions-ar-390")
    no_overflow(page)
    assert axe_violations(page) == []
    # A filter by player; then every decision, the untagged ones too.
    page.select_option("#analysis-who", "1")
    ids = items.evaluate_all("(els) => els.map((e) => Number(e.dataset.id))")
    assert ids == [d["id"] for d in tagged_worst_first(1)]
    page.select_option("#analysis-who", "all")
    page.locator("#analysis-tagged").tap()
    assert items.count() == len(ANALYSIS["decisions"])
    assert page.locator('.an-decision[data-tag="none"]').count() == 2

    # The puzzles, worst first: a draw (taking the pile's card is right), then a play.
    page.locator("#analysis-tab-puzzles").tap()
    puzzles = sorted((d for d in ANALYSIS["decisions"] if d["puzzle"]), key=lambda d: -d["lost"])
    page.wait_for_selector(f'#puzzle[data-id="{puzzles[0]["id"]}"]')
    assert words("ar", "analysis.puzzle.n_of", n=1, total=2) in page.inner_text("#puzzle h2")
    page.locator("#puzzle-take").tap()
    assert page.get_attribute("#puzzle-result", "data-right") == "true"
    assert ar["analysis.puzzle.best"] in page.inner_text("#puzzle-result")
    page.locator("#puzzle-next").tap()
    play = puzzles[1]
    page.wait_for_selector(f'#puzzle[data-id="{play["id"]}"]')
    grid = {(g["move"], g["card"]): g["value"] for g in play["grid"]}
    best = max(grid.values())
    # Keeping the melds back and discarding 7♥ (what was played): wrong, the best shown.
    page.locator('#puzzle-hand [data-card="7H"]').tap()
    assert page.get_attribute('#puzzle-hand [data-card="7H"]', "aria-pressed") == "true"
    page.locator("#puzzle-answer").tap()
    assert best - grid[("wait", "7H")] >= ANALYSIS["thresholds"]["inaccuracy"]
    assert page.get_attribute("#puzzle-result", "data-right") == "false"
    assert ar["analysis.puzzle.wrong"] in page.inner_text("#puzzle-result")
    assert move_words("ar", play["best"], False, None) in text_of(page, "#puzzle-best")
    screenshot(page, "analysis-puzzle-ar-390")
    no_overflow(page)
    assert axe_violations(page) == []
    # Again, laying down first: the laid cards are no discards; 4♥ loses 4.2 (wrong),
    # A♠ 1.1 (within the tolerance of 4: right, though not the best).
    page.locator("#puzzle-again").tap()
    page.locator("#puzzle-lay").tap()
    assert page.locator('#puzzle-hand [data-card="7H"]').is_disabled()
    assert "an-laid" in (page.get_attribute('#puzzle-hand [data-card="QS"]', "class") or "")
    for card, right in (("4H", False), ("AS", True)):
        assert (best - grid[("open", card)] < ANALYSIS["thresholds"]["inaccuracy"]) is right
        page.locator(f'#puzzle-hand [data-card="{card}"]').tap()
        page.locator("#puzzle-answer").tap()
        assert page.get_attribute("#puzzle-result", "data-right") == ("true" if right else "false")
        if not right:
            page.locator("#puzzle-again").tap()
            page.locator("#puzzle-lay").tap()
    assert ar["analysis.puzzle.right"] in page.inner_text("#puzzle-result")
    assert words("ar", "analysis.puzzle.score", right=2, n=2) in page.inner_text("#puzzle")
    no_overflow(page)


def test_the_analysis_in_english_on_a_desktop(new_page: Callable[..., Any], server: Any) -> None:
    page = new_page("en", DESKTOP)
    open_analysis(page, server, Analyst([(200, done(), {})], [done()]))
    page.wait_for_selector('#analysis[data-status="done"]')
    assert page.locator("svg.an-chart").count() == len(ANALYSIS["rounds"])
    assert words("en", "analysis.percent", n="83.3") in page.inner_text('.an-player[data-seat="0"]')
    screenshot(page, "analysis-summary-en-1280")
    page.locator("#analysis-tab-decisions").click()
    top = tagged_worst_first()[0]
    item = f'.an-decision[data-id="{top["id"]}"]'
    assert page.inner_text(f"{item} .an-tag") == CATALOGUES["en"]["analysis.tag.blunder"]
    assert move_words("en", top["best"], False, None) in text_of(page, f"{item} .an-best")
    screenshot(page, "analysis-decisions-en-1280")
    no_overflow(page)
    assert axe_violations(page) == []
    assert page.evaluate(FOREIGN_TEXT, ["en", ANALYSIS["seats"]]) == []
    # From the analysis back to the match's replay.
    assert page.get_attribute("#analysis-replay", "href") == f"#/m/{MATCH}"
    # The other language, in place: the part shown stays, its words change.
    page.click("#lang-toggle")
    page.wait_for_function("() => document.documentElement.dir === 'rtl'")
    assert page.inner_text("#analysis-tab-decisions") == CATALOGUES["ar"]["analysis.tab.decisions"]
    assert page.get_attribute("#analysis", "data-tab") == "decisions"
    tag = page.inner_text(f"{item} .an-tag")
    assert tag == CATALOGUES["ar"]["analysis.tag.blunder"]


def test_a_busy_queue_and_a_match_that_cannot_be_analysed(
    new_page: Callable[..., Any], server: Any
) -> None:
    ar = CATALOGUES["ar"]
    page = new_page("ar", PHONE_390, touch=True)
    busy = (503, {"detail": {"code": "analysis_busy", "message": "busy"}}, {"Retry-After": "2"})
    analyst = Analyst([busy, (200, done(), {})], [done()])
    open_analysis(page, server, analyst)
    page.wait_for_selector('#analysis[data-status="busy"]')
    assert ar["analysis.busy"].split("{n}")[0] in page.inner_text("#analysis-status")
    # After the Retry-After, asked again: this time it is there.
    page.wait_for_selector('#analysis[data-status="done"]', timeout=6000)
    assert analyst.asked[:2] == ["POST", "POST"]
    refused = Analyst([(409, {"detail": {"code": "not_analysable", "message": "no"}}, {})], [{}])
    open_analysis(page, server, refused, match=MATCH + 1)
    page.wait_for_selector('#analysis[data-status="not_analysable"]')
    assert ar["analysis.not_analysable"] in page.inner_text("#analysis-status")
    no_overflow(page)
    # A match this viewer may not see (or none): the server's words for it.
    unknown = Analyst([(404, {"detail": {"code": "no_such_match", "message": "no"}}, {})], [{}])
    open_analysis(page, server, unknown, match=MATCH + 2)
    page.wait_for_selector('#analysis[data-status="error"]')
    assert ar["err.no_such_match"] in page.inner_text("#analysis-status")
    assert axe_violations(page) == []


# One short round between two bots: the server's analysis of it takes seconds, not minutes.
ONE_ROUND = {"game": "konkan", "options": {"players": 2, "rounds": 1, "break_seconds": 0}}


def test_a_real_match_analysed_by_the_server(new_page: Callable[..., Any], server: Any) -> None:
    """No fixture: a match the bots play on the test server, its replay's link to the
    analysis, and the server's own analysis (POST, then GET until done) on the page."""
    match = bots_match(server.url, ONE_ROUND)
    page = new_page("ar", PHONE_390, touch=True)
    page.goto(f"{server.url}/#/m/{match['id']}")
    page.locator("#analysis-link").tap()
    page.wait_for_selector("#analysis[data-status]")
    seen = {page.get_attribute("#analysis", "data-status")}
    end = time.monotonic() + 300
    while "done" not in seen and time.monotonic() < end:
        status = page.get_attribute("#analysis", "data-status")
        assert status in ("asking", "queued", "running", "done"), status
        seen.add(status)
        page.wait_for_timeout(250)
    assert "done" in seen, seen
    with httpx.Client(base_url=server.url, timeout=30) as http:
        kept = http.get(f"/api/matches/{match['id']}/analysis").json()
    assert kept["status"] == "done"
    analysis = kept["analysis"]
    assert page.locator(".an-player").count() == len(analysis["players"]) == 2
    # A bot's seat is named as at the table, in the reader's language.
    with httpx.Client(base_url=server.url, timeout=30) as http:
        players = http.get(f"/api/matches/{match['id']}").json()["players"]
    assert None in players  # the seat the table's bot filled
    for seat, player in enumerate(players):
        if player is None:
            name = words("ar", "table.bot_name", n=seat + 1)
            assert page.inner_text(f'.an-player[data-seat="{seat}"] .an-player-name') == name
    for round_ in analysis["rounds"]:
        lines = page.locator(f'.an-round[data-round="{round_["round"]}"] path.an-line')
        assert lines.count() == sum(1 for s in round_["seats"] if s["curve"])
    no_overflow(page)
    page.locator("#analysis-tab-decisions").tap()
    tagged = [d for d in analysis["decisions"] if d["tag"]]
    assert page.locator(".an-decision").count() == len(tagged)
    page.locator("#analysis-tagged").tap()
    assert page.locator(".an-decision").count() == len(analysis["decisions"])
    most = max(d["lost"] for d in analysis["decisions"])
    first = page.locator(".an-decision").first
    worst = next(d for d in analysis["decisions"] if str(d["id"]) == first.get_attribute("data-id"))
    assert worst["lost"] == most  # the worst first (of equals, any)
    assert first.locator(".an-hand [data-card]").count() == len(worst["position"]["hand"])
    screenshot(page, "analysis-real-decisions-ar-390")
    no_overflow(page)
    assert axe_violations(page) == []
    page.locator("#analysis-tab-puzzles").tap()
    if any(d["puzzle"] for d in analysis["decisions"]):
        page.wait_for_selector("#puzzle")
    else:
        page.wait_for_selector("#puzzle-none")
