// The analysis page's pieces (docs/analysis.md): a move and a fact in words, a
// decision's position drawn as the replay draws a table, and a round's chart of each
// seat's expected result. The page itself is analysis.js; the puzzles analysis-puzzle.js.
import { h } from "./dom.js";
import { t } from "./i18n.js";
import { cardEl, label, sortBySuit } from "./cards.js";

/** @typedef {{ move: string, card?: string | null, melds?: string[][], value?: number }} Move */

// Card names in a left-to-right isolate, as the move log writes them: "10♥ J♥" reads the
// same in an Arabic sentence.
export const iso = (/** @type {string} */ text) => `\u2066${text}\u2069`;
// A name inside a sentence, in a first-strong isolate: an Arabic name in English words
// (and the other way round) keeps its place.
const named = (/** @type {string} */ name) => `\u2068${name}\u2069`;
const cardsText = (/** @type {string[]} */ list) => iso(list.map(label).join(" "));

/** A figure of points, one decimal, its sign shown (a gain reads +3.2); "—" for none. */
export function signed(/** @type {number | null | undefined} */ x) {
  if (x === null || x === undefined) return "—";
  const text = Math.abs(x).toFixed(1);
  return x > 0 ? `+${text}` : x < 0 ? `-${text}` : text;
}

/** A figure without a sign (points lost, a share). */
export const fixed = (/** @type {number | null | undefined} */ x) => (x === null || x === undefined ? "—" : x.toFixed(1));

/** A number as the page shows numbers: Western digits, isolated (a minus stays in front). */
export const num = (/** @type {string | number} */ text) => h("bdi.an-num", { dir: "ltr" }, String(text));

/**
 * A move in words: what was done ("discarded 7♥", `done`) or what to do ("open, then
 * discard K♦"). A take names the pile's card, which the move itself does not carry.
 * @param {Move} move
 * @param {boolean} done
 * @param {string | null} [pile]
 */
export function moveText(move, done, pile = null) {
  const card = move.card ? iso(label(move.card)) : pile ? iso(label(pile)) : "";
  const key = `analysis.${done ? "did" : "do"}.${move.move}${move.move === "take" && !card ? "_plain" : ""}`;
  return t(key, { card });
}

/** The melds a move lays, drawn small. */
export function meldsEl(/** @type {string[][] | undefined} */ melds) {
  if (!melds?.length) return null;
  return h("div.meld-row.an-melds", melds.map((m) => h("div.table-meld", m.map((c) => cardEl(c, { small: true })))));
}

/**
 * One fact the revealed deck shows, in words; null for a kind this page does not know.
 * @param {any} fact
 * @param {(seat: number) => string} nameOf
 */
export function factText(fact, nameOf) {
  const card = fact.card ? iso(label(fact.card)) : "";
  switch (fact.kind) {
    case "could_open": return t("analysis.fact.could_open", { value: fact.value });
    case "could_take_to_open": return t("analysis.fact.could_take_to_open", { card });
    case "hand_in_reach": return t("analysis.fact.hand_in_reach", { melds: (fact.melds || []).map(cardsText).join(" | ") });
    case "konkan_in_reach": return t("analysis.fact.konkan_in_reach", { melds: (fact.melds || []).map(cardsText).join(" | ") });
    case "fed_opening": return t(fact.took ? "analysis.fact.fed_opening_took" : "analysis.fact.fed_opening", { card, next: named(nameOf(fact.next)) });
    case "fed_out": return t("analysis.fact.fed_out", { card, next: named(nameOf(fact.next)) });
    case "joker_kept": return t("analysis.fact.joker_kept", { who: named(nameOf(fact.seat)) });
    case "first_open_chance":
      return fact.opened_turn === null || fact.opened_turn === undefined
        ? t("analysis.fact.first_open_never", { turn: fact.turn })
        : t("analysis.fact.first_open_chance", { turn: fact.turn, opened: fact.opened_turn });
    default: return null;
  }
}

/** A decision's facts as a list (nothing when it has none). */
export function factsEl(/** @type {any[] | undefined} */ facts, /** @type {(seat: number) => string} */ nameOf) {
  const lines = (facts || []).map((f) => factText(f, nameOf)).filter(Boolean);
  return lines.length ? h("ul.an-facts", lines.map((line) => h("li", line))) : null;
}

const pileBox = (/** @type {string} */ name, /** @type {any} */ content) =>
  h("div.replay-pile", h("span.pile-name", name), h("span.pile-content", content));

/**
 * What the seat saw at a decision: the pile's card, the stock, the others' hands (how
 * many cards, opened or not), the table's melds, and its own hand — sorted by suit,
 * as the hand is dealt at the table; `hand` replaces it (a puzzle's cards to tap).
 * @param {any} decision
 * @param {(seat: number) => string} nameOf
 * @param {HTMLElement | null} [hand]
 */
export function positionEl(decision, nameOf, hand = null) {
  const p = decision.position || {};
  const others = (p.hand_counts || []).map((/** @type {number} */ n, /** @type {number} */ seat) => (seat === decision.seat ? null
    : h("li", h("bdi", nameOf(seat)), " ", h("span.muted", t("analysis.cards_n", { n })),
      p.opened?.[seat] ? h("span.badge.opened", t("konkan.opened")) : null)));
  return h("div.an-position",
    h("div.replay-piles",
      pileBox(t("konkan.discard_pile"), p.pile ? cardEl(p.pile, { small: true }) : h("span.muted", "—")),
      pileBox(t("konkan.stock"), h("bdi.pile-count", p.stock ?? "—"))),
    h("ul.an-others", others),
    p.melds?.length ? h("div.an-table-melds", h("span.an-caption", t("analysis.table_melds")), meldsEl(p.melds)) : null,
    h("div.an-own",
      h("span.an-caption", t("analysis.hand_of", { who: named(nameOf(decision.seat)) }),
        p.opened?.[decision.seat] ? h("span.badge.opened", t("konkan.opened")) : null),
      hand || h("div.hand-cards.an-hand", sortBySuit(p.hand || []).map((c) => cardEl(c, { small: true })))));
}

