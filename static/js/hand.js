// My hand as I arrange it: sorted on the deal (by suit or by rank, the choice
// remembered), a card that arrives is put in its place and marked, and the
// order and the melds I am building survive a reload (localStorage, one key per
// table and round). Cards are reordered by dragging with pointer events, which
// serve a mouse, a pen and a finger alike.
import { sortByRank, sortBySuit, parse } from "./cards.js";

const SORT_KEY = "sahrat.sort";
export const sortPreference = () => (localStorage.getItem(SORT_KEY) === "rank" ? "rank" : "suit");
export const setSortPreference = (mode) => localStorage.setItem(SORT_KEY, mode);

const sorted = (cards, mode) => (mode === "rank" ? sortByRank(cards) : sortBySuit(cards));

/**
 * The order after the hand changed: the cards kept stay where I put them; new
 * cards go where the sort puts them (mode "suit"/"rank" sorts everything again,
 * mode "own" — after I dragged — slots each new card next to its suit).
 * Returns {order, fresh: the cards that arrived}.
 */
export function arrange(order, hand, mode) {
  const inHand = new Set(hand);
  const kept = order.filter((c) => inHand.has(c));
  const fresh = hand.filter((c) => !kept.includes(c));
  if (mode !== "own" || !kept.length) return { order: sorted([...kept, ...fresh], mode === "rank" ? "rank" : "suit"), fresh };
  const out = [...kept];
  for (const card of fresh) {
    const all = sortBySuit([...out, card]);
    const before = all[all.indexOf(card) - 1];
    out.splice(before === undefined ? 0 : out.indexOf(before) + 1, 0, card);
  }
  return { order: out, fresh };
}

// --- kept across a reload ---------------------------------------------------------------

const PREFIX = "sahrat.hand.";

export function loadHand(tableId, round) {
  try { return JSON.parse(localStorage.getItem(`${PREFIX}${tableId}.${round}`) || "null"); }
  catch { return null; }
}

export function saveHand(tableId, round, data) {
  const key = `${PREFIX}${tableId}.${round}`;
  // One arrangement per table: the previous round's is of no more use.
  for (let i = localStorage.length - 1; i >= 0; i--) {
    const other = localStorage.key(i);
    if (other?.startsWith(`${PREFIX}${tableId}.`) && other !== key) localStorage.removeItem(other);
  }
  localStorage.setItem(key, JSON.stringify(data));
}

// --- dragging -----------------------------------------------------------------------------

/**
 * Let the cards in `row` be dragged to a new place. `onDrop(card, target, after)`
 * gets the dragged card, the card it was dropped on and whether it goes after
 * it. A press that does not move is left to the card's click. `onOut(card, x, y,
 * hover)`, when given, is asked first whether the point is a place outside the row
 * the card goes to (the discard pile, a table meld): `hover` while it moves (to
 * outline the place), then once at the drop, which it makes, returning true.
 */
/** @param {any} row  the hand row @param {(card: string, target: string, after: boolean) => void} onDrop
 * @param {((card: string, x: number, y: number, hover: boolean) => boolean) | null} [onOut] */
export function dragToReorder(row, onDrop, onOut = null) {
  let drag = null, dragged = false;
  // The click that follows a drag (a mouse's, on the card it let go) is not a tap on the
  // card. A finger's drag has none: the next press forgets it, so a tap right after a
  // drag is a tap.
  row.addEventListener("click", (e) => {
    if (dragged) { dragged = false; e.stopPropagation(); e.preventDefault(); }
  }, { capture: true });
  const cardAt = (x, y) => {
    let best = null, bestDistance = Infinity;
    for (const el of row.querySelectorAll("[data-card]")) {
      if (el === drag.el) continue;
      const r = el.getBoundingClientRect();
      const d = Math.hypot(x - (r.left + r.width / 2), y - (r.top + r.height / 2));
      if (d < bestDistance) { best = el; bestDistance = d; }
    }
    return best;
  };
  row.addEventListener("pointerdown", (e) => {
    dragged = false;
    const el = e.target.closest("[data-card]");
    if (!el || e.button > 0) return;
    drag = { el, id: el.dataset.card, x: e.clientX, y: e.clientY, pointer: e.pointerId, moving: false, target: null };
  });
  keepTouchMoves(row, () => !!drag);
  row.addEventListener("pointermove", (e) => {
    if (!drag || e.pointerId !== drag.pointer) return;
    const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    if (!drag.moving) {
      if (Math.hypot(dx, dy) < 8) return;
      drag.moving = true;
      drag.el.setPointerCapture(e.pointerId);
      drag.el.classList.add("dragging");
    }
    drag.el.style.translate = `${dx}px ${dy}px`;
    drag.target?.classList.remove("drop-target");
    const away = onOut ? onOut(drag.id, e.clientX, e.clientY, true) : false;
    drag.target = away ? null : cardAt(e.clientX, e.clientY);
    drag.target?.classList.add("drop-target");
  });
  const end = (e) => {
    if (!drag || e.pointerId !== drag.pointer) return;
    const { el, id, moving, target } = drag;
    drag = null;
    if (!moving) return;
    el.classList.remove("dragging");
    el.style.translate = "";
    target?.classList.remove("drop-target");
    dragged = true;
    if (e.type === "pointercancel") { onOut?.(id, -1, -1, true); return; }
    if (onOut && onOut(id, e.clientX, e.clientY, false)) return;
    if (!target) return;
    const r = target.getBoundingClientRect();
    const rtl = getComputedStyle(row).direction === "rtl";
    const after = (e.clientX > r.left + r.width / 2) !== rtl;
    onDrop(id, target.dataset.card, after);
  };
  row.addEventListener("pointerup", end);
  row.addEventListener("pointercancel", end);
}

