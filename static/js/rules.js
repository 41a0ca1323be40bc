// The rules of both games, in the reader's language (#/rules/konkan, #/rules/conquian):
// a short page drawn from docs/rules.md. The text is its own file per language
// (static/rules/<lang>.json), fetched when the page opens, not with the catalogue every
// page loads; the page's own words (the tabs, the links) are in the catalogues.
import { h, mount } from "./dom.js";
import { t, getLang } from "./i18n.js";

/**
 * @typedef {{ title: string, items: string[] }} RulesSection
 * @typedef {{ title: string, lead: string, sections: RulesSection[] }} GameRules
 * @typedef {Record<string, GameRules>} RulesText  each game's rules, by game
 */

export const GAMES = ["konkan", "conquian"];

/** @type {Record<string, Promise<RulesText>>} */
const fetched = {};
const rulesText = (/** @type {string} */ lang) => (fetched[lang] ||= fetch(new URL(`../rules/${lang}.json`, import.meta.url)).then((res) => {
  if (!res.ok) throw new Error(`${res.status} ${res.url}`);
  return res.json();
}).catch((error) => { delete fetched[lang]; throw error; }));

/**
 * The rules page of `game` in `main`.
 * @param {HTMLElement} main
 * @param {string} game
 */
export function showRules(main, game) {
  let shown = 0;  // a drawing that arrives after a newer one started is dropped
  const draw = async () => {
    const ticket = ++shown;
    const lang = getLang();
    let text;
    try { text = await rulesText(lang); } catch { text = null; }
    if (ticket !== shown) return;
    const rules = text?.[game];
    const table = sessionStorage.getItem("sahrat.table");
    mount(main, h("article.card-box.rules", { id: "rules", lang },
      h("nav.rules-tabs", { "aria-label": t("rules.games") },
        GAMES.map((g) => h("a.button", {
          href: `#/rules/${g}`, "aria-current": g === game ? "page" : null, class: g === game ? "current" : null,
        }, t(`game.${g}`)))),
      rules
        ? [h("h1", { id: "rules-title" }, t("rules.title", { game: rules.title })),
          h("p.lead", rules.lead),
          rules.sections.map((s) => h("section", h("h2", s.title), h("ul", s.items.map((item) => h("li", item)))))]
        : h("p", { role: "alert" }, t("err.unknown")),
      h("p.rules-back", h("a", { href: table ? `#/t/${table}` : "#/", id: "rules-back" }, t(table ? "rules.back_to_table" : "table.lobby")))));
  };
  draw();
  return { close() { shown += 1; }, rerender: draw };
}
