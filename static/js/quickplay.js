// Quick play: one tap from the first visit to a dealt hand — a guest account if
// needed, a free Konkan table with the default options, bots in the other seats.
// Rated quick play: one tap queues me for a rated game (POST /api/queue) with the game,
// players and speed last chosen (Konkan 51, two players, normal speed until then); while
// I wait the box shows the time waited and a cancel button, and asks GET /api/queue
// every second (the server drops an entry it stops hearing from) until I am seated,
// then opens the table. Leaving the lobby or the page cancels the wait.
import { h, mount, toast } from "./dom.js";
import { t, errorText } from "./i18n.js";
import { api, session, ensureUser, rememberTable } from "./api.js";
import { clock, timeLeftWords, refreshMine, myRatings, poolOf, ratingBadge, onMine } from "./rating.js";

/** @typedef {{ game: "konkan" | "conquian", threshold: number, players: number, speed: string }} Choice */

const SPEEDS = ["fast", "normal", "slow"];
const POLL_MS = 1000;

/** The rated game last chosen (kept in localStorage), or the defaults. @returns {Choice} */
function choice() {
  /** @type {Choice} */
  const fallback = { game: "konkan", threshold: 51, players: 2, speed: "normal" };
  try {
    const kept = JSON.parse(localStorage.getItem("sahrat.rated") || "null");
    if (!kept) return fallback;
    return {
      game: kept.game === "conquian" ? "conquian" : "konkan",
      threshold: kept.threshold === 71 ? 71 : 51,
      players: [2, 3, 4].includes(kept.players) ? kept.players : 2,
      speed: SPEEDS.includes(kept.speed) ? kept.speed : "normal",
    };
  } catch { return fallback; }
}
const keep = (/** @type {Choice} */ c) => localStorage.setItem("sahrat.rated", JSON.stringify(c));

/** The body of POST /api/queue for a choice (Conquian is always two players). */
function requestOf(/** @type {Choice} */ c) {
  return c.game === "conquian" ? { game: "conquian", speed: c.speed } : { game: "konkan", threshold: c.threshold, players: c.players, speed: c.speed };
}

/** "Konkan 51 · 2 players · normal" */
const choiceWords = (/** @type {Choice} */ c) => [
  t(`rating.pool.${poolOf(c.game, c)}`),
  c.game === "konkan" ? t("queue.players_n", { n: c.players }) : null,
  t(`queue.speed_${c.speed}`),
].filter(Boolean).join(" · ");

// The wait, one per page (the lobby is drawn again on a language switch or a sign-in:
// the wait goes on, and the new box shows it).
const queue = {
  /** @type {"idle" | "joining" | "waiting"} */ state: "idle",
  waited: 0,  // seconds waited, as the server last said
  since: 0,  // when it said so (performance.now())
  /** @type {ReturnType<typeof setTimeout> | null} */ poll: null,
  /** @type {ReturnType<typeof setInterval> | null} */ ticker: null,
  cooldownUntil: 0,  // Date.now() when the cool-down ends (0: none known)
  /** @type {(() => void) | null} */ draw: null,  // the box shown now
  /** @type {(() => void) | null} */ onUser: null,
};

const redraw = () => queue.draw?.();
let optionsOpen = false;  // the choices stay open while they are changed (each change redraws)

function stopTimers() {
  if (queue.poll) clearTimeout(queue.poll);
  if (queue.ticker) clearInterval(queue.ticker);
  queue.poll = null;
  queue.ticker = null;
}

function waiting(/** @type {any} */ answer) {
  queue.state = "waiting";
  queue.waited = Number(answer?.waited_seconds) || 0;
  queue.since = performance.now();
  if (!queue.ticker) queue.ticker = setInterval(tickWait, 1000);
  schedulePoll();
  redraw();
}

function schedulePoll() {
  if (queue.poll) clearTimeout(queue.poll);
  queue.poll = setTimeout(pollQueue, POLL_MS);
}

/** The time waited, once a second between two answers. */
function tickWait() {
  const el = document.getElementById("queue-waited");
  if (el) el.textContent = clock(queue.waited + (performance.now() - queue.since) / 1000);
}

/** GET /api/queue: where my wait is (and, to the server, that I am still here). */
async function pollQueue() {
  queue.poll = null;
  if (queue.state !== "waiting") return;
  try {
    const answer = await api("GET", "/api/queue");
    if (queue.state !== "waiting") return;  // cancelled meanwhile
    if (answer?.status === "seated" && answer.table_id) { seated(answer.table_id); return; }
    if (answer?.status === "waiting") { waiting(answer); return; }
    // Not waiting any more (dropped, or cancelled from another page).
    stopTimers();
    queue.state = "idle";
    toast(t("queue.dropped"), "info");
    redraw();
  } catch (error) {
    if (queue.state !== "waiting") return;
    if (error.status === 401) { stopTimers(); queue.state = "idle"; redraw(); return; }
    schedulePoll();  // a lost answer: the next one says
  }
}

