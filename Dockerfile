# The Sahrat server image: one `sahrat serve` process (docker-compose.yml runs two).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    SAHRAT_STATIC_DIR=/app/static \
    SAHRAT_MIGRATIONS=/app/migrations

WORKDIR /app
COPY pyproject.toml README.md LICENSE alembic.ini ./
COPY src ./src
COPY migrations ./migrations
COPY static ./static
RUN pip install . && useradd --system --home /app sahrat
USER sahrat

EXPOSE 8000 8001
HEALTHCHECK --interval=5s --timeout=3s --retries=12 \
  CMD python -c "import urllib.request, sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/readyz', timeout=2).status == 200 else 1)"
CMD ["sahrat", "serve", "--host", "0.0.0.0", "--port", "8000"]
