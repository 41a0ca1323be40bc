"""The browser client's files, served so that a page costs as few bytes and requests
as it can.

- **Versioned paths.** A version — a hash of every file of the static folder — is
  computed when the folder is read. Each file is served at
  ``/static/<version>/<path>`` with ``Cache-Control: public, max-age=31536000,
  immutable``: a browser keeps it for good and never asks again, and a change of any
  file changes every such path. ``index.html`` (at ``/``) is rewritten to point at the
  versioned paths, so the relative imports of the ES modules and the CSS resolve
  inside the same version, and gets ``<link rel="modulepreload">`` for every module
  its entry script imports statically (fetched at once instead of one level at a
  time). The page itself is ``no-cache``: always revalidated (ETag), so a new version
  is seen at the next load.
- **An old version is 404** (``no-store``), not the current file: a page still open
  from before a deploy would otherwise mix modules of two versions, silently. The
  page reloads itself once when a module it loads later fails (``static/js/app.js``).
- **Unversioned paths** (``/js/app.js``, ``/i18n/en.json``) answer ``307`` to the
  current versioned path (``no-cache``): an old page or a link keeps working, and a
  module imported by its unversioned path resolves its own imports into the same
  modules as the page's.
- **Compression.** Text files (HTML, CSS, JavaScript, JSON, SVG) of 256 bytes or more
  are sent with brotli or gzip when the request accepts it, with ``Vary:
  Accept-Encoding``. Each file is compressed once, at its first request, in a worker
  thread (never on the event loop), at the strongest level; the bytes are kept. The
  static files carry no secret, so compressing them leaks nothing (BREACH needs a
  secret and reflected input in one response).

The folder is read once, and again when a request for the page finds a file's size or
modification time changed (a stat of each file: the page is requested once per visit),
so editing the client needs no restart.
"""

from __future__ import annotations

import gzip
import hashlib
import mimetypes
import os
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path

import anyio.to_thread
import brotli  # type: ignore[import-untyped,unused-ignore]
from starlette.types import Receive, Scope, Send

PREFIX = "/static/"
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
MIN_COMPRESS_BYTES = 256  # below this the saving is smaller than the header's cost
CODINGS = ("br", "gzip")  # in order of preference
_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".json": "application/json",
    ".svg": "image/svg+xml",
    ".txt": "text/plain; charset=utf-8",
    ".webmanifest": "application/manifest+json",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".woff2": "font/woff2",
}
_COMPRESSIBLE = ("text/", "application/json", "application/manifest+json", "image/svg+xml")
# A static import or re-export of a relative module: `import x from "./a.js"`,
# `import "./a.js"`, `export { y } from "../b.js"` (not `import("./c.js")`).
_STATIC_IMPORT = re.compile(
    r"""^\s*(?:import|export)\b[^'"();]*?(?:\bfrom\s*)?["'](\.{1,2}/[^"']+)["']""", re.M
)
_LOCAL_REF = re.compile(r"""\b(src|href)="(?![a-z][a-z0-9+.-]*:|/|#)([^"?#]+)\"""")
_MODULE_SCRIPT = re.compile(r"""<script\b[^>]*\btype="module"[^>]*\bsrc="([^"]+)"[^>]*></script>""")


def media_type(name: str) -> str:
    suffix = posixpath.splitext(name)[1].lower()
    return _TYPES.get(suffix) or mimetypes.guess_type(name)[0] or "application/octet-stream"


@dataclass
class Asset:
    """One file as served: its bytes, their type, and compressed forms once asked for."""

    body: bytes
    media_type: str
    tag: str = ""
    encoded: dict[str, bytes] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.tag = hashlib.sha256(self.body).hexdigest()[:20]

    @property
    def compressible(self) -> bool:
        return len(self.body) >= MIN_COMPRESS_BYTES and self.media_type.startswith(_COMPRESSIBLE)

    def etag(self, coding: str | None) -> str:
        return f'"{self.tag}-{coding}"' if coding else f'"{self.tag}"'

    def compress(self, coding: str) -> bytes:
        """The body in ``coding`` (``br`` or ``gzip``); computed once, then kept."""
        done = self.encoded.get(coding)
        if done is None:
            if coding == "br":
                done = brotli.compress(self.body, quality=11)
            else:
                done = gzip.compress(self.body, compresslevel=9, mtime=0)
            self.encoded[coding] = done
        return done


