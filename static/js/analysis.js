// A finished match's analysis (#/m/<id>/analysis; docs/analysis.md). The page asks the
// server for it (POST), then asks how it goes (GET) every 1.5 s — its place in the
// queue, then its progress — and shows it once done, in three parts: each player's
// figures and each round's chart, the decisions worst first, and the puzzles made of
// the worst mistakes.
import { h, mount } from "./dom.js";
import { t, errorText, getLang } from "./i18n.js";
import { api, session } from "./api.js";
import { fixed, meldsEl, moveText, num, positionEl, chartEl, roundFigures, factsEl, signed } from "./analysis-draw.js";
import { puzzlePanel } from "./analysis-puzzle.js";

const POLL_MS = 1500;
const TAGS = ["blunder", "mistake", "inaccuracy"];

// Its own stylesheet, beside app.css in the same versioned folder, fetched with the page.
const STYLE = new URL("../css/analysis.css", import.meta.url).href;
if (![...document.querySelectorAll("link[rel=stylesheet]")].some((el) => /** @type {HTMLLinkElement} */ (el).href === STYLE)) {
  document.head.append(h("link", { rel: "stylesheet", href: STYLE }));
}

/** The analysis REST call: its status, body and Retry-After (api.js keeps no headers). */
async function call(/** @type {string} */ method, /** @type {number} */ matchId) {
  /** @type {Record<string, string>} */
  const headers = { Accept: "application/json" };
  if (session.token) headers.Authorization = `Bearer ${session.token}`;
  const res = await fetch(`/api/matches/${matchId}/analysis`, { method, headers });
  let data = null;
  try { data = await res.json(); } catch { /* an empty body */ }
  return { status: res.status, data, retryAfter: Number(res.headers.get("Retry-After")) || 0 };
}