function seated(/** @type {number} */ tableId) {
  stopTimers();
  queue.state = "idle";
  rememberTable(tableId);
  location.hash = `#/t/${tableId}`;
}

/** Queue me for `body` (POST /api/queue); a cool-down is shown with its time left. */
async function join(/** @type {Record<string, any>} */ body) {
  if (queue.state !== "idle") return;
  queue.state = "joining";
  redraw();
  try {
    await ensureUser(); queue.onUser?.();
    const answer = await api("POST", "/api/queue", body);
    if (queue.state !== "joining") { cancelQueue(true, true); return; }  // cancelled (the lobby left) meanwhile
    if (answer?.status === "seated" && answer.table_id) { seated(answer.table_id); return; }
    waiting(answer);
  } catch (error) {
    if (queue.state !== "joining") return;
    queue.state = "idle";
    if (error.detail?.code === "rated_cooldown") {
      let left = Number(error.detail.seconds_left);
      if (!(left > 0)) left = Number((await refreshMine(true))?.cooldown?.seconds_left) || 0;
      queue.cooldownUntil = Date.now() + left * 1000;
      toast(t("queue.cooldown", { left: timeLeftWords(left) }), "error", 6000);
    } else toast(errorText(error.detail), "error");
    redraw();
    // Still seated in the rated match the queue gave me: back to it.
    if (error.detail?.code === "queue_in_match") {
      const where = await api("GET", "/api/queue").catch(() => null);
      if (where?.status === "seated" && where.table_id && queue.state === "idle") seated(where.table_id);
    }
  }
}

/** Stop waiting: DELETE /api/queue. `leaving`: the page or the lobby is going away, so
 * the request must outlive it (keepalive) and nothing is drawn. */
export function cancelQueue(leaving = false, anyway = false) {
  if (queue.state !== "waiting" && queue.state !== "joining" && !anyway) return;
  stopTimers();
  queue.state = "idle";
  const token = session.token;
  if (leaving) {
    fetch("/api/queue", { method: "DELETE", keepalive: true, headers: token ? { Authorization: `Bearer ${token}` } : {} }).catch(() => {});
    return;
  }
  api("DELETE", "/api/queue").catch((error) => {
    // The table is being formed this moment: it cannot be left now, so it is opened
    // when the next poll says where (leaving it then is the table's own "leave").
    if (error.detail?.code === "queue_forming" && queue.state === "idle") {
      toast(errorText(error.detail), "info");
      waiting({ waited_seconds: queue.waited });
    }
  });
  redraw();
}

// Closing the tab, reloading or leaving the site cancels the wait (the server would drop
// it after SAHRAT_QUEUE_STALE_SECONDS without heartbeats anyway).
window.addEventListener("pagehide", () => cancelQueue(true));
// A page kept whole by the browser (back/forward) comes back not waiting: drawn so.
window.addEventListener("pageshow", (event) => { if (event.persisted) redraw(); });
// My rating and cool-down (GET /api/me) come after the box is drawn: drawn again then.
onMine(() => { if (queue.state === "idle") redraw(); });

/** The seconds of cool-down left, from the lobby's /api/me or the last refusal. */
function cooldownLeft() {
  const my = myRatings();
  const fromMe = my?.cooldown ? (my.at + my.cooldown.seconds_left * 1000) : 0;
  const until = Math.max(queue.cooldownUntil, fromMe);
  return Math.max(0, (until - Date.now()) / 1000);
}