/**
 * A finger pressed on a card of `el` moves the card, not the page: its touch moves are
 * cancelled while `pressed()`. `touch-action: none` alone stops the scroll, but Chrome
 * still starts a fling when a quick drag ends, and takes the next tap in the fling's
 * second or so for a tap that stops it: no click (a card flicked onto the pile, then the
 * next card tapped at once, was not picked). The pointer events, which the drag uses,
 * come before the touch events and go on as they were.
 * @param {HTMLElement} el @param {() => boolean} pressed
 */
function keepTouchMoves(el, pressed) {
  el.addEventListener("touchmove", (e) => { if (pressed() && e.cancelable) e.preventDefault(); }, { passive: false });
}

/** Whether the point is over `el` (or within `margin` pixels of it). */
export function inside(el, x, y, margin = 0) {
  const r = el.getBoundingClientRect();
  return x >= r.left - margin && x <= r.right + margin && y >= r.top - margin && y <= r.bottom + margin;
}

/**
 * The discard pile's card dragged with a finger or a mouse: `onDrop(x, y, hover)`
 * outlines the place under it while it moves and, at the drop, returns true when
 * that was a move. Added once to the pile's box (its card changes, the box stays);
 * each call gives the drawing's latest handler. A press that does not move is the
 * card's click.
 */
export function dragPileCard(box, onDrop) {
  box.sahratPileDrop = onDrop;
  if (box.sahratPileDrag) return;
  box.sahratPileDrag = true;
  let drag = null, dragged = false;
  box.addEventListener("click", (e) => {
    if (dragged) { dragged = false; e.stopPropagation(); e.preventDefault(); }
  }, { capture: true });
  box.addEventListener("pointerdown", (e) => {
    dragged = false;
    const el = e.target.closest("[data-card]");
    if (!el || e.button > 0) return;
    drag = { el, x: e.clientX, y: e.clientY, pointer: e.pointerId, moving: false };
  });
  keepTouchMoves(box, () => !!drag);
  box.addEventListener("pointermove", (e) => {
    if (!drag || e.pointerId !== drag.pointer) return;
    const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    if (!drag.moving) {
      if (Math.hypot(dx, dy) < 8) return;
      drag.moving = true;
      drag.el.setPointerCapture(e.pointerId);
      drag.el.classList.add("dragging");
    }
    drag.el.style.translate = `${dx}px ${dy}px`;
    box.sahratPileDrop(e.clientX, e.clientY, true);
  });
  const end = (e) => {
    if (!drag || e.pointerId !== drag.pointer) return;
    const { el, moving } = drag;
    drag = null;
    if (!moving) return;
    el.classList.remove("dragging");
    el.style.translate = "";
    dragged = true;
    if (e.type === "pointercancel") box.sahratPileDrop(-1, -1, true);
    else box.sahratPileDrop(e.clientX, e.clientY, false);
  };
  box.addEventListener("pointerup", end);
  box.addEventListener("pointercancel", end);
}

// The last tap on a card of the hand: a second one on the same card soon after is a double tap.
let lastTap = { card: "", at: 0 };

/** Whether this click on `card` is the second of a double tap: the browser counts it so
 * (`detail` 2; a phone may send no click for the first tap then), or it follows a tap on
 * the same card closely. A click from the keyboard (detail 0: Enter, Space) never is:
 * two presses pick and unpick the card. */
export function doubleTap(card, event) {
  const now = Date.now();
  const pointer = !!event && event.detail > 0;
  const second = pointer && (event.detail >= 2 || (lastTap.card === card && now - lastTap.at < 450));
  lastTap = second || !pointer ? { card: "", at: 0 } : { card, at: now };
  return second;
}

/** Put `card` just before or after `target` in `order`. */
export function moveCard(order, card, target, after) {
  const out = order.filter((c) => c !== card);
  const at = out.indexOf(target);
  if (at < 0) return order;
  out.splice(after ? at + 1 : at, 0, card);
  return out;
}

export const isJoker = (card) => parse(card).joker;