@dataclass
class Snapshot:
    """The folder as read at one moment: its version, its files and the page."""

    version: str
    files: dict[str, Asset]
    signature: tuple[tuple[str, int, int], ...]
    index: Asset | None


def _walk(folder: Path) -> list[tuple[str, Path, os.stat_result]]:
    found = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if name.startswith("."):
                continue
            path = Path(root) / name
            rel = path.relative_to(folder).as_posix()
            found.append((rel, path, path.stat()))
    return found


def _signature(entries: list[tuple[str, Path, os.stat_result]]) -> tuple[tuple[str, int, int], ...]:
    return tuple((rel, st.st_mtime_ns, st.st_size) for rel, _, st in entries)


def module_closure(entry: str, files: dict[str, Asset]) -> list[str]:
    """The modules ``entry`` imports statically, directly or through others, in the
    order first met (``entry`` itself excluded); files that do not exist are skipped."""
    seen: list[str] = []
    todo = [entry]
    while todo:
        current = todo.pop(0)
        asset = files.get(current)
        if asset is None:
            continue
        text = asset.body.decode("utf-8", errors="replace")
        for spec in _STATIC_IMPORT.findall(text):
            target = posixpath.normpath(posixpath.join(posixpath.dirname(current), spec))
            if target != entry and target not in seen and target in files:
                seen.append(target)
                todo.append(target)
    return seen


def _page(html: str, version: str, files: dict[str, Asset]) -> str:
    """``index.html`` pointing at the versioned files, with their module preloads."""

    def versioned(match: re.Match[str]) -> str:
        attribute, rel = match.group(1), posixpath.normpath(match.group(2))
        if rel not in files:
            return match.group(0)
        return f'{attribute}="{PREFIX}{version}/{rel}"'

    def with_preloads(match: re.Match[str]) -> str:
        entry = match.group(1)
        if not entry.startswith(f"{PREFIX}{version}/"):
            return match.group(0)
        rel = entry[len(PREFIX) + len(version) + 1 :]
        links = "".join(
            f'\n  <link rel="modulepreload" href="{PREFIX}{version}/{dep}">'
            for dep in module_closure(rel, files)
        )
        return match.group(0) + links

    return _MODULE_SCRIPT.sub(with_preloads, _LOCAL_REF.sub(versioned, html))


def read_folder(folder: Path, previous: Snapshot | None = None) -> Snapshot:
    """The folder now; a file unchanged since ``previous`` keeps its compressed forms."""
    entries = _walk(folder)
    files: dict[str, Asset] = {}
    digest = hashlib.sha256()
    for rel, path, _ in entries:
        body = path.read_bytes()
        kept = previous.files.get(rel) if previous is not None else None
        unchanged = kept is not None and kept.body == body
        files[rel] = kept if kept is not None and unchanged else Asset(body, media_type(rel))
        digest.update(rel.encode() + b"\0" + len(body).to_bytes(8, "big") + body)
    version = digest.hexdigest()[:16]
    page = files.get("index.html")
    index = None
    if page is not None:
        html = _page(page.body.decode("utf-8"), version, files)
        index = Asset(html.encode("utf-8"), page.media_type)
    return Snapshot(version, files, _signature(entries), index)


def preferred_coding(accept_encoding: str) -> str | None:
    """The coding of ``CODINGS`` the request's Accept-Encoding prefers (q-values
    honoured, ``q=0`` refuses), or None for the plain bytes."""
    weights: dict[str, float] = {}
    for part in accept_encoding.lower().split(","):
        name, *params = (piece.strip() for piece in part.split(";"))
        if not name:
            continue
        weight = 1.0
        for param in params:
            key, _, value = param.partition("=")
            if key.strip() == "q":
                try:
                    weight = float(value)
                except ValueError:
                    weight = 0.0
        weights[name] = weight
    best: str | None = None
    best_weight = 0.0
    for coding in CODINGS:
        weight = weights.get(coding, weights.get("*", 0.0))
        if weight > best_weight:
            best, best_weight = coding, weight
    return best


