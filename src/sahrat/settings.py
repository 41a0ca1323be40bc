"""Server settings, read from the environment (and a ``.env`` file) by pydantic-settings.

Every setting has a default that runs a single embedded server; production
sets at least ``DATABASE_URL`` (PostgreSQL, async driver).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

DATA_DIR = Path("data")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", extra="ignore")

    database_url: str = Field(
        default=f"sqlite+aiosqlite:///{DATA_DIR / 'sahrat.db'}",
        description="SQLAlchemy async URL: sqlite+aiosqlite:///path or "
        "postgresql+asyncpg://user@host/db",
    )
    host: str = Field(default="127.0.0.1", alias="SAHRAT_HOST")
    port: int = Field(default=8000, alias="SAHRAT_PORT")
    grace_seconds: float = Field(
        default=60.0,
        alias="SAHRAT_GRACE_SECONDS",
        description="how long a dropped player keeps the seat before being treated as gone",
    )
    token_hours: float = Field(default=24 * 30, alias="SAHRAT_TOKEN_HOURS")
    max_message_bytes: int = Field(default=16_384, alias="SAHRAT_MAX_MESSAGE_BYTES")
    default_turn_seconds: int = Field(default=30, alias="SAHRAT_DEFAULT_TURN_SECONDS")
    welcome_grant: int = Field(
        default=1000,
        alias="SAHRAT_WELCOME_GRANT",
        description="coins a new account gets (an admin may change it: server_settings)",
    )
    free_table_earnings: int = Field(
        default=10,
        alias="SAHRAT_FREE_TABLE_EARNINGS",
        description="coins each player who finishes a match at a free table earns",
    )
    bot_delay_seconds: float = Field(
        default=0.8, alias="SAHRAT_BOT_DELAY_SECONDS", description="a bot's pause before moving"
    )
    bot_level: str = Field(
        default="strong",
        alias="SAHRAT_BOT_LEVEL",
        description="the level of a bot that takes over a leaver's seat",
    )
    finished_table_seconds: float = Field(
        default=120.0,
        alias="SAHRAT_FINISHED_TABLE_SECONDS",
        description="how long a finished table stays in memory once nobody watches it",
    )
    redis_url: str | None = Field(
        default=None,
        alias="SAHRAT_REDIS_URL",
        description="redis://host:port/db: join the other server processes that use this "
        "Redis and the same database (unset: this process serves every table alone)",
    )
    cluster_prefix: str = Field(
        default="sahrat",
        alias="SAHRAT_CLUSTER_PREFIX",
        description="prefix of this cluster's Redis keys and channels",
    )
    lease_seconds: float = Field(
        default=3.0,
        gt=0,
        alias="SAHRAT_LEASE_SECONDS",
        description="a table's lease: another process takes over a dead one's tables "
        "within about this long (plus a third of it)",
    )
    log_format: Literal["text", "json"] = Field(
        default="text",
        alias="SAHRAT_LOG_FORMAT",
        description="json: one JSON object per log line, with table and seat ids",
    )
    migrate_on_start: bool = Field(
        default=True,
        alias="SAHRAT_MIGRATE_ON_START",
        description="run the database migrations at start-up (off when a one-off "
        "`sahrat migrate` does it, as in docker-compose.yml)",
    )
    allowed_origins: str = Field(
        default="",
        alias="SAHRAT_ALLOWED_ORIGINS",
        description="comma-separated origins (https://cards.example) whose pages may open "
        "a WebSocket; empty: only the server's own origin; '*': any. Clients that send no "
        "Origin (programs, not browsers) are always let in",
    )
    message_rate: float = Field(
        default=20.0,
        gt=0,
        alias="SAHRAT_MESSAGE_RATE",
        description="WebSocket messages a second one connection may send, on average",
    )
    message_burst: int = Field(
        default=40, gt=0, alias="SAHRAT_MESSAGE_BURST", description="...and in one burst"
    )
    account_rate: float = Field(
        default=40.0,
        gt=0,
        alias="SAHRAT_ACCOUNT_RATE",
        description="WebSocket messages a second one account may send over all its "
        "connections to one process, on average",
    )
    account_burst: int = Field(
        default=80, gt=0, alias="SAHRAT_ACCOUNT_BURST", description="...and in one burst"
    )
    abuse_limit: int = Field(
        default=200,
        gt=0,
        alias="SAHRAT_ABUSE_LIMIT",
        description="messages refused for the rate within a minute before the connection "
        "is closed (4429)",
    )
    one_address_per_coin_table: bool = Field(
        default=True,
        alias="SAHRAT_ONE_ADDRESS_PER_COIN_TABLE",
        description="two accounts joining from one network address cannot sit at the same "
        "coin table (against collusion)",
    )
    turn_seconds_override: float | None = Field(
        default=None,
        alias="SAHRAT_TURN_SECONDS_OVERRIDE",
        description="tests only: replace every table's turn limit by this many seconds",
    )


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
