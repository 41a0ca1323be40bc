"""Load benchmark of the server: durable moves per second and latency, beside a bare peer.

Not a test. For each configuration it starts ``sahrat serve`` on a fresh
database (SQLite in a temporary folder, or a fresh PostgreSQL database
``sahrat_bench_<random>`` on 127.0.0.1:5432 that is dropped afterwards) pinned
to core 0, and a load client pinned to core 1, spread over several worker
processes (``load_client.py``). The tables are set up over REST, then every
seat plays as soon as it is its turn for ``--warmup`` + ``--duration``
seconds; only the window after the warm-up counts. Every accepted move is
durable (the group-commit event log) before its update is sent.

When a match ends, every seat asks for a rematch over its socket and the table
plays on (``--after-match rematch``, the default: players who stay at a table).
``--after-match new_table`` opens a new table over REST for every match instead,
with new tickets and sockets (the rows named ``…_newtables``): it measures the
moves together with the set-up of a table per match, which a Conquian match at
full speed needs every few seconds per table.

In the same run it measures two peers at the same N:

* ``peer_uvicorn.py`` (``--only uvicorn``, also spelt ``peer``): a bare uvicorn
  ASGI WebSocket ping-pong, driven by the same load client;
* ``peer_picows.py`` (``--only picows``): the same ping-pong on a bare picows server;
* boardgame.io 0.50.2 (``--only boardgameio``): a two-player turn game
  (``peer_boardgameio/game.js``, each move lays a card on a pile and ends the
  turn) on boardgame.io's own server, state in memory (nothing written to
  disk), pinned to core 0; its load client (``peer_boardgameio/client.js``,
  socket.io-client speaking boardgame.io's protocol, one WebSocket per seat) is
  pinned to core 1. It needs Node.js and npm: boardgame.io and
  socket.io-client are installed with npm, at the versions pinned in
  ``peer_boardgameio/package.json``, into ``~/.cache/sahrat-bench/boardgameio``
  (``$SAHRAT_BENCH_NODE_DIR`` to choose another folder), never into the
  repository, and reused while that file is unchanged.

It prints a markdown table:
config, N, moves/s, p50 and p99 latency (command sent → update received by
every seat of the table), server CPU %, moves per server CPU second (steadier
than moves/s when other programs share the server's core), client CPU % (all
worker processes, one core = 100 %), PostgreSQL CPU % (all its processes; not
pinned), errors.

    .venv/bin/python bench/bench_server.py                 # everything, 3 runs
    .venv/bin/python bench/bench_server.py --runs 1 --only conquian --n 100
    .venv/bin/python bench/bench_server.py --only conquian,boardgameio,uvicorn --n 100
    .venv/bin/python bench/bench_server.py --only conquian --db sqlite --socket uvicorn,picows

``--socket picows`` starts each Sahrat server with ``SAHRAT_SOCKET_PORT`` and opens the
load's table sockets there (REST still on uvicorn's port; the rows named ``…_picows``);
the default, ``uvicorn``, opens them on uvicorn's port, as before.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import secrets
import select
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from load_client import WorkerConfig, run_worker

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SERVER_CORE = 0
CLIENT_CORE = 1
TICKS = os.sysconf("SC_CLK_TCK")
PG_DSN = {"user": "postgres", "host": "127.0.0.1", "port": 5432}
REDIS_URL = os.environ.get("SAHRAT_BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")
READY_TIMEOUT = 60.0
QUIET_LIMIT = 15.0
SETUP_TRIES = 3
OTHERS_LIMIT = 25.0  # a run where other programs used more (% of a core) is run again
TARGET_MOVES = 8000
TARGET_SHARE = 25.0
TARGET_P99_MS = 25.0
BGIO_DIR = HERE / "peer_boardgameio"
BGIO_GAME = "pile"  # the name of the game in peer_boardgameio/game.js
BGIO_READY_PATH = "/socket.io/?EIO=4&transport=polling"  # the Lobby API is not served
ONLY = ("conquian", "konkan", "peer", "uvicorn", "picows", "boardgameio")
UVICORN_PEER = "peer_uvicorn.py"


@dataclass(frozen=True)
class Scenario:
    name: str
    kind: str  # "sahrat", "peer" (bare uvicorn) or "boardgameio"
    game: str
    players: int
    n: int
    db: str = ""  # "sqlite" or "postgres" for Sahrat
    processes: int = 1  # server processes (more than one: a cluster through Redis)
    spread: str = "sticky"  # cluster: "sticky" (a table's seats on its owner) or "cross"
    after_match: str = "rematch"  # Sahrat: "rematch" at the same table, or "new_table"
    socket: str = "uvicorn"  # Sahrat: table sockets on uvicorn's port, or "picows"'s
    peer_script: str = UVICORN_PEER  # a bare peer: the script that serves it


@dataclass
class Result:
    moves_s: float
    p50_ms: float
    p99_ms: float
    server_cpu: float
    client_cpu: float
    db_cpu: float
    other_cpu: float
    errors: Counter[str] = field(default_factory=Counter)
    matches: int = 0
    stalled: int = 0


# --- processes and CPU ------------------------------------------------------------------


def _cpu_seconds(pid: int) -> float:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = text[text.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def _busy_seconds() -> float:
    """CPU seconds spent by everything on the machine (all cores), from /proc/stat."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in fields[:8])
    return (user + nice + system + irq + softirq + steal) / TICKS


