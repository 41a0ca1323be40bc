"""The browser client's files as a live server serves them (``sahrat.server.assets``):
compressed when the request accepts it, at versioned paths cached for good, the page
always revalidated and pointing at the current version, an old version refused, the
old unversioned paths redirected, and the security headers on all of it.

The files come from a copy of ``static/`` (``SAHRAT_STATIC_DIR``) that the tests
change to make a new version, plus a small text file and an image that must not be
compressed. Serving files does not touch the database: one server on SQLite serves the
whole module.
"""

from __future__ import annotations

import asyncio
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import brotli  # type: ignore[import-untyped,unused-ignore]
import httpx
import pytest
import websockets

from .harness import ServerProcess

STATIC = Path(__file__).resolve().parents[2] / "static"
IMMUTABLE = "public, max-age=31536000, immutable"
VERSIONED = re.compile(r'(?:src|href)="/static/([0-9a-f]+)/([^"]+)"')
PNG = bytes.fromhex("89504e470d0a1a0a") + bytes(600)  # an image: never compressed


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, Path]]:
    folder = tmp_path_factory.mktemp("static-assets")
    static = folder / "static"
    shutil.copytree(STATIC, static)
    (static / "tiny.txt").write_text("small\n")
    (static / "picture.png").write_bytes(PNG)
    server = ServerProcess(
        f"sqlite+aiosqlite:///{folder / 'sahrat.db'}", folder, {"SAHRAT_STATIC_DIR": str(static)}
    ).start()
    yield server, static
    server.stop()


def get(server: ServerProcess, path: str, **headers: str) -> httpx.Response:
    """GET without following redirects; ``Accept-Encoding: identity`` unless given."""
    headers.setdefault("Accept-Encoding", "identity")
    return httpx.get(f"{server.base_url}{path}", headers=headers, timeout=10)


def page_version(server: ServerProcess) -> tuple[str, list[str]]:
    """The version the page points at, and the files it points at."""
    found = VERSIONED.findall(get(server, "/").text)
    versions = {version for version, _ in found}
    assert len(versions) == 1, found
    return versions.pop(), [path for _, path in found]


def assert_security_headers(response: httpx.Response) -> None:
    policy = response.headers.get("content-security-policy", "")
    assert "script-src 'self'" in policy and "'unsafe-inline'" not in policy
    assert "frame-ancestors 'none'" in policy
    assert response.headers.get("x-content-type-options") == "nosniff"


@pytest.mark.parametrize(
    ("accept", "coding"),
    [
        ("gzip", "gzip"),
        ("br", "br"),
        ("gzip, deflate, br, zstd", "br"),
        ("br;q=0, gzip", "gzip"),
        ("gzip;q=0.5, br;q=0.2", "gzip"),
        ("identity", None),
        ("gzip;q=0", None),
        ("", None),
    ],
)
@pytest.mark.parametrize("path", ["/", "js/app.js", "css/app.css", "i18n/ar.json"])
def test_compressed_exactly_when_asked(
    site: tuple[ServerProcess, Path], path: str, accept: str, coding: str | None
) -> None:
    server, static = site
    version, _ = page_version(server)
    url = path if path == "/" else f"/static/{version}/{path}"
    plain = get(server, url)
    response = get(server, url, **{"Accept-Encoding": accept})
    assert response.status_code == 200
    assert response.headers.get("content-encoding") == coding
    # Either way the cached copy depends on the request's Accept-Encoding.
    assert "accept-encoding" in response.headers.get("vary", "").lower()
    assert response.content == plain.content  # httpx undid the coding: the same bytes
    if path != "/":
        assert plain.content == (static / path).read_bytes()
    sent = int(response.headers["content-length"])
    if coding is None:
        assert sent == len(plain.content)
    else:
        assert sent < len(plain.content) * 0.6, (sent, len(plain.content))
        if coding == "br":  # the wire bytes are brotli's: decode them ourselves
            with httpx.stream(
                "GET", f"{server.base_url}{url}", headers={"Accept-Encoding": "br"}, timeout=10
            ) as stream:
                wire = b"".join(stream.iter_raw())
            assert len(wire) == sent
            assert brotli.decompress(wire) == plain.content
    # Each representation has its own ETag.
    assert (response.headers["etag"] == plain.headers["etag"]) == (coding is None)


def test_small_files_and_images_are_not_compressed(site: tuple[ServerProcess, Path]) -> None:
    server, _ = site
    version, _ = page_version(server)
    tiny = get(server, f"/static/{version}/tiny.txt", **{"Accept-Encoding": "gzip, br"})
    assert tiny.status_code == 200 and tiny.text == "small\n"
    assert "content-encoding" not in tiny.headers
    image = get(server, f"/static/{version}/picture.png", **{"Accept-Encoding": "gzip, br"})
    assert image.status_code == 200 and image.content == PNG
    assert image.headers["content-type"] == "image/png"
    assert "content-encoding" not in image.headers and "vary" not in image.headers


