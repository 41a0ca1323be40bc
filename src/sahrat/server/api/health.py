"""Health checks for a supervisor or a load balancer (tagged ``health``): ``/healthz``
(the process is up) and ``/readyz`` (it serves: migrated, tables loaded)."""

from __future__ import annotations

import os

from fastapi import APIRouter, Request, Response, status

from sahrat.server.api.models import Health, Ready

router = APIRouter(tags=["health"])


@router.get("/healthz", response_model=Health)
async def healthz() -> Health:
    """The process is up."""
    return Health(ok=True)


@router.get("/readyz", response_model=Ready, responses={503: {"model": Ready}})
async def readyz(request: Request, response: Response) -> Ready:
    """The database is migrated and the tables are loaded."""
    ready = bool(getattr(request.app.state, "ready", False))
    if not ready:
        response.status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    return Ready(ready=ready, pid=os.getpid())