def _wait_quiet(limit: float, max_wait: float) -> float:
    """Wait (at most ``max_wait`` s) until the machine is busy less than ``limit`` % of
    one core over a second (another program's tests would skew the figures); returns the
    last reading."""
    deadline = time.monotonic() + max_wait
    while True:
        busy0 = _busy_seconds()
        time.sleep(1.0)
        busy = (_busy_seconds() - busy0) * 100
        if busy < limit or time.monotonic() > deadline:
            return busy
        print(f"  machine busy ({busy:.0f} % of a core), waiting…", file=sys.stderr, flush=True)


def _postgres_pids() -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip().startswith("postgres"):
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _pin(core: int) -> Any:
    def pin() -> None:
        os.sched_setaffinity(0, {core})

    return pin


def _wait_ready(port: int, path: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError("the server did not become ready")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# --- the boardgame.io peer -------------------------------------------------------------


def _node_folder() -> Path:
    folder = os.environ.get("SAHRAT_BENCH_NODE_DIR")
    if folder:
        return Path(folder).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "sahrat-bench" / "boardgameio"


def install_boardgameio() -> Path:
    """Install boardgame.io and socket.io-client (the versions of
    ``peer_boardgameio/package.json``) with npm into a folder outside the repository,
    once; returns its ``node_modules``."""
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            raise RuntimeError(
                f"the boardgame.io peer needs Node.js and npm ({tool} is not on PATH; "
                "on Debian: apt-get install nodejs npm), or leave it out: --only conquian,peer"
            )
    folder = _node_folder()
    if folder.resolve().is_relative_to(ROOT):
        raise RuntimeError(f"{folder}: the Node packages must be installed outside {ROOT}")
    wanted = (BGIO_DIR / "package.json").read_text()
    manifest = folder / "package.json"
    modules = folder / "node_modules"
    installed = manifest.exists() and manifest.read_text() == wanted
    if installed and (modules / "boardgame.io" / "package.json").exists():
        return modules
    folder.mkdir(parents=True, exist_ok=True)
    manifest.write_text(wanted)
    print(f"installing boardgame.io with npm into {folder}…", file=sys.stderr, flush=True)
    subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--omit=dev"],
        cwd=folder,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return modules


def _node_env(modules: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["NODE_PATH"] = str(modules)
    env["NODE_ENV"] = "production"  # no per-move checks and logs meant for development
    env.pop("FLATFILE_DIR", None)  # boardgame.io's file storage: state stays in memory
    return env


def _node_line(proc: subprocess.Popen[bytes], timeout: float) -> dict[str, Any]:
    """The next JSON line a Node load client prints."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    if not ready:
        raise RuntimeError("the boardgame.io load client did not answer")
    line = proc.stdout.readline()
    if not line:
        raise RuntimeError(f"the boardgame.io load client exited with {proc.wait()}")
    message: dict[str, Any] = json.loads(line)
    if "failed" in message:
        raise RuntimeError(f"the boardgame.io load client failed: {message['failed']}")
    return message


# --- databases --------------------------------------------------------------------------


async def _pg(sql: str) -> None:
    import asyncpg  # type: ignore[import-untyped]

    conn = await asyncpg.connect(database="postgres", **PG_DSN)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


def _create_pg() -> tuple[str, str]:
    name = f"sahrat_bench_{secrets.token_hex(4)}"
    asyncio.run(_pg(f'CREATE DATABASE "{name}"'))
    return name, f"postgresql+asyncpg://postgres@127.0.0.1:5432/{name}"


def _drop_pg(name: str) -> None:
    asyncio.run(_pg(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


# --- one configuration -------------------------------------------------------------------


def _spawn(cmd: list[str], env: dict[str, str], workdir: Path, log: Any) -> Any:
    """A server process pinned to the server core, its output in ``log``."""
    pin = _pin(SERVER_CORE)
    return subprocess.Popen(
        cmd, env=env, cwd=workdir, stdout=log, stderr=subprocess.STDOUT, preexec_fn=pin
    )


def _start_servers(
    scenario: Scenario, ports: list[int], workdir: Path, log: Any, socket_ports: list[int]
) -> tuple[list[Any], Any]:
    """Start the server(s) under test; returns (processes, cleanup). Several Sahrat
    processes form a cluster on one PostgreSQL database and the local Redis, all
    pinned to the server core: the same CPU budget as one process. With
    ``socket_ports``, each process serves its table sockets on its own one too."""
    env = dict(os.environ)
    env.pop("SAHRAT_TURN_SECONDS_OVERRIDE", None)
    python = str(Path(sys.executable))
    if scenario.kind == "boardgameio":
        env = _node_env(install_boardgameio())
        cmd = ["node", str(BGIO_DIR / "server.js"), "--port", str(ports[0])]
        proc = _spawn(cmd, env, workdir, log)
        _wait_ready(ports[0], BGIO_READY_PATH, proc)
        return [proc], lambda: None
    if scenario.kind == "peer":
        cmd = [python, str(HERE / scenario.peer_script), "--port", str(ports[0])]
        proc = _spawn(cmd, env, workdir, log)
        _wait_ready(ports[0], "/", proc)
        return [proc], lambda: None
    if scenario.db == "postgres":
        dbname, url = _create_pg()

        def cleanup() -> None:
            _drop_pg(dbname)
    else:
        url = f"sqlite+aiosqlite:///{workdir / 'sahrat.db'}"

        def cleanup() -> None:
            pass

    env["DATABASE_URL"] = url
    env["SAHRAT_DEFAULT_TURN_SECONDS"] = "300"
    # every guest of the load comes from one address, faster than sign-ups are allowed
    env["SAHRAT_NEW_ACCOUNTS_PER_ADDRESS_HOUR"] = "1000000"
    env["SAHRAT_NEW_ACCOUNTS_PER_MINUTE"] = "1000000"
    # a seat of the load moves as soon as it may, faster than the 20 messages a second
    # a connection may send: the benchmark measures the move's path, not the rate limit
    for kind in ("MESSAGE", "ACCOUNT"):
        env[f"SAHRAT_{kind}_RATE"] = env[f"SAHRAT_{kind}_BURST"] = "100000"
    if scenario.processes > 1:
        env["SAHRAT_REDIS_URL"] = REDIS_URL
        env["SAHRAT_CLUSTER_PREFIX"] = f"bench-{secrets.token_hex(4)}"
        env["SAHRAT_CLUSTER_SECRET"] = secrets.token_urlsafe(32)
    # SAHRAT_BENCH_SERVE_CMD: another command in place of `sahrat` (a wrapper that
    # instruments the server), given the same arguments
    sahrat = os.environ.get("SAHRAT_BENCH_SERVE_CMD", str(Path(sys.executable).with_name("sahrat")))
    procs: list[Any] = []
    try:
        for index, port in enumerate(ports):
            cmd = [*sahrat.split(), "serve", "--host", "127.0.0.1", "--port", str(port)]
            cmd += ["--log-level", "warning"]
            own = dict(env)
            if socket_ports:
                own["SAHRAT_SOCKET_PORT"] = str(socket_ports[index])
            procs.append(_spawn(cmd, own, workdir, log))
            _wait_ready(port, "/readyz", procs[-1])
    except Exception:
        for proc in procs:
            _stop(proc)
        cleanup()
        raise
    return procs, cleanup


def run_scenario(scenario: Scenario, procs: int, warmup: float, duration: float) -> Result:
    workdir = Path(tempfile.mkdtemp(prefix="sahrat_bench_"))
    ports = [_free_port() for _ in range(scenario.processes)]
    picows = scenario.kind == "sahrat" and scenario.socket == "picows"
    socket_ports = [_free_port() for _ in ports] if picows else []
    log_path = workdir / "server.log"
    with open(log_path, "wb") as log:
        servers, cleanup = _start_servers(scenario, ports, workdir, log, socket_ports)
        try:
            server_pids = [p.pid for p in servers]
            if scenario.kind == "boardgameio":
                return _drive_node(scenario, ports[0], server_pids, warmup, duration)
            return _drive(scenario, ports, server_pids, procs, warmup, duration, socket_ports)
        except Exception:
            print(f"server log: {log_path}", file=sys.stderr)
            raise
        finally:
            for server in servers:
                _stop(server)
            cleanup()
            if all(s.returncode in (0, -signal.SIGINT, 130) for s in servers):
                shutil.rmtree(workdir, ignore_errors=True)


def _drive(
    scenario: Scenario,
    ports: list[int],
    server_pids: list[int],
    procs: int,
    warmup: float,
    duration: float,
    socket_ports: list[int],
) -> Result:
    ctx = multiprocessing.get_context("spawn")
    procs = max(1, min(procs, scenario.n))
    shares = [scenario.n // procs + (1 if i < scenario.n % procs else 0) for i in range(procs)]
    workers = []
    for index, share in enumerate(shares):
        parent, child = ctx.Pipe()
        cfg = WorkerConfig(
            mode=scenario.kind,
            host="127.0.0.1",
            port=ports[0],
            ports=tuple(ports),
            spread=scenario.spread,
            game=scenario.game,
            players=scenario.players,
            tables=share,
            worker=index,
            core=CLIENT_CORE,
            after_match=scenario.after_match,
            socket_ports=tuple(socket_ports),
        )
        process = ctx.Process(target=run_worker, args=(cfg, child), daemon=True)
        process.start()
        workers.append((process, parent))
    try:
        for _process, pipe in workers:
            if not pipe.poll(600):
                raise RuntimeError("a worker did not finish its setup")
            kind, value = pipe.recv()
            if kind != "ready":
                raise RuntimeError(f"worker setup failed: {value}")
        go = time.monotonic() + 0.5
        t0 = go + warmup
        t1 = t0 + duration
        for _, pipe in workers:
            pipe.send(("go", go, t0, t1))
        client_pids = [p.pid for p, _ in workers if p.pid is not None]
        pg_pids = _postgres_pids() if scenario.db == "postgres" else []
        cpu = _measure_window(server_pids, client_pids, pg_pids, t0, t1)
        moves = 0
        latencies: list[float] = []
        errors: Counter[str] = Counter()
        matches = stalled = 0
        for _, pipe in workers:
            if not pipe.poll(120):
                raise RuntimeError("a worker did not report")
            kind, value = pipe.recv()
            if kind != "result":
                raise RuntimeError(f"worker failed: {value}")
            moves += value["moves"]
            latencies += value["latencies"]
            errors.update(value["errors"])
            matches += value["matches_finished"]
            stalled += value["stalled"]
    finally:
        for process, _ in workers:
            process.join(10)
            if process.is_alive():
                process.terminate()
    latencies.sort()
    return Result(
        moves_s=moves / duration,
        p50_ms=_quantile(latencies, 0.50) * 1000,
        p99_ms=_quantile(latencies, 0.99) * 1000,
        server_cpu=cpu.server,
        client_cpu=cpu.client,
        db_cpu=cpu.db,
        other_cpu=cpu.other,
        errors=errors,
        matches=matches,
        stalled=stalled,
    )


@dataclass
class WindowCpu:
    server: float
    client: float
    db: float
    other: float


def _measure_window(
    server_pids: list[int], client_pids: list[int], pg_pids: list[int], t0: float, t1: float
) -> WindowCpu:
    """Sleep through the measured window [t0, t1) (``time.monotonic``) and return the CPU
    used meanwhile, in % of one core: server, client, PostgreSQL and everything else."""
    time.sleep(max(0.0, t0 - time.monotonic()))
    server0 = sum(_cpu_seconds(pid) for pid in server_pids)
    client0 = sum(_cpu_seconds(pid) for pid in client_pids)
    db0 = sum(_cpu_seconds(pid) for pid in pg_pids)
    busy0 = _busy_seconds()
    profile = _start_profile(server_pids[0], t1 - t0)
    wall0 = time.monotonic()
    time.sleep(max(0.0, t1 - time.monotonic()))
    wall = time.monotonic() - wall0
    server = (sum(_cpu_seconds(pid) for pid in server_pids) - server0) / wall * 100
    client = (sum(_cpu_seconds(pid) for pid in client_pids) - client0) / wall * 100
    db = (sum(_cpu_seconds(pid) for pid in pg_pids) - db0) / wall * 100
    busy = (_busy_seconds() - busy0) / wall * 100
    if profile is not None:
        profile.wait()
    return WindowCpu(server, client, db, max(0.0, busy - server - client - db))


def _drive_node(
    scenario: Scenario, port: int, server_pids: list[int], warmup: float, duration: float
) -> Result:
    """Drive the boardgame.io peer with its Node load client (one process on the client
    core; it reports on stdout in JSON lines)."""
    env = _node_env(install_boardgameio())
    cmd = ["node", str(BGIO_DIR / "client.js"), "--port", str(port), "--game", BGIO_GAME]
    cmd += ["--tables", str(scenario.n), "--players", str(scenario.players)]
    client = subprocess.Popen(
        cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, preexec_fn=_pin(CLIENT_CORE)
    )
    assert client.stdin is not None
    try:
        if "ready" not in _node_line(client, 600):
            raise RuntimeError("the boardgame.io load client did not get ready")
        # Node's process.hrtime and time.monotonic are both CLOCK_MONOTONIC
        go = time.monotonic() + 0.5
        t0 = go + warmup
        t1 = t0 + duration
        client.stdin.write(json.dumps({"go": go, "t0": t0, "t1": t1}).encode() + b"\n")
        client.stdin.flush()
        cpu = _measure_window(server_pids, [client.pid], [], t0, t1)
        value = _node_line(client, 120)["result"]
    finally:
        client.stdin.close()
        try:
            client.wait(10)
        except subprocess.TimeoutExpired:
            client.kill()
            client.wait()
    latencies = sorted(value["latencies"])
    return Result(
        moves_s=value["moves"] / duration,
        p50_ms=_quantile(latencies, 0.50) * 1000,
        p99_ms=_quantile(latencies, 0.99) * 1000,
        server_cpu=cpu.server,
        client_cpu=cpu.client,
        db_cpu=0.0,
        other_cpu=cpu.other,
        errors=Counter(value["errors"]),
        matches=value["matches_finished"],
        stalled=value["stalled"],
    )


def _start_profile(pid: int, duration: float) -> subprocess.Popen[bytes] | None:
    """``SAHRAT_BENCH_PROFILE=DIR``: py-spy samples the server during the window."""
    folder = os.environ.get("SAHRAT_BENCH_PROFILE")
    if not folder:
        return None
    out = Path(folder) / f"server-{pid}.txt"
    cmd = [
        str(Path(sys.executable).with_name("py-spy")),
        "record",
        "-d",
        str(int(duration) - 1),
        "-p",
        str(pid),
        "-f",
        "raw",
        "-o",
        str(out),
        "-r",
        "200",
        "--nonblocking",
    ]
    return subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=_pin(CLIENT_CORE)
    )


def _quantile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    return values[min(len(values) - 1, int(q * len(values)))]


# --- the report ---------------------------------------------------------------------------


def _spread(values: list[float], digits: int = 0) -> str:
    fmt = f"{{:,.{digits}f}}"
    median = fmt.format(statistics.median(values))
    if len(values) == 1:
        return median
    return f"{median} [{fmt.format(min(values))}–{fmt.format(max(values))}]"


def _per_cpu(result: Result) -> float:
    """Moves per CPU second of the server process(es): steadier than moves/s when
    other programs take part of the server's core."""
    return result.moves_s / (result.server_cpu / 100) if result.server_cpu else float("nan")


def scenarios(
    ns: list[int], dbs: list[str], only: list[str], processes: list[int], spreads: list[str]
) -> list[Scenario]:
    out: list[Scenario] = []
    for n in ns:
        if "conquian" in only:
            for db in dbs:
                for count in processes:
                    if count == 1:
                        out.append(
                            Scenario(f"sahrat_{db}_conquian", "sahrat", "conquian", 2, n, db)
                        )
                        continue
                    if db != "postgres":
                        continue  # a cluster shares PostgreSQL
                    for spread in spreads:
                        name = f"sahrat_postgres_redis_x{count}_{spread}_conquian"
                        out.append(Scenario(name, "sahrat", "conquian", 2, n, db, count, spread))
        if "peer" in only:
            out.append(Scenario("asgi_pingpong_2seats", "peer", "conquian", 2, n))
        if "picows" in only:
            picows = "peer_picows.py"
            out.append(
                Scenario("picows_pingpong_2seats", "peer", "conquian", 2, n, peer_script=picows)
            )
        if "boardgameio" in only:
            out.append(Scenario("boardgameio_0.50.2_memory", "boardgameio", BGIO_GAME, 2, n))
    if "konkan" in only and 100 in ns:
        for db in dbs:
            out.append(Scenario(f"sahrat_{db}_konkan4", "sahrat", "konkan", 4, 100, db))
        if "peer" in only:
            out.append(Scenario("asgi_pingpong_4seats", "peer", "konkan", 4, 100))
    return out


def with_after_match(todo: list[Scenario], after: list[str]) -> list[Scenario]:
    """Each Sahrat scenario once per way of going on after a match (``_newtables`` in the
    name of the variant that opens a new table over REST for every match)."""
    out: list[Scenario] = []
    for scenario in todo:
        if scenario.kind != "sahrat":
            out.append(scenario)
            continue
        for way in after:
            suffix = "" if way == "rematch" else "_newtables"
            out.append(replace(scenario, name=scenario.name + suffix, after_match=way))
    return out


def with_sockets(todo: list[Scenario], sockets: list[str]) -> list[Scenario]:
    """Each Sahrat scenario once per server of its table sockets (``_picows`` in the
    name of the variant whose clients open them on ``SAHRAT_SOCKET_PORT``)."""
    out: list[Scenario] = []
    for scenario in todo:
        if scenario.kind != "sahrat":
            out.append(scenario)
            continue
        for socket_server in sockets:
            suffix = "" if socket_server == "uvicorn" else f"_{socket_server}"
            out.append(replace(scenario, name=scenario.name + suffix, socket=socket_server))
    return out


def _run_with_setup_tries(scenario: Scenario, procs: int, warmup: float, duration: float) -> Result:
    """``run_scenario``, started again (up to ``SETUP_TRIES`` times) when a load client
    fails before the measured window (e.g. a connection dropped while a busy machine
    sets up hundreds of seats)."""
    for attempt in range(1, SETUP_TRIES + 1):
        try:
            return run_scenario(scenario, procs, warmup, duration)
        except RuntimeError as error:
            if attempt == SETUP_TRIES:
                raise
            print(f"  {scenario.name}: {error}; start again", file=sys.stderr, flush=True)
    raise AssertionError("unreachable")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--procs", type=int, default=4, help="load-client worker processes")
    parser.add_argument("--n", default="100,500", help="concurrent tables, comma-separated")
    parser.add_argument("--db", default="sqlite,postgres")
    parser.add_argument(
        "--only",
        default="conquian,konkan,peer,boardgameio",
        help="comma-separated: conquian, konkan, peer (also spelt uvicorn), picows, boardgameio",
    )
    parser.add_argument(
        "--socket",
        default="uvicorn",
        help="Sahrat, comma-separated: where the load's table sockets open: uvicorn (its "
        "port) and/or picows (SAHRAT_SOCKET_PORT, the rows named …_picows)",
    )
    parser.add_argument(
        "--processes",
        default="1",
        help="server processes, comma-separated (2: a cluster on PostgreSQL and Redis)",
    )
    parser.add_argument(
        "--spread",
        default="sticky,cross",
        help="cluster: sticky (a table's seats connect to its owner) and/or cross "
        "(its seats connect to different processes: every move is forwarded)",
    )
    parser.add_argument(
        "--after-match",
        default="rematch",
        help="Sahrat, when a match ends: rematch (every seat asks for another at the same "
        "table over its socket) and/or new_table (a new table over REST, new sockets)",
    )
    parser.add_argument(
        "--retries",
        type=int,
        default=2,
        help="run a config again (keeping the cleanest) when other programs used the CPU",
    )
    parser.add_argument(
        "--quiet-wait",
        type=float,
        default=120.0,
        help="wait up to this many seconds before each config until the machine is idle",
    )
    args = parser.parse_args()
    if len(os.sched_getaffinity(0)) < 2:
        print("needs two cores (server on core 0, client on core 1)", file=sys.stderr)
        return 2
    only = [x.strip() for x in args.only.split(",")]
    unknown = [x for x in only if x not in ONLY]
    if unknown:
        parser.error(f"--only: unknown {', '.join(unknown)} (choose from {', '.join(ONLY)})")
    only = ["peer" if x == "uvicorn" else x for x in only]
    todo = scenarios(
        [int(x) for x in args.n.split(",")],
        args.db.split(","),
        only,
        [int(x) for x in args.processes.split(",")],
        args.spread.split(","),
    )
    after = [x.strip() for x in args.after_match.split(",")]
    if any(x not in ("rematch", "new_table") for x in after):
        parser.error("--after-match: choose from rematch, new_table")
    todo = with_after_match(todo, after)
    sockets = [x.strip() for x in args.socket.split(",")]
    if any(x not in ("uvicorn", "picows") for x in sockets):
        parser.error("--socket: choose from uvicorn, picows")
    todo = with_sockets(todo, sockets)
    if any(s.kind == "boardgameio" for s in todo):
        try:
            install_boardgameio()  # before any run, so no install is timed
        except (RuntimeError, subprocess.CalledProcessError) as error:
            print(f"boardgame.io peer: {error}", file=sys.stderr)
            return 2
    results: dict[Scenario, list[Result]] = {s: [] for s in todo}
    for run in range(args.runs):
        for scenario in todo:
            result = None
            for _attempt in range(1 + args.retries):
                if args.quiet_wait > 0:
                    _wait_quiet(QUIET_LIMIT, args.quiet_wait)
                attempt = _run_with_setup_tries(scenario, args.procs, args.warmup, args.duration)
                if result is None or attempt.other_cpu < result.other_cpu:
                    result = attempt
                if attempt.other_cpu <= OTHERS_LIMIT:
                    break
                print(
                    f"  other programs used {attempt.other_cpu:.0f} % of a core: run again",
                    file=sys.stderr,
                    flush=True,
                )
            assert result is not None
            results[scenario].append(result)
            print(
                f"run {run + 1}/{args.runs} {scenario.name} N={scenario.n}: "
                f"{result.moves_s:,.0f} moves/s, p50 {result.p50_ms:.2f} ms, "
                f"p99 {result.p99_ms:.2f} ms, server {result.server_cpu:.0f} %, "
                f"client {result.client_cpu:.0f} %, db {result.db_cpu:.0f} %, "
                f"others {result.other_cpu:.0f} %, "
                f"matches {result.matches}, stalled {result.stalled}, "
                f"errors {dict(result.errors) or 0}",
                file=sys.stderr,
                flush=True,
            )
    print()
    print(
        f"{args.runs} run(s) of {args.duration:.0f} s after {args.warmup:.0f} s of warm-up; "
        f"server on core {SERVER_CORE}, {args.procs} client processes on core {CLIENT_CORE} "
        "(boardgame.io: one Node process; its state in memory, nothing written to disk); "
        "median [min–max]"
    )
    print()
    print(
        "| config | N | conns | moves/s | p50 ms | p99 ms | server CPU % "
        "| moves per server CPU s | client CPU % | PG CPU % | others CPU % | errors "
        "| % of peer |"
    )
    print("|---|---:|---:|---|---|---|---:|---|---:|---:|---:|---|---:|")
    peers = {
        (s.players, s.n): statistics.median(r.moves_s for r in rs)
        for s, rs in results.items()
        if s.kind == "peer" and s.peer_script == UVICORN_PEER
    }
    bgio = {
        s.n: statistics.median(r.moves_s for r in rs)
        for s, rs in results.items()
        if s.kind == "boardgameio"
    }
    for scenario, rs in results.items():
        errors: Counter[str] = Counter()
        for r in rs:
            errors.update(r.errors)
        peer = peers.get((scenario.players, scenario.n))
        median_moves = statistics.median(r.moves_s for r in rs)
        share = f"{median_moves / peer * 100:.0f} %" if peer and scenario.kind == "sahrat" else ""
        pg = _spread([r.db_cpu for r in rs]) if scenario.db == "postgres" else ""
        print(
            f"| {scenario.name} | {scenario.n} | {scenario.n * scenario.players} "
            f"| {_spread([r.moves_s for r in rs])} "
            f"| {_spread([r.p50_ms for r in rs], 2)} | {_spread([r.p99_ms for r in rs], 2)} "
            f"| {statistics.median(r.server_cpu for r in rs):.0f} "
            f"| {_spread([_per_cpu(r) for r in rs])} "
            f"| {statistics.median(r.client_cpu for r in rs):.0f} | {pg} "
            f"| {statistics.median(r.other_cpu for r in rs):.0f} "
            f"| {sum(errors.values())}{' ' + str(dict(errors)) if errors else ''} | {share} |"
        )
    print()
    for scenario, rs in results.items():
        if scenario.kind == "sahrat" and scenario.game == "conquian" and scenario.n == 100:
            moves = statistics.median(r.moves_s for r in rs)
            p99 = statistics.median(r.p99_ms for r in rs)
            peer = peers.get((2, 100))
            ratio = moves / peer * 100 if peer else float("nan")
            than_bgio = (
                f", {moves / bgio[100] * 100:.0f} % of boardgame.io's moves/s"
                if bgio.get(100)
                else ""
            )
            print(
                f"- {scenario.name}, N=100: {moves:,.0f} moves/s (target ≥ {TARGET_MOVES:,}: "
                f"{'met' if moves >= TARGET_MOVES else 'not met'}), {ratio:.0f} % of bare "
                f"uvicorn (target ≥ {TARGET_SHARE:.0f} %: "
                f"{'met' if ratio >= TARGET_SHARE else 'not met'}), p99 {p99:.1f} ms "
                f"(target ≤ {TARGET_P99_MS:.0f} ms: {'met' if p99 <= TARGET_P99_MS else 'not met'})"
                f"{than_bgio}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
