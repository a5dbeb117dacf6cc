"""`python -m bot index build|refresh [--db NAME]`: the value index, built offline with progress.

Through Askbase (`operating`, core/askbase.py), as every run on a database people ask about: the
operator's access to each database is decided first, the statements that read its values are
attributed to `index`, and each build leaves an audit row (`askbase audit`) with the number of
values indexed, or what failed.
"""

from __future__ import annotations

import argparse
import json
import sys

from core.askbase import AccessRefused, Askbase
from core.settings import Settings
from core.values import build_index, refresh_index, text_progress


def run_index(args: argparse.Namespace, settings: Settings) -> int:
    app = Askbase(settings)
    names = [args.db] if args.db else app.databases.names()
    action = build_index if args.action == "build" else refresh_index
    try:
        for name in names:
            with app.operating(f"index {args.action}", db=name, source="index") as run:
                db = run.database
                print(f"{args.action}ing the value index of '{db.name}'…", file=sys.stderr)
                stats = action(db, text_progress(sys.stderr))
                run.rows = stats.values
            summary = stats.to_dict()
            skipped = summary.pop("skipped")
            print(json.dumps({k: v for k, v in summary.items() if not k.endswith("_columns")}))
            print(
                f"'{db.name}': {stats.values:,} values from {stats.columns} columns, "
                f"{stats.bytes_per_value:.0f} bytes per value, {stats.seconds:.1f} s"
                f"{'' if stats.rewritten else ' (nothing changed)'}; {len(skipped)} columns not indexed",
                file=sys.stderr,
            )
    except AccessRefused as exc:
        print(str(exc), file=sys.stderr)
        return 2
    finally:
        app.close()
    return 0
