// A question with OK / Cancel, in a real <dialog> (a page's confirm() blocks the page and
// cannot be styled): the table's, the chat's and the friends list's questions.
import { h } from "./dom.js";
import { t } from "./i18n.js";

/** A question with OK / Cancel in a real <dialog> (a page's confirm() blocks and cannot be styled). */
export function confirmDialog(/** @type {string} */ question, /** @type {() => void} */ onYes) {
  const dialog = /** @type {HTMLDialogElement} */ (h("dialog.confirm", { id: "confirm", "aria-label": question },
    h("p", question),
    h("form.row", { method: "dialog" },
      h("button", { value: "no", id: "confirm-no" }, t("app.cancel")),
      h("button.primary", { value: "yes", id: "confirm-yes" }, t("app.ok")))));
  dialog.addEventListener("close", () => { dialog.remove(); if (dialog.returnValue === "yes") onYes(); });
  document.body.append(dialog);
  dialog.showModal();
}
