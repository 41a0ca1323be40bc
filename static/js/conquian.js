// The Conquian table (RULES Part 2): the face-up card with take / refuse / pass,
// the force question, the discard, and the take editor. A take sends my WHOLE
// new arrangement, so the editor starts from my melds plus the face-up card and
// lets me move cards between groups and add hand cards.
// A game module: `render`, `sheet` and `summary`, as the table asks of each game
// (GameModule in table/ctrl.js). Its views are vnodes (view.js's `v`), patched in place.
import { v, vicon } from "./view.js";
import { t } from "./i18n.js";
import { cardV, conquianMeldOk, conquianSort, label } from "./cards.js";
import { arrange, sortPreference, setSortPreference, dragToReorder, doubleTap, moveCard } from "./hand.js";
import { fairnessOf, noteCommitment } from "./fairness.js";
import { subject } from "./describe.js";
import { hintLine, errorLine } from "./table/lines.js";

/** @typedef {import("./table/ctrl.js").TableCtrl} TableCtrl */
/** @typedef {import("./table/ctrl.js").NameOf} NameOf */
/** @typedef {import("./table/protocol.js").GameEvent} GameEvent */
/** @typedef {import("./table/protocol.js").Action} Action */

/**
 * The Conquian view of one seat (docs/schemas/ConquianView.json).
 * @typedef {object} ConquianView
 * @property {"conquian"} game
 * @property {number | null} viewer
 * @property {number} deal
 * @property {number | null} turn
 * @property {"choose" | "turned_up" | "force" | "forced" | "discard" | "over"} phase
 * @property {number[]} hand_counts
 * @property {string[][][]} melds  per seat, its melds, each a list of cards
 * @property {string | null} face_up
 * @property {number | null} face_up_from
 * @property {string | null} face_up_how  discarded, passed or turned_up
 * @property {number} stock_count
 * @property {number} dead_count
 * @property {number[]} points
 * @property {boolean} match_over
 * @property {number | null} winner
 * @property {string | null} round_commitment
 * @property {string[]} [hand]  absent for a spectator
 * @property {Action[]} [simple_actions]
 * @property {{ about: number, after: "refuse" | "pass" }} [question]  only in the force phase
 * @property {{ deal: number, winner: number | null, finish: string, points: number }[]} results
 * @property {{ wins_needed: number, [option: string]: any }} options
 *
 * The take editor: my whole arrangement after the take, being made.
 * @typedef {{ groups: string[][], selected: string[] }} TakeEditor
 *
 * This module's state at the table (TableCtrl.ui).
 * @typedef {object} ConquianUi
 * @property {string[]} selected
 * @property {TakeEditor | null} [editor]
 * @property {string[]} [order]  my hand in the order I keep it
 * @property {string} [mode]  suit, rank or own (after a drag)
 */

/**
 * The takes of the face-up card that need one tap: the card added to one of my melds,
 * or a new meld of it with two or three cards of my hand; each my whole arrangement
 * after the take (a take sends it all). A card is kept to discard unless the take
 * makes the eleven that win. Most cards laid first, at most `limit`.
 * @param {ConquianView} vw @param {number} [limit]
 * @returns {{ melds: string[][], laid: string[] }[]}
 */
export function takeProposals(vw, limit = 4) {
  const card = vw.face_up;
  if (!card || vw.viewer === null) return [];
  const mine = vw.melds[vw.viewer] || [];
  const hand = vw.hand || [];
  const down = mine.flat().length;
  /** @type {{ melds: string[][], laid: string[] }[]} */
  const out = [];
  const add = (/** @type {string[][]} */ melds, /** @type {string[]} */ laid) => {
    const left = hand.length - (laid.length - 1);
    if (left < 1 && down + laid.length !== 11) return;
    out.push({ melds: melds.map(conquianSort), laid });
  };
  mine.forEach((m, i) => {
    if (conquianMeldOk([...m, card])) add(mine.map((g, j) => (j === i ? [...g, card] : g)), [card]);
  });
  for (let a = 0; a < hand.length; a++) {
    for (let b = a + 1; b < hand.length; b++) {
      if (conquianMeldOk([card, hand[a], hand[b]])) add([...mine, [card, hand[a], hand[b]]], [card, hand[a], hand[b]]);
      for (let c = b + 1; c < hand.length; c++) {
        if (conquianMeldOk([card, hand[a], hand[b], hand[c]])) add([...mine, [card, hand[a], hand[b], hand[c]]], [card, hand[a], hand[b], hand[c]]);
      }
    }
  }
  return out.sort((x, y) => y.laid.length - x.laid.length).slice(0, limit);
}

