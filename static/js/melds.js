// Konkan melds found in a hand, with the page's copy of the engine's meld check
// (cards.js konkanMeld): the groups the hint outlines, the table melds a card
// would fit, and the lay-downs that could take the discard in one tap.
import { konkanMeld, parse } from "./cards.js";

/** Every k-card subset of `items` (k ≤ 4 here: a 15-card hand gives under 2,000). */
function* subsets(items, k, start = 0, acc = []) {
  if (acc.length === k) { yield acc; return; }
  for (let i = start; i <= items.length - (k - acc.length); i++) yield* subsets(items, k, i + 1, [...acc, items[i]]);
}

/** The orders worth trying for a joker: first (extends a run below) or last (above). */
function orders(cards) {
  const jokers = cards.filter((c) => parse(c).joker);
  if (!jokers.length) return [cards];
  const rest = cards.filter((c) => !parse(c).joker);
  return [[...jokers, ...rest], [...rest, ...jokers]];
}

const signature = (cards) => cards.map((c) => parse(c).face).sort().join();

/** Valid melds of `size` 3..maxSize from `cards`, optionally all containing `must`. */
export function findMelds(cards, { must = null, aceValue = "always_11", maxSize = 5 } = {}) {
  const pool = must ? cards.filter((c) => c !== must) : cards;
  const seen = new Set(), found = [];
  for (let size = 3; size <= maxSize; size++) {
    const pick = must ? size - 1 : size;
    if (pick > pool.length) break;
    for (const sub of subsets(pool, pick)) {
      for (const meld of orders(must ? [must, ...sub] : sub)) {
        const info = konkanMeld(meld, aceValue);
        if (!info.ok) continue;
        const sig = signature(meld) + info.jokerFor.join();
        if (seen.has(sig)) continue;
        seen.add(sig);
        found.push({ cards: meld, value: info.value });
      }
    }
  }
  return found;
}

/** Disjoint melds covering as much of the hand as a greedy pick can (largest first). */
export function meldGroups(hand, aceValue) {
  const candidates = findMelds(hand, { aceValue })
    .sort((a, b) => b.cards.length - a.cards.length || b.value - a.value);
  const used = new Set(), groups = [];
  for (const meld of candidates) {
    if (meld.cards.some((c) => used.has(c))) continue;
    meld.cards.forEach((c) => used.add(c));
    groups.push(meld);
  }
  return groups;
}

/** Up to three disjoint melds from `candidates` worth `need` together (the fewest that do). */
function reachTarget(candidates, need, depth = 3) {
  const byValue = [...candidates].sort((a, b) => b.value - a.value);
  for (let most = 1; most <= depth; most++) {
    const found = search(byValue, need, most, 0, [], new Set());
    if (found) return found;
  }
  return null;
}

function search(list, need, left, start, picked, used) {
  if (need <= 0) return picked;
  if (!left) return null;
  for (let i = start; i < list.length; i++) {
    const m = list[i];
    if (m.value * left < need) break;  // sorted by value: nothing further can reach it
    if (m.cards.some((c) => used.has(c))) continue;
    const next = new Set([...used, ...m.cards]);
    const found = search(list, need - m.value, left - 1, i + 1, [...picked, m], next);
    if (found) return found;
  }
  return null;
}

/** A table meld with each joker replaced by the card it stands for: a joker keeps its place. */
function withStandIns(meld) {
  const stand = [...(meld.joker_for || [])];
  return meld.cards.map((c) => (parse(c).joker && stand.length ? stand.shift() : c));
}

/** The ids of the table melds `card` could be laid off on. A joker keeps the place it
 * stands for (the card it stands for is a swap, not a lay-off: RULES §1.4). */
export function fittingMelds(card, melds, aceValue) {
  const face = parse(card).face;
  return melds.filter((m) => {
    if ((m.joker_for || []).includes(face)) return false;
    const real = withStandIns(m);
    return konkanMeld([...real, card], aceValue).ok || konkanMeld([card, ...real], aceValue).ok;
  }).map((m) => m.id);
}