// --- a round's chart -----------------------------------------------------------------

// One colour and one dash a seat: the lines are told apart without colour too.
export const SEAT_COLOURS = ["#b36b00", "#1b5fd0", "#b3261e", "#11803a"];
const SEAT_DASHES = ["", "7 4", "2 3", "9 3 2 3"];
const SVG = "http://www.w3.org/2000/svg";

/** An SVG element with its attributes. */
function svg(/** @type {string} */ tag, /** @type {Record<string, any>} */ attrs = {}, /** @type {any[]} */ ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) if (value !== null && value !== undefined && value !== "") el.setAttribute(key, String(value));
  for (const child of children.flat()) if (child) el.append(child);
  return el;
}

const W = 320, H = 160, PAD_X = 30, PAD_Y = 12;

/**
 * A round's chart: one line a seat (the value of each move it made, at the step it made
 * it), time running the reading way (right to left in Arabic, as the replay's slider),
 * the zero line, the highest and lowest values marked, and a legend by seat name.
 * @param {any} round
 * @param {(seat: number) => string} nameOf
 * @param {boolean} rtl
 * @param {boolean} [note]  with the words on how to read it
 */
export function chartEl(round, nameOf, rtl, note = true) {
  const seats = round.seats || [];
  const values = seats.flatMap((/** @type {any} */ s) => (s.curve || []).map((/** @type {number[]} */ p) => p[1]));
  let hi = Math.max(0, ...values), lo = Math.min(0, ...values);
  if (hi - lo < 1) { hi += 1; lo -= 1; }
  const first = round.first_step ?? 0, last = Math.max(round.last_step ?? 1, first + 1);
  const x = (/** @type {number} */ step) => {
    const share = (step - first) / (last - first);
    const at = PAD_X + Math.min(1, Math.max(0, share)) * (W - 2 * PAD_X);
    return (rtl ? W - at : at).toFixed(1);
  };
  const y = (/** @type {number} */ value) => (PAD_Y + ((hi - value) / (hi - lo)) * (H - 2 * PAD_Y)).toFixed(1);
  const edge = rtl ? W - 4 : 4;  // the figures stand at the start of the time axis
  const anchor = rtl ? "end" : "start";
  const tick = (/** @type {number} */ value) => svg("text", { x: edge, y: Number(y(value)) + 4, "text-anchor": anchor, class: "an-tick" }, signed(value).replace(".0", ""));
  const lines = seats.map((/** @type {any} */ s) => {
    const curve = s.curve || [];
    const colour = SEAT_COLOURS[s.seat % SEAT_COLOURS.length];
    const d = curve.map((/** @type {number[]} */ p, /** @type {number} */ i) => `${i ? "L" : "M"}${x(p[0])} ${y(p[1])}`).join(" ");
    return svg("g", { "data-seat": s.seat },
      d ? svg("path", { d, class: "an-line", "data-seat": s.seat, fill: "none", stroke: colour, "stroke-width": 2.5,
        "stroke-dasharray": SEAT_DASHES[s.seat % SEAT_DASHES.length], "stroke-linejoin": "round" }) : null,
      curve.map((/** @type {number[]} */ p) => svg("circle", { cx: x(p[0]), cy: y(p[1]), r: 2.6, fill: colour })));
  });
  // Numbers only inside: drawn left to right whatever the page's direction (an RTL
  // page would turn each text's anchor round).
  const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, direction: "ltr", class: "an-chart", role: "img", "aria-label": t("analysis.chart_label", { n: round.round }) },
    svg("rect", { x: 0, y: 0, width: W, height: H, fill: "#fbf8f0" }),
    svg("line", { x1: PAD_X, x2: W - PAD_X, y1: y(0), y2: y(0), stroke: "#8a8577", "stroke-width": 1 }),
    tick(hi), tick(0), tick(lo),
    lines);
  const legend = h("ul.an-legend", seats.map((/** @type {any} */ s) => h("li",
    svg("svg", { viewBox: "0 0 28 8", width: 28, height: 8, "aria-hidden": "true" },
      svg("line", { x1: 1, x2: 27, y1: 4, y2: 4, stroke: SEAT_COLOURS[s.seat % 4], "stroke-width": 3, "stroke-dasharray": SEAT_DASHES[s.seat % 4] })),
    h("bdi", nameOf(s.seat)))));
  return h("figure.an-figure", chart, h("figcaption", legend, note ? h("p.muted.an-note", t("analysis.chart_note")) : null));
}

/** A round's luck and skill: each seat's worth, result, lost and luck. */
export function roundFigures(/** @type {any} */ round, /** @type {(seat: number) => string} */ nameOf) {
  const head = ["worth", "result", "lost", "luck"].map((k) => h("th", { scope: "col" }, t(`analysis.col.${k}`)));
  return h("div.an-scroll", h("table.sheet.an-figures",
    h("thead", h("tr", h("th", { scope: "col" }, t("analysis.col.player")), head)),
    h("tbody", (round.seats || []).map((/** @type {any} */ s) => h("tr", { dataset: { seat: s.seat } },
      h("th", { scope: "row" }, h("bdi", nameOf(s.seat))),
      h("td", num(signed(s.worth))), h("td", num(signed(s.result))), h("td", num(fixed(s.lost))),
      h("td", { class: s.luck > 0 ? "an-good" : s.luck < 0 ? "an-bad" : "" }, num(signed(s.luck))))))));
}
