// One tournament's page (#/tr/<id>): its state and start, registration and withdrawal
// (a question first when an entry fee is charged or given back), the result with its
// prizes, the live standings, and the bracket (knock-out) or the round tables (Swiss),
// each table one tap from its own page. The page asks GET /api/tournaments/{id} every
// 3 seconds while it is open, seen, and the tournament is not over, and draws again only
// when the tournament's `version` moved (or the reader's own answer brought a new one).
// Drawn with view.js's patches: a redraw changes only what changed, so a round opened or
// a button focused stays so.
import { v, patch } from "../view.js";
import { h, toast, oneAtATime } from "../dom.js";
import { t, errorText } from "../i18n.js";
import { api, session, ensureUser } from "../api.js";
import { confirmDialog } from "../confirm.js";
import { ratingBadge } from "../rating.js";
import { bracket, swissRounds, myTable } from "./tables.js";
import {
  SETTLED, num, when, startsIn, pointsText, decimal, gameName, formatLine, stateName, placeWords, entrantName, roundName, roundList, roundCount, refusalText,
} from "./words.js";

/** @typedef {import("./words.js").Detail} Detail */

const POLL_MS = 3000;
const TICK_MS = 15000;  // the "starts in …" words

/**
 * The page of tournament `id`, drawn in `main`; `onUser` when a guest account is made here.
 * @param {HTMLElement} main @param {number} id @param {{ onUser: () => void }} options
 */
