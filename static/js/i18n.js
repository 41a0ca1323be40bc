// One message catalogue per language (static/i18n/<lang>.json). Arabic first,
// English one click away; the choice is kept in localStorage. Only the language
// shown is fetched; the other one when the reader switches to it.

const catalogues = {};
const LANGS = ["ar", "en"];

/** The language a reader who never chose sees: the first of the browser's languages
 * (navigator.languages, in the reader's order) that the page has, Arabic if none. */
export function browserLang(/** @type {readonly string[]} */ preferred = navigator.languages || [navigator.language]) {
  for (const tag of preferred || []) {
    const base = String(tag).toLowerCase().split("-")[0];
    if (LANGS.includes(base)) return base;
  }
  return "ar";
}

const chosen = localStorage.getItem("sahrat.lang");
let lang = chosen && LANGS.includes(chosen) ? chosen : browserLang();
const listeners = [];
const fetching = {};

// Beside this module (../i18n/ of the same versioned folder): cached with it.
const catalogueUrl = (code) => new URL(`../i18n/${code}.json`, import.meta.url);

function fetchCatalogue(code) {
  fetching[code] ||= fetch(catalogueUrl(code)).then((res) => {
    if (!res.ok) throw new Error(`${res.status} ${res.url}`);
    return res.json();
  }).then((catalogue) => { catalogues[code] = catalogue; }, (error) => {
    delete fetching[code];
    throw error;
  });
  return fetching[code];
}

export async function loadCatalogues() {
  await fetchCatalogue(lang);
  applyLang();
}

export const getLang = () => lang;

/** Switch to `code`, fetching its catalogue first if need be; the page changes (and
 * the listeners run) only once it is there. */
export async function setLang(code) {
  await fetchCatalogue(code);
  lang = code;
  localStorage.setItem("sahrat.lang", code);
  applyLang();
  listeners.forEach((fn) => fn());
}

export const onLangChange = (fn) => listeners.push(fn);

function applyLang() {
  document.documentElement.lang = lang;
  document.documentElement.dir = lang === "ar" ? "rtl" : "ltr";
  document.title = t("app.name");
}

/**
 * t("app.name"), t("ev.draw", {who: "x"}) → the phrase with {name} filled in; the key itself if missing.
 * With {mine: true} (the phrase is about the reader's own seat) a language whose verbs
 * change with the person has a "KEY.mine" phrase: Arabic "أنت: رميت" where another
 * player's is "سارة: رمى"; a language without one uses KEY.
 */
export function t(key, params = {}) {
  const own = params.mine && has(`${key}.mine`) ? `${key}.mine` : key;
  const phrase = catalogues[lang]?.[own] ?? catalogues.en?.[key] ?? key;
  return phrase.replace(/\{(\w+)\}/g, (_, name) => (params[name] ?? `{${name}}`));
}

export const has = (key) => key in (catalogues[lang] || {});

/**
 * A server error in the reader's language: {code, message} from a reply, a REST
 * detail, or a validation list. Unknown codes fall back to the server's English.
 */
export function errorText(error) {
  if (!error) return t("err.unknown");
  if (Array.isArray(error)) {  // FastAPI 422: [{loc, msg, type}]
    return error.map((e) => {
      const option = e.loc?.[e.loc.length - 1];
      return e.type === "bad_option" ? t("err.bad_option_named", { option: t(`opt.${option}`), msg: e.msg }) : e.msg;
    }).join("; ");
  }
  const key = `err.${error.code}`;
  return has(key) ? t(key) : error.message || error.code;
}