// The hand row is the same element from one drawing to the next: its drag listeners are
// added once, and each drop goes to the drawing's latest handler.
/** @param {any} el @param {(card: string, target: string, after: boolean) => void} onDrop */
function dragHere(el, onDrop) {
  if (!el) return;
  el.sahratDrop = onDrop;
  if (!el.sahratDrag) { el.sahratDrag = true; dragToReorder(el, (...args) => el.sahratDrop(...args)); }
}

/** The middle of a Conquian table. */
export function render(/** @type {TableCtrl} */ ctrl) {
  const vw = /** @type {ConquianView} */ (ctrl.view);
  noteCommitment(ctrl);
  const me = ctrl.seat;
  const other = me === null ? null : 1 - me;
  const ui = /** @type {ConquianUi} */ (ctrl.ui);
  ui.selected ??= [];
  const hand = vw.hand || [];
  ui.selected = ui.selected.filter((c) => hand.includes(c));
  const myTurn = me !== null && vw.turn === me && !vw.match_over;
  if (!myTurn || !["choose", "turned_up", "forced"].includes(vw.phase)) ui.editor = null;

  const meldsOf = (seat) => v("div.meld-row", { dataset: { owner: seat } },
    vw.melds[seat].length ? vw.melds[seat].map((m) => v("div.table-meld", { key: m.join() }, m.map((c) => cardV(c, { small: true }))))
      : v("span.muted", t("conquian.no_melds")));

  const takes = myTurn && !ui.editor && ["choose", "turned_up", "forced"].includes(vw.phase) ? takeProposals(vw) : [];
  const faceUp = v("section.piles",
    v("div.pile", { id: "stock" }, v("div.card.back", v("span.count", vw.stock_count)),
      v("span.pile-label", t("konkan.stock"), " · ", vw.stock_count)),
    v("div.pile", { id: "face-up" },
      vw.face_up ? cardV(vw.face_up) : v("div.card.empty", "—"),
      v("span.pile-label", vw.face_up ? t(`conquian.how_${vw.face_up_how}`, subject(ctrl.nameOf, vw.face_up_from)) : t("conquian.no_face_up"))),
    v("div.pile", v("div.card.back.dead", v("span.count", vw.dead_count)), v("span.pile-label", t("conquian.dead"), " · ", vw.dead_count)),
  );

  const seats = me === null ? [0, 1] : [other, me];
  const melds = v("section.melds", { id: "table-melds" },
    seats.map((s) => v("div.meld-group", { key: s }, v("span.owner", ctrl.nameOf(s)), meldsOf(s))));
  // The felt: the piles in its middle, the melds beside them, the one-tap takes over the melds.
  const parts = [v("section.felt", { id: "felt" }, faceUp, v("div.felt-body", melds, takes.length ? takePanel(ctrl, ui, takes) : null))];
  if (me === null) { parts.push(v("p.muted.spectator-note", t("table.watching"))); return v("div.conquian", parts); }
  if (ui.editor) parts.push(editor(ctrl, ui, ui.editor, vw));
  else parts.push(controls(ctrl, ui, vw, myTurn), handRow(ctrl, ui, hand, vw.phase === "discard" && myTurn));
  return v("div.conquian", parts);
}

/** The one-tap takes of the face-up card (takeProposals). */
/** @param {TableCtrl} ctrl @param {ConquianUi} ui @param {{ melds: string[][], laid: string[] }[]} takes */
function takePanel(ctrl, ui, takes) {
  return v("div.proposals", { id: "take-proposals", role: "group", "aria-label": t("conquian.take_with") },
    v("p", t("conquian.take_with")),
    takes.map((p, i) => v("button.proposal", {
      key: p.melds.map((m) => m.join()).join("|"), type: "button", dataset: { proposal: i },
      onclick: async () => {
        const reply = await ctrl.send({ type: "take", melds: p.melds });
        if (reply.ok) { ui.selected = []; ctrl.redraw(); }
      },
    }, v("span.proposal-meld", conquianSort(p.laid).map((c) => cardV(c, { small: true, tag: "span" }))))));
}

