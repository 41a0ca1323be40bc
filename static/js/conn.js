// One WebSocket to a table, kept alive: reconnects with back-off after a drop
// and asks for what it missed with ?since=<last seq>. The last seq and table id
// live in sessionStorage so a page reload carries on from the same place.
// Each socket opens with a one-time ticket fetched with the bearer token just
// before: the token itself never goes in a URL (URLs end up in logs).
//
// A socket can stop answering without closing (a phone that lost its network, a
// sleeping laptop, a proxy that went away): the browser's `close` may come minutes
// later. So the page pings every few seconds and expects to hear from the server
// (anything: a pong, an update) within a few seconds of a ping, and each command's
// reply within as long; when either does not come, the socket is given up at once
// (the page says "reconnecting" and takes no moves) and a new one resumes with
// ?since. Commands without their reply are sent again on the new socket with the
// same cid: the server answers a duplicate with its first answer (docs/protocol.md),
// so a move is never lost nor played twice.


const BACKOFF = [500, 1000, 2000, 4000, 8000, 10000];
export const PING_EVERY = 5000;  // ms between pings on a quiet socket
export const ANSWER_WITHIN = 4000;  // ms a ping or a command may wait for the server
const WATCH_EVERY = 500;  // ms between checks that the socket still answers
const OPEN_WITHIN = 8000;  // ms from asking a ticket to the socket's first message

/** @typedef {"connecting" | "online" | "reconnecting"} ConnState */
/**
 * @typedef {object} Handlers
 * @property {(msg: any) => void} message
 * @property {(state: ConnState) => void} status
 * @property {(code: number) => void} fatal
 *
 * @typedef {object} Pending  a command on its way: its reply's resolve and what was sent
 * @property {(reply: any) => void} resolve
 * @property {Record<string, any>} data
 * @property {number} sentAt  when it was last sent (Date.now())
 */

export class TableConnection {
  /** @param {number} tableId @param {string | null} token @param {Handlers} handlers */
  constructor(tableId, token, handlers) {
    this.tableId = tableId;
    this.token = token;
    this.handlers = handlers;
    /** @type {Map<string, Pending>} */ this.pending = new Map();  // cid → its command
    this.attempt = 0;
    this.closedByUs = false;
    this.counter = 0;
    /** @type {WebSocket | null} */ this.ws = null;
    /** @type {ReturnType<typeof setTimeout> | undefined} */ this.timer = undefined;
    /** @type {ReturnType<typeof setInterval> | undefined} */ this.watcher = undefined;
    this.heardAt = 0;  // when the server last said anything on this socket
    this.pingedAt = 0;  // when the last ping went out
    /** @type {ConnState} */ this.state = "connecting";
    sessionStorage.setItem("sahrat.table", String(tableId));
  }

  /** @param {ConnState} state */
  setState(state) {
    this.state = state;
    this.handlers.status(state);
  }

  /** @returns {number | null} */
  get seq() {
    const kept = sessionStorage.getItem(`sahrat.seq.${this.tableId}`);
    return kept === null ? null : Number(kept);
  }
  set seq(/** @type {number | null} */ value) { sessionStorage.setItem(`sahrat.seq.${this.tableId}`, String(value)); }

  /** A one-time ticket for this table's socket; null when worth retrying later.
   * @returns {Promise<string | { fatal: number } | null>} */
  async ticket() {
    let res;
    try {
      res = await fetch(`/api/tables/${this.tableId}/ticket`, {
        method: "POST",
        headers: { Accept: "application/json", Authorization: `Bearer ${this.token}` },
        // A network that swallows requests would leave the page waiting for ever.
        signal: AbortSignal.timeout(OPEN_WITHIN),
      });
    } catch {
      return null;
    }
    if (res.status === 401) return { fatal: 4401 };
    if (res.status === 404 || res.status === 422) return { fatal: 4404 };
    if (!res.ok) return null;  // busy (429, 503): try again after the back-off
    return (await res.json()).ticket;
  }

