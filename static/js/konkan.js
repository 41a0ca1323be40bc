// The Konkan table (RULES Part 1): my hand, staging melds for one lay-down
// (the opening is one action), lay-offs and joker swaps by tapping a table meld,
// the stock, the discard pile (taking it carries the melds that use it), the
// opening total against the threshold, and the commitment in the last round.
// `h` here is dom.js's `v`: these views are patched in place (Preact), not rebuilt.
import { v as h, vicon } from "./view.js";
import { t } from "./i18n.js";
import { cardV, konkanMeld, parse, label, sortBySuit } from "./cards.js";
import { arrange, loadHand, saveHand, sortPreference, setSortPreference, dragToReorder, moveCard, isJoker } from "./hand.js";
import { discardProposals, meldGroups, fittingMelds } from "./melds.js";
import { fairnessBlock, noteCommitment } from "./fairness.js";
import { describeSuggestion, subject } from "./describe.js";

function uiState(st) {
  const ui = st.ui;
  const v = st.view;
  const hand = v.hand || [];
  // One arrangement per round of this match: the round's commitment tells a rematch's round 1 apart.
  const tableId = st.info.id, round = `${v.round}-${(v.round_commitment || "").slice(0, 12)}`;
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
  const top = v.discard_top;
  const usable = (c) => inHand.has(c) || (c === top && v.phase === "draw");
  ui.selected = ui.selected.filter(usable);
  ui.staged = ui.staged.filter((m) => m.every(usable));
  ui.offs = ui.offs.filter((o) => o.cards.every((c) => inHand.has(c)));
  if (v.phase !== "draw" || v.turn !== st.seat) ui.proposing = false;
  saveHand(tableId, round, { order: ui.order, staged: ui.staged, offs: ui.offs, mode: ui.mode });
  return ui;
}

function stagedCards(ui) {
  return new Set([...ui.staged.flat(), ...ui.offs.flatMap((o) => o.cards)]);
}

/** The threshold the next opening must reach (escalating option: beat the last one). */
export function openingTarget(v) {
  const base = v.options.threshold;
  return v.options.escalating_opening && v.last_opening ? Math.max(base, v.last_opening + 1) : base;
}

// The hand row is the same element from one drawing to the next: its drag listeners are
// added once, and each drop goes to the drawing's latest handler.
function dragHere(el, onDrop) {
  if (!el) return;
  el.sahratDrop = onDrop;
  if (!el.sahratDrag) { el.sahratDrag = true; dragToReorder(el, (...args) => el.sahratDrop(...args)); }
}

const HINTS_KEY = "sahrat.hints";
const hintsOn = () => localStorage.getItem(HINTS_KEY) === "on";

