// Ratings: one per game pool (docs/rating.md), shown as one number with "?" after it
// while it is provisional. This module fetches them (my own from /api/me, a board from
// /api/ratings, a profile from /api/users/<id>/ratings), draws the number wherever it is
// shown (the header, a seat at the table, the board, a profile), draws a profile's
// history as a hand-written SVG chart, and the rated match's end: every seat's change
// and "play another rated game". It draws with the `make` it is given: dom.js's `h`
// (elements) in the lobby and the header, view.js's `v` (vnodes) at the table, so the
// lobby never loads Preact.
import { h, mount } from "./dom.js";
import { t, getLang, errorText } from "./i18n.js";
import { api, session } from "./api.js";
import { avatar } from "./avatar.js";

/** @typedef {"konkan51" | "konkan71" | "conquian"} Pool */
/** @typedef {(tag: string, attrs?: any, ...children: any[]) => any} Make  dom.js's `h` or view.js's `v` */
/** @typedef {{ value: number, provisional: boolean }} SeatRating  a seat's at a rated table */
/** @typedef {{ rating: number, provisional: boolean, games: number }} PoolRating  one of /api/me's */
/** @typedef {{ seconds_left: number, until?: string }} Cooldown */
/** @typedef {{ ratings: Record<string, PoolRating>, cooldown: Cooldown | null, at: number }} Mine */
/** @typedef {{ seat: number, user_id: number | null, before: number, after: number, provisional: boolean, unrated?: "short" | "repeat" | "no_opponent" | null }} RatingChange  unrated: why it did not move (docs/rating.md) */
/** @typedef {{ pool: string, changes: RatingChange[] }} RatingsMessage  the table's `ratings` message */
/** @typedef {{ match_id: number | null, at: string, rating: number, provisional: boolean }} HistoryPoint */
/** @typedef {{ pool: string, rating: number, provisional: boolean, games: number, history: HistoryPoint[] }} ProfilePool */

/** @type {Pool[]} */
export const POOLS = ["konkan51", "konkan71", "conquian"];

/** The pool a table plays for (as the server's pool_of): Conquian's, or Konkan's by its threshold. */
export function poolOf(/** @type {string} */ game, /** @type {Record<string, any> | undefined} */ options) {
  if (game === "conquian") return "conquian";
  return Number(options?.threshold) === 71 || game === "konkan71" ? "konkan71" : "konkan51";
}

/** "1500" or "1500?" (provisional). */
export const ratingText = (/** @type {number} */ value, /** @type {boolean} */ provisional) => `${value}${provisional ? "?" : ""}`;

/** The words a screen reader (and a tooltip) says for a rating. */
export const ratingWords = (/** @type {number} */ value, /** @type {boolean} */ provisional) =>
  t(provisional ? "rating.value_provisional" : "rating.value", { n: value });

/** A phrase with each {value} in a left-to-right isolate: "1500?" keeps its "?" after
 * its digits inside an Arabic sentence. */
export const isolated = (/** @type {Make} */ make, /** @type {string} */ key, /** @type {Record<string, string | number>} */ values) =>
  t(key).split(/\{(\w+)\}/).map((part, i) => (i % 2 ? make("bdi", { dir: "ltr" }, String(values[part] ?? "")) : part));

/** A change as "+12", "−8" or "±0" (a real minus sign). */
export const signedChange = (/** @type {number} */ n) => (n > 0 ? `+${n}` : n < 0 ? `\u2212${-n}` : "±0");

/** A rating as one short piece: its digits always left to right (the "?" after them). */
export function ratingBadge(/** @type {Make} */ make, /** @type {number} */ value, /** @type {boolean} */ provisional, cls = "") {
  return make("span.rating", {
    class: `${cls}${provisional ? " provisional" : ""}`, dir: "ltr", title: ratingWords(value, provisional),
  }, ratingText(value, provisional));
}

/** The rating beside a seat's name at a rated table; nothing elsewhere (a seat without one). */
export function seatRating(/** @type {Make} */ make, /** @type {{ rating?: SeatRating | null }} */ seat) {
  const r = seat.rating;
  if (!r || typeof r.value !== "number") return null;
  return ratingBadge(make, r.value, !!r.provisional, "seat-rating");
}

// --- my own ratings (GET /api/me) ------------------------------------------------------

