// Provably fair shuffles (docs/fairness.md): each round's commitment is shown when it is
// dealt, and its seed and salt are revealed when it ends. The round-end summary checks
// in the browser that SHA-256(salt ":" seed) is the commitment this page was shown.
import { h } from "./dom.js";
import { t } from "./i18n.js";

const shown = new Map();  // "match:round" → the commitment this page was shown at the deal
let match = null;  // the match on screen: its table's seed_commitment

/** Remember the current round's commitment (called whenever the table is drawn). */
export function noteCommitment(st) {
  match = st.info?.seed_commitment ?? null;
  const v = st.view;
  if (v?.round_commitment) shown.set(`${match}:${v.round ?? v.deal}`, v.round_commitment);
}

async function sha256Hex(text) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The commitment, the revealed seed and salt, and the check, for a round_end / deal_end. */
export function fairnessBlock(ev) {
  if (!ev?.round_seed || !ev.round_salt || !ev.round_commitment) return null;
  const atDeal = shown.get(`${match}:${ev.round ?? ev.deal}`);
  const status = h("span.fair-status", { id: "fair-status", role: "status" }, t("fair.checking"));
  if (!globalThis.crypto?.subtle) {
    status.textContent = t("fair.unavailable");
  } else {
    sha256Hex(`${ev.round_salt}:${ev.round_seed}`).then((hex) => {
      const ok = hex === ev.round_commitment && (!atDeal || atDeal === ev.round_commitment);
      status.textContent = !ok ? t("fair.mismatch") : atDeal ? t("fair.verified") : t("fair.verified_late");
      status.dataset.result = ok ? "verified" : "mismatch";
    });
  }
  const row = (key, value) => h("div", h("dt", t(key)), h("dd", h("code", value)));
  return h("details.fairness", { id: "fairness" },
    h("summary", t("fair.title"), ": ", status),
    h("dl",
      row("fair.commitment", atDeal || ev.round_commitment),
      row("fair.seed", ev.round_seed),
      row("fair.salt", ev.round_salt)));
}
