"""DuckDB, in this process: a `.duckdb` file, or a folder of Parquet/CSV files read as tables.

Decisions (docs/warehouses.md#duckdb, docs/security.md):
- `duckdb:///path.duckdb` opens the file `read_only=True`: DuckDB itself refuses every write.
- Every connection starts with file system access off (`enable_external_access=false`), extensions
  neither installed nor loaded automatically, and its configuration locked (`lock_configuration`):
  no `read_csv('/etc/passwd')`, `COPY ... TO`, `ATTACH`, `INSTALL httpfs` or `SET` undoes that,
  whatever SQL reaches the connection.
- `files:///dir` has to read its own files and nothing else, so external access is off there too
  and DuckDB's allow-lists name exactly what it may read: each table's file (`allowed_paths`) or,
  for a table that is a folder of Parquet files, that folder (`allowed_directories`). Those lists
  let DuckDB *write* there as well (`COPY t TO '<dir>/x.csv'`), and the in-memory database that
  holds the views is writable, which is why:
- the executor runs only what DuckDB's own parser reads as exactly one SELECT (`one_select`): the
  DuckDB counterpart of PostgreSQL's cursor that takes one SELECT only (core/execute.py).
- The statement timeout interrupts the connection from a timer (`interrupt_after`): DuckDB has no
  server-side timeout, and `interrupt()` stops a running query between vectors.
- `memory_limit` bounds what one query may hold (`MEMORY_LIMIT`); result rows and cells are cut by
  the executor's caps as for every backend (core/bounds.py).
- A files:// table name is the file name without its extensions, lower case, with anything but
  letters, digits and `_` as `_`; two files with one name are an error (which one would it be?).
- `copy_sqlite` makes a DuckDB copy of a SQLite file (the demo, the benchmark databases): declared
  types kept where the values fit them, else VARCHAR; keys kept where DuckDB accepts them.
"""

from __future__ import annotations

import logging
import re
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from core.warehouse import require

log = logging.getLogger(__name__)

POOL_SIZE = 5
MAX_OVERFLOW = 5
MEMORY_LIMIT = "2GB"  # per database instance (all connections to one file share it)
TABLE_SUFFIXES = (".parquet", ".csv", ".tsv", ".csv.gz", ".tsv.gz")

# Every connection, before anything else runs on it; `lock_configuration` comes last.
_LOCKED: dict[str, str | int | float | list[str]] = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "memory_limit": MEMORY_LIMIT,
}


@dataclass(frozen=True)
class LakeTable:
    """One table of a files:// database: its name and the one call that reads it."""

    name: str
    path: Path  # a file, or a folder of Parquet files
    reader: str  # read_parquet('...') / read_csv('...')

    @property
    def is_folder(self) -> bool:
        return self.path.is_dir()


def duckdb_engine(url: sa.URL) -> sa.Engine:
    """`duckdb:///path.duckdb`, read-only."""
    require("duckdb")
    path = url.database
    if not path or path == ":memory:":
        raise ValueError("an in-memory DuckDB database has nothing to ask about; give a file path")
    file = Path(path).expanduser().resolve()
    if not file.is_file():
        raise FileNotFoundError(f"DuckDB file not found: {file}")

    def connect() -> Any:
        import duckdb
        from duckdb_engine import ConnectionWrapper

        conn = duckdb.connect(str(file), read_only=True, config={**_LOCKED, "enable_external_access": False})
        _lock(conn)
        return ConnectionWrapper(conn)

    return _engine(connect)


def files_engine(url: str) -> sa.Engine:
    """`files:///dir`: the folder's Parquet and CSV files as read-only views in an in-memory DuckDB.

    The path is what follows `files://`, as in a file URI: `files:///data/lake` is /data/lake,
    `files://./lake` is relative to the working directory.
    """
    require("files")
    folder = Path(url.split("://", 1)[1].split("?", 1)[0]).expanduser().resolve()
    if not folder.is_dir():
        raise FileNotFoundError(f"folder of data files not found: {folder}")
    if not lake_tables(folder):
        raise FileNotFoundError(f"no Parquet or CSV files in {folder}")

    def connect() -> Any:
        import duckdb
        from duckdb_engine import ConnectionWrapper

        tables = lake_tables(folder)  # files added since the last connection are tables too
        conn = duckdb.connect(":memory:", config=dict(_LOCKED))
        files = [str(t.path) for t in tables if not t.is_folder]
        folders = [f"{t.path}/" for t in tables if t.is_folder]
        # the allow-lists can only be set while external access is on: set them, then turn it off
        conn.execute(f"SET allowed_paths = [{', '.join(map(_literal, files))}]")
        conn.execute(f"SET allowed_directories = [{', '.join(map(_literal, folders))}]")
        conn.execute("SET enable_external_access = false")
        for table in tables:
            conn.execute(f"CREATE VIEW {quote(table.name)} AS SELECT * FROM {table.reader}")
        _lock(conn)
        return ConnectionWrapper(conn)

    return _engine(connect)


