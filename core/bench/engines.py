"""The engine a benchmark asks on: the dataset's SQLite files as they are, or DuckDB copies of them.

`python -m core.bench ask --engine duckdb` copies every database of the dataset into a DuckDB file
(core/warehouse/duckdb.py `copy_sqlite`: same tables, values, keys) under
`<var>/bench/duckdb/<dataset>/`, made again when the SQLite file is newer, and Askbase answers
there, in the DuckDB dialect. The gold queries still run on the SQLite files: the question is
whether Askbase answers as well on another engine, not whether the gold SQL ports.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from core.demo import demo_duckdb_settings, demo_settings
from core.demo_file import build_lock
from core.settings import DatabaseSettings
from core.warehouse.duckdb import copy_sqlite

ENGINES = ("sqlite", "duckdb")


def duckdb_copy(sqlite_path: Path, var_dir: Path) -> Path:
    """The DuckDB copy of one SQLite file of a dataset, made when missing or older."""
    folder = hashlib.sha256(str(sqlite_path.resolve().parent.parent).encode()).hexdigest()[:10]
    target = Path(var_dir) / "bench" / "duckdb" / folder / f"{sqlite_path.stem}.duckdb"
    with build_lock(target):
        if not target.is_file() or target.stat().st_mtime < sqlite_path.stat().st_mtime:
            copy_sqlite(sqlite_path, target)
    return target


def url_for(engine: str, sqlite_path: Path, var_dir: Path) -> str:
    """The URL Askbase opens for a dataset's database on `engine`."""
    if engine == "duckdb":
        return f"duckdb:///{duckdb_copy(sqlite_path, var_dir)}"
    return f"sqlite:///{sqlite_path}"


def demo_for(engine: str, var_dir: Path) -> DatabaseSettings:
    """The bundled demo on `engine`."""
    return demo_duckdb_settings(var_dir) if engine == "duckdb" else demo_settings(var_dir)
