"""`python -m core.guard check|bench`: verdicts for SQL read from stdin, and check()'s speed."""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import sqlglot
from sqlglot.errors import SqlglotError

import core.guard
from core.guard import GuardPolicy, UnknownDialectError, Verdict, check, normalize_dialect


def _policy_from_args(args: argparse.Namespace) -> GuardPolicy:
    return GuardPolicy(
        limit=None if args.limit == 0 else args.limit,
        deny_tables=frozenset(t.lower() for t in args.deny_table),
        deny_columns=frozenset(c.lower() for c in args.deny_column),
        mask_columns=frozenset(c.lower() for c in args.mask_column),
        allowed_tables=frozenset(t.lower() for t in args.allow_table) if args.allow_table else None,
        table_columns=dict(args.columns),
    )


def _columns_arg(value: str) -> tuple[str, tuple[str, ...]]:
    """`customers=id,name,email` → ("customers", ("id", "name", "email"))."""
    table, sep, columns = value.partition("=")
    names = tuple(c.strip().lower() for c in columns.split(",") if c.strip())
    if not sep or not table.strip() or not names:
        raise argparse.ArgumentTypeError(f"expected TABLE=COLUMN,COLUMN,... in order, not {value!r}")
    return table.strip().lower(), names


def _read_lines(stream: Iterable[bytes]) -> Iterator[str | None]:
    """Lines of stdin as text; None for a line that is not UTF-8 (it is denied, never guessed at)."""
    for number, raw in enumerate(stream):
        line = raw.rstrip(b"\r\n")
        if number == 0 and line.startswith(b"\xef\xbb\xbf"):  # a byte-order mark is the file's, not SQL
            line = line[3:]
        try:
            yield line.decode("utf-8")
        except UnicodeDecodeError:
            yield None


def _verdict_line(line: str | None, dialect: str, policy: GuardPolicy, show_sql: bool) -> str:
    if line is None:
        return "DENY is not valid UTF-8 text"
    try:
        verdict = check(line, dialect, policy)
    except Exception as error:  # never let one line stop the rest; never allow on error
        return f"DENY failed inside the guard ({type(error).__name__})"
    if verdict.allowed:
        return f"ALLOW {verdict.sql}" if show_sql else "ALLOW"
    return "DENY " + " ".join(verdict.reason.split())


def _run_check(args: argparse.Namespace) -> int:
    policy = _policy_from_args(args)
    out = sys.stdout
    for line in _read_lines(sys.stdin.buffer):
        out.write(_verdict_line(line, args.dialect, policy, args.show_sql) + "\n")
        out.flush()
    return 0


