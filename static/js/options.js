// The "create a table" form: every table option of RULES §1.11 (Konkan) and
// §2.6 (Conquian) with its default. Only options that differ from the default
// are sent, so the server's defaults stay the single source of truth.
import { h, oneAtATime } from "./dom.js";
import { t } from "./i18n.js";

/**
 * An option of the form: its name, its kind, its default, and its bounds or choices.
 * @typedef {[string, "number" | "bool" | "choice", any, { min?: number, max?: number, choices?: string[] }?]} OptionSpec
 */

/** @type {OptionSpec[]} */
const KONKAN = [
  ["players", "number", 4, { min: 2, max: 4 }],
  ["threshold", "number", null, { min: 0, max: 500 }],  // null: 51 or 71 by game
  ["rounds", "number", 5, { min: 1, max: 20 }],
  ["turn_seconds", "number", 30, { min: 10, max: 300 }],
  ["stake", "number", 0, { min: 0 }],
  ["hand_exempt_from_threshold", "bool", false],
  ["escalating_opening", "bool", false],
  ["ace_value", "choice", "always_11", { choices: ["always_11", "low_1_else_10"] }],
  ["hand_values", "choice", "joker_15_ace_11", { choices: ["joker_15_ace_11", "joker_10_ace_10"] }],
  ["hand_rummy", "bool", false],
  ["swapped_joker_must_be_laid", "bool", false],
  ["redeal", "bool", false],
  ["max_reshuffles", "number", 3, { min: 0, max: 10 }],
  ["break_seconds", "number", 15, { min: 0, max: 120 }],
  ["bot_level", "choice", "expert", { choices: ["simple", "strong", "expert"] }],
];
/** @type {OptionSpec[]} */
const CONQUIAN = [
  ["wins_needed", "number", 3, { min: 1, max: 50 }],
  ["turn_seconds", "number", 30, { min: 10, max: 300 }],
  ["stake", "number", 0, { min: 0 }],
  ["double_after_draw", "bool", false],
  ["break_seconds", "number", 15, { min: 0, max: 120 }],
  ["bot_level", "choice", "expert", { choices: ["simple", "strong", "expert"] }],
];
const MAIN = new Set(["players", "threshold", "rounds", "turn_seconds", "wins_needed"]);

export function createForm(onCreate) {
  const game = h("select", { name: "game", id: "new-game" },
    ["konkan", "konkan71", "conquian"].map((g) => h("option", { value: g }, t(`game.${g}`))));
  const fields = h("div.option-fields");
  const isPrivate = h("input", { type: "checkbox", name: "private" });
  const chatOn = h("input", { type: "checkbox", name: "chat", checked: true });  // the table's chat (docs/social.md)
  const friendsWatch = h("input", { type: "checkbox", name: "friends_watch" });  // my friends may watch it, private
  const watchRow = h("label.check", { hidden: true }, friendsWatch, t("friends.watch_option"));
  isPrivate.addEventListener("change", () => { watchRow.hidden = !isPrivate.checked; });
  let inputs = [];

  function defaultOf(name, dflt) {
    if (name === "threshold") return game.value === "konkan71" ? 71 : 51;
    return dflt;
  }

  function drawFields() {
    const spec = game.value === "conquian" ? CONQUIAN : KONKAN;
    inputs = spec.map(([name, kind, dflt, extra = {}]) => {
      const value = defaultOf(name, dflt);
      let input;
      if (kind === "bool") input = h("input", { type: "checkbox", name, checked: value });
      else if (kind === "choice") {
        input = h("select", { name }, (extra.choices || []).map((c) => h("option", { value: c, selected: c === value ? true : undefined }, t(`opt.${name}.${c}`))));
      } else input = h("input", { type: "number", name, value, min: extra.min, max: extra.max, inputmode: "numeric" });
      const row = kind === "bool"
        ? h("label.check", input, t(`opt.${name}`))
        : h("label", h("span", t(`opt.${name}`), h("small.muted", ` (${t("opt.default", { value: kind === "choice" ? t(`opt.${name}.${value}`) : value })})`)), input);
      return { name, kind, dflt: value, input, row };
    });
    fields.replaceChildren(
      ...inputs.filter((f) => MAIN.has(f.name)).map((f) => f.row),
      h("details.more", h("summary", t("lobby.more_options")), inputs.filter((f) => !MAIN.has(f.name)).map((f) => f.row)),
    );
  }
  game.addEventListener("change", drawFields);
  drawFields();

  const create = h("button.primary", { type: "submit", id: "create" }, t("lobby.create_button"));
  // One table per tap: a second tap (or Enter) while the first is on its way does nothing.
  const submit = oneAtATime(create, () => {
    const options = {};
    for (const f of inputs) {
      const value = f.kind === "bool" ? f.input.checked : f.kind === "number" ? Number(f.input.value) : f.input.value;
      if (value !== f.dflt) options[f.name] = value;
    }
    return onCreate({ game: game.value, options, private: isPrivate.checked, ...(chatOn.checked ? {} : { chat: false }), ...(isPrivate.checked && friendsWatch.checked ? { friends_watch: true } : {}) });
  });
  return h("form.stack.create", {
    id: "create-table",
    onsubmit: (event) => { event.preventDefault(); return submit(); },
  },
  h("label", t("lobby.game"), game),
  fields,
  h("label.check", isPrivate, t("lobby.private_table")),
  watchRow,
  h("label.check", chatOn, t("chat.option")),
  create);
}
