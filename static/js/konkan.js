// The Konkan table (RULES Part 1): my hand, staging melds for one lay-down
// (the opening is one action), lay-offs and joker swaps by tapping a table meld,
// the stock, the discard pile (taking it carries the melds that use it), the
// opening total against the threshold, and the commitment in the last round.
// A game module: `render`, `sheet` and `summary`, as the table asks of each game
// (GameModule in table/ctrl.js). Its views are vnodes (view.js's `v`), patched in place.
import { v, vicon } from "./view.js";
import { t } from "./i18n.js";
import { cardV, konkanMeld, parse, label, spoken, sortBySuit } from "./cards.js";
import { toast } from "./dom.js";
import { arrange, loadHand, saveHand, sortPreference, setSortPreference, dragToReorder, dragPileCard, doubleTap, inside, moveCard, isJoker } from "./hand.js";
import { discardProposals, meldGroups, fittingMelds, bestLayDown } from "./melds.js";
import { fairnessOf, noteCommitment } from "./fairness.js";
import { subject, meldWords } from "./describe.js";
import { hintLine, errorLine } from "./table/lines.js";

/** @typedef {import("./table/ctrl.js").TableCtrl} TableCtrl */
/** @typedef {import("./table/ctrl.js").NameOf} NameOf */
/** @typedef {import("./table/protocol.js").GameEvent} GameEvent */
/** @typedef {import("./table/protocol.js").Action} Action */
/** @typedef {(action: Action, after?: () => void) => Promise<import("./table/protocol.js").Reply>} Act  a move sent; the selection cleared when it went through */

/**
 * A meld on the table.
 * @typedef {object} TableMeld
 * @property {number} id
 * @property {number} owner  the seat that laid it
 * @property {string[]} cards  a run from its low end up, a set by suit, joker last
 * @property {string[]} joker_for  the cards its joker stands for
 *
 * A finished round, as the sheet lists it.
 * @typedef {object} RoundResult
 * @property {number} round
 * @property {number[]} scores
 * @property {number | null} winner
 * @property {string} finish
 *
 * The Konkan view of one seat (docs/schemas/KonkanView.json).
 * @typedef {object} KonkanView
 * @property {"konkan"} game
 * @property {number | null} viewer
 * @property {number} round
 * @property {boolean} last_round
 * @property {number | null} turn
 * @property {"draw" | "play" | "over"} phase
 * @property {number[]} hand_counts
 * @property {boolean[]} opened
 * @property {boolean[]} committed
 * @property {TableMeld[]} melds
 * @property {string | null} discard_top
 * @property {number} discard_count
 * @property {number} stock_count
 * @property {string | null} round_commitment
 * @property {number} last_opening
 * @property {number} [opening_target]  the total my next opening must reach (older records lack it)
 * @property {number[]} totals
 * @property {boolean} match_over
 * @property {number | null} winner
 * @property {string[]} [hand]  absent for a spectator
 * @property {Action[]} [simple_actions]
 * @property {RoundResult[]} scores
 * @property {{ threshold: number, rounds: number, escalating_opening: boolean, ace_value: string, [option: string]: any }} options
 *
 * This module's state at the table (TableCtrl.ui): kept across drawings, and the order
 * and staged melds across a reload (hand.js).
 * @typedef {object} KonkanUi
 * @property {string} key  the table and round it is for
 * @property {string[]} order  my hand in the order I keep it
 * @property {string[][]} staged  new melds staged for one lay-down
 * @property {{ meld: number, cards: string[] }[]} offs  lay-offs staged
 * @property {string} mode  suit, rank or own (after a drag)
 * @property {string[]} selected
 * @property {string | null} handSig  the hand last arranged
 * @property {string[]} fresh  the cards that just arrived
 * @property {boolean} proposing  the ways to take the discard are shown
 * @property {boolean} [arranging]  "arrange my melds" waits for the server's suggestion
 * @property {{ melds: Record<number, string>, top: string | null }} [seen]  what the last drawing showed
 */