/**
 * Ways to take the discard top now, each a whole take_discard action with a
 * label total: a new meld using the card (plus, before opening, the hand's
 * other melds until the opening target is reached), or once opened a lay-off
 * of it on a table meld. Best first, at most `limit`.
 */
export function discardProposals(v, seat, target, limit = 4) {
  const top = v.discard_top;
  const hand = v.hand || [];
  if (!top) return [];
  const aceValue = v.options.ace_value;
  const opened = v.opened[seat];
  const out = [];
  const keepsADiscard = (laid) => hand.filter((c) => !laid.has(c)).some((c) => !parse(c).joker);
  for (const meld of findMelds([...hand, top], { must: top, aceValue })) {
    const melds = [meld.cards];
    let total = meld.value;
    if (!opened && total < target) {
      const rest = hand.filter((c) => !meld.cards.includes(c));
      const extra = reachTarget(findMelds(rest, { aceValue }), target - total);
      if (!extra) continue;
      for (const m of extra) { melds.push(m.cards); total += m.value; }
    }
    if (!keepsADiscard(new Set(melds.flat()))) continue;
    out.push({ action: { type: "take_discard", melds }, total, cards: melds });
  }
  if (opened) {
    for (const id of fittingMelds(top, v.melds, aceValue)) {
      out.push({ action: { type: "take_discard", lay_offs: [{ meld: id, cards: [top] }] }, total: 0, meld: id });
    }
  }
  const seen = new Set();
  return out.filter((p) => {
    const key = JSON.stringify((p.cards || []).map(signature)) + (p.meld ?? "");
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  }).sort((a, b) => (b.cards?.flat().length || 0) - (a.cards?.flat().length || 0) || b.total - a.total).slice(0, limit);
}

/**
 * The lay-down that puts the most cards on the table now (the higher total between
 * equals): disjoint new melds from `hand` — reaching `target` when the seat has not
 * opened — and, once opened, single cards laid off on the table's melds. A card is
 * always kept to discard. Null when there is none.
 * @param {string[]} hand
 * @param {{ melds: { id: number, cards: string[] }[], opened: boolean[], options: { ace_value: string } }} v
 * @param {number} seat
 * @param {number} target
 * @returns {{ melds: string[][], lay_offs: { meld: number, cards: string[] }[] } | null}
 */
export function bestLayDown(hand, v, seat, target) {
  const aceValue = v.options.ace_value;
  const opened = v.opened[seat];
  const candidates = findMelds(hand, { aceValue, maxSize: 6 })
    .sort((a, b) => b.cards.length - a.cards.length || b.value - a.value);
  const keepsADiscard = (used) => hand.some((c) => !used.has(c) && !parse(c).joker);
  let best = null, bestCards = 0, bestValue = 0, steps = 0;
  // Depth-first over disjoint picks (at most four melds), bounded: a hand gives a few dozen melds.
  const walk = (start, picked, used, cards, value) => {
    if (++steps > 40_000) return;
    if (picked.length && (opened || value >= target) && keepsADiscard(used)
      && (cards > bestCards || (cards === bestCards && value > bestValue))) {
      best = picked; bestCards = cards; bestValue = value;
    }
    if (picked.length === 4) return;
    for (let i = start; i < candidates.length; i++) {
      const m = candidates[i];
      if (m.cards.some((c) => used.has(c))) continue;
      walk(i + 1, [...picked, m], new Set([...used, ...m.cards]), cards + m.cards.length, value + m.value);
    }
  };
  walk(0, [], new Set(), 0, 0);
  const melds = best ? /** @type {{ cards: string[] }[]} */ (best).map((m) => m.cards) : [];
  const used = new Set(melds.flat());
  const layOffs = [];
  if (opened) {
    // One card per table meld: a second one's fit would depend on the first.
    const taken = new Set();
    for (const card of hand) {
      if (used.has(card)) continue;
      const id = fittingMelds(card, v.melds, aceValue).find((m) => !taken.has(m));
      if (id === undefined) continue;
      used.add(card);
      if (!keepsADiscard(used)) { used.delete(card); continue; }
      taken.add(id);
      layOffs.push({ meld: id, cards: [card] });
    }
  }
  if (!melds.length && !layOffs.length) return null;
  return { melds, lay_offs: layOffs };
}