def lake_tables(folder: Path) -> list[LakeTable]:
    """The tables a folder holds: its data files, and its sub-folders of Parquet files."""
    tables: dict[str, LakeTable] = {}
    for path in sorted(folder.iterdir()):
        if path.name.startswith("."):
            continue
        if path.is_dir():
            if not any(path.rglob("*.parquet")):
                continue
            table = LakeTable(
                table_name(path.name), path, f"read_parquet({_literal(f'{path}/**/*.parquet')})"
            )
        else:
            suffix = next((s for s in TABLE_SUFFIXES if path.name.lower().endswith(s)), None)
            if suffix is None:
                continue
            stem = path.name[: -len(suffix)]
            reader = "read_parquet" if suffix == ".parquet" else "read_csv"
            table = LakeTable(table_name(stem), path, f"{reader}({_literal(str(path))})")
        if table.name in tables:
            raise ValueError(
                f"two files make a table named {table.name}: {tables[table.name].path} and {path}"
            )
        tables[table.name] = table
    return sorted(tables.values(), key=lambda t: t.name)


def table_name(stem: str) -> str:
    name = re.sub(r"[^0-9a-z_]", "_", stem.lower()) or "table"
    return f"t_{name}" if name[0].isdigit() else name


def _engine(connect: Any) -> sa.Engine:
    # QueuePool explicitly: with an empty URL SQLAlchemy would pick the single-thread pool.
    return sa.create_engine(
        "duckdb://",
        creator=connect,
        poolclass=sa.pool.QueuePool,
        pool_size=POOL_SIZE,
        max_overflow=MAX_OVERFLOW,
    )


def _lock(conn: Any) -> None:
    """File access off, then the configuration locked. A second connection to a file this process
    already opened shares its database instance, already locked: nothing to do then."""
    locked = conn.execute("SELECT current_setting('lock_configuration')").fetchone()
    if locked is not None and bool(locked[0]):
        return
    conn.execute("SET enable_external_access = false")
    conn.execute("SET lock_configuration = true")


def quote(name: str) -> str:
    """A name quoted for DuckDB and SQLite alike."""
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


# ------------------------------------------------------------------ what the executor asks


def one_select(raw: Any, sql: str) -> str | None:
    """Why DuckDB's own parser would not run `sql` as one SELECT, or None when it would."""
    import duckdb

    try:
        statements = raw.extract_statements(sql)
    except duckdb.Error as exc:
        return str(exc).splitlines()[0]
    if len(statements) != 1:
        return f"{len(statements)} statements; only one query can run"
    if statements[0].type != duckdb.StatementType.SELECT:
        return f"only a query can run, not {statements[0].type.name}"
    return None


@contextmanager
def interrupt_after(raw: Any, seconds: float) -> Iterator[None]:
    """Interrupt whatever `raw` runs once `seconds` have passed (DuckDB has no statement timeout)."""
    timer = threading.Timer(max(0.001, seconds), raw.interrupt)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


# ------------------------------------------------------------------ copies of SQLite files

_TYPES = (
    (("INT",), "BIGINT"),
    (("CHAR", "CLOB", "TEXT"), "VARCHAR"),
    (("REAL", "FLOA", "DOUB"), "DOUBLE"),
    (("BOOL",), "BOOLEAN"),
    (("DATETIME", "TIMESTAMP"), "TIMESTAMP"),
    (("DATE",), "DATE"),
    (("BLOB",), "BLOB"),
    (("NUM", "DEC"), "DOUBLE"),
)


def duckdb_type(declared: str, values: Sequence[Any]) -> str:
    """The DuckDB type for a SQLite column: its declared type where every value fits it."""
    upper = declared.upper()
    wanted = next((t for marks, t in _TYPES if any(m in upper for m in marks)), "")
    kinds = {type(v) for v in values if v is not None}
    if not wanted:  # no declared type: what the values are
        if kinds <= {int}:
            return "BIGINT"
        if kinds <= {int, float}:
            return "DOUBLE"
        return "BLOB" if kinds == {bytes} else "VARCHAR"
    fits = {
        "BIGINT": kinds <= {int},
        "DOUBLE": kinds <= {int, float},
        "BOOLEAN": kinds <= {int} and all(v in (0, 1, None) for v in values),
        "BLOB": kinds <= {bytes},
        "VARCHAR": kinds <= {str},
        "DATE": kinds <= {str},  # checked by DuckDB's cast when loaded
        "TIMESTAMP": kinds <= {str},
    }
    return wanted if fits.get(wanted, False) else "VARCHAR"


def copy_sqlite(source: Path, target: Path) -> Path:
    """A DuckDB copy of the SQLite file `source` at `target` (written anew), keys kept where they hold."""
    require("duckdb")
    import duckdb

    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    partial.unlink(missing_ok=True)
    src = open_sqlite(source)
    dst = duckdb.connect(str(partial))
    try:
        names = sqlite_tables(src)
        for name in names:
            _copy_table(src, dst, name, names)
    finally:
        src.close()
        dst.close()
    partial.replace(target)
    return target