function uiState(/** @type {TableCtrl} */ ctrl) {
  const ui = /** @type {KonkanUi} */ (ctrl.ui);
  const vw = /** @type {KonkanView} */ (ctrl.view);
  const hand = vw.hand || [];
  // One arrangement per round of this match: the round's commitment tells a rematch's round 1 apart.
  const tableId = ctrl.tableId, round = `${vw.round}-${(vw.round_commitment || "").slice(0, 12)}`;
  if (ui.key !== `${tableId}.${round}`) {
    // A new round (or a reload): the arrangement and staged melds I left, if any.
    const kept = loadHand(tableId, round) || {};
    Object.assign(ui, {
      key: `${tableId}.${round}`, order: kept.order || [], staged: kept.staged || [], offs: kept.offs || [],
      mode: kept.mode || sortPreference(), selected: [], handSig: null, fresh: [], proposing: false,
    });
  }
  const sig = [...hand].sort().join();
  if (sig !== ui.handSig) {
    const { order, fresh } = arrange(ui.order, hand, ui.mode);
    // A card that arrived during the round is marked; the deal itself is not.
    ui.fresh = ui.handSig === null ? [] : fresh;
    ui.order = order;
    ui.handSig = sig;
  }
  const inHand = new Set(hand);
  const top = vw.discard_top;
  const usable = (c) => inHand.has(c) || (c === top && vw.phase === "draw");
  ui.selected = ui.selected.filter(usable);
  ui.staged = ui.staged.filter((m) => m.every(usable));
  ui.offs = ui.offs.filter((o) => o.cards.every((c) => inHand.has(c)));
  if (vw.phase !== "draw" || vw.turn !== ctrl.seat) ui.proposing = false;
  saveHand(tableId, round, { order: ui.order, staged: ui.staged, offs: ui.offs, mode: ui.mode });
  return ui;
}

/** My seat: the staging, the buttons and the hand are drawn for a seated player only. */
const mySeat = (/** @type {TableCtrl} */ ctrl) => /** @type {number} */ (ctrl.seat);

function stagedCards(/** @type {KonkanUi} */ ui) {
  return new Set([...ui.staged.flat(), ...ui.offs.flatMap((o) => o.cards)]);
}

/** The total my next opening must reach: the view's, or (a replay of an older record)
 * the threshold, beaten by one with the escalating option. */
export function openingTarget(/** @type {KonkanView} */ vw) {
  if (typeof vw.opening_target === "number") return vw.opening_target;
  const base = vw.options.threshold;
  return vw.options.escalating_opening && vw.last_opening ? Math.max(base, vw.last_opening + 1) : base;
}

// The hand row is the same element from one drawing to the next: its drag listeners are
// added once, and each drop goes to the drawing's latest handler.
/**
 * @param {any} el  the hand row (with the listeners added once)
 * @param {(card: string, target: string, after: boolean) => void} onDrop  a card dropped on another
 * @param {(card: string, x: number, y: number, hover: boolean) => boolean} onOut  a card over (hover) or dropped on the table: true when that is a move
 */
function dragHere(el, onDrop, onOut) {
  if (!el) return;
  el.sahratDrop = onDrop;
  el.sahratOut = onOut;
  if (!el.sahratDrag) {
    el.sahratDrag = true;
    dragToReorder(el, (...args) => el.sahratDrop(...args), (...args) => el.sahratOut(...args));
  }
}

/** Where a card dragged out of the hand would go: the discard pile, a table meld, or nowhere. */
function dropZone(/** @type {number} */ x, /** @type {number} */ y) {
  const pile = document.querySelector("#discard-pile");
  if (pile && inside(pile, x, y, 12)) return { pile: /** @type {HTMLElement} */ (pile), meld: null };
  for (const el of document.querySelectorAll("#table-melds .table-meld[data-meld]")) {
    if (inside(el, x, y, 0)) return { pile: null, meld: /** @type {HTMLElement} */ (el) };
  }
  return null;
}

/** The drop zone under a dragged card, outlined (one at a time). */
function markZone(/** @type {Element | null} */ el) {
  for (const old of document.querySelectorAll(".drop-zone")) if (old !== el) old.classList.remove("drop-zone");
  el?.classList.add("drop-zone");
}