/** @param {TableCtrl} ctrl @param {ConquianUi} ui @param {ConquianView} vw @param {boolean} myTurn */
function controls(ctrl, ui, vw, myTurn) {
  const simple = new Set((vw.simple_actions || []).map((a) => a.type));
  const act = async (action) => {
    const reply = await ctrl.send(action);
    if (reply.ok) { ui.selected = []; ctrl.redraw(); }
  };
  const buttons = [];
  const btn = (id, text, onclick, opts = {}) => buttons.push(v(`button${opts.primary ? ".primary" : ""}`, { type: "button", id, onclick, disabled: opts.disabled }, text));
  let line;
  if (vw.match_over) line = t("table.match_over");
  else if (!myTurn) line = t("table.their_turn", { who: ctrl.nameOf(vw.turn) });
  else if (vw.phase === "force") {
    const question = /** @type {{ about: number, after: string }} */ (vw.question);  // sent in this phase
    line = t(`conquian.force_question_${question.after}`, { who: ctrl.nameOf(question.about) });
    btn("force", t("conquian.force"), () => act({ type: "force" }), { primary: true });
    btn("decline-force", t("conquian.decline_force"), () => act({ type: "decline_force" }));
  } else if (vw.phase === "discard") {
    line = t("conquian.pick_discard");
    btn("discard", t("konkan.discard"), () => act({ type: "discard", card: ui.selected[0] }), { primary: true, disabled: ui.selected.length !== 1 });
  } else {
    line = t(vw.phase === "forced" ? "conquian.you_are_forced" : vw.phase === "turned_up" ? "conquian.your_turn_turned_up" : "conquian.your_turn");
    btn("take", t("conquian.take"), () => { ui.editor = startEditor(vw); ctrl.redraw(); }, { primary: true });
    if (simple.has("refuse")) btn("refuse", t("conquian.refuse"), () => act({ type: "refuse" }));
    if (simple.has("pass")) btn("pass", t("conquian.pass"), () => act({ type: "pass" }));
  }
  if (myTurn && ctrl.mayAskHint()) btn("ask-hint", [vicon("hint"), v("span.label", t("konkan.ask_hint"))], () => ctrl.askHint());
  return v("section.controls",
    v("div.status",
      v("p.turn-line", { id: "turn-line", class: myTurn ? "mine" : "" }, line),
      v("div.messages", myTurn ? hintLine(ctrl) : null, errorLine(ctrl))),
    v("div.row.actions", buttons));
}

/** @param {TableCtrl} ctrl @param {ConquianUi} ui @param {string[]} hand @param {boolean} selectable */
function handRow(ctrl, ui, hand, selectable) {
  // My order: sorted by suit or rank (the choice shared with Konkan), or as I dragged it.
  ui.mode ??= sortPreference();
  ui.order = arrange(ui.order || [], hand, ui.mode).order;
  const sortBy = (/** @type {string} */ mode) => { setSortPreference(mode); ui.mode = mode; ui.order = arrange([], hand, mode).order; ctrl.redraw(); };
  const onDrop = (/** @type {string} */ card, /** @type {string} */ target, /** @type {boolean} */ after) => {
    ui.order = moveCard(ui.order || [], card, target, after);
    ui.mode = "own";
    ctrl.redraw();
  };
  const pressed = (/** @type {string} */ mode) => (ui.mode === mode ? "true" : "false");
  const discard = async (/** @type {string} */ card) => {
    const reply = await ctrl.send({ type: "discard", card });
    if (reply.ok) { ui.selected = []; ctrl.redraw(); }
  };
  return v("section.hand-area",
    v("div.row.hand-tools", v("span.muted", t("konkan.my_hand", { n: hand.length })),
      v("button", { type: "button", id: "sort-suit", "aria-pressed": pressed("suit"), onclick: () => sortBy("suit") }, t("hand.sort_suit")),
      v("button", { type: "button", id: "sort-rank", "aria-pressed": pressed("rank"), onclick: () => sortBy("rank") }, t("hand.sort_rank"))),
    v("div.hand", { id: "hand", ref: (/** @type {any} */ el) => dragHere(el, onDrop) }, ui.order.map((c) => cardV(c, {
      selected: ui.selected.includes(c),
      onclick: (e) => {
        if (!selectable) return;
        // A double tap discards the card at once.
        if (doubleTap(c, e)) { discard(c); return; }
        ui.selected = ui.selected[0] === c ? [] : [c];
        ctrl.redraw();
      },
    }))));
}

// --- the take editor --------------------------------------------------------------------

/** @param {ConquianView} vw @returns {TakeEditor} */
function startEditor(vw) {
  // A take is my seat's, of the face-up card: both are there.
  const card = /** @type {string} */ (vw.face_up);
  const groups = vw.melds[/** @type {number} */ (vw.viewer)].map((m) => [...m]);
  // Put the face-up card where it fits by itself, else in a new group of its own.
  const fit = groups.find((g) => conquianMeldOk([...g, card]));
  if (fit) fit.push(card); else groups.push([card]);
  return { groups, selected: [] };
}