def open_sqlite(source: Path) -> sqlite3.Connection:
    """The SQLite file `source` opened read-only for copying (core/warehouse/sqlite_copy.py too):
    text that is not UTF-8 is read with replacement characters rather than stopping the copy."""
    src = sqlite3.connect(f"file:{Path(source).resolve()}?mode=ro", uri=True)
    src.text_factory = lambda raw: raw.decode("utf-8", errors="replace")
    return src


def sqlite_tables(src: sqlite3.Connection) -> list[str]:
    """The tables of `src` in the order a copy creates them: referenced tables before the tables
    that reference them (cycles: in name order)."""
    names = [
        r[0]
        for r in src.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )
    ]
    refs = {n: {r[2] for r in src.execute(f"PRAGMA foreign_key_list({quote(n)})")} for n in names}
    order: list[str] = []
    pending = list(names)
    while pending:
        ready = [n for n in pending if not (refs[n] - set(order) - {n}) & set(pending)] or pending[:1]
        for n in ready:
            order.append(n)
            pending.remove(n)
    return order


def _copy_table(src: sqlite3.Connection, dst: Any, name: str, names: list[str]) -> None:
    info = list(src.execute(f"PRAGMA table_info({quote(name)})"))
    rows = src.execute(f"SELECT * FROM {quote(name)}").fetchall()
    columns = [
        (c[1], duckdb_type(c[2] or "", [r[i] for r in rows]) + (" NOT NULL" if c[3] else ""))
        for i, c in enumerate(info)
    ]
    pk = [c[1] for c in sorted(info, key=lambda c: c[5]) if c[5]]
    fks: dict[int, list[tuple[str, str, str]]] = {}
    for fk in src.execute(f"PRAGMA foreign_key_list({quote(name)})"):
        fks.setdefault(fk[0], []).append((fk[3], fk[2], fk[4]))
    lower = {n.lower(): n for n in names}
    keys = [f"PRIMARY KEY ({', '.join(quote(c) for c in pk)})"] if pk else []
    for parts in fks.values():
        ref = lower.get(parts[0][1].lower())
        if ref is None or any(p[2] is None for p in parts):
            continue
        keys.append(
            f"FOREIGN KEY ({', '.join(quote(p[0]) for p in parts)}) REFERENCES {quote(ref)} "
            f"({', '.join(quote(p[2]) for p in parts)})"
        )
    for attempt in (keys, [k for k in keys if k.startswith("PRIMARY")], []):
        for retype in (False, True):
            cols = [(c, _text_date(t) if retype else t) for c, t in columns]
            try:
                _create_and_load(dst, name, cols, attempt, rows)
                return
            except Exception as exc:  # duckdb.Error: a key that does not hold, a date that is not one
                dst.execute(f"DROP TABLE IF EXISTS {quote(name)}")
                log.info("copying %s: %s; trying with fewer keys or text dates", name, str(exc)[:200])
    raise RuntimeError(f"could not copy table {name} into DuckDB")


def _arrow_value(value: Any, type_: str) -> Any:
    """A SQLite value as the staged column holds it (text columns may hold numbers in SQLite)."""
    if value is None:
        return None
    if type_ == "DOUBLE":
        return float(value)
    if type_ in ("BIGINT", "BOOLEAN", "BLOB"):
        return value
    return value if isinstance(value, str) else str(value)


def _text_date(type_: str) -> str:
    """A DATE or TIMESTAMP column whose values are not all dates, kept as text."""
    base, _, rest = type_.partition(" ")
    return f"VARCHAR {rest}".strip() if base in ("DATE", "TIMESTAMP") else type_


def _create_and_load(
    dst: Any, name: str, columns: list[tuple[str, str]], keys: list[str], rows: list[tuple[Any, ...]]
) -> None:
    import pyarrow as pa

    body = ", ".join([*(f"{quote(c)} {t}" for c, t in columns), *keys])
    dst.execute(f"CREATE TABLE {quote(name)} ({body})")
    if not rows:
        return
    arrow_types = {"BIGINT": pa.int64(), "DOUBLE": pa.float64(), "BOOLEAN": pa.int64(), "BLOB": pa.binary()}
    bare = [t.partition(" ")[0] for _, t in columns]
    data = {
        f"c{i}": pa.array(
            [_arrow_value(v, t) for v in (r[i] for r in rows)],
            type=arrow_types.get(t, pa.string()),
        )
        for i, t in enumerate(bare)
    }
    staged = pa.table(data)
    dst.register("askbase_staged", staged)
    try:
        casts = ", ".join(f"CAST(c{i} AS {t})" for i, t in enumerate(bare))
        dst.execute(f"INSERT INTO {quote(name)} SELECT {casts} FROM askbase_staged")
    finally:
        dst.unregister("askbase_staged")
