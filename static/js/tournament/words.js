// The words and numbers of the tournament pages: a tournament's game, format, state,
// rounds, fee and start in the reader's language; numbers and dates as the rest of the
// client writes them (Western digits in Arabic too, "ar-u-nu-latn", as the lobby and the
// profile do); placement points (exact fractions from the server) as short decimals.
import { t, getLang, has, errorText } from "../i18n.js";
import { timeLeftWords } from "../rating.js";

/** @typedef {"registering" | "running" | "complaints" | "finished" | "cancelled"} TourState */
/** @typedef {{ id: number, name: string, game: string, format: string, seats: number, rounds: number, advance: number | null, fee: number, pool: number, starts_at: string, state: TourState, registered: number, made_by: string, version: number }} Summary */
/** @typedef {{ entry: number, user_id: number | null, name: string | null, bot: boolean, rating: number | null, dropped: boolean, no_show?: boolean }} Entrant  no_show: registered, never came (no standing) */
/** @typedef {{ place: number, entry: number, name: string | null, points: string | number, match_total: number, opponents_strength: string | number, rounds_played: number, out_in_round: number | null, prize: number | null }} StandingRow */
/** @typedef {{ table_no: number, table_id: number | null, seats: number[], state: "waiting" | "playing" | "finished", places: Record<string, number> | null }} RoundTable */
/** @typedef {{ round: number, tables: RoundTable[] }} Round */
/** @typedef {{ registered: boolean, may_register: boolean, refusal: string | null }} Me */
/** @typedef {Omit<Summary, "rounds"> & { rounds: Round[] | number, round_count?: number, me: Me | null, entrants: Entrant[], standings: StandingRow[], prizes: { place: number, coins: number }[], complaint_until: string | null, complaints_open: number }} Detail */

// A Detail's `rounds` is its list of round tables, a Summary's the planned count
// (docs/tournaments.md): the count of a Detail is its `round_count`.

/** The round tables drawn so far (a Detail's `rounds`). @param {Summary | Detail} d @returns {Round[]} */
export const roundList = (d) => (Array.isArray(d.rounds) ? d.rounds : []);

/** The rounds a tournament plays (a Swiss's as made; a knock-out's from its seats). @param {Summary | Detail} d */
export function roundCount(d) {
  if ("round_count" in d && typeof d.round_count === "number") return d.round_count;
  return typeof d.rounds === "number" ? d.rounds : roundList(d).length;
}

/** The states after which nothing changes any more (the page stops asking). */
export const SETTLED = new Set(["finished", "cancelled"]);

const locale = () => (getLang() === "ar" ? "ar-u-nu-latn" : "en-GB");

/** 1234 → "1,234" in the reader's language. */
export const num = (/** @type {number} */ n) => new Intl.NumberFormat(locale()).format(n);

/** A date and time, short enough for a phone's line: "Wed 2 Dec, 19:30" (the year only
 * when it is not this one). */
export function when(/** @type {string} */ iso) {
  const date = new Date(iso);
  const year = date.getFullYear() === new Date().getFullYear() ? undefined : "numeric";
  return date.toLocaleString(locale(), { weekday: "short", day: "numeric", month: "short", year, hour: "numeric", minute: "2-digit" });
}

/** "in 12 minutes" while the start is ahead, "" once it is due. */
export function startsIn(/** @type {string} */ iso, now = Date.now()) {
  const seconds = (Date.parse(iso) - now) / 1000;
  return seconds > 0 ? t("tour.starts_in", { time: timeLeftWords(seconds) }) : "";
}

/** A fraction as the server writes it ("7/2", "-1/3", "2") or a number → a number. */
export function fraction(/** @type {string | number | null | undefined} */ value) {
  if (typeof value === "number") return value;
  if (!value) return 0;
  const [top, bottom] = String(value).split("/");
  const n = Number(top) / (bottom === undefined ? 1 : Number(bottom));
  return Number.isFinite(n) ? n : 0;
}

/** Points as "+3", "−1", "+1.5", "0" (a real minus sign; at most two decimals). */
export function pointsText(/** @type {string | number} */ value) {
  const n = Math.round(fraction(value) * 100) / 100;
  const digits = new Intl.NumberFormat(locale(), { maximumFractionDigits: 2 }).format(Math.abs(n));
  return n > 0 ? `+${digits}` : n < 0 ? `\u2212${digits}` : digits;
}

/** A plain decimal (the opponents' strength): at most one decimal. */
export const decimal = (/** @type {string | number} */ value) =>
  new Intl.NumberFormat(locale(), { maximumFractionDigits: 1 }).format(fraction(value));

export const gameName = (/** @type {string} */ game) => t(`game.${game}`);
export const formatName = (/** @type {string} */ format) => t(`tour.format.${format}`);
export const stateName = (/** @type {string} */ state) => t(`tour.state.${state}`);

/** "Knock-out · 2 go through from each table" or "Swiss · 3 rounds". */
export function formatLine(/** @type {Summary | Detail} */ s) {
  if (s.format === "swiss") return `${formatName("swiss")} · ${t("tour.rounds_n", { n: num(roundCount(s)) })}`;
  const through = s.game === "conquian" ? 1 : s.advance || 1;
  return `${formatName("knockout")} · ${t(through === 1 ? "tour.advance_one" : "tour.advance_n", { n: num(through) })}`;
}

/** The entry: "Free" or "Entry 50 coins". */
export const feeText = (/** @type {number} */ fee) => (fee > 0 ? t("tour.fee_n", { n: num(fee) }) : t("tour.free"));

/** A round's name: the last round of a knock-out is the final, the one before it (when
 * it has two tables) the semi-final; every other round by its number. */
export function roundName(/** @type {Summary | Detail} */ s, /** @type {number} */ round, tablesInRound = 0) {
  const rounds = roundCount(s);
  if (s.format === "knockout" && rounds > 1) {
    if (round === rounds) return t("tour.final");
    if (round === rounds - 1 && tablesInRound === 2) return t("tour.semi_final");
  }
  return t("tour.round_n", { n: num(round) });
}

// English ordinals ("21st", "22nd", "13th"): the catalogues have a phrase for each of
// English's ordinal kinds (Arabic says "المركز 21" for all four).
const ordinals = new Intl.PluralRules("en", { type: "ordinal" });

/** A place as words: "1st" … "4th" ("الأول" … "الرابع"), then "21st" ("المركز 21"). */
export const placeWords = (/** @type {number} */ place) =>
  (place >= 1 && place <= 4 ? t(`history.ord_${place}`) : t(`tour.ord.${ordinals.select(place)}`, { n: num(place) }));

/** An entrant's name; a bot's in the reader's language, numbered in the order of the
 * tournament's bots ("بوت 2"), whatever the server named it.
 * @param {Detail} d @param {{ entry: number, name: string | null, bot?: boolean }} e */
export function entrantName(d, e) {
  const bot = e.bot ?? d.entrants.find((x) => x.entry === e.entry)?.bot;
  if (!bot && e.name) return e.name;
  const bots = d.entrants.filter((x) => x.bot).map((x) => x.entry);
  const n = bots.indexOf(e.entry) + 1;
  return t("tour.bot_n", { n: num(n || e.entry) });
}

/** A refusal to register in words: a tournament's own words where the table's would
 * mislead ("not enough coins for the stake"), else the code's usual words. */
export function refusalText(/** @type {any} */ detail) {
  const code = detail?.code;
  return code && has(`tour.refusal.${code}`) ? t(`tour.refusal.${code}`) : errorText(detail);
}
