// A tournament's tables, drawn as patched views (view.js's `v`): the knock-out's bracket
// (its rounds side by side on a wide screen, one under the other on a phone, each table
// with who went through) and a Swiss tournament's rounds (each round's tables, the
// latest one open). Each table is one tap away: the whole box is the link to its page.
import { v } from "../view.js";
import { t } from "../i18n.js";
import { session } from "../api.js";
import { num, roundName, roundList, roundCount, placeWords, entrantName, stateName } from "./words.js";

/** @typedef {import("./words.js").Detail} Detail */
/** @typedef {import("./words.js").Round} Round */
/** @typedef {import("./words.js").RoundTable} RoundTable */

/** The entries seated in a round (a knock-out's next round: those who went through). */
const seatedIn = (/** @type {Round | undefined} */ round) => new Set((round?.tables || []).flatMap((table) => table.seats));

/**
 * Who went through from each table of `round`: those seated in the next round once it
 * is drawn; before that, a finished table's best `advance` players by place (Conquian:
 * one), a bot or a player who dropped out never among them (docs/tournaments.md: the
 * next player goes through instead). The final sends nobody on.
 * @param {Detail} d @param {Round} round
 */
function throughOf(d, round) {
  if (d.format !== "knockout" || round.round >= roundCount(d)) return new Set();
  const next = roundList(d).find((r) => r.round === round.round + 1);
  if (next) return seatedIn(next);
  const advance = d.game === "conquian" ? 1 : d.advance || 1;
  const out = new Set(d.entrants.filter((e) => e.bot || e.dropped || e.no_show).map((e) => e.entry));
  return new Set(round.tables.flatMap((table) => {
    const places = table.places;
    if (table.state !== "finished" || !places) return [];
    return table.seats.filter((entry) => !out.has(entry))
      .sort((a, b) => (places[String(a)] ?? 99) - (places[String(b)] ?? 99)).slice(0, advance);
  }));
}

/**
 * One table: its number and state, its seats (by place once it is finished), each
 * one's place and whether it went through; a link to the table's page when it exists.
 * @param {Detail} d @param {Round} round @param {RoundTable} table @param {Set<number>} through
 */
function tableBox(d, round, table, through) {
  const names = new Map(d.entrants.map((e) => [e.entry, e]));
  const mine = session.user?.id;
  const placeOf = (/** @type {number} */ entry) => table.places?.[String(entry)] ?? null;
  const seats = [...table.seats].sort((a, b) => (placeOf(a) ?? 99) - (placeOf(b) ?? 99));
  const final = d.format === "knockout" && round.round === roundCount(d);
  const body = [
    v("span.tour-table-head",
      v("strong", t("tour.table_n", { n: num(table.table_no) })),
      v(`span.badge.tour-table-${table.state}`, t(`tour.table.${table.state}`))),
    v("ol.tour-seats", seats.map((entry) => {
      const e = names.get(entry);
      const place = placeOf(entry);
      const went = through.has(entry);
      return v("li", {
        key: entry,
        class: `${e && e.user_id !== null && e.user_id === mine ? "me " : ""}${went ? "through" : ""}`,
        dataset: { entry },
      },
      v("span.tour-seat-place", place === null ? "" : placeWords(place)),
      v("bdi.tour-seat-name", entrantName(d, e || { entry, name: null, bot: true })),
      e?.bot ? v("span.badge.bot", t("table.bot")) : null,
      e?.no_show ? v("span.badge.offline", t("tour.no_show")) : e?.dropped ? v("span.badge.offline", t("tour.dropped")) : null,
      went ? v("span.tour-through", t("tour.went_through")) : null,
      final && place === 1 && table.state === "finished" ? v("span.tour-through.champion", t("tour.champion")) : null);
    })),
  ];
  const label = `${roundName(d, round.round, round.tables.length)}, ${t("tour.table_n", { n: num(table.table_no) })}: ${stateName(table.state === "finished" ? "finished" : "running")}`;
  return table.table_id === null
    ? v("div.tour-table", { key: table.table_no, dataset: { tableNo: table.table_no, state: table.state } }, body)
    : v("a.tour-table", {
      key: table.table_no, href: `#/t/${table.table_id}`, title: label,
      dataset: { table: table.table_id, tableNo: table.table_no, state: table.state },
    }, body, v("span.tour-open", openWords(d, table)));
}

/** The words of a table's link: play at my own table, watch another, open a finished one. */
function openWords(/** @type {Detail} */ d, /** @type {RoundTable} */ table) {
  if (table.state === "finished") return t("tour.open_table");
  return myTable(d) === table ? t("tour.play_table") : t("tour.watch_table");
}

/**
 * The table I am to play at now: the reader's entry seated at a table of the latest
 * round that is not finished (null: none, or not an entrant, or out).
 * @param {Detail} d @returns {RoundTable | null}
 */
export function myTable(d) {
  const mine = session.user?.id;
  const me = d.entrants.find((e) => e.user_id !== null && e.user_id === mine);
  const rounds = roundList(d);
  const latest = rounds[rounds.length - 1];
  if (!me || me.dropped || !latest) return null;
  return latest.tables.find((table) => table.table_id !== null && table.state !== "finished" && table.seats.includes(me.entry)) || null;
}

/** The knock-out's bracket: one column (a phone: one block) per round. @param {Detail} d */
export function bracket(d) {
  const rounds = roundList(d);
  if (!rounds.length) return null;
  return v("section.card-box.tour-bracket", { id: "tour-bracket", "aria-labelledby": "tour-bracket-title" },
    v("h2", { id: "tour-bracket-title" }, t("tour.bracket")),
    v("div.bracket-rounds", rounds.map((round) => {
      const through = throughOf(d, round);
      return v("section.bracket-round", { key: round.round, dataset: { round: round.round }, "aria-labelledby": `tour-round-${round.round}` },
        v("h3", { id: `tour-round-${round.round}` }, roundName(d, round.round, round.tables.length)),
        v("div.bracket-tables", round.tables.map((table) => tableBox(d, round, table, through))));
    })));
}

/** A Swiss tournament's rounds, the latest first and open. @param {Detail} d */
export function swissRounds(d) {
  const rounds = roundList(d);
  if (!rounds.length) return null;
  const latest = Math.max(...rounds.map((r) => r.round));
  return v("section.card-box.tour-rounds", { id: "tour-rounds", "aria-labelledby": "tour-rounds-title" },
    v("h2", { id: "tour-rounds-title" }, t("tour.round_tables")),
    [...rounds].sort((a, b) => b.round - a.round).map((round) => v("details.tour-round", {
      key: round.round, dataset: { round: round.round }, open: round.round === latest,
    },
    v("summary", roundName(d, round.round), " · ", t("tour.tables_n", { n: num(round.tables.length) })),
    v("div.bracket-tables", round.tables.map((table) => tableBox(d, round, table, new Set()))))));
}
