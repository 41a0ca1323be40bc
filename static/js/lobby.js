// The lobby: sign in (guest in one click, or an account), the table list with
// filters, creating a table with its options, joining by seat or invite code,
// watching, my match history, and a place for coins/leaderboard (hidden on 404).
import { h, mount, toast } from "./dom.js";
import { t, errorText, getLang } from "./i18n.js";
import { api, session, ensureUser, rememberTable, myTables } from "./api.js";
import { createForm } from "./options.js";
import { quickPlayBox } from "./quickplay.js";

const filters = { game: "", status: "", money: "", free_seat: false };
const PAGE = 50; // tables a page of GET /api/tables brings (the server's default page)

export function showLobby(main, { onUser }) {
  let timer = null;
  const list = h("div.table-list", { id: "table-list" });
  const history = h("div", { id: "history" });
  const coins = h("section.card-box.coins", { id: "coins", hidden: true });

  let pages = 1; // pages of the list shown ("more" adds one; a new filter starts again)

  // The list a page at a time (oldest first), as many pages as are shown.
  async function refresh() {
    try {
      const tables = [];
      let full = true;
      for (let page = 0; page < pages && full; page++) {
        const query = new URLSearchParams({ limit: PAGE });
        if (filters.game) query.set("game", filters.game);
        if (filters.status) query.set("status", filters.status);
        if (tables.length) query.set("after", tables[tables.length - 1].id);
        const found = await api("GET", `/api/tables?${query}`);
        tables.push(...found);
        full = found.length === PAGE;
      }
      renderTables(list, tables, full);
    } catch (error) {
      mount(list, h("p.muted", errorText(error.detail)));
    }
  }

  function more() { pages += 1; refresh(); }
  function filtered() { pages = 1; refresh(); }

  async function signedIn(auth) {
    session.save(auth);
    onUser();
    draw();
  }

  function authBox() {
    if (session.token) return null;
    const name = h("input", { name: "name", autocomplete: "username", required: true, minlength: 3, maxlength: 40 });
    const password = h("input", { name: "password", type: "password", autocomplete: "current-password", required: true, minlength: 8 });
    const submit = (path) => async (event) => {
      event.preventDefault();
      try { await signedIn(await api("POST", path, { name: name.value.trim(), password: password.value })); }
      catch (error) { toast(errorText(error.detail), "error"); }
    };
    return h("section.card-box.welcome",
      h("h2", t("lobby.welcome")),
      h("p", t("lobby.intro")),
      h("button.primary.big", {
        type: "button", id: "guest",
        onclick: async () => {
          try { await signedIn(await api("POST", "/api/guests")); }
          catch (error) { toast(errorText(error.detail), "error"); }
        },
      }, t("lobby.play_as_guest")),
      h("details.account",
        h("summary", t("lobby.have_account")),
        h("form.stack", { onsubmit: submit("/api/login") },
          h("label", t("lobby.name"), name),
          h("label", t("lobby.password"), password),
          h("div.row",
            h("button.primary", { type: "submit" }, t("lobby.login")),
            h("button", { type: "button", onclick: submit("/api/users") }, t("lobby.signup")),
          ),
        ),
      ),
    );
  }

  async function join(table, seat) {
    try {
      await ensureUser(); onUser();
      await api("POST", `/api/tables/${table.id}/join`, seat === undefined ? {} : { seat });
      rememberTable(table.id);
      location.hash = `#/t/${table.id}`;
    } catch (error) { toast(errorText(error.detail), "error"); }
  }

  function renderTables(box, tables, hasMore) {
    const me = session.user?.id;
    const shown = tables.filter((tb) => {
      const free = tb.seats.some((s) => s.user_id === null && !s.bot);
      if (filters.status && tb.status !== filters.status) return false;
      if (filters.money === "free" && tb.coin_table) return false;
      if (filters.money === "coins" && !tb.coin_table) return false;
      if (filters.free_seat && !free) return false;
      return true;
    });
    const moreButton = hasMore
      ? h("button.link", { type: "button", id: "more-tables", onclick: more }, t("lobby.more_tables"))
      : null;
    if (!shown.length) { mount(box, h("p.muted", t("lobby.no_tables")), moreButton); return; }
    mount(box, shown.map((tb) => {
      const mine = tb.seats.some((s) => s.user_id === me && me !== undefined);
      const free = tb.seats.some((s) => s.user_id === null && !s.bot);
      const taken = tb.seats.filter((s) => s.user_id !== null || s.bot).length;
      return h("article.table-row", { dataset: { table: tb.id } },
        h("div.table-title",
          h("strong", t(`game.${tb.game}`)), " ",
          h("span.muted", `#${tb.id}`),
          h("span.badge", tb.coin_table ? t("lobby.coins_stake", { stake: tb.options.stake }) : t("lobby.free")),
          h(`span.badge.status-${tb.status}`, t(`status.${tb.status}`)),
        ),
        h("div.table-meta",
          tb.game === "conquian"
            ? t("lobby.wins_needed", { n: tb.options.wins_needed })
            : t("lobby.threshold_rounds", { threshold: tb.options.threshold, rounds: tb.options.rounds }),
          " · ", t("lobby.seats_taken", { taken, total: tb.seats.length }),
          " · ", t("lobby.turn_secs", { n: tb.options.turn_seconds }),
        ),
        h("div.seat-names", tb.seats.map((s) => h("span.seat-name", s.name || (s.bot ? `🤖 ${t("table.bot_name", { n: s.seat + 1 })}` : t("table.empty_seat"))))),
        h("div.row",
          mine ? h("button.primary", { type: "button", onclick: () => { location.hash = `#/t/${tb.id}`; } }, t("lobby.open"))
            : free && tb.status === "waiting" ? h("button.primary.join", { type: "button", onclick: () => join(tb) }, t("lobby.join")) : null,
          mine ? null : h("button.watch", {
            type: "button",
            onclick: async () => { await ensureUser(); location.hash = `#/t/${tb.id}`; },
          }, t("lobby.watch")),
        ),
      );
    }), moreButton);
  }

  function filterBar() {
    const select = (key, options) => h("select", {
      "aria-label": t(`filter.${key}`),
      onchange: (event) => { filters[key] = event.target.value; filtered(); },
    }, options.map(([value, text]) => h("option", { value, selected: filters[key] === value ? true : undefined }, text)));
    return h("div.filters",
      select("game", [["", t("filter.all_games")], ["konkan", t("game.konkan")], ["konkan71", t("game.konkan71")], ["conquian", t("game.conquian")]]),
      select("status", [["", t("filter.any_status")], ["waiting", t("status.waiting")], ["playing", t("status.playing")]]),
      select("money", [["", t("filter.free_or_coins")], ["free", t("lobby.free")], ["coins", t("lobby.coins")]]),
      h("label.check", h("input", {
        type: "checkbox", checked: filters.free_seat,
        onchange: (event) => { filters.free_seat = event.target.checked; filtered(); },
      }), t("filter.free_seat")),
    );
  }

  function inviteBox() {
    const code = h("input", { name: "invite", placeholder: t("lobby.invite_code"), "aria-label": t("lobby.invite_code") });
    return h("form.row", {
      onsubmit: async (event) => {
        event.preventDefault();
        try {
          await ensureUser(); onUser();
          const tb = await api("POST", "/api/tables/join", { invite_code: code.value.trim() });
          rememberTable(tb.id);
          location.hash = `#/t/${tb.id}`;
        } catch (error) { toast(errorText(error.detail), "error"); }
      },
    }, code, h("button", { type: "submit" }, t("lobby.join_invite")));
  }

  async function loadHistory() {
    const rows = [];
    if (session.token) {
      // The server knows every match I played in (GET /api/me/matches).
      try { rows.push(...(await api("GET", "/api/me/matches"))); } catch { /* signed out */ }
    }
    if (!rows.length) {
      for (const id of myTables().slice(0, 10)) {
        try { rows.push(...(await api("GET", `/api/tables/${id}/matches`))); } catch { /* a table may be gone */ }
      }
    }
    rows.sort((a, b) => b.id - a.id);
    if (!rows.length) { mount(history, h("p.muted", t("history.none"))); return; }
    const me = session.user?.id;
    mount(history, h("ul.history", rows.map((m) => {
      const mySeat = m.players.indexOf(me);
      const result = m.winner_seat === null ? t("history.no_winner")
        : m.winner_seat === mySeat ? t("history.won") : t("history.lost");
      return h("li", h("a", { href: `#/m/${m.id}` },
        `${t(`game.${m.game}`)} #${m.table_id} · ${new Date(m.finished_at).toLocaleString(getLang() === "ar" ? "ar-u-nu-latn" : "en-GB")} · ${result}`));
    })));
  }

  // My balance (GET /api/me) and the leaderboard by coins; hidden if the server has no coins.
  async function loadCoins() {
    try {
      const [me, board] = await Promise.all([
        session.token ? api("GET", "/api/me") : null,
        api("GET", "/api/leaderboard?by=coins"),
      ]);
      mount(coins,
        h("h2", t("coins.title")),
        me && me.balance !== undefined ? h("p", { id: "balance" }, t("coins.balance", { coins: me.balance })) : null,
        h("ol.leaderboard", (board || []).slice(0, 10).map((row) => h("li", `${row.name} — ${row.coins}`))),
      );
      coins.hidden = false;
    } catch { coins.hidden = true; }
  }

  function draw() {
    mount(main,
      h("div.lobby",
        quickPlayBox(onUser),
        authBox(),
        h("section.card-box",
          h("div.section-head", h("h2", t("lobby.tables")),
            h("button.link", { type: "button", onclick: refresh }, t("lobby.refresh"))),
          filterBar(),
          list,
        ),
        h("div.side",
          h("section.card-box", h("h2", t("lobby.create")), createForm(async (body) => {
            try {
              await ensureUser(); onUser();
              const tb = await api("POST", "/api/tables", body);
              rememberTable(tb.id);
              location.hash = `#/t/${tb.id}`;
            } catch (error) { toast(errorText(error.detail), "error"); }
          })),
          h("section.card-box", h("h2", t("lobby.private")), inviteBox()),
          h("section.card-box", h("h2", t("history.title")), history,
            h("form.row", {
              onsubmit: (event) => { event.preventDefault(); location.hash = `#/m/${event.target.match.value}`; },
            }, h("input", { name: "match", type: "number", min: 1, placeholder: t("history.match_id"), "aria-label": t("history.match_id") }),
            h("button", { type: "submit" }, t("history.open")))),
          coins,
        ),
      ),
    );
    refresh();
    loadHistory();
    loadCoins();
  }

  draw();
  timer = setInterval(refresh, 5000);
  return { close: () => clearInterval(timer), rerender: draw };
}
