"""`python -m bot index build|refresh [--db NAME]`: the value index, built offline with progress.

Through Askbase (`operating`, core/askbase.py), as every run on a database people ask about: the
operator's access to each database is decided first, the statements that read its values are
attributed to `index`, and each build leaves an audit row (`askbase audit`) with the number of
values indexed, or what failed. `core.index_refresh.index_database` does it — the same path the
worker's scheduled refreshes (`databases.<name>.index_refresh`) take — and waits for a build or
refresh of the same index that is running already (the worker's, another command's).
"""

from __future__ import annotations

import argparse
import json
import sys

from core.askbase import AccessRefused, Askbase
from core.database import Database
from core.index_refresh import index_database
from core.settings import Settings
from core.values import text_progress


def run_index(args: argparse.Namespace, settings: Settings) -> int:
    app = Askbase(settings)
    names = [args.db] if args.db else app.databases.names()

    def starting(db: Database) -> None:
        print(f"{args.action}ing the value index of '{db.name}'…", file=sys.stderr)

    def waiting(db: Database) -> None:
        print(f"another build or refresh of '{db.name}' is running; waiting for it…", file=sys.stderr)

    try:
        for name in names:
            stats = index_database(
                app, name, args.action, text_progress(sys.stderr), on_start=starting, on_wait=waiting
            )
            summary = stats.to_dict()
            skipped = summary.pop("skipped")
            print(json.dumps({k: v for k, v in summary.items() if not k.endswith("_columns")}))
            print(
                f"'{stats.database}': {stats.values:,} values from {stats.columns} columns, "
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
