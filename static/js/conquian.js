// The Conquian table (RULES Part 2): the face-up card with take / refuse / pass,
// the force question, the discard, and the take editor. A take sends my WHOLE
// new arrangement, so the editor starts from my melds plus the face-up card and
// lets me move cards between groups and add hand cards.
// `h` here is dom.js's `v`: these views are patched in place (Preact), not rebuilt.
import { v as h, vicon } from "./view.js";
import { t } from "./i18n.js";
import { cardV, conquianMeldOk, conquianSort, label } from "./cards.js";
import { noteCommitment } from "./fairness.js";
import { fairOf, hintLine } from "./konkan.js";
import { subject } from "./describe.js";

export function renderConquian(ctx) {
  const { st } = ctx;
  const v = st.view;
  noteCommitment(st);
  const me = st.seat;
  const other = me === null ? null : 1 - me;
  const ui = st.ui;
  ui.selected ??= [];
  const hand = v.hand || [];
  ui.selected = ui.selected.filter((c) => hand.includes(c));
  const myTurn = me !== null && v.turn === me && !v.match_over;
  if (!myTurn || !["choose", "turned_up", "forced"].includes(v.phase)) ui.editor = null;

  const meldsOf = (seat) => h("div.meld-row", { dataset: { owner: seat } },
    v.melds[seat].length ? v.melds[seat].map((m) => h("div.table-meld", { key: m.join() }, m.map((c) => cardV(c, { small: true }))))
      : h("span.muted", t("conquian.no_melds")));

  const faceUp = h("section.piles",
    h("div.pile", { id: "stock" }, h("div.card.back", h("span.count", v.stock_count)),
      h("span.pile-label", t("konkan.stock"), " · ", v.stock_count)),
    h("div.pile", { id: "face-up" },
      v.face_up ? cardV(v.face_up) : h("div.card.empty", "—"),
      h("span.pile-label", v.face_up ? t(`conquian.how_${v.face_up_how}`, subject(ctx.nameOf, v.face_up_from)) : t("conquian.no_face_up"))),
    h("div.pile", h("div.card.back.dead", h("span.count", v.dead_count)), h("span.pile-label", t("conquian.dead"), " · ", v.dead_count)),
  );

  const parts = [];
  const seats = me === null ? [0, 1] : [other, me];
  parts.push(h("section.melds", { id: "table-melds" },
    seats.map((s) => h("div.meld-group", { key: s }, h("span.owner", ctx.nameOf(s)), meldsOf(s)))));
  parts.push(faceUp);
  if (me === null) { parts.push(h("p.muted", t("table.watching"))); return h("div.conquian", parts); }
  if (ui.editor) parts.push(editor(ctx, ui, v));
  else parts.push(controls(ctx, ui, v, myTurn), handRow(ctx, ui, hand, v.phase === "discard" && myTurn));
  return h("div.conquian", parts);
}

function controls(ctx, ui, v, myTurn) {
  const { send } = ctx;
  const simple = new Set((v.simple_actions || []).map((a) => a.type));
  const act = async (action) => {
    const reply = await send(action);
    if (reply.ok) { ui.selected = []; ctx.redraw(); }
  };
  const buttons = [];
  const btn = (id, text, onclick, opts = {}) => buttons.push(h(`button${opts.primary ? ".primary" : ""}`, { type: "button", id, onclick, disabled: opts.disabled }, text));
  let line;
  if (v.match_over) line = t("table.match_over");
  else if (!myTurn) line = t("table.their_turn", { who: ctx.nameOf(v.turn) });
  else if (v.phase === "force") {
    line = t(`conquian.force_question_${v.question.after}`, { who: ctx.nameOf(v.question.about) });
    btn("force", t("conquian.force"), () => act({ type: "force" }), { primary: true });
    btn("decline-force", t("conquian.decline_force"), () => act({ type: "decline_force" }));
  } else if (v.phase === "discard") {
    line = t("conquian.pick_discard");
    btn("discard", t("konkan.discard"), () => act({ type: "discard", card: ui.selected[0] }), { primary: true, disabled: ui.selected.length !== 1 });
  } else {
    line = t(v.phase === "forced" ? "conquian.you_are_forced" : v.phase === "turned_up" ? "conquian.your_turn_turned_up" : "conquian.your_turn");
    btn("take", t("conquian.take"), () => { ui.editor = startEditor(v); ctx.redraw(); }, { primary: true });
    if (simple.has("refuse")) btn("refuse", t("conquian.refuse"), () => act({ type: "refuse" }));
    if (simple.has("pass")) btn("pass", t("conquian.pass"), () => act({ type: "pass" }));
  }
  if (myTurn && ctx.askHint) btn("ask-hint", [vicon("hint"), t("konkan.ask_hint")], () => ctx.askHint());
  return h("section.controls",
    h("p.turn-line", { id: "turn-line", class: myTurn ? "mine" : "" }, line),
    h("div.row.actions", buttons),
    myTurn ? hintLine(ctx.st) : null,
    h("p.error-line", { id: "last-error", role: "status" }, ctx.st.lastError || ""));
}