export function showAnalysis(/** @type {HTMLElement} */ main, /** @type {number} */ matchId) {
  let closed = false;
  let timer = /** @type {any} */ (null);
  let status = "asking";  // asking, queued, running, done, failed, busy, not_analysable, error
  let position = 0, progress = 0, retryIn = 0;
  let problem = null;  // a server error's detail
  /** @type {any} */
  let analysis = null;
  const view = { tab: "summary", who: "all", taggedOnly: true };
  const puzzles = { at: 0, byId: {} };
  const root = h("div.analysis", { id: "analysis" });
  mount(main, root);

  const later = (/** @type {() => void} */ fn, /** @type {number} */ ms) => { clearTimeout(timer); timer = setTimeout(fn, ms); };

  async function ask(/** @type {string} */ method) {
    let reply;
    try { reply = await call(method, matchId); } catch {
      if (!closed) later(() => ask(method), POLL_MS * 2);  // the network: again shortly
      return;
    }
    if (closed) return;
    const body = reply.data || {};
    if (reply.status === 200 || reply.status === 202) {
      if (body.status === "done" && body.analysis) { analysis = body.analysis; status = "done"; pickViewer(); }
      else if (body.status === "none") { status = "asking"; later(() => ask("POST"), POLL_MS); }
      else if (body.status === "failed") status = "failed";
      else {
        status = body.status === "running" ? "running" : "queued";
        position = Number(body.position) || 0;
        progress = Math.max(0, Math.min(1, Number(body.progress) || 0));
        later(() => ask("GET"), POLL_MS);
      }
    } else if (reply.status === 503) {
      // The queue is full: ask again after the time the server said.
      status = "busy";
      retryIn = Math.max(1, Math.min(120, Math.round(reply.retryAfter || 5)));
      const tick = () => {
        if (closed) return;
        retryIn -= 1;
        if (retryIn <= 0) { status = "asking"; draw(); ask("POST"); return; }
        draw();
        later(tick, 1000);
      };
      later(tick, 1000);
    } else if (reply.status === 409) status = "not_analysable";
    else { status = "error"; problem = body.detail ?? { code: `http_${reply.status}`, message: String(reply.status) }; }
    draw();
  }

  // A player of the match sees their own decisions and puzzles first.
  function pickViewer() {
    const me = session.user?.name;
    const seat = me ? (analysis.seats || []).indexOf(me) : -1;
    if (seat >= 0) view.who = String(seat);
  }

  // Seats are named as at the table and in the replay: a bot's seat is "Bot n" in the
  // reader's language (the match's players say which seats were bots).
  /** @type {(number | null)[] | null} */
  let seated = null;
  api("GET", `/api/matches/${matchId}`).then((match) => {
    seated = Array.isArray(match?.players) ? match.players : null;
    if (seated && status === "done") draw();
  }, () => { /* the analysis's own names, then */ });

  const nameOf = (/** @type {number} */ seat) => (seated?.[seat] === null ? t("table.bot_name", { n: seat + 1 }) : null)
    || analysis?.seats?.[seat] || analysis?.players?.find((/** @type {any} */ p) => p.seat === seat)?.name
    || t("table.seat_n", { n: seat + 1 });

  // --- the parts --------------------------------------------------------------------

  function waiting() {
    const line = (/** @type {string} */ text) => h("p", { id: "analysis-status-text" }, text);
    switch (status) {
      case "queued": return [line(position <= 1 ? t("analysis.queued_next") : t("analysis.queued", { n: position })), h("p.muted", t("analysis.wait_note"))];
      case "running": return [
        line(t("analysis.running", { pct: Math.round(progress * 100) })),
        h("progress", { id: "analysis-progress", max: 1, value: progress, "aria-label": t("analysis.progress") }),
        h("p.muted", t("analysis.wait_note"))];
      case "busy": return [line(t("analysis.busy", { n: retryIn }))];
      case "not_analysable": return [line(t("analysis.not_analysable"))];
      case "failed": return [line(t("analysis.failed")),
        h("button.primary", { type: "button", id: "analysis-retry", onclick: () => { status = "asking"; draw(); ask("POST"); } }, t("analysis.retry"))];
      case "error": return [line(errorText(problem))];
      default: return [line(t("analysis.asking"))];
    }
  }

  const tagChip = (/** @type {string} */ tag) => h(`span.an-tag.tag-${tag}`, t(`analysis.tag.${tag}`));

  function players() {
    return h("section.card-box", { id: "analysis-players" },
      h("h2", t("analysis.players")),
      h("div.an-players", (analysis.players || []).map((/** @type {any} */ p) => h("div.an-player", { dataset: { seat: p.seat } },
        h("strong.an-player-name", h("bdi", nameOf(p.seat))),
        h("div.an-accuracy", h("span.an-big", num(t("analysis.percent", { n: fixed(p.accuracy) }))), " ", h("span.muted", t("analysis.accuracy"))),
        h("div", t("analysis.lost_per_round"), ": ", h("strong.an-lost-round", num(fixed(p.lost_per_round)))),
        h("div.an-counts",
          h("span.an-count", tagChip("inaccuracy"), " ", num(p.inaccuracies ?? 0)),
          h("span.an-count", tagChip("mistake"), " ", num(p.mistakes ?? 0)),
          h("span.an-count", tagChip("blunder"), " ", num(p.blunders ?? 0)))))),
      h("p.muted.an-note", t("analysis.accuracy_note", { n: analysis.thresholds?.inaccuracy ?? 4 })));
  }

  function rounds() {
    const rtl = getLang() === "ar";
    // The notes that say how to read a chart and its figures, under the first round only.
    return (analysis.rounds || []).map((/** @type {any} */ r, /** @type {number} */ i) => h("section.card-box.an-round", { dataset: { round: r.round } },
      h("h2", t("replay.round_n", { n: r.round })),
      h("div.an-round-body", chartEl(r, nameOf, rtl, i === 0), h("div", roundFigures(r, nameOf), i ? null : h("p.muted.an-note", t("analysis.luck_note")))),
      factsEl(r.facts, nameOf)));
  }

  function whoSelect(/** @type {string} */ id) {
    return h("label", t("analysis.player"), " ", h("select", {
      id, onchange: (/** @type {any} */ e) => { view.who = e.target.value; puzzles.at = 0; draw(); },
    }, h("option", { value: "all", selected: view.who === "all" ? true : undefined }, t("analysis.everyone")),
    (analysis.seats || []).map((/** @type {string} */ _, /** @type {number} */ seat) => h("option",
      { value: String(seat), selected: view.who === String(seat) ? true : undefined }, nameOf(seat)))));
  }

  const forWho = (/** @type {any} */ d) => view.who === "all" || String(d.seat) === view.who;

  function decisionEl(/** @type {any} */ d) {
    const pile = d.position?.pile ?? null;
    return h("li.an-decision.card-box", { dataset: { id: d.id, tag: d.tag || "none" } },
      h("div.an-decision-head",
        d.tag ? tagChip(d.tag) : h("span.an-tag.tag-none", t("analysis.tag.none")),
        d.by === "hindsight" ? h("span.badge.an-hindsight", { title: t("analysis.hindsight_note") }, t("analysis.hindsight")) : null,
        h("span.an-lost", t("analysis.lost_points", { n: fixed(d.lost) }))),
      h("p.an-who", h("bdi", nameOf(d.seat)), " · ", t("replay.round_n", { n: d.round }), " · ", t("analysis.turn_n", { n: d.turn }),
        " · ", t(`analysis.kind.${d.kind}`)),
      positionEl(d, nameOf),
      h("p.an-played", h("strong", t("analysis.played"), " "), moveText(d.played, true, pile), " ", num(signed(d.value))),
      d.lost > 0 ? h("div.an-best", h("p", h("strong", t("analysis.better"), " "), moveText(d.best, false, pile), " ", num(signed(d.best_value))),
        meldsEl(d.best.melds)) : h("p.an-best.an-good", t("analysis.was_best")),
      factsEl(d.facts, nameOf));
  }

  function decisions() {
    const rank = (/** @type {any} */ d) => (d.tag ? TAGS.indexOf(d.tag) : TAGS.length);
    const shown = (analysis.decisions || [])
      .filter((/** @type {any} */ d) => forWho(d) && (!view.taggedOnly || d.tag))
      .sort((/** @type {any} */ a, /** @type {any} */ b) => b.lost - a.lost || rank(a) - rank(b) || a.step - b.step);
    return h("section", { id: "analysis-decisions" },
      h("div.card-box.an-filters",
        whoSelect("analysis-who"),
        h("label.check", h("input", {
          type: "checkbox", id: "analysis-tagged", checked: view.taggedOnly,
          onchange: (/** @type {any} */ e) => { view.taggedOnly = e.target.checked; draw(); },
        }), t("analysis.tagged_only")),
        h("span.muted", { id: "analysis-count" }, t("analysis.shown_n", { n: shown.length }))),
      shown.length ? h("ol.an-decisions", { id: "analysis-decision-list" }, shown.map(decisionEl))
        : h("p.card-box.muted", t("analysis.no_decisions")));
  }

  function puzzlePart() {
    const list = (analysis.decisions || []).filter((/** @type {any} */ d) => d.puzzle && forWho(d))
      .sort((/** @type {any} */ a, /** @type {any} */ b) => b.lost - a.lost || a.step - b.step);
    return h("section", { id: "analysis-puzzles" },
      h("div.card-box.an-filters", h("p.an-intro", t("analysis.puzzle.intro")), whoSelect("puzzle-who")),
      puzzlePanel({ puzzles: list, tolerance: analysis.thresholds?.inaccuracy ?? 4, nameOf, state: puzzles, redraw: draw }));
  }

  function tabs() {
    const count = (analysis.decisions || []).filter((/** @type {any} */ d) => d.puzzle).length;
    const tab = (/** @type {string} */ name, /** @type {string} */ text) => h("button", {
      type: "button", id: `analysis-tab-${name}`, "aria-pressed": view.tab === name ? "true" : "false",
      onclick: () => { view.tab = name; draw(); window.scrollTo(0, 0); },
    }, text);
    return h("nav.an-tabs", { "aria-label": t("analysis.parts") },
      tab("summary", t("analysis.tab.summary")), tab("decisions", t("analysis.tab.decisions")),
      tab("puzzles", t("analysis.tab.puzzles", { n: count })));
  }

  function draw() {
    if (closed) return;
    root.dataset.status = status;
    root.dataset.tab = view.tab;
    const bar = h("div.table-bar",
      h("a.back", { href: `#/m/${matchId}`, id: "analysis-replay" }, t("analysis.to_replay")),
      h("strong", `${t("game.konkan")} · ${t("analysis.title")} `, h("bdi", `#${matchId}`)));
    if (status !== "done") {
      mount(root, bar, h("section.card-box.an-status", { id: "analysis-status", role: "status" }, h("h2", t("analysis.title")), waiting()));
      return;
    }
    const panel = view.tab === "decisions" ? decisions() : view.tab === "puzzles" ? puzzlePart()
      : [players(), rounds(), h("p.an-meta", t("analysis.meta", { samples: analysis.samples ?? "—" }))];
    mount(root, bar, tabs(), h("div.an-panel", { id: "analysis-panel" }, panel));
  }

  draw();
  ask("POST");
  return {
    close() { closed = true; clearTimeout(timer); },
    rerender: draw,
  };
}
