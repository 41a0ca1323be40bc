// @ts-check
// The two lines both games' tables draw under their buttons: the hint asked for and the
// last refusal. Apart from view.js so that a game's module needs nothing of the table's
// own views (the table's views draw the game's, never the other way round).
import { v, vicon } from "../view.js";
import { describeSuggestion } from "../describe.js";

/** @typedef {import("./ctrl.js").TableCtrl} TableCtrl */

/** The suggestion the seat asked for, in words of what to do (both games' tables). */
export function hintLine(/** @type {TableCtrl} */ ctrl) {
  return ctrl.hint ? v("p.hint-line", { id: "hint-line", role: "status" }, vicon("hint"), describeSuggestion(ctrl.hint, ctrl.nameOf)) : null;
}

/** The last refusal, in words, under the buttons (both games' tables and the waiting room). */
export function errorLine(/** @type {TableCtrl} */ ctrl) {
  return v("p.error-line", { id: "last-error", role: "status" }, ctrl.lastError || "");
}
