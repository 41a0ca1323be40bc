// A finished match, step by step. The server replays the match's record through
// the engine (GET /api/matches/{id}/replay) and sends the table after every
// action with every hand face up, a page of steps at a time; the viewer fetches
// the pages one after the other (most matches fit in one), learns from them where
// each round (each Conquian deal) starts, and shows the table at the step chosen —
// by the buttons, the slider, the round list, the keyboard, or played by itself at
// the speed chosen — next to the actions in words and the score sheet.
import { h, mount } from "./dom.js";
import { t, errorText, getLang } from "./i18n.js";
import { api } from "./api.js";
import { describeAction } from "./describe.js";
import { cardEl } from "./cards.js";
import { icon } from "./icons.js";

const PAGE = 500;  // steps per page (the server's largest)
const SPEEDS = [0.5, 1, 2, 4];
const STEP_MS = 900;  // a step's time at 1×
let speed = 1;  // kept from one replay to the next

export function showReplay(main, matchId) {
  let match = null;
  let total = 0;  // steps in the match: the deal, then one per action
  const steps = new Map();  // step number -> {view, hands}, the pages fetched so far
  const asked = new Set();  // pages asked for
  const roundStart = new Map();  // round (deal) number -> its first step
  let step = 0;
  let playing = false;
  let timer = null;
  let closed = false;
  const root = h("div.replay", { id: "replay" });
  let ui = null;  // the parts redrawn at each step
  mount(main, root);

  // Seats are named as at the table: a bot's seat is "Bot n" in the reader's language.
  const nameOf = (seat) => (match?.players?.[seat] === null ? t("table.bot_name", { n: seat + 1 }) : null)
    || match?.record?.seats?.[seat] || t("table.seat_n", { n: seat + 1 });
  const last = () => Math.max(0, total - 1);
  const roundOf = (view) => view?.round ?? view?.deal;
  const roundName = (n) => (match.game === "conquian" ? t("conquian.deal_n", { n }) : t("replay.round_n", { n }));
  const roundCount = () => {
    const s = match.score_sheet || {};
    return Math.max((s.rounds || s.deals || []).length, ...roundStart.keys(), 1);
  };

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

  // --- the steps, a page at a time ---------------------------------------------------

  function keep(page) {
    total = page.total;
    page.steps.forEach((s, i) => {
      const n = page.from + i;
      steps.set(n, s);
      const round = roundOf(s.view);
      if (round !== undefined && (!roundStart.has(round) || n < roundStart.get(round))) roundStart.set(round, n);
    });
  }

  async function fetchPage(from) {
    if (asked.has(from)) return;
    asked.add(from);
    for (let attempt = 0; attempt < 5 && !closed; attempt += 1) {
      try {
        keep(await api("GET", `/api/matches/${matchId}/replay?from=${from}&limit=${PAGE}`));
        if (!closed) update();
        return;
      } catch (error) {
        if (error.status !== 503) break;  // busy: try again shortly
        await new Promise((done) => setTimeout(done, 1500));
      }
    }
    asked.delete(from);  // asked again when a step of it is shown
  }

  // Every page after the first, in order: the round list fills in as they come.
  async function fetchRest() {
    for (let from = PAGE; from < total && !closed; from += PAGE) await fetchPage(from);
  }

  // --- moving ---------------------------------------------------------------------------

  function go(n) {
    step = Math.max(0, Math.min(last(), n));
    update();
  }

  function setPlaying(on) {
    playing = on;
    clearTimeout(timer);
    timer = null;
    if (on) {
      if (step >= last()) step = 0;  // play again from the start
      timer = setTimeout(tick, STEP_MS / speed);
    }
    update();
  }

  function tick() {
    timer = null;
    if (!playing || closed) return;
    if (step >= last()) { setPlaying(false); return; }
    if (!steps.has(step + 1)) {  // its page is on its way
      fetchPage(Math.floor((step + 1) / PAGE) * PAGE);
      timer = setTimeout(tick, 200);
      return;
    }
    go(step + 1);
    timer = setTimeout(tick, STEP_MS / speed);
  }

  // Space plays or pauses; the arrows step (towards the reading direction's end),
  // Home and End go to the first and the last step.
  function onKey(event) {
    if (!ui || event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target;
    const typing = target.closest?.("input, select, textarea");
    if (event.key === " " || event.key === "Spacebar") {
      if (typing || target.closest?.("button, summary, a")) return;  // they handle space themselves
      event.preventDefault();
      setPlaying(!playing);
      return;
    }
    if (typing) return;
    const forward = getLang() === "ar" ? "ArrowLeft" : "ArrowRight";  // as the slider moves
    if (event.key === "ArrowLeft" || event.key === "ArrowRight") {
      event.preventDefault();
      setPlaying(false);
      go(step + (event.key === forward ? 1 : -1));
    } else if (event.key === "Home" || event.key === "End") {
      event.preventDefault();
      setPlaying(false);
      go(event.key === "Home" ? 0 : last());
    }
  }
  document.addEventListener("keydown", onKey);

  // --- drawing ------------------------------------------------------------------------

  function pile(name, ...content) {
    return h("div.replay-pile", h("span.pile-name", name), h("span.pile-content", ...content));
  }

  // The table at the current step: every hand face up, the melds, the piles.
  function board() {
    const at = steps.get(step);
    if (!at) {
      fetchPage(Math.floor(step / PAGE) * PAGE);
      return [h("p.muted", "…")];
    }
    const view = at.view;
    const seatMelds = (seat) => match.game === "conquian"
      ? (view.melds?.[seat] || [])
      : (view.melds || []).filter((m) => m.owner === seat).map((m) => m.cards);
    const piles = match.game === "conquian"
      ? [pile(t("replay.face_up"), view.face_up ? cardEl(view.face_up, { small: true }) : h("span.muted", t("conquian.no_face_up"))),
        pile(t("konkan.stock"), h("bdi.pile-count", view.stock_count))]
      : [pile(t("konkan.discard_pile"), view.discard_top ? cardEl(view.discard_top, { small: true }) : h("span.muted", "—")),
        pile(t("konkan.stock"), h("bdi.pile-count", view.stock_count))];
    const round = roundOf(view);
    return [
      h("div.replay-board-head",
        round !== undefined ? h("strong.replay-round-name", { id: "replay-round-name" }, roundName(round)) : null,
        h("div.replay-piles", piles)),
      at.hands.map((hand, seat) => h("div.replay-seat", { class: view.turn === seat ? "turn" : "" },
        h("strong", nameOf(seat)),
        h("div.meld-row", seatMelds(seat).map((m) => h("div.table-meld", m.map((c) => cardEl(c, { small: true }))))),
        h("div.hand-cards", hand.map((c) => cardEl(c, { small: true }))))),
    ];
  }

  function roundOptions() {
    const options = [];
    for (let n = 1; n <= roundCount(); n += 1) {
      const at = roundStart.get(n);
      options.push(h("option", { value: n, disabled: at === undefined ? true : undefined }, roundName(n)));
    }
    return options;
  }

  // The round (deal) the current step is in: the last one started at or before it.
  function currentRound() {
    let found = 1;
    for (const [n, at] of roundStart) if (at <= step && n > found) found = n;
    return found;
  }

  // Build the screen once (and again on a language switch); update() redraws its parts.
  function build() {
    if (!match) return;
    const actions = match.record.actions || [];
    const winner = match.winner_seat === null ? t("history.no_winner") : t("ev.match_won", { who: nameOf(match.winner_seat) });
    const rtl = getLang() === "ar";  // the slider runs right to left: so do the end buttons
    const button = (id, text, onclick, label) => h("button", { type: "button", id, onclick, "aria-label": label }, text);
    ui = {
      play: h("button.primary.replay-play", { type: "button", id: "replay-play", onclick: () => setPlaying(!playing) }),
      label: h("span.replay-step", { id: "replay-step" }),
      range: h("input", {
        type: "range", id: "replay-range", min: 0, max: last(), value: step, "aria-label": t("replay.position"),
        oninput: (e) => { setPlaying(false); go(Number(e.target.value)); },
      }),
      rounds: h("select", {
        id: "replay-round", onchange: (e) => {
          const at = roundStart.get(Number(e.target.value));
          if (at !== undefined) { setPlaying(false); go(at); }
        },
      }),
      board: h("section.card-box.replay-board", { id: "replay-board" }),
      actions: h("ol.replay-actions", { tabindex: 0, "aria-label": t("table.log") },
        actions.map((a, i) => h("li", { dataset: { step: i + 1 } }, describeAction(a, nameOf)))),
    };
    const speedSelect = h("select", {
      id: "replay-speed", onchange: (e) => { speed = Number(e.target.value); if (playing) setPlaying(true); },
    }, SPEEDS.map((x) => h("option", { value: x, selected: x === speed ? true : undefined }, `${x}×`)));
    mount(root,
      h("div.table-bar", h("a.back", { href: "#/" }, t("table.lobby")),
        h("strong", `${t(`game.${match.game}`)} · ${t("replay.title")} `, h("bdi", `#${match.id}`)), h("span", winner),
        // Konkan matches are analysed (docs/analysis.md), Conquian ones not yet.
        match.game === "conquian" ? null : h("a.analysis-link", { href: `#/m/${match.id}/analysis`, id: "analysis-link" }, t("analysis.open"))),
      h("div.replay-body",
        h("section.card-box.steps",
          h("div.replay-controls",
            button("replay-first", rtl ? "⇥" : "⇤", () => { setPlaying(false); go(0); }, t("replay.first")),
            button("replay-prev", t("replay.prev"), () => { setPlaying(false); go(step - 1); }),
            ui.play,
            button("replay-next", t("replay.next"), () => { setPlaying(false); go(step + 1); }),
            button("replay-last", rtl ? "⇤" : "⇥", () => { setPlaying(false); go(last()); }, t("replay.last"))),
          h("div.replay-options",
            h("label", t("replay.speed"), " ", speedSelect),
            h("label", t(match.game === "conquian" ? "replay.jump_deal" : "replay.jump_round"), " ", ui.rounds)),
          ui.label,
          ui.range,
          h("p.muted.replay-keys", t("replay.keys").split(/\{(home|end)\}/).map((part, i) => (i % 2
            ? h("kbd", { lang: "en", dir: "ltr" }, part === "home" ? "Home" : "End") : part)))),
        ui.board,
        h("section.card-box.replay-log", ui.actions),
        sheet()));
    update();
  }

  function update() {
    if (!ui || closed) return;
    const actions = match.record.actions || [];
    ui.play.replaceChildren(icon(playing ? "pause" : "play"), t(playing ? "replay.pause" : "replay.play"));
    ui.play.setAttribute("aria-pressed", playing ? "true" : "false");
    ui.label.textContent = t("replay.step", { n: step, total: actions.length });
    ui.range.max = String(last());
    ui.range.value = String(step);
    ui.range.setAttribute("aria-valuetext", ui.label.textContent);
    if (ui.rounds.options.length !== roundCount() || [...ui.rounds.options].some((o) => o.disabled && roundStart.has(Number(o.value)))) {
      mount(ui.rounds, roundOptions());
    }
    ui.rounds.value = String(currentRound());
    ui.actions.querySelectorAll("li").forEach((li, i) => {
      li.className = i === step - 1 ? "current" : i < step ? "done" : "";
    });
    mount(ui.board, board());
    root.dataset.step = String(step);
    root.dataset.playing = playing ? "true" : "false";
    root.dataset.rounds = JSON.stringify(Object.fromEntries(roundStart));
    // Keep the current action in sight inside the list (the page itself does not move).
    const current = ui.actions.querySelector("li.current");
    const list = ui.actions;
    if (current && (current.offsetTop < list.scrollTop
      || current.offsetTop + current.offsetHeight > list.scrollTop + list.clientHeight)) {
      list.scrollTop = current.offsetTop - list.clientHeight / 2;
    }
  }

  Promise.all([api("GET", `/api/matches/${matchId}`), api("GET", `/api/matches/${matchId}/replay?from=0&limit=${PAGE}`)])
    .then(([data, page]) => {
      if (closed) return;
      match = data;
      asked.add(0);
      keep(page);
      build();
      fetchRest();
    })
    .catch((error) => mount(root, h("p.error-line", errorText(error.detail)), h("a", { href: "#/" }, t("table.lobby"))));
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      document.removeEventListener("keydown", onKey);
    },
    rerender: build,
  };
}
