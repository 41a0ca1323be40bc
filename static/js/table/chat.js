// The table's chat (docs/social.md, "Chat"): a button in the table's bar with an unread
// badge, and a panel (a modal <dialog>: on a phone it covers the table while open, and
// nothing of it is on the table when closed) with the messages, free text and quick
// phrases. Every message is drawn as text (textContent, never markup), its words in a
// <bdi dir="auto"> so that a line mixing Arabic and Latin keeps each in its own
// direction. Muting a player is this page's own (localStorage): their messages still
// come and are not shown; reporting a message tells the admins (REST).
import { h, toast } from "../dom.js";
import { v, vicon } from "../view.js";
import { icon } from "../icons.js";
import { t, errorText } from "../i18n.js";
import { api, session } from "../api.js";
import { confirmDialog } from "../confirm.js";

/** @typedef {import("./ctrl.js").TableCtrl} TableCtrl */

/**
 * @typedef {object} ChatMessage  a `chat` message's payload (docs/schemas/ChatInfo.json)
 * @property {string} id
 * @property {number} user_id
 * @property {string | null} name
 * @property {number | null} seat  null: a spectator said it
 * @property {"players" | "spectators"} channel
 * @property {string | null} text
 * @property {string | null} phrase
 * @property {number} at
 */

// The quick phrases, by their keys (the server's list: social/chat.py PHRASES).
export const PHRASES = ["hello", "yalla", "nice", "well_played", "better_luck", "thanks", "hurry", "wait", "sorry", "good_game", "one_more", "bye"];
const MAX_CHARS = 200;
const KEPT = 100;  // messages this page keeps
const MUTED_KEY = "sahrat.chat.muted";

/** The players this page mutes: user id → the name they had. @returns {Record<string, string>} */
function loadMuted() {
  try {
    const found = JSON.parse(localStorage.getItem(MUTED_KEY) || "{}");
    return found && typeof found === "object" && !Array.isArray(found) ? found : {};
  } catch { return {}; }
}

export class TableChat {
  /** @param {TableCtrl} ctrl */
  constructor(ctrl) {
    this.ctrl = ctrl;
    /** @type {ChatMessage[]} */ this.messages = [];
    this.unread = 0;
    this.open = false;
    /** @type {Record<string, string>} */ this.muted = loadMuted();
    /** @type {Set<string>} */ this.reported = new Set();
    /** @type {HTMLDialogElement | null} */ this.dialog = null;
  }

  /** Whether the table's chat is on (TableInfo.chat; on unless its creator turned it off). */
  get on() { return this.ctrl.info?.chat !== false; }

  isMuted(/** @type {number} */ userId) { return String(userId) in this.muted; }

  /** A `chat` message: kept, counted unread unless the panel shows it (or it is mine, or muted). */
  add(/** @type {ChatMessage} */ message) {
    if (this.messages.some((m) => m.id === message.id)) return;
    this.messages.push(message);
    this.messages = this.messages.slice(-KEPT);
    const mine = message.user_id === session.user?.id;
    if (!this.open && !mine && !this.isMuted(message.user_id)) this.unread += 1;
    this.drawPanel();
  }

  /** `chat_history`, when the socket opens: the table's recent messages I may read. */
  history(/** @type {{ messages: ChatMessage[] }} */ payload) {
    const known = new Set(this.messages.map((m) => m.id));
    const fresh = payload.messages.filter((m) => !known.has(m.id));
    // What was said while this page was away (or before it came) is unread too.
    if (!this.open) this.unread += fresh.filter((m) => m.user_id !== session.user?.id && !this.isMuted(m.user_id)).length;
    this.messages = [...this.messages, ...fresh].sort((a, b) => a.at - b.at).slice(-KEPT);
    this.drawPanel();
  }

  /** The messages shown: not those of a muted player. */
  shown() { return this.messages.filter((m) => !this.isMuted(m.user_id)); }

  say(/** @type {{ text?: string, phrase?: string }} */ payload) {
    if (!this.ctrl.conn?.sendRaw({ type: "chat", payload })) this.ctrl.showError({ code: "disconnected" });
  }

