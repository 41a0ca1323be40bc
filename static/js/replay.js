// A finished match, step by step. The server replays the match's record through
// the engine (GET /api/matches/{id}/replay) and sends the table after every
// action with every hand face up, a page of steps at a time; the viewer fetches
// the page of the step shown (and keeps the pages it has) and steps through it
// next to the actions in words and the score sheet.
import { h, mount } from "./dom.js";
import { t, errorText } from "./i18n.js";
import { api } from "./api.js";
import { describeAction } from "./describe.js";
import { cardEl } from "./cards.js";

export function showReplay(main, matchId) {
  const PAGE = 200;  // steps per page (the server's default)
  let match = null;
  const steps = new Map();  // step number -> {view, hands}, the pages fetched so far
  const asked = new Set();  // pages asked for
  let step = 0;
  const root = h("div.replay", { id: "replay" });
  mount(main, root);

  // Seats are named as at the table: a bot's seat is "Bot n" in the reader's language.
  const nameOf = (seat) => (match?.players?.[seat] === null ? t("table.bot_name", { n: seat + 1 }) : null)
    || match?.record?.seats?.[seat] || t("table.seat_n", { n: seat + 1 });

  function sheet() {
    const s = match.score_sheet;
    if (match.game === "conquian") {
      return h("div.replay-sheet", (s.deals || []).map((d) => h("section.card-box",
        h("h3", t("sheet.deal"), ` ${d.deal}: `, d.finish === "draw" ? t("finish.draw") : t("ev.deal_win", { who: nameOf(d.winner) })),
        (d.melds || []).map((melds, seat) => h("div.replay-seat",
          h("strong", nameOf(seat)),
          h("div.meld-row", melds.map((m) => h("div.table-meld", m.map((c) => cardEl(c, { small: true }))))),
          h("div.hand-cards", (d.hands?.[seat] || []).map((c) => cardEl(c, { small: true }))))))));
    }
    return h("div.replay-sheet", (s.rounds || []).map((r) => h("section.card-box",
      h("h3", t("sheet.round"), " ", h("bdi", r.round), ` · ${t(`finish.${r.finish}`)}`),
      h("table.sheet", h("tbody", r.scores.map((score, seat) => h("tr",
        h("th", nameOf(seat)), h("td", { class: r.winner === seat ? "winner" : "" }, h("bdi", score)),
        h("td.hand-cards", (r.hands?.[seat] || []).map((c) => cardEl(c, { small: true }))))))))),
    h("p.lead", t("sheet.total"), ": ", (s.totals || []).map((x, seat) => [seat ? " · " : "", nameOf(seat), " ", h("bdi", x)])));
  }

  // The table at the current step: every hand face up, the melds, the piles.
  // Fetch the page holding step n (once); draw again when it comes.
  function fetchPage(n) {
    const from = Math.floor(n / PAGE) * PAGE;
    if (asked.has(from)) return;
    asked.add(from);
    api("GET", `/api/matches/${matchId}/replay?from=${from}&limit=${PAGE}`)
      .then((page) => { page.steps.forEach((s, i) => steps.set(page.from + i, s)); draw(); })
      .catch(() => { asked.delete(from); });  // busy or offline: asked again on the next step
  }

  function board() {
    const at = steps.get(step);
    if (!at) {
      fetchPage(step);
      return h("section.card-box.replay-board", { id: "replay-board" }, h("p.lead", "…"));
    }
    const view = at.view;
    const seatMelds = (seat) => match.game === "conquian"
      ? (view.melds?.[seat] || [])
      : (view.melds || []).filter((m) => m.owner === seat).map((m) => m.cards);
    const piles = match.game === "conquian"
      ? [view.face_up ? cardEl(view.face_up, { small: true }) : t("conquian.no_face_up"),
        ` · ${t("konkan.stock")} `, h("bdi", view.stock_count)]
      : [`${t("konkan.discard_pile")}: `, view.discard_top ? cardEl(view.discard_top, { small: true }) : "—",
        ` · ${t("konkan.stock")} `, h("bdi", view.stock_count)];
    return h("section.card-box.replay-board", { id: "replay-board" },
      h("p.lead", ...piles),
      at.hands.map((hand, seat) => h("div.replay-seat", { class: view.turn === seat ? "turn" : "" },
        h("strong", nameOf(seat)),
        h("div.meld-row", seatMelds(seat).map((m) => h("div.table-meld", m.map((c) => cardEl(c, { small: true }))))),
        h("div.hand-cards", hand.map((c) => cardEl(c, { small: true }))))));
  }

  function draw() {
    if (!match) return;
    const actions = match.record.actions || [];
    const go = (n) => { step = Math.max(0, Math.min(actions.length, n)); draw(); };
    const winner = match.winner_seat === null ? t("history.no_winner") : t("ev.match_won", { who: nameOf(match.winner_seat) });
    mount(root,
      h("div.table-bar", h("a.back", { href: "#/" }, "🏠 ", t("table.lobby")),
        h("strong", `${t(`game.${match.game}`)} · ${t("replay.title")} `, h("bdi", `#${match.id}`)), h("span", winner)),
      h("div.replay-body",
        h("section.card-box.steps",
          h("div.row",
            h("button", { type: "button", id: "replay-first", onclick: () => go(0) }, "⏮"),
            h("button", { type: "button", id: "replay-prev", onclick: () => go(step - 1) }, t("replay.prev")),
            h("span", { id: "replay-step" }, t("replay.step", { n: step, total: actions.length })),
            h("button", { type: "button", id: "replay-next", onclick: () => go(step + 1) }, t("replay.next")),
            h("button", { type: "button", id: "replay-last", onclick: () => go(actions.length) }, "⏭")),
          h("input", { type: "range", min: 0, max: actions.length, value: step, "aria-label": t("replay.step", { n: step, total: actions.length }), oninput: (e) => go(Number(e.target.value)) }),
          h("ol.replay-actions", { tabindex: 0, "aria-label": t("table.log") }, actions.map((a, i) => h("li", { class: i === step - 1 ? "current" : i < step ? "done" : "" }, describeAction(a, nameOf))))),
        board(),
        sheet()));
    root.querySelector(".replay-actions li.current")?.scrollIntoView({ block: "nearest" });
  }

  Promise.all([api("GET", `/api/matches/${matchId}`), api("GET", `/api/matches/${matchId}/replay?from=0&limit=${PAGE}`)])
    .then(([data, page]) => {
      match = data;
      asked.add(0);
      page.steps.forEach((s, i) => steps.set(i, s));
      draw();
    })
    .catch((error) => mount(root, h("p.error-line", errorText(error.detail)), h("a", { href: "#/" }, t("table.lobby"))));
  return { close() {}, rerender: draw };
}