/** @type {Mine | null} */
let mine = null;
/** @type {Promise<Mine | null> | null} */
let asking = null;
/** @type {(() => void)[]} */
const listeners = [];
let mineOf = "";  // the token my ratings are of: another sign-in forgets them

/** Run `fn` when my ratings or cool-down change (the header draws them). */
export const onMine = (/** @type {() => void} */ fn) => listeners.push(fn);

/** My ratings as last fetched (null: not known, or signed out). */
export function myRatings() {
  if (mineOf !== (session.token || "")) return null;
  return mine;
}

/** What /api/me said (the lobby fetches it for its own card too): kept, and told. */
export function noteMe(/** @type {any} */ me) {
  if (!me) return;
  const before = JSON.stringify(mine ? { r: mine.ratings, c: !!mine.cooldown } : null);
  mine = { ratings: me.ratings || {}, cooldown: me.cooldown || null, at: Date.now() };
  mineOf = session.token || "";
  if (JSON.stringify({ r: mine.ratings, c: !!mine.cooldown }) !== before) listeners.forEach((fn) => fn());
}

/** Fetch my ratings again unless fetched in the last few seconds (`force`: now). */
export function refreshMine(force = false) {
  if (!session.token) { mine = null; return Promise.resolve(null); }
  if (!force && myRatings() && Date.now() - (mine?.at || 0) < 5000) return Promise.resolve(mine);
  asking ||= api("GET", "/api/me").then((me) => { noteMe(me); return mine; }, () => null).finally(() => { asking = null; });
  return asking;
}

/** The pool I last chose for rated play (quickplay.js keeps the choice). */
export function chosenPool() {
  try {
    const choice = JSON.parse(localStorage.getItem("sahrat.rated") || "null");
    if (choice) return poolOf(choice.game, choice);
  } catch { /* a choice kept by another version */ }
  return "konkan51";
}

/** The header's link to my profile with my rating: in the pool I chose for rated play
 * if I played it, else in the one I played most; nothing before my first rated match. */
export function headerRating() {
  const user = session.user;
  const ratings = myRatings()?.ratings || {};
  if (!user) return null;
  const played = POOLS.filter((p) => ratings[p]?.games > 0).sort((a, b) => ratings[b].games - ratings[a].games);
  const chosen = chosenPool();
  const pool = played.includes(chosen) ? chosen : played[0];
  if (!pool) return null;
  const r = ratings[pool];
  const label = `${t("profile.own")} — ${t(`rating.pool.${pool}`)}: ${ratingWords(r.rating, r.provisional)}`;
  return h("a.my-rating", { id: "my-rating", href: `#/u/${user.id}`, title: label, "aria-label": label },
    h("span.star", { "aria-hidden": "true" }, "★"),
    h("span", { dir: "ltr" }, ratingText(r.rating, r.provisional)));
}

// --- time left, in words ---------------------------------------------------------------

/** "4 minutes", "٤ دقائق" style, in the reader's language (Intl knows each one's plurals):
 * whole minutes (rounded up) from a minute on, seconds below it, hours and minutes from an hour. */
export function timeLeftWords(/** @type {number} */ seconds) {
  const locale = getLang() === "ar" ? "ar-u-nu-latn" : "en-GB";
  const unit = (/** @type {number} */ n, /** @type {string} */ name) =>
    new Intl.NumberFormat(locale, { style: "unit", unit: name, unitDisplay: "long" }).format(n);
  const s = Math.max(0, Math.ceil(seconds));
  if (s < 60) return unit(s, "second");
  const minutes = Math.ceil(s / 60);
  if (minutes < 60) return unit(minutes, "minute");
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  return rest ? `${unit(hours, "hour")} ${t("rating.and")} ${unit(rest, "minute")}` : unit(hours, "hour");
}

