// Cards as the server writes them: rank+suit ("7H", "TS", "AD"), a trailing
// apostrophe for Konkan's second deck ("7H'"), "JK"/"JK'" for jokers.
import { h } from "./dom.js";
import { v } from "./view.js";
import { t } from "./i18n.js";

export const SUITS = ["S", "H", "D", "C"];
const SUIT_SYMBOL = { S: "♠", H: "♥", D: "♦", C: "♣" };
const RANK_SHOWN = { T: "10" };
// Position of each rank in a Konkan run (ace low = 1; ace high = 14 handled below).
const RANK_POS = { A: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7, 8: 8, 9: 9, T: 10, J: 11, Q: 12, K: 13 };
const POS_RANK = Object.fromEntries(Object.entries(RANK_POS).map(([r, p]) => [p, r]));
POS_RANK[14] = "A";
// Conquian's 40-card order: 7 and J are adjacent.
const CQ_ORDER = ["A", "2", "3", "4", "5", "6", "7", "J", "Q", "K"];

export function parse(text) {
  const face = text.replace(/'+$/, "");
  if (face === "JK") return { id: text, face, joker: true, rank: null, suit: null };
  return { id: text, face, joker: false, rank: face.slice(0, -1), suit: face.slice(-1) };
}

/**
 * How a card is drawn: small, selected, a button (with `onclick`) or a picture.
 * @typedef {object} CardOptions
 * @property {boolean} [small]
 * @property {boolean} [selected]
 * @property {(event: MouseEvent) => void} [onclick]
 * @property {any} [extra]  drawn inside the card, after its face
 * @property {string} [tag]  the element: a button with `onclick`, else a span
 * @property {string} [extraClass]
 * @property {string} [key]  a vnode's key (cardV: the card's id)
 */

/** A card element; `data-card` carries the exact id (tests and clicks use it). */
export function cardEl(/** @type {string} */ text, /** @type {CardOptions} */ opts = {}) { return makeCard(h, text, opts); }

/** The same card as a vnode for a patched view, keyed by its id: redrawn, it stays the same element. */
export function cardV(/** @type {string} */ text, /** @type {CardOptions} */ opts = {}) { return makeCard(v, text, { ...opts, key: text }); }

/**
 * @param {(tag: string, attrs?: any, ...children: any[]) => any} make  dom.js's `h` or view.js's `v`
 * @param {string} text
 * @param {CardOptions} options
 */
function makeCard(make, text, { small = false, selected = false, onclick, extra, tag = onclick ? "button" : "span", extraClass = "", key } = {}) {
  const c = parse(text);
  const cls = ["card", small ? "small" : "", selected ? "selected" : "", c.joker ? "joker" : `s${c.suit}`, extraClass]
    .filter(Boolean).join(" ");
  const body = c.joker
    ? [make("span.rank", "★"), make("span.suit", "JK")]
    : [make("span.rank", RANK_SHOWN[c.rank] || c.rank), make("span.suit", SUIT_SYMBOL[c.suit])];
  // A card inside another control (a table meld, a proposal) is a picture, not a button.
  if (tag !== "button") return make(tag, { key, class: cls, dataset: { card: text }, role: "img", "aria-label": spoken(text) }, body, extra);
  return make("button", {
    key, class: cls, type: "button", dataset: { card: text }, onclick,
    "aria-pressed": selected ? "true" : "false", "aria-label": spoken(text),
  }, body, extra);
}

/** A card as a screen reader says it, in words: «9 بستوني», "9 of spades", "joker". */
export function spoken(/** @type {string} */ text) {
  const c = parse(text);
  if (c.joker) return t("card.joker");
  return t("card.spoken", { rank: t(`rank.${c.rank}`), suit: t(`suit.${c.suit}`) });
}

/** Plain-text name of a card, as it is drawn (logs, lines). */
export function label(text) {
  const c = parse(text);
  if (c.joker) return "🃏";
  return (RANK_SHOWN[c.rank] || c.rank) + SUIT_SYMBOL[c.suit];
}

export function sortBySuit(cards) {
  return [...cards].sort((a, b) => key(a, true) - key(b, true));
}
export function sortByRank(cards) {
  return [...cards].sort((a, b) => key(a, false) - key(b, false));
}
function key(text, suitFirst) {
  const c = parse(text);
  if (c.joker) return 10000;
  const s = SUITS.indexOf(c.suit), r = RANK_POS[c.rank];
  return suitFirst ? s * 100 + r : r * 100 + s;
}

// --- Konkan meld values (RULES §1.4; options ace_value) -------------------------------

function faceValue(pos, aceValue) {
  if (pos === 1) return aceValue === "low_1_else_10" ? 1 : 11;
  if (pos === 14) return aceValue === "low_1_else_10" ? 10 : 11;
  return Math.min(pos, 10);
}

/**
 * Check a proposed Konkan meld the way the engine does and give its value for
 * the opening threshold. Returns {ok, kind, value, jokerFor} or {ok:false, why}.
 * A joker extending a run goes below when it is listed first, above otherwise
 * (the engine's rule, so the total shown here matches the server's).
 * @param {string[]} cards
 * @param {string} [aceValue]
 * @returns {{ ok: true, kind: "set" | "run", value: number, jokerFor: string[] } | { ok: false, why: string }}
 */
export function konkanMeld(cards, aceValue = "always_11") {
  const parsed = cards.map(parse);
  const jokers = parsed.filter((c) => c.joker), reals = parsed.filter((c) => !c.joker);
  if (cards.length < 3) return { ok: false, why: "meld_short" };
  if (jokers.length > 1) return { ok: false, why: "meld_jokers" };
  if (reals.length < 2) return { ok: false, why: "meld_short" };
  if (reals.every((c) => c.rank === reals[0].rank)) {
    const suits = new Set(reals.map((c) => c.suit));
    if (suits.size !== reals.length) return { ok: false, why: "meld_suits" };
    if (cards.length > 4) return { ok: false, why: "meld_set_size" };
    const pos = RANK_POS[reals[0].rank];
    const each = pos === 1 ? (aceValue === "low_1_else_10" ? 10 : 11) : Math.min(pos, 10);
    const jokerFor = jokers.length ? SUITS.filter((s) => !suits.has(s)).map((s) => reals[0].rank + s) : [];
    return { ok: true, kind: "set", value: each * cards.length, jokerFor };
  }
  if (reals.some((c) => c.suit !== reals[0].suit)) return { ok: false, why: "meld_mixed" };
  const jokerLow = jokers.length > 0 && parsed[0].joker;
  const hasAce = reals.some((c) => c.rank === "A");
  for (const aceHigh of hasAce ? [false, true] : [false]) {
    const ps = reals.map((c) => (aceHigh && c.rank === "A" ? 14 : RANK_POS[c.rank]));
    if (new Set(ps).size !== ps.length) return { ok: false, why: "meld_rank_twice" };
    const lo = Math.min(...ps), hi = Math.max(...ps);
    const gaps = hi - lo + 1 - ps.length;
    let jokerAt = null;
    if (jokers.length === 0) { if (gaps) continue; }
    else if (gaps === 1) { for (let p = lo; p <= hi; p++) if (!ps.includes(p)) jokerAt = p; }
    else if (gaps === 0) {
      const below = lo > 1 ? lo - 1 : null, above = hi < 14 ? hi + 1 : null;
      jokerAt = jokerLow ? (below ?? above) : (above ?? below);
      if (jokerAt === null) continue;
    } else continue;
    if (cards.length > 13) return { ok: false, why: "meld_long" };
    const all = jokerAt === null ? ps : [...ps, jokerAt];
    const value = all.reduce((sum, p) => sum + faceValue(p, aceValue), 0);
    const jokerFor = jokerAt === null ? [] : [POS_RANK[jokerAt] + reals[0].suit];
    return { ok: true, kind: "run", value, jokerFor };
  }
  return { ok: false, why: "meld_not_consecutive" };
}

// --- Conquian melds (RULES §2.2): sets of 3–4, runs of 3–8 in A..7 J Q K --------------

export function conquianMeldOk(cards) {
  if (cards.length < 3) return false;
  const ps = cards.map(parse);
  if (ps.every((c) => c.rank === ps[0].rank)) {
    return cards.length <= 4 && new Set(ps.map((c) => c.suit)).size === cards.length;
  }
  if (cards.length > 8 || ps.some((c) => c.suit !== ps[0].suit)) return false;
  const idx = ps.map((c) => CQ_ORDER.indexOf(c.rank)).sort((a, b) => a - b);
  return idx.every((v, i) => i === 0 || v === idx[i - 1] + 1);
}

/** Conquian cards in table order inside a group (sets by suit, runs low to high). */
export function conquianSort(cards) {
  return [...cards].sort((a, b) => {
    const x = parse(a), y = parse(b);
    return CQ_ORDER.indexOf(x.rank) - CQ_ORDER.indexOf(y.rank) || SUITS.indexOf(x.suit) - SUITS.indexOf(y.suit);
  });
}
