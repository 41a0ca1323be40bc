// The table screen as functions of its controller (ctrl.js): the bar, the seats around
// the table, the middle (the waiting room, or the game's module drawing the game), the
// foot (reactions, watchers, the move log) and the overlays (overlays.js). `drawTable`
// patches each part (Preact, view.js's `v`): a card, seat or meld keeps its element
// (and the keyboard focus on it) from one drawing to the next.
import { h, toast, oneAtATime } from "../dom.js";
import { v, patch, vicon } from "../view.js";
import { icon } from "../icons.js";
import { t } from "../i18n.js";
import { session } from "../api.js";
import { describeEvent, seatSentence } from "../describe.js";
import { muted } from "../sound.js";
import { REACTIONS, REACTION_EMOJI, playedBy } from "./ctrl.js";
import { overlays, modal } from "./overlays.js";
import { showShortcuts } from "./keys.js";
import { errorLine } from "./lines.js";
import { cardPlaces, animateMoves, justDealt } from "./motion.js";
import { seatRating } from "../rating.js";
import { chatButton } from "./chat.js";
import { inviteDialog } from "../invitations.js";

/** @typedef {import("./ctrl.js").TableCtrl} TableCtrl */
/** @typedef {import("./protocol.js").TableSeat} TableSeat */
/** @typedef {import("./protocol.js").TableInfo} TableInfo */
/** @typedef {import("./ctrl.js").LogEntry} LogEntry */
/** @typedef {import("./ctrl.js").NameOf} NameOf */

/**
 * The screen's parts, each patched on its own, and the faces drawn so far.
 * @typedef {object} TableScreen
 * @property {HTMLElement} root
 * @property {HTMLElement} bar
 * @property {HTMLElement} seats
 * @property {HTMLElement} middle
 * @property {HTMLElement} foot
 * @property {HTMLElement} overlay
 * @property {HTMLElement} announcer
 * @property {Map<string, Element | null>} faces  a name → its face (avatar.js), made once
 * @property {((name: string, size: number) => Element) | null} avatarMaker  avatar.js's, once loaded
 * @property {boolean} [gameShown]  the game's module has drawn the game once (motion.js: the first deal)
 */

/** The screen's parts, put in `root`. @returns {TableScreen} */
export function tableScreen(/** @type {HTMLElement} */ root) {
  const screen = {
    root,
    bar: h("div.table-bar"),
    seats: h("div.seats", { id: "seats" }),
    middle: h("div.middle", { id: "middle" }),
    foot: h("div.table-foot"),
    overlay: h("div", { id: "overlays" }),
    announcer: h("div.sr-only", { id: "announce", "aria-live": "polite", role: "status" }),
    faces: new Map(),
    avatarMaker: null,
  };
  root.append(screen.bar, screen.seats, screen.middle, screen.foot, screen.overlay, screen.announcer);
  return screen;
}

/** A line for screen readers (the table's spoken signals). */
export function announce(/** @type {TableScreen} */ screen, /** @type {string} */ text) { screen.announcer.textContent = text; }

/** The generated faces (avatar.js): initials until they come, then the seats again. */
export function loadFaces(/** @type {TableScreen} */ screen) {
  return import("../avatar.js").then((m) => { screen.avatarMaker = m.avatar || null; }).catch(() => {});
}

/** The whole screen from `ctrl`; nothing until the table is known. */
export function drawTable(/** @type {TableCtrl} */ ctrl, /** @type {TableScreen} */ screen) {
  if (!ctrl.info) return;
  // Kept elements keep their focus; one the patch moved (a card sorted into a new place
  // is taken out and put back) gets it back: the same element, not one found again.
  const had = /** @type {HTMLElement | null} */ (document.activeElement);
  const before = cardPlaces(screen.root);
  layout(ctrl, screen.root);
  patch(screen.middle, middle(ctrl));
  patch(screen.seats, seats(ctrl, screen));
  patch(screen.foot, foot(ctrl));
  patch(screen.bar, bar(ctrl));
  patch(screen.overlay, [overlays(ctrl), logSheet(ctrl)]);
  // The moves are kept until the game's module draws them (the first deal comes with it).
  const drawn = !!ctrl.view && !!ctrl.gameModule();
  const moved = ctrl.view && !drawn ? [] : ctrl.moved.splice(0);
  // A page opened on a round nobody has moved in yet sees its deal (motion.js, justDealt).
  if (drawn && !screen.gameShown && !moved.length && !before.size && justDealt(ctrl.view)) moved.push({ type: "deal", seat: null });
  if (drawn) screen.gameShown = true;
  animateMoves(screen.root, before, moved, ctrl.seat);
  tick(ctrl, screen.root);
  ctrl.signal();
  if (had !== document.activeElement && had?.isConnected && screen.root.contains(had) && !document.querySelector("dialog:modal")) had.focus({ preventScroll: true });
}

