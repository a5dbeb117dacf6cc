"""`python -m bot catalog show [--db NAME] [--yaml]`: the join patterns of a database, for its admin.

Prints what decides the joins — subtypes, role tables and their codes, typed facts, parallel
paths, bridges, lookups, inferred joins — whether the catalog YAML declares them or Askbase
detected them, then (with --yaml, or always at the end) the same patterns as a block to paste
under `patterns:` in the database's catalog YAML to confirm or correct them.
"""

from __future__ import annotations

import argparse
import sys

from core.database import Databases
from core.graph.report import graph_report, patterns_yaml
from core.settings import Settings


def run_catalog(args: argparse.Namespace, settings: Settings) -> int:
    databases = Databases(settings)
    try:
        db = databases.get(args.db)
        graph = db.graph
        if not args.yaml:
            print("\n".join(graph_report(graph)))
            where = db.config.catalog or "a catalog YAML (the database's `catalog:` setting)"
            print(f"\nTo confirm or correct these, edit the `patterns:` of {where}; `ignore: true` turns a")
            print("detected pattern off (config/README.md, 'Catalog overlays'). As YAML:\n")
        print(patterns_yaml(graph), end="")
    finally:
        databases.close()
    sys.stdout.flush()
    return 0
