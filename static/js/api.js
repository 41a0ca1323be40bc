// REST calls. The bearer token lives in localStorage so a guest keeps their
// account across reloads; every error is thrown as ApiError with the server's detail.

export class ApiError extends Error {
  constructor(status, detail) {
    super(detail?.message || `HTTP ${status}`);
    this.status = status;
    this.detail = detail;  // {code, message} or a 422 list
  }
}

export const session = {
  get token() { return localStorage.getItem("sahrat.token"); },
  get user() { return JSON.parse(localStorage.getItem("sahrat.user") || "null"); },
  save({ token, user }) {
    localStorage.setItem("sahrat.token", token);
    localStorage.setItem("sahrat.user", JSON.stringify(user));
  },
  clear() {
    localStorage.removeItem("sahrat.token");
    localStorage.removeItem("sahrat.user");
  },
};

export async function api(method, path, body) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (session.token) headers.Authorization = `Bearer ${session.token}`;
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (res.status === 204) return null;
  let data = null;
  try { data = await res.json(); } catch { /* an empty or non-JSON body */ }
  if (!res.ok) throw new ApiError(res.status, data?.detail ?? { code: `http_${res.status}`, message: res.statusText });
  return data;
}

// Calls made while a guest is being created share it: the lobby and an invite link
// opened at once must not make two guests, the second one replacing the first after
// the first had already taken the seat.
let guestComing = null;
/** Sign in as a fresh guest unless a token is already kept. */
export async function ensureUser() {
  if (session.token) return session.user;
  guestComing ||= api("POST", "/api/guests", guestBody())
    .then((auth) => { session.save(auth); return auth.user; })
    .finally(() => { guestComing = null; });
  return guestComing;
}

/** A new guest's name comes in the page's language. */
export const guestBody = () => ({ lang: document.documentElement.lang === "en" ? "en" : "ar" });

// Tables I have sat at, newest first: the history list needs their ids.
export function rememberTable(id) {
  const ids = myTables().filter((x) => x !== id);
  ids.unshift(id);
  localStorage.setItem("sahrat.myTables", JSON.stringify(ids.slice(0, 30)));
}
export const myTables = () => JSON.parse(localStorage.getItem("sahrat.myTables") || "[]");