const HINTS_KEY = "sahrat.hints";
const hintsOn = () => localStorage.getItem(HINTS_KEY) === "on";

/** The middle of a Konkan table. */
export function render(/** @type {TableCtrl} */ ctrl) {
  const vw = /** @type {KonkanView} */ (ctrl.view);
  noteCommitment(ctrl);
  const me = ctrl.seat;
  const ui = me === null ? null : uiState(ctrl);
  const myTurn = me !== null && vw.turn === me && !vw.match_over && !ctrl.roundBreak;
  const simple = new Set((vw.simple_actions || []).map((a) => a.type));
  const aceValue = vw.options.ace_value;
  // My state, for the handlers below: only a seat's own hand and buttons reach them.
  const mine = /** @type {KonkanUi} */ (ui);

  const toggle = (/** @type {string} */ card) => {
    const i = mine.selected.indexOf(card);
    if (i >= 0) mine.selected.splice(i, 1); else mine.selected.push(card);
    ctrl.redraw();
  };
  // A card of my hand discarded in one gesture (a double tap, or dropped on the pile).
  const canDiscard = (/** @type {string} */ card) => myTurn && vw.phase === "play" && (vw.hand || []).includes(card);

  /** @param {Action} action @param {() => void} [after] what else a move that went through clears */
  const act = async (action, after) => {
    const reply = await ctrl.send(action);
    if (reply.ok) { mine.selected = []; mine.proposing = false; if (after) after(); ctrl.redraw(); }
    return reply;
  };

  // Tapping a table meld: a joker swap when the selection is exactly what the
  // joker stands for, otherwise a lay-off (sent at once when I have opened).
  const tapMeld = (/** @type {TableMeld} */ meld) => {
    if (!ui || me === null || !ui.selected.length) return;
    const cards = ui.selected.filter((c) => c !== vw.discard_top || (vw.hand || []).includes(c));
    const faces = cards.map((c) => parse(c).face).sort().join();
    const hasJoker = meld.cards.some((c) => parse(c).joker);
    if (hasJoker && faces === [...meld.joker_for].sort().join()) {
      act({ type: "swap_joker", meld: meld.id, cards });
      return;
    }
    if (vw.opened[me] && !ui.staged.length && vw.phase === "play") {
      act({ type: "lay_down", lay_offs: [{ meld: meld.id, cards }] });
      return;
    }
    ui.offs.push({ meld: meld.id, cards });
    ui.selected = [];
    ctrl.redraw();
  };

  // "Arrange my melds": the server's searching bot is asked (at a free table); its
  // lay-down is staged when it answers with one, else the page's own search's.
  if (ui?.arranging && ctrl.hint) {
    ui.arranging = false;
    stageBest(ctrl, ui, vw, ctrl.hint, false);
  }

  // What changed since the last drawing (a new or longer meld, a new discard) moves in.
  const seen = (ctrl.ui.seen ??= { melds: {}, top: null });
  const changed = new Set(vw.melds.filter((m) => seen.melds[m.id] !== m.cards.join()).map((m) => m.id));
  const topChanged = vw.discard_top !== seen.top;
  seen.melds = Object.fromEntries(vw.melds.map((m) => [m.id, m.cards.join()]));
  seen.top = vw.discard_top;

  // With hints on, the table melds the one selected card would fit are outlined.
  const fits = new Set(ui && hintsOn() && ui.selected.length === 1 ? fittingMelds(ui.selected[0], vw.melds, aceValue) : []);
  // The melds the hint names (a lay-off on one, a joker swap) are outlined like its cards.
  const pointed = new Set(ctrl.hint ? [ctrl.hint.meld, ...(ctrl.hint.lay_offs || []).map((/** @type {any} */ l) => l.meld)] : []);
  const melds = v("section.melds", { id: "table-melds" },
    v("h3", t("konkan.table_melds")),
    vw.melds.length ? groupByOwner(vw.melds, ctrl.nameOf, (m) => v("button", {
      key: m.id, type: "button", class: `table-meld${fits.has(m.id) ? " fits" : ""}${changed.has(m.id) ? " changed" : ""}${pointed.has(m.id) ? " suggested" : ""}`, dataset: { meld: m.id },
      onclick: () => tapMeld(m),
      "aria-label": t("konkan.meld_of", { ...subject(ctrl.nameOf, m.owner), cards: m.cards.map(spoken).join("، ") }),
    }, m.cards.map((c) => cardV(c, { small: true, tag: "span" })),
    m.joker_for.length ? v("span.joker-for", t("konkan.joker_for", { cards: m.joker_for.map(label).join("/") })) : null))
      : v("p.muted", t("konkan.no_melds")));

  const discardSelected = vw.discard_top !== null && ui?.selected.includes(vw.discard_top);
  const canTake = myTurn && vw.phase === "draw" && vw.discard_top;
  const tapDiscard = () => {
    const top = vw.discard_top;
    if (!canTake || !top) return;
    if (discardSelected) { toggle(top); return; }
    // One tap proposes the lay-downs that use the card; a second tap on the pile picks it by hand.
    if (mine.proposing) { mine.proposing = false; toggle(top); return; }
    mine.proposing = true;
    ctrl.redraw();
  };
  // The pile's card dragged onto my hand: the lay-downs that would use it.
  const pileDrop = (/** @type {number} */ x, /** @type {number} */ y, /** @type {boolean} */ hover) => {
    const hand = document.querySelector("#hand");
    const over = !!hand && !!canTake && inside(hand, x, y, 16);
    if (hover) { markZone(over ? hand : null); return over; }
    markZone(null);
    if (!over) return false;
    mine.proposing = true;
    ctrl.redraw();
    return true;
  };
  const piles = v("section.piles",
    v("div.pile", { id: "stock" },
      v("button", {
        type: "button", class: "card back", id: "stock-card", disabled: !(myTurn && simple.has("draw")),
        onclick: () => act({ type: "draw" }), "aria-label": t("konkan.draw"),
      }, v("span.count", v("bdi", vw.stock_count))),
      v("span.pile-label", t("konkan.stock"), " · ", v("bdi", vw.stock_count))),
    v("div.pile", { id: "discard-pile", ref: (/** @type {any} */ el) => { if (el && ui) dragPileCard(el, pileDrop); } },
      vw.discard_top
        ? cardV(vw.discard_top, { selected: discardSelected, onclick: tapDiscard, extraClass: `${canTake ? "takeable" : ""}${topChanged ? " changed" : ""}` })
        : v("div.card.empty", "—"),
      v("span.pile-label", t("konkan.discard_pile"), " · ", v("bdi", vw.discard_count))),
  );

  // The felt: the piles in its middle, the table melds around them (scrolling in their
  // own box), the ways to take the discard over the melds, never over the piles.
  const felt = v("section.felt", { id: "felt" }, piles,
    v("div.felt-body", melds, ui?.proposing ? proposalsPanel(ctrl, ui, vw, act) : null));
  const parts = [felt];
  // The dock: the buttons and the hand, at the bottom of the screen.
  if (ui) {
    const tap = (/** @type {string} */ card, /** @type {MouseEvent} */ e) => {
      if (doubleTap(card, e) && canDiscard(card)) { act({ type: "discard", card }); return; }
      toggle(card);
    };
    const out = (/** @type {string} */ card, /** @type {number} */ x, /** @type {number} */ y, /** @type {boolean} */ hover) => {
      const zone = dropZone(x, y);
      const usable = zone?.pile ? canDiscard(card) : !!zone?.meld && myTurn;
      if (hover) { markZone(usable ? zone?.pile || zone?.meld || null : null); return usable; }
      markZone(null);
      if (!usable || !zone) return false;
      if (zone.pile) { act({ type: "discard", card }); return true; }
      const meld = vw.melds.find((m) => String(m.id) === zone.meld?.dataset.meld);
      if (!meld) return false;
      ui.selected = [card];
      tapMeld(meld);
      return true;
    };
    parts.push(staging(ctrl, ui, vw), v("div.dock", controls(ctrl, ui, vw, myTurn, simple, act), handRow(ctrl, ui, vw, tap, out)));
  } else parts.push(v("p.muted.spectator-note", t("table.watching")));
  return v("div.konkan", parts);
}