/** A clock's "1:05" of seconds waited. */
export const clock = (/** @type {number} */ seconds) => {
  const s = Math.max(0, Math.floor(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
};

// --- the leaderboard ------------------------------------------------------------------

/** The board of a pool (settled players who played in the last 30 days), best first. */
export const ratingBoard = (/** @type {string} */ pool, limit = 10) =>
  api("GET", `/api/ratings?${new URLSearchParams({ pool, limit: String(limit) })}`);

// --- a profile (#/u/<id>) --------------------------------------------------------------

/** A player's ratings, one card per pool, each with its history's chart. */
export function showProfile(/** @type {HTMLElement} */ main, /** @type {number} */ userId) {
  /** @type {any} */
  let data = null;
  let failed = "";
  let closed = false;
  function draw() {
    if (closed) return;
    const me = session.user?.id === userId;
    if (!data && !failed) { mount(main, h("section.card-box.profile", { id: "profile" }, h("p.loading", "…"))); return; }
    if (failed) {
      mount(main, h("section.card-box.profile", { id: "profile" },
        h("h1", t("profile.title")), h("p.muted", failed), h("a.button", { href: "#/" }, t("table.lobby"))));
      return;
    }
    /** @type {ProfilePool[]} */
    const pools = data.pools || [];
    const byPool = new Map(pools.map((p) => [p.pool, p]));
    mount(main, h("div.profile", { id: "profile" },
      h("section.card-box.profile-head",
        avatar(data.name, 56),
        h("div",
          h("h1", { id: "profile-name" }, h("bdi", data.name)),
          h("p.muted", t(me ? "profile.own" : "profile.title"))),
        h("a.button.profile-back", { href: "#/" }, t("table.lobby"))),
      POOLS.map((pool) => poolCard(pool, byPool.get(pool) || null))));
  }
  api("GET", `/api/users/${userId}/ratings`).then((got) => { data = got; draw(); },
    (error) => { failed = error.status === 404 ? t("profile.no_such_player") : errorText(error.detail); draw(); });
  draw();
  return { close: () => { closed = true; }, rerender: draw };
}

function poolCard(/** @type {string} */ pool, /** @type {ProfilePool | null} */ p) {
  const played = p && p.games > 0;
  return h("section.card-box.pool-card", { dataset: { pool } },
    h("div.pool-head",
      h("h2", t(`rating.pool.${pool}`)),
      p ? ratingBadge(h, p.rating, p.provisional, "big") : null),
    h("p.muted.pool-meta", played
      ? [t("profile.games", { n: p.games }), p.provisional ? [" · ", t("rating.provisional_note")] : null]
      : t("profile.no_games")),
    played && p.history.length ? historyChart(p.history, t(`rating.pool.${pool}`)) : null);
}

const SVG = "http://www.w3.org/2000/svg";
/** An SVG element with its attributes. */
function svg(/** @type {string} */ tag, /** @type {Record<string, string | number>} */ attrs = {}, /** @type {(Node | string)[]} */ ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  el.append(...children);
  return el;
}

/**
 * A history's chart: the rating after each rated match, oldest on the left, as a line
 * with a dot per match (hollow while provisional), its lowest and highest values and its
 * first and last dates written beside it. Time runs left to right in both languages, as
 * on a clock's axis; the chart says its summary to a screen reader, its numbers are text.
 * @param {HistoryPoint[]} history
 * @param {string} poolName
 */
export function historyChart(history, poolName) {
  const points = [...history].sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  const W = 320, H = 140, left = 40, right = 10, top = 12, bottom = 24;
  const values = points.map((p) => p.rating);
  let low = Math.min(...values), high = Math.max(...values);
  if (high - low < 20) { const mid = (high + low) / 2; low = Math.floor(mid - 10); high = Math.ceil(mid + 10); }
  const x = (/** @type {number} */ i) => left + (points.length === 1 ? (W - left - right) / 2 : (i * (W - left - right)) / (points.length - 1));
  const y = (/** @type {number} */ value) => top + ((high - value) * (H - top - bottom)) / (high - low);
  const first = points[0], last = points[points.length - 1];
  const day = (/** @type {string} */ at) => new Date(at).toLocaleDateString(getLang() === "ar" ? "ar-u-nu-latn" : "en-GB", { day: "numeric", month: "short" });
  const summary = t("profile.chart_summary", {
    pool: poolName, n: points.length, from: first.rating, to: last.rating, low: Math.min(...values), high: Math.max(...values),
  });
  const line = points.map((p, i) => `${x(i).toFixed(1)},${y(p.rating).toFixed(1)}`).join(" ");
  const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "rating-chart", role: "img", "aria-label": summary, direction: "ltr" },
    svg("title", {}, summary),
    svg("line", { x1: left, x2: W - right, y1: y(high), y2: y(high), class: "grid" }),
    svg("line", { x1: left, x2: W - right, y1: y(low), y2: y(low), class: "grid" }),
    svg("text", { x: left - 4, y: y(high) + 4, "text-anchor": "end", class: "axis" }, String(high)),
    svg("text", { x: left - 4, y: y(low) + 4, "text-anchor": "end", class: "axis" }, String(low)),
    svg("text", { x: left, y: H - 6, "text-anchor": "start", class: "axis" }, day(first.at)),
    points.length > 1 ? svg("text", { x: W - right, y: H - 6, "text-anchor": "end", class: "axis" }, day(last.at)) : "",
    points.length > 1 ? svg("polyline", { points: line, class: "line" }) : "",
    ...points.map((p, i) => svg("circle", { cx: x(i).toFixed(1), cy: y(p.rating).toFixed(1), r: i === points.length - 1 ? 4 : 2.5, class: p.provisional ? "dot provisional" : "dot" })));
  return h("figure.chart-box", chart, points.length > 1
    ? h("figcaption.muted", isolated(h, "profile.chart_caption", { from: ratingText(first.rating, first.provisional), to: ratingText(last.rating, last.provisional) }))
    : null);
}

