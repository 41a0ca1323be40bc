// Quick play: one tap from the first visit to a dealt hand — a guest account if
// needed, a free Konkan table with the default options, bots in the other seats.
import { h, toast } from "./dom.js";
import { t, errorText } from "./i18n.js";
import { api, ensureUser, rememberTable } from "./api.js";

export function quickPlayBox(onUser) {
  const button = h("button.primary.big", {
    type: "button", id: "quick-play",
    onclick: async () => {
      button.disabled = true;
      try {
        await ensureUser(); onUser();
        const table = await api("POST", "/api/tables", { game: "konkan", options: { players: 4 }, private: false });
        rememberTable(table.id);
        await api("POST", `/api/tables/${table.id}/start`, { bots: true });
        location.hash = `#/t/${table.id}`;
      } catch (error) {
        toast(errorText(error.detail), "error");
        button.disabled = false;
      }
    },
  }, "▶ ", t("lobby.quick_play"));
  return h("section.card-box.quick", { id: "quick" },
    button,
    h("p.muted", t("lobby.quick_play_help"), " ", h("a", { href: "#create-table" }, t("lobby.quick_play_form"))));
}
