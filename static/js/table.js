// A table screen: the connection, the seats (connected / away / bot), the turn
// timer, reactions, the move log, the score sheet and round-end summary. The
// game-specific middle is drawn by konkan.js or conquian.js. Each part is a view that
// `patch` (Preact) updates in place: a card, seat or meld keeps its element (and the
// keyboard focus on it) from one message to the next.
import { h, mount, toast, oneAtATime } from "./dom.js";
import { v, patch, vicon } from "./view.js";
import { icon } from "./icons.js";
import { t, errorText } from "./i18n.js";
import { api, session, ensureUser, rememberTable } from "./api.js";
import { TableConnection } from "./conn.js";
import { describeEvent, subject } from "./describe.js";
import { noteEvent } from "./fairness.js";
// Each game's drawing (konkan.js, conquian.js) is loaded once a table of that game opens.
const GAMES = { konkan: () => import("./konkan.js"), conquian: () => import("./conquian.js") };
import { label } from "./cards.js";
import { play, muted, setMuted } from "./sound.js";

export const REACTIONS = ["hello", "good_game", "well_played", "thanks", "oops", "hurry", "wow", "laugh"];
const REACTION_EMOJI = { hello: "👋", good_game: "🤝", well_played: "👏", thanks: "🙏", oops: "😅", hurry: "⏳", wow: "😮", laugh: "😂" };

