"""The ``sahrat`` command: ``serve`` the server, ``simulate`` self-play matches, ``replay`` a
game record, ``verify`` a match's shuffles, write the protocol's JSON ``schemas``,
``admin create`` an admin account."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from sahrat.analyse_cli import add_command as add_analyse
from sahrat.rules.errors import RuleError
from sahrat.rules.record import GAMES, GameRecord, replay_summary


def _simulate(args: argparse.Namespace) -> int:
    from sahrat.simulate import simulate

    if args.game == "conquian" and args.players not in (None, 2):
        print("conquian is played by 2 players", file=sys.stderr)
        return 2
    summary = simulate(
        args.game,
        args.matches,
        args.seed,
        players=args.players,
        check=not args.no_check,
        # a bar on stderr (stdout, --json or not, stays the summary alone)
        progress=sys.stderr.isatty() if args.progress is None else args.progress,
    )
    data = summary.to_json()
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        for key, value in data.items():
            print(f"{key:>22}: {value}")
    return 1 if summary.violations else 0


def _read_record(path: str) -> GameRecord | None:
    """The record in ``path`` (a record, or a match as the API returns it), or None
    after a one-line message saying why it is not one."""
    try:
        return GameRecord.load(path)
    except (OSError, RuleError) as error:
        print(f"cannot read {path}: {error}", file=sys.stderr)
        return None


def _replay(args: argparse.Namespace) -> int:
    """0 when every action is accepted, 1 when one is refused, 2 when the file is not a
    record (nor a match from the API), or its options, seats or decks are not valid."""
    record = _read_record(args.file)
    if record is None:
        return 2
    out = replay_summary(record)
    if "error" in out and out["error"]["index"] is None:  # refused before any action
        failed = out["error"]
        print(
            f"not a valid record: {args.file}: {failed['code']}: {failed['message']}",
            file=sys.stderr,
        )
        return 2
    if args.json:
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        print(f"{out['applied']} actions applied")
        if "error" in out:
            failed = out["error"]
            print(f"action {failed['index']}: {failed['code']}: {failed['message']}")
        sheet = out.get("score_sheet", {})
        for row in sheet.get("rounds", []):
            print(row)
        print("totals:", sheet.get("totals"))
    return 0 if out["ok"] else 1


def _verify(args: argparse.Namespace) -> int:
    """Check shuffles against their commitments (docs/fairness.md): 0 when every check
    passes, 1 on a mismatch, 2 when the input cannot be read."""
    from sahrat.rules import fairness
    from sahrat.rules.cards import parse_cards

    try:
        if args.file is not None:
            record = _read_record(args.file)
            if record is None:
                return 2
            seen = fairness.parse_commitments(args.commitment)
            report = fairness.verify_record(
                record, commitments=seen, match_commitment=args.match_commitment
            )
            data, problems = report.to_json(), report.all_problems()
        elif args.round_seed and args.salt and len(args.commitment) == 1:
            hands = {}
            for value in args.hand:
                seat, _, cards = value.partition("=")
                hands[int(seat)] = parse_cards(cards.replace(",", " "))
            one = fairness.verify_round(
                args.game,
                args.round_seed,
                args.salt,
                args.commitment[0],
                players=args.players,
                dealer=args.dealer,
                hands=hands,
                deal=args.deal,
            )
            data, problems = one.to_json(), one.problems
        else:
            print("give a match record, or --round-seed, --salt and --commitment", file=sys.stderr)
            return 2
    except (OSError, ValueError) as error:
        print(f"cannot verify: {error}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        for row in data.get("rounds", [data]):
            state = "ok" if row["ok"] else "MISMATCH"
            print(f"round {row['round']}: {state} commitment {row['commitment']}")
        for note in data.get("notes", []):
            print(f"note: {note}")
        for problem in problems:
            print(f"mismatch: {problem}")
        print("verified" if not problems else "NOT verified")
    return 0 if not problems else 1


def _serve(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from sahrat.settings import get_settings

    try:  # before the server's modules load: a bad setting is told at once
        settings = get_settings()
    except ValidationError as error:  # one line per bad setting, not a traceback
        for problem in error.errors():
            where = "".join(f"{part}: " for part in problem["loc"])
            message = str(problem["msg"]).removeprefix("Value error, ")
            print(f"sahrat: cannot start: {where}{message}", file=sys.stderr)
        return 2
    from sahrat.server.app import GracefulServer, uvicorn_config

    host = args.host or settings.host
    port = args.port or settings.port
    print(f"Sahrat: open http://{host}:{port}/ in a browser to play", flush=True)
    # The app migrates the database in its lifespan, before it accepts anything.
    config = uvicorn_config(settings, host, port, args.log_level)
    try:
        GracefulServer(config).run()
    except KeyboardInterrupt:  # uvicorn re-raises Ctrl-C once it has shut down cleanly
        return 130
    return 0


def _migrate(args: argparse.Namespace) -> int:
    from sahrat.server.migrate import migrate
    from sahrat.settings import get_settings

    asyncio.run(migrate(get_settings().database_url))
    print("the database is at the latest schema", flush=True)
    return 0


SCHEMA_MODELS = (
    "Command",
    "Ping",
    "Continue",
    "Rematch",
    "Resync",
    "Hint",
    "HintInfo",
    "React",
    "Reaction",
    "Chat",
    "ChatInfo",
    "ChatHistory",
    "BreakInfo",
    "Snapshot",
    "Update",
    "Reply",
    "Resume",
    "TableInfo",
    "ErrorInfo",
    "ServerMessage",
)


def write_schemas(out: Path) -> list[Path]:
    """Write the JSON schema of each protocol model to ``out/<Model>.json``."""
    from sahrat.server.table import protocol

    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in SCHEMA_MODELS:
        model = getattr(protocol, name)
        path = out / f"{name}.json"
        text = json.dumps(model.model_json_schema(), indent=2, sort_keys=True, ensure_ascii=False)
        path.write_text(text + "\n", encoding="utf-8")
        written.append(path)
    from sahrat import wire_schemas  # each game's views, events, actions and messages

    return written + wire_schemas.write(out)


def _play(args: argparse.Namespace) -> int:
    import asyncio

    from sahrat.client import play

    try:
        options = json.loads(args.options) if args.options else {}
    except json.JSONDecodeError as error:
        print(f"--options is not JSON: {error}", file=sys.stderr)
        return 2
    return asyncio.run(
        play(args.server, args.game, args.table, args.invite, options, args.auto, args.bots)
    )


async def create_admin(database_url: str, name: str) -> str:
    """Create an admin account (migrating the database first); its one-time password."""
    import secrets

    from sqlalchemy import select
    from sqlalchemy.exc import IntegrityError

    from sahrat.names import name_key
    from sahrat.server.auth import hash_password
    from sahrat.server.migrate import migrate
    from sahrat.store.db import make_engine, make_sessions
    from sahrat.store.models import User

    name = admin_name(name)
    key = name_key(name)
    taken = f"the name {name!r} is taken"
    await migrate(database_url)
    engine = make_engine(database_url)
    password = secrets.token_urlsafe(18)
    try:
        async with make_sessions(engine)() as session, session.begin():
            if await session.scalar(select(User.id).where(User.name_key == key)) is not None:
                raise ValueError(taken)  # in any case, form or look-alike, as at sign-up
            session.add(
                User(
                    name=name,
                    name_key=key,
                    password_hash=hash_password(password),
                    guest=False,
                    is_admin=True,
                )
            )
    except IntegrityError as error:  # a sign-up took it meanwhile
        raise ValueError(taken) from error
    finally:
        await engine.dispose()
    return password


def admin_name(name: str) -> str:
    """The name as the server takes it at sign-up (NFKC), or ValueError saying why it
    is refused: the same rules as ``POST /api/users``."""
    from sahrat.names import script_problem
    from sahrat.server.auth import check_name

    name = check_name(name)
    problem = script_problem(name)
    if problem is not None:
        raise ValueError(problem)
    return name


def _admin(args: argparse.Namespace) -> int:
    import asyncio

    from sahrat.settings import get_settings

    try:
        admin_name(args.name)
    except ValueError as error:
        print(error, file=sys.stderr)
        return 2
    try:
        password = asyncio.run(create_admin(get_settings().database_url, args.name))
    except ValueError as error:
        print(error, file=sys.stderr)
        return 1
    print(f"admin {args.name} created; the password (shown once, log in with it): {password}")
    return 0


def _arena(args: argparse.Namespace) -> int:
    from sahrat.arena import run_arena

    try:
        report = run_arena(
            args.game,
            [name.strip() for name in args.seats.split(",")],
            args.matches,
            args.seed,
            workers=args.workers,
            progress=args.progress,
        )
    except ValueError as error:
        print(error, file=sys.stderr)
        return 2
    print(json.dumps(report.to_json(), indent=2) if args.json else report.text())
    return 0


def _schemas(args: argparse.Namespace) -> int:
    for path in write_schemas(Path(args.out)):
        print(path)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sahrat", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    sim = commands.add_parser("simulate", help="self-play matches with every invariant checked")
    sim.add_argument("--game", choices=GAMES, default="konkan")
    sim.add_argument("--players", type=int, choices=(2, 3, 4), default=None)
    sim.add_argument("--matches", type=int, default=10)
    sim.add_argument("--seed", default="1")
    sim.add_argument("--json", action="store_true", help="print the summary as JSON")
    sim.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a progress bar on stderr (default: when stderr is a terminal)",
    )
    sim.add_argument("--no-check", action="store_true", help="skip the invariant checks")
    sim.set_defaults(run=_simulate)

    rep = commands.add_parser("replay", help="replay a game record")
    rep.add_argument("file")
    rep.add_argument("--json", action="store_true", help="print the result as JSON")
    rep.set_defaults(run=_replay)

    ver = commands.add_parser(
        "verify",
        help="check a match's shuffles against their commitments (docs/fairness.md)",
        description=(
            "verify MATCH.json [--commitment ROUND=HEX ...] [--match-commitment HEX] checks a "
            "finished match (a game record or GET /api/matches/{id}); or one round: --game G "
            "--round-seed S --salt T --commitment HEX [--dealer D --hand SEAT=CARDS ...]."
        ),
    )
    ver.add_argument("file", nargs="?", help="a game record, or a match from the API")
    ver.add_argument("--commitment", action="append", default=[], help="[ROUND=]HEX seen in play")
    ver.add_argument("--match-commitment", help="the table's seed commitment (SHA-256 of the seed)")
    ver.add_argument("--game", choices=GAMES, default="konkan")
    ver.add_argument("--round-seed", help="a round's revealed seed")
    ver.add_argument("--salt", help="a round's revealed salt")
    ver.add_argument("--players", type=int, choices=(2, 3, 4), default=None)
    ver.add_argument("--dealer", type=int, default=None, help="the round's dealer (to check hands)")
    ver.add_argument("--deal", type=int, default=0, help="Konkan: 1, 2… for a redeal")
    ver.add_argument("--hand", action="append", default=[], help="SEAT=CARDS seen dealt")
    ver.add_argument("--json", action="store_true", help="print the report as JSON")
    ver.set_defaults(run=_verify)

    srv = commands.add_parser("serve", help="run the game server (migrates the database first)")
    srv.add_argument("--host", default=None, help="default: SAHRAT_HOST or 127.0.0.1")
    srv.add_argument("--port", type=int, default=None, help="default: SAHRAT_PORT or 8000")
    srv.add_argument(
        "--log-level", default="info", choices=("critical", "error", "warning", "info", "debug")
    )
    srv.set_defaults(run=_serve)

    mig = commands.add_parser(
        "migrate", help="bring the database (DATABASE_URL) to the latest schema, then exit"
    )
    mig.set_defaults(run=_migrate)

    ply = commands.add_parser(
        "play",
        help="play in the terminal: sign in as a guest, create or join a table",
        description=(
            "Moves: draw | discard 7H | lay 7H 8H 9H / 2S 3S 4S | take 7H 8H 9H | layoff 3 TH | "
            "swap 2 6H | commit | end (Konkan); take 4H 5H 6H / ... | refuse | pass | "
            "discard QS | force | decline (Conquian); or a raw JSON action; quit."
        ),
    )
    ply.add_argument("--server", default="http://127.0.0.1:8000")
    ply.add_argument("--game", choices=GAMES, default="konkan")
    ply.add_argument("--options", help="table options as JSON, e.g. '{\"players\": 2}'")
    ply.add_argument("--table", type=int, help="join this table instead of creating one")
    ply.add_argument("--invite", help="join a private table by its invite code")
    ply.add_argument("--auto", action="store_true", help="let the simple player move for you")
    ply.add_argument(
        "--bots",
        metavar="LEVEL",
        help="start the new table at once with bots of this level (simple, strong, expert) in the "
        "empty seats",
    )
    ply.set_defaults(run=_play)

    adm = commands.add_parser("admin", help="manage admin accounts")
    adm_commands = adm.add_subparsers(dest="admin_command", required=True)
    adm_create = adm_commands.add_parser(
        "create", help="create an admin account and print its one-time password"
    )
    adm_create.add_argument("name")
    adm_create.set_defaults(run=_admin)

    are = commands.add_parser(
        "arena",
        help="play matches between bot levels (each seat sees its own view only) and report",
        description="e.g. sahrat arena --game konkan --seats expert,simple,simple,simple "
        "--matches 100 --seed 1 --workers 2; the seats rotate by one place every match.",
    )
    are.add_argument("--game", choices=GAMES, default="konkan")
    are.add_argument("--seats", required=True, help="comma list of levels, one per seat")
    are.add_argument("--matches", type=int, default=100)
    are.add_argument("--seed", default="1")
    are.add_argument("--workers", type=int, default=1, help="processes playing matches")
    are.add_argument("--json", action="store_true", help="print the report as JSON")
    are.add_argument("--progress", action="store_true", help="show a progress bar")
    are.set_defaults(run=_arena)

    add_analyse(commands)

    sch = commands.add_parser("schemas", help="write the WebSocket protocol's JSON schemas")
    sch.add_argument("--out", default="docs/schemas", help="folder (default: docs/schemas)")
    sch.set_defaults(run=_schemas)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    code: int = args.run(args)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
