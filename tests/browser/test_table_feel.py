"""The table as a regular would use it: the hand sorted on the deal, kept across a
reload and reordered by touch; the discard taken in one gesture (every proposal
checked by the engine); numbers that read right in Arabic (by rendered positions);
no string of the other language on the page."""

from __future__ import annotations

from typing import Any

import pytest

from sahrat.rules import konkan
from sahrat.rules.cards import parse_card, parse_cards
from sahrat.rules.options import KonkanOptions

from .conftest import DESKTOP, PHONE, PHONE_390
from .helpers import (
    OUTSIDE,
    axe_violations,
    bot_action,
    play_konkan,
    screenshot,
    seq,
    state,
    wait_seq_after,
)
from .test_client import AR, EN, create_table, guest

SUITS = "SHDC"
RANKS = {r: i for i, r in enumerate("A23456789TJQK", start=1)}


def _key(card: str, suit_first: bool) -> int:
    face = card.rstrip("'")
    if face == "JK":
        return 10_000
    suit, rank = SUITS.index(face[-1]), RANKS[face[:-1]]
    return suit * 100 + rank if suit_first else rank * 100 + suit


# Sorted faces: the two decks' twins (7H and 7H') may come in either order.
def by_suit(cards: list[str]) -> list[str]:
    return [c.rstrip("'") for c in sorted(cards, key=lambda c: _key(c, True))]


def by_rank(cards: list[str]) -> list[str]:
    return [c.rstrip("'") for c in sorted(cards, key=lambda c: _key(c, False))]


def shown(page: Any, faces: bool = True) -> list[str]:
    cards = page.eval_on_selector_all("#hand [data-card]", "els => els.map(e => e.dataset.card)")
    return [c.rstrip("'") for c in cards] if faces else list(cards)


def touch_drag(page: Any, source: str, target: str) -> None:
    """Drag one card onto another with a finger (Chrome's touch input, not a mouse)."""
    start = page.locator(f'#hand [data-card="{source}"]').bounding_box()
    end = page.locator(f'#hand [data-card="{target}"]').bounding_box()
    x0, y0 = start["x"] + start["width"] / 2, start["y"] + start["height"] / 2
    # Just past the target's middle, in the direction of the move.
    x1 = end["x"] + end["width"] * (0.7 if end["x"] > start["x"] else 0.3)
    y1 = end["y"] + end["height"] / 2
    cdp = page.context.new_cdp_session(page)

    def touch(kind: str, points: list[dict[str, float]]) -> None:
        cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})

    touch("touchStart", [{"x": x0, "y": y0}])
    for step in range(1, 11):
        touch("touchMove", [{"x": x0 + (x1 - x0) * step / 10, "y": y0 + (y1 - y0) * step / 10}])
    touch("touchEnd", [])
    cdp.detach()


# Every visible text of the page that holds a word of the other language. Player
# names are the players' own and card codes are not words: both are left out.
FOREIGN_TEXT = """(lang) => {
  const names = new Set([JSON.parse(localStorage.getItem('sahrat.user') || '{}').name,
    ...(window.sahrat?.info?.seats || []).map((s) => s.name)].filter(Boolean));
  const foreign = lang === 'ar' ? /[A-Za-z]{2,}/ : /[\\u0600-\\u06FF]/;
  const out = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walk.nextNode(); node; node = walk.nextNode()) {
    const el = node.parentElement;
    const text = node.textContent.trim();
    if (!text || !el.getClientRects().length) continue;
    if (getComputedStyle(el).visibility === 'hidden') continue;
    // a name's avatar shows its first letter: the name's, in the name's own script
    if (el.closest('[lang]:not(html)') || el.closest('.card') || el.closest('.face')
        || names.has(text)) continue;
    if (foreign.test(text.replace(/\\bJK\\b/g, ''))) out.push(text);
  }
  return out;
}"""


