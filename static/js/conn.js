// One WebSocket to a table, kept alive: reconnects with back-off after a drop
// and asks for what it missed with ?since=<last seq>. The last seq and table id
// live in sessionStorage so a page reload carries on from the same place.
// Each socket opens with a one-time ticket fetched with the bearer token just
// before: the token itself never goes in a URL (URLs end up in logs).

const BACKOFF = [500, 1000, 2000, 4000, 8000, 10000];

export class TableConnection {
  constructor(tableId, token, handlers) {
    this.tableId = tableId;
    this.token = token;
    this.handlers = handlers;  // {message(msg), status(state), fatal(code)}
    this.pending = new Map();  // cid → resolve
    this.attempt = 0;
    this.closedByUs = false;
    this.counter = 0;
    sessionStorage.setItem("sahrat.table", String(tableId));
  }

  get seq() {
    const kept = sessionStorage.getItem(`sahrat.seq.${this.tableId}`);
    return kept === null ? null : Number(kept);
  }
  set seq(value) { sessionStorage.setItem(`sahrat.seq.${this.tableId}`, String(value)); }

  /** A one-time ticket for this table's socket; null when worth retrying later. */
  async ticket() {
    let res;
    try {
      res = await fetch(`/api/tables/${this.tableId}/ticket`, {
        method: "POST",
        headers: { Accept: "application/json", Authorization: `Bearer ${this.token}` },
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
    this.handlers.status(this.attempt ? "reconnecting" : "connecting");
    const ticket = await this.ticket();
    if (this.closedByUs) return;
    if (ticket?.fatal) { this.handlers.fatal(ticket.fatal); return; }
    if (ticket === null) { this.retry(); return; }
    const proto = location.protocol === "https:" ? "wss" : "ws";
    let url = `${proto}://${location.host}/ws/tables/${this.tableId}?ticket=${encodeURIComponent(ticket)}`;
    if (this.seq !== null) url += `&since=${this.seq}`;
    const ws = new WebSocket(url);
    this.ws = ws;
    ws.onopen = () => {
      this.attempt = 0;
      this.handlers.status("online");
      clearInterval(this.pinger);
      // Pings keep idle proxies from closing the socket.
      this.pinger = setInterval(() => this.sendRaw({ type: "ping" }), 25000);
    };
    ws.onmessage = (event) => this.receive(JSON.parse(event.data));
    ws.onclose = (event) => {
      clearInterval(this.pinger);
      if (this.ws !== ws || this.closedByUs) return;
      // Commands in flight will never get their reply on this socket.
      for (const resolve of this.pending.values()) resolve({ ok: false, error: { code: "disconnected" } });
      this.pending.clear();
      if (event.code === 4401 || event.code === 4404) { this.handlers.fatal(event.code); return; }
      this.retry();
    };
  }

  retry() {
    this.handlers.status("reconnecting");
    const delay = BACKOFF[Math.min(this.attempt, BACKOFF.length - 1)];
    this.attempt += 1;
    this.timer = setTimeout(() => this.open(), delay);
  }

  receive(msg) {
    if (msg.type === "update" || msg.type === "snapshot" || msg.type === "resume") this.seq = msg.seq;
    if (msg.type === "reply" && msg.payload.snapshot) this.seq = msg.payload.snapshot.table.seq;
    this.handlers.message(msg);
    if (msg.type === "reply") {
      const resolve = this.pending.get(msg.payload.cid);
      this.pending.delete(msg.payload.cid);
      if (resolve) resolve(msg.payload);
    }
  }

  sendRaw(data) {
    if (this.ws?.readyState === WebSocket.OPEN) { this.ws.send(JSON.stringify(data)); return true; }
    return false;
  }

  /** Send an engine action; resolves with the reply payload {ok, error?}. */
  command(action) {
    const cid = `c${Date.now().toString(36)}-${++this.counter}`;
    return new Promise((resolve) => {
      if (!this.sendRaw({ type: "command", cid, seq: this.seq ?? 0, action })) {
        resolve({ ok: false, error: { code: "disconnected" } });
        return;
      }
      this.pending.set(cid, resolve);
    });
  }

  react(reaction) { this.sendRaw({ type: "react", reaction }); }

  /** Simulate a network drop (used by the reconnect test and handy when debugging). */
  drop() { this.ws?.close(); }

  close() {
    this.closedByUs = true;
    clearTimeout(this.timer);
    clearInterval(this.pinger);
    this.ws?.close();
  }
}
