// Engine events and record actions in words, for the move log and the replay viewer.
import { t, has } from "./i18n.js";
import { label, spoken } from "./cards.js";

// Card names are wrapped in a left-to-right isolate so "10♥ J♥ Q♥" reads the same in Arabic.
const iso = (text) => `\u2066${text}\u2069`;
const cards = (list) => iso((list || []).map(label).join(" "));
// Spoken (a screen reader's line), cards are words: «9 بستوني، 10 بستوني».
const named = (card, say) => (say ? spoken(card) : iso(label(card)));
const cardList = (list, say) => (say ? (list || []).map(spoken).join(t("seat.sep")) : cards(list));

/** The words for a seat that does something: its name, and whether it is the reader's
 *  own (nameOf.mine, where the page has a seat), so the phrase can say "you" (see t()). */
export const subject = (nameOf, seat) => ({ who: nameOf(seat), mine: Boolean(nameOf.mine?.(seat)) });

/**
 * A table meld in words, never its number: "Sara's meld 7♥ 8♥ 9♥" ("your meld …" for
 * my own). `nameOf.meld(id)` (the table's, where the page knows the melds) finds it; a
 * meld not known here (a replay's line) is named by its place on the table.
 * @param {number} id
 * @param {any} [nameOf]
 * @param {string[]} [shown]  the meld's cards as they are after the move, when known
 * @param {boolean} [say]  for a screen reader: the cards in words
 */
export function meldWords(id, nameOf, shown, say = false) {
  const meld = nameOf?.meld?.(id);
  const list = shown || meld?.cards;
  if (meld && nameOf) return t("meld.words", { ...subject(nameOf, meld.owner), cards: cardList(list, say) });
  return list ? t("meld.cards", { cards: cardList(list, say) }) : t("meld.numbered", { n: id });
}

/** One line for an engine event, or null for events not worth a line (e.g. "dealt");
 *  `say`: the line a screen reader speaks, its cards in words. */
export function describeEvent(ev, nameOf, say = false) {
  const seated = ev.seat === null || ev.seat === undefined ? { who: "" } : subject(nameOf, ev.seat);
  const p = { ...seated, card: ev.card ? named(ev.card, say) : "", cards: cardList(ev.cards || ev.added || ev.laid, say) };
  switch (ev.type) {
    case "draw": return ev.card ? t("ev.draw_card", p) : t("ev.draw", p);
    case "take_discard": return t("ev.take_discard", p);
    case "open": return t("ev.open", { ...p, total: ev.total });
    case "meld": return t("ev.meld", p);
    // The meld as it is after the move: the event carries its cards.
    case "lay_off": return t("ev.lay_off", { ...p, cards: cardList(ev.added, say), meld: meldWords(ev.id, nameOf, ev.cards, say) });
    case "swap_joker": return t("ev.swap_joker", { ...p, cards: cardList(ev.given, say), meld: meldWords(ev.id, nameOf, ev.cards, say) });
    case "discard": return t("ev.discard", p);
    case "commit": return t("ev.commit", p);
    case "redeal": return t("ev.redeal", p);
    case "end_turn": return t("ev.end_turn", p);
    // The end of the stock, as what happened: a Konkan reshuffle (one of the table's
    // few), a Konkan round over with no winner, a Conquian deal drawn (it has no reshuffle).
    case "reshuffle": return t("ev.reshuffle", p);
    case "stock_exhausted": return t(ev.reshuffles === undefined ? "ev.stock_out_deal" : "ev.stock_out_round", p);
    case "turn_limit": return t("ev.turn_limit", { turns: ev.turns });
    case "round_end": return t("ev.round_end", { round: ev.round });
    case "deal": return ev.round ? t("ev.deal_round", { round: ev.round }) : t("ev.deal");
    case "turn_up": return t("ev.turn_up", p);
    case "take": return t(ev.forced ? "ev.take_forced" : "ev.take", p);
    case "refuse": return t("ev.refuse", p);
    case "pass": return t("ev.pass", p);
    case "force_question": return t("ev.force_question", { ...p, ...subject(nameOf, ev.player) });
    case "force": return t("ev.force", p);
    case "decline_force": return t("ev.decline_force", p);
    case "deal_end": return ev.finish === "draw" ? t("ev.deal_draw") : t("ev.deal_win", seated);
    case "match_end": return ev.winner === null ? t("ev.match_end") : t("ev.match_won", subject(nameOf, ev.winner));
    default: return null;
  }
}

