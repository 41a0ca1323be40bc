// Cards that move: each drawing of the table is compared with the one before (FLIP: the
// First place, the Last, Invert, Play). A card that was on the screen glides from where
// it was (my hand to the discard pile, the pile to a meld, a card sorted into its place);
// a card that comes from where nobody sees (a draw, the deal, another seat's discard or
// lay-down) glides from the stock or from its player's seat; another seat's draw is a
// card back flying from the stock to the seat. Nothing moves under
// prefers-reduced-motion (the Web Animations are not started at all).
//
// A page that opens on a table already playing (quick play, a reload, a link) has seen no
// deal: its first drawing deals the hand from the stock only when the round (deal) has
// had no move yet (`justDealt`), which is what the player would have seen. Later in a
// round it does not: those cards were dealt long ago, and some were drawn or taken since;
// a deal gliding in then would show one that did not happen.

/** @typedef {import("./ctrl.js").TableCtrl} TableCtrl */
/** @typedef {import("./protocol.js").GameEvent} GameEvent */

// The places where cards are drawn face up, in the order a card found twice is taken from.
const PLACES = "#hand [data-card], #discard-pile [data-card], #face-up [data-card], #table-melds [data-card], #staging [data-card]";
const DURATION = 320;

const still = () => !window.matchMedia || window.matchMedia("(prefers-reduced-motion: reduce)").matches;

/** Whether `view` shows a round (deal) that nobody has moved in yet: its hands just dealt.
 * Konkan: nothing discarded or laid down; Conquian: the first card turned up, nothing
 * buried or laid down. @param {any} view */
export function justDealt(view) {
  if (!view?.hand?.length || view.match_over) return false;
  if (view.game === "konkan") return view.discard_count === 0 && !view.melds.length;
  if (view.game === "conquian") {
    return view.dead_count === 0 && view.face_up_how === "turned_up" && view.melds.every((/** @type {string[][]} */ m) => !m.length);
  }
  return false;
}

/** Where each card is drawn now, by its id. @returns {Map<string, DOMRect>} */
export function cardPlaces(/** @type {HTMLElement} */ root) {
  const out = new Map();
  if (still()) return out;
  for (const el of root.querySelectorAll(PLACES)) {
    const id = /** @type {HTMLElement} */ (el).dataset.card || "";
    if (!out.has(id)) out.set(id, el.getBoundingClientRect());
  }
  return out;
}

/** The rectangle of the first element `selector` finds, or null. */
function rectOf(/** @type {HTMLElement} */ root, /** @type {string} */ selector) {
  const el = root.querySelector(selector);
  return el ? el.getBoundingClientRect() : null;
}

/** @param {Element} el @param {DOMRect} from @param {number} delay */
function glide(el, from, delay = 0) {
  const to = el.getBoundingClientRect();
  const dx = from.left + from.width / 2 - (to.left + to.width / 2);
  const dy = from.top + from.height / 2 - (to.top + to.height / 2);
  if (Math.hypot(dx, dy) < 3 || !to.width) return;
  const scale = from.width && to.width ? Math.max(.5, Math.min(2, from.width / to.width)) : 1;
  el.animate([{ transform: `translate(${dx}px, ${dy}px) scale(${scale})` }, { transform: "none" }],
    { duration: DURATION, delay, easing: "cubic-bezier(.2,.7,.3,1)", fill: "backwards" });
}

/** A card back flying from `from` to `to` (a move nobody sees the face of), then gone. */
function flyBack(/** @type {DOMRect} */ from, /** @type {DOMRect} */ to) {
  const el = document.createElement("span");
  el.className = "card back flying";
  el.setAttribute("aria-hidden", "true");
  Object.assign(el.style, { position: "fixed", left: `${from.left}px`, top: `${from.top}px`, zIndex: "20", pointerEvents: "none" });
  document.body.append(el);
  const dx = to.left + to.width / 2 - (from.left + from.width / 2);
  const dy = to.top + to.height / 2 - (from.top + from.height / 2);
  el.animate([{ transform: "none", opacity: 1 }, { transform: `translate(${dx}px, ${dy}px) scale(.5)`, opacity: .3 }],
    { duration: DURATION + 80, easing: "ease-in" }).finished.then(() => el.remove(), () => el.remove());
}

/**
 * After a drawing: every card that moved glides from its old place, every card that came
 * from out of sight from where it came from (`events`: the update's, if any).
 * @param {HTMLElement} root @param {Map<string, DOMRect>} before @param {GameEvent[]} events @param {number | null} me
 */
export function animateMoves(root, before, events, me) {
  if (still() || (!before.size && !events.length)) return;
  const stock = rectOf(root, "#stock");
  const seatRect = (/** @type {number | null | undefined} */ seat) =>
    (seat === null || seat === undefined ? null : rectOf(root, `#seats .seat[data-seat="${seat}"]`));
  const dealt = events.some((ev) => ev.type === "deal");
  // Who brought the cards that are new on the table: the seat of the update's move.
  const mover = [...events].reverse().find((ev) => ev.seat !== null && ev.seat !== undefined)?.seat ?? null;
  let n = 0;
  const seen = new Set();
  for (const el of root.querySelectorAll(PLACES)) {
    const id = /** @type {HTMLElement} */ (el).dataset.card || "";
    if (seen.has(id)) continue;
    seen.add(id);
    const was = before.get(id);
    if (was) { glide(el, was); continue; }
    if (!events.length) continue;
    const inHand = !!el.closest("#hand");
    // New in my hand: drawn from the stock (the whole hand at the deal, one after another).
    if (inHand && stock) { glide(el, stock, dealt ? 25 * n++ : 0); continue; }
    const turnedUp = events.some((ev) => ev.type === "turn_up");
    const from = (turnedUp ? stock : seatRect(mover === me ? null : mover)) || stock;
    if (from && !inHand) glide(el, from);
  }
  // Another seat drew from the stock: a card back goes to it.
  for (const ev of events) {
    if (ev.type !== "draw" || ev.seat === me || ev.seat === null || ev.seat === undefined) continue;
    const to = seatRect(ev.seat);
    if (stock && to) flyBack(stock, to);
  }
}