/** "Arrange my melds": the best lay-down staged (the server's suggestion when it is one), to confirm. */
/** @param {TableCtrl} ctrl @param {KonkanUi} ui @param {KonkanView} vw @param {Action | null} hint @param {boolean} [redraw]  false while drawing */
function stageBest(ctrl, ui, vw, hint, redraw = true) {
  const me = mySeat(ctrl);
  /** @type {{ [field: string]: any, melds?: string[][], lay_offs?: { meld: number, cards: string[] }[] } | null} */
  let best = null;
  if (hint && (hint.type === "lay_down" || hint.type === "take_discard") && (hint.melds?.length || hint.lay_offs?.length)) best = hint;
  else if (vw.phase === "draw") best = discardProposals(vw, me, openingTarget(vw), 1)[0]?.action || null;
  else best = bestLayDown(vw.hand || [], vw, me, openingTarget(vw));
  if (best) {
    ui.staged = (best.melds || []).map((m) => [...m]);
    ui.offs = (best.lay_offs || []).map((o) => ({ meld: o.meld, cards: [...o.cards] }));
    ui.selected = [];
  } else toast(t("konkan.nothing_to_arrange"), "info", 3000);
  if (redraw) ctrl.redraw();
}

/** @param {TableCtrl} ctrl @param {KonkanUi} ui @param {KonkanView} vw */
function arrangeMelds(ctrl, ui, vw) {
  // The server answers one hint every two seconds: sooner, the page's own search.
  if (!ctrl.mayAskHint() || Date.now() - (ctrl.hintAskedAt || 0) < 2100) { stageBest(ctrl, ui, vw, null); return; }
  ui.arranging = true;
  ctrl.hint = null;
  ctrl.askHint();
  ctrl.redraw();
  // No answer (refused: one hint every two seconds): the page's own search.
  setTimeout(() => {
    if (!ui.arranging) return;
    ui.arranging = false;
    const now = /** @type {KonkanView} */ (ctrl.view);
    if (now.turn === ctrl.seat) stageBest(ctrl, ui, now, null); else ctrl.redraw();
  }, 2500);
}

