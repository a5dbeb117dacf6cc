"""Where company data lives beyond SQLite, PostgreSQL and MariaDB: DuckDB (a file, or a folder of
Parquet/CSV files), Snowflake, BigQuery, Databricks SQL, Trino and Redshift.

Why a package of its own: each engine is read-only, bounded and attributed in its own way, and
core/connect.py, core/execute.py and core/catalog.py only ask it what to do for a backend.

Decisions the executor, the catalog, the docs (docs/warehouses.md) and the tests rely on:
- Drivers are optional extras (`pip install 'askbase[snowflake]'`, `[bigquery]`, `[databricks]`,
  `[trino]`, `[redshift]`, `[duckdb]`, the last one also for `files://`). `require(backend)`
  imports them; a missing one is `MissingDriver`, a ValueError whose one line names the extra, so
  it reaches people as "could not be opened: ..." like any wrong URL (core/pipeline.py).
- `files:///dir` is a database made of files: every `*.parquet`, `*.csv`, `*.tsv` (optionally
  `.gz`) at the top of the folder is a table named after the file, every sub-folder of Parquet
  files one table; an in-memory DuckDB holds one view per table (core/warehouse/duckdb.py).
- Read-only is the connection's business, not the SQL's: DuckDB files open `read_only`, with
  file system access off (a files:// database may read exactly its own files), extensions neither
  installed nor loaded, and the configuration locked; the executor runs only what DuckDB's own
  parser calls one SELECT. Warehouses have no read-only session: there the account's grants
  (docs/warehouses.md), one statement per call and the guard decide.
- Every statement sent to a warehouse says who asked (core/attribution.py): Snowflake's
  QUERY_TAG, BigQuery job labels, Redshift's query_group, Trino client tags and Databricks'
  user agent carry "askbase", the asker and the trace id.
- Time and cost are capped where the engine counts them: a statement timeout everywhere (DuckDB
  is interrupted by a timer), BigQuery refuses a query whose dry run would read more than
  `warehouse.max_bytes_billed` before it runs, and bills at most that.
- Reflection is bulk (core/warehouse/reflect.py): one query for every column of every schema,
  one for the keys, whatever the number of tables.
"""

from __future__ import annotations

import importlib

# URL backend → the extra that installs its driver.
EXTRAS = {
    "duckdb": "duckdb",
    "files": "duckdb",
    "snowflake": "snowflake",
    "bigquery": "bigquery",
    "databricks": "databricks",
    "trino": "trino",
    "redshift": "redshift",
}

# URL backend → the modules it needs (the SQLAlchemy dialect and the DB-API driver).
DRIVER_MODULES = {
    "duckdb": ("duckdb", "duckdb_engine"),
    "files": ("duckdb", "duckdb_engine"),
    "snowflake": ("snowflake.connector", "snowflake.sqlalchemy"),
    "bigquery": ("google.cloud.bigquery", "sqlalchemy_bigquery"),
    "databricks": ("databricks.sql", "databricks.sqlalchemy"),
    "trino": ("trino", "trino.sqlalchemy"),
    "redshift": ("sqlalchemy_redshift",),
}

# Backends whose catalog is read in bulk from INFORMATION_SCHEMA (core/warehouse/reflect.py).
BULK_REFLECTED = frozenset(EXTRAS)
DUCKDB_BACKENDS = frozenset({"duckdb", "files"})


class MissingDriver(ValueError):
    """The URL names an engine whose driver is not installed; the message names the extra."""


def require(backend: str) -> None:
    """Import the driver modules of `backend`, or raise MissingDriver naming the extra to install."""
    for module in DRIVER_MODULES.get(backend, ()):
        try:
            importlib.import_module(module)
        except ImportError:
            raise MissingDriver(
                f"the {backend} driver is not installed: pip install 'askbase[{EXTRAS[backend]}]'"
            ) from None
