"""What opening the lobby costs a browser: bytes, requests and time until it is usable.

A local ``sahrat serve`` (``local_server.py``) and Debian's Chromium
(``/usr/bin/chromium``, launched as ``tests/browser`` launches it). Each run opens the
lobby in a new browser context (an empty cache, no account), and reports:

- **cold**: the bytes that came over the network (Chromium's ``encodedDataLength``:
  compressed bodies and headers), the requests (static files and API calls, until the
  network is idle), and the time from the navigation's start to the lobby being
  usable — the quick-play button in the page, visible and enabled (the page marks it
  with ``performance.now()`` from a MutationObserver) — and to DOMContentLoaded;
- **warm**: the same after ``page.reload()`` in the same context (its cache kept):
  requests that went to the network, bytes, time to usable.

Each is measured on the loopback as it is (``local``) and through Chromium's network
emulation at Lighthouse's "slow 4G" (``slow4g``: 150 ms round trip, 1.6 Mbit/s down,
750 kbit/s up), where bytes and round trips weigh as they do on a phone.

One unmeasured load first warms each server (its first answers compress the files
once, and Python's imports settle). ``--before`` measures another checkout's ``src``
too (e.g. ``git worktree add --detach /tmp/old HEAD``), the runs alternating between
the two so that both meet the same load on a shared machine.

    .venv/bin/python bench/bench_lobby.py --runs 7
    .venv/bin/python bench/bench_lobby.py --runs 7 --before /tmp/old/src
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import sys
from pathlib import Path
from typing import Any

from local_server import LocalServer

SRC = Path(__file__).resolve().parent.parent / "src"
CHROMIUM = "/usr/bin/chromium"
NETWORKS: dict[str, dict[str, Any] | None] = {
    "local": None,
    "slow4g": {
        "offline": False,
        "latency": 150,
        "downloadThroughput": 1_638_400 / 8,
        "uploadThroughput": 750_000 / 8,
    },
}
CHROMIUM_ARGS = [  # as tests/browser/conftest.py
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Marks the moment the quick-play button is in the page, visible and enabled.
MARK_USABLE = """
(() => {
  const check = () => {
    const b = document.querySelector("#quick-play");
    if (window.__usable === undefined && b && !b.disabled && b.offsetParent !== null) {
      window.__usable = performance.now();
    }
  };
  new MutationObserver(check).observe(document, { childList: true, subtree: true });
})();
"""


class Recorder:
    """The network traffic of one page through the DevTools protocol."""

    def __init__(self, page: Any) -> None:
        self.session = page.context.new_cdp_session(page)
        self.session.send("Network.enable")
        self.urls: dict[str, str] = {}
        self.cached: set[str] = set()
        self.bytes: dict[str, float] = {}
        self.encodings: dict[str, str] = {}
        self.session.on("Network.requestWillBeSent", self._sent)
        self.session.on("Network.requestServedFromCache", self._cached)
        self.session.on("Network.responseReceived", self._response)
        self.session.on("Network.loadingFinished", self._finished)

    def _sent(self, event: dict[str, Any]) -> None:
        self.urls[event["requestId"]] = event["request"]["url"]

    def _cached(self, event: dict[str, Any]) -> None:
        self.cached.add(event["requestId"])

    def _response(self, event: dict[str, Any]) -> None:
        response = event["response"]
        if response.get("fromDiskCache") or response.get("fromPrefetchCache"):
            self.cached.add(event["requestId"])
        headers = {k.lower(): v for k, v in response.get("headers", {}).items()}
        self.encodings[event["requestId"]] = headers.get("content-encoding", "")

    def _finished(self, event: dict[str, Any]) -> None:
        self.bytes[event["requestId"]] = float(event["encodedDataLength"])

    def reset(self) -> None:
        self.urls.clear()
        self.cached.clear()
        self.bytes.clear()
        self.encodings.clear()

    def summary(self) -> dict[str, Any]:
        network = [rid for rid in self.urls if rid not in self.cached]
        static = [rid for rid in network if "/api/" not in self.urls[rid]]
        return {
            "requests": len(network),
            "static_requests": len(static),
            "api_requests": len(network) - len(static),
            "bytes": sum(self.bytes.get(rid, 0.0) for rid in network),
            "static_bytes": sum(self.bytes.get(rid, 0.0) for rid in static),
            "from_cache": len(self.cached),
            "encodings": sorted({self.encodings.get(rid, "") or "none" for rid in static}),
            "urls": sorted(self.urls[rid] for rid in network),
        }


def timings(page: Any) -> dict[str, float]:
    page.wait_for_function("() => window.__usable !== undefined", timeout=30_000)
    return {
        "usable_ms": float(page.evaluate("() => window.__usable")),
        "dcl_ms": float(
            page.evaluate(
                "() => performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd"
            )
        ),
    }


def one_run(browser: Any, url: str, network: str) -> dict[str, Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 800}, locale="ar")
    try:
        context.add_init_script(MARK_USABLE)
        page = context.new_page()
        recorder = Recorder(page)
        conditions = NETWORKS[network]
        if conditions is not None:
            recorder.session.send("Network.emulateNetworkConditions", conditions)
        page.goto(url + "/")
        cold = timings(page)
        page.wait_for_load_state("networkidle")
        cold.update(recorder.summary())
        recorder.reset()
        page.reload()
        warm = timings(page)
        page.wait_for_load_state("networkidle")
        warm.update(recorder.summary())
        return {"cold": cold, "warm": warm}
    finally:
        context.close()


def _spread(values: list[float], unit: str = "") -> str:
    median = statistics.median(values)
    text = f"{median:,.0f}{unit}"
    if min(values) == max(values):
        return text
    return f"{text} [{min(values):,.0f}–{max(values):,.0f}]"


def _kb(values: list[float]) -> str:
    median = statistics.median(values) / 1000
    low, high = min(values) / 1000, max(values) / 1000
    if low == high:
        return f"{median:.1f}"
    return f"{median:.1f} [{low:.1f}–{high:.1f}]"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--before", type=Path, help="the src folder of the code to compare with")
    parser.add_argument(
        "--networks", default=",".join(NETWORKS), help=f"among {', '.join(NETWORKS)}"
    )
    parser.add_argument("--json", action="store_true", help="print every run as JSON")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    networks = args.networks.split(",")
    if not networks or any(name not in NETWORKS for name in networks):
        parser.error(f"--networks: names among {', '.join(NETWORKS)}, comma-separated")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    from playwright.sync_api import sync_playwright

    codes = [("before", args.before.resolve()), ("after", SRC)] if args.before else [("now", SRC)]
    servers: dict[str, LocalServer] = {}
    results: dict[tuple[str, str], list[dict[str, Any]]] = {
        (code, network): [] for network in networks for code, _ in codes
    }
    try:
        for code, src in codes:
            # the checkout's own static/ (found beside its src), not SAHRAT_STATIC_DIR
            servers[code] = LocalServer(src, {})
        for server in servers.values():
            server.wait_ready()
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for code, _ in codes:
                one_run(browser, servers[code].url, "local")  # warm-up, not counted
            for run in range(args.runs):
                for (code, network), runs in results.items():
                    out = one_run(browser, servers[code].url, network)
                    runs.append(out)
                    brief = {
                        phase: {k: out[phase][k] for k in ("usable_ms", "requests", "bytes")}
                        for phase in ("cold", "warm")
                    }
                    print(
                        f"run {run + 1}/{args.runs} {code} {network}: {json.dumps(brief)}",
                        file=sys.stderr,
                    )
            browser.close()
    finally:
        for server in servers.values():
            server.stop()
    if args.json:
        print(
            json.dumps(
                [{"code": c, "network": n, "runs": runs} for (c, n), runs in results.items()],
                indent=1,
            )
        )
        return 0
    print(f"{args.runs} runs; median [min–max]; bytes in kB (1000 B) as transferred")
    print()
    print(
        "| code | network | cold: kB (static) | cold: requests (static + API) "
        "| cold: DOMContentLoaded ms | cold: usable ms "
        "| warm reload: requests to the network | warm: kB | warm: usable ms |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for (code, network), runs in results.items():
        cold = [r["cold"] for r in runs]
        warm = [r["warm"] for r in runs]
        print(
            f"| {code} | {network} | {_kb([c['bytes'] for c in cold])} "
            f"({_kb([c['static_bytes'] for c in cold])}) "
            f"| {_spread([c['requests'] for c in cold])} "
            f"({_spread([c['static_requests'] for c in cold])} + "
            f"{_spread([c['api_requests'] for c in cold])}) "
            f"| {_spread([c['dcl_ms'] for c in cold])} | {_spread([c['usable_ms'] for c in cold])} "
            f"| {_spread([w['requests'] for w in warm])} | {_kb([w['bytes'] for w in warm])} "
            f"| {_spread([w['usable_ms'] for w in warm])} |"
        )
    print()
    for (code, network), runs in results.items():
        if network != networks[0]:
            continue
        last = runs[-1]["cold"]
        print(f"{code}: encodings {last['encodings']}; cold requests:")
        for url in last["urls"]:
            print(f"  {url}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
