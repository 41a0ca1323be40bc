// The lobby: sign in (guest in one click, or an account), my name (with a generated
// face, and a rename), the table list with filters, creating a table with its options,
// joining by seat or invite code, watching, my match history (place and points, each a
// link to its replay), my ratings (each pool's, a link to my profile), and the
// leaderboard by coins, by wins or by rating in a pool (hidden on 404). At the top: my
// games (the tables I am seated at, private ones too: GET /api/me/tables) with whose
// turn it is and a tap back to my seat, the offer of that seat when the page opens
// again after a closed tab, and a new guest's chance to change their generated name.
import { h, mount, toast, oneAtATime } from "./dom.js";
import { t, errorText, getLang } from "./i18n.js";
import { api, session, ensureUser, rememberTable, myTables, guestBody } from "./api.js";
import { createForm } from "./options.js";
import { quickPlayBox, leaveLobby } from "./quickplay.js";
import { POOLS, ratingBadge, ratingBoard, noteMe, myRatings } from "./rating.js";
import { avatar } from "./avatar.js";
import { icon } from "./icons.js";
import { bellOn, bellBlocked, bellSupported, setBell } from "./table/attention.js";
import { friendsBox } from "./friends.js";

const filters = { game: "", status: "", money: "", free_seat: false };

// A phrase with its {values} each in an isolate: "-30" keeps its sign before its
// digits in an Arabic line, a name its own direction.
function phrase(key, values) {
  return t(key).split(/\{(\w+)\}/).map((part, i) => (i % 2 ? h("bdi", String(values[part] ?? "")) : part));
}
let boardBy = "coins";  // the leaderboard tab shown: "coins", "wins" or "rating"
let boardPool = "konkan51";  // the rating tab's pool
const BOARDS = ["coins", "wins", "rating"];
let boardLoads = 0;  // how many leaderboard loads have started: the newest one draws
const PAGE = 50; // tables a page of GET /api/tables brings (the server's default page)
let seatOffered = false;  // the page offered my seat back once, when it opened
const NAMED = "sahrat.named";  // the guests (ids) that kept or changed their generated name