def test_versioned_files_are_cached_for_good(site: tuple[ServerProcess, Path]) -> None:
    server, static = site
    version, files = page_version(server)
    # The stylesheet, the entry module and the lobby's modules, preloaded.
    assert {"css/app.css", "js/app.js", "js/lobby.js"} <= set(files)
    for path in files:
        response = get(server, f"/static/{version}/{path}", **{"Accept-Encoding": "gzip"})
        assert response.status_code == 200, path
        assert response.headers["cache-control"] == IMMUTABLE, path
        assert response.content == (static / path).read_bytes(), path
        assert_security_headers(response)
        if path.endswith(".js"):
            assert response.headers["content-type"].startswith("text/javascript"), path
    head = httpx.head(
        f"{server.base_url}/static/{version}/js/app.js",
        headers={"Accept-Encoding": "identity"},
        timeout=10,
    )
    assert head.status_code == 200 and head.content == b""
    assert int(head.headers["content-length"]) == (static / "js/app.js").stat().st_size
    # The page is never among them: it must be revalidated.
    assert get(server, f"/static/{version}/index.html").status_code == 404


def test_the_page_is_revalidated_and_points_at_the_current_version(
    site: tuple[ServerProcess, Path],
) -> None:
    server, static = site
    first = get(server, "/")
    assert first.headers["cache-control"] == "no-cache"
    assert_security_headers(first)
    etag = first.headers["etag"]
    again = get(server, "/", **{"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    assert get(server, "/index.html").text == first.text
    # The lobby's modules are preloaded; a table's and a replay's are not.
    preloads = re.findall(r'rel="modulepreload" href="/static/[0-9a-f]+/([^"]+)"', first.text)
    assert "js/lobby.js" in preloads and "js/i18n.js" in preloads
    assert not {"js/table.js", "js/replay.js", "js/konkan.js", "js/conquian.js"} & set(preloads)

    old_version, _ = page_version(server)
    old_app = get(server, f"/static/{old_version}/js/app.js").content
    app_js = static / "js" / "app.js"
    original = app_js.read_bytes()
    try:
        app_js.write_bytes(original + b"\n// a new version\n")
        changed = get(server, "/", **{"If-None-Match": etag})
        assert changed.status_code == 200  # the old ETag no longer matches
        new_version, _ = page_version(server)
        assert new_version != old_version
        fresh = get(server, f"/static/{new_version}/js/app.js")
        assert fresh.status_code == 200 and fresh.content.endswith(b"// a new version\n")
        # A stale version is refused (never the new file under the old, immutable name).
        stale = get(server, f"/static/{old_version}/js/app.js")
        assert stale.status_code == 404 and stale.content != old_app
        assert stale.headers["cache-control"] == "no-store"
        assert_security_headers(stale)
    finally:
        app_js.write_bytes(original)
    assert page_version(server)[0] == old_version  # the same files: the same version


def test_unknown_versions_and_paths_are_404(site: tuple[ServerProcess, Path]) -> None:
    server, _ = site
    version, _ = page_version(server)
    for path in (
        "/static/0123456789abcdef/js/app.js",
        f"/static/{version}/js/no-such.js",
        f"/static/{version}/../index.html",
        f"/static/{version}",
        "/no-such-page",
        "/js/",
    ):
        response = get(server, path)
        assert response.status_code == 404, path
        assert_security_headers(response)
    assert httpx.post(f"{server.base_url}/", timeout=10).status_code == 405


def test_unversioned_paths_redirect_to_the_current_version(
    site: tuple[ServerProcess, Path],
) -> None:
    server, static = site
    version, _ = page_version(server)
    for path in ("js/app.js", "js/konkan.js", "i18n/en.json", "css/app.css"):
        response = get(server, f"/{path}")
        assert response.status_code == 307, path
        assert response.headers["location"] == f"/static/{version}/{path}"
        assert response.headers["cache-control"] == "no-cache"
        followed = httpx.get(f"{server.base_url}/{path}", follow_redirects=True, timeout=10)
        assert followed.content == (static / path).read_bytes()


def test_the_api_and_websockets_are_untouched(site: tuple[ServerProcess, Path]) -> None:
    """The API still answers JSON, and a socket to a path the client files cannot serve
    is refused at its handshake (not left hanging, no server error)."""
    server, _ = site
    response = get(server, "/api/tables", **{"Accept-Encoding": "gzip, br"})
    assert response.status_code == 200 and isinstance(response.json(), list)

    async def refused() -> int:
        url = f"ws://127.0.0.1:{server.port}/no-such-socket"
        with pytest.raises(websockets.InvalidStatus) as error:
            async with websockets.connect(url, open_timeout=10):
                pass
        return int(error.value.response.status_code)

    assert asyncio.run(refused()) == 403
    assert "Traceback" not in server.log_tail(200)
