// "Learn from your mistakes": the decisions marked `puzzle` (docs/analysis.md), one
// after the other. The reader answers as at the table — draw or take; or lay down
// first (or not) and tap the card to discard — and the answer is judged by the
// decision's grid of every answer's value: one within the inaccuracy threshold of the
// best is right. The best move is shown either way.
import { h } from "./dom.js";
import { t } from "./i18n.js";
import { cardEl, label, parse, sortBySuit } from "./cards.js";
import { fixed, iso, moveText, num, positionEl, signed } from "./analysis-draw.js";

const LAID = new Set(["open", "hand"]);
const face = (/** @type {string | null | undefined} */ card) => (card ? parse(card).face : null);
const round1 = (/** @type {number} */ x) => Math.round(x * 10) / 10;

/** Every answer of a puzzle with its value: the grid (the analysis's candidates when it has none). */
export const answersOf = (/** @type {any} */ d) => (d.grid?.length ? d.grid : d.candidates || []);

/**
 * An answer judged by the grid: its entry, the best entry, the points it loses, and
 * whether that is within `tolerance` (the inaccuracy threshold). The two copies of a
 * card (two decks) are the same answer.
 * @param {any} decision
 * @param {{ move: string, card?: string | null }} answer
 * @param {number} tolerance
 */
export function judge(decision, answer, tolerance) {
  const grid = answersOf(decision);
  const best = grid.reduce((/** @type {any} */ a, /** @type {any} */ b) => (b.value > a.value ? b : a), grid[0]);
  const entry = grid.find((/** @type {any} */ g) => g.move === answer.move && face(g.card) === face(answer.card)) || null;
  const lost = entry ? round1(best.value - entry.value) : null;
  return { entry, best, lost, right: lost !== null && lost < tolerance };
}

/**
 * The puzzle panel. `state` keeps each puzzle's choices across redraws (a language
 * switch, a filter), `redraw` draws the page again after a choice.
 * @param {{ puzzles: any[], tolerance: number, nameOf: (seat: number) => string, state: any, redraw: () => void }} ctx
 */
