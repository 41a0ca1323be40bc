// Tiny DOM helpers: a hyperscript-like `h` that makes elements (the lobby, the replay,
// dialogs). The table page updates in place with `v`/`patch` (view.js, through Preact).

/** h("button.primary", {onclick}, "text", child...) → an element. */
export function h(tag, attrs, ...children) {
  const [name, ...classes] = tag.split(".");
  const el = document.createElement(name || "div");
  if (classes.length) el.className = classes.join(" ");
  // A first argument that is not an attribute object is a child (0 included).
  if (attrs !== null && attrs !== undefined && (typeof attrs !== "object" || attrs instanceof Node || Array.isArray(attrs))) {
    children.unshift(attrs);
    attrs = null;
  }
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key === "class") el.className += (el.className ? " " : "") + value;
    else if (key === "value") el.value = value;
    else if (key === "checked") el.checked = value;
    else el.setAttribute(key, value === true ? "" : value);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
}

/** Replace everything inside `el`. */
export function mount(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

export const $ = (sel, root = document) => root.querySelector(sel);

const running = new WeakSet();
/** `work` made to run once at a time per `key` (a button, a form, any object): a double
 * tap or a second Enter while the first request is on its way does nothing. A button
 * key is disabled meanwhile. */
export const oneAtATime = (key, work) => async (...args) => {
  if (running.has(key)) return undefined;
  running.add(key);
  const button = key instanceof HTMLButtonElement ? key : null;
  if (button) button.disabled = true;
  try { return await work(...args); } finally {
    running.delete(key);
    if (button) button.disabled = false;
  }
};

/** A short-lived message at the bottom of the screen (errors, notices). */
export function toast(text, kind = "info", ms = 4000) {
  const box = document.getElementById("toasts");
  // The same words already showing are not stacked again (a second tap on a button
  // that cannot act yet): the one showing stays for the time of the new one.
  const same = /** @type {HTMLElement[]} */ ([...(box?.children || [])])
    .find((el) => el.textContent === text && el.classList.contains(kind));
  if (same) {
    clearTimeout(Number(same.dataset.timer));
    same.dataset.timer = String(setTimeout(() => same.remove(), ms));
    return same;
  }
  const el = h(`div.toast.${kind}`, { role: kind === "error" ? "alert" : "status" }, text);
  box?.append(el);
  el.dataset.timer = String(setTimeout(() => el.remove(), ms));
  return el;
}