export function renderKonkan(ctx) {
  const { st, send } = ctx;
  const v = st.view;
  noteCommitment(st);
  const me = st.seat;
  const ui = me === null ? null : uiState(st);
  const myTurn = me !== null && v.turn === me && !v.match_over && !st.roundBreak;
  const simple = new Set((v.simple_actions || []).map((a) => a.type));
  const aceValue = v.options.ace_value;

  const toggle = (card) => {
    const i = ui.selected.indexOf(card);
    if (i >= 0) ui.selected.splice(i, 1); else ui.selected.push(card);
    ctx.redraw();
  };

  const act = async (action, after) => {
    const reply = await send(action);
    if (reply.ok) { ui.selected = []; ui.proposing = false; if (after) after(); ctx.redraw(); }
    return reply;
  };

  // Tapping a table meld: a joker swap when the selection is exactly what the
  // joker stands for, otherwise a lay-off (sent at once when I have opened).
  const tapMeld = (meld) => {
    if (!ui || !ui.selected.length) return;
    const cards = ui.selected.filter((c) => c !== v.discard_top || (v.hand || []).includes(c));
    const faces = cards.map((c) => parse(c).face).sort().join();
    const hasJoker = meld.cards.some((c) => parse(c).joker);
    if (hasJoker && faces === [...meld.joker_for].sort().join()) {
      act({ type: "swap_joker", meld: meld.id, cards });
      return;
    }
    if (v.opened[me] && !ui.staged.length && v.phase === "play") {
      act({ type: "lay_down", lay_offs: [{ meld: meld.id, cards }] });
      return;
    }
    ui.offs.push({ meld: meld.id, cards });
    ui.selected = [];
    ctx.redraw();
  };

  // What changed since the last drawing (a new or longer meld, a new discard) moves in.
  const seen = (st.ui.seen ??= { melds: {}, top: null });
  const changed = new Set(v.melds.filter((m) => seen.melds[m.id] !== m.cards.join()).map((m) => m.id));
  const topChanged = v.discard_top !== seen.top;
  seen.melds = Object.fromEntries(v.melds.map((m) => [m.id, m.cards.join()]));
  seen.top = v.discard_top;

  // With hints on, the table melds the one selected card would fit are outlined.
  const fits = new Set(ui && hintsOn() && ui.selected.length === 1 ? fittingMelds(ui.selected[0], v.melds, aceValue) : []);
  const melds = h("section.melds", { id: "table-melds" },
    h("h3", t("konkan.table_melds")),
    v.melds.length ? groupByOwner(v.melds, ctx.nameOf, (m) => h("button", {
      key: m.id, type: "button", class: `table-meld${fits.has(m.id) ? " fits" : ""}${changed.has(m.id) ? " changed" : ""}`, dataset: { meld: m.id },
      onclick: () => tapMeld(m),
      "aria-label": t("konkan.meld_of", { ...subject(ctx.nameOf, m.owner), cards: m.cards.map(label).join(" ") }),
    }, m.cards.map((c) => cardV(c, { small: true, tag: "span" })),
    m.joker_for.length ? h("span.joker-for", "★=", m.joker_for.map(label).join("/")) : null))
      : h("p.muted", t("konkan.no_melds")));

  const discardSelected = ui?.selected.includes(v.discard_top);
  const canTake = myTurn && v.phase === "draw" && v.discard_top;
  const tapDiscard = () => {
    if (!canTake) return;
    if (discardSelected) { toggle(v.discard_top); return; }
    // One tap proposes the lay-downs that use the card; a second tap on the pile picks it by hand.
    if (ui.proposing) { ui.proposing = false; toggle(v.discard_top); return; }
    ui.proposing = true;
    ctx.redraw();
  };
  const piles = h("section.piles",
    h("div.pile", { id: "stock" },
      h("button", {
        type: "button", class: "card back", id: "stock-card", disabled: !(myTurn && simple.has("draw")),
        onclick: () => act({ type: "draw" }), "aria-label": t("konkan.draw"),
      }, h("span.count", h("bdi", v.stock_count))),
      h("span.pile-label", t("konkan.stock"), " · ", h("bdi", v.stock_count))),
    h("div.pile", { id: "discard-pile" },
      v.discard_top
        ? cardV(v.discard_top, { selected: discardSelected, onclick: tapDiscard, extraClass: `${canTake ? "takeable" : ""}${topChanged ? " changed" : ""}` })
        : h("div.card.empty", "—"),
      h("span.pile-label", t("konkan.discard_pile"), " · ", h("bdi", v.discard_count))),
    ui?.proposing ? proposalsPanel(ctx, ui, v, act) : null,
  );

  const parts = [melds, piles];
  // The dock: the buttons and the hand, kept at the bottom of a phone's screen.
  if (ui) parts.push(staging(ctx, ui, v, aceValue), h("div.dock", controls(ctx, ui, v, myTurn, simple, act), handRow(ctx, ui, v, toggle)));
  else parts.push(h("p.muted.spectator-note", t("table.watching")));
  return h("div.konkan", parts);
}

