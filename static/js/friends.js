// The lobby's friends (docs/social.md, "Friends"): my friends with a presence dot
// (online, at a table: which one when it is open to me, with a tap to watch it), the
// requests sent to me (accept, refuse) and by me (withdraw), a form to add a friend by
// name, and for each friend "remove" and "block". GET /api/friends, read again every
// few seconds while the box is on the page. A guest is told to sign up first.
import { h, mount, toast, oneAtATime } from "./dom.js";
import { t, errorText } from "./i18n.js";
import { api, session } from "./api.js";
import { confirmDialog } from "./confirm.js";

const REFRESH_MS = 8000;

/** The section, which keeps itself current while it is on the page. */
export function friendsBox() {
  const box = h("section.card-box.friends", { id: "friends", "aria-labelledby": "friends-title" });
  let loads = 0;
  let timer = 0;

  async function load() {
    const load = ++loads;
    if (!box.isConnected && load > 1) { clearInterval(timer); return; }
    const user = session.user;
    if (!session.token || !user) { box.hidden = true; return; }
    box.hidden = false;
    if (user.guest) { draw(null); return; }
    try {
      const data = await api("GET", "/api/friends");
      if (load === loads) draw(data);
    } catch (error) {
      if (load === loads && error.detail?.code === "friends_need_account") draw(null);
    }
  }

  /** @param {() => Promise<any>} work */
  const act = (work) => async () => {
    try { await work(); } catch (error) { toast(errorText(error.detail), "error"); }
    await load();
  };

  function addForm() {
    const input = h("input", {
      name: "friend-name", id: "friend-name", required: true, minlength: 3, maxlength: 40,
      autocomplete: "off", spellcheck: "false", placeholder: t("friends.name_placeholder"), "aria-label": t("friends.add_label"),
    });
    const button = h("button.primary", { type: "submit", id: "friend-add" }, t("friends.add"));
    const send = oneAtATime(button, async () => {
      const name = input.value.trim();
      if (!name) return;
      try {
        const sent = await api("POST", "/api/friends/requests", { name });
        toast(t(sent.status === "accepted" ? "friends.now_friends" : "friends.sent", { name: sent.name }));
        input.value = "";
      } catch (error) { toast(errorText(error.detail), "error"); }
      await load();
    });
    return h("form.row.friend-add", { id: "friend-add-form", onsubmit: (/** @type {Event} */ e) => { e.preventDefault(); send(); } }, input, button);
  }

  /** Where a friend is: at a table (which one, when I may see it), online, or away. */
  function presence(/** @type {any} */ f) {
    if (f.table_id !== null) {
      return [t("friends.at_table", { game: t(`game.${f.game}`), id: f.table_id }), " ",
        h("a.watch-friend", { href: `#/t/${f.table_id}`, dataset: { table: f.table_id } }, t("friends.watch"))];
    }
    if (f.at_table) return t("friends.at_private");
    return t(f.online ? "friends.online" : "friends.offline");
  }

  function friendRow(/** @type {any} */ f) {
    return h("li.friend", { dataset: { user: f.user_id, online: String(f.online) } },
      h(`span.dot.${f.online ? "on" : "off"}`, { "aria-hidden": "true" }),
      h("span.friend-text", h("bdi.friend-name", f.name),
        h("span.sr-only", ` (${t(f.online ? "friends.online" : "friends.offline")})`),
        h("small.muted.friend-where", presence(f))),
      h("span.friend-actions",
        h("button.link.remove-friend", {
          type: "button", "aria-label": t("friends.remove_label", { name: f.name }),
          onclick: () => confirmDialog(t("friends.remove_confirm", { name: f.name }),
            act(() => api("DELETE", `/api/friends/${f.user_id}`))),
        }, t("friends.remove")),
        h("button.link.block-player", {
          type: "button", "aria-label": t("friends.block_label", { name: f.name }),
          onclick: () => confirmDialog(t("friends.block_confirm", { name: f.name }),
            act(() => api("POST", "/api/blocks", { user_id: f.user_id }))),
        }, t("friends.block"))));
  }

  function requestRow(/** @type {any} */ r, /** @type {boolean} */ incoming) {
    return h("li.friend-request", { dataset: { request: r.id, user: r.user_id } },
      h("bdi.friend-name", r.name), " ",
      h("small.muted", t(incoming ? "friends.wants" : "friends.waiting")),
      h("span.friend-actions", incoming ? [
        h("button.primary.accept-friend", { type: "button", onclick: act(() => api("POST", `/api/friends/requests/${r.id}/accept`)) }, t("friends.accept")),
        h("button.refuse-friend", { type: "button", onclick: act(() => api("POST", `/api/friends/requests/${r.id}/refuse`)) }, t("friends.refuse")),
      ] : h("button.link.cancel-request", { type: "button", onclick: act(() => api("DELETE", `/api/friends/${r.user_id}`)) }, t("friends.cancel"))));
  }

  const content = h("div.friends-content", { id: "friends-content" });
  const form = addForm();  // kept from one drawing to the next: a name being typed stays

  function draw(/** @type {any} */ data) {
    const head = h("h2", { id: "friends-title" }, t("friends.title"));
    if (data === null) { mount(box, head, h("p.muted", t("friends.guest"))); return; }
    const online = data.friends.filter((/** @type {any} */ f) => f.online).length;
    mount(content,
      data.incoming.length ? h("div.friend-requests",
        h("h3", t("friends.incoming")),
        h("ul.plain", { id: "friend-requests-in" }, data.incoming.map((/** @type {any} */ r) => requestRow(r, true)))) : null,
      data.friends.length
        ? h("ul.plain.friend-list", { id: "friend-list" }, data.friends.map(friendRow))
        : h("p.muted", t("friends.none")),
      data.outgoing.length ? h("details.friend-sent", h("summary", t("friends.outgoing", { n: data.outgoing.length })),
        h("ul.plain", { id: "friend-requests-out" }, data.outgoing.map((/** @type {any} */ r) => requestRow(r, false)))) : null);
    if (content.parentNode !== box) {
      mount(box, h("div.section-head", head, h("span.muted.friends-online")), content, form);
    }
    const count = box.querySelector(".friends-online");
    if (count) count.textContent = data.friends.length ? t("friends.online_count", { n: online }) : "";
  }

  load();
  timer = window.setInterval(() => { if (!document.hidden) load(); }, REFRESH_MS);
  return box;
}
