// Entry point: loads the catalogues, draws the header and routes by the URL hash
// (#/ lobby, #/t/<id> a table, #/m/<id> a finished match's replay (#/m/<id>/analysis its
// analysis), #/u/<id> a player's
// profile: their ratings and each one's history, #/rules/<game> the rules of a game,
// #/tournaments the tournaments, #/tr/<id> one tournament's page).
// The lobby is all this file imports statically: a table's and a replay's modules
// (and the game modules they bring) are fetched when one is opened.
import { h, mount, $, toast } from "./dom.js";
import { loadCatalogues, t, getLang, setLang, onLangChange, errorText } from "./i18n.js";
import { session, api, ensureUser, rememberTable } from "./api.js";
import { showLobby } from "./lobby.js";
import { avatar } from "./avatar.js";
import { headerRating, onMine, refreshMine, showProfile } from "./rating.js";
import { startInvitations } from "./invitations.js";
import { icon } from "./icons.js";

let screen = null;  // the current screen: {close(), rerender()}
let routing = 0;  // counts routes: a module that arrives after the reader moved on is not shown

// Each screen's module, fetched once, when first needed.
const loaders = { table: () => import("./table.js"), replay: () => import("./replay.js"), analysis: () => import("./analysis.js"), rules: () => import("./rules.js"), tournaments: () => import("./tournaments.js") };
const loading = {};
const load = (name) => (loading[name] ||= loaders[name]().catch((error) => { delete loading[name]; throw error; }));

// A module that cannot be fetched is most likely one of a version the server no longer
// has (a new one was deployed while this page was open): then reload into the new one.
async function moduleFailed(error) {
  const version = new URL(import.meta.url).pathname.split("/")[2] || "";
  try {
    const page = await (await fetch("/", { cache: "no-store" })).text();
    if (version && !page.includes(`/static/${version}/`)) { location.reload(); return; }
  } catch { /* unreachable: say so below */ }
  toast(errorText({ code: "unknown", message: String(error?.message || error) }), "error");
}

function header() {
  const user = session.user;
  mount($("#top"),
    h("a.brand", { href: "#/" }, t("app.name")),
    // The tournaments (#/tournaments): the cup alone on a small phone.
    h("a.nav-tournaments", { href: "#/tournaments", id: "nav-tournaments", title: t("tour.title"), "aria-label": t("tour.title") },
      icon("results"), h("span.nav-label", t("tour.title"))),
    h("span.spacer"),
    user ? avatar(user.name, 24) : null,
    user ? h("span.me", { title: t("lobby.signed_in_as") }, user.name) : null,
    user ? headerRating() : null,
    user ? h("button.link", {
      type: "button", id: "logout",
      onclick: async () => {
        try { await api("POST", "/api/logout"); } catch { /* the token may already be gone */ }
        session.clear();
        route();
      },
    }, t("lobby.logout")) : null,
    // Red and black suits by default (as on paper); four colours for those who like them.
    h("button", {
      type: "button", id: "four-colours", "aria-pressed": fourColours() ? "true" : "false", title: t("app.four_colours"),
      "aria-label": t("app.four_colours"),
      onclick: () => { localStorage.setItem("sahrat.colours", fourColours() ? "two" : "four"); applyColours(); header(); },
    }, h("span.suit-s", "♠"), h("span.suit-h", "♥"), h("span.suit-d", "♦"), h("span.suit-c", "♣")),
    h("button.lang", {
      type: "button", id: "lang-toggle", lang: getLang() === "ar" ? "en" : "ar",
      // The other language's catalogue is fetched on the first switch.
      onclick: () => setLang(getLang() === "ar" ? "en" : "ar").catch(moduleFailed),
      title: t("app.other_language"), "aria-label": t("app.other_language"),
    }, h("span.lang-long", t("app.other_language")), h("span.lang-short", t("app.other_language_short"))),
  );
}

const fourColours = () => localStorage.getItem("sahrat.colours") === "four";
function applyColours() { document.documentElement.classList.toggle("four-colours", fourColours()); }
applyColours();