function proposalsPanel(ctx, ui, v, act) {
  const list = discardProposals(v, ctx.st.seat, openingTarget(v));
  return h("div.proposals", { id: "discard-proposals", role: "group", "aria-label": t("konkan.take_with") },
    h("p", list.length ? t("konkan.take_with") : t("konkan.no_proposal")),
    list.map((p, i) => h("button.proposal", {
      key: JSON.stringify(p.action), type: "button", dataset: { proposal: i },
      onclick: () => act(p.action, () => { ui.staged = []; ui.offs = []; }),
    }, p.cards
      ? [p.cards.map((m) => h("span.proposal-meld", (m.some(isJoker) ? m : sortBySuit(m)).map((c) => cardV(c, { small: true, tag: "span" })))), " ", h("bdi.value", `= ${p.total}`)]
      : [cardV(v.discard_top, { small: true, tag: "span" }), " ", t("konkan.lay_off_on", { n: p.meld })])),
    h("button.link", { type: "button", id: "pick-by-hand", onclick: () => { ui.proposing = false; ui.selected.push(v.discard_top); ctx.redraw(); } }, t("konkan.pick_by_hand")));
}

function groupByOwner(melds, nameOf, draw) {
  const owners = [...new Set(melds.map((m) => m.owner))];
  return owners.map((owner) => h("div.meld-group", { key: owner },
    h("span.owner", nameOf(owner)),
    h("div.meld-row", melds.filter((m) => m.owner === owner).map(draw))));
}

/** The opening total of the staged melds and whether it reaches the target. */
function openingCheck(ui, v, seat) {
  const infos = ui.staged.map((m) => konkanMeld(m, v.options.ace_value));
  const total = infos.reduce((sum, i) => sum + (i.ok ? i.value : 0), 0);
  const target = openingTarget(v);
  return { infos, total, target, enough: v.opened[seat] || total >= target, valid: infos.every((i) => i.ok) };
}

function staging(ctx, ui, v) {
  if (!ui.staged.length && !ui.offs.length) return h("section.staging.empty", { id: "staging" });
  const { infos, total, target } = openingCheck(ui, v, ctx.st.seat);
  const opened = v.opened[ctx.st.seat];
  return h("section.staging", { id: "staging" },
    h("h3", t("konkan.new_melds")),
    ui.staged.map((m, i) => h("div.staged", { key: m.join(), dataset: { staged: i } },
      m.map((c) => cardV(c, { small: true, tag: "span" })),
      infos[i].ok ? h("bdi.value", `= ${infos[i].value}`) : h("span.bad", t(`why.${infos[i].why}`)),
      h("button.link", { type: "button", onclick: () => { ui.staged.splice(i, 1); ctx.redraw(); }, "aria-label": t("konkan.unstage") }, "✕"))),
    ui.offs.map((o, i) => h("div.staged.off", { key: `${o.meld}:${o.cards.join()}` },
      t("konkan.lay_off_on", { n: o.meld }), " ", o.cards.map((c) => cardV(c, { small: true, tag: "span" })),
      h("button.link", { type: "button", onclick: () => { ui.offs.splice(i, 1); ctx.redraw(); }, "aria-label": t("konkan.unstage") }, "✕"))),
    opened ? null : h("p", { id: "opening-total", class: total >= target ? "ok" : "short" },
      t("konkan.opening_total_of"), " ", h("bdi", total), " / ", h("bdi", target), " ", total >= target ? "✓" : "✗"));
}

/** The suggestion the seat asked for, in words of what to do (both games' tables). */
export const hintLine = (st) =>
  st.hint ? h("p.hint-line", { id: "hint-line", role: "status" }, vicon("hint"), describeSuggestion(st.hint)) : null;

