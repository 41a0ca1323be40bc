// A table's state and what can be done to it. Every field is declared here, in the
// constructor; a message from the server goes through one handler per message type
// (`handlers`), a tap through one method each, and each ends in one `redraw()` that
// draws the whole screen again from this state (view.js: views are functions of it).
import { toast } from "../dom.js";
import { t, errorText } from "../i18n.js";
import { api, session, ensureUser, rememberTable } from "../api.js";
import { TableConnection } from "../conn.js";
import { describeEvent } from "../describe.js";
import { noteEvent } from "../fairness.js";
import { play, muted, setMuted } from "../sound.js";
import { confirmDialog } from "../confirm.js";
import { noticeTurn } from "./attention.js";
import { TableChat } from "./chat.js";
import { applyUpdate } from "./protocol.js";

/** @typedef {import("./protocol.js").TableInfo} TableInfo */
/** @typedef {import("./protocol.js").RoundBreak} RoundBreak */
/** @typedef {import("./protocol.js").GameView} GameView */
/** @typedef {import("./protocol.js").GameEvent} GameEvent */
/** @typedef {import("./protocol.js").Action} Action */
/** @typedef {import("./protocol.js").ErrorInfo} ErrorInfo */
/** @typedef {import("./protocol.js").Reply} Reply */
/** @typedef {import("./protocol.js").Snapshot} Snapshot */
/** @typedef {import("./protocol.js").Update} Update */
/** @typedef {import("./protocol.js").ServerMessage} ServerMessage */

/**
 * @typedef {object} LogEntry  an event worth a line of the move log, and who played it
 * @property {GameEvent} ev
 * @property {string} by
 *
 * @typedef {{ event?: GameEvent, matchEnd?: GameEvent }} Summary
 *   the round (deal) summary shown, and the match's end once there is one
 * @typedef {{ matchId?: number, coins?: number }} Results  the match's replay and my coins
 * @typedef {"konkan" | "conquian"} GameName
 * @typedef {"connecting" | "online" | "reconnecting"} ConnStatus
 *
 * @typedef {((seat: number | null | undefined) => string) & { mine: (seat: number | null | undefined) => boolean, meld?: (id: number) => ({ owner: number, cards: string[] } | undefined) }} NameOf
 *   a seat's name as the reader sees it ("you" for my own); `mine` tells a phrase to say "you";
 *   `meld` finds a table meld, so that a line names it by its owner and cards (describe.js)
 *
 * @typedef {import("../../vendor/preact/preact.module.js").ComponentChildren} Drawn
 *   what a view returns: vnodes (view.js's `v`), strings, nodes, lists of them
 *
 * @typedef {object} GameModule  what each game's module (konkan.js, conquian.js) exports
 * @property {(ctrl: TableCtrl) => Drawn} render  the middle of the table: melds, piles, my hand, my moves
 * @property {(view: any, nameOf: NameOf) => Drawn} sheet  the score sheet
 * @property {(event: GameEvent, view: any, nameOf: NameOf) => Drawn} summary  a round's (deal's) summary
 */

export const REACTIONS = ["hello", "good_game", "well_played", "thanks", "oops", "hurry", "wow", "laugh"];
/** @type {Record<string, string>} */
export const REACTION_EMOJI = { hello: "👋", good_game: "🤝", well_played: "👏", thanks: "🙏", oops: "😅", hurry: "⏳", wow: "😮", laugh: "😂" };

/** Each game's module, fetched once a table of that game opens. @type {Record<GameName, () => Promise<GameModule>>} */
const GAMES = { konkan: () => import("../konkan.js"), conquian: () => import("../conquian.js") };

/** A seat's move the timer or a bot played ("timer" / "bot"), or null: shown and spoken with it. */
export const playedBy = (/** @type {LogEntry} */ { ev, by }) =>
  (ev.seat !== null && ev.seat !== undefined && (by === "timer" || by === "bot") ? by : null);