// --- a rated match's end (the table's summary) -------------------------------------------

/** Every seat's rating change (before → after, +/−), from the `ratings` message; a line
 * saying it is on its way until it comes.
 * @param {Make} make
 * @param {{ ratingChanges?: RatingsMessage | null, matchEnd?: unknown, nameOf: (seat: number) => string, seat: number | null }} ctrl
 */
export function ratingChanges(make, ctrl) {
  const got = ctrl.ratingChanges;
  // On its way after the end seen here; a page opened after it has missed the message
  // (the seats show the new numbers).
  if (!got) return ctrl.matchEnd ? make("p.muted.rating-wait", { id: "rating-changes", key: "ratings" }, t("rating.changes_coming")) : null;
  if (!got.changes?.length) return null;
  if (noted !== got) { noted = got; refreshMine(true); }  // the header's number changed
  // Before, then after, in the reading direction: the arrow points the way the eye goes.
  const arrow = document.documentElement.dir === "rtl" ? " ← " : " → ";
  return make("div.rating-changes", { id: "rating-changes", key: "ratings" },
    make("h3", t("rating.changes_title", { pool: t(`rating.pool.${got.pool}`) })),
    make("ul", got.changes.map((c) => {
      const delta = c.after - c.before;
      return make("li", { key: c.seat, class: `${c.seat === ctrl.seat ? "me " : ""}${delta > 0 ? "up" : delta < 0 ? "down" : "same"}`, dataset: { seat: c.seat } },
        make("span.who", ctrl.nameOf(c.seat)),
        make("span.change-values",
          make("bdi.before", String(c.before)), arrow,
          make("bdi.after", ratingText(c.after, c.provisional))),
        c.unrated ? make("span.unrated", t(`rating.unrated.${c.unrated}`))
          : make("span.delta", { dir: "ltr", title: t("rating.change_words", { n: signedChange(delta) }) }, signedChange(delta)));
    })));
}
/** @type {RatingsMessage | null} */
let noted = null;

/** The request for another rated game like the one at this table. */
export function againRequest(/** @type {{ game: string, options?: Record<string, any>, seats: unknown[] }} */ info) {
  let speed = "normal";
  try { speed = JSON.parse(localStorage.getItem("sahrat.rated") || "null")?.speed || speed; } catch { /* kept by another version */ }
  if (info.game === "conquian") return { game: "conquian", speed };
  return { game: "konkan", threshold: poolOf(info.game, info.options) === "konkan71" ? 71 : 51, players: info.seats.length, speed };
}

/** "Play another rated game": back to the lobby, which queues at once (quickplay.js). */
export function againButton(/** @type {Make} */ make, /** @type {{ info: any }} */ ctrl) {
  return make("button.primary", {
    type: "button", id: "rated-again",
    onclick: () => {
      sessionStorage.setItem("sahrat.queue.again", JSON.stringify(againRequest(ctrl.info)));
      sessionStorage.removeItem("sahrat.table");
      location.hash = "#/";
    },
  }, t("rating.play_again"));
}
