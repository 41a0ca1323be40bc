// Invitations to a table (docs/social.md, "Friends"). Wherever I am, in the lobby or at
// a table of my own, the page asks GET /api/me/invitations every few seconds (while the
// tab is seen) and shows the newest invitation as a banner: "join" seats me at once
// (POST /api/me/invitations/{id}/accept, a private table included) and opens the table;
// "not now" dismisses it. At a table where I am seated and a seat is free, "invite a
// friend" lists my friends, online ones first, each with "invite".
import { h, mount, toast, oneAtATime } from "./dom.js";
import { t, errorText } from "./i18n.js";
import { api, session, rememberTable } from "./api.js";

const POLL_MS = 4000;
let started = false;
const banner = h("div.invitation-banner", { id: "invitation-banner", role: "status", hidden: true });
let shown = 0;  // the invitation the banner shows (its id)

const gameName = (/** @type {string} */ game) => t(`game.${game}`);

async function poll() {
  if (document.hidden || !session.token || session.user?.guest) return;
  let found = [];
  try { found = await api("GET", "/api/me/invitations"); } catch { return; }
  const next = found[0];
  if (!next) { banner.hidden = true; shown = 0; return; }
  if (next.id === shown && !banner.hidden) return;
  shown = next.id;
  const join = h("button.primary", { type: "button", id: "invitation-join" }, t("invite.join"));
  join.addEventListener("click", oneAtATime(join, async () => {
    try {
      const table = await api("POST", `/api/me/invitations/${next.id}/accept`);
      banner.hidden = true;
      rememberTable(table.id);
      location.hash = `#/t/${table.id}`;
    } catch (error) { toast(errorText(error.detail), "error"); banner.hidden = true; }
  }));
  mount(banner,
    h("span.invitation-text", t("invite.from", { name: "\u2068" + next.inviter_name + "\u2069", game: gameName(next.game), id: next.table_id })),
    h("span.row", join,
      h("button.link", {
        type: "button", id: "invitation-later",
        onclick: () => { banner.hidden = true; api("DELETE", `/api/me/invitations/${next.id}`).catch(() => {}); },
      }, t("invite.not_now"))));
  banner.hidden = false;
}

/** Start asking for invitations (once per page). */
export function startInvitations() {
  if (started) return;
  started = true;
  document.body.append(banner);
  poll();
  setInterval(poll, POLL_MS);
  document.addEventListener("visibilitychange", () => { if (!document.hidden) poll(); });
}

/**
 * The "invite a friend" dialog for table `tableId`: my friends, each with "invite"; and
 * the players seated here who are not my friends yet, each with "add as a friend".
 * @param {number} tableId @param {{ user_id: number | null, name: string | null }[]} [seats]
 */
export async function inviteDialog(tableId, seats = []) {
  let data;
  try { data = await api("GET", "/api/friends"); } catch (error) { toast(errorText(error.detail), "error"); return; }
  const invite = (/** @type {any} */ f) => {
    const button = h("button.primary.invite-friend", { type: "button", dataset: { user: f.user_id } }, t("invite.send"));
    button.addEventListener("click", oneAtATime(button, async () => {
      try {
        await api("POST", `/api/tables/${tableId}/invite`, { user_id: f.user_id });
        toast(t("invite.sent", { name: f.name }));
        button.textContent = t("invite.sent_short");
        button.setAttribute("aria-disabled", "true");
      } catch (error) { toast(errorText(error.detail), "error"); }
    }));
    return h("li.friend", { dataset: { user: f.user_id, online: String(f.online) } },
      h(`span.dot.${f.online ? "on" : "off"}`, { "aria-hidden": "true" }),
      h("span.friend-text", h("bdi.friend-name", f.name),
        h("small.muted", t(f.online ? "friends.online" : "friends.offline"))),
      button);
  };
  const known = new Set([session.user?.id, ...[...data.friends, ...data.incoming, ...data.outgoing].map((/** @type {any} */ f) => f.user_id)]);
  const strangers = seats.filter((s) => s.user_id !== null && s.name && !known.has(s.user_id));
  const befriend = (/** @type {any} */ s) => {
    const button = h("button.add-seat-friend", { type: "button", dataset: { user: s.user_id } }, t("invite.add_friend"));
    button.addEventListener("click", oneAtATime(button, async () => {
      try {
        const sent = await api("POST", "/api/friends/requests", { user_id: s.user_id });
        toast(t(sent.status === "accepted" ? "friends.now_friends" : "friends.sent", { name: s.name }));
        button.remove();
      } catch (error) { toast(errorText(error.detail), "error"); }
    }));
    return h("li.friend", h("span.friend-text", h("bdi.friend-name", s.name)), button);
  };
  const dialog = /** @type {HTMLDialogElement} */ (h("dialog.modal.invite-dialog", { id: "invite-dialog", "aria-labelledby": "invite-dialog-title" },
    h("div.modal-head", h("h2", { id: "invite-dialog-title" }, t("invite.title")),
      h("button.close", { type: "button", id: "invite-dialog-close", "aria-label": t("app.close"), onclick: () => dialog.close() }, "✕")),
    h("div.modal-body", data.friends.length
      ? h("ul.plain.friend-list", { id: "invite-list" }, data.friends.map(invite))
      : h("p.muted", t("invite.no_friends")),
    strangers.length ? [h("h3", t("invite.players_here")), h("ul.plain.friend-list", { id: "seat-strangers" }, strangers.map(befriend))] : null)));
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
}