// The screen's shape: a game being played is one screen (the seats around the felt, the
// bar of moves and the hand under it: app.css), the waiting room a page. My turn only
// highlights: nothing moves for it.
function layout(/** @type {TableCtrl} */ ctrl, /** @type {HTMLElement} */ root) {
  const info = /** @type {TableInfo} */ (ctrl.info);
  const playing = !!ctrl.view && info.status !== "waiting";
  root.classList.toggle("playing", playing);
  root.classList.toggle("my-turn", playing && ctrl.myTurnNow());
  root.classList.toggle("watching", ctrl.seat === null);
  root.dataset.seats = String(info.seats.length);
  root.dataset.game = ctrl.game;
}

// --- the bar -----------------------------------------------------------------------------

function bar(/** @type {TableCtrl} */ ctrl) {
  const info = /** @type {TableInfo} */ (ctrl.info);
  const vw = ctrl.view;
  const over = vw?.match_over || info.status === "finished";
  const game = ctrl.game;
  return [
    // On a phone the bar is one line: some of its words are only read out (span.label).
    v("a.back", { href: "#/" }, vicon("lobby"), v("span.label", t("table.lobby"))),
    // A tournament's table: its standings one tap away (tournaments.js).
    info.tournament_id ? v("a.tour-back", { href: `#/tr/${info.tournament_id}`, id: "tournament-link", title: t("tour.back") }, vicon("results"), v("span.label", t("tour.back"))) : null,
    v("strong.table-name", `${t(`game.${info.game}`)} `, v("bdi", `#${ctrl.tableId}`)),
    // The last round's badge says which round it is: on a phone the round's number is only read out then.
    vw && game === "konkan" ? v("span.round", v("span.round-n", t("konkan.round_of", { round: vw.round, rounds: vw.options.rounds })), vw.last_round ? v("span.badge.last", t("konkan.last_round")) : null) : null,
    vw && game === "conquian" ? v("span.round", t("conquian.deal_n", { n: vw.deal })) : null,
    ctrl.seat === null ? v("span.badge.spectator", { id: "spectating" }, t("table.spectator")) : null,
    v("span", { id: "conn-status", class: `conn ${ctrl.status}` }, v("span.label", t(`conn.${ctrl.status}`))),
    chatButton(ctrl),
    vw ? v("button", { type: "button", id: "open-sheet", onclick: () => ctrl.openSheet() }, vicon("sheet"), v("span.label", t("sheet.button"))) : null,
    // The moves so far, in a sheet: a phone's table has no room for the log under it.
    vw ? v("button", { type: "button", id: "open-log", "aria-haspopup": "dialog", onclick: () => { ctrl.logOpen = true; ctrl.redraw(); } }, vicon("history"), v("span.label", t("table.log"))) : null,
    over ? v("span.badge.over", { id: "match-over" }, t("table.match_over")) : null,
    over && !ctrl.summary ? v("button", { type: "button", id: "show-results", onclick: () => ctrl.showResults() }, vicon("results"), t("end.results")) : null,
    // The game's rules, in a tab of its own: the table (and its socket) stays open here.
    v("a.rules-link", { href: `#/rules/${game}`, id: "rules-link", target: "_blank", rel: "noopener" }, t("rules.link")),
    v("button", { type: "button", id: "shortcuts", onclick: showShortcuts, "aria-keyshortcuts": "?" }, "⌨ ", t("keys.button")),
    v("button", {
      type: "button", id: "mute", "aria-pressed": muted() ? "true" : "false", "aria-label": t("table.sound"),
      title: t("table.sound"), onclick: () => ctrl.toggleMute(),
    }, vicon(muted() ? "muted" : "sound")),
    vw && !over && ctrl.seat !== null && !info.coin_table ? v("button", {
      type: "button", id: "leave-match", onclick: () => ctrl.leaveMatch(),
    }, v("span.short", { "aria-hidden": "true" }, t("table.leave_short")),
    v("span.label", t(ctrl.aloneWithBots() ? "table.leave_bot_game" : "table.leave_match"))) : null,
  ];
}

// --- the seats ---------------------------------------------------------------------------

// Seat places around the table by turns after mine: the next player on my right.
/** @type {Record<number, string[]>} */
const PLACES = { 2: ["bottom", "top"], 3: ["bottom", "right", "left"], 4: ["bottom", "right", "top", "left"] };

