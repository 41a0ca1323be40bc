// Patched views for the table page: `v` takes the same arguments as dom.js's `h` but
// returns a Preact vnode (static/vendor/preact); `patch(el, ...)` draws them into `el`,
// changing only what differs from the last drawing, so an element kept (a card with the
// same `key`) keeps its focus, its transitions and what was done to it. Only the table's
// modules import this file: the lobby never loads Preact.
import { h as vnode, render, Fragment } from "../vendor/preact/preact.module.js";
import { ICON_ATTRS, ICON_PATHS } from "./icons.js";

/** v("button.primary", {onclick, key, dataset, ref}, "text", child...) → a vnode. */
export function v(tag, attrs, ...children) {
  const [name, ...classes] = tag.split(".");
  if (attrs !== null && attrs !== undefined && (typeof attrs !== "object" || attrs instanceof Node || Array.isArray(attrs) || isVnode(attrs))) {
    children.unshift(attrs);
    attrs = null;
  }
  const props = {};
  let cls = classes.join(" ");
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null) continue;
    if (key === "dataset") { for (const [k, d] of Object.entries(value)) if (d !== undefined && d !== null) props[`data-${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`] = String(d); }
    else if (key === "class") { if (value) cls += (cls ? " " : "") + value; }
    else if (value === false && !(key in PROPERTIES)) continue;
    else props[key] = value;
  }
  if (cls) props.class = cls;
  // Lists stay nested (a list is one place among its siblings), each kept by its keys.
  return vnode(name || "div", props, ...children.map(child));
}
// Properties that must be set back to false when they turn false (not just left out).
const PROPERTIES = { disabled: 1, checked: 1, open: 1, hidden: 1 };
const isVnode = (x) => x.constructor === undefined && "type" in x && "props" in x;
const child = (c) => (Array.isArray(c) ? c.map(child) : c instanceof Node ? vnode(Foreign, { node: c }) : c === false ? null : c);

// A node made by `h` (a block another module draws) kept inside a patched view.
function Foreign({ node }) {
  return vnode("span", { class: "foreign", ref: (el) => { if (el && el.firstChild !== node) el.replaceChildren(node); } });
}

/** vicon("hint") → the vnode of an icon (icons.js). */
export const vicon = (name) => vnode("svg", ICON_ATTRS, vnode("path", { d: ICON_PATHS[name] }));

/** Draw `children` (vnodes, strings, nodes) into `el`, patching what is there. */
export function patch(el, ...children) {
  render(vnode(Fragment, null, ...children.map(child)), el);
  return el;
}
