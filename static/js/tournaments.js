// Tournaments (docs/tournaments.md): the list (#/tournaments) of the coming, running and
// finished ones, each a tap from its page, and "make a tournament" for an account; the
// page of one tournament (#/tr/<id>) is tournament/page.js. Fetched when first opened:
// the lobby never loads these modules (nor Preact, which they draw with).
import { v, patch, vicon } from "./view.js";
import { h } from "./dom.js";
import { t, errorText } from "./i18n.js";
import { api, session } from "./api.js";
import { makeForm } from "./tournament/form.js";
import { num, when, startsIn, gameName, formatLine, feeText, stateName } from "./tournament/words.js";

export { showTournament } from "./tournament/page.js";

/** @typedef {import("./tournament/words.js").Summary} Summary */

const REFRESH_MS = 10000;
const LISTS = /** @type {const} */ (["coming", "running", "finished"]);

/** One tournament in a list: its name (the link), game and format, seats, fee, start. */
function row(/** @type {Summary} */ s) {
  return v("li.tour-row", { key: s.id, dataset: { tournament: s.id, state: s.state } },
    v("a.tour-link", { href: `#/tr/${s.id}` },
      v("span.tour-row-title", v("bdi.tour-row-name", s.name),
        v(`span.badge.tour-state.state-${s.state}`, stateName(s.state))),
      v("span.tour-row-meta", gameName(s.game), " · ", formatLine(s)),
      v("span.tour-row-meta",
        t("tour.registered_of", { n: num(s.registered), seats: num(s.seats) }), " · ", feeText(s.fee),
        s.pool > 0 ? [" · ", t("tour.pool_n", { n: num(s.pool) })] : null),
      v("span.tour-row-meta", v("bdi", when(s.starts_at)),
        s.state === "registering" && startsIn(s.starts_at) ? [" · ", startsIn(s.starts_at)] : null)));
}

/**
 * The list of tournaments, drawn in `main`; kept current while it is shown.
 * @param {HTMLElement} main
 */
export function showTournaments(main) {
  const root = h("div.tournaments", { id: "tournaments" });
  main.replaceChildren(root);
  /** @type {Record<string, Summary[] | null>} */
  const lists = { coming: null, running: null, finished: null };
  /** @type {Record<string, string>} */
  const failed = {};
  let closed = false;
  let loads = 0;
  let shown = "";
  const made = (/** @type {any} */ detail) => { location.hash = `#/tr/${detail.id}`; };
  let form = makeForm(made);  // kept from one drawing to the next: what is typed stays

  async function load() {
    if (closed || document.hidden) return;
    const ticket = ++loads;
    await Promise.all(LISTS.map(async (which) => {
      try {
        const got = await api("GET", `/api/tournaments?state=${which}`);
        lists[which] = got.tournaments || [];
        delete failed[which];
      } catch (error) { failed[which] = errorText(error.detail); }
    }));
    if (ticket !== loads || closed) return;
    const seen = JSON.stringify([lists, failed]);
    if (seen !== shown) { shown = seen; draw(); }
  }

  function section(/** @type {typeof LISTS[number]} */ which) {
    const items = lists[which];
    return v("section.card-box.tour-list", { id: `tour-${which}`, "aria-labelledby": `tour-${which}-title` },
      v("h2", { id: `tour-${which}-title` }, t(`tour.list.${which}`)),
      failed[which] ? v("p.muted", failed[which])
        : items === null ? v("p.loading", "…")
          : items.length ? v("ul.plain.tour-rows", items.map(row))
            : v("p.muted", t(`tour.none.${which}`)));
  }

  function draw() {
    if (closed) return;
    const user = session.user;
    const account = !!(session.token && user && !user.guest);
    patch(root,
      v("div.tour-list-head",
        v("h1", vicon("results"), t("tour.title")),
        v("a.button", { href: "#/" }, t("table.lobby"))),
      v("p.muted.tour-intro", t("tour.intro")),
      LISTS.map(section),
      v("section.card-box.tour-make-box", { id: "tour-make", "aria-labelledby": "tour-make-title" },
        v("h2", { id: "tour-make-title" }, t("tour.make")),
        account ? form : v("p.muted", t("tour.make_needs_account"), " ", v("a", { href: "#/" }, t("table.lobby")))));
  }

  draw();
  load();
  const timer = setInterval(load, REFRESH_MS);
  const onVisible = () => { if (!document.hidden) load(); };
  document.addEventListener("visibilitychange", onVisible);
  return {
    close() { closed = true; clearInterval(timer); document.removeEventListener("visibilitychange", onVisible); },
    rerender() { form = makeForm(made); draw(); },  // a language switch: the form's words too
  };
}