/** @param {TableCtrl} ctrl @param {KonkanUi} ui @param {KonkanView} vw @param {Act} act */
function proposalsPanel(ctrl, ui, vw, act) {
  const top = /** @type {string} */ (vw.discard_top);  // proposed only while there is one to take
  const list = discardProposals(vw, mySeat(ctrl), openingTarget(vw));
  return v("div.proposals", { id: "discard-proposals", role: "group", "aria-label": t("konkan.take_with") },
    v("p", list.length ? t("konkan.take_with") : t("konkan.no_proposal")),
    list.map((p, i) => v("button.proposal", {
      key: JSON.stringify(p.action), type: "button", dataset: { proposal: i },
      onclick: () => act(p.action, () => { ui.staged = []; ui.offs = []; }),
    }, p.cards
      ? [p.cards.map((m) => v("span.proposal-meld", (m.some(isJoker) ? m : sortBySuit(m)).map((c) => cardV(c, { small: true, tag: "span" })))), " ", v("bdi.value", `= ${p.total}`)]
      : [cardV(top, { small: true, tag: "span" }), " ", t("konkan.lay_off_on", { meld: meldWords(p.meld, ctrl.nameOf) })])),
    v("button.link", { type: "button", id: "pick-by-hand", onclick: () => { ui.proposing = false; ui.selected.push(top); ctrl.redraw(); } }, t("konkan.pick_by_hand")));
}

/** @param {TableMeld[]} melds @param {NameOf} nameOf @param {(meld: TableMeld) => any} draw */
function groupByOwner(melds, nameOf, draw) {
  const owners = [...new Set(melds.map((m) => m.owner))];
  return owners.map((owner) => v("div.meld-group", { key: owner },
    v("span.owner", nameOf(owner)),
    v("div.meld-row", melds.filter((m) => m.owner === owner).map(draw))));
}