function controls(ctx, ui, v, myTurn, simple, act) {
  const selected = ui.selected;
  const onlyHand = selected.filter((c) => c !== v.discard_top || (v.hand || []).includes(c));
  const buttons = [];
  const btn = (id, text, onclick, opts = {}) => buttons.push(h(`button${opts.primary ? ".primary" : ""}`, {
    type: "button", id, onclick, disabled: opts.disabled, title: opts.why, "aria-describedby": opts.why ? "refused-why" : null,
  }, text));
  let why = "";  // the reason a move is known to be refused, shown beside the buttons

  btn("make-meld", t("konkan.make_meld"), () => { ui.staged.push([...selected]); ui.selected = []; ctx.redraw(); }, { disabled: selected.length < 3 });
  const check = openingCheck(ui, v, ctx.st.seat);
  const layable = ui.staged.length || ui.offs.length;
  if (layable && !check.valid) why = t("konkan.why_invalid");
  else if (ui.staged.length && !check.enough) why = t("konkan.why_below", { total: check.total, target: check.target });
  else if (!ui.staged.length && ui.offs.length && !v.opened[ctx.st.seat]) why = t("err.not_opened");
  if (myTurn && v.phase === "draw") {
    btn("draw", t("konkan.draw"), () => act({ type: "draw" }), { primary: true, disabled: !simple.has("draw") });
    const committed = v.committed[ctx.st.seat];
    btn("take-discard", t("konkan.take_discard"), () => {
      const action = { type: "take_discard" };
      if (ui.staged.length) action.melds = ui.staged;
      if (ui.offs.length) action.lay_offs = ui.offs;
      act(action, () => { ui.staged = []; ui.offs = []; });
    }, { disabled: !v.discard_top || (!committed && (!layable || !!why)), why: layable ? why : "" });
  }
  if (myTurn && v.phase === "play") {
    btn("lay-down", t("konkan.lay_down"), () => {
      const action = { type: "lay_down" };
      if (ui.staged.length) action.melds = ui.staged;
      if (ui.offs.length) action.lay_offs = ui.offs;
      act(action, () => { ui.staged = []; ui.offs = []; });
    }, { disabled: !layable || !!why, why });
    btn("discard", t("konkan.discard"), () => act({ type: "discard", card: onlyHand[0] }), { primary: true, disabled: onlyHand.length !== 1 });
  }
  if (myTurn && simple.has("commit")) btn("commit", t("konkan.commit"), () => ctx.confirm(t("konkan.commit_confirm"), () => act({ type: "commit" })));
  if (myTurn && simple.has("claim_redeal")) btn("redeal", t("konkan.claim_redeal"), () => act({ type: "claim_redeal" }));
  if (myTurn && simple.has("end_turn")) btn("end-turn", t("konkan.end_turn"), () => act({ type: "end_turn" }));
  if (myTurn && ctx.askHint) btn("ask-hint", [vicon("hint"), t("konkan.ask_hint")], () => ctx.askHint());
  if (ui.staged.length || ui.offs.length || selected.length) {
    btn("clear", t("konkan.clear"), () => { ui.staged = []; ui.offs = []; ui.selected = []; ctx.redraw(); });
  }
  const turnText = v.match_over ? t("table.match_over")
    : myTurn ? t(v.phase === "draw" ? "konkan.your_turn_draw" : "konkan.your_turn_play")
      : t("table.their_turn", { who: ctx.nameOf(v.turn) });
  return h("section.controls",
    h("p.turn-line", { id: "turn-line", class: myTurn ? "mine" : "" }, turnText),
    h("div.row.actions", buttons),
    myTurn ? hintLine(ctx.st) : null,
    myTurn && why ? h("p.why", { id: "refused-why" }, why) : null,
    h("p.error-line", { id: "last-error", role: "status" }, ctx.st.lastError || ""));
}

