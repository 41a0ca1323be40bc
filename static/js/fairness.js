// Provably fair shuffles (docs/fairness.md): each round's commitment is shown when it is
// dealt, and its seed and salt are revealed when it ends. The round-end summary checks
// in the browser that SHA-256(salt ":" seed) is the commitment this page was shown and,
// when this page saw the deal, that the seed's deck order dealt it exactly its cards.
import { h } from "./dom.js";
import { t } from "./i18n.js";

const shown = new Map();  // "match:round" → the commitment this page was shown at the deal
const deals = new Map();  // "match:round" → what this page saw dealt: dealer, redeal, own cards
const checked = new Map();  // "match:round" → the promise of its check's outcome
/** @type {string | null} the deal this page saw last ("match:round"): its own cards come next */
let latestDeal = null;
let match = null;  // the match on screen: its table's seed_commitment
// Every check's outcome, newest last (for the curious, and for the browser tests).
globalThis.sahratFairness = globalThis.sahratFairness || [];

const RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K"];
const SUITS = ["S", "H", "D", "C"];
const LIMIT = 1n << 64n;

/** The deck in its canonical order (sahrat.rules.cards): suit by suit, A..K, twice for
 *  Konkan (the second copy primed) and its two jokers; Conquian has no 8, 9 or 10. */
function canonicalDeck(game) {
  if (game === "conquian") {
    return SUITS.flatMap((s) => RANKS.filter((r) => !"89T".includes(r)).map((r) => r + s));
  }
  const deck = [];
  for (const copy of ["", "'"]) for (const s of SUITS) for (const r of RANKS) deck.push(r + s + copy);
  return [...deck, "JK", "JK'"];
}

/** SHA-256 in counter mode, as rules/rng.py: block i is SHA-256(label "#" i), read as
 *  four big-endian 64-bit numbers; a number below n by rejection. */
class SeedStream {
  constructor(label) { this.label = label; this.counter = 0; this.numbers = []; }

  async next64() {
    if (!this.numbers.length) {
      const digest = await crypto.subtle.digest(
        "SHA-256", new TextEncoder().encode(`${this.label}#${this.counter}`));
      this.counter += 1;
      const data = new DataView(digest);
      this.numbers = [0, 8, 16, 24].map((i) => data.getBigUint64(i, false));
    }
    return this.numbers.shift();
  }

  async randrange(n) {
    const big = BigInt(n);
    const cutoff = LIMIT - (LIMIT % big);
    for (;;) {
      const x = await this.next64();
      if (x < cutoff) return Number(x % big);
    }
  }
}

