// What opens over the table: the score sheet and the round (deal) summary, real
// <dialog>s shown modally (the rest of the page is inert behind them, Escape closes;
// the summary: "continue"), and the match's end inside the summary (a question with
// OK / Cancel is ../confirm.js).
import { v } from "../view.js";
import { t } from "../i18n.js";
import { session } from "../api.js";
import { subject } from "../describe.js";
import { ratingChanges, againButton } from "../rating.js";

/** @typedef {import("./ctrl.js").TableCtrl} TableCtrl */
/** @typedef {import("./protocol.js").GameEvent} GameEvent */
/** @typedef {import("./ctrl.js").Drawn} Drawn */

const pending = () => v("p.loading", "…");

/** The score sheet and the summary, when open (what `#overlays` holds). */
export function overlays(/** @type {TableCtrl} */ ctrl) {
  const vw = ctrl.view;
  const parts = [];
  if (!vw) return parts;
  if (ctrl.sheetOpen) {
    const game = ctrl.gameModule();
    parts.push(modal("score-sheet", t("sheet.title"), game ? game.sheet(vw, ctrl.nameOf) : pending(), () => ctrl.closeSheet()));
  }
  const summary = ctrl.summary;
  if (summary) {
    const body = [];
    const deal = ctrl.game === "conquian";
    const game = ctrl.gameModule();
    if (summary.event) body.push(game ? game.summary(summary.event, vw, ctrl.nameOf) : pending());
    // The score table under it (and in the match's results): every round (deal) so far
    // and the totals.
    if (game) body.push(v("section.summary-sheet", { key: "sheet", id: "summary-sheet", "aria-labelledby": "summary-sheet-title" },
      v("h3", { id: "summary-sheet-title" }, t("sheet.title")), game.sheet(vw, ctrl.nameOf)));
    if (summary.matchEnd) body.push(matchEnd(ctrl, summary.matchEnd));
    const pause = ctrl.roundBreak;
    if (pause && !summary.matchEnd) {
      const others = pause.waiting.filter((seat) => seat !== ctrl.seat).map(ctrl.nameOf);
      body.push(v("div.break-bar", { key: "break" },
        v("p", { id: "break-countdown", role: "timer" }),
        others.length ? v("p", { id: "break-waiting" }, t("summary.waiting_for", { who: others.join("، ") })) : null,
        ctrl.readingSummary() ? v("button.primary", {
          type: "button", id: "summary-continue", onclick: () => ctrl.continuePlay(), disabled: ctrl.continued === summary,
        }, t("summary.continue")) : null));
    }
    const title = summary.matchEnd ? t("summary.match_title") : t(deal ? "summary.deal_title" : "summary.title");
    parts.push(modal("summary", title, body, () => ctrl.closeSummary()));
  }
  return parts;
}

// The end of the match: standings, coins, the replay, and another match at the same seats.
function matchEnd(/** @type {TableCtrl} */ ctrl, /** @type {GameEvent} */ ev) {
  const vw = ctrl.view;
  const me = ctrl.seat;
  const w = ev.winner;
  /** @type {number[]} */
  const totals = ev.totals || vw?.totals || vw?.points || [];
  /** @type {number[]} */
  const places = ev.places || totals.map((_, seat) => (seat === w ? 1 : 2));
  const order = places.map((place, seat) => ({ place, seat })).sort((a, b) => a.place - b.place);
  const r = ctrl.results;
  if (!r) ctrl.loadResults();
  const seats = ctrl.info?.seats || [];
  const agreed = new Set(ctrl.info?.rematch || []);
  const seated = me !== null && seats[me]?.user_id === session.user?.id;
  const waiting = seats.filter((s) => !agreed.has(s.seat)).map((s) => ctrl.nameOf(s.seat));
  const mineAsked = me !== null && agreed.has(me);
  // Asked at this match's end; a page reopened after the end has seen no match_end
  // event (both unset) and has asked nothing yet.
  const asked = mineAsked || (ctrl.rematchAsked !== null && ctrl.rematchAsked === ctrl.matchEnd);
  return v("div.match-end-box", { key: "match-end" },
    v("p.match-end", { id: "match-result" }, w === null ? t("ev.match_end") : t("ev.match_won", subject(ctrl.nameOf, w))),
    ctrl.info?.rated ? ratingChanges(v, ctrl) : null,  // a rated match: what it did to each rating
    v("table.sheet.standings", { id: "standings" },
      v("thead", v("tr", v("th", t("end.place")), v("th", t("end.player")), v("th", t("sheet.total")),
        r?.coins !== undefined ? v("th", t("end.coins")) : null)),
      v("tbody", order.map(({ place, seat }) => v("tr", { key: seat, class: seat === me ? "me" : "" },
        v("td", v("bdi", place)), v("td", ctrl.nameOf(seat)), v("td", v("bdi", totals[seat] ?? "")),
        r?.coins !== undefined ? v("td", seat === me ? v("bdi", signed(r.coins)) : "") : null)))),
    v("div.row.end-actions",
      // A rated table has no rematch: another rated game comes from the queue.
      seated && ctrl.info?.rated ? againButton(v, ctrl) : seated ? v("button.primary", {
        type: "button", id: "rematch", disabled: asked, onclick: () => ctrl.askRematch(),
      }, mineAsked ? t("end.rematch_asked") : t("end.rematch")) : null,
      r?.matchId ? v("a.button", { id: "replay-link", href: `#/m/${r.matchId}` }, t("end.replay")) : null,
      // Konkan matches are analysed (docs/analysis.md), Conquian ones not yet.
      r?.matchId && ctrl.game !== "conquian" ? v("a.button", { id: "analysis-link", href: `#/m/${r.matchId}/analysis` }, t("analysis.open")) : null,
      v("a.button", { href: "#/" }, t("table.lobby"))),
    agreed.size ? v("p", { id: "rematch-waiting" }, t("summary.waiting_for", { who: waiting.join("، ") || "—" })) : null);
}

const signed = (/** @type {number} */ n) => (n > 0 ? `+${n}` : n < 0 ? `\u2212${-n}` : "0");

// Shown modally once, when it enters the page; a click on the backdrop closes it.
function openModal(/** @type {HTMLDialogElement | null} */ el) { if (el && !el.open && el.isConnected) el.showModal(); }

/**
 * @param {string} id
 * @param {string} title
 * @param {Drawn} body
 * @param {() => void} onClose
 */
export function modal(id, title, body, onClose) {
  return v("dialog.modal", {
    key: id, id, ref: openModal, "aria-labelledby": `${id}-title`,
    oncancel: (/** @type {Event} */ e) => { e.preventDefault(); onClose(); },
    onclose: onClose,
    onclick: (/** @type {MouseEvent & { currentTarget: HTMLElement }} */ e) => {
      if (e.target !== e.currentTarget) return;
      const r = e.currentTarget.getBoundingClientRect();
      if (e.clientX < r.left || e.clientX > r.right || e.clientY < r.top || e.clientY > r.bottom) onClose();
    },
  },
  v("div.modal-head", v("h2", { id: `${id}-title` }, title), v("button.close", { type: "button", id: `${id}-close`, onclick: onClose, "aria-label": t("app.close") }, "✕")),
  v("div.modal-body", body));
}