export class TableCtrl {
  /**
   * @param {number} tableId
   * @param {object} hooks
   * @param {() => void} hooks.onUser  the signed-in user changed: the header is drawn again
   * @param {() => void} hooks.redraw  draws the screen from this state (view.js)
   * @param {(text: string) => void} hooks.announce  a line for screen readers
   */
  constructor(tableId, { onUser, redraw, announce }) {
    this.tableId = tableId;
    this.onUser = onUser;
    this.redraw = redraw;
    this.announce = announce;
    /** @type {TableConnection | null} */ this.conn = null;

    // The table as the server last sent it.
    /** @type {TableInfo | null} */ this.info = null;
    /** @type {number | null} */ this.seat = null;  // my seat; null: I am watching
    /** @type {GameView | null} */ this.view = null;  // the game as my seat sees it
    /** @type {number | null} */ this.deadline = null;  // when the turn (or the break) ends, Unix seconds
    /** @type {RoundBreak | null} */ this.roundBreak = null;
    /** @type {ConnStatus} */ this.status = "connecting";
    /** @type {Action | null} */ this.hint = null;  // the move the server's bot suggested (a free table's hint)

    // The move log: kept as events, put in words when drawn (a language switch redraws them).
    /** @type {LogEntry[]} */ this.log = [];  // the last 40 lines
    this.logged = 0;  // lines logged since the page opened (the log's keys; what was spoken)
    /** @type {Record<number, LogEntry>} */ this.lastMove = {};  // seat → its last move, shown beside the seat
    this.timedOut = false;  // the timer just played for me: say so until my next move
    this.hintAskedAt = 0;  // when the last hint was asked (Date.now())
    /** @type {GameEvent[]} */ this.moved = [];  // the events since the last drawing: the cards they moved glide (motion.js)

    // The score sheet, the round summary and the match's end.
    this.sheetOpen = false;
    this.logOpen = false;  // the move log's sheet (view.js): a phone's way to the moves
    /** @type {Summary | null} */ this.summary = null;
    /** @type {GameEvent | null} */ this.matchEnd = null;  // the match_end event, once seen
    /** @type {Results | null} */ this.results = null;  // null: not asked yet
    /** @type {Summary | null} */ this.continued = null;  // the summary I pressed "continue" on
    /** @type {GameEvent | null} */ this.rematchAsked = null;  // the match end I asked a rematch at
    /** @type {import("../rating.js").RatingsMessage | null} */ this.ratingChanges = null;  // a rated match's, once sent

    // Reactions, the panels' open state, the errors.
    /** @type {Record<string, string>} */ this.reactions = {};  // a seat (or "u<user id>") → its reaction now
    this.reactionsOpen = false;
    this.watchersOpen = false;
    this.chat = new TableChat(this);  // the table's chat (chat.js): its messages, the panel, the muted
    this.lastError = "";  // the last refusal, in words: the line under the buttons
    this.busy = false;  // a command is on its way: a second one waits

    // What has been signalled already: the turn sound, the ten-second beep, the spoken line.
    /** @type {number | null} */ this.lastDeadline = null;
    /** @type {number | null} */ this.deadlineSpan = null;  // the seconds the deadline gave: the ring's full length
    /** @type {number | null} */ this.beeped = null;  // the deadline whose ten seconds were beeped
    this.wasMyTurn = false;
    this.announced = 0;  // `logged` when the last line was spoken

    /** @type {Record<string, any>} */ this.ui = {};  // the game module's own state: selection, staged melds, hand order
    /** @type {{ name: GameName | null, module: GameModule | null, loading: GameName | null }} the game's module */
    this.rules = { name: null, module: null, loading: null };

    /** @type {NameOf} */
    this.nameOf = Object.assign((/** @type {number | null | undefined} */ seat) => {
      if (seat === null || seat === undefined) return "";
      const s = this.info?.seats?.[seat];
      if (seat === this.seat) return t("table.you");
      if (s && s.user_id === null && s.bot) return t("table.bot_name", { n: seat + 1 });
      return s?.name || t("table.seat_n", { n: seat + 1 });
    }, {
      // A phrase about my own seat says "you".
      mine: (/** @type {number | null | undefined} */ seat) => this.seat !== null && seat === this.seat,
      meld: (/** @type {number} */ id) => /** @type {any} */ (this.view)?.melds?.find((/** @type {any} */ m) => m.id === id),
    });

    /** One handler per message type; `receive` redraws after each.
     * @type {Record<string, (payload: any, msg: ServerMessage) => void>} */
    this.handlers = {
      snapshot: (p) => this.applySnapshot(p),
      resume: (p) => {
        for (const missed of p.missed) this.addLog(missed.events, missed.by);
        this.applySnapshot(p.snapshot);
      },
      update: (/** @type {Update} */ p, msg) => {
        // An update that does not follow the last step (never expected on one socket):
        // its changes would apply to the wrong view, so ask for the table whole.
        if (this.info && msg.seq !== undefined && msg.seq !== this.info.seq + 1) {
          this.conn?.sendRaw({ type: "resync" });
          return;
        }
        if (p.by === "timer" && p.events.some((ev) => ev.seat === this.seat) && !this.timedOut) {
          toast(t("table.timed_out"), "info", 6000);
          play("timeout");
        }
        this.addLog(p.events, p.by);
        this.moved.push(...p.events);
        this.hint = null;  // a suggestion is for the table as it was
        this.view = applyUpdate(this.view, p);
        this.deadline = p.deadline;
        this.roundBreak = p.round_break || null;
        if (this.info && msg.seq !== undefined) this.info.seq = msg.seq;
      },
      table: (/** @type {TableInfo} */ p) => { this.info = p; },
      break: (p) => {
        // Between rounds: the summary stays up until everyone continued or time ran out.
        this.roundBreak = p.round_break;
        this.deadline = p.deadline;
        if (!p.round_break && this.summary && !this.summary.matchEnd) this.summary = null;
      },
      reaction: (p) => this.showReaction(p),
      chat: (p) => this.chat.add(p),
      chat_history: (p) => this.chat.history(p),
      hint: (p) => { this.hint = p.action; },
      reply: (/** @type {Reply} */ p) => {
        if (p.ok) this.lastError = "";
        else {
          if (p.snapshot) this.applySnapshot(p.snapshot);
          this.refused(p.error);
        }
      },
      error: (/** @type {ErrorInfo} */ p) => this.refused(p),
      // A rated match's rating changes, after its result was committed (rating.js draws them).
      ratings: (/** @type {import("../rating.js").RatingsMessage} */ p) => { this.ratingChanges = p; },
    };
  }