  async open() {
    this.setState(this.attempt ? "reconnecting" : "connecting");
    const ticket = await this.ticket();
    if (this.closedByUs) return;
    if (ticket !== null && typeof ticket === "object") { this.fatal(ticket.fatal); return; }
    if (ticket === null) { this.retry(); return; }
    const proto = location.protocol === "https:" ? "wss" : "ws";
    let url = `${proto}://${location.host}/ws/tables/${this.tableId}?ticket=${encodeURIComponent(ticket)}`;
    if (this.seq !== null) url += `&since=${this.seq}`;
    const ws = new WebSocket(url);
    this.ws = ws;
    // A handshake that never completes (or a socket that never speaks) is given up too.
    setTimeout(() => { if (this.ws === ws && this.state !== "online") this.giveUp(); }, OPEN_WITHIN);
    ws.onopen = () => {
      if (this.ws !== ws) return;
      this.heardAt = this.pingedAt = Date.now();
      // What the last socket left unanswered goes again, with its cid (a duplicate
      // gets its first answer): the reply comes on this socket.
      for (const command of this.pending.values()) { command.sentAt = Date.now(); this.sendRaw(command.data); }
      this.watch();
    };
    ws.onmessage = (event) => {
      if (this.ws !== ws) return;
      this.heard();
      this.receive(JSON.parse(event.data));
    };
    ws.onclose = (event) => {
      if (this.ws !== ws || this.closedByUs) return;
      this.ws = null;
      clearInterval(this.watcher);
      if (event.code === 4401 || event.code === 4404) { this.fatal(event.code); return; }
      this.retry();
    };
  }

  /** The server spoke: the socket answers (the first word after opening makes it online). */
  heard() {
    this.heardAt = Date.now();
    if (this.state !== "online") { this.attempt = 0; this.setState("online"); }
  }

  /** Every half second: a ping on a quiet socket, and the socket given up when a ping or
   *  a command has waited too long for the server. */
  watch() {
    clearInterval(this.watcher);
    this.watcher = setInterval(() => {
      const now = Date.now();
      if (this.stalled(now)) { this.giveUp(); return; }
      if (now - Math.max(this.pingedAt, this.heardAt) >= PING_EVERY && this.sendRaw({ type: "ping" })) this.pingedAt = now;
    }, WATCH_EVERY);
  }

  /** Whether the server has left a ping or a command unanswered for too long. */
  stalled(/** @type {number} */ now) {
    if (this.pingedAt > this.heardAt && now - this.pingedAt > ANSWER_WITHIN) return true;
    for (const command of this.pending.values()) if (now - command.sentAt > ANSWER_WITHIN) return true;
    return false;
  }

  /** This socket no longer answers: said at once, and a new one opened (with ?since).
   *  Its `close` may come much later, or never: it is not waited for. */
  giveUp() {
    const ws = this.ws;
    this.ws = null;
    clearInterval(this.watcher);
    if (ws) {
      ws.onopen = ws.onmessage = ws.onclose = null;
      try { ws.close(); } catch { /* already closing */ }
    }
    this.retry();
  }

  /** The table cannot be opened: commands on their way will never be answered. */
  fatal(/** @type {number} */ code) {
    for (const command of this.pending.values()) command.resolve({ ok: false, error: { code: "disconnected" } });
    this.pending.clear();
    this.handlers.fatal(code);
  }

  retry() {
    if (this.closedByUs) return;  // the page left the table: nothing to reopen
    this.setState("reconnecting");
    const delay = BACKOFF[Math.min(this.attempt, BACKOFF.length - 1)];
    this.attempt += 1;
    this.timer = setTimeout(() => this.open(), delay);
  }

  receive(/** @type {any} */ msg) {
    if (msg.type === "update" || msg.type === "snapshot" || msg.type === "resume") this.seq = msg.seq;
    if (msg.type === "reply" && msg.payload.snapshot) this.seq = msg.payload.snapshot.table.seq;
    this.handlers.message(msg);
    if (msg.type === "reply") {
      const command = this.pending.get(msg.payload.cid);
      this.pending.delete(msg.payload.cid);
      if (command) command.resolve(msg.payload);
    }
  }

  /** @param {Record<string, any>} data @returns {boolean} whether it went out */
  sendRaw(data) {
    if (this.ws?.readyState === WebSocket.OPEN) { this.ws.send(JSON.stringify(data)); return true; }
    return false;
  }

  /** Send an engine action; resolves with the reply payload {ok, error?}. Refused at once
   *  while the socket is not known to answer (the page takes no moves then).
   *  @param {Record<string, any>} action @returns {Promise<any>} */
  command(action) {
    const cid = `c${Date.now().toString(36)}-${++this.counter}`;
    const data = { type: "command", cid, seq: this.seq ?? 0, action };
    return new Promise((resolve) => {
      if (this.state !== "online" || !this.sendRaw(data)) {
        resolve({ ok: false, error: { code: "disconnected" } });
        return;
      }
      this.pending.set(cid, { resolve, data, sentAt: Date.now() });
    });
  }

  react(/** @type {string} */ reaction) { this.sendRaw({ type: "react", reaction }); }

  /** Simulate a network drop (used by the reconnect test and handy when debugging). */
  drop() { this.ws?.close(); }

  close() {
    this.closedByUs = true;
    clearTimeout(this.timer);
    clearInterval(this.watcher);
    this.ws?.close();
  }
}