def _etag_matches(if_none_match: str, etag: str) -> bool:
    wanted = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
    return "*" in wanted or etag in wanted


class ClientFiles:
    """ASGI app serving the folder as the module's docstring says (GET and HEAD)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.snapshot = read_folder(folder)

    @property
    def version(self) -> str:
        return self.snapshot.version

    def refresh(self) -> Snapshot:
        """The snapshot, read again if any file changed since."""
        if _signature(_walk(self.folder)) != self.snapshot.signature:
            self.snapshot = read_folder(self.folder, self.snapshot)
        return self.snapshot

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # a WebSocket to a path nothing serves
            await send({"type": "websocket.close", "code": 1000})
            return
        method = scope["method"]
        if method not in ("GET", "HEAD"):
            await _plain(send, 405, b"Method Not Allowed", [(b"allow", b"GET, HEAD")], method)
            return
        path: str = scope["path"]
        root: str = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root) :] or "/"
        headers = dict(scope["headers"])

        if path in ("/", "/index.html"):
            snapshot = self.refresh()
            if snapshot.index is None:
                await _plain(send, 404, b"Not Found", [(b"cache-control", b"no-store")], method)
                return
            await _serve(send, snapshot.index, REVALIDATE, headers, method)
            return
        snapshot = self.snapshot
        if path.startswith(PREFIX):
            version, _, rel = path[len(PREFIX) :].partition("/")
            asset = snapshot.files.get(rel) if version == snapshot.version else None
            if asset is None or rel == "index.html":
                await _plain(send, 404, b"Not Found", [(b"cache-control", b"no-store")], method)
                return
            await _serve(send, asset, IMMUTABLE, headers, method)
            return
        rel = path.lstrip("/")
        if rel in snapshot.files and rel != "index.html":
            location = f"{PREFIX}{snapshot.version}/{rel}"
            if scope.get("query_string"):
                location += "?" + scope["query_string"].decode("latin-1")
            extra = [(b"location", location.encode()), (b"cache-control", REVALIDATE.encode())]
            await _plain(send, 307, b"", extra, method)
            return
        await _plain(send, 404, b"Not Found", [(b"cache-control", b"no-store")], method)


async def _serve(
    send: Send, asset: Asset, cache_control: str, headers: dict[bytes, bytes], method: str
) -> None:
    coding = None
    if asset.compressible:
        coding = preferred_coding(headers.get(b"accept-encoding", b"").decode("latin-1"))
    etag = asset.etag(coding)
    out = [
        (b"content-type", asset.media_type.encode()),
        (b"cache-control", cache_control.encode()),
        (b"etag", etag.encode()),
    ]
    if asset.compressible:
        out.append((b"vary", b"Accept-Encoding"))
    if_none_match = headers.get(b"if-none-match")
    if if_none_match is not None and _etag_matches(if_none_match.decode("latin-1"), etag):
        await send({"type": "http.response.start", "status": 304, "headers": out})
        await send({"type": "http.response.body", "body": b""})
        return
    body = asset.body
    if coding is not None:
        kept = asset.encoded.get(coding)
        body = kept if kept is not None else await anyio.to_thread.run_sync(asset.compress, coding)
        out.append((b"content-encoding", coding.encode()))
    out.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": 200, "headers": out})
    await send({"type": "http.response.body", "body": b"" if method == "HEAD" else body})


async def _plain(
    send: Send, status: int, body: bytes, extra: list[tuple[bytes, bytes]], method: str
) -> None:
    out = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        *extra,
    ]
    await send({"type": "http.response.start", "status": status, "headers": out})
    await send({"type": "http.response.body", "body": b"" if method == "HEAD" else body})