/** The rated part of the quick-play box: the one-tap button and its choices, or the wait. */
function ratedPart() {
  const slot = h("div.rated-quick", { id: "rated-quick" });
  let coolTimer = /** @type {ReturnType<typeof setTimeout> | null} */ (null);
  function draw() {
    if (coolTimer) { clearTimeout(coolTimer); coolTimer = null; }
    const c = choice();
    if (queue.state === "waiting" || queue.state === "joining") {
      mount(slot, h("div.queue-wait", { id: "queue-wait", dataset: { state: queue.state } },
        h("span.spinner", { "aria-hidden": "true" }),
        h("div.queue-text",
          h("div.queue-line",
            // Said once when it changes; the clock is a timer (not read out each second).
            h("strong", { role: "status" }, t(queue.state === "joining" ? "queue.joining" : "queue.waiting")),
            h("span.queue-waited", { id: "queue-waited", dir: "ltr", role: "timer", title: t("queue.waited") },
              clock(queue.waited + (queue.state === "waiting" ? (performance.now() - queue.since) / 1000 : 0)))),
          h("span.muted", choiceWords(c))),
        h("button", { type: "button", id: "queue-cancel", onclick: () => cancelQueue() }, t("queue.cancel"))));
      return;
    }
    const left = cooldownLeft();
    const mine = myRatings()?.ratings?.[poolOf(c.game, c)];
    const button = h("button.primary.big.rated", {
      type: "button", id: "rated-play", disabled: left > 0 ? true : undefined,
      onclick: () => join(requestOf(choice())),
    }, h("span", "★ ", t("queue.play_rated")),
    mine ? ratingBadge(h, mine.rating, mine.provisional) : null,
    h("span.rated-choice", choiceWords(c)));
    const select = (/** @type {string} */ name, /** @type {[string, string][]} */ options, /** @type {string} */ value, /** @type {(v: string) => void} */ set) =>
      h("label", t(`queue.${name}`), h("select", {
        id: `rated-${name}`, name,
        onchange: (/** @type {Event} */ e) => {
          set(/** @type {HTMLSelectElement} */ (e.target).value);
          keep(c);
          draw();  // the button says the new choice (and Conquian has no players to choose)
          document.getElementById(`rated-${name}`)?.focus();
        },
      }, options.map(([v, text]) => h("option", { value: v, selected: v === value ? true : undefined }, text))));
    const gameValue = c.game === "conquian" ? "conquian" : `konkan${c.threshold}`;
    mount(slot,
      button,
      left > 0 ? h("p.cooldown", { id: "queue-cooldown", role: "status" }, t("queue.cooldown", { left: timeLeftWords(left) })) : null,
      h("details.rated-options", { id: "rated-options", open: optionsOpen ? true : undefined, ontoggle: (/** @type {Event} */ e) => { optionsOpen = /** @type {HTMLDetailsElement} */ (e.target).open; } },
        h("summary", t("queue.change")),
        h("div.row",
          select("game", [["konkan51", t("rating.pool.konkan51")], ["konkan71", t("rating.pool.konkan71")], ["conquian", t("rating.pool.conquian")]], gameValue, (v) => {
            c.game = v === "conquian" ? "conquian" : "konkan";
            c.threshold = v === "konkan71" ? 71 : 51;
          }),
          c.game === "konkan" ? select("players", [["2", "2"], ["3", "3"], ["4", "4"]], String(c.players), (v) => { c.players = Number(v); }) : null,
          select("speed", SPEEDS.map((s) => [s, t(`queue.speed_${s}`)]), c.speed, (v) => { c.speed = v; })),
        h("p.muted", t("queue.help"))));
    // The cool-down's words count down a minute at a time; the button opens when it ends.
    if (left > 0) coolTimer = setTimeout(() => { if (slot.isConnected) draw(); }, Math.min(left * 1000, 30_000) + 50);
  }
  queue.draw = draw;
  draw();
  return slot;
}

/** The lobby's quick-play box: free play with bots, and rated play. */
export function quickPlayBox(/** @type {() => void} */ onUser) {
  queue.onUser = onUser;
  const button = h("button.primary.big", {
    type: "button", id: "quick-play",
    onclick: async () => {
      button.disabled = true;
      try {
        await ensureUser(); onUser();
        const table = await api("POST", "/api/tables", { game: "konkan", options: { players: 4 }, private: false });
        rememberTable(table.id);
        await api("POST", `/api/tables/${table.id}/start`, { bots: true });
        location.hash = `#/t/${table.id}`;
      } catch (error) {
        toast(errorText(error.detail), "error");
        button.disabled = false;
      }
    },
  }, "▶ ", t("lobby.quick_play"));
  const rated = ratedPart();
  // "Play another rated game" at a rated table's end came back here to queue at once.
  const again = sessionStorage.getItem("sahrat.queue.again");
  if (again) {
    sessionStorage.removeItem("sahrat.queue.again");
    try { join(JSON.parse(again)); } catch { /* a malformed request: the button is there */ }
  }
  return h("section.card-box.quick", { id: "quick" },
    button,
    h("p.muted", t("lobby.quick_play_help"), " ", h("a", { href: "#create-table" }, t("lobby.quick_play_form"))),
    rated);
}

/** The lobby was left (another screen): a wait ends with it, unless it just seated me. */
export function leaveLobby() { cancelQueue(true); queue.draw = null; }