export function showTable(main, tableId, { onUser }) {
  const st = {
    info: null, seat: null, view: null, deadline: null, status: "connecting", roundBreak: null,
    log: [], summary: null, sheetOpen: false, reactions: {}, busy: false,
    lastMove: {},  // seat → the words of its last move, shown beside the seat
    timedOut: false,  // the timer just played for me: say so until my next move
    deadlineSpan: null, beeped: null, wasMyTurn: false, results: null,
    ui: {},  // the game module's local state (selection, staged melds, hand order)
  };
  let conn = null;
  const root = h("div.table-screen", { id: "table" });
  mount(main, root);

  const nameOf = (seat) => {
    if (seat === null || seat === undefined) return "";
    const s = st.info?.seats?.[seat];
    if (seat === st.seat) return t("table.you");
    if (s && s.user_id === null && s.bot) return t("table.bot_name", { n: seat + 1 });
    return s?.name || t("table.seat_n", { n: seat + 1 });
  };
  nameOf.mine = (seat) => st.seat !== null && seat === st.seat;  // phrases then say "you"

  function addLog(events, by) {
    for (const ev of events) {
      noteEvent(ev, st);
      // Kept as events, put in words when drawn: a language switch redraws them too.
      const line = describeEvent(ev, nameOf);
      const bySeat = ev.seat !== null && ev.seat !== undefined;
      if (line) { st.log.push({ ev, by }); st.logged = (st.logged || 0) + 1; }
      if (line && bySeat) st.lastMove[ev.seat] = { ev, by };
      if (ev.type === "deal" || ev.type === "round_end" || ev.type === "deal_end") st.lastMove = {};
      if (bySeat && ev.seat === st.seat && st.seat !== null) st.timedOut = by === "timer";
      if (ev.type === "round_end" || ev.type === "deal_end") st.summary = { event: ev };
      if (ev.type === "match_end") st.matchEnd = ev;
      if (ev.type === "match_end" && st.summary) st.summary.matchEnd = ev;
      else if (ev.type === "match_end") st.summary = { matchEnd: ev };
    }
    st.log = st.log.slice(-40);
  }

  function applySnapshot(snap) {
    st.info = snap.table;
    st.seat = snap.seat;
    st.view = snap.view;
    st.deadline = snap.deadline;
    st.roundBreak = snap.round_break || null;
    // A new match at this table (a rematch) starts with no summary left open.
    if (snap.table.status === "playing" && !snap.view?.match_over && st.summary?.matchEnd) { st.summary = null; st.results = null; }
    if (snap.seat !== null) rememberTable(tableId);
  }

  const handlers = {
    status(state) { st.status = state; drawStatus(); },
    fatal(code) {
      toast(t(code === 4401 ? "err.bad_token" : "err.no_such_table"), "error");
      if (code === 4401) { session.clear(); onUser(); }
      sessionStorage.removeItem("sahrat.table");
      location.hash = "#/";
    },
    message(msg) {
      const p = msg.payload;
      switch (msg.type) {
        case "snapshot": applySnapshot(p); break;
        case "resume":
          for (const missed of p.missed) addLog(missed.events, missed.by);
          applySnapshot(p.snapshot);
          break;
        case "update":
          if (p.by === "timer" && p.events.some((ev) => ev.seat === st.seat) && !st.timedOut) {
            toast(t("table.timed_out"), "info", 6000);
            play("timeout");
          }
          addLog(p.events, p.by);
          st.hint = null;  // a suggestion is for the table as it was
          st.view = p.view; st.deadline = p.deadline; st.roundBreak = p.round_break || null;
          if (st.info) st.info.seq = msg.seq;
          break;
        case "table": st.info = p; break;
        case "break":
          // Between rounds: the summary stays up until everyone continued or time ran out.
          st.roundBreak = p.round_break; st.deadline = p.deadline;
          if (!p.round_break && st.summary && !st.summary.matchEnd) st.summary = null;
          break;
        case "reaction": showReaction(p); return;
        case "hint": st.hint = p.action; break;
        case "reply":
          if (p.ok) st.lastError = "";
          if (!p.ok) {
            if (p.snapshot) applySnapshot(p.snapshot);
            showError(p.error);
          }
          break;
        case "error": showError(p); return;
        default: return;
      }
      draw();
    },
  };

  function words({ ev }, who = nameOf) {
    return describeEvent(ev, who);
  }
  // A seat's move the timer or a bot played: an icon beside its words, and words for a
  // screen reader.
  const playedBy = ({ ev, by }) => (ev.seat !== null && ev.seat !== undefined && (by === "timer" || by === "bot") ? by : null);
  const byMark = (entry) => {
    const by = playedBy(entry);
    return by ? v("span.by", { title: t(`table.by_${by}`) }, vicon(by)) : null;
  };
  const spoken = (entry) => {
    const by = playedBy(entry);
    return words(entry) + (by ? ` (${t(`table.by_${by}`)})` : "");
  };
  // A seat's last move beside it, without the name the seat box already shows.
  const moveWords = (move) => words(move, () => "").replace(/^[\s:،]+/, "");

  function showError(error) {
    const text = errorText(error);
    st.lastError = text;
    toast(text, "error", 6000);
    draw();  // the error line under the buttons says it too
  }

  async function send(action) {
    if (st.busy) return { ok: false };
    st.busy = true;
    try {
      const reply = await conn.command(action);
      if (!reply.ok && reply.error?.code === "disconnected") showError(reply.error);
      return reply;
    } finally { st.busy = false; }
  }

  function showReaction(p) {
    const key = p.seat ?? `u${p.user_id}`;
    st.reactions[key] = p.reaction;
    drawSeats();
    const who = p.seat === null ? p.name : nameOf(p.seat);
    toast(`${who}: ${REACTION_EMOJI[p.reaction] || ""} ${t(`react.${p.reaction}`)}`, "reaction", 3000);
    setTimeout(() => { if (st.reactions[key] === p.reaction) { delete st.reactions[key]; drawSeats(); } }, 3500);
  }

  // --- drawing -------------------------------------------------------------------------

  const statusEl = h("span.conn", { id: "conn-status" });
  const seatsEl = h("div.seats", { id: "seats" });
  const middle = h("div.middle", { id: "middle" });
  const overlay = h("div", { id: "overlays" });

  function drawStatus() {
    statusEl.textContent = t(`conn.${st.status}`);
    statusEl.className = `conn ${st.status}`;
  }

  function seatBadges(s) {
    const out = [];
    if (s.bot) out.push(v("span.badge.bot", { title: t("table.bot") }, vicon("bot"), t("table.bot")));
    if (s.left) out.push(v("span.badge.away", t("table.left")));
    if (s.user_id !== null) {
      if (s.away) out.push(v("span.badge.away", t("table.away")));
      else if (!s.connected) out.push(v("span.badge.offline", t("table.offline")));
      else out.push(v("span.dot.online", { title: t("table.online") }));
    }
    return out;
  }

  function seatName(s) {
    return s.user_id === null ? (s.bot ? t("table.bot_name", { n: s.seat + 1 }) : t("table.empty_seat")) : nameOf(s.seat);
  }

  // The seats sit around the table as the players do: mine at the bottom, the next to play
  // on my right, and so on (play passes to the right, RULES §1.1: counter-clockwise seen
  // from above). A spectator sees seat 1 at the bottom.
  function drawSeats() {
    const vw = st.view;
    const seats = st.info?.seats || [];
    const n = seats.length;
    const places = PLACES[n] || [];
    const from = st.seat ?? 0;
    patch(seatsEl, n ? v("div", { class: `ring seats-${n}`, dir: "ltr" },
      seats.map((s) => {
        const turn = vw && vw.turn === s.seat && !st.roundBreak && !vw.match_over;
        const count = vw?.hand_counts?.[s.seat];
        const reaction = st.reactions[s.seat];
        const last = st.lastMove[s.seat] ? moveWords(st.lastMove[s.seat]) : "";
        const name = seatName(s);
        return v("div", {
          key: s.seat, class: `seat at-${places[(s.seat - from + n) % n] || "bottom"}${turn ? " turn" : ""}${s.seat === st.seat ? " mine" : ""}`,
          dataset: { seat: s.seat }, dir: document.documentElement.dir || "rtl",
        },
        turn ? v("span.ring-timer", { "aria-hidden": "true" }) : null,
        v("div.seat-top", avatarOf(s.user_id === null && !s.bot ? "" : (s.name || name)), v("strong.who", { title: name }, name)),
        v("div.seat-info", ...seatBadges(s),
          count !== undefined ? v("span.count", { title: t("table.cards_in_hand") }, v("span.mini-back"), v("bdi", count)) : null,
          vw?.opened?.[s.seat] ? v("span.badge.opened", t("konkan.opened")) : null,
          vw?.committed?.[s.seat] ? v("span.badge.committed", t("konkan.committed")) : null,
          vw?.totals ? v("span.total", { title: t("sheet.total") }, "Σ ", v("bdi", vw.totals[s.seat])) : null,
          vw?.points ? v("span.total", { title: t("sheet.points") }, "★ ", v("bdi", vw.points[s.seat])) : null,
          turn ? v("span.timer", { "aria-live": "off" }) : null,
        ),
        last ? v("div.last-move", { title: last }, last, byMark(st.lastMove[s.seat])) : null,
        reaction ? v("div.bubble", REACTION_EMOJI[reaction] + " " + t(`react.${reaction}`)) : null,
        );
      }),
      n > 2 ? v("div.direction", { id: "direction", role: "img", "aria-label": t("table.direction"), title: t("table.direction") },
        v("span.arrow", { "aria-hidden": "true" }, "↺"), v("span.direction-text", { dir: document.documentElement.dir || "rtl" }, t("table.direction_short")))
        : v("div.direction", { "aria-hidden": "true" }),
    ) : null);
    tick();
  }

  // A generated face per player (avatar.js), each made once and kept; initials until it loads.
  const faces = new Map();
  function avatarOf(name) {
    if (!name) return v("span.avatar.empty", { "aria-hidden": "true" });
    if (avatarMaker) {
      if (!faces.has(name)) {
        try { const el = avatarMaker(name, 32); el.setAttribute?.("aria-hidden", "true"); faces.set(name, el); }
        catch { faces.set(name, null); }
      }
      const face = faces.get(name);
      if (face) return v("span.avatar", { key: `a:${name}` }, face);
    }
    const letters = [...name.trim()].filter((c) => /\p{L}|\p{N}/u.test(c)).slice(0, 2).join("");
    // Drawn by the stylesheet (not text of the page): the name beside it says it already.
    return v("span.avatar.initials", { "aria-hidden": "true", key: `i:${name}`, dataset: { initials: letters || "?" } });
  }
  let avatarMaker = null;
  import("./avatar.js").then((m) => { avatarMaker = m.avatar || null; if (st.info) drawSeats(); }).catch(() => {});

  function tick() {
    const left = st.deadline ? Math.max(0, Math.ceil(st.deadline - Date.now() / 1000)) : null;
    const next = root.querySelector("#break-countdown");
    if (next && st.roundBreak) next.textContent = t(game() === "conquian" ? "summary.next_deal_in" : "summary.next_in", { n: left ?? 0 });
    for (const el of root.querySelectorAll(".timer")) {
      el.replaceChildren(...(left === null ? [] : [icon("timer"), String(left)]));
      el.classList.toggle("low", left !== null && left <= 10);
    }
    // The ring around the seat to act empties as its time runs out.
    const ring = root.querySelector(".seat.turn .ring-timer");
    if (ring && st.deadline && st.deadlineSpan) {
      ring.style.setProperty("--left", String(Math.max(0, Math.min(1, (st.deadline - Date.now() / 1000) / st.deadlineSpan))));
      ring.classList.toggle("low", left !== null && left <= 10);
    }
    if (myTurnNow() && left === 10 && st.beeped !== st.deadline) { st.beeped = st.deadline; play("low"); }
  }

  function myTurnNow() {
    const vw = st.view;
    return !!(vw && st.seat !== null && vw.turn === st.seat && !vw.match_over && !st.roundBreak);
  }

  // After each message: the turn sound, the tab title and a spoken line for screen readers.
  function signal() {
    if (st.deadline && st.deadline !== st.lastDeadline) {
      st.lastDeadline = st.deadline;
      st.deadlineSpan = Math.max(1, st.deadline - Date.now() / 1000);
    }
    const mine = myTurnNow();
    if (mine && !st.wasMyTurn) { play("turn"); announce(t("table.your_turn_title")); }
    else if (st.logged && st.logged !== st.announced) announce(spoken(st.log[st.log.length - 1]));
    st.announced = st.logged;
    st.wasMyTurn = mine;
    document.title = mine && document.hidden ? `● ${t("table.your_turn_title")} — ${t("app.name")}` : t("app.name");
  }
  const announcer = h("div.sr-only", { id: "announce", "aria-live": "polite", role: "status" });
  function announce(text) { announcer.textContent = text; }
  const onVisible = () => { if (!document.hidden) document.title = t("app.name"); };
  document.addEventListener("visibilitychange", onVisible);

  // A waiting room's button sends its request once: taps while it is on its way do
  // nothing (a second "start" or "take a seat" would come back as an error).
  const once = (run) => (event) => oneAtATime(event.currentTarget, run)();

  function waitingRoom() {
    const info = st.info;
    const seated = st.seat !== null;
    const free = info.seats.some((s) => s.user_id === null && !s.bot);
    return v("section.card-box.waiting", { id: "waiting" },
      v("h2", t("table.waiting_title")),
      v("p", t("table.waiting_help", { n: info.seats.filter((s) => s.user_id === null).length })),
      info.invite_code ? inviteLink(info.invite_code) : null,
      v("div.row",
        !seated && free ? v("button.primary", {
          type: "button", id: "take-seat",
          onclick: once(async () => {
            try { await ensureUser(); await api("POST", `/api/tables/${tableId}/join`, {}); reconnect(); }
            catch (error) { showError(error.detail); }
          }),
        }, t("lobby.join")) : null,
        seated && !info.coin_table ? v("button", {
          type: "button", id: "start-bots",
          onclick: once(async () => {
            try { await api("POST", `/api/tables/${tableId}/start`, { bots: true }); }
            catch (error) { showError(error.detail); }
          }),
        }, t("table.start_with_bots")) : null,
        seated ? v("button", {
          type: "button", id: "leave",
          onclick: once(async () => {
            try { await api("POST", `/api/tables/${tableId}/leave`); location.hash = "#/"; }
            catch (error) { showError(error.detail); }
          }),
        }, t("table.leave")) : null,
      ),
      v("p.error-line", { id: "last-error", role: "status" }, st.lastError || ""),
    );
  }

  // A private table's invite as a link to copy or share (the code alone is easy to mistype).
  function inviteLink(code) {
    const link = `${location.origin}${location.pathname}#/i/${encodeURIComponent(code)}`;
    const field = v("input", { id: "invite-link", readonly: true, value: link, "aria-label": t("table.invite_link"), onfocus: (e) => e.target.select() });
    const select = () => { const el = root.querySelector("#invite-link"); el?.focus(); el?.select(); };
    return v("div.invite",
      v("p", t("table.invite_code"), " ", v("code", { id: "invite-code" }, code)),
      v("div.row", field,
        v("button.primary", {
          type: "button", id: "copy-invite",
          onclick: async () => {
            try { await navigator.clipboard.writeText(link); toast(t("table.invite_copied")); }
            catch { select(); }
          },
        }, t("table.copy_invite")),
        navigator.share ? v("button", { type: "button", id: "share-invite", onclick: () => navigator.share({ url: link, title: t("app.name") }).catch(() => {}) }, t("table.share_invite")) : null));
  }

  function reactionBar() {
    if (st.seat === null && !session.token) return null;
    // Drawn again with the table: it stays open while the table changes.
    return v("details.reactions", { id: "reactions", open: st.reactionsOpen, ontoggle: (e) => { st.reactionsOpen = e.target.open; } },
      v("summary", "😊 ", t("table.react")),
      v("div.reaction-buttons", REACTIONS.map((r) => v("button", {
        key: r, type: "button", dataset: { reaction: r }, title: t(`react.${r}`),
        onclick: () => { conn.react(r); st.reactionsOpen = false; draw(); },
      }, REACTION_EMOJI[r], v("span", t(`react.${r}`))))));
  }

  function game() { return st.info?.game === "conquian" ? "conquian" : "konkan"; }

  // The game's module once loaded (null until then: "…" is drawn, and the page is drawn
  // again when it arrives).
  const rules = { name: null, module: null, loading: null };
  function gameModule() {
    const name = game();
    if (rules.name === name) return rules.module;
    if (rules.loading !== name) {
      rules.loading = name;
      GAMES[name]().then((module) => {
        if (rules.loading !== name) return;
        Object.assign(rules, { name, module, loading: null });
        draw();
      }, (error) => showError(String(error)));
    }
    return null;
  }
  const pending = () => v("p.loading", "…");
  function gameSheet(vw) {
    const g = gameModule();
    if (!g) return pending();
    return game() === "konkan" ? g.konkanSheet(vw, nameOf) : g.conquianSheet(vw, nameOf);
  }
  function gameSummary(event, vw) {
    const g = gameModule();
    if (!g) return pending();
    return game() === "conquian" ? g.conquianSummary(event, nameOf) : g.konkanSummary(event, vw, nameOf);
  }
  function gameTable(ctx) {
    const g = gameModule();
    if (!g) return pending();
    return game() === "konkan" ? g.renderKonkan(ctx) : g.renderConquian(ctx);
  }

  // The score sheet and the round (deal) summary are real <dialog>s shown modally: the
  // rest of the page is inert behind them, Escape closes (the summary: "continue").
  function drawOverlays() {
    const vw = st.view;
    const parts = [];
    if (st.sheetOpen && vw) {
      parts.push(modal("score-sheet", t("sheet.title"),
        gameSheet(vw),
        () => { if (!st.sheetOpen) return; st.sheetOpen = false; drawOverlays(); }));
    }
    if (st.summary && vw) {
      const body = [];
      const deal = game() === "conquian";
      if (st.summary.event) body.push(gameSummary(st.summary.event, vw));
      if (st.summary.matchEnd) body.push(matchEnd(st.summary.matchEnd));
      const pause = st.roundBreak;
      const reading = pause && st.seat !== null && pause.waiting.includes(st.seat);
      if (pause && !st.summary.matchEnd) {
        const others = pause.waiting.filter((seat) => seat !== st.seat).map(nameOf);
        body.push(v("div.break-bar", { key: "break" },
          v("p", { id: "break-countdown", role: "timer" }),
          others.length ? v("p", { id: "break-waiting" }, t("summary.waiting_for", { who: others.join("، ") })) : null,
          reading ? v("button.primary", { type: "button", id: "summary-continue", onclick: continuePlay, disabled: st.continued === st.summary }, t("summary.continue")) : null));
      }
      const title = st.summary.matchEnd ? t("summary.match_title") : t(deal ? "summary.deal_title" : "summary.title");
      parts.push(modal("summary", title, body,
        () => { if (!st.summary) return; if (reading) continuePlay(); st.summary = null; drawOverlays(); }));
    }
    patch(overlay, parts);
    tick();
  }

  // The end of the match: standings, coins, the replay, and another match at the same seats.
  function matchEnd(ev) {
    const w = ev.winner;
    const totals = ev.totals || st.view?.totals || st.view?.points || [];
    const places = ev.places || totals.map((_, seat) => (seat === w ? 1 : 2));
    const order = places.map((place, seat) => ({ place, seat })).sort((a, b) => a.place - b.place);
    const r = st.results;
    if (!r) loadResults();
    const agreed = new Set(st.info?.rematch || []);
    const seated = st.seat !== null && st.info?.seats?.[st.seat]?.user_id === session.user?.id;
    const waiting = (st.info?.seats || []).filter((s) => !agreed.has(s.seat)).map((s) => nameOf(s.seat));
    const asked = agreed.has(st.seat) || st.rematchAsked === st.matchEnd;
    return v("div.match-end-box", { key: "match-end" },
      v("p.match-end", { id: "match-result" }, w === null ? t("ev.match_end") : t("ev.match_won", subject(nameOf, w))),
      v("table.sheet.standings", { id: "standings" },
        v("thead", v("tr", v("th", t("end.place")), v("th", t("end.player")), v("th", t("sheet.total")),
          r?.coins !== undefined ? v("th", t("end.coins")) : null)),
        v("tbody", order.map(({ place, seat }) => v("tr", { key: seat, class: seat === st.seat ? "me" : "" },
          v("td", v("bdi", place)), v("td", nameOf(seat)), v("td", v("bdi", totals[seat] ?? "")),
          r?.coins !== undefined ? v("td", seat === st.seat ? v("bdi", signed(r.coins)) : "") : null)))),
      v("div.row.end-actions",
        seated ? v("button.primary", {
          type: "button", id: "rematch", disabled: asked,
          onclick: () => { conn?.sendRaw({ type: "rematch" }); st.rematchAsked = st.matchEnd; drawOverlays(); },
        }, agreed.has(st.seat) ? t("end.rematch_asked") : t("end.rematch")) : null,
        r?.matchId ? v("a.button", { id: "replay-link", href: `#/m/${r.matchId}` }, t("end.replay")) : null,
        v("a.button", { href: "#/" }, t("table.lobby"))),
      agreed.size ? v("p", { id: "rematch-waiting" }, t("summary.waiting_for", { who: waiting.join("، ") || "—" })) : null);
  }

  async function loadResults() {
    st.results = {};
    try {
      const matches = await api("GET", `/api/tables/${tableId}/matches`);
      const newest = matches.reduce((a, b) => (b.id > (a?.id ?? -1) ? b : a), null);
      if (newest) st.results.matchId = newest.id;
      if (st.seat !== null && session.token) {
        // The coins this match moved for me: its payout or earnings, less its stake.
        const ledger = await api("GET", "/api/me/ledger");
        let coins = 0, seen = false;
        for (const entry of ledger.entries.filter((e) => e.table_id === tableId)) {
          if (entry.reason === "stake") { if (seen || coins) coins += entry.amount; seen = true; break; }
          if (entry.reason === "payout" || entry.reason === "earnings") { coins += entry.amount; seen = true; } else break;
        }
        if (seen) st.results.coins = coins;
      }
    } catch { /* the link and coins are extras */ }
    drawOverlays();
  }

  function continuePlay() {
    conn?.sendRaw({ type: "continue" });
    st.continued = st.summary;
    drawOverlays();
  }

  function draw() {
    if (!st.info) return;
    // Kept elements keep their focus; one the patch moved (a card sorted into a new place
    // is taken out and put back) gets it back: the same element, not one found again.
    const had = document.activeElement;
    drawAll();
    if (had !== document.activeElement && had?.isConnected && root.contains(had) && !document.querySelector("dialog:modal")) had.focus({ preventScroll: true });
  }

  function drawAll() {
    const vw = st.view;
    const ctx = {
      st, send, nameOf, redraw: draw, showError, confirm: confirmDialog,
      // At a free table the server's bot may suggest a move (never where coins are at stake).
      askHint: st.info.coin_table ? null : () => conn?.sendRaw({ type: "hint" }),
    };
    let center;
    if (st.info.status === "waiting" || !vw) center = waitingRoom();
    else center = gameTable(ctx);
    patch(middle, st.timedOut && st.seat !== null ? v("p.notice", { id: "timed-out", role: "status" }, vicon("timer"), t("table.timed_out")) : null, center);
    drawSeats();
    const shown = st.log.slice(-8);
    const first = (st.logged || 0) - shown.length;
    // It scrolls: a keyboard reaches it, a screen reader names it.
    patch(foot, v("div.row.foot-row", reactionBar(), watchers()),
      v("ol.log", { id: "log", tabIndex: 0, "aria-label": t("table.log"), ref: scrollDown },
        shown.map((entry, i) => v("li", { key: first + i }, words(entry), byMark(entry)))));
    const over = vw?.match_over || st.info.status === "finished";
    patch(bar,
      v("a.back", { href: "#/" }, vicon("lobby"), t("table.lobby")),
      v("strong.table-name", `${t(`game.${st.info.game}`)} `, v("bdi", `#${tableId}`)),
      vw && game() === "konkan" ? v("span.round", t("konkan.round_of", { round: vw.round, rounds: vw.options.rounds }), vw.last_round ? v("span.badge.last", t("konkan.last_round")) : null) : null,
      vw && game() === "conquian" ? v("span.round", t("conquian.deal_n", { n: vw.deal })) : null,
      st.seat === null ? v("span.badge.spectator", { id: "spectating" }, t("table.spectator")) : null,
      statusEl,
      vw ? v("button", { type: "button", id: "open-sheet", onclick: () => { st.sheetOpen = true; drawOverlays(); } }, vicon("sheet"), t("sheet.button")) : null,
      over ? v("span.badge.over", { id: "match-over" }, t("table.match_over")) : null,
      over && !st.summary ? v("button", { type: "button", id: "show-results", onclick: () => { st.summary = { matchEnd: st.matchEnd || { winner: vw?.winner ?? null } }; drawOverlays(); } }, vicon("results"), t("end.results")) : null,
      v("button", { type: "button", id: "shortcuts", onclick: showShortcuts, "aria-keyshortcuts": "?" }, "⌨ ", t("keys.button")),
      v("button", {
        type: "button", id: "mute", "aria-pressed": muted() ? "true" : "false", "aria-label": t("table.sound"),
        title: t("table.sound"), onclick: () => { setMuted(!muted()); draw(); },
      }, vicon(muted() ? "muted" : "sound")),
      vw && !over && st.seat !== null && !st.info.coin_table ? v("button", {
        type: "button", id: "leave-match",
        onclick: () => confirmDialog(t(aloneWithBots() ? "table.leave_bot_game_confirm" : "table.leave_match_confirm"), async () => {
          try { await api("POST", `/api/tables/${tableId}/leave`); location.hash = "#/"; }
          catch (error) { showError(error.detail); }
        }),
      }, t(aloneWithBots() ? "table.leave_bot_game" : "table.leave_match")) : null,
    );
    drawStatus();
    drawOverlays();
    signal();
  }

  // Only bots play with me: leaving ends the match, for nobody (docs/protocol.md).
  function aloneWithBots() {
    return st.info.seats.every((s) => s.seat === st.seat || s.user_id === null || s.left);
  }

  // Who is watching (TableInfo.spectators, when the server sends it): a count, names on demand.
  function watchers() {
    const info = st.info;
    if (!info || !Array.isArray(info.spectators)) return null;
    const count = info.spectator_count ?? info.spectators.length;
    if (!count) return null;
    return v("details.watchers", { id: "spectators", open: st.watchersOpen, ontoggle: (e) => { st.watchersOpen = e.target.open; } },
      v("summary", vicon("watchers"), t("table.watchers", { n: count })),
      v("ul.watcher-names", info.spectators.map((name, i) => v("li", { key: `${i}:${name}` }, v("bdi", name))),
        count > info.spectators.length ? v("li.muted", { key: "more" }, "…") : null));
  }

  const bar = h("div.table-bar");
  const foot = h("div.table-foot");
  root.append(bar, seatsEl, middle, foot, overlay, announcer);

  function reconnect() {
    if (conn) conn.close();
    conn = new TableConnection(tableId, session.token, handlers);
    window.sahratConn = conn;  // for debugging and the browser tests' "drop the connection"
    conn.open();
  }

  (async () => {
    try { await ensureUser(); onUser(); } catch (error) { showError(error.detail); return; }
    reconnect();
  })();
  const ticker = setInterval(tick, 250);
  // Keyboard play: one key per move (listed in the help panel), arrows walk the hand.
  const onKey = (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || e.target.closest?.("input, select, textarea, dialog")) return;
    if (e.key === "?") { showShortcuts(); e.preventDefault(); return; }
    const card = e.target.closest?.("#hand [data-card]");
    if (card && (e.key === "ArrowLeft" || e.key === "ArrowRight")) {
      const cards = [...root.querySelectorAll("#hand [data-card]")];
      const rtl = document.documentElement.dir === "rtl";
      const step = (e.key === "ArrowRight") !== rtl ? 1 : -1;
      cards[(cards.indexOf(card) + step + cards.length) % cards.length]?.focus();
      e.preventDefault();
      return;
    }
    const target = SHORTCUTS.find(([key]) => key === e.key.toLowerCase());
    if (!target) return;
    const el = root.querySelector(target[1]);
    if (!el || el.disabled) return;
    e.preventDefault();
    if (target[2] === "focus") el.focus(); else el.click();
  };
  document.addEventListener("keydown", onKey);
  // Exposed read-only for the browser tests (they decide moves with the engine's bots).
  window.sahrat = st;

  return {
    close() { clearInterval(ticker); conn?.close(); document.removeEventListener("visibilitychange", onVisible); document.removeEventListener("keydown", onKey); document.title = t("app.name"); },
    rerender() { announce(""); draw(); },
  };
}