  mute(/** @type {ChatMessage} */ message) {
    this.muted[String(message.user_id)] = message.name || "";
    this.saveMuted();
  }

  unmute(/** @type {string} */ userId) {
    delete this.muted[userId];
    this.saveMuted();
  }

  saveMuted() {
    try { localStorage.setItem(MUTED_KEY, JSON.stringify(this.muted)); } catch { /* private mode: this page only */ }
    this.unread = 0;
    this.drawPanel();
    this.ctrl.redraw();
  }

  report(/** @type {ChatMessage} */ message) {
    confirmDialog(t("chat.report_confirm"), async () => {
      try {
        await api("POST", `/api/tables/${this.ctrl.tableId}/chat/${encodeURIComponent(message.id)}/report`);
        this.reported.add(message.id);
        toast(t("chat.reported"));
        this.drawPanel();
      } catch (error) { toast(errorText(/** @type {any} */ (error).detail), "error", 6000); }
    });
  }

  // --- the panel ---------------------------------------------------------------------

  show() {
    const dialog = this.panel();
    this.open = true;
    this.unread = 0;
    this.drawPanel();
    if (!dialog.open) dialog.showModal();
    /** @type {HTMLInputElement | null} */ (dialog.querySelector("#chat-text"))?.focus();
    this.ctrl.redraw();
  }

  close() {
    if (this.dialog?.open) this.dialog.close();
  }

  /** The panel, made once per table screen (kept while the table is drawn again). */
  panel() {
    const root = document.getElementById("table") || document.body;
    if (this.dialog && this.dialog.isConnected) return this.dialog;
    const input = /** @type {HTMLInputElement} */ (h("input", {
      id: "chat-text", type: "text", maxlength: String(MAX_CHARS), autocomplete: "off", enterkeyhint: "send",
      dir: "auto", placeholder: t("chat.placeholder"), "aria-label": t("chat.placeholder"),
    }));
    const form = h("form.chat-form", {
      id: "chat-form",
      onsubmit: (/** @type {SubmitEvent} */ e) => {
        e.preventDefault();
        const text = input.value.trim();
        if (!text) return;
        this.say({ text });
        input.value = "";
      },
    }, input, h("button.primary", { type: "submit", id: "chat-send" }, t("chat.send")));
    const dialog = /** @type {HTMLDialogElement} */ (h("dialog.chat-panel", {
      id: "chat-panel", "aria-labelledby": "chat-title",
      onclose: () => { this.open = false; this.unread = 0; this.ctrl.redraw(); },
      onclick: (/** @type {MouseEvent} */ e) => {  // the backdrop closes it
        if (e.target !== dialog) return;
        const r = dialog.getBoundingClientRect();
        if (e.clientX < r.left || e.clientX > r.right || e.clientY < r.top || e.clientY > r.bottom) dialog.close();
      },
    },
    h("div.modal-head", h("h2", { id: "chat-title" }, t("chat.title")),
      h("button.close", { type: "button", id: "chat-close", "aria-label": t("app.close"), onclick: () => dialog.close() }, "✕")),
    h("p.chat-note", { id: "chat-note", hidden: true }),
    h("ol.chat-log", { id: "chat-log", tabindex: "0", "aria-label": t("chat.title"), "aria-live": "polite" }),
    h("div.chat-muted", { id: "chat-muted", hidden: true }),
    h("div.chat-phrases", { id: "chat-phrases", role: "group", "aria-label": t("chat.phrases") }),
    form));
    root.append(dialog);
    this.dialog = dialog;
    return dialog;
  }

