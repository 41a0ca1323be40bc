"""Server settings, read from the environment (and a ``.env`` file) by pydantic-settings.

Every setting has a default that runs a single embedded server; production
sets at least ``DATABASE_URL`` (PostgreSQL, async driver).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DATA_DIR = Path("data")
MIN_CLUSTER_SECRET_BYTES = 32  # the HMAC key of the cluster's messages, as long as its MAC


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", extra="ignore")

    database_url: str = Field(
        default=f"sqlite+aiosqlite:///{DATA_DIR / 'sahrat.db'}",
        description="SQLAlchemy async URL: sqlite+aiosqlite:///path or "
        "postgresql+asyncpg://user@host/db",
    )
    host: str = Field(default="127.0.0.1", alias="SAHRAT_HOST")
    port: int = Field(default=8000, alias="SAHRAT_PORT")
    socket_port: int | None = Field(
        default=None,
        alias="SAHRAT_SOCKET_PORT",
        description="if set, the table sockets (/ws/tables/{id}) are also served on this "
        "port of SAHRAT_HOST by a leaner WebSocket server in the same process (a reverse "
        "proxy sends /ws/ there); the main port keeps serving them too",
    )
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
        description="coins each player earns for a counted match at a free table "
        "(docs/economy.md; an admin may change it: server_settings)",
    )
    free_table_earnings_per_day: int = Field(
        default=200,
        ge=0,
        alias="SAHRAT_FREE_TABLE_EARNINGS_PER_DAY",
        description="the most free-table earnings one account is paid in any 24 hours "
        "(a match that would pass it pays the rest up to it; an admin may change it)",
    )
    counted_min_rounds: int = Field(
        default=3,
        ge=0,
        alias="SAHRAT_COUNTED_MIN_ROUNDS",
        description="Konkan rounds ended by a player going out (void rounds not) that a "
        "match needs to count for earnings, coin-table qualification and standings",
    )
    counted_min_deals: int = Field(
        default=3,
        ge=0,
        alias="SAHRAT_COUNTED_MIN_DEALS",
        description="Conquian deals won by someone (drawn deals not) that a match needs "
        "to count for earnings, coin-table qualification and standings",
    )
    counted_min_turns: int = Field(
        default=10,
        ge=0,
        alias="SAHRAT_COUNTED_MIN_TURNS",
        description="turns with a move of the player's own that a seat needs in a match "
        "for the match to count for that player",
    )
    bot_delay_seconds: float = Field(
        default=0.8, alias="SAHRAT_BOT_DELAY_SECONDS", description="a bot's pause before moving"
    )
    hint_level: str = Field(
        default="expert",
        alias="SAHRAT_HINT_LEVEL",
        description="the bot level that answers a player's hint at a free table",
    )
    timer_turns_to_forfeit: int = Field(
        default=3,
        ge=0,
        alias="SAHRAT_TIMER_TURNS_TO_FORFEIT",
        description="turns in a row the timer may play for a seat before the seat is "
        "forfeited like a player who left (a bot plays it at a free table, the timer at a "
        "coin table; its player may come back); 0: never",
    )
    left_seat_turn_seconds: float = Field(
        default=5.0,
        gt=0,
        alias="SAHRAT_LEFT_SEAT_TURN_SECONDS",
        description="the turn time of a seat whose player left the match (left, was "
        "suspended or forfeited the seat) and that the turn timer plays (a coin table's): "
        "the others do not wait the table's turn time for someone who is gone",
    )
    bot_level: Literal["simple", "strong", "expert"] = Field(
        default="expert",
        alias="SAHRAT_BOT_LEVEL",
        description="the bot level of a new table that names none (its option bot_level): "
        "the bots that fill its free seats and take over its leavers' seats",
    )
    rating_provisional_sigma: float = Field(
        default=6.0,
        gt=0,
        alias="SAHRAT_RATING_PROVISIONAL_SIGMA",
        description="a rating is provisional (shown with a ?, off the leaderboard) while its "
        "uncertainty sigma is above this (a new one is 8.33; about ten two-seat matches "
        "bring it below 6)",
    )
    rated_cooldown_minutes: float = Field(
        default=5.0,
        ge=0,
        alias="SAHRAT_RATED_COOLDOWN_MINUTES",
        description="the cool-down from rated play of a first leave (leaving a rated match, "
        "or its seat forfeited by the timer); each further leave multiplies it",
    )
    rated_cooldown_growth: float = Field(
        default=3.0,
        ge=1,
        alias="SAHRAT_RATED_COOLDOWN_GROWTH",
        description="how much each further leave multiplies the cool-down by",
    )
    rated_cooldown_max_minutes: float = Field(
        default=1440.0,
        ge=0,
        alias="SAHRAT_RATED_COOLDOWN_MAX_MINUTES",
        description="the longest cool-down one leave gives",
    )
    rated_cooldown_decay_hours: float = Field(
        default=24.0,
        ge=0,
        alias="SAHRAT_RATED_COOLDOWN_DECAY_HOURS",
        description="a player's leave score loses one every this many hours (0: never with time)",
    )
    rated_cooldown_forgive_matches: int = Field(
        default=3,
        ge=0,
        alias="SAHRAT_RATED_COOLDOWN_FORGIVE_MATCHES",
        description="rated matches played to the end that take one off a player's leave "
        "score (0: never)",
    )
    rated_repeat_limit: int = Field(
        default=3,
        ge=0,
        alias="SAHRAT_RATED_REPEAT_LIMIT",
        description="rated matches two players may play together within "
        "SAHRAT_RATED_REPEAT_HOURS that move their ratings; a further one with both at the "
        "table moves neither's (0: no limit)",
    )
    rated_repeat_hours: float = Field(
        default=24.0,
        gt=0,
        alias="SAHRAT_RATED_REPEAT_HOURS",
        description="the window of SAHRAT_RATED_REPEAT_LIMIT",
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
    cluster_secret: SecretStr | None = Field(
        default=None,
        alias="SAHRAT_CLUSTER_SECRET",
        description="the key (at least 32 bytes, the same on every process) that signs the "
        "messages between the processes: required with SAHRAT_REDIS_URL",
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
    ticket_seconds: float = Field(
        default=30.0,
        gt=0,
        alias="SAHRAT_TICKET_SECONDS",
        description="how long a WebSocket ticket (POST /api/tables/{id}/ticket) stays "
        "usable; each opens one socket, once",
    )
    request_timeout_seconds: float = Field(
        default=10.0,
        gt=0,
        alias="SAHRAT_REQUEST_TIMEOUT_SECONDS",
        description="an HTTP request (line, headers and body) must arrive within this long "
        "of the connection's opening or the previous response, or the connection is closed "
        "(against slow-sending clients)",
    )
    max_request_head_bytes: int = Field(
        default=16_384,
        gt=0,
        alias="SAHRAT_MAX_REQUEST_HEAD_BYTES",
        description="bytes of request line and headers before the connection is closed",
    )
    keep_alive_seconds: int = Field(
        default=5,
        gt=0,
        alias="SAHRAT_KEEP_ALIVE_SECONDS",
        description="an idle keep-alive HTTP connection is closed after this long",
    )
    max_connections: int = Field(
        default=4096,
        gt=0,
        alias="SAHRAT_MAX_CONNECTIONS",
        description="open connections and requests in progress beyond which a new request "
        "is answered 503 (keep it under the process's open-file limit)",
    )
    max_frame_bytes: int = Field(
        default=1_048_576,
        gt=0,
        alias="SAHRAT_MAX_FRAME_BYTES",
        description="a WebSocket message larger than this closes the socket (1009) before "
        "it is read; up to it, one over SAHRAT_MAX_MESSAGE_BYTES is answered "
        "message_too_large",
    )
    ws_ping_seconds: float = Field(
        default=20.0,
        gt=0,
        alias="SAHRAT_WS_PING_SECONDS",
        description="the server pings each WebSocket this often and closes it when no pong "
        "comes back within as long again (dead clients, half-open connections)",
    )
    ws_compression: bool = Field(
        default=False,
        alias="SAHRAT_WS_COMPRESSION",
        description="accept WebSocket compression (permessage-deflate) when a client offers "
        "it: less bandwidth, but about 45 KiB more memory for every open socket",
    )
    metrics_token: str | None = Field(
        default=None,
        alias="SAHRAT_METRICS_TOKEN",
        description="if set, /metrics answers only requests with 'Authorization: Bearer "
        "<this>' (404 otherwise)",
    )
    metrics_port: int | None = Field(
        default=None,
        alias="SAHRAT_METRICS_PORT",
        description="if set, /metrics is served on this port of SAHRAT_METRICS_HOST and "
        "no longer on the public port (404 there)",
    )
    metrics_host: str = Field(
        default="127.0.0.1",
        alias="SAHRAT_METRICS_HOST",
        description="the address the metrics port listens on",
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
    max_sockets_per_account: int = Field(
        default=8,
        gt=0,
        alias="SAHRAT_MAX_SOCKETS_PER_ACCOUNT",
        description="WebSockets one account may hold open on one process; one more is "
        "closed with 4409",
    )
    max_spectators_per_table: int = Field(
        default=200,
        ge=0,
        alias="SAHRAT_MAX_SPECTATORS_PER_TABLE",
        description="spectator sockets a table takes (its players always get in); one more "
        "is closed with 4410",
    )
    max_open_tables_per_account: int = Field(
        default=3,
        gt=0,
        alias="SAHRAT_MAX_OPEN_TABLES_PER_ACCOUNT",
        description="waiting or playing tables one account may have created (admins' "
        "tables do not count); one more is refused with 409 too_many_tables",
    )
    seat_changes_per_minute: int = Field(
        default=20,
        gt=0,
        alias="SAHRAT_SEAT_CHANGES_PER_MINUTE",
        description="seats one account may take, give up or start with bots over REST in a "
        "minute (join, leave, start); more are answered 429 too_many_seat_changes",
    )
    waiting_table_seconds: float = Field(
        default=600.0,
        gt=0,
        alias="SAHRAT_WAITING_TABLE_SECONDS",
        description="a waiting table that nobody has had a socket open to and whose seats "
        "have not changed for this long is closed (its seats freed)",
    )
    one_address_per_coin_table: bool = Field(
        default=True,
        alias="SAHRAT_ONE_ADDRESS_PER_COIN_TABLE",
        description="two accounts joining from one network address cannot sit at the same "
        "coin table (against collusion)",
    )
    guests_at_coin_tables: bool = Field(
        default=False,
        alias="SAHRAT_GUESTS_AT_COIN_TABLES",
        description="guests may sit at coin tables (off: a coin table needs a registered "
        "account; docs/economy.md)",
    )
    coin_table_min_matches: int = Field(
        default=3,
        ge=0,
        alias="SAHRAT_COIN_TABLE_MIN_MATCHES",
        description="counted matches (docs/economy.md) an account needs before it may sit "
        "at a coin table",
    )
    new_accounts_per_address_hour: int = Field(
        default=10,
        gt=0,
        alias="SAHRAT_NEW_ACCOUNTS_PER_ADDRESS_HOUR",
        description="accounts (guests and sign-ups) one network address may create in an "
        "hour (an IPv6 network of SAHRAT_IPV6_NETWORK_PREFIX counts as one address); more "
        "are answered 429",
    )
    new_accounts_per_minute: int = Field(
        default=60,
        gt=0,
        alias="SAHRAT_NEW_ACCOUNTS_PER_MINUTE",
        description="accounts one server process creates in a minute, from every address",
    )
    logins_per_address_minute: int = Field(
        default=10,
        gt=0,
        alias="SAHRAT_LOGINS_PER_ADDRESS_MINUTE",
        description="password logins one network address may try in a minute",
    )
    logins_per_address_name_hour: int = Field(
        default=10,
        gt=0,
        alias="SAHRAT_LOGINS_PER_ADDRESS_NAME_HOUR",
        description="password logins to one account name that one network address may try "
        "in an hour",
    )
    logins_per_name_hour: int = Field(
        default=20,
        gt=0,
        alias="SAHRAT_LOGINS_PER_NAME_HOUR",
        description="password logins to one account name that networks which never signed "
        "in to it may try in an hour, all together (an admin's account, and a network that "
        "signed in to the account before, skip this limit)",
    )
    logins_per_minute: int = Field(
        default=600,
        gt=0,
        alias="SAHRAT_LOGINS_PER_MINUTE",
        description="password logins one server process tries in a minute, from everywhere "
        "(as for the name's limit, not counting the logins that skip it)",
    )
    network_share_percent: int = Field(
        default=10,
        ge=1,
        le=100,
        alias="SAHRAT_NETWORK_SHARE_PERCENT",
        description="the part of a server-wide limit (SAHRAT_NEW_ACCOUNTS_PER_MINUTE, "
        "SAHRAT_LOGINS_PER_MINUTE) one network address may use in a minute, so that no one "
        "network empties it for everybody",
    )
    ipv6_network_prefix: int = Field(
        default=56,
        ge=32,
        le=64,
        alias="SAHRAT_IPV6_NETWORK_PREFIX",
        description="IPv6 addresses count as one network address per this many leading bits "
        "(56: what an ISP gives one residential customer, RIPE-690) for the limits of "
        "sign-ups and logins and for one account per address at a coin table",
    )
    hash_threads: int = Field(
        default=2,
        gt=0,
        alias="SAHRAT_HASH_THREADS",
        description="threads that hash and check passwords (Argon2id, 64 MiB each), off "
        "the event loop",
    )
    hash_queue: int = Field(
        default=8,
        ge=0,
        alias="SAHRAT_HASH_QUEUE",
        description="password checks that may wait for a hashing thread; more are "
        "answered 503 with Retry-After",
    )
    replay_builds: int = Field(
        default=2,
        gt=0,
        alias="SAHRAT_REPLAY_BUILDS",
        description="finished matches replayed through the engine at once for "
        "GET /api/matches/{id}/replay; more are answered 503 with Retry-After",
    )
    analysis_workers: int = Field(
        default=1,
        ge=0,
        alias="SAHRAT_ANALYSIS_WORKERS",
        description="worker processes that analyse finished matches (docs/analysis.md), "
        "a round at a time; 0 analyses in a thread of the server process (for tests)",
    )
    analysis_queue: int = Field(
        default=8,
        gt=0,
        alias="SAHRAT_ANALYSIS_QUEUE",
        description="matches a process holds for analysis, queued and running; more are "
        "answered 503 analysis_busy with Retry-After",
    )
    queue_wave_seconds: float = Field(
        default=2.0,
        gt=0,
        alias="SAHRAT_QUEUE_WAVE_SECONDS",
        description="how often each process forms rated quick-play tables from the queue "
        "(and once more right after a player queues there)",
    )
    queue_bot_wait_seconds: float = Field(
        default=30.0,
        ge=0,
        alias="SAHRAT_QUEUE_BOT_WAIT_SECONDS",
        description="how long a player waits in the rated queue for people before the "
        "seats nobody fits are given to bots",
    )
    queue_stale_seconds: float = Field(
        default=15.0,
        gt=0,
        alias="SAHRAT_QUEUE_STALE_SECONDS",
        description="a queue entry whose client has not polled GET /api/queue for this "
        "long is dropped (leaving the page cancels it)",
    )
    tournament_complaint_minutes: float = Field(
        default=30.0,
        ge=0,
        alias="SAHRAT_TOURNAMENT_COMPLAINT_MINUTES",
        description="the window after a tournament's last table in which an entrant may "
        "complain; its prizes are paid when it is over and no complaint is open",
    )
    tournament_house_permille: int = Field(
        default=100,
        ge=0,
        le=1000,
        alias="SAHRAT_TOURNAMENT_HOUSE_PERMILLE",
        description="the house's share of a paid tournament's entry fees, in thousandths "
        "(fixed on each tournament when it is made)",
    )
    tournament_tick_seconds: float = Field(
        default=2.0,
        gt=0,
        alias="SAHRAT_TOURNAMENT_TICK_SECONDS",
        description="how often each process's tournament runner looks at the tournaments "
        "it may carry on (starts, finished tables, next rounds, prizes)",
    )
    tournaments_per_account: int = Field(
        default=2,
        ge=0,
        alias="SAHRAT_TOURNAMENTS_PER_ACCOUNT",
        description="tournaments one account may have made that have not ended yet",
    )
    tournament_konkan_rounds: int = Field(
        default=5,
        ge=1,
        le=20,
        alias="SAHRAT_TOURNAMENT_KONKAN_ROUNDS",
        description="the rounds of a Konkan tournament table's match",
    )
    tournament_conquian_wins: int = Field(
        default=3,
        ge=1,
        le=50,
        alias="SAHRAT_TOURNAMENT_CONQUIAN_WINS",
        description="the deals a player must win to take a Conquian tournament table's match",
    )
    turn_seconds_override: float | None = Field(
        default=None,
        alias="SAHRAT_TURN_SECONDS_OVERRIDE",
        description="tests only: replace every table's turn limit by this many seconds",
    )

    @model_validator(mode="after")
    def _a_cluster_has_a_secret(self) -> Settings:
        """A cluster's processes take only messages signed with the shared secret
        (server/cluster/auth.py): without one, anyone who can write to Redis could
        play as any player, so a process does not start in a cluster without it."""
        if self.redis_url:
            secret = self.cluster_secret.get_secret_value() if self.cluster_secret else ""
            if len(secret.encode()) < MIN_CLUSTER_SECRET_BYTES:
                raise ValueError(
                    f"SAHRAT_CLUSTER_SECRET must be set to at least {MIN_CLUSTER_SECRET_BYTES} "
                    f"bytes (it is {len(secret.encode())}) when SAHRAT_REDIS_URL is set: every "
                    "process of the cluster signs its messages with it. Make one with: "
                    'python -c "import secrets; print(secrets.token_urlsafe(32))"'
                )
        return self


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
