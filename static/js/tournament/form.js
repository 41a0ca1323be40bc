// "Make a tournament" (POST /api/tournaments): its name, game, format, seats, rounds (a
// Swiss tournament's), how many go through from each table (a Konkan knock-out's), the
// entry fee and the start. The seats offered follow the game and format (a Konkan
// knock-out: 4, 8, 16 or 32; Conquian pairs: 2 to 32, a power of two; Swiss: a number);
// the server checks them all again, and its refusal is shown in words under the button.
import { h, oneAtATime } from "../dom.js";
import { t, errorText } from "../i18n.js";
import { api } from "../api.js";

const KNOCKOUT_SEATS = { konkan: [4, 8, 16, 32], conquian: [2, 4, 8, 16, 32] };

/** A local date and time as a datetime-local field writes it ("2026-12-02T19:30"). */
export function localInput(/** @type {Date} */ date) {
  const pad = (/** @type {number} */ n) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** Half an hour from now, on the next five minutes. */
function defaultStart() {
  const at = new Date(Date.now() + 30 * 60_000);
  at.setMinutes(Math.ceil(at.getMinutes() / 5) * 5, 0, 0);
  return at;
}

/**
 * The form; `onMade` gets the new tournament's Detail.
 * @param {(detail: any) => void} onMade
 */
export function makeForm(onMade) {
  const field = (/** @type {string} */ label, /** @type {HTMLElement} */ input, hint = "") => h("label", { class: `field-${input.getAttribute("name")}` },
    h("span", t(label)), input, hint ? h("small.muted", hint) : null);
  const name = /** @type {HTMLInputElement} */ (h("input", { name: "name", id: "tour-new-name", required: true, minlength: 3, maxlength: 60, autocomplete: "off" }));
  const game = /** @type {HTMLSelectElement} */ (h("select", { name: "game", id: "tour-new-game" },
    ["konkan", "conquian"].map((g) => h("option", { value: g }, t(`game.${g}`)))));
  const format = /** @type {HTMLSelectElement} */ (h("select", { name: "format", id: "tour-new-format" },
    ["knockout", "swiss"].map((f) => h("option", { value: f }, t(`tour.format.${f}`)))));
  const seatChoice = /** @type {HTMLSelectElement} */ (h("select", { name: "seats", id: "tour-new-seats" }));
  const seatCount = /** @type {HTMLInputElement} */ (h("input", { type: "number", name: "seats", id: "tour-new-seat-count", min: 3, max: 1024, value: 12, inputmode: "numeric" }));
  const rounds = /** @type {HTMLInputElement} */ (h("input", { type: "number", name: "rounds", id: "tour-new-rounds", min: 1, max: 12, value: 3, inputmode: "numeric" }));
  const advance = /** @type {HTMLSelectElement} */ (h("select", { name: "advance", id: "tour-new-advance" },
    [2, 1].map((n) => h("option", { value: n }, t(n === 1 ? "tour.advance_one" : "tour.advance_n", { n })))));
  const fee = /** @type {HTMLInputElement} */ (h("input", { type: "number", name: "fee", id: "tour-new-fee", min: 0, step: 1, value: 0, inputmode: "numeric" }));
  const starts = /** @type {HTMLInputElement} */ (h("input", { type: "datetime-local", name: "starts_at", id: "tour-new-starts", required: true, value: localInput(defaultStart()) }));
  const error = h("p.form-error", { id: "tour-new-error", role: "alert" });

  const seatChoiceRow = field("tour.seats", seatChoice);
  const seatCountRow = field("tour.most_entrants", seatCount);
  const roundsRow = field("tour.rounds", rounds);
  const advanceRow = field("tour.advance", advance);

  // What each format asks: a knock-out its seats from a list (and a Konkan one how many go
  // through), a Swiss one its most entrants and its rounds.
  function shape() {
    const knockout = format.value === "knockout";
    const kept = Number(seatChoice.value) || 8;
    const sizes = KNOCKOUT_SEATS[game.value === "conquian" ? "conquian" : "konkan"];
    seatChoice.replaceChildren(...sizes.map((n) => h("option", { value: n, selected: n === kept ? true : undefined }, String(n))));
    if (!sizes.includes(kept)) seatChoice.value = String(sizes.includes(8) ? 8 : sizes[0]);
    seatCount.min = game.value === "conquian" ? "2" : "3";  // a Swiss's least entrants
    seatChoiceRow.hidden = !knockout;
    seatChoice.disabled = !knockout;
    seatCountRow.hidden = knockout;
    seatCount.disabled = knockout;
    roundsRow.hidden = knockout;
    rounds.disabled = knockout;
    advanceRow.hidden = !knockout || game.value === "conquian";
    advance.disabled = advanceRow.hidden;
  }
  game.addEventListener("change", shape);
  format.addEventListener("change", shape);
  shape();

  const make = h("button.primary", { type: "submit", id: "tour-new-make" }, t("tour.make_button"));
  const submit = oneAtATime(make, async () => {
    error.textContent = "";
    const at = new Date(starts.value);
    if (Number.isNaN(at.getTime())) { error.textContent = t("tour.bad_start"); starts.focus(); return; }
    const knockout = format.value === "knockout";
    /** @type {Record<string, any>} */
    const body = {
      name: name.value.trim(), game: game.value, format: format.value,
      seats: Number(knockout ? seatChoice.value : seatCount.value),
      fee: Number(fee.value) || 0, starts_at: at.toISOString(),
    };
    if (!knockout) body.rounds = Number(rounds.value);
    if (knockout && game.value === "konkan") body.advance = Number(advance.value);
    try {
      onMade(await api("POST", "/api/tournaments", body));
    } catch (failure) {
      error.textContent = errorText(failure.detail);
      // A refusal that names its field takes the reader to it
      // (the rules' codes name it: tournament_seats is the seats).
      const named = failure.detail?.field || String(failure.detail?.code || "").match(/^tournament_(\w+)$/)?.[1];
      const input = named ? form.querySelector(`[name="${named}"]:not([disabled])`) : null;
      if (input instanceof HTMLElement) input.focus();
    }
  });
  const form = h("form.stack.tour-make", {
    id: "tour-new", "aria-labelledby": "tour-make-title",
    onsubmit: (/** @type {Event} */ event) => { event.preventDefault(); submit(); },
  },
  field("tour.name", name),
  h("div.tour-make-pair", field("lobby.game", game), field("tour.format", format)),
  h("div.tour-make-pair", seatChoiceRow, seatCountRow, advanceRow, roundsRow),
  field("tour.starts", starts),
  field("tour.fee", fee, t("tour.fee_hint")),
  make,
  error);
  return form;
}