/** The opening total of the staged melds and whether it reaches the target. */
/** @param {KonkanUi} ui @param {KonkanView} vw @param {number} seat */
function openingCheck(ui, vw, seat) {
  const infos = ui.staged.map((m) => konkanMeld(m, vw.options.ace_value));
  const total = infos.reduce((sum, i) => sum + (i.ok ? i.value : 0), 0);
  const target = openingTarget(vw);
  return { infos, total, target, enough: vw.opened[seat] || total >= target, valid: infos.every((i) => i.ok) };
}

/** @param {TableCtrl} ctrl @param {KonkanUi} ui @param {KonkanView} vw */
function staging(ctrl, ui, vw) {
  if (!ui.staged.length && !ui.offs.length) return v("section.staging.empty", { id: "staging" });
  const { infos, total, target } = openingCheck(ui, vw, mySeat(ctrl));
  const opened = vw.opened[mySeat(ctrl)];
  return v("section.staging", { id: "staging" },
    v("h3", t("konkan.new_melds")),
    ui.staged.map((m, i) => v("div.staged", { key: m.join(), dataset: { staged: i } },
      m.map((c) => cardV(c, { small: true, tag: "span" })),
      infos[i].ok ? v("bdi.value", `= ${infos[i].value}`) : v("span.bad", t(`why.${infos[i].why}`)),
      v("button.link", { type: "button", onclick: () => { ui.staged.splice(i, 1); ctrl.redraw(); }, "aria-label": t("konkan.unstage") }, "✕"))),
    ui.offs.map((o, i) => v("div.staged.off", { key: `${o.meld}:${o.cards.join()}` },
      t("konkan.lay_off_on", { meld: meldWords(o.meld, ctrl.nameOf) }), " ", o.cards.map((c) => cardV(c, { small: true, tag: "span" })),
      v("button.link", { type: "button", onclick: () => { ui.offs.splice(i, 1); ctrl.redraw(); }, "aria-label": t("konkan.unstage") }, "✕"))),
    opened ? null : v("p", { id: "opening-total", class: total >= target ? "ok" : "short" },
      t("konkan.opening_total_of"), " ", v("bdi", total), " / ", v("bdi", target), " ", total >= target ? "✓" : "✗"));
}