function handRow(ctx, ui, hand, selectable) {
  return h("section.hand-area",
    h("div.row.hand-tools", h("span.muted", t("konkan.my_hand", { n: hand.length }))),
    h("div.hand", { id: "hand" }, hand.map((c) => cardV(c, {
      selected: ui.selected.includes(c),
      onclick: () => {
        if (!selectable) return;
        ui.selected = ui.selected[0] === c ? [] : [c];
        ctx.redraw();
      },
    }))));
}

// --- the take editor --------------------------------------------------------------------

function startEditor(v) {
  const groups = v.melds[v.viewer].map((m) => [...m]);
  // Put the face-up card where it fits by itself, else in a new group of its own.
  const fit = groups.find((g) => conquianMeldOk([...g, v.face_up]));
  if (fit) fit.push(v.face_up); else groups.push([v.face_up]);
  return { groups, selected: [] };
}

function editor(ctx, ui, v) {
  const ed = ui.editor;
  const hand = (v.hand || []).filter((c) => !ed.groups.some((g) => g.includes(c)));
  const fromHand = new Set(v.hand || []);
  const toggle = (c) => {
    const i = ed.selected.indexOf(c);
    if (i >= 0) ed.selected.splice(i, 1); else ed.selected.push(c);
    ctx.redraw();
  };
  const take = (cards) => { for (const g of ed.groups) for (const c of cards) { const i = g.indexOf(c); if (i >= 0) g.splice(i, 1); } };
  const moveTo = (index) => {
    const cards = ed.selected;
    take(cards);
    if (index === null) ed.groups.push([...cards]); else ed.groups[index].push(...cards);
    ed.groups = ed.groups.filter((g) => g.length);
    ed.selected = [];
    ctx.redraw();
  };
  const valid = ed.groups.every(conquianMeldOk) && ed.groups.some((g) => g.includes(v.face_up));
  const laid = ed.groups.flat().length;
  return h("section.editor", { id: "take-editor" },
    h("h3", t("conquian.arrange", { card: label(v.face_up) })),
    h("p.muted", t("conquian.arrange_help")),
    h("div.groups", ed.groups.map((g, i) => h("div", { key: i, class: `group ${conquianMeldOk(g) ? "ok" : "bad"}`, dataset: { group: i } },
      h("div.group-cards", conquianSort(g).map((c) => cardV(c, { small: true, selected: ed.selected.includes(c), onclick: () => toggle(c) }))),
      h("button.link", { type: "button", class: "move-here", disabled: !ed.selected.length, onclick: () => moveTo(i) }, t("conquian.move_here")),
      conquianMeldOk(g) ? null : h("span.bad", t("conquian.not_a_meld"))))),
    h("div.row",
      h("button", { type: "button", id: "new-group", disabled: !ed.selected.length, onclick: () => moveTo(null) }, t("conquian.new_group")),
      h("button", {
        type: "button", id: "to-hand",
        // Open cards never go back to the hand: only cards that came from it may.
        disabled: !ed.selected.length || !ed.selected.every((c) => fromHand.has(c)),
        onclick: () => { take(ed.selected); ed.groups = ed.groups.filter((g) => g.length); ed.selected = []; ctx.redraw(); },
      }, t("conquian.back_to_hand"))),
    h("div.hand", { id: "editor-hand" }, hand.map((c) => cardV(c, { selected: ed.selected.includes(c), onclick: () => toggle(c) }))),
    h("p", { id: "laid-count", class: laid === 11 ? "ok" : "" }, t("conquian.laid_count", { n: laid })),
    h("div.row.actions",
      h("button.primary", {
        type: "button", id: "confirm-take", disabled: !valid,
        onclick: async () => {
          const reply = await ctx.send({ type: "take", melds: ed.groups.map(conquianSort) });
          if (reply.ok) { ui.editor = null; ctx.redraw(); }
        },
      }, t("conquian.confirm_take")),
      h("button", { type: "button", id: "cancel-take", onclick: () => { ui.editor = null; ctx.redraw(); } }, t("conquian.cancel"))),
    h("p.error-line", { id: "last-error", role: "status" }, ctx.st.lastError || ""));
}

// --- score sheet and deal summary ---------------------------------------------------------

export function conquianSheet(v, nameOf) {
  return h("table.sheet",
    h("thead", h("tr", h("th", t("sheet.deal")), h("th", t("sheet.winner")), h("th", t("sheet.points")))),
    h("tbody", v.results.map((r) => h("tr", h("td", h("bdi", r.deal)),
      h("td", r.finish === "draw" ? t("finish.draw") : nameOf(r.winner)), h("td", h("bdi", r.points)))),
    v.results.length ? null : h("tr", h("td", { colspan: 3 }, t("sheet.empty")))),
    h("tfoot", h("tr", h("th", t("sheet.total")), h("th", { colspan: 2 },
      scores(v.points, nameOf), " ", t("conquian.of_needed", { n: v.options.wins_needed })))));
}

// "name: 2 · name: 1", each number isolated so it reads the same in Arabic.
const scores = (list, nameOf) => list.map((p, s) => [s ? " · " : "", `${nameOf(s)}: `, h("bdi", p)]);

export function conquianSummary(ev, nameOf) {
  return h("div.summary",
    h("p.lead", ev.finish === "draw" ? t("ev.deal_draw") : t("ev.deal_win", subject(nameOf, ev.winner))),
    ev.totals ? h("p", scores(ev.totals, nameOf)) : null,
    fairOf(ev));
}
