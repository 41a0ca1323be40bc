// A face for every player without uploads: a coloured disc with a mirrored 5×5 pattern
// and the name's first letter, all drawn from a hash of the name as the server compares
// names (NFKC, case-folded), so that a name always has the same face on every page.
// Decorative: the name is always written beside it (aria-hidden).

const SVG = "http://www.w3.org/2000/svg";

/** FNV-1a over the name's UTF-16 code units: a 32-bit number. */
function hash(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** The letter shown: the first letter or digit after a "guest-" prefix. */
function initial(name) {
  const rest = name.replace(/^guest-/i, "");
  const found = rest.match(/[\p{L}\p{N}]/u) || name.match(/[\p{L}\p{N}]/u);
  return found ? found[0].toLocaleUpperCase() : "?";
}

function node(tag, attrs) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  return el;
}

/** avatar("layla") → <span class="face"><svg …></span>, `size` pixels square. */
export function avatar(name, size = 32) {
  const text = String(name ?? "").normalize("NFKC");
  const key = text.toLowerCase();
  const h = hash(key);
  const hue = h % 360;
  const box = document.createElement("span");
  box.className = "face";
  box.setAttribute("aria-hidden", "true");
  box.dataset.name = key;
  const svg = node("svg", { viewBox: "0 0 40 40", width: size, height: size, focusable: "false" });
  svg.append(
    node("circle", { cx: 20, cy: 20, r: 20, fill: `hsl(${hue} 52% 36%)` }),
  );
  // The pattern: columns 0–2 from the hash, mirrored onto 3–4, in a lighter tone.
  const bits = hash(`${key}#pattern`);
  const pattern = node("g", { fill: `hsl(${(hue + 40) % 360} 70% 72%)`, "fill-opacity": "0.35" });
  for (let row = 0; row < 5; row += 1) {
    for (let col = 0; col < 3; col += 1) {
      if (!((bits >>> (row * 3 + col)) & 1)) continue;
      for (const x of new Set([col, 4 - col])) {
        pattern.append(node("rect", { x: 5 + x * 6, y: 5 + row * 6, width: 6, height: 6 }));
      }
    }
  }
  const letter = node("text", {
    x: 20, y: 21, "text-anchor": "middle", "dominant-baseline": "central",
    "font-size": 20, "font-weight": 700, fill: "#fff",
    "font-family": "Noto Sans Arabic, Segoe UI, Tahoma, system-ui, sans-serif",
  });
  letter.textContent = initial(text);
  svg.append(pattern, letter);
  box.append(svg);
  return box;
}