def test_hand_sorted_on_deal_dragged_by_touch_and_kept(new_page: Any) -> None:
    page = new_page("ar", PHONE_390, touch=True)
    guest(page)
    create_table(page, "konkan", {"players": 2, "rounds": 1})
    page.click("#start-bots")
    page.wait_for_selector("#hand [data-card]")
    hand = state(page)["view"]["hand"]
    assert shown(page) == by_suit(hand)  # sorted on the deal, by suit by default
    # A fan: 14–15 cards in at most two rows at 390 px, the buttons on screen.
    rows = page.eval_on_selector_all(
        "#hand [data-card]",
        "els => new Set(els.map(e => Math.round(e.getBoundingClientRect().top))).size",
    )
    assert rows <= 2
    for selector in (
        "#turn-line",
        ".actions",
        "#hand [data-card] >> nth=0",
        "#hand [data-card] >> nth=-1",
    ):
        box = page.locator(selector).first.bounding_box()
        assert box and box["y"] >= 0 and box["y"] + box["height"] <= PHONE_390["height"], selector
    assert page.evaluate(FOREIGN_TEXT, "ar") == []
    screenshot(page, "hand-ar-phone")

    # The choice of sort is remembered; a reload keeps the order.
    page.click("#sort-rank")
    assert shown(page) == by_rank(hand)
    page.reload()
    page.wait_for_selector("#hand [data-card]")
    assert shown(page) == by_rank(state(page)["view"]["hand"])
    assert page.get_attribute("#sort-rank", "aria-pressed") == "true"

    # A finger drags the first card onto the fourth: it lands beside it, and stays there.
    before = shown(page, faces=False)
    touch_drag(page, before[0], before[3])
    after = shown(page, faces=False)
    assert after != before and sorted(after) == sorted(before)
    assert abs(after.index(before[0]) - after.index(before[3])) == 1
    assert page.locator("#hand .card.selected").count() == 0  # a drag is not a tap
    page.reload()
    page.wait_for_selector("#hand [data-card]")
    assert shown(page, faces=False) == after

    # Back to "by suit"; a drawn card lands in its place, marked.
    page.click("#sort-suit")
    drawn = False
    while not drawn:
        page.wait_for_function(
            "() => { const s = window.sahrat; return s.view.turn === s.seat && !s.busy; }",
            timeout=20_000,
        )
        view = state(page)["view"]
        before_seq = seq(page)
        if view["phase"] == "draw":
            page.keyboard.press("d")  # the keyboard's "draw"
            drawn = True
        else:
            play_konkan(page, bot_action(view))
        wait_seq_after(page, before_seq)
    page.wait_for_selector("#hand .card.fresh")
    new = state(page)["view"]
    assert shown(page) == by_suit(new["hand"])
    fresh = page.get_attribute("#hand .card.fresh", "data-card")
    assert fresh not in view["hand"] or new["hand"].count(fresh) > view["hand"].count(fresh)
    page.click("#hint-toggle")
    # The server's bot suggests a move at a free table; its cards are outlined.
    page.keyboard.press("b")
    page.wait_for_selector("#hint-line", timeout=15_000)
    assert page.locator("#hand .card.suggested").count() >= 1
    screenshot(page, "hand-drawn-ar-phone")
    page.set_viewport_size(DESKTOP)
    screenshot(page, "hand-hints-ar-desktop")
    assert axe_violations(page) == []
    # The rest of the turn by keyboard: to the hand, along it, pick a card, discard it.
    page.keyboard.press("f")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    card = page.evaluate("() => document.activeElement.dataset.card")
    assert card
    page.keyboard.press("Space")
    # Drawn again, the page keeps the focus on the same card, now picked.
    assert page.evaluate("() => document.activeElement.dataset.card") == card
    assert page.get_attribute(f'#hand [data-card="{card}"]', "aria-pressed") == "true"
    before_seq = seq(page)
    page.keyboard.press("x")
    wait_seq_after(page, before_seq)
    assert page.evaluate(
        """(card) => window.sahrat.log.some(({ ev }) =>
            ev.type === 'discard' && ev.seat === window.sahrat.seat && ev.card === card)""",
        card,
    )
    page.keyboard.press("?")
    page.wait_for_selector("#shortcuts-help")
    screenshot(page, "shortcuts-ar-desktop")
    page.keyboard.press("Escape")
    page.wait_for_selector("#shortcuts-help", state="detached")
    page.click("#lang-toggle")
    # (the other language's catalogue is fetched on the first switch)
    page.wait_for_function("() => document.documentElement.lang === 'en'")
    assert page.evaluate(FOREIGN_TEXT, "en") == []
    assert axe_violations(page) == []
    screenshot(page, "hand-hints-en-desktop")
    page.set_viewport_size(PHONE_390)
    screenshot(page, "hand-en-phone")


def _state_with_discard(hand: str, discard: str) -> konkan.KonkanState:
    """Seat 1 to draw, with `hand` (plus filler) and `discard` on the pile."""
    options = KonkanOptions(players=2)
    mine = parse_cards(hand)
    deck = konkan.stacked_deck({1: mine, 0: [parse_card(discard)]}, players=2, dealer=1)
    state = konkan.new_game(options, "proposals", decks=[deck], first_dealer=1)
    state, _ = konkan.apply(state, konkan.Discard(seat=0, card=parse_card(discard)))
    assert state.turn == 1 and state.discard[-1] == parse_card(discard)
    return state


def _view(state: konkan.KonkanState) -> dict[str, Any]:
    view = konkan.view(state, 1)
    return {**view, "simple_actions": []}