/** The round's deck order from its revealed seed: Fisher–Yates from the last card down. */
export async function dealtOrder(game, roundSeed, redeal) {
  const order = canonicalDeck(game);
  const stream = new SeedStream(`${roundSeed}/deal/${redeal}`);
  for (let i = order.length - 1; i > 0; i -= 1) {
    const j = await stream.randrange(i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

/** The cards the order deals to ``seat``: Conquian 10 to the non-dealer then 10 to the
 *  dealer; Konkan 15 to the dealer's right, then 14 each around the table. */
export function handFrom(order, deal) {
  if (deal.game === "conquian") {
    return deal.seat === 1 - deal.dealer ? order.slice(0, 10) : order.slice(10, 20);
  }
  const opener = (deal.dealer + 1) % deal.players;
  let position = 0;
  for (let offset = 0; offset < deal.players; offset += 1) {
    const size = offset === 0 ? 15 : 14;
    if ((opener + offset) % deal.players === deal.seat) return order.slice(position, position + size);
    position += size;
  }
  return [];
}

/** Remember what a deal gave this page (events from live updates and resumes). */
export function noteEvent(ev, st) {
  const round = ev.round ?? ev.deal;
  if (ev.type === "deal") {
    const key = `${match}:${round}`;
    const earlier = deals.get(key);
    deals.set(key, {
      game: st.view?.game === "conquian" ? "conquian" : "konkan",
      players: st.view?.hand_counts?.length ?? 2,
      seat: st.seat,
      dealer: ev.dealer,
      redeal: earlier && ev.round !== undefined ? earlier.redeal + 1 : 0,
      cards: null,
      round,
    });
    latestDeal = key;
  } else if (ev.type === "dealt" && Array.isArray(ev.cards) && latestDeal) {
    const deal = deals.get(latestDeal);
    if (deal && ev.seat === deal.seat) deal.cards = ev.cards;
  }
}

/** Remember the current round's commitment (called whenever the table is drawn). */
export function noteCommitment(st) {
  match = st.info?.seed_commitment ?? null;
  const v = st.view;
  if (v?.round_commitment) shown.set(`${match}:${v.round ?? v.deal}`, v.round_commitment);
}

// The technical words of a phrase ({sha}, {https}, {cmd} in the catalogues), each in a
// left-to-right isolate: inside an Arabic sentence "SHA-256" would otherwise read
// "256-SHA" and carry the parentheses around it to the wrong side.
const TERMS = { sha: "SHA-256", https: "HTTPS", cmd: "sahrat verify" };

export function phrase(key) {
  return t(key).split(/\{(\w+)\}/).map((part, i) => (i % 2
    ? h(part === "cmd" ? "code.term" : "bdi.term", { dir: "ltr", lang: "en" }, TERMS[part] ?? part)
    : part));
}

async function sha256Hex(text) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Check the revealed seed and salt against the commitment and, when this page saw
 *  the deal, the cards it was dealt against the deck the seed gives. */
async function check(ev, atDeal, deal) {
  const hex = await sha256Hex(`${ev.round_salt}:${ev.round_seed}`);
  if (hex !== ev.round_commitment || (atDeal && atDeal !== ev.round_commitment)) {
    return { ok: false, key: "fair.mismatch" };
  }
  if (deal?.cards && deal.seat !== null && deal.seat !== undefined) {
    const order = await dealtOrder(deal.game, ev.round_seed, deal.redeal);
    const expected = handFrom(order, deal).slice().sort();
    if (JSON.stringify(expected) !== JSON.stringify(deal.cards.slice().sort())) {
      return { ok: false, key: "fair.hand_mismatch" };
    }
    return { ok: true, key: "fair.hand_verified" };
  }
  return { ok: true, key: atDeal ? "fair.verified" : "fair.verified_late" };
}

// The block is drawn once per summary (it checks as it goes) and kept across redraws.
const blocks = new WeakMap();

/** The fairness block of a round_end / deal_end, made once per event. */
export function fairnessOf(ev) {
  if (!blocks.has(ev)) blocks.set(ev, fairnessBlock(ev));
  return blocks.get(ev);
}

/** The commitment, the revealed seed and salt, and the check, for a round_end / deal_end. */
export function fairnessBlock(ev) {
  if (!ev?.round_seed || !ev.round_salt || !ev.round_commitment) return null;
  const atDeal = shown.get(`${match}:${ev.round ?? ev.deal}`);
  const status = h("span.fair-status", { id: "fair-status", role: "status" }, t("fair.checking"));
  if (!globalThis.crypto?.subtle) {
    status.replaceChildren(...phrase("fair.unavailable"));
  } else {
    const round = `${match}:${ev.round ?? ev.deal}`;
    let pending = checked.get(round);
    if (!pending) {  // once per round: the summary is drawn again on every change
      pending = check(ev, atDeal, deals.get(round));
      checked.set(round, pending);
      pending.then(({ ok, key }) => {
        globalThis.sahratFairness.push({ round: ev.round ?? ev.deal, ok, check: key });
      });
    }
    pending.then(({ ok, key }) => {
      status.replaceChildren(...phrase(key));
      status.dataset.result = ok ? "verified" : "mismatch";
    });
  }
  const row = (key, value) => h("div", h("dt", t(key)), h("dd", h("code", value)));
  return h("details.fairness", { id: "fairness" },
    h("summary", t("fair.title"), ": ", status),
    h("dl",
      row("fair.commitment", atDeal || ev.round_commitment),
      row("fair.seed", ev.round_seed),
      row("fair.salt", ev.round_salt)));
}