export function showLobby(main, { onUser }) {
  let timer = null;
  const list = h("div.table-list", { id: "table-list" });
  const history = h("div", { id: "history" });
  const coins = h("section.card-box.coins", { id: "coins", hidden: true });
  const meCard = h("section.card-box.me-card", { id: "me-card", hidden: true });
  const myGames = h("section.card-box.my-games", { id: "my-games", hidden: true });
  const resume = h("div.resume-seat", { id: "resume-seat", role: "status", hidden: true });
  const namePrompt = h("section.card-box.name-prompt", { id: "name-prompt", hidden: true });
  let balance = null;  // my coins (GET /api/me), once known

  let pages = 1; // pages of the list shown ("more" adds one; a new filter starts again)

  // The list a page at a time (oldest first), as many pages as are shown.
  async function refresh() {
    try {
      const tables = [];
      let full = true;
      for (let page = 0; page < pages && full; page++) {
        const query = new URLSearchParams({ limit: String(PAGE) });
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
    const busy = {};  // logging in and signing up: one request at a time
    const submit = (path) => (event) => {
      event.preventDefault();
      return oneAtATime(busy, async () => {
        try { await signedIn(await api("POST", path, { name: name.value.trim(), password: password.value })); }
        catch (error) { toast(errorText(error.detail), "error"); }
      })();
    };
    return h("section.card-box.welcome",
      h("h2", t("lobby.welcome")),
      h("p", t("lobby.intro")),
      // A first visit has one "play now" (the quick-play box above) and how to play;
      // a guest who would rather look around first signs in with the quieter button.
      h("section.howto", { id: "howto", "aria-labelledby": "howto-title" },
        h("h3", { id: "howto-title" }, t("howto.title")),
        h("ol", h("li", t("howto.step1")), h("li", t("howto.step2")), h("li", t("howto.step3"))),
        h("p", h("a", { href: "#/rules/konkan", id: "howto-rules" }, t("howto.rules")), " · ",
          h("a", { href: "#/rules/conquian" }, t("rules.title", { game: t("game.conquian") })))),
      h("button", {
        type: "button", id: "guest",
        onclick: oneAtATime(busy, async () => {
          try { await signedIn(await api("POST", "/api/guests", guestBody())); }
          catch (error) { toast(errorText(error.detail), "error"); }
        }),
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
          tb.rated ? h("span.badge.rated", t("rating.rated_badge")) : null,
          h(`span.badge.status-${tb.status}`, t(`status.${tb.status}`)),
        ),
        h("div.table-meta",
          tb.game === "conquian"
            ? t("lobby.wins_needed", { n: tb.options.wins_needed })
            : t("lobby.threshold_rounds", { threshold: tb.options.threshold, rounds: tb.options.rounds }),
          " · ", t("lobby.seats_taken", { taken, total: tb.seats.length }),
          " · ", t("lobby.turn_secs", { n: tb.options.turn_seconds }),
        ),
        h("div.seat-names", tb.seats.map((s) => h("span.seat-name", s.name || (s.bot ? [icon("bot"), t("table.bot_name", { n: s.seat + 1 })] : t("table.empty_seat"))))),
        h("div.row",
          mine ? h("button.primary", { type: "button", onclick: () => { location.hash = `#/t/${tb.id}`; } }, t("lobby.open"))
            : free && tb.status === "waiting" && !tb.rated ? h("button.primary.join", { type: "button", onclick: () => join(tb) }, t("lobby.join")) : null,
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
    const joining = oneAtATime(code, async () => {
      try {
        await ensureUser(); onUser();
        const tb = await api("POST", "/api/tables/join", { invite_code: code.value.trim() });
        rememberTable(tb.id);
        location.hash = `#/t/${tb.id}`;
      } catch (error) { toast(errorText(error.detail), "error"); }
    });
    return h("form.row", {
      onsubmit: (event) => { event.preventDefault(); return joining(); },
    }, code, h("button", { type: "submit" }, t("lobby.join_invite")));
  }

  // The places' words: "2nd of 4" (and "المركز الثاني من 4").
  const placeText = (place, n) => phrase("history.place", {
    place: place >= 1 && place <= 4 ? t(`history.ord_${place}`) : String(place), n,
  });
  const dateText = (when) => new Date(when).toLocaleString(getLang() === "ar" ? "ar-u-nu-latn" : "en-GB",
    { dateStyle: "medium", timeStyle: "short" });
  const seatName = (m, seat) => m.names?.[seat] ?? (m.players[seat] === null
    ? t("table.bot_name", { n: seat + 1 }) : t("table.seat_n", { n: seat + 1 }));

  /** Whether a match of mine counted (earned coins, counts for coin tables and the
   * leaderboard: docs/economy.md); nothing when the server did not say (a table's list). */
  function countedFlag(m) {
    if (typeof m.counted !== "boolean") return null;
    return h(`span.counted.${m.counted ? "yes" : "no"}`, { title: t("history.counted_note") },
      t(m.counted ? "history.counted" : "history.not_counted"));
  }

  /** One finished match: won/lost · 2nd of 4 · 312 pts, the game, the date, whether it
   * counted, and the others. */
  function historyRow(m, me) {
    const mySeat = m.seat ?? m.players.indexOf(me);
    const won = m.won ?? (m.winner_seat !== null && m.winner_seat === mySeat);
    const result = won ? "won" : m.winner_seat === null ? "no_winner" : "lost";
    const parts = [];
    if (m.place) parts.push(placeText(m.place, m.players.length));
    if (m.total !== undefined && m.total !== null) {
      parts.push(phrase(m.game === "conquian" ? "history.deals_won" : "history.points", { n: m.total }));
    }
    const others = m.players.map((_, seat) => seat).filter((seat) => seat !== mySeat);
    const counted = countedFlag(m);
    return h("li.match-row", { dataset: { match: m.id } },
      h("a.match-link", { href: `#/m/${m.id}` },
        h(`span.result.${result}`, t(`history.${result}`)),
        h("span.match-main",
          h("span.match-score", parts.map((part, i) => [i ? " · " : "", h("span", part)])),
          h("span.match-meta", t(`game.${m.game}`), " · ", h("bdi", dateText(m.finished_at)),
            counted ? [" · ", counted] : null)),
        h("span.match-others", { title: others.map((seat) => seatName(m, seat)).join(", ") },
          others.map((seat) => h("span.other",
            avatar(seatName(m, seat), 22),
            h("bdi", seatName(m, seat)))))),
      // Beside the replay's link, not inside it (a link holds no other link): the row's
      // one link stays the replay's.
      m.game === "conquian" ? null : h("button.link.match-analysis", {
        type: "button", onclick: () => { location.hash = `#/m/${m.id}/analysis`; },
      }, t("analysis.open")));
  }

  async function loadHistory() {
    const rows = [];
    if (session.token) {
      // The server knows every match I played in (GET /api/me/matches).
      try { rows.push(...(await api("GET", "/api/me/matches?limit=20"))); } catch { /* signed out */ }
    }
    if (!rows.length) {
      for (const id of myTables().slice(0, 10)) {
        try { rows.push(...(await api("GET", `/api/tables/${id}/matches`))); } catch { /* a table may be gone */ }
      }
    }
    rows.sort((a, b) => b.id - a.id);
    if (!rows.length) { mount(history, h("p.muted", t("history.none"))); return; }
    const me = session.user?.id;
    mount(history, h("ul.history", rows.map((m) => historyRow(m, me))));
  }

  // --- my games: the tables I am seated at, mine first -------------------------------

  const gameName = (/** @type {any} */ tb) => t(tb.game === "konkan" && tb.options?.threshold === 71 ? "game.konkan71" : `game.${tb.game}`);
  const backToSeat = (/** @type {number} */ id) => { rememberTable(id); location.hash = `#/t/${id}`; };

  /** Where a table of mine stands: my move, someone's, waiting, between rounds, over. */
  function standing(/** @type {any} */ line) {
    if (line.finished) return t("mygames.finished");
    if (line.table.status === "waiting") return t("mygames.waiting");
    if (line.yours) return t("mygames.your_turn");
    if (line.turn === null) return t("mygames.between");
    return line.turn_name === null ? t("mygames.turn_bot") : phrase("mygames.turn_of", { name: line.turn_name });
  }

  function myGameRow(/** @type {any} */ line) {
    const tb = line.table;
    return h("article.my-game", { class: line.yours ? "yours" : "", dataset: { table: tb.id, status: tb.status } },
      h("div.table-title",
        h("strong", gameName(tb)), " ", h("span.muted", `#${tb.id}`),
        tb.private ? h("span.badge.private", t("mygames.private")) : null,
        h("span.badge", tb.coin_table ? t("lobby.coins_stake", { stake: tb.options.stake }) : t("lobby.free"))),
      h("div.my-game-state", h(`span.turn${line.yours ? ".mine" : ""}`, standing(line)),
        " · ", t("mygames.seat", { n: line.seat + 1 }),
        line.left ? [" · ", h("span.muted", t("mygames.left"))] : null),
      h("div.seat-names", tb.seats.map((/** @type {any} */ s) => h("span.seat-name", s.name ? h("bdi", s.name)
        : s.bot ? [icon("bot"), t("table.bot_name", { n: s.seat + 1 })] : t("table.empty_seat")))),
      h("div.row", h("button.primary.back-to-seat", { type: "button", onclick: () => backToSeat(tb.id) }, t("mygames.back"))));
  }

  // The bell: a Notification when my turn comes while the tab is hidden (attention.js).
  function bellButton() {
    if (!bellSupported()) return null;
    const on = bellOn();
    return h("button.link.turn-bell", {
      type: "button", id: "turn-bell", "aria-pressed": on ? "true" : "false",
      onclick: async () => {
        const now = await setBell(!on);
        if (!on && !now) toast(t(bellBlocked() ? "attention.blocked" : "attention.bell"), "error");
        loadMine();
      },
    }, icon("bell"), " ", t(on ? "attention.bell_off" : "attention.bell"));
  }

  // Opened again after the tab was closed: my seat offered at once (not taken by itself).
  function offerSeat(/** @type {any[]} */ lines) {
    const line = lines.find((x) => !x.finished);
    if (!line) return;
    const tb = line.table;
    const values = { game: gameName(tb), id: tb.id };
    mount(resume,
      h("span.resume-text", t(line.yours ? "mygames.resume_turn" : "mygames.resume", values)),
      h("button.primary", { type: "button", id: "resume-go", onclick: () => backToSeat(tb.id) }, t("mygames.back")),
      h("button.link", { type: "button", id: "resume-later", onclick: () => { resume.hidden = true; } }, t("mygames.not_now")));
    resume.hidden = false;
  }

  let mineLoads = 0;
  async function loadMine() {
    const load = ++mineLoads;
    if (!session.token) { myGames.hidden = true; return; }
    try {
      const lines = await api("GET", "/api/me/tables");
      if (load !== mineLoads) return;
      if (!seatOffered) { seatOffered = true; offerSeat(lines); }  // once, as the page opens
      if (!lines.length) { myGames.hidden = true; return; }
      mount(myGames,
        h("div.section-head", h("h2", t("mygames.title")), bellButton()),
        h("div.my-game-list", { id: "my-game-list" }, lines.map(myGameRow)));
      myGames.hidden = false;
    } catch { if (load === mineLoads) myGames.hidden = true; }
  }

  // A guest's first visit: their generated name, and the chance to make it their own.
  function drawNamePrompt() {
    const user = session.user;
    const named = JSON.parse(localStorage.getItem(NAMED) || "[]");
    if (!session.token || !user?.guest || named.includes(user.id)) { namePrompt.hidden = true; return; }
    const done = () => {
      localStorage.setItem(NAMED, JSON.stringify([...named, user.id].slice(-20)));
      namePrompt.hidden = true;
    };
    const input = h("input", {
      name: "first-name", id: "first-name-input", value: user.name, required: true, minlength: 3, maxlength: 40,
      autocomplete: "nickname", spellcheck: "false", "aria-label": t("me.new_name"), "aria-describedby": "first-name-rules",
    });
    mount(namePrompt,
      h("h2", phrase("name.prompt_title", { name: user.name })),
      h("p.muted", t("name.prompt_hint")),
      h("form.row", {
        id: "first-name-form",
        onsubmit: async (/** @type {Event} */ event) => {
          event.preventDefault();
          const name = input.value.trim();
          if (name === user.name) { done(); return; }
          try {
            const me = await api("PATCH", "/api/me", { name });
            session.save({ token: session.token, user: { ...user, name: me.name } });
            done();
            onUser();
            drawMe();
            toast(t("me.renamed", { name: me.name }));
          } catch (error) { toast(nameRefusal(error), "error"); input.focus(); }
        },
      }, input,
      h("button.primary", { type: "submit", id: "first-name-save" }, t("me.save")),
      h("button.link", { type: "button", id: "first-name-keep", onclick: done }, t("name.keep"))),
      h("p.muted.rename-rules", { id: "first-name-rules" }, t("me.name_rules")));
    namePrompt.hidden = false;
  }

  /** A refused name in words: the server's code, or the rules for a malformed one. */
  function nameRefusal(/** @type {any} */ error) {
    const code = error.detail?.code;
    if (code === "name_mixes_scripts" || code === "name_hidden_chars" || code === "name_taken" || code === "too_many_renames") return t(`err.${code}`);
    return error.status === 422 ? t("me.name_rules") : errorText(error.detail);
  }

  // My face, my name (and a form to change it) and my coins (GET /api/me).
  function drawMe() {
    const user = session.user;
    if (!session.token || !user) { meCard.hidden = true; return; }
    const input = h("input", {
      name: "display-name", id: "rename-input", value: user.name, required: true, minlength: 3, maxlength: 40,
      autocomplete: "nickname", spellcheck: "false", "aria-describedby": "rename-rules",
    });
    const form = h("form.row.rename-form", {
      id: "rename-form",
      onsubmit: async (event) => {
        event.preventDefault();
        const name = input.value.trim();
        if (name === user.name) return;
        try {
          const me = await api("PATCH", "/api/me", { name });
          session.save({ token: session.token, user: { ...user, name: me.name } });
          balance = me.balance;
          onUser();
          drawMe();
          toast(t("me.renamed", { name: me.name }));
          loadHistory();
          loadCoins();
        } catch (error) {
          toast(nameRefusal(error), "error");
          input.focus();
        }
      },
    }, h("label.rename-label", t("me.new_name"), input), h("button.primary", { type: "submit", id: "rename-save" }, t("me.save")));
    mount(meCard,
      h("div.me-head",
        avatar(user.name, 56),
        h("div.me-text",
          h("h2", { id: "me-name" }, h("bdi", user.name)),
          user.guest ? h("p.muted.me-note", t("me.guest_note")) : null,
          balance !== null ? h("p", { id: "balance" }, phrase("coins.balance", { coins: balance })) : null)),
      myRatingsLine(user.id),
      h("details.rename", { id: "rename" },
        h("summary", t("me.rename")),
        form,
        h("p.muted.rename-rules", { id: "rename-rules" }, t("me.name_rules"))));
    meCard.hidden = false;
  }

  // My rating in each pool I have played, and the way to my profile (its charts).
  function myRatingsLine(/** @type {number} */ id) {
    const ratings = myRatings()?.ratings || {};
    const played = POOLS.filter((pool) => ratings[pool]?.games > 0);
    return h("p.my-ratings", { id: "my-ratings" },
      played.map((pool) => h("span.pool-rating", t(`rating.pool.${pool}`), " ", ratingBadge(h, ratings[pool].rating, ratings[pool].provisional))),
      h("a", { href: `#/u/${id}`, id: "my-profile" }, t("profile.open")));
  }

  function boardTabs() {
    const tab = (by) => h("button.tab", {
      type: "button", role: "tab", id: `board-${by}`, "aria-controls": "leaderboard-panel",
      "aria-selected": boardBy === by ? "true" : "false", tabindex: boardBy === by ? 0 : -1,
      onclick: () => { boardBy = by; loadCoins(); },
      onkeydown: (event) => {
        if (!["ArrowLeft", "ArrowRight", "Home", "End"].includes(event.key)) return;
        event.preventDefault();
        // Arrows move along the tabs as they are laid out: right to left in Arabic.
        const forward = (event.key === "ArrowLeft") === (document.documentElement.dir === "rtl");
        const at = BOARDS.indexOf(boardBy);
        boardBy = event.key === "Home" ? BOARDS[0] : event.key === "End" ? BOARDS[BOARDS.length - 1]
          : BOARDS[(at + (forward ? 1 : BOARDS.length - 1)) % BOARDS.length];
        loadCoins().then(() => coins.querySelector(`#board-${boardBy}`)?.focus());
      },
    }, t(`board.by_${by}`));
    return h("div.tabs", { role: "tablist", "aria-label": t("board.title") }, BOARDS.map(tab));
  }

  // The rating board's pool: one of three, chosen with a select (a phone has no room for tabs in tabs).
  function poolChooser() {
    return h("label.pool-choice", t("rating.pool_label"), h("select", {
      id: "board-pool",
      onchange: (/** @type {Event} */ event) => { boardPool = /** @type {HTMLSelectElement} */ (event.target).value; loadCoins(); },
    }, POOLS.map((pool) => h("option", { value: pool, selected: pool === boardPool ? true : undefined }, t(`rating.pool.${pool}`)))));
  }

  // A leaderboard row's value: coins, wins, or a settled rating with its games.
  function boardValue(/** @type {string} */ by, /** @type {any} */ row) {
    if (by === "coins") return phrase("board.coins_n", { n: row.coins });
    if (by === "wins") return phrase("board.wins_n", { n: row.wins });
    return [ratingBadge(h, row.rating, false), " ", h("span.muted.games", phrase("rating.games_n", { n: row.games }))];
  }

  // The leaderboard, by coins or by wins (tabs), and my balance; hidden without coins.
  // Loads overlap (the page's first load, a sign-in, a tab click): only the newest one
  // draws, so an answer that arrives late, fetched signed out or for the other tab,
  // never replaces a newer board.
  async function loadCoins() {
    const load = ++boardLoads;
    try {
      const by = boardBy;
      const pool = boardPool;
      /** @type {string | null} */
      let boardError = null;
      const [me, board] = await Promise.all([
        session.token ? api("GET", "/api/me") : null,
        by === "rating"
          ? ratingBoard(pool).catch((error) => { boardError = errorText(error.detail); return []; })
          : api("GET", `/api/leaderboard?by=${by}&limit=10`),
      ]);
      if (load !== boardLoads) return;
      if (me) {
        const rated = JSON.stringify(myRatings()?.ratings || null);
        noteMe(me);
        if (JSON.stringify(myRatings()?.ratings || null) !== rated) drawMe();
        const kept = session.user;
        const renamed = kept && kept.name !== me.name;  // elsewhere: this page learns it now
        if (renamed) { session.save({ token: session.token, user: { ...kept, name: me.name } }); onUser(); }
        if (renamed || balance !== me.balance || meCard.hidden) { balance = me.balance; drawMe(); }
      }
      const mine = session.user?.id;
      mount(coins,
        h("h2", t("board.title")),
        boardTabs(),
        h("div.board-panel", { id: "leaderboard-panel", role: "tabpanel", "aria-labelledby": `board-${by}` },
          by === "rating" ? poolChooser() : null,
          board?.length
            ? h("ol.leaderboard", { id: "leaderboard", dataset: { by, pool: by === "rating" ? pool : undefined } }, board.map((row, i) => h("li.leader-row", {
              class: row.user_id === mine ? "me" : "", dataset: { user: row.user_id },
            },
            h("span.rank", h("bdi", row.rank ?? i + 1)),
            avatar(row.name, 28),
            h("a.leader-name", { href: `#/u/${row.user_id}` }, h("bdi", row.name)),
            h("span.leader-value", boardValue(by, row)))))
            : h("p.muted", boardError || t(by === "rating" ? "rating.board_empty" : "board.empty"))),
      );
      coins.hidden = false;
    } catch { if (load === boardLoads) coins.hidden = true; }
  }

  function draw() {
    mount(main,
      h("div.lobby",
        resume,
        namePrompt,
        myGames,
        quickPlayBox(onUser),
        authBox(),
        meCard,
        friendsBox(),
        h("div.lobby-main",
          h("section.card-box",
            h("div.section-head", h("h2", t("lobby.tables")),
              h("button.link", { type: "button", onclick: refresh }, t("lobby.refresh"))),
            filterBar(),
            list,
          ),
          h("section.card-box", h("h2", t("lobby.create")), createForm(async (body) => {
            try {
              await ensureUser(); onUser();
              const tb = await api("POST", "/api/tables", body);
              rememberTable(tb.id);
              location.hash = `#/t/${tb.id}`;
            } catch (error) { toast(errorText(error.detail), "error"); }
          })),
          h("section.card-box", h("h2", t("lobby.private")), inviteBox()),
        ),
        h("div.side",
          coins,
          h("section.card-box", h("h2", t("history.title")), history,
            h("form.row", {
              onsubmit: (event) => { event.preventDefault(); location.hash = `#/m/${event.target.match.value}`; },
            }, h("input", { name: "match", type: "number", min: 1, placeholder: t("history.match_id"), "aria-label": t("history.match_id") }),
            h("button", { type: "submit" }, t("history.open")))),
        ),
      ),
    );
    drawMe();
    drawNamePrompt();
    loadMine();
    refresh();
    loadHistory();
    loadCoins();
  }

  draw();
  timer = setInterval(() => { refresh(); loadMine(); }, 5000);
  return { close: () => { clearInterval(timer); leaveLobby(); }, rerender: draw };
}