  // --- the server's messages -----------------------------------------------------------

  /** A message from the table's socket: its handler, then the screen drawn again. */
  receive(/** @type {ServerMessage} */ msg) {
    const handler = this.handlers[msg.type];
    if (!handler) return;  // pong, and types this page does not show
    handler(msg.payload, msg);
    this.redraw();
  }

  /** @param {Snapshot} snap */
  applySnapshot(snap) {
    // A match that starts (or starts again) comes as a snapshot: its hands were dealt.
    if (this.info && this.info.status !== "playing" && snap.table.status === "playing") this.moved.push({ type: "deal", seat: null });
    this.info = snap.table;
    this.seat = snap.seat;
    this.view = snap.view;
    this.deadline = snap.deadline;
    this.roundBreak = snap.round_break || null;
    // A new match at this table (a rematch) starts its move log afresh: the last
    // match's lines, and each seat's last move, are of a game that is over.
    if (this.matchEnd && snap.table.status === "playing" && !snap.view?.match_over) {
      this.log = [];
      this.lastMove = {};
      this.matchEnd = null;
    }
    // A new match at this table (a rematch) starts with no summary left open.
    if (snap.table.status === "playing" && !snap.view?.match_over && this.summary?.matchEnd) {
      this.summary = null;
      this.results = null;
    }
    if (snap.seat !== null) rememberTable(this.tableId);
  }

  /** @param {GameEvent[]} events @param {string} by */
  addLog(events, by) {
    for (const ev of events) {
      noteEvent(ev, this);
      const line = describeEvent(ev, this.nameOf);
      const bySeat = ev.seat !== null && ev.seat !== undefined;
      if (line) { this.log.push({ ev, by }); this.logged += 1; }
      if (line && bySeat) this.lastMove[/** @type {number} */ (ev.seat)] = { ev, by };
      if (ev.type === "deal" || ev.type === "round_end" || ev.type === "deal_end") this.lastMove = {};
      if (bySeat && ev.seat === this.seat && this.seat !== null) this.timedOut = by === "timer";
      if (ev.type === "round_end" || ev.type === "deal_end") this.summary = { event: ev };
      if (ev.type === "match_end") this.matchEnd = ev;
      if (ev.type === "match_end" && this.summary) this.summary.matchEnd = ev;
      else if (ev.type === "match_end") this.summary = { matchEnd: ev };
    }
    this.log = this.log.slice(-40);
  }

