// One message catalogue per language (static/i18n/<lang>.json). Arabic first,
// English one click away; the choice is kept in localStorage.

const catalogues = {};
let lang = localStorage.getItem("sahrat.lang") || "ar";
const listeners = [];

export async function loadCatalogues() {
  await Promise.all(["ar", "en"].map(async (code) => {
    const res = await fetch(`i18n/${code}.json`);
    catalogues[code] = await res.json();
  }));
  applyLang();
}

export const getLang = () => lang;

export function setLang(code) {
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

/** t("app.name"), t("ev.draw", {who: "x"}) → the phrase with {name} filled in; the key itself if missing. */
export function t(key, params = {}) {
  const phrase = catalogues[lang]?.[key] ?? catalogues.en?.[key] ?? key;
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
