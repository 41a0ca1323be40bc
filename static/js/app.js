// Entry point: loads the catalogues, draws the header and routes by the URL hash
// (#/ lobby, #/t/<id> a table, #/m/<id> a finished match's replay).
import { h, mount, $ } from "./dom.js";
import { loadCatalogues, t, getLang, setLang, onLangChange } from "./i18n.js";
import { session, api } from "./api.js";
import { showLobby } from "./lobby.js";
import { showTable } from "./table.js";
import { showReplay } from "./replay.js";

let screen = null;  // the current screen: {close(), rerender()}

function header() {
  const user = session.user;
  mount($("#top"),
    h("a.brand", { href: "#/" }, t("app.name")),
    h("span.spacer"),
    user ? h("span.me", { title: t("lobby.signed_in_as") }, user.name) : null,
    user ? h("button.link", {
      type: "button", id: "logout",
      onclick: async () => {
        try { await api("POST", "/api/logout"); } catch { /* the token may already be gone */ }
        session.clear();
        route();
      },
    }, t("lobby.logout")) : null,
    h("button.lang", {
      type: "button", id: "lang-toggle", lang: getLang() === "ar" ? "en" : "ar",
      onclick: () => setLang(getLang() === "ar" ? "en" : "ar"),
    }, t("app.other_language")),
  );
}

function route() {
  if (screen) { screen.close(); screen = null; }
  header();
  const main = $("#main");
  const [, kind, id] = location.hash.match(/^#\/(t|m)\/(\d+)/) || [];
  if (kind === "t") screen = showTable(main, Number(id), { onUser: header });
  else if (kind === "m") screen = showReplay(main, Number(id));
  else {
    sessionStorage.removeItem("sahrat.table");
    screen = showLobby(main, { onUser: header });
  }
}

await loadCatalogues();
// A reload of a bare address while a table was open returns to that table.
const kept = sessionStorage.getItem("sahrat.table");
if ((!location.hash || location.hash === "#/") && kept && session.token) location.hash = `#/t/${kept}`;
window.addEventListener("hashchange", route);
// A language switch redraws in place: a table keeps its socket and local choices.
onLangChange(() => { header(); if (screen?.rerender) screen.rerender(); else route(); });
route();
