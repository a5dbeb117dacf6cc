"""Command line: `python -m bot ask|console|serve|worker|index|audit|catalog|db ...`, or `askbase ...`
when installed.

Exit codes: 0 answered (or asked back), 1 the question failed, 2 bad usage or configuration.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import logging
import sys
from collections.abc import Callable
from pathlib import Path

from bot.console import run_console
from bot.db_cmd import run_db, upgrade_at_start
from bot.extras import MissingExtra, installed, message, missing_extra, require
from bot.terminal import render
from core.askbase import Askbase
from core.database import UnknownDatabase
from core.settings import Settings, load_settings

log = logging.getLogger("askbase")

Command = Callable[[argparse.Namespace, Settings], int]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=_prog(), description="Askbase: ask your database questions.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    sub = parser.add_subparsers(dest="command", required=True)

    ask = sub.add_parser("ask", help="answer one question")
    ask.add_argument("question")
    ask.add_argument(
        "--db", help="configured database name or SQLAlchemy URL (default: ASKBASE_DEFAULT_DB or demo)"
    )
    ask.add_argument("--json", action="store_true", help="print one JSON object (the DESIGN contract)")
    ask.add_argument("--trace", action="store_true", help="show every stage: ms, LLM calls, tokens, outputs")

    console = sub.add_parser("console", help="interactive questions with follow-ups")
    console.add_argument("--db")

    serve = sub.add_parser("serve", help="run the Slack app (or, with --teams, the Teams adapter)")
    mode = serve.add_mutually_exclusive_group()
    mode.add_argument("--socket", action="store_true", help="Socket Mode (needs SLACK_APP_TOKEN)")
    mode.add_argument("--http", action="store_true", help="HTTP on --port at /slack/events")
    mode.add_argument(
        "--teams", action="store_true", help="the Microsoft Teams adapter on --port at /api/messages"
    )
    serve.add_argument("--port", type=int)
    serve.add_argument(
        "--server",
        choices=["gunicorn", "threaded"],
        default="gunicorn",
        help="HTTP server: gunicorn (production; slack.http_processes × http_threads) or threaded (one process)",
    )

    sub.add_parser("worker", help="run the scheduler for recurring questions")

    index = sub.add_parser("index", help="build or refresh the value index")
    index.add_argument("action", choices=["build", "refresh"])
    index.add_argument("--db")

    db = sub.add_parser("db", help="create or upgrade the state database (serve and worker do it at start)")
    db.add_argument("action", choices=["upgrade", "current"])

    catalog = sub.add_parser(
        "catalog", help="a database's join patterns and business definitions: show, import, export, check"
    )
    actions = catalog.add_subparsers(dest="action", required=True)
    show = actions.add_parser("show", help="the join patterns of a database (to correct in its catalog YAML)")
    show.add_argument("--db")
    show.add_argument("--yaml", action="store_true", help="print only the patterns as catalog YAML")
    imports = actions.add_parser(
        "import", help="store the definitions of a dbt project or an OSI file (replacing its last import)"
    )
    imports.add_argument("source", choices=["dbt", "osi"])
    imports.add_argument("path", help="dbt: the project dir or its target dir; osi: the OSI YAML file")
    imports.add_argument("--db")
    export = actions.add_parser("export", help="print the definitions in force on a database")
    export.add_argument("--format", choices=["yaml", "osi"], default="yaml")
    export.add_argument("--db")
    check = actions.add_parser("check", help="check every definition of a database against its schema")
    check.add_argument("--db")

    audit = sub.add_parser("audit", help="print the audit log")
    audit.add_argument("--since", default="1d", help="e.g. 30m, 12h, 7d")
    audit.add_argument("--json", action="store_true")
    return parser


SERVICES = {"serve", "worker"}  # long-running: they log at settings.log_level; one-shot commands stay quiet


def _prog() -> str:
    """'askbase' for the console script, 'python -m bot' otherwise (usage lines name what was typed)."""
    name = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    return "python -m bot" if name in ("", "-c", "__main__.py") or name.startswith("python") else name


def run() -> int:
    """`python -m bot` and the `askbase` console script: main() as the whole life of a process.

    What the imports built (the modules, the libraries' classes and tables: some 250,000 objects)
    lives until the process exits, so it is frozen out of the garbage collector's way: full
    collections no longer walk it again and again, the collection at exit skips it (a third of a
    second of CPU per command), and gunicorn's forked workers leave those pages shared.
    """
    gc.freeze()
    return main()


def main(argv: list[str] | None = None) -> int:
    """The commands (argv: sys.argv[1:]); tests call it in their own process."""
    args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    try:
        settings = load_settings()
    except Exception as exc:  # pydantic ValidationError, YAML errors: show what is wrong, not a trace
        print(f"Configuration error: {exc}", file=sys.stderr)
        return 2
    level = logging.getLevelName(settings.log_level.upper()) if args.command in SERVICES else logging.WARNING
    logging.basicConfig(
        level=logging.INFO if args.verbose else (level if isinstance(level, int) else logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    handler = COMMANDS[args.command]
    try:
        for extra in _extras(args):  # before anything starts: one line naming what to install
            require(extra)
        if args.command in SERVICES and upgrade_at_start(settings) != 0:
            return 1
        return handler(args, settings)
    except UnknownDatabase as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except MissingExtra as exc:  # a database driver that is an extra (core/extras.py)
        print(str(exc), file=sys.stderr)
        return 2
    except ImportError as exc:  # a command whose modules need an extra that is not installed
        missing = missing_extra(exc)
        if missing is None:
            raise
        log.debug("missing extra %s", missing, exc_info=True)
        print(message(missing), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def cmd_ask(args: argparse.Namespace, settings: Settings) -> int:
    app = Askbase(settings)
    try:
        outcome = app.ask(args.question, db=args.db)
    finally:
        app.close()
    if args.json:
        print(json.dumps(outcome.to_json(with_trace=True), ensure_ascii=False))
    else:
        stream = sys.stdout if outcome.status != "error" else sys.stderr
        print(render(outcome, show_trace=args.trace), file=stream)
    return 1 if outcome.status == "error" else 0


def cmd_console(args: argparse.Namespace, settings: Settings) -> int:
    return run_console(Askbase(settings), db=args.db)


def _lazy(module: str, function: str) -> Command:
    """A command whose module is imported when it runs: `ask` and `console` start without
    loading the Slack SDK, the scheduler or matplotlib — and run where those extras are not
    installed; a command that needs one says which (`main`)."""

    def run(args: argparse.Namespace, settings: Settings) -> int:
        return int(getattr(importlib.import_module(module), function)(args, settings) or 0)

    return run


_SERVE_SLACK = _lazy("bot.slack.app", "serve")
_SERVE_TEAMS = _lazy("bot.teams.server", "serve")


def _extras(args: argparse.Namespace) -> tuple[str, ...]:
    """The extras a command cannot start without (pyproject.toml, core/extras.py)."""
    if args.command == "serve":
        return ("teams",) if getattr(args, "teams", False) else ("slack",)
    if args.command == "worker":
        return ("slack", "teams")  # bot/worker.py posts schedules to both platforms
    return ()


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    """Slack by default; `--teams` loads the Microsoft 365 Agents SDK instead of Bolt."""
    if not installed("charts"):
        log.warning("%s; answers come without charts", message("charts"))
    return (_SERVE_TEAMS if getattr(args, "teams", False) else _SERVE_SLACK)(args, settings)


COMMANDS: dict[str, Command] = {
    "ask": cmd_ask,
    "console": cmd_console,
    "serve": cmd_serve,
    "worker": _lazy("bot.worker", "run_worker"),
    "index": _lazy("bot.index_cmd", "run_index"),
    "audit": _lazy("bot.audit_cmd", "run_audit"),
    "db": run_db,
    "catalog": _lazy("bot.catalog_cmd", "run_catalog"),
}
