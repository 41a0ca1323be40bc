// The shapes of what the table's socket carries (docs/protocol.md; the JSON schemas in
// docs/schemas), as JSDoc types for the JavaScript check (make jscheck). No code: the
// page never loads this file, the check reads it.

/**
 * @typedef {object} TableSeat  a seat of TableInfo (docs/schemas/TableInfo.json)
 * @property {number} seat
 * @property {number | null} user_id  null: empty, or a bot's
 * @property {string | null} name
 * @property {boolean} bot
 * @property {boolean} connected
 * @property {boolean} away
 * @property {boolean} left
 * @property {{ value: number, provisional: boolean } | null} [rating]  at a rated table (bots: a fixed value)
 *
 * @typedef {object} TableInfo  the table (docs/schemas/TableInfo.json)
 * @property {number} id
 * @property {string} game  konkan, konkan71 or conquian
 * @property {Record<string, any>} options
 * @property {string} status  waiting, playing, finished or closed
 * @property {boolean} coin_table
 * @property {boolean} [rated]  a rated table (seated by the queue; docs/rating.md)
 * @property {boolean} [chat]  the table's chat is on (docs/social.md)
 * @property {TableSeat[]} seats
 * @property {number} seq
 * @property {string | null} [invite_code]
 * @property {number[]} [rematch]  the seats that asked for another match
 * @property {string | null} [seed_commitment]
 * @property {string[]} [spectators]
 * @property {number} [spectator_count]
 * @property {boolean} [spectator_delay]  spectators see each round once it is over (a prize tournament's table)
 * @property {number | null} [tournament_id]  the tournament whose round the table plays
 *
 * @typedef {object} RoundBreak  the pause between rounds (deals)
 * @property {number} until
 * @property {number[]} waiting  the seats still reading the summary
 *
 * @typedef {object} GameView  what the table itself reads of a game's view; each game
 *   module reads its own (KonkanView in konkan.js, ConquianView in conquian.js)
 * @property {"konkan" | "conquian"} game
 * @property {number | null} viewer
 * @property {number | null} turn
 * @property {number[]} hand_counts
 * @property {boolean} match_over
 * @property {number | null} winner
 * @property {string | null} [round_commitment]
 * @property {Record<string, any>} options
 * @property {number} [round]  Konkan's round
 * @property {boolean} [last_round]
 * @property {boolean[]} [opened]
 * @property {boolean[]} [committed]
 * @property {number[]} [totals]
 * @property {number} [deal]  Conquian's deal
 * @property {number[]} [points]
 *
 * @typedef {{ type: string, seat?: number | null, [field: string]: any }} GameEvent
 *   an engine event (docs/schemas/KonkanEvent.json, ConquianEvent.json)
 * @typedef {{ type: string, [field: string]: any }} Action  a move (docs/schemas/KonkanAction.json)
 * @typedef {{ code: string, message?: string }} ErrorInfo
 * @typedef {{ ok: boolean, cid?: string, error?: ErrorInfo, snapshot?: Snapshot }} Reply
 *
 * @typedef {object} Snapshot
 * @property {TableInfo} table
 * @property {number | null} seat
 * @property {GameView | null} view
 * @property {number | null} deadline
 * @property {RoundBreak | null} [round_break]
 *
 * @typedef {object} Update  a step: its events and what it changed in the view
 * @property {GameEvent[]} events
 * @property {Record<string, any> | null} changes  the view's changed fields, new values
 * @property {string[]} gone  the view's fields no longer in it
 * @property {GameView | null} view  the whole view, sent instead of changes (rare)
 * @property {number | null} deadline
 * @property {string} by  player, timer or bot
 * @property {RoundBreak | null} [round_break]
 *
 * @typedef {{ type: string, seq?: number, payload?: any }} ServerMessage
 */

/**
 * The view after an update (docs/protocol.md, "Updates"): its whole `view` when it has
 * one, else its `changes` laid over the view held and its `gone` fields removed. The
 * same two lines as `sahrat.view_changes.apply_update`: nothing here decides a rule.
 * @param {GameView | null} view  the view held before the update
 * @param {Update} update
 * @returns {GameView | null}
 */
export function applyUpdate(view, update) {
  if (update.view) return update.view;
  if (!update.changes || !view) return view;
  const next = /** @type {Record<string, any>} */ ({ ...view, ...update.changes });
  for (const key of update.gone || []) delete next[key];
  return /** @type {GameView} */ (next);
}