# Seat 1's table drawn from view ``v`` alone, in a sandbox that replaces the page's main
# part, with the table's own drawing code (the game module's ``render`` of a stand-in for
# the table's controller); a command it sends is kept in window.sent.
DRAW_SEAT_ONE = """async (v) => {
    const k = await import('/js/konkan.js');
    const { patch } = await import('/js/view.js');
    const screen = Object.assign(document.createElement('div'),
      { id: 'sandbox', className: 'table-screen' });
    const box = Object.assign(document.createElement('div'), { className: 'middle' });
    screen.append(box);
    document.querySelector('main').replaceChildren(screen);
    window.sent = null;
    const nameOf = Object.assign((s) => (s === 1 ? 'ME' : `P${s}`), { mine: (s) => s === 1 });
    const ctrl = { tableId: 1e9 + 7, seat: 1, view: v, info: { id: 1e9 + 7 }, ui: {},
      roundBreak: null, lastError: '', hint: null, nameOf, confirm() {},
      mayAskHint: () => false, askHint() {},
      send: async (a) => { window.sent = a; return { ok: false }; },
      redraw: () => patch(box, k.render(ctrl)) };
    ctrl.redraw();
}"""


def test_the_discard_is_taken_in_one_gesture(new_page: Any) -> None:
    page = new_page("en")
    page.wait_for_selector("#guest")
    cases = [
        # Not opened: the card makes 7-8-9♥ and the hand's J-Q-K♠ brings it to 54 ≥ 51.
        ("7H 8H JS QS KS 2C 4D 6C 8D TC 3S 5H 9C 4C", "9H", True),
        # A set with the card, and a joker in a run.
        ("9S 9D KH QH JK 2C 4D 6C 8D TC 3S 5H 7C 4C", "9C", True),
        # Nothing uses it: no proposal, only "pick by hand".
        ("2C 4D 6C 8D TC 3S 5H 7C 9S JD KH AS 6H 4H", "QC", False),
    ]
    for hand, top, usable in cases:
        game = _state_with_discard(hand, top)
        view = _view(game)
        proposals = page.evaluate(
            """async (v) => {
                const m = await import('/js/melds.js');
                const k = await import('/js/konkan.js');
                return m.discardProposals(v, 1, k.openingTarget(v)).map((p) => p.action);
            }""",
            view,
        )
        assert bool(proposals) == usable, (hand, top, proposals)
        for action in proposals:  # the engine accepts every proposal as it is
            error = konkan.check_action(game, konkan.action_from_json({**action, "seat": 1}))
            assert error is None, (action, error)
        # In the page: tap the pile, tap the first proposal: one take_discard is sent.
        page.evaluate(DRAW_SEAT_ONE, view)
        page.click("#sandbox #discard-pile [data-card]")
        page.wait_for_selector("#discard-proposals")
        if not usable:
            assert page.locator("#discard-proposals .proposal").count() == 0
            continue
        if top == "9H":
            screenshot(page, "discard-proposals-en-desktop")
        page.click("#discard-proposals .proposal >> nth=0")
        sent = page.evaluate("() => window.sent")
        assert sent == proposals[0]
        assert sent["type"] == "take_discard"
        assert any(top in meld for meld in sent.get("melds", []))


def test_minus_thirty_reads_right_in_arabic(new_page: Any) -> None:
    """A negative score is drawn with its minus sign before the digits (to their left)
    in the Arabic page: measured on the rendered glyphs, beside a control that is not
    isolated and shows the bug ("30-")."""
    page = new_page("ar")
    page.wait_for_selector("#guest")
    positions = page.evaluate(
        """async () => {
            const k = await import('/js/konkan.js');
            const scores = [-30, 45];
            const v = { totals: scores, scores: [{ round: 1, winner: 0, finish: 'out', scores }] };
            const end = { winner: 0, finish: 'out', scores, hands: [[], ['7H']] };
            const summary = k.summary(end, v, (s) => `P${s}`);
            const sheet = k.sheet(v, (s) => `P${s}`);
            const control = Object.assign(document.createElement('td'), { textContent: '-30' });
            const { patch } = await import('/js/view.js');
            patch(document.querySelector('main'), summary, sheet, control);
            const where = (node) => {
              const text = [...node.childNodes].find((n) => n.nodeType === 3) || node.firstChild;
              const at = (i) => {
                const r = document.createRange();
                r.setStart(text, i);
                r.setEnd(text, i + 1);
                return r.getBoundingClientRect().left;
              };
              return { minus: at(0), digit: at(1), text: text.textContent };
            };
            const numbers = [...document.querySelectorAll('main bdi')]
              .filter((b) => b.textContent === '-30');
            return { isolated: numbers.map(where), control: where(control) };
        }"""
    )
    assert len(positions["isolated"]) >= 3  # the summary, the sheet's row and its total
    for shown_number in positions["isolated"]:
        assert shown_number["minus"] < shown_number["digit"], shown_number
    assert positions["control"]["minus"] > positions["control"]["digit"]  # the bug, unisolated