def _statements(path: Path) -> list[str]:
    """Statements of a file, one per line; a `SQL<TAB>db_id` line (Spider's format) gives its SQL."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line.split("\t", 1)[0] for line in lines if line.strip()]


def _timed(statements: list[str], run: Callable[[str], object]) -> list[float]:
    times = []
    for sql in statements:
        start = time.perf_counter()
        run(sql)
        times.append((time.perf_counter() - start) * 1000.0)
    return times


def _run_bench(args: argparse.Namespace) -> int:
    """Speed of check() on real queries, next to a baseline of bare sqlglot parse + generate."""
    source = _statements(Path(args.file))
    if not source:
        print(f"no statements in {args.file}", file=sys.stderr)
        return 2
    statements = [source[k % len(source)] for k in range(args.count)]
    policy = _policy_from_args(args)
    verdicts: list[Verdict] = []

    def guard(sql: str) -> None:
        verdicts.append(check(sql, args.dialect, policy))

    def baseline(sql: str) -> None:
        with contextlib.suppress(SqlglotError):
            sqlglot.parse_one(sql, read=args.dialect).sql(dialect=args.dialect)

    check(source[0], args.dialect, policy)  # warm caches (dialect, parser class)
    guard_ms = _timed(statements, guard)
    base_ms = _timed(statements, baseline)
    allowed = sum(v.allowed for v in verdicts)
    result = {
        "statements": len(statements),
        "dialect": args.dialect,
        "file": str(args.file),
        "seconds": round(sum(guard_ms) / 1000.0, 3),
        "statements_per_s": round(len(statements) / (sum(guard_ms) / 1000.0), 1),
        "p50_ms": round(statistics.median(guard_ms), 3),
        "p95_ms": round(_percentile(guard_ms, 0.95), 3),
        "max_ms": round(max(guard_ms), 3),
        "allowed": allowed,
        "denied": len(verdicts) - allowed,
        "baseline_seconds": round(sum(base_ms) / 1000.0, 3),
        "baseline_statements_per_s": round(len(statements) / (sum(base_ms) / 1000.0), 1),
        "target_seconds_per_10k": 10.0,
    }
    per_10k = result["seconds"] * 10_000 / len(statements)
    result["seconds_per_10k"] = round(per_10k, 3)
    result["meets_target"] = per_10k <= 10.0
    print(f"guard bench: {len(statements):,} statements ({args.dialect}) from {args.file}")
    print(
        f"  guard.check     {result['seconds']:8.2f} s  {result['statements_per_s']:9,.0f} stmt/s"
        f"  p50 {result['p50_ms']:.2f} ms  p95 {result['p95_ms']:.2f} ms  max {result['max_ms']:.1f} ms"
        f"  allowed {allowed:,}  denied {result['denied']:,}"
    )
    print(
        f"  baseline parse  {result['baseline_seconds']:8.2f} s  {result['baseline_statements_per_s']:9,.0f}"
        " stmt/s  (sqlglot parse + generate, no checks)"
    )
    print(
        f"  target          {per_10k:.2f} s per 10,000 statements (≤ 10 s): "
        + ("met" if result["meets_target"] else "MISSED")
    )
    if args.show_denied:
        for sql, verdict in zip(statements[: len(source)], verdicts, strict=False):
            if not verdict.allowed:
                print(f"  DENY {verdict.reason}: {sql}")
    if args.json:
        print(json.dumps(result))
    return 0


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _spider_gold() -> Path:
    """Spider's gold SQL in the nearest ../shared/bench (the main checkout's or a worktree's)."""
    here = Path(__file__).resolve()
    found = (d / "shared/bench" for d in here.parents if (d / "shared/bench").is_dir())
    return next(found, here.parents[3] / "shared/bench") / "spider-train/train_gold.sql"


def _dialect_arg(value: str) -> str:
    try:
        return normalize_dialect(value)
    except UnknownDialectError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def main(argv: list[str] | None = None) -> int:
    description = (core.guard.__doc__ or "").split("\n")[0]
    parser = argparse.ArgumentParser(prog="python -m core.guard", description=description)
    commands = parser.add_subparsers(dest="command", required=True)
    for name, help_text in (
        ("check", "read statements from stdin, one per line; print ALLOW or DENY <reason> per line"),
        ("bench", "measure check() speed on a file of statements (one per line, SQL<TAB>... allowed)"),
    ):
        sub = commands.add_parser(name, help=help_text)
        sub.add_argument("--dialect", required=True, type=_dialect_arg, help="sqlite, postgres or mysql")
        sub.add_argument("--limit", type=int, default=GuardPolicy.limit, help="LIMIT to apply; 0 = none")
        sub.add_argument("--deny-table", action="append", default=[], metavar="TABLE")
        sub.add_argument("--deny-column", action="append", default=[], metavar="TABLE.COLUMN")
        sub.add_argument(
            "--mask-column",
            action="append",
            default=[],
            metavar="TABLE.COLUMN",
            help="a masked column: DENY any use of it but showing it or counting it",
        )
        sub.add_argument("--allow-table", action="append", default=[], metavar="TABLE")
        sub.add_argument(
            "--columns",
            action="append",
            default=[],
            type=_columns_arg,
            metavar="TABLE=COL,COL,...",
            help="a table's columns in order (resolves column lists such as AS x(a, b))",
        )
        if name == "check":
            sub.add_argument("--show-sql", action="store_true", help="print ALLOW <sql to run>")
        else:
            default_file = _spider_gold()
            sub.add_argument("--file", default=str(default_file))
            sub.add_argument(
                "--count", type=int, default=10_000, help="statements to check (cycles the file)"
            )
            sub.add_argument("--show-denied", action="store_true")
            sub.add_argument("--json", action="store_true", help="print a final JSON line")
    args = parser.parse_args(argv)
    if args.command == "check":
        return _run_check(args)
    return _run_bench(args)