/** @param {TableCtrl} ctrl @param {KonkanUi} ui @param {KonkanView} vw @param {boolean} myTurn @param {Set<string>} simple @param {Act} act */
function controls(ctrl, ui, vw, myTurn, simple, act) {
  const selected = ui.selected;
  const onlyHand = selected.filter((c) => c !== vw.discard_top || (vw.hand || []).includes(c));
  const buttons = [];
  // A long label has a short one for a phone's bar (its start, so the name read out
  // begins with the words shown); the whole label is still read out there.
  const btn = (id, text, onclick, opts = {}) => buttons.push(v(`button${opts.primary ? ".primary" : ""}`, {
    type: "button", id, onclick, disabled: opts.disabled, title: opts.why, "aria-describedby": opts.why ? "refused-why" : null,
  }, opts.short ? [v("span.short", { "aria-hidden": "true" }, opts.short), v("span.label", text)] : text));
  let why = "";  // the reason a move is known to be refused, shown beside the buttons

  btn("make-meld", t("konkan.make_meld"), () => { ui.staged.push([...selected]); ui.selected = []; ctrl.redraw(); }, { disabled: selected.length < 3, short: t("konkan.make_meld_short") });
  const me = mySeat(ctrl);
  const check = openingCheck(ui, vw, me);
  const layable = ui.staged.length || ui.offs.length;
  if (layable && !check.valid) why = t("konkan.why_invalid");
  else if (ui.staged.length && !check.enough) why = t("konkan.why_below", { total: check.total, target: check.target });
  else if (!ui.staged.length && ui.offs.length && !vw.opened[me]) why = t("err.not_opened");
  if (myTurn && vw.phase === "draw") {
    btn("draw", t("konkan.draw"), () => act({ type: "draw" }), { primary: true, disabled: !simple.has("draw"), short: t("konkan.draw_short") });
    const committed = vw.committed[me];
    btn("take-discard", t("konkan.take_discard"), () => {
      const action = { type: "take_discard" };
      if (ui.staged.length) action.melds = ui.staged;
      if (ui.offs.length) action.lay_offs = ui.offs;
      act(action, () => { ui.staged = []; ui.offs = []; });
    }, { disabled: !vw.discard_top || (!committed && (!layable || !!why)), why: layable ? why : "", short: t("konkan.take_discard_short") });
  }
  if (myTurn && vw.phase === "play") {
    btn("lay-down", t("konkan.lay_down"), () => {
      const action = { type: "lay_down" };
      if (ui.staged.length) action.melds = ui.staged;
      if (ui.offs.length) action.lay_offs = ui.offs;
      act(action, () => { ui.staged = []; ui.offs = []; });
    }, { disabled: !layable || !!why, why });
    btn("discard", t("konkan.discard"), () => act({ type: "discard", card: onlyHand[0] }), { primary: true, disabled: onlyHand.length !== 1 });
  }
  if (myTurn && simple.has("commit")) btn("commit", t("konkan.commit"), () => ctrl.confirm(t("konkan.commit_confirm"), () => act({ type: "commit" })));
  if (myTurn && simple.has("claim_redeal")) btn("redeal", t("konkan.claim_redeal"), () => act({ type: "claim_redeal" }));
  if (myTurn && simple.has("end_turn")) btn("end-turn", t("konkan.end_turn"), () => act({ type: "end_turn" }));
  if (myTurn) btn("arrange", t("konkan.arrange"), () => arrangeMelds(ctrl, ui, vw), { disabled: !!ui.arranging });
  if (myTurn && ctrl.mayAskHint()) btn("ask-hint", [vicon("hint"), v("span.label", t("konkan.ask_hint"))], () => ctrl.askHint());
  if (ui.staged.length || ui.offs.length || selected.length) {
    btn("clear", t("konkan.clear"), () => { ui.staged = []; ui.offs = []; ui.selected = []; ctrl.redraw(); });
  }
  const turnText = vw.match_over ? t("table.match_over")
    : myTurn ? t(vw.phase === "draw" ? "konkan.your_turn_draw" : "konkan.your_turn_play")
      : t("table.their_turn", { who: ctrl.nameOf(vw.turn) });
  // What to do now, and the lines about it (the hint, why a move is refused, the last
  // refusal): on a phone those float over the seat above the bar, which keeps its height.
  return v("section.controls",
    v("div.status",
      v("p.turn-line", { id: "turn-line", class: myTurn ? "mine" : "" }, turnText),
      v("div.messages",
        myTurn ? hintLine(ctrl) : null,
        myTurn && why ? v("p.why", { id: "refused-why" }, why) : null,
        errorLine(ctrl))),
    v("div.row.actions", buttons));
}

/**
 * @param {TableCtrl} ctrl @param {KonkanUi} ui @param {KonkanView} vw
 * @param {(card: string, e: MouseEvent) => void} tap  a tap on a card of the hand
 * @param {(card: string, x: number, y: number, hover: boolean) => boolean} out  a card dragged out of the hand
 */
