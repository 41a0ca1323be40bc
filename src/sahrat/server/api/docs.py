"""The API explorer, served whole by the server: ``/docs`` (Swagger UI) and ``/redoc``.

FastAPI's own pages load Swagger UI and ReDoc from a CDN (and ReDoc its fonts from
Google), so they stay blank on a network that reaches only this server. These pages
are FastAPI's (``get_swagger_ui_html``, ``get_redoc_html``) pointed at copies shipped
in the package, ``docs_assets/`` (pinned versions and licences in its README),
served at ``/docs-assets/``. The app is created with ``docs_url=None`` and
``redoc_url=None``; ``install`` adds these routes in their place.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.openapi.docs import (
    get_redoc_html,
    get_swagger_ui_html,
    get_swagger_ui_oauth2_redirect_html,
)
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS = Path(__file__).parent / "docs_assets"
ASSETS_URL = "/docs-assets"
DOCS_URL = "/docs"
REDOC_URL = "/redoc"
OAUTH2_REDIRECT_URL = "/docs/oauth2-redirect"


def install(app: FastAPI) -> None:
    """Add ``/docs``, its OAuth2 redirect page, ``/redoc`` and their assets to ``app``
    (created with ``docs_url=None, redoc_url=None``). Call before a catch-all mount."""
    assert app.docs_url is None and app.redoc_url is None, "FastAPI's CDN pages are on"
    app.mount(ASSETS_URL, StaticFiles(directory=ASSETS), name="docs-assets")

    def urls(request: Request) -> tuple[str, str]:
        root = str(request.scope.get("root_path", "")).rstrip("/")
        return f"{root}{app.openapi_url}", f"{root}{ASSETS_URL}"

    @app.get(DOCS_URL, include_in_schema=False)
    async def swagger_ui(request: Request) -> HTMLResponse:
        openapi, assets = urls(request)
        return get_swagger_ui_html(
            openapi_url=openapi,
            title=f"{app.title} — API (Swagger UI)",
            oauth2_redirect_url=OAUTH2_REDIRECT_URL,
            swagger_js_url=f"{assets}/swagger-ui/swagger-ui-bundle.js",
            swagger_css_url=f"{assets}/swagger-ui/swagger-ui.css",
            swagger_favicon_url=f"{assets}/swagger-ui/favicon-32x32.png",
            swagger_ui_parameters=app.swagger_ui_parameters,
        )

    @app.get(OAUTH2_REDIRECT_URL, include_in_schema=False)
    async def swagger_ui_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get(REDOC_URL, include_in_schema=False)
    async def redoc(request: Request) -> HTMLResponse:
        openapi, assets = urls(request)
        return get_redoc_html(
            openapi_url=openapi,
            title=f"{app.title} — API (ReDoc)",
            redoc_js_url=f"{assets}/redoc/redoc.standalone.js",
            redoc_favicon_url=f"{assets}/swagger-ui/favicon-32x32.png",
            with_google_fonts=False,
        )
