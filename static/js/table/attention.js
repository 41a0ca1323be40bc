// "Your turn" for a player whose tab is in the background: the tab's title says so
// ("● دورك — سهرات"), the turn sound plays (sound.js, from the controller's signal) and,
// if the player turned the bell on (and the browser allowed it), a Notification; the
// title comes back, and the notification goes, when the tab is seen again. Permission is
// asked only from a tap on the bell (`setBell`): never on its own.
import { t } from "../i18n.js";

const KEY = "sahrat.turn_bell";
const supported = () => typeof Notification !== "undefined";

/** Whether the bell is on: chosen here, and allowed by the browser. */
export const bellOn = () => supported() && localStorage.getItem(KEY) === "on" && Notification.permission === "granted";
/** Whether the browser refuses notifications to this site (then the bell cannot ring). */
export const bellBlocked = () => supported() && Notification.permission === "denied";
export const bellSupported = supported;

/** Turn the bell on (asking the browser's permission: call from a tap) or off; whether it is on. */
export async function setBell(/** @type {boolean} */ on) {
  if (!on || !supported()) { localStorage.setItem(KEY, "off"); return false; }
  const allowed = Notification.permission === "granted" || (await Notification.requestPermission()) === "granted";
  localStorage.setItem(KEY, allowed ? "on" : "off");
  return allowed;
}

/** @type {Notification | null} */ let shown = null;
let wasMine = false;
let titled = false;  // the title is the "your turn" one, set here

/**
 * After each drawing of a table: `mine` it is my move now. The title says so while the
 * tab is hidden; a turn that has just become mine rings the bell once.
 * @param {{ mine: boolean, tableId: number, game: string }} turn
 */
export function noticeTurn({ mine, tableId, game }) {
  const fresh = mine && !wasMine;
  wasMine = mine;
  if (mine && document.hidden) {
    document.title = `● ${t("table.your_turn_title")} — ${t("app.name")}`;
    titled = true;
    if (fresh && bellOn()) {
      try {
        shown?.close();
        shown = new Notification(t("table.your_turn_title"), {
          body: t("attention.body", { game: t(`game.${game}`), id: tableId }),
          tag: `sahrat-turn-${tableId}`,
          lang: document.documentElement.lang,
          dir: document.documentElement.dir === "rtl" ? "rtl" : "ltr",
        });
        shown.onclick = () => { window.focus(); shown?.close(); };
      } catch { /* a browser that notifies only from a service worker: the title and the sound remain */ }
    }
  } else seen();
}

/** The tab is seen (or it is no longer my move): the usual title, no notification. */
function seen() {
  if (titled) { document.title = t("app.name"); titled = false; }
  shown?.close();
  shown = null;
}

document.addEventListener("visibilitychange", () => { if (!document.hidden) seen(); });
