// Engine events and record actions in words, for the move log and the replay viewer.
import { t, has } from "./i18n.js";
import { label } from "./cards.js";

// Card names are wrapped in a left-to-right isolate so "10♥ J♥ Q♥" reads the same in Arabic.
const iso = (text) => `\u2066${text}\u2069`;
const cards = (list) => iso((list || []).map(label).join(" "));

/** The words for a seat that does something: its name, and whether it is the reader's
 *  own (nameOf.mine, where the page has a seat), so the phrase can say "you" (see t()). */
export const subject = (nameOf, seat) => ({ who: nameOf(seat), mine: Boolean(nameOf.mine?.(seat)) });

/** One line for an engine event, or null for events not worth a line (e.g. "dealt"). */
export function describeEvent(ev, nameOf) {
  const seated = ev.seat === null || ev.seat === undefined ? { who: "" } : subject(nameOf, ev.seat);
  const p = { ...seated, card: ev.card ? iso(label(ev.card)) : "", cards: cards(ev.cards || ev.added || ev.laid) };
  switch (ev.type) {
    case "draw": return ev.card ? t("ev.draw_card", p) : t("ev.draw", p);
    case "take_discard": return t("ev.take_discard", p);
    case "open": return t("ev.open", { ...p, total: ev.total });
    case "meld": return t("ev.meld", p);
    case "lay_off": return t("ev.lay_off", p);
    case "swap_joker": return t("ev.swap_joker", p);
    case "discard": return t("ev.discard", p);
    case "commit": return t("ev.commit", p);
    case "redeal": return t("ev.redeal", p);
    case "end_turn": return t("ev.end_turn", p);
    case "reshuffle": case "stock_exhausted": return t("ev.reshuffle", p);
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

// A move's melds and lay-offs: "7♥ 8♥ 9♥ | Q♠ Q♥ Q♦ ; #2+5♣".
function laid(a) {
  const melds = (a.melds || []).map(cards).join(" | ");
  const offs = (a.lay_offs || []).map((l) => iso(`#${l.meld}+${cards(l.cards)}`)).join(" ");
  return [melds, offs].filter(Boolean).join(" ; ");
}

/** One line for a recorded action ({seat, type, ...}) in the replay viewer. */
export function describeAction(a, nameOf) {
  const p = { ...subject(nameOf, a.seat), card: a.card ? iso(label(a.card)) : "" };
  const rest = laid(a);
  switch (a.type) {
    case "draw": return t("ev.draw", p);
    case "take_discard": return t("act.take_discard", { ...p, rest });
    case "lay_down": return t("act.lay_down", { ...p, rest });
    case "swap_joker": return t("act.swap_joker", { ...p, meld: a.meld, cards: cards(a.cards) });
    case "take": return t("act.take", { ...p, rest });
    default: return describeEvent({ ...a, seat: a.seat }, nameOf) || `${p.who}: ${a.type}`;
  }
}

/** A suggested move (the expert's hint for this seat) as what to do, not what was done. */
export function describeSuggestion(a) {
  const rest = laid(a);
  const p = { card: a.card ? iso(label(a.card)) : "", rest, meld: a.meld, cards: cards(a.cards) };
  const key = `hint.${a.type === "take_discard" && !rest ? "take_discard_alone" : a.type}`;
  return t("hint.line", { move: has(key) ? t(key, p) : a.type });
}