  showReaction(/** @type {{ seat: number | null, user_id: number | null, name: string, reaction: string }} */ p) {
    const key = String(p.seat ?? `u${p.user_id}`);
    this.reactions[key] = p.reaction;
    const who = p.seat === null ? p.name : this.nameOf(p.seat);
    toast(`${who}: ${REACTION_EMOJI[p.reaction] || ""} ${t(`react.${p.reaction}`)}`, "reaction", 3000);
    setTimeout(() => {
      if (this.reactions[key] === p.reaction) { delete this.reactions[key]; this.redraw(); }
    }, 3500);
  }

  /** A refusal in words: on the line under the buttons and in a toast (drawn by the caller). */
  refused(/** @type {ErrorInfo | ErrorInfo[] | undefined} */ error) {
    const text = errorText(error);
    this.lastError = text;
    toast(text, "error", 6000);
  }

  /** A refusal from outside a message (a REST call, a lost connection): said and drawn. */
  showError(/** @type {any} */ error) {
    this.refused(error);
    this.redraw();
  }

  // --- the connection ------------------------------------------------------------------

  /** Sign in (a guest if need be), then open the table's socket. */
  async start() {
    try { await ensureUser(); this.onUser(); } catch (error) { this.showError(error.detail); return; }
    this.connect();
  }

  connect() {
    if (this.conn) this.conn.close();
    this.conn = new TableConnection(this.tableId, session.token, {
      message: (msg) => this.receive(msg),
      status: (state) => { this.status = state; this.redraw(); },
      fatal: (code) => {
        toast(t(code === 4401 ? "err.bad_token" : "err.no_such_table"), "error");
        if (code === 4401) { session.clear(); this.onUser(); }
        sessionStorage.removeItem("sahrat.table");
        location.hash = "#/";
      },
    });
    /** @type {any} */ (window).sahratConn = this.conn;  // for debugging and the browser tests' "drop the connection"
    this.conn.open();
  }

  close() { this.conn?.close(); }

  // --- my moves ------------------------------------------------------------------------

  /** Send an engine action; one at a time. Resolves with the reply ({ok, error?}). */
  async send(/** @type {Action} */ action) {
    const conn = this.conn;
    if (this.busy || !conn) return { ok: false };
    this.busy = true;
    try {
      const reply = await conn.command(action);
      if (!reply.ok && reply.error?.code === "disconnected") this.showError(reply.error);
      return reply;
    } finally { this.busy = false; }
  }

  /** At a free table the server's bot may suggest a move (never where coins are at stake). */
  mayAskHint() { return !this.info?.coin_table; }
  askHint() { this.hintAskedAt = Date.now(); this.conn?.sendRaw({ type: "hint" }); }

  react(/** @type {string} */ reaction) {
    this.conn?.react(reaction);
    this.reactionsOpen = false;
    this.redraw();
  }

  /** A question with OK / Cancel; `onYes` runs on OK. */
  confirm(/** @type {string} */ question, /** @type {() => void} */ onYes) { confirmDialog(question, onYes); }

  toggleMute() { setMuted(!muted()); this.redraw(); }

  // --- the waiting room and leaving ----------------------------------------------------

  async takeSeat() {
    try { await ensureUser(); await api("POST", `/api/tables/${this.tableId}/join`, {}); this.connect(); }
    catch (error) { this.showError(error.detail); }
  }

  async startWithBots() {
    try { await api("POST", `/api/tables/${this.tableId}/start`, { bots: true }); }
    catch (error) { this.showError(error.detail); }
  }

  async leave() {
    try { await api("POST", `/api/tables/${this.tableId}/leave`); location.hash = "#/"; }
    catch (error) { this.showError(error.detail); }
  }

  /** Only bots play with me: leaving ends the match, for nobody (docs/protocol.md). */
  aloneWithBots() {
    return (this.info?.seats || []).every((s) => s.seat === this.seat || s.user_id === null || s.left);
  }

  leaveMatch() {
    // A rated match's leaver is last in it and barred from rated play for a while
    // (docs/rating.md), even alone with bots: say so before, not after.
    const key = this.info?.rated ? "table.leave_rated_confirm"
      : this.aloneWithBots() ? "table.leave_bot_game_confirm" : "table.leave_match_confirm";
    this.confirm(t(key), () => { this.leave(); });
  }

  // --- the sheet, the summary, the match's end -----------------------------------------

  openSheet() { this.sheetOpen = true; this.redraw(); }

  closeSheet() {
    if (!this.sheetOpen) return;
    this.sheetOpen = false;
    this.redraw();
  }