def test_quick_play_and_the_invite_link(new_page: Any) -> None:
    # One tap from the first visit to a dealt hand at a Konkan table with bots.
    page = new_page("en", PHONE_390)
    page.click("#quick-play")
    page.wait_for_selector("#hand [data-card]", timeout=20_000)
    assert state(page)["info"]["game"] == "konkan"
    assert len(state(page)["view"]["hand"]) in (14, 15)
    # A private table's invite link seats whoever opens it (a guest made on the way).
    host = new_page("ar")
    guest(host)
    host.check("#create-table [name=private]")
    table = create_table(host, "konkan", {"players": 2})
    link = host.input_value("#invite-link")
    assert link.endswith("#/i/" + host.inner_text("#invite-code"))
    screenshot(host, "invite-ar-desktop")
    assert axe_violations(host) == []
    friend = new_page("en", PHONE_390)
    friend.goto(link)
    friend.wait_for_url(f"**/#/t/{table}")
    for seat in (host, friend):
        seat.wait_for_selector("#hand [data-card]")


def test_the_invite_goes_through_the_phones_share_sheet(new_page: Any) -> None:
    # A phone with a share sheet offers "share the invite"; the sheet closed without
    # sharing (its promise rejected, as a cancel does) is no error on the page.
    host = new_page("ar", PHONE_390, touch=True)
    host.add_init_script(
        """navigator.share = (data) => {
            window.sharedInvite = data;
            return Promise.reject(new DOMException("closed", "AbortError"));
        };"""
    )
    host.reload()
    guest(host)
    host.check("#create-table [name=private]")
    create_table(host, "konkan", {"players": 2})
    host.click("#share-invite")
    host.wait_for_function("window.sharedInvite !== undefined")
    assert host.evaluate("window.sharedInvite.url") == host.input_value("#invite-link")


def test_a_page_asking_twice_at_once_makes_one_guest(new_page: Any) -> None:
    # The lobby and an invite link opened at once both ask for a guest: one is made and
    # both get it. (Two guests, the second replacing the first after the first had
    # taken the invite's seat, sent the player back to the lobby.)
    page = new_page("en")
    ids = page.evaluate(
        """async () => {
            const src = document.querySelector("script[type=module]").src;
            const { ensureUser, session } = await import(src.replace(/app\\.js$/, "api.js"));
            session.clear();
            const users = await Promise.all([ensureUser(), ensureUser(), ensureUser()]);
            return [...users.map((user) => user.id), session.user.id];
        }"""
    )
    assert len(set(ids)) == 1, ids


@pytest.mark.parametrize("lang", ["ar", "en"])
def test_the_longest_melds_fit_a_small_phone(new_page: Any, lang: str) -> None:
    # A Konkan run can hold 14 cards (A to K and the ace again, RULES.md §2), a joker's
    # stand-in is written beside it: on a 360 px phone such a meld wraps inside its own
    # box instead of pushing the table past the screen's edge.
    page = new_page(lang, PHONE)
    page.wait_for_selector("#guest")
    view = _view(_state_with_discard("2C 4D 6C 8D TC 3S 5H 7C 9S JD KH AS 6H 4H", "QC"))
    run = [f"{rank}H" for rank in "A23456789TJQK"] + ["JK"]
    view["melds"] = [
        {"id": 1, "owner": 0, "kind": "run", "cards": run, "joker_for": ["AH"]},
        {
            "id": 2,
            "owner": 1,
            "kind": "set",
            "cards": ["9S", "JK", "9D", "JK'"],
            "joker_for": ["9C", "9H"],
        },
    ]
    page.evaluate(DRAW_SEAT_ONE, view)
    found = page.evaluate(
        """() => {
            const meld = document.querySelector('[data-meld="1"]');
            return { cards: meld.querySelectorAll('.card').length,
              height: meld.getBoundingClientRect().height,
              card: meld.querySelector('.card').getBoundingClientRect().height };
        }"""
    )
    assert found["cards"] == 14
    # Each meld is named for a screen reader: the reader's own in the second person.
    words = AR if lang == "ar" else EN
    labels = page.evaluate(
        "() => [1, 2].map((id) => document.querySelector(`[data-meld='${id}']`)"
        ".getAttribute('aria-label').replace(/[\\u2066-\\u2069]/g, ''))"
    )
    assert labels[0].startswith(words["konkan.meld_of"].split("{cards}")[0].replace("{who}", "P0"))
    assert labels[1].startswith(words["konkan.meld_of.mine"].split("{cards}")[0]), labels
    assert page.evaluate(OUTSIDE) == []
    assert found["height"] > 1.5 * found["card"]  # the run wrapped to a second line
    screenshot(page, f"long-melds-{lang}-360")