let routed = null;  // the address route() last drew
function route() {
  routed = location.hash;
  if (screen) { screen.close(); screen = null; }
  header();
  const main = $("#main");
  const ticket = ++routing;
  const invite = location.hash.match(/^#\/i\/([\w-]+)$/)?.[1];
  if (invite) { joinByInvite(invite); return; }
  refreshMine();  // the header's rating: drawn again when it comes (onMine)
  // The rules of a game (#/rules/konkan, #/rules/conquian; #/rules: Konkan's).
  const rules = location.hash.match(/^#\/rules(?:\/(konkan|conquian))?\/?$/);
  if (rules) {
    load("rules").then((module) => {
      if (ticket === routing) screen = module.showRules(main, rules[1] || "konkan");
    }, (error) => { if (ticket === routing) moduleFailed(error); });
    return;
  }
  // The tournaments (#/tournaments) and one tournament's page (#/tr/<id>).
  const tournament = location.hash.match(/^#\/(?:tournaments|tr\/(\d+))\/?$/);
  if (tournament) {
    mount(main, h("p.loading", "…"));
    load("tournaments").then((module) => {
      if (ticket !== routing) return;
      screen = tournament[1] ? module.showTournament(main, Number(tournament[1]), { onUser: header }) : module.showTournaments(main);
    }, (error) => { if (ticket === routing) moduleFailed(error); });
    return;
  }
  // A finished match's analysis (#/m/<id>/analysis).
  const analysed = location.hash.match(/^#\/m\/(\d+)\/analysis\/?$/);
  if (analysed) {
    mount(main, h("p.loading", "…"));
    load("analysis").then((module) => {
      if (ticket === routing) screen = module.showAnalysis(main, Number(analysed[1]));
    }, (error) => { if (ticket === routing) moduleFailed(error); });
    return;
  }
  const [, kind, id] = location.hash.match(/^#\/(t|m|u)\/(\d+)/) || [];
  if (kind === "u") { screen = showProfile(main, Number(id)); return; }
  if (kind === "t" || kind === "m") {
    mount(main, h("p.loading", "…"));
    load(kind === "t" ? "table" : "replay").then((module) => {
      if (ticket !== routing) return;  // another route since: this one is gone
      screen = kind === "t" ? module.showTable(main, Number(id), { onUser: header }) : module.showReplay(main, Number(id));
    }, (error) => { if (ticket === routing) moduleFailed(error); });
  } else {
    sessionStorage.removeItem("sahrat.table");
    screen = showLobby(main, { onUser: header });
  }
}

// An invite link (#/i/<code>): a seat at that private table, as a guest if need be.
async function joinByInvite(code) {
  try {
    await ensureUser();
    header();
    const table = await api("POST", "/api/tables/join", { invite_code: code });
    rememberTable(table.id);
    location.replace(`#/t/${table.id}`);
  } catch (error) {
    toast(errorText(error.detail), "error");
    location.replace("#/");
  }
}

// A reload of a bare address while a table was open returns to that table.
const kept = sessionStorage.getItem("sahrat.table");
if ((!location.hash || location.hash === "#/") && kept && session.token) location.hash = `#/t/${kept}`;
// Opening straight onto a table or a replay: fetch its module while the catalogue comes.
if (/^#\/t\//.test(location.hash)) load("table").catch(() => {});
else if (/^#\/m\/\d+\/analysis/.test(location.hash)) load("analysis").catch(() => {});
else if (/^#\/m\//.test(location.hash)) load("replay").catch(() => {});
await loadCatalogues();
// An address typed or followed while the page was still starting has its hashchange
// come after the route() below drew it: drawn once, not twice (an invite link would
// ask for the seat twice).
window.addEventListener("hashchange", () => { if (location.hash !== routed) route(); });
// A language switch redraws in place: a table keeps its socket and local choices.
onMine(header);
onLangChange(() => { header(); if (screen?.rerender) screen.rerender(); else route(); });
route();
startInvitations();  // a friend's invitation reaches me in the lobby and at a table alike