// A move's melds and lay-offs: "7♥ 8♥ 9♥ | Q♠ Q♥ Q♦ ; 5♣ on Sara's meld 2♣ 3♣ 4♣".
function laid(a, nameOf) {
  const melds = (a.melds || []).map(cards).join(" | ");
  const offs = (a.lay_offs || []).map((l) => t("meld.lay_off", { cards: cards(l.cards), meld: meldWords(l.meld, nameOf) })).join("، ");
  return [melds, offs].filter(Boolean).join(" ; ");
}

/** One line for a recorded action ({seat, type, ...}) in the replay viewer. */
export function describeAction(a, nameOf) {
  const p = { ...subject(nameOf, a.seat), card: a.card ? iso(label(a.card)) : "" };
  const rest = laid(a, nameOf);
  switch (a.type) {
    case "draw": return t("ev.draw", p);
    case "take_discard": return t("act.take_discard", { ...p, rest });
    case "lay_down": return t("act.lay_down", { ...p, rest });
    case "swap_joker": return t("act.swap_joker", { ...p, meld: meldWords(a.meld, nameOf), cards: cards(a.cards) });
    case "take": return t("act.take", { ...p, rest });
    default: return describeEvent({ ...a, seat: a.seat }, nameOf) || `${p.who}: ${a.type}`;
  }
}

/** A suggested move (the expert's hint for this seat) as what to do, not what was done;
 *  a meld it names is named by its owner and cards (`nameOf.meld`, see meldWords). */
export function describeSuggestion(a, nameOf) {
  const rest = laid(a, nameOf);
  const p = { card: a.card ? iso(label(a.card)) : "", rest, meld: a.meld === undefined ? "" : meldWords(a.meld, nameOf), cards: cards(a.cards) };
  const key = `hint.${a.type === "take_discard" && !rest ? "take_discard_alone" : a.type}`;
  return t("hint.line", { move: has(key) ? t(key, p) : a.type });
}

/**
 * A seat as one sentence, for a screen reader (the seat's aria-label): who sits there,
 * their cards and score, whether it is their turn, how they are connected.
 * «سارة، بوت، الأوراق في اليد: 14، المجموع 12، دورها الحين» / "Sara, bot, 14 cards in
 * hand, total 12, their turn now".
 * @param {{ seat: number, user_id: number | null, bot: boolean, connected: boolean, away: boolean, left: boolean }} s
 * @param {any} vw  the game's view, or null before the deal
 * @param {any} nameOf
 * @param {string} name  the seat's name as the page shows it
 * @param {boolean} turn
 */
export function seatSentence(s, vw, nameOf, name, turn) {
  const who = subject(nameOf, s.seat);
  const parts = [name];
  if (s.bot) parts.push(t("table.bot"));
  if (s.left) parts.push(t("table.left"));
  else if (s.user_id !== null && s.away) parts.push(t("table.away"));
  else if (s.user_id !== null && !s.connected) parts.push(t("table.offline"));
  const count = vw?.hand_counts?.[s.seat];
  if (count !== undefined) parts.push(t("seat.cards", { n: count }));
  if (vw?.totals) parts.push(t("seat.total", { n: vw.totals[s.seat] }));
  if (vw?.points) parts.push(t("seat.points", { n: vw.points[s.seat] }));
  if (vw?.opened?.[s.seat]) parts.push(t("seat.opened", who));
  if (vw?.committed?.[s.seat]) parts.push(t("seat.committed", who));
  if (turn) parts.push(t("seat.turn", who));
  return parts.join(t("seat.sep"));
}