  /** The panel's insides from the state (when it is open, or has been). */
  drawPanel() {
    const dialog = this.dialog;
    if (!dialog || !dialog.isConnected) return;
    const me = session.user?.id;
    // The panel's own words, in the page's language now (it may have been switched).
    /** @type {HTMLElement} */ (dialog.querySelector("#chat-title")).textContent = t("chat.title");
    const input = /** @type {HTMLInputElement} */ (dialog.querySelector("#chat-text"));
    input.placeholder = t("chat.placeholder");
    input.setAttribute("aria-label", t("chat.placeholder"));
    /** @type {HTMLElement} */ (dialog.querySelector("#chat-send")).textContent = t("chat.send");
    const log = /** @type {HTMLElement} */ (dialog.querySelector("#chat-log"));
    const shown = this.shown();
    log.replaceChildren(...(shown.length ? shown.map((m) => this.line(m, me)) : [h("li.muted.chat-empty", t("chat.empty"))]));
    log.scrollTop = log.scrollHeight;
    // Players at a coin table in play do not read the spectators: say so to both.
    const info = this.ctrl.info;
    const note = /** @type {HTMLElement} */ (dialog.querySelector("#chat-note"));
    const apart = !!info?.coin_table && info.status === "playing";
    note.hidden = !apart;
    note.textContent = apart ? t("chat.spectators_hidden") : "";
    const mutedBox = /** @type {HTMLElement} */ (dialog.querySelector("#chat-muted"));
    const muted = Object.entries(this.muted);
    mutedBox.hidden = !muted.length;
    mutedBox.replaceChildren(...(muted.length ? [h("span", t("chat.muted_list"), ": "), ...muted.map(([id, name]) =>
      h("span.chip", { dataset: { user: id } }, h("bdi", { dir: "auto" }, name || "?"), " ",
        h("button.link", { type: "button", class: "unmute", onclick: () => this.unmute(id) }, t("chat.unmute"))))] : []));
    const phrases = /** @type {HTMLElement} */ (dialog.querySelector("#chat-phrases"));
    if (phrases.childElementCount !== PHRASES.length || phrases.dataset.lang !== document.documentElement.lang) {
      phrases.dataset.lang = document.documentElement.lang;
      phrases.replaceChildren(...PHRASES.map((key) => h("button.chip", {
        type: "button", dataset: { phrase: key }, onclick: () => this.say({ phrase: key }),
      }, t(`chat.phrase.${key}`))));
    }
  }

  /** One message: who said it (a spectator marked so), its words, mute and report. */
  line(/** @type {ChatMessage} */ m, /** @type {number | undefined} */ me) {
    // The name as it was said (a seat may have changed hands since); "you" for mine.
    const who = m.user_id === me ? t("table.you") : m.name || (m.seat !== null ? t("table.seat_n", { n: m.seat + 1 }) : "");
    const words = m.phrase ? t(`chat.phrase.${m.phrase}`) : m.text || "";
    const mine = m.user_id === me;
    return h(`li.chat-line${mine ? ".mine" : ""}${m.channel === "spectators" ? ".spectator" : ""}`, {
      dataset: { id: m.id, user: String(m.user_id), channel: m.channel },
    },
    h("strong.chat-who", h("bdi", { dir: "auto" }, who || "?")),
    m.channel === "spectators" ? h("span.badge.chat-watching", t("chat.watching")) : null,
    h("bdi.chat-text", { dir: "auto" }, words),
    mine ? null : h("span.chat-actions",
      h("button.icon.chat-mute", {
        type: "button", title: t("chat.mute", { name: m.name || "" }), "aria-label": t("chat.mute", { name: m.name || "" }),
        onclick: () => this.mute(m),
      }, icon("muted")),
      h("button.icon.chat-report", {
        type: "button", title: t("chat.report"), "aria-label": t("chat.report"), disabled: this.reported.has(m.id),
        onclick: () => this.report(m),
      }, icon("flag"))));
  }
}

/** The chat button of the table's bar, with its unread count (nothing when chat is off). */
export function chatButton(/** @type {TableCtrl} */ ctrl) {
  const chat = ctrl.chat;
  if (!chat.on) return null;
  const n = chat.unread;
  return v("button", {
    type: "button", id: "chat-button", class: n ? "has-unread" : "", onclick: () => chat.show(),
    "aria-label": n ? t("chat.button_unread", { n }) : t("chat.button"), "aria-haspopup": "dialog",
  }, vicon("chat"), v("span.label", t("chat.button")),
  n ? v("span.chat-unread", { id: "chat-unread", "aria-hidden": "true" }, n > 99 ? "99+" : String(n)) : null);
}