  /** The summary closed (Escape, ✕, the backdrop): reading it was my "continue". */
  closeSummary() {
    if (!this.summary) return;
    if (this.readingSummary()) this.continuePlay();
    this.summary = null;
    this.redraw();
  }

  /** The break waits for me to read the summary. */
  readingSummary() {
    const pause = this.roundBreak;
    return !!pause && this.seat !== null && pause.waiting.includes(this.seat);
  }

  continuePlay() {
    this.conn?.sendRaw({ type: "continue" });
    this.continued = this.summary;
    this.redraw();
  }

  /** The match's results again, after their summary was closed. */
  showResults() {
    this.summary = { matchEnd: this.matchEnd || { type: "match_end", winner: this.view?.winner ?? null } };
    this.redraw();
  }

  askRematch() {
    this.conn?.sendRaw({ type: "rematch" });
    this.rematchAsked = this.matchEnd;
    this.redraw();
  }

  /** The match's replay and the coins it moved for me (asked once, at its end). */
  async loadResults() {
    /** @type {Results} */
    const results = {};
    this.results = results;
    try {
      /** @type {{ id: number }[]} */
      const matches = await api("GET", `/api/tables/${this.tableId}/matches`);
      const newest = matches.reduce((/** @type {{ id: number } | null} */ a, b) => (b.id > (a?.id ?? -1) ? b : a), null);
      if (newest) results.matchId = newest.id;
      if (this.seat !== null && session.token) {
        // The coins this match moved for me: its payout or earnings, less its stake.
        const ledger = await api("GET", "/api/me/ledger");
        let coins = 0, seen = false;
        for (const entry of ledger.entries.filter((/** @type {any} */ e) => e.table_id === this.tableId)) {
          if (entry.reason === "stake") { if (seen || coins) coins += entry.amount; seen = true; break; }
          if (entry.reason === "payout" || entry.reason === "earnings") { coins += entry.amount; seen = true; } else break;
        }
        if (seen) results.coins = coins;
      }
    } catch { /* the link and coins are extras */ }
    this.redraw();
  }

  // --- the game's module ---------------------------------------------------------------

  /** @returns {GameName} */
  get game() { return this.info?.game === "conquian" ? "conquian" : "konkan"; }

  /** The game's module once loaded; null until then (the page is drawn again when it comes). */
  gameModule() {
    const name = this.game;
    const rules = this.rules;
    if (rules.name === name) return rules.module;
    if (rules.loading !== name) {
      rules.loading = name;
      GAMES[name]().then((module) => {
        if (rules.loading !== name) return;
        Object.assign(rules, { name, module, loading: null });
        this.redraw();
      }, (error) => this.showError(String(error)));
    }
    return null;
  }

  // --- the clock and the signals -------------------------------------------------------

  /** Whole seconds to the deadline, or null without one. */
  secondsLeft() {
    return this.deadline ? Math.max(0, Math.ceil(this.deadline - Date.now() / 1000)) : null;
  }

  myTurnNow() {
    const vw = this.view;
    return !!(vw && this.seat !== null && vw.turn === this.seat && !vw.match_over && !this.roundBreak);
  }

  /** Ten seconds left of my turn: one beep per deadline. */
  warnLow(/** @type {number | null} */ left) {
    if (this.myTurnNow() && left === 10 && this.beeped !== this.deadline) { this.beeped = this.deadline; play("low"); }
  }

  /** After each drawing: the turn sound, the tab title and a spoken line for screen readers. */
  signal() {
    if (this.deadline && this.deadline !== this.lastDeadline) {
      this.lastDeadline = this.deadline;
      this.deadlineSpan = Math.max(1, this.deadline - Date.now() / 1000);
    }
    const mine = this.myTurnNow();
    if (mine && !this.wasMyTurn) { play("turn"); this.announce(t("table.your_turn_title")); }
    else if (this.logged && this.logged !== this.announced) this.announce(this.spoken(this.log[this.log.length - 1]));
    this.announced = this.logged;
    this.wasMyTurn = mine;
    noticeTurn({ mine, tableId: this.tableId, game: this.game });  // a hidden tab's title, the bell (attention.js)
  }

  /** A log line as a screen reader says it: its words, and who played it for the seat. */
  spoken(/** @type {LogEntry} */ entry) {
    const by = playedBy(entry);
    return describeEvent(entry.ev, this.nameOf, true) + (by ? ` (${t(`table.by_${by}`)})` : "");
  }
}