function handRow(ctx, ui, v, toggle) {
  const staged = stagedCards(ui);
  const cards = ui.order.filter((c) => !staged.has(c));
  const hints = hintsOn();
  // Each card of a meld the hand already holds gets its group's outline.
  const group = new Map();
  if (hints) meldGroups(cards, v.options.ace_value).forEach((m, i) => m.cards.forEach((c) => group.set(c, i % 4)));
  const hint = ctx.st.hint;
  const suggested = new Set(hint ? [hint.card, ...(hint.cards || []), ...(hint.melds || []).flat(), ...(hint.lay_offs || []).flatMap((l) => l.cards)].filter(Boolean) : []);
  const sortBy = (mode) => { setSortPreference(mode); ui.mode = mode; ui.order = arrange([], ui.order, mode).order; ctx.redraw(); };
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
    ctx.redraw();
  };
  const onDrop = (card, target, after) => {
    ui.order = moveCard(ui.order, card, target, after);
    ui.mode = "own";
    ctx.redraw();
  };
  const row = h("div.hand", { id: "hand", class: cards.length > 11 ? "fan" : "", ref: (el) => dragHere(el, onDrop) }, cards.map((c) => cardV(c, {
    selected: ui.selected.includes(c), onclick: () => toggle(c),
    extraClass: [ui.fresh.includes(c) ? "fresh" : "", group.has(c) ? `hint hint-${group.get(c)}` : "", suggested.has(c) ? "suggested" : ""].join(" "),
  })));
  const pressed = (mode) => (ui.mode === mode ? "true" : "false");
  return h("section.hand-area",
    h("div.row.hand-tools",
      h("span.muted", t("konkan.my_hand_n"), " ", h("bdi", (v.hand || []).length)),
      h("button", { type: "button", id: "sort-suit", "aria-pressed": pressed("suit"), onclick: () => sortBy("suit") }, t("hand.sort_suit")),
      h("button", { type: "button", id: "sort-rank", "aria-pressed": pressed("rank"), onclick: () => sortBy("rank") }, t("hand.sort_rank")),
      h("button", { type: "button", id: "hint-toggle", "aria-pressed": hints ? "true" : "false",
        onclick: () => { localStorage.setItem(HINTS_KEY, hints ? "off" : "on"); ctx.redraw(); } }, vicon("hint"), t("hand.hints")),
      h("button", { type: "button", id: "move-left", "aria-label": t("hand.move_left"), disabled: !ui.selected.length, onclick: () => move("left") }, "◀"),
      h("button", { type: "button", id: "move-right", "aria-label": t("hand.move_right"), disabled: !ui.selected.length, onclick: () => move("right") }, "▶"),
    ),
    row);
}

// --- score sheet and round summary ------------------------------------------------------

export function konkanSheet(v, nameOf) {
  const seats = v.totals.map((_, i) => i);
  return h("table.sheet",
    h("thead", h("tr", h("th", t("sheet.round")), seats.map((s) => h("th", nameOf(s))), h("th", t("sheet.finish")))),
    h("tbody",
      v.scores.map((r) => h("tr",
        h("td", h("bdi", r.round)),
        seats.map((s) => h("td", { class: r.winner === s ? "winner" : "" }, h("bdi", r.scores[s]))),
        h("td", t(`finish.${r.finish}`)))),
      v.scores.length ? null : h("tr", h("td", { colspan: seats.length + 2 }, t("sheet.empty")))),
    h("tfoot", h("tr", h("th", t("sheet.total")), seats.map((s) => h("th", h("bdi", v.totals[s]))), h("th", ""))));
}

export function konkanSummary(ev, v, nameOf) {
  return h("div.summary",
    h("p.lead", ev.winner === null || ev.winner === undefined
      ? t("summary.void")
      : t(`summary.out_${ev.finish}`, subject(nameOf, ev.winner))),
    h("table.sheet", h("tbody", (ev.scores || []).map((score, s) => h("tr", { key: s },
      h("th", nameOf(s)),
      h("td", { class: ev.winner === s ? "winner" : "" }, h("bdi.score", score)),
      h("td.hand-cards", (ev.hands?.[s] || []).map((c) => cardV(c, { small: true, tag: "span" }))))))),
    fairOf(ev));
}

// The fairness check is drawn once per summary (it checks as it goes) and kept across redraws.
const fair = new WeakMap();
export function fairOf(ev) {
  if (!fair.has(ev)) fair.set(ev, fairnessBlock(ev));
  return fair.get(ev);
}