export function showTournament(main, id, { onUser }) {
  /** @type {Detail | null} */
  let data = null;
  let failed = "";
  let closed = false;
  let draws = 0;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  const root = h("div.tournament", { id: "tournament" });
  main.replaceChildren(root);

  /** A new Detail: kept and drawn when it is newer than the one shown (or the reader's own). */
  function accept(/** @type {Detail} */ got, force = false) {
    if (!force && data && got.version === data.version) return;
    data = got;
    draw();
  }

  async function poll() {
    if (closed) return;
    if (!document.hidden) {
      try {
        const got = await api("GET", `/api/tournaments/${id}`);
        if (closed) return;
        failed = "";
        accept(got);
      } catch (error) {
        if (closed) return;
        if (error.status === 404) { failed = t("tour.no_such"); draw(); return; }  // gone: stop asking
        if (!data) { failed = errorText(error.detail); draw(); }
      }
    }
    schedule();
  }
  function schedule() {
    clearTimeout(timer);
    if (!closed && !(data && SETTLED.has(data.state))) timer = setTimeout(poll, POLL_MS);
  }
  const onVisible = () => { if (!document.hidden && !closed) poll(); };
  document.addEventListener("visibilitychange", onVisible);
  const ticker = setInterval(() => { if (data?.state === "registering") draw(); }, TICK_MS);

  // --- registration ----------------------------------------------------------------------

  /** @param {"POST" | "DELETE"} method @param {string} path @param {string} done */
  const entry = (method, path, done) => oneAtATime(root, async () => {
    try {
      if (method === "POST") { await ensureUser(); onUser(); }
      accept(await api(method, path), true);
      toast(t(done));
    } catch (error) { toast(refusalText(error.detail), "error"); poll(); }
  });
  const register = entry("POST", `/api/tournaments/${id}/entries`, "tour.registered_note");
  const withdraw = entry("DELETE", `/api/tournaments/${id}/entries/me`, "tour.withdrawn_note");

  function entryBox(/** @type {Detail} */ d) {
    if (d.state !== "registering") {
      if (!d.me?.registered) return null;
      // My table is open: the way to it first, before the standings and the bracket.
      const table = d.state === "running" ? myTable(d) : null;
      return v("div.tour-entry-box", { id: "tour-entry" },
        v("p.tour-me", { id: "tour-me" }, t(table ? "tour.your_table_ready" : "tour.you_play")),
        table ? v("a.button.primary.big", { id: "tour-my-table", href: `#/t/${table.table_id}` }, t("tour.play_table")) : null);
    }
    const fee = d.fee > 0 ? { fee: num(d.fee), name: d.name } : null;
    if (d.me?.registered) {
      return v("div.tour-entry-box", { id: "tour-entry" },
        v("p.tour-me", { id: "tour-me" }, t("tour.you_registered")),
        v("button", {
          type: "button", id: "tour-withdraw",
          onclick: () => (fee ? confirmDialog(t("tour.withdraw_confirm", fee), withdraw) : withdraw()),
        }, t("tour.withdraw")));
    }
    // Without a session the server cannot say: the tap makes a guest, then asks.
    if (session.token && d.me && !d.me.may_register) {
      return v("div.tour-entry-box", { id: "tour-entry" },
        v("p.tour-refusal", { id: "tour-refusal" }, refusalText({ code: d.me.refusal || "unknown", message: "" })));
    }
    return v("div.tour-entry-box", { id: "tour-entry" },
      v("button.primary.big", {
        type: "button", id: "tour-register",
        onclick: () => (fee ? confirmDialog(t("tour.register_confirm", fee), register) : register()),
      }, d.fee > 0 ? t("tour.register_fee", { fee: num(d.fee) }) : t("tour.register")));
  }

  // --- the complaint ---------------------------------------------------------------------

  function complain() {
    const text = /** @type {HTMLTextAreaElement} */ (h("textarea", {
      id: "complaint-text", name: "complaint", rows: 4, maxlength: 1000, required: true,
    }));
    const send = h("button.primary", { type: "submit", id: "complaint-send" }, t("tour.complaint_send"));
    const dialog = /** @type {HTMLDialogElement} */ (h("dialog.modal.complaint-dialog", { id: "complaint-dialog", "aria-labelledby": "complaint-title" },
      h("div.modal-head", h("h2", { id: "complaint-title" }, t("tour.complaint_title")),
        h("button.close", { type: "button", "aria-label": t("app.close"), onclick: () => dialog.close() }, "✕")),
      h("form.stack", {
        onsubmit: (/** @type {Event} */ event) => {
          event.preventDefault();
          sending();
        },
      },
      h("p.muted", t("tour.complaint_help")),
      h("label", t("tour.complaint_label"), text),
      h("div.row", send, h("button", { type: "button", onclick: () => dialog.close() }, t("app.cancel"))))));
    const sending = oneAtATime(send, async () => {
      const said = text.value.trim();
      if (!said) { text.focus(); return; }
      try {
        await api("POST", `/api/tournaments/${id}/complaints`, { text: said });
        dialog.close();
        toast(t("tour.complaint_sent"));
        poll();
      } catch (error) { toast(errorText(error.detail), "error"); }
    });
    dialog.addEventListener("close", () => dialog.remove());
    document.body.append(dialog);
    dialog.showModal();
  }

  // --- drawing ---------------------------------------------------------------------------

  function head(/** @type {Detail} */ d) {
    const full = d.registered >= d.seats;
    return v("section.card-box.tour-head", { "aria-labelledby": "tour-name" },
      v("div.tour-title",
        v("h1", { id: "tour-name" }, v("bdi", d.name)),
        v(`span.badge.tour-state.state-${d.state}`, { id: "tour-state", dataset: { state: d.state } }, stateName(d.state))),
      v("p.tour-line", gameName(d.game), " · ", formatLine(d)),
      v("dl.tour-facts",
        v("div.fact-start", v("dt", t("tour.starts")), v("dd", v("bdi", when(d.starts_at)),
          d.state === "registering" && startsIn(d.starts_at) ? [" · ", v("span", { id: "tour-starts-in" }, startsIn(d.starts_at))] : null)),
        v("div", v("dt", t("tour.entrants")), v("dd", { id: "tour-registered" },
          t("tour.registered_of", { n: num(d.registered), seats: num(d.seats) }), full && d.state === "registering" ? [" · ", t("tour.full")] : null)),
        v("div", v("dt", t("tour.entry")), v("dd", { id: "tour-fee" }, d.fee > 0 ? t("tour.coins_n", { n: num(d.fee) }) : t("lobby.free"))),
        d.fee > 0 || d.pool > 0 ? v("div", v("dt", t("tour.pool")), v("dd", { id: "tour-pool" }, t("tour.coins_n", { n: num(d.pool) }))) : null,
        v("div", v("dt", t("tour.made_by")), v("dd", d.made_by === "system" ? t("tour.by_system") : v("bdi", d.made_by)))),
      d.prizes?.length && d.state !== "cancelled" ? v("div.tour-prizes",
        v("h2", t("tour.prizes")),
        v("ol.plain.prize-list", { id: "tour-prize-list" }, d.prizes.map((p) => v("li", { key: p.place, dataset: { place: p.place } },
          v("span", placeWords(p.place)), v("strong", t("tour.coins_n", { n: num(p.coins) })))))) : null,
      entryBox(d));
  }

  /** The result: the places with their prizes, the complaint window and its button. */
  function result(/** @type {Detail} */ d) {
    if (d.state === "cancelled") {
      return v("section.card-box.tour-result.cancelled", { id: "tour-result" }, v("h2", t("tour.cancelled_title")), v("p", t("tour.cancelled_note")));
    }
    if (d.state !== "complaints" && d.state !== "finished") return null;
    const podium = d.standings.filter((s) => s.place <= Math.max(3, d.prizes?.length || 0)).slice(0, 8);
    const held = d.state === "complaints";
    return v("section.card-box.tour-result", { id: "tour-result", "aria-labelledby": "tour-result-title" },
      v("h2", { id: "tour-result-title" }, t("tour.result")),
      v("ol.plain.podium", podium.map((s) => v("li", { key: s.entry, class: `place-${s.place}`, dataset: { entry: s.entry } },
        v("span.podium-place", placeWords(s.place)),
        v("span.podium-name", v("bdi", entrantName(d, s))),
        s.prize ? v("span.podium-prize", t("tour.coins_n", { n: num(s.prize) })) : null))),
      held
        ? v("p.tour-held", { id: "tour-held" }, d.complaint_until ? t("tour.prizes_held_until", { time: when(d.complaint_until) }) : t("tour.prizes_held"),
          d.complaints_open > 0 ? [" ", t("tour.complaints_open", { n: num(d.complaints_open) })] : null)
        : v("p.tour-paid", { id: "tour-paid" }, d.pool > 0 ? t("tour.prizes_paid") : t("tour.no_prizes")),
      held && d.me?.registered ? v("button", { type: "button", id: "tour-complain", onclick: complain }, t("tour.complain")) : null);
  }

  /** The standings as a table: place, player, points or how far they came, prize. */
  function standings(/** @type {Detail} */ d) {
    if (!d.standings?.length) return null;
    const swiss = d.format === "swiss";
    const anyPrize = d.standings.some((s) => s.prize);
    const entrants = new Map(d.entrants.map((e) => [e.entry, e]));
    const mine = session.user?.id;
    const over = d.state === "complaints" || d.state === "finished";
    // How far each came: the round they went out in; the champion; the final's others.
    const reached = (/** @type {import("./words.js").StandingRow} */ s) => {
      if (s.out_in_round !== null && s.out_in_round !== undefined) {
        return roundName(d, s.out_in_round, roundList(d).find((r) => r.round === s.out_in_round)?.tables.length);
      }
      if (!over) return t("tour.still_in");
      return s.place === 1 ? t("tour.champion") : roundName(d, roundCount(d));
    };
    return v("section.card-box.tour-standings", { id: "tour-standings", "aria-labelledby": "tour-standings-title" },
      v("h2", { id: "tour-standings-title" }, t("tour.standings")),
      v("table.sheet.standings-table", { id: "standings" },
        v("caption.sr-only", t("tour.standings")),
        v("thead", v("tr",
          v("th", { scope: "col" }, t("tour.col_place")),
          v("th", { scope: "col" }, t("tour.col_player")),
          swiss ? v("th.num", { scope: "col" }, t("tour.col_points")) : v("th", { scope: "col" }, t("tour.col_reached")),
          swiss ? v("th.num.wide-only", { scope: "col", title: t("tour.col_total_long") }, t("tour.col_total")) : null,
          swiss ? v("th.num.wide-only", { scope: "col", title: t("tour.col_strength_long") }, t("tour.col_strength")) : null,
          anyPrize ? v("th.num", { scope: "col" }, t("tour.col_prize")) : null)),
        v("tbody", d.standings.map((s) => {
          const e = entrants.get(s.entry);
          return v("tr", {
            key: s.entry, dataset: { entry: s.entry, place: s.place },
            class: e && e.user_id !== null && e.user_id === mine ? "me" : "",
          },
          v("td.place", num(s.place)),
          v("th.who", { scope: "row" }, v("bdi", entrantName(d, s)),
            e?.bot ? v("span.badge.bot", t("table.bot")) : null,
            e?.no_show ? v("span.badge.offline", t("tour.no_show")) : e?.dropped ? v("span.badge.offline", t("tour.dropped")) : null,
            e && !e.bot && typeof e.rating === "number" ? ratingBadge(v, Math.round(e.rating), false, "tour-rating") : null),
          swiss ? v("td.num.points", v("bdi", { dir: "ltr", title: String(s.points) }, pointsText(s.points))) : v("td.reached", reached(s)),
          swiss ? v("td.num.wide-only", num(s.match_total)) : null,
          swiss ? v("td.num.wide-only", { title: String(s.opponents_strength) }, decimal(s.opponents_strength)) : null,
          anyPrize ? v("td.num.prize", s.prize ? num(s.prize) : "") : null);
        }))),
      swiss ? v("p.muted.tie-breaks", t("tour.tie_breaks")) : null);
  }

  /** Before the first round: who has registered, by name. */
  function entrantsBox(/** @type {Detail} */ d) {
    if (roundList(d).length || d.standings?.length) return null;
    const mine = session.user?.id;
    return v("section.card-box.tour-entrants", { id: "tour-entrants", "aria-labelledby": "tour-entrants-title" },
      v("h2", { id: "tour-entrants-title" }, t("tour.entrants")),
      d.entrants.length
        ? v("ul.plain.entrant-list", d.entrants.map((e) => v("li", { key: e.entry, class: e.user_id !== null && e.user_id === mine ? "me" : "", dataset: { entry: e.entry } },
          v("bdi", entrantName(d, e)),
          e.bot ? v("span.badge.bot", t("table.bot")) : null,
          !e.bot && typeof e.rating === "number" ? ratingBadge(v, Math.round(e.rating), false, "tour-rating") : null)))
        : v("p.muted", t("tour.no_entrants")));
  }

  function draw() {
    if (closed) return;
    draws += 1;
    root.dataset.draws = String(draws);
    const back = v("nav.tour-nav", { "aria-label": t("tour.title") },
      v("a.button", { href: "#/tournaments", id: "tour-back" }, t("tour.all")),
      v("a.button", { href: "#/" }, t("table.lobby")));
    if (!data) {
      patch(root, failed ? v("section.card-box", v("h1", t("tour.title")), v("p.muted", { id: "tour-failed" }, failed), back) : v("p.loading", "…"));
      return;
    }
    const d = data;
    root.dataset.version = String(d.version);
    root.dataset.state = d.state;
    patch(root,
      back,
      head(d),
      result(d),
      standings(d),
      d.format === "knockout" ? bracket(d) : swissRounds(d),
      entrantsBox(d),
      v("p.muted.tour-live", { id: "tour-live", role: "status" }, SETTLED.has(d.state) ? "" : t("tour.live")));
  }

  draw();
  poll();
  // Read-only for the browser tests: what the page drew, and how often.
  /** @type {any} */ (window).sahratTournament = { get data() { return data; }, get draws() { return draws; } };
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      clearInterval(ticker);
      document.removeEventListener("visibilitychange", onVisible);
    },
    rerender: draw,
  };
}

