// Short sounds made in the page with Web Audio (no files to load): your turn,
// ten seconds left, time ran out. A mute switch, remembered in localStorage.

const KEY = "sahrat.mute";
let audio = null;

export const muted = () => localStorage.getItem(KEY) === "on";
export const setMuted = (on) => localStorage.setItem(KEY, on ? "on" : "off");

// Browsers let a page make sound only after a gesture: the context is made on the first one.
addEventListener("pointerdown", () => { audio ??= new AudioContext(); }, { once: true, capture: true });
addEventListener("keydown", () => { audio ??= new AudioContext(); }, { once: true, capture: true });

const TUNES = {
  turn: [[660, 0, 0.12], [880, 0.13, 0.16]],
  low: [[520, 0, 0.08]],
  timeout: [[440, 0, 0.15], [330, 0.16, 0.22]],
};

/** Play one of TUNES (silently nothing when muted or before any gesture). */
export function play(name) {
  if (muted() || !audio || audio.state !== "running") return;
  const now = audio.currentTime;
  for (const [freq, at, length] of TUNES[name] || []) {
    const osc = audio.createOscillator(), gain = audio.createGain();
    osc.frequency.value = freq;
    gain.gain.setValueAtTime(0.0001, now + at);
    gain.gain.exponentialRampToValueAtTime(0.2, now + at + 0.02);
    gain.gain.exponentialRampToValueAtTime(0.0001, now + at + length);
    osc.connect(gain).connect(audio.destination);
    osc.start(now + at);
    osc.stop(now + at + length + 0.05);
  }
}
