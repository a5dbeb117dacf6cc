"""`python -m bot catalog show|import|export|check`: what a database's admin and data team run.

- `show [--db NAME] [--yaml]`: the join patterns of a database — subtypes, role tables and their
  codes, typed facts, parallel paths, bridges, lookups, inferred joins — whether the catalog YAML
  declares them or Askbase detected them, then the same patterns as a block to paste under
  `patterns:` in the database's catalog YAML to confirm or correct them.
- `import dbt PATH [--db NAME]`: the definitions of a dbt project (its dir or its target dir:
  manifest.json, semantic_manifest.json; core/definitions/dbt.py); `import osi FILE`: those of
  an Open Semantic Interchange file (core/definitions/osi.py). Each is checked against the
  schema and the database's access rules first; what fits is stored in the state database,
  replacing the previous import from that source (versioned, so it can be reverted); what was
  skipped is listed with the reason.
- `export --format yaml|osi [--db NAME]`: every definition in force on the database, as the
  definitions YAML (core/definitions/load.py, reads back as the same definitions) or as OSI.
- `check [--db NAME]`: every definition of the database — its files and the state database —
  against its schema; each problem on a line, exit 1 if there is any.

Why through Askbase (`operating`, core/askbase.py): the database is opened, its access decided
and its state database found the one way every question goes, the statements that read its
schema are attributed to `catalog`, and every run leaves an audit row (`askbase audit`: the
action, the database, what it counted — patterns shown, definitions imported, exported or
checked — or what failed). These commands read the database's catalog (its schema), never its rows.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from pathlib import Path
from typing import TextIO

from core.askbase import AccessRefused, Askbase, Operation
from core.data_rules import rules_policy
from core.database import Database
from core.definitions import dbt, osi
from core.definitions.check import check
from core.definitions.importing import Imported, fitting
from core.definitions.load import DefinitionError, dump_yaml, load_file
from core.definitions.model import Definition, Definitions
from core.graph.report import graph_report, patterns_yaml
from core.settings import Settings


def run_catalog(args: argparse.Namespace, settings: Settings) -> int:
    app = Askbase(settings)
    action = {"show": _show, "import": _import, "export": _export, "check": _check}[args.action]
    try:
        with app.operating(_described(args), db=args.db, source="catalog") as run:
            code = action(app, run, args)
            if code != 0:
                run.failed(f"exit {code}")
        return code
    except AccessRefused as exc:
        print(str(exc), file=sys.stderr)
        return 2
    finally:
        app.close()
        sys.stdout.flush()


def _described(args: argparse.Namespace) -> str:
    """What the audit row says was run, in place of a question."""
    if args.action == "import":
        return f"catalog import {args.source} {args.path}"
    if args.action == "export":
        return f"catalog export {args.format}"
    return f"catalog {args.action}" + (" --yaml" if getattr(args, "yaml", False) else "")


def _show(app: Askbase, run: Operation, args: argparse.Namespace) -> int:
    db = run.database
    graph = db.graph
    if not args.yaml:
        print("\n".join(graph_report(graph)))
        where = db.config.catalog or "a catalog YAML (the database's `catalog:` setting)"
        print(f"\nTo confirm or correct these, edit the `patterns:` of {where}; `ignore: true` turns a")
        print("detected pattern off (config/README.md, 'Catalog overlays'). As YAML:\n")
    print(patterns_yaml(graph), end="")
    run.rows = len(graph.patterns)
    return 0


def _import(app: Askbase, run: Operation, args: argparse.Namespace) -> int:
    db = run.database
    source = args.source
    try:
        read: Imported = (
            dbt.read_project(args.path, db.catalog)
            if source == "dbt"
            else osi.read(args.path, db.catalog.dialect)
        )
    except DefinitionError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    # checked beside the database's other definitions: an import may name them, and they it
    stored = app.stored_definitions(db.name)
    others = [d for d in _files(db)[0] + stored if d.provenance.source != source]
    fit = fitting(read, db.catalog, rules_policy(db), others)
    if not fit.definitions:
        print(f"Nothing imported from {args.path} into {db.name}: no definition fits.", file=sys.stderr)
        _print_skipped(fit, sys.stderr)
        return 1
    app.import_definitions(db.name, source, list(fit.definitions), by=_operator())
    run.rows = len(fit.definitions)
    print(f"Imported {fit.summary()} from {source} ({args.path}) into {db.name}.")
    for d in fit.definitions:
        print(f"  {d.kind} '{d.name}'" + (f" ({d.provenance.origin})" if d.provenance.origin else ""))
    _print_skipped(fit, sys.stdout)
    return 0


def _print_skipped(imported: Imported, stream: TextIO) -> None:
    if imported.skipped:
        print(f"Skipped {len(imported.skipped)}:", file=stream)
        for s in imported.skipped:
            print(f"  {s}", file=stream)


def _export(app: Askbase, run: Operation, args: argparse.Namespace) -> int:
    db = run.database
    definitions = list(app.definitions_of(db))
    run.rows = len(definitions)
    if args.format == "osi":
        description = db.config.description or db.catalog.description
        print(osi.dump_yaml(definitions, name=db.name, description=description, catalog=db.catalog), end="")
    else:
        print(dump_yaml(definitions), end="")
    return 0


def _check(app: Askbase, run: Operation, args: argparse.Namespace) -> int:
    db = run.database
    definitions, problems = _files(db)
    definitions += app.stored_definitions(db.name)
    problems += check(Definitions(tuple(definitions)), db.catalog, rules_policy(db))
    run.rows = len(definitions)
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} problem(s) in the definitions of {db.name}.", file=sys.stderr)
        return 1
    print(f"All {len(definitions)} definitions of {db.name} fit its schema.")
    return 0


def _files(db: Database) -> tuple[list[Definition], list[str]]:
    """The definitions of the database's files, and what could not be read from them (a file
    that does not parse, an OSI element a definition cannot say)."""
    definitions: list[Definition] = []
    problems: list[str] = []
    for path in (db.config.catalog, *db.config.definitions):
        if not path or not Path(path).is_file():
            if path:
                problems.append(f"{path}: no such file")
            continue
        try:
            if osi.is_osi(path):
                read = osi.read(path, db.catalog.dialect)
                definitions.extend(read.definitions)
                problems.extend(f"{path}: {s}" for s in read.skipped)
            else:
                definitions.extend(load_file(path))
        except DefinitionError as exc:
            problems.append(str(exc))
    return definitions, problems


def _operator() -> str:
    """Who ran the import: the approver of what it stored (its owner when dbt names none)."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "cli"