/** @param {TableCtrl} ctrl @param {ConquianUi} ui @param {TakeEditor} ed @param {ConquianView} vw */
function editor(ctrl, ui, ed, vw) {
  const card = /** @type {string} */ (vw.face_up);  // the card the take is of
  const hand = (vw.hand || []).filter((c) => !ed.groups.some((g) => g.includes(c)));
  const fromHand = new Set(vw.hand || []);
  const toggle = (c) => {
    const i = ed.selected.indexOf(c);
    if (i >= 0) ed.selected.splice(i, 1); else ed.selected.push(c);
    ctrl.redraw();
  };
  const take = (cards) => { for (const g of ed.groups) for (const c of cards) { const i = g.indexOf(c); if (i >= 0) g.splice(i, 1); } };
  const moveTo = (index) => {
    const cards = ed.selected;
    take(cards);
    if (index === null) ed.groups.push([...cards]); else ed.groups[index].push(...cards);
    ed.groups = ed.groups.filter((g) => g.length);
    ed.selected = [];
    ctrl.redraw();
  };
  const valid = ed.groups.every(conquianMeldOk) && ed.groups.some((g) => g.includes(card));
  const laid = ed.groups.flat().length;
  return v("section.editor", { id: "take-editor" },
    v("h3", t("conquian.arrange", { card: label(card) })),
    v("p.muted", t("conquian.arrange_help")),
    v("div.groups", ed.groups.map((g, i) => v("div", { key: i, class: `group ${conquianMeldOk(g) ? "ok" : "bad"}`, dataset: { group: i } },
      v("div.group-cards", conquianSort(g).map((c) => cardV(c, { small: true, selected: ed.selected.includes(c), onclick: () => toggle(c) }))),
      v("button.link", { type: "button", class: "move-here", disabled: !ed.selected.length, onclick: () => moveTo(i) }, t("conquian.move_here")),
      conquianMeldOk(g) ? null : v("span.bad", t("conquian.not_a_meld"))))),
    v("div.row",
      v("button", { type: "button", id: "new-group", disabled: !ed.selected.length, onclick: () => moveTo(null) }, t("conquian.new_group")),
      v("button", {
        type: "button", id: "to-hand",
        // Open cards never go back to the hand: only cards that came from it may.
        disabled: !ed.selected.length || !ed.selected.every((c) => fromHand.has(c)),
        onclick: () => { take(ed.selected); ed.groups = ed.groups.filter((g) => g.length); ed.selected = []; ctrl.redraw(); },
      }, t("conquian.back_to_hand"))),
    v("div.hand", { id: "editor-hand" }, hand.map((c) => cardV(c, { selected: ed.selected.includes(c), onclick: () => toggle(c) }))),
    v("p", { id: "laid-count", class: laid === 11 ? "ok" : "" }, t("conquian.laid_count", { n: laid })),
    v("div.row.actions",
      v("button.primary", {
        type: "button", id: "confirm-take", disabled: !valid,
        onclick: async () => {
          const reply = await ctrl.send({ type: "take", melds: ed.groups.map(conquianSort) });
          if (reply.ok) { ui.editor = null; ctrl.redraw(); }
        },
      }, t("conquian.confirm_take")),
      v("button", { type: "button", id: "cancel-take", onclick: () => { ui.editor = null; ctrl.redraw(); } }, t("conquian.cancel"))),
    errorLine(ctrl));
}

// --- score sheet and deal summary ---------------------------------------------------------

/** The score sheet: each finished deal's winner and points, and the points so far. */
export function sheet(/** @type {ConquianView} */ vw, /** @type {NameOf} */ nameOf) {
  return v("table.sheet",
    v("thead", v("tr", v("th", t("sheet.deal")), v("th", t("sheet.winner")), v("th", t("sheet.points")))),
    v("tbody", vw.results.map((r) => v("tr", v("td", v("bdi", r.deal)),
      v("td", r.finish === "draw" ? t("finish.draw") : nameOf(r.winner)), v("td", v("bdi", r.points)))),
    vw.results.length ? null : v("tr", v("td", { colspan: 3 }, t("sheet.empty")))),
    v("tfoot", v("tr", v("th", t("sheet.total")), v("th", { colspan: 2 },
      scores(vw.points, nameOf), " ", t("conquian.of_needed", { n: vw.options.wins_needed })))));
}

// "name: 2 · name: 1", each number isolated so it reads the same in Arabic.
const scores = (/** @type {number[]} */ list, /** @type {NameOf} */ nameOf) => list.map((p, s) => [s ? " · " : "", `${nameOf(s)}: `, v("bdi", p)]);

/** A deal's end: who won it (or a draw), the points so far, the fairness check. */
export function summary(/** @type {GameEvent} */ ev, /** @type {ConquianView} */ vw, /** @type {NameOf} */ nameOf) {
  return v("div.summary",
    v("p.lead", ev.finish === "draw" ? t("ev.deal_draw") : t("ev.deal_win", subject(nameOf, ev.winner))),
    ev.totals ? v("p", scores(ev.totals, nameOf)) : null,
    fairnessOf(ev));
}
