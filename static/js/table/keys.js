// Keyboard play: one key per move (listed in the help panel, "?"), the arrows walk the
// hand. A key presses (or focuses) the button the screen already shows for it, so it
// does exactly what a tap would, and nothing when that button is absent or disabled.
import { h } from "../dom.js";
import { t } from "../i18n.js";

/** [key, what it presses, "focus" to move there instead of pressing] @type {[string, string, string?][]} */
const SHORTCUTS = [
  ["d", "#draw"], ["t", "#discard-pile [data-card]"], ["m", "#make-meld"], ["l", "#lay-down"],
  ["x", "#discard"], ["c", "#clear"], ["s", "#sort-suit"], ["r", "#sort-rank"], ["h", "#hint-toggle"],
  ["b", "#ask-hint"], ["a", "#arrange"], ["f", "#hand [data-card]", "focus"],
];

/** The keyboard help, in a <dialog> of its own. */
export function showShortcuts() {
  const dialog = /** @type {HTMLDialogElement} */ (h("dialog.confirm.shortcuts", { id: "shortcuts-help", "aria-labelledby": "shortcuts-title" },
    h("h2", { id: "shortcuts-title" }, t("keys.title")),
    h("dl", [...SHORTCUTS.map(([key]) => [key, t(`keys.${key}`)]), ["← →", t("keys.arrows")], ["?", t("keys.help")]]
      .map(([key, what]) => [h("dt", h("kbd", key.toUpperCase())), h("dd", what)])),
    h("form.row", { method: "dialog" }, h("button.primary", { value: "ok", id: "shortcuts-close" }, t("app.close")))));
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
}

/** The keydown listener for the table drawn in `root`. */
export function keyHandler(/** @type {HTMLElement} */ root) {
  return (/** @type {KeyboardEvent} */ e) => {
    const target = /** @type {Element} */ (e.target);
    if (e.ctrlKey || e.metaKey || e.altKey || target.closest?.("input, select, textarea, dialog")) return;
    if (e.key === "?") { showShortcuts(); e.preventDefault(); return; }
    const card = target.closest?.("#hand [data-card]");
    if (card && (e.key === "ArrowLeft" || e.key === "ArrowRight")) {
      const cards = /** @type {HTMLElement[]} */ ([...root.querySelectorAll("#hand [data-card]")]);
      const rtl = document.documentElement.dir === "rtl";
      const step = (e.key === "ArrowRight") !== rtl ? 1 : -1;
      cards[(cards.indexOf(/** @type {HTMLElement} */ (card)) + step + cards.length) % cards.length]?.focus();
      e.preventDefault();
      return;
    }
    const shortcut = SHORTCUTS.find(([key]) => key === e.key.toLowerCase());
    if (!shortcut) return;
    const el = /** @type {HTMLButtonElement | null} */ (root.querySelector(shortcut[1]));
    if (!el || el.disabled) return;
    e.preventDefault();
    if (shortcut[2] === "focus") el.focus(); else el.click();
  };
}