/** A seat's badges: a bot, away, offline, online. */
function seatBadges(/** @type {TableSeat} */ s) {
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

function seatName(/** @type {TableCtrl} */ ctrl, /** @type {TableSeat} */ s) {
  return s.user_id === null ? (s.bot ? t("table.bot_name", { n: s.seat + 1 }) : t("table.empty_seat")) : ctrl.nameOf(s.seat);
}

// The seats sit around the table as the players do: mine at the bottom, the next to play
// on my right, and so on (play passes to the right, RULES §1.1: counter-clockwise seen
// from above). A spectator sees seat 1 at the bottom.
function seats(/** @type {TableCtrl} */ ctrl, /** @type {TableScreen} */ screen) {
  const vw = ctrl.view;
  const all = ctrl.info?.seats || [];
  const n = all.length;
  if (!n) return null;
  const places = PLACES[n] || [];
  const from = ctrl.seat ?? 0;
  const dir = document.documentElement.dir || "rtl";
  return v("div", { class: `ring seats-${n}`, dir: "ltr" },
    all.map((s) => {
      const turn = vw && vw.turn === s.seat && !ctrl.roundBreak && !vw.match_over;
      const count = vw?.hand_counts?.[s.seat];
      const reaction = ctrl.reactions[s.seat];
      const move = ctrl.lastMove[s.seat];
      const last = move ? moveWords(move) : "";
      const name = seatName(ctrl, s);
      return v("div", {
        key: s.seat, class: `seat at-${places[(s.seat - from + n) % n] || "bottom"}${turn ? " turn" : ""}${s.seat === ctrl.seat ? " mine" : ""}`,
        dataset: { seat: s.seat }, dir, role: "group", "aria-label": seatSentence(s, vw, ctrl.nameOf, name, !!turn),
      },
      turn ? v("span.ring-timer", { "aria-hidden": "true" }) : null,
      v("div.seat-top", avatarOf(screen, s.user_id === null && !s.bot ? "" : (s.name || name)), v("strong.who", { title: name }, name), seatRating(v, s)),
      v("div.seat-info", ...seatBadges(s),
        count !== undefined ? v("span.count", { title: t("table.cards_in_hand") }, v("span.mini-back"), v("bdi", count)) : null,
        vw?.opened?.[s.seat] ? v("span.badge.opened", t("konkan.opened")) : null,
        vw?.committed?.[s.seat] ? v("span.badge.committed", t("konkan.committed")) : null,
        vw?.totals ? v("span.total", t("sheet.total"), " ", v("bdi", vw.totals[s.seat])) : null,
        vw?.points ? v("span.total", t("sheet.points"), " ", v("bdi", vw.points[s.seat])) : null,
        turn ? v("span.timer", { "aria-live": "off" }) : null,
      ),
      // Always there (empty before a move): a seat keeps its height from move to move.
      // Its words cut short in their own box, the bot's or the timer's mark always shown.
      v("div.last-move", { title: last || null }, last ? [v("span.move-words", last), byMark(move)] : null),
      reaction ? v("div.bubble", REACTION_EMOJI[reaction] + " " + t(`react.${reaction}`)) : null,
      );
    }),
    n > 2 ? v("div.direction", { id: "direction", role: "img", "aria-label": t("table.direction"), title: t("table.direction") },
      v("span.arrow", { "aria-hidden": "true" }, "↺"), v("span.direction-text", { dir }, t("table.direction_short")))
      : v("div.direction", { "aria-hidden": "true" }),
  );
}

// A generated face per player (avatar.js), each made once and kept; initials until it loads.
function avatarOf(/** @type {TableScreen} */ screen, /** @type {string} */ name) {
  if (!name) return v("span.avatar.empty", { "aria-hidden": "true" });
  const make = screen.avatarMaker;
  if (make) {
    if (!screen.faces.has(name)) {
      try { const el = make(name, 32); el.setAttribute?.("aria-hidden", "true"); screen.faces.set(name, el); }
      catch { screen.faces.set(name, null); }
    }
    const face = screen.faces.get(name);
    if (face) return v("span.avatar", { key: `a:${name}` }, face);
  }
  const letters = [...name.trim()].filter((c) => /\p{L}|\p{N}/u.test(c)).slice(0, 2).join("");
  // Drawn by the stylesheet (not text of the page): the name beside it says it already.
  return v("span.avatar.initials", { "aria-hidden": "true", key: `i:${name}`, dataset: { initials: letters || "?" } });
}

// A seat's move the timer or a bot played: an icon beside its words, and words for a
// screen reader.
function byMark(/** @type {LogEntry} */ entry) {
  const by = playedBy(entry);
  return by ? v("span.by", { title: t(`table.by_${by}`) }, vicon(by)) : null;
}

// A seat's last move beside it, without the name the seat box already shows.
const nobody = Object.assign(() => "", { mine: () => false });
const moveWords = (/** @type {LogEntry} */ move) => (describeEvent(move.ev, nobody) || "").replace(/^[\s:،]+/, "");

// --- the middle --------------------------------------------------------------------------

function middle(/** @type {TableCtrl} */ ctrl) {
  const info = /** @type {TableInfo} */ (ctrl.info);
  const notice = ctrl.timedOut && ctrl.seat !== null
    ? v("p.notice", { id: "timed-out", role: "status" }, vicon("timer"), t("table.timed_out")) : null;
  // A prize tournament's spectators see a round once it is over (docs/protocol.md,
  // "Delayed spectators"): until the first one ends there is nothing to show but that.
  if (info.spectator_delay && ctrl.seat === null && info.status === "playing" && !ctrl.view) return [delayedNotice()];
  if (info.status === "waiting" || !ctrl.view) return [notice, waitingRoom(ctrl)];
  const game = ctrl.gameModule();
  return [notice, game ? game.render(ctrl) : v("p.loading", "…")];
}

function delayedNotice() {
  return v("section.card-box.delayed", { id: "delayed" },
    v("h2", vicon("timer"), t("table.delayed_title")),
    v("p", t("table.delayed_help")));
}

// A waiting room's button sends its request once: taps while it is on its way do
// nothing (a second "start" or "take a seat" would come back as an error).
const once = (/** @type {() => Promise<void>} */ run) => (/** @type {Event} */ event) => oneAtATime(/** @type {object} */ (event.currentTarget), run)();

function waitingRoom(/** @type {TableCtrl} */ ctrl) {
  const info = /** @type {TableInfo} */ (ctrl.info);
  const seated = ctrl.seat !== null;
  const free = info.seats.some((s) => s.user_id === null && !s.bot);
  return v("section.card-box.waiting", { id: "waiting" },
    v("h2", t("table.waiting_title")),
    v("p", t("table.waiting_help", { n: info.seats.filter((s) => s.user_id === null).length })),
    info.invite_code ? inviteLink(info.invite_code) : null,
    v("div.row",
      !seated && free ? v("button.primary", { type: "button", id: "take-seat", onclick: once(() => ctrl.takeSeat()) }, t("lobby.join")) : null,
      seated && free && !session.user?.guest ? v("button", { type: "button", id: "invite-friends", onclick: () => inviteDialog(info.id, info.seats) }, t("invite.button")) : null,
      seated && !info.coin_table ? v("button", { type: "button", id: "start-bots", onclick: once(() => ctrl.startWithBots()) }, t("table.start_with_bots")) : null,
      seated ? v("button", { type: "button", id: "leave", onclick: once(() => ctrl.leave()) }, t("table.leave")) : null,
    ),
    errorLine(ctrl),
  );
}

// A private table's invite as a link to copy or share (the code alone is easy to mistype).
function inviteLink(/** @type {string} */ code) {
  const link = `${location.origin}${location.pathname}#/i/${encodeURIComponent(code)}`;
  const select = () => {
    const el = /** @type {HTMLInputElement | null} */ (document.querySelector("#table #invite-link"));
    el?.focus();
    el?.select();
  };
  return v("div.invite",
    v("p", t("table.invite_code"), " ", v("code", { id: "invite-code" }, code)),
    v("div.row",
      v("input", {
        id: "invite-link", readonly: true, value: link, "aria-label": t("table.invite_link"),
        onfocus: (/** @type {FocusEvent & { target: HTMLInputElement }} */ e) => e.target.select(),
      }),
      v("button.primary", {
        type: "button", id: "copy-invite",
        onclick: async () => {
          try { await navigator.clipboard.writeText(link); toast(t("table.invite_copied")); }
          catch { select(); }
        },
      }, t("table.copy_invite")),
      navigator.share ? v("button", { type: "button", id: "share-invite", onclick: () => navigator.share({ url: link, title: t("app.name") }).catch(() => {}) }, t("table.share_invite")) : null));
}

// --- the foot ----------------------------------------------------------------------------

function foot(/** @type {TableCtrl} */ ctrl) {
  const shown = ctrl.log.slice(-8);
  const first = ctrl.logged - shown.length;
  return [
    v("div.row.foot-row", reactionBar(ctrl), watchers(ctrl)),
    // It scrolls: a keyboard reaches it, a screen reader names it.
    v("ol.log", { id: "log", tabIndex: 0, "aria-label": t("table.log"), ref: scrollDown },
      shown.map((entry, i) => v("li", { key: first + i }, describeEvent(entry.ev, ctrl.nameOf), byMark(entry)))),
  ];
}

const scrollDown = (/** @type {HTMLElement | null} */ el) => { if (el) el.scrollTop = el.scrollHeight; };

// The move log in a sheet over the table (the bar's button): every line kept, the last at
// the foot and in sight. It follows the game while open: a new line scrolls it down.
function logSheet(/** @type {TableCtrl} */ ctrl) {
  if (!ctrl.logOpen || !ctrl.view) return null;
  const first = ctrl.logged - ctrl.log.length;
  const close = () => { if (!ctrl.logOpen) return; ctrl.logOpen = false; ctrl.redraw(); };
  const follow = (/** @type {HTMLElement | null} */ el) => {
    if (!el || el.dataset.lines === String(ctrl.logged)) return;
    el.dataset.lines = String(ctrl.logged);
    queueMicrotask(() => scrollDown(el));  // once the sheet is open (its own ref shows it)
  };
  return modal("move-log", t("table.log"), ctrl.log.length
    ? v("ol.log-lines", { id: "log-lines", start: first + 1, tabIndex: 0, "aria-label": t("table.log"), ref: follow },
      ctrl.log.map((entry, i) => v("li", { key: first + i }, describeEvent(entry.ev, ctrl.nameOf), byMark(entry))))
    : v("p.muted", "—"), close);
}

function reactionBar(/** @type {TableCtrl} */ ctrl) {
  if (ctrl.seat === null && !session.token) return null;
  // Drawn again with the table: it stays open while the table changes.
  return v("details.reactions", {
    id: "reactions", open: ctrl.reactionsOpen,
    ontoggle: (/** @type {Event & { target: HTMLDetailsElement }} */ e) => { ctrl.reactionsOpen = e.target.open; },
  },
  v("summary", "😊 ", t("table.react")),
  v("div.reaction-buttons", REACTIONS.map((r) => v("button", {
    key: r, type: "button", dataset: { reaction: r }, title: t(`react.${r}`), onclick: () => ctrl.react(r),
  }, REACTION_EMOJI[r], v("span", t(`react.${r}`))))));
}

// Who is watching (TableInfo.spectators, when the server sends it): a count, names on demand.
function watchers(/** @type {TableCtrl} */ ctrl) {
  const info = ctrl.info;
  if (!info || !Array.isArray(info.spectators)) return null;
  const count = info.spectator_count ?? info.spectators.length;
  if (!count) return null;
  return v("details.watchers", {
    id: "spectators", open: ctrl.watchersOpen,
    ontoggle: (/** @type {Event & { target: HTMLDetailsElement }} */ e) => { ctrl.watchersOpen = e.target.open; },
  },
  v("summary", vicon("watchers"), t("table.watchers", { n: count })),
  v("ul.watcher-names", info.spectators.map((name, i) => v("li", { key: `${i}:${name}` }, v("bdi", name))),
    count > info.spectators.length ? v("li.muted", { key: "more" }, "…") : null));
}

// --- the clock ---------------------------------------------------------------------------

/** The countdowns, four times a second: the seat's timer, the ring around it, the break's. */
export function tick(/** @type {TableCtrl} */ ctrl, /** @type {HTMLElement} */ root) {
  const left = ctrl.secondsLeft();
  const next = root.querySelector("#break-countdown");
  if (next && ctrl.roundBreak) next.textContent = t(ctrl.game === "conquian" ? "summary.next_deal_in" : "summary.next_in", { n: left ?? 0 });
  for (const el of root.querySelectorAll(".timer")) {
    el.replaceChildren(...(left === null ? [] : [icon("timer"), String(left)]));
    el.classList.toggle("low", left !== null && left <= 10);
  }
  // The ring around the seat to act empties as its time runs out.
  const ring = /** @type {HTMLElement | null} */ (root.querySelector(".seat.turn .ring-timer"));
  if (ring && ctrl.deadline && ctrl.deadlineSpan) {
    ring.style.setProperty("--left", String(Math.max(0, Math.min(1, (ctrl.deadline - Date.now() / 1000) / ctrl.deadlineSpan))));
    ring.classList.toggle("low", left !== null && left <= 10);
  }
  ctrl.warnLow(left);
}