// [key, what it presses, "focus" to move there instead of pressing]
const SHORTCUTS = [
  ["d", "#draw"], ["t", "#discard-pile [data-card]"], ["m", "#make-meld"], ["l", "#lay-down"],
  ["x", "#discard"], ["c", "#clear"], ["s", "#sort-suit"], ["r", "#sort-rank"], ["h", "#hint-toggle"],
  ["b", "#ask-hint"], ["f", "#hand [data-card]", "focus"],
];

function showShortcuts() {
  const dialog = h("dialog.confirm.shortcuts", { id: "shortcuts-help", "aria-labelledby": "shortcuts-title" },
    h("h2", { id: "shortcuts-title" }, t("keys.title")),
    h("dl", [...SHORTCUTS.map(([key]) => [key, t(`keys.${key}`)]), ["← →", t("keys.arrows")], ["?", t("keys.help")]]
      .map(([key, what]) => [h("dt", h("kbd", key.toUpperCase())), h("dd", what)])),
    h("form.row", { method: "dialog" }, h("button.primary", { value: "ok", id: "shortcuts-close" }, t("app.close"))));
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
}

const signed = (n) => (n > 0 ? `+${n}` : n < 0 ? `\u2212${-n}` : "0");

/** A question with OK / Cancel in a real <dialog> (a page's confirm() blocks and cannot be styled). */
export function confirmDialog(question, onYes) {
  const dialog = h("dialog.confirm", { id: "confirm", "aria-label": question },
    h("p", question),
    h("form.row", { method: "dialog" },
      h("button", { value: "no", id: "confirm-no" }, t("app.cancel")),
      h("button.primary", { value: "yes", id: "confirm-yes" }, t("app.ok"))));
  dialog.addEventListener("close", () => { dialog.remove(); if (dialog.returnValue === "yes") onYes(); });
  document.body.append(dialog);
  dialog.showModal();
}

// Seat places around the table by turns after mine: the next player on my right.
const PLACES = { 2: ["bottom", "top"], 3: ["bottom", "right", "left"], 4: ["bottom", "right", "top", "left"] };

const scrollDown = (el) => { if (el) el.scrollTop = el.scrollHeight; };

// Shown modally once, when it enters the page; a click on the backdrop closes it.
function openModal(el) { if (el && !el.open && el.isConnected) el.showModal(); }

function modal(id, title, body, onClose) {
  return v("dialog.modal", {
    key: id, id, ref: openModal, "aria-labelledby": `${id}-title`,
    oncancel: (e) => { e.preventDefault(); onClose(); },
    onclose: onClose,
    onclick: (e) => {
      if (e.target !== e.currentTarget) return;
      const r = e.currentTarget.getBoundingClientRect();
      if (e.clientX < r.left || e.clientX > r.right || e.clientY < r.top || e.clientY > r.bottom) onClose();
    },
  },
  v("div.modal-head", v("h2", { id: `${id}-title` }, title), v("button.close", { type: "button", id: `${id}-close`, onclick: onClose, "aria-label": t("app.close") }, "✕")),
  v("div.modal-body", body));
}

export { label };