function handRow(ctrl, ui, vw, tap, out) {
  const staged = stagedCards(ui);
  const cards = ui.order.filter((c) => !staged.has(c));
  const hints = hintsOn();
  // Each card of a meld the hand already holds gets its group's outline.
  const group = new Map();
  if (hints) meldGroups(cards, vw.options.ace_value).forEach((m, i) => m.cards.forEach((c) => group.set(c, i % 4)));
  const hint = ctrl.hint;
  const suggested = new Set(hint ? [hint.card, ...(hint.cards || []), ...(hint.melds || []).flat(), ...(hint.lay_offs || []).flatMap((l) => l.cards)].filter(Boolean) : []);
  const sortBy = (mode) => { setSortPreference(mode); ui.mode = mode; ui.order = arrange([], ui.order, mode).order; ctrl.redraw(); };
  const move = (dir) => {
    // Move the selected cards one place left or right (on screen) in my order.
    const rtl = document.documentElement.dir === "rtl";
    const step = (dir === "left") !== rtl ? -1 : 1;
    const order = ui.order;
    const idx = ui.selected.map((c) => order.indexOf(c)).filter((i) => i >= 0).sort((a, b) => step * (b - a));
    for (const i of idx) {
      const j = i + step;
      if (j < 0 || j >= order.length || ui.selected.includes(order[j])) continue;
      [order[i], order[j]] = [order[j], order[i]];
    }
    ui.mode = "own";
    ctrl.redraw();
  };
  const onDrop = (card, target, after) => {
    ui.order = moveCard(ui.order, card, target, after);
    ui.mode = "own";
    ctrl.redraw();
  };
  const row = v("div.hand", { id: "hand", class: cards.length > 11 ? "fan" : "", ref: (el) => dragHere(el, onDrop, out) }, cards.map((c) => cardV(c, {
    selected: ui.selected.includes(c), onclick: (e) => tap(c, e),
    extraClass: [ui.fresh.includes(c) ? "fresh" : "", group.has(c) ? `hint hint-${group.get(c)}` : "", suggested.has(c) ? "suggested" : ""].join(" "),
  })));
  const pressed = (mode) => (ui.mode === mode ? "true" : "false");
  return v("section.hand-area",
    v("div.row.hand-tools",
      v("span.muted", t("konkan.my_hand_n"), " ", v("bdi", (vw.hand || []).length)),
      v("button", { type: "button", id: "sort-suit", "aria-pressed": pressed("suit"), onclick: () => sortBy("suit") }, t("hand.sort_suit")),
      v("button", { type: "button", id: "sort-rank", "aria-pressed": pressed("rank"), onclick: () => sortBy("rank") }, t("hand.sort_rank")),
      v("button", { type: "button", id: "hint-toggle", "aria-pressed": hints ? "true" : "false",
        onclick: () => { localStorage.setItem(HINTS_KEY, hints ? "off" : "on"); ctrl.redraw(); } }, vicon("hint"), t("hand.hints")),
      v("button", { type: "button", id: "move-left", "aria-label": t("hand.move_left"), disabled: !ui.selected.length, onclick: () => move("left") }, "◀"),
      v("button", { type: "button", id: "move-right", "aria-label": t("hand.move_right"), disabled: !ui.selected.length, onclick: () => move("right") }, "▶"),
    ),
    row);
}

// --- score sheet and round summary ------------------------------------------------------

/** The score sheet: each finished round's scores, and the totals. */
export function sheet(/** @type {KonkanView} */ vw, /** @type {NameOf} */ nameOf) {
  const seats = vw.totals.map((_, i) => i);
  return v("table.sheet",
    v("thead", v("tr", v("th", t("sheet.round")), seats.map((s) => v("th", nameOf(s))), v("th", t("sheet.finish")))),
    v("tbody",
      vw.scores.map((r) => v("tr",
        v("td", v("bdi", r.round)),
        seats.map((s) => v("td", { class: r.winner === s ? "winner" : "" }, v("bdi", r.scores[s]))),
        v("td", t(`finish.${r.finish}`)))),
      vw.scores.length ? null : v("tr", v("td", { colspan: seats.length + 2 }, t("sheet.empty")))),
    v("tfoot", v("tr", v("th", t("sheet.total")), seats.map((s) => v("th", v("bdi", vw.totals[s]))), v("th", ""))));
}

/** A round's end: who went out and how, each seat's score and the hands left, the fairness check. */
export function summary(/** @type {GameEvent} */ ev, /** @type {KonkanView} */ vw, /** @type {NameOf} */ nameOf) {
  return v("div.summary",
    v("p.lead", ev.winner === null || ev.winner === undefined
      ? t("summary.void")
      : t(`summary.out_${ev.finish}`, subject(nameOf, ev.winner))),
    v("table.sheet", v("tbody", (ev.scores || []).map((score, s) => v("tr", { key: s },
      v("th", nameOf(s)),
      v("td", { class: ev.winner === s ? "winner" : "" }, v("bdi.score", score)),
      v("td.hand-cards", (ev.hands?.[s] || []).map((c) => cardV(c, { small: true, tag: "span" }))))))),
    fairnessOf(ev));
}