export function puzzlePanel({ puzzles, tolerance, nameOf, state, redraw }) {
  if (!puzzles.length) return h("p.muted", { id: "puzzle-none" }, t("analysis.puzzle.none"));
  const at = Math.min(state.at || 0, puzzles.length - 1);
  const d = puzzles[at];
  const mine = (state.byId[d.id] ||= { layFirst: false, selected: null, answer: null });
  const grid = answersOf(d);
  const answered = mine.answer ? judge(d, mine.answer, tolerance) : null;
  const pile = d.position?.pile ?? null;
  // Answered, the verdict and the way on are brought into sight (on a phone they come
  // under the hand, below the screen's edge).
  const answer = (/** @type {{ move: string, card?: string | null }} */ move) => {
    mine.answer = move;
    redraw();
    document.querySelector("#puzzle .an-puzzle-nav")?.scrollIntoView({ block: "nearest" });
  };

  let hand = null, controls = null;
  if (d.kind === "draw") {
    const can = (/** @type {string} */ move) => grid.some((/** @type {any} */ g) => g.move === move);
    controls = h("div.row.an-puzzle-moves",
      h("button.primary", { type: "button", id: "puzzle-draw", disabled: answered || !can("draw") ? true : undefined, onclick: () => answer({ move: "draw" }) },
        t("analysis.puzzle.draw")),
      h("button.primary", { type: "button", id: "puzzle-take", disabled: answered || !can("take") ? true : undefined, onclick: () => answer({ move: "take" }) },
        t("analysis.puzzle.take", { card: pile ? iso(label(pile)) : "" })));
  } else {
    const laid = grid.filter((/** @type {any} */ g) => LAID.has(g.move));
    const mode = mine.layFirst && laid.length ? laid : grid.filter((/** @type {any} */ g) => !LAID.has(g.move));
    const allowed = new Set(mode.map((/** @type {any} */ g) => face(g.card)));
    const handCards = sortBySuit(d.position?.hand || []);
    hand = h("div.hand-cards.an-puzzle-hand", { id: "puzzle-hand" }, handCards.map((c) => {
      const ok = allowed.has(face(c)) && !answered;
      // Laying down first, the cards that go to the table are not discards: shown aside.
      const extraClass = mine.layFirst && laid.length && !allowed.has(face(c)) && !parse(c).joker ? "an-laid" : "";
      const el = cardEl(c, { selected: mine.selected === c, extraClass, onclick: () => { mine.selected = c; redraw(); } });
      if (!ok) el.setAttribute("disabled", "");
      return el;
    }));
    const laysHand = laid.some((/** @type {any} */ g) => g.move === "hand");
    controls = h("div.an-puzzle-moves",
      laid.length ? h("label.check.an-lay", h("input", {
        type: "checkbox", id: "puzzle-lay", checked: mine.layFirst, disabled: answered ? true : undefined,
        onchange: (/** @type {any} */ e) => { mine.layFirst = e.target.checked; mine.selected = null; redraw(); },
      }), t(laysHand ? "analysis.puzzle.lay_hand" : "analysis.puzzle.lay_first")) : null,
      h("button.primary", {
        type: "button", id: "puzzle-answer", disabled: answered || !mine.selected ? true : undefined,
        onclick: () => {
          const move = mine.layFirst && laid.length ? laid[0].move : mode[0]?.move || "discard";
          answer({ move, card: mine.selected });
        },
      }, mine.selected ? t("analysis.puzzle.discard_card", { card: iso(label(mine.selected)) }) : t("analysis.puzzle.pick")));
  }

  const prompt = d.kind === "draw" ? t("analysis.puzzle.ask_draw", { card: pile ? iso(label(pile)) : "" })
    : grid.some((/** @type {any} */ g) => LAID.has(g.move)) ? t("analysis.puzzle.ask_lay") : t("analysis.puzzle.ask_discard");
  const solved = puzzles.filter((p) => state.byId[p.id]?.answer).length;
  const right = puzzles.filter((p) => state.byId[p.id]?.answer && judge(p, state.byId[p.id].answer, tolerance).right).length;
  return h("section.card-box.an-puzzle", { id: "puzzle", dataset: { id: d.id, kind: d.kind } },
    h("div.section-head",
      h("h2", t("analysis.puzzle.n_of", { n: at + 1, total: puzzles.length })),
      solved ? h("span.muted", { id: "puzzle-score" }, t("analysis.puzzle.score", { right, n: solved })) : null),
    h("p.an-who", h("bdi", nameOf(d.seat)), " · ", t("replay.round_n", { n: d.round }), " · ", t("analysis.turn_n", { n: d.turn })),
    h("p.an-prompt", prompt),
    positionEl(d, nameOf, hand),
    controls,
    answered ? verdict(d, answered, pile, tolerance) : null,
    h("div.row.an-puzzle-nav",
      at > 0 ? h("button", { type: "button", id: "puzzle-prev", onclick: () => { state.at = at - 1; redraw(); } }, t("analysis.puzzle.prev")) : null,
      answered ? h("button", { type: "button", id: "puzzle-again", onclick: () => { delete state.byId[d.id]; redraw(); } }, t("analysis.puzzle.again")) : null,
      at + 1 < puzzles.length ? h(answered ? "button.primary" : "button", { type: "button", id: "puzzle-next", onclick: () => { state.at = at + 1; redraw(); } },
        t(answered ? "analysis.puzzle.next" : "analysis.puzzle.skip")) : null));
}

/** Right or not, the move chosen and its value, the best one and the other good answers. */
function verdict(/** @type {any} */ d, /** @type {any} */ judged, /** @type {string | null} */ pile, /** @type {number} */ tolerance) {
  const good = answersOf(d).filter((/** @type {any} */ g) => g !== judged.best && round1(judged.best.value - g.value) < tolerance && g !== judged.entry);
  return h("div.an-verdict", { id: "puzzle-result", role: "status", dataset: { right: judged.right ? "true" : "false" } },
    h("p.an-verdict-head", t(judged.right ? (judged.lost === 0 ? "analysis.puzzle.best" : "analysis.puzzle.right") : "analysis.puzzle.wrong")),
    judged.entry ? h("p", t("analysis.puzzle.yours", { move: moveText(judged.entry, false, pile) }), " ",
      num(signed(judged.entry.value)), judged.lost ? [" · ", t("analysis.lost_points", { n: fixed(judged.lost) })] : null) : null,
    h("p", { id: "puzzle-best" }, h("strong", t("analysis.better"), " "), moveText(judged.best, false, pile), " ", num(signed(judged.best.value))),
    good.length ? h("p.muted", t("analysis.puzzle.also_good"), " ", good.slice(0, 3).map((/** @type {any} */ g, /** @type {number} */ i) => [i ? " · " : "", moveText(g, false, pile)])) : null);
}
