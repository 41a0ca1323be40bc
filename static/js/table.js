// A table screen: the connection, the seats (connected / away / bot), the turn timer,
// reactions, the move log, the score sheet and the round-end summary. Its state and
// moves are a controller (table/ctrl.js), its drawing functions of that controller
// (table/view.js, table/overlays.js); the game-specific middle is drawn by the game's
// module (konkan.js or conquian.js, loaded when a table of that game opens).
import { mount, h } from "./dom.js";
import { t } from "./i18n.js";
import { TableCtrl } from "./table/ctrl.js";
import { tableScreen, drawTable, announce, loadFaces, tick } from "./table/view.js";
import { keyHandler } from "./table/keys.js";
// Imported deeper down too (by table/view.js, describe.js): imported here as well, they
// (and Preact after view.js) are fetched with the modules above, not round trips later.
import "./view.js";
import "./cards.js";

/**
 * The table `tableId` drawn in `main`; `onUser` when the signed-in user changes.
 * @param {HTMLElement} main
 * @param {number} tableId
 * @param {{ onUser: () => void }} options
 */
export function showTable(main, tableId, { onUser }) {
  const root = h("div.table-screen", { id: "table" });
  mount(main, root);
  const screen = tableScreen(root);
  // The connection's state over the table: a banner while the socket does not answer,
  // and the moves (the middle: the hand, the piles, the buttons) out of reach until it does.
  const banner = h("div.conn-banner", { id: "conn-banner", role: "alert", hidden: true });
  root.prepend(banner);
  const ctrl = new TableCtrl(tableId, {
    onUser,
    redraw: () => { drawTable(ctrl, screen); showConnection(ctrl, screen.middle, banner); },
    announce: (text) => announce(screen, text),
  });
  loadFaces(screen).then(() => ctrl.redraw());
  ctrl.start();
  const ticker = setInterval(() => tick(ctrl, root), 250);
  const onKey = keyHandler(root);
  document.addEventListener("keydown", onKey);
  const onVisible = () => { if (!document.hidden) document.title = t("app.name"); };
  document.addEventListener("visibilitychange", onVisible);
  // Exposed read-only for the browser tests (they decide moves with the engine's bots).
  /** @type {any} */ (window).sahrat = ctrl;

  return {
    close() {
      clearInterval(ticker);
      banner.remove();
      ctrl.close();
      document.removeEventListener("visibilitychange", onVisible);
      document.removeEventListener("keydown", onKey);
      document.title = t("app.name");
    },
    rerender() { announce(screen, ""); ctrl.redraw(); },
  };
}

/**
 * While the socket is not known to answer (connecting again after a drop, or a ping or a
 * command left unanswered: conn.js), the page says so and takes no moves: the middle is
 * inert (no tap, no focus, no key reaches its buttons) and the banner names the state.
 * @param {TableCtrl} ctrl @param {HTMLElement} middle @param {HTMLElement} banner
 */
function showConnection(ctrl, middle, banner) {
  const lost = ctrl.status === "reconnecting";
  // Opening the socket (a seat just taken) takes no moves either, but has nothing to say.
  middle.inert = ctrl.status !== "online";
  middle.classList.toggle("conn-lost", lost);
  banner.hidden = !lost;
  const text = lost ? t("conn.lost_banner") : "";
  if (banner.textContent !== text) banner.textContent = text;
}
