"""`python -m bot index build|refresh [--db NAME]`: the value index, built offline with progress."""

from __future__ import annotations

import argparse
import json
import sys

from core.database import Databases
from core.settings import Settings
from core.values import build_index, refresh_index, text_progress


def run_index(args: argparse.Namespace, settings: Settings) -> int:
    databases = Databases(settings)
    names = [args.db] if args.db else databases.names()
    action = build_index if args.action == "build" else refresh_index
    try:
        for name in names:
            db = databases.get(name)
            print(f"{args.action}ing the value index of '{db.name}'…", file=sys.stderr)
            stats = action(db, text_progress(sys.stderr))
            summary = stats.to_dict()
            skipped = summary.pop("skipped")
            print(json.dumps({k: v for k, v in summary.items() if not k.endswith("_columns")}))
            print(
                f"'{db.name}': {stats.values:,} values from {stats.columns} columns, "
                f"{stats.bytes_per_value:.0f} bytes per value, {stats.seconds:.1f} s"
                f"{'' if stats.rewritten else ' (nothing changed)'}; {len(skipped)} columns not indexed",
                file=sys.stderr,
            )
    finally:
        databases.close()
    return 0
