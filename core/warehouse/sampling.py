"""Reading a warehouse column's values for the value index at a bounded cost.

Why: on a warehouse a `SELECT DISTINCT col FROM t` scans (and, on BigQuery, bills) the whole
column, and a LIMIT does not make BigQuery read less. So the value index (core/values/build.py)
reads each column of a warehouse from a sample, with the engine's own sampling where it has one:

- BigQuery `TABLESAMPLE SYSTEM (p PERCENT)`: reads (and bills) about p% of the table's blocks;
- Snowflake `SAMPLE (n ROWS)`, Databricks `TABLESAMPLE (n ROWS)`, Trino `TABLESAMPLE BERNOULLI (p)`,
  DuckDB `TABLESAMPLE RESERVOIR (n ROWS)` (a DuckDB file or a lake of Parquet files can be as
  large as a warehouse table; the reservoir bounds what is kept, not what is scanned);
- Redshift has no sampling clause: a LIMIT inside a subquery.

and at most `warehouse.max_index_columns` columns per build (the rest are skipped, saying why),
so one build costs a bounded number of sampled scans; BigQuery's jobs are billed at most
`warehouse.max_bytes_billed` each besides (core/warehouse/sessions.py). The index is refreshed on
the schedule of `python -m bot index refresh` (or the worker), re-reading only changed tables.
"""

from __future__ import annotations

SAMPLED = frozenset({"bigquery", "snowflake", "databricks", "trino", "redshift", "duckdb"})


def sampled_distinct(dialect: str, table: str, column: str, rows: int, estimate: int | None) -> str:
    """SQL for the distinct non-NULL values of `column` in a sample of about `rows` rows of `table`
    (both already quoted for the dialect)."""
    percent = 100.0 if not estimate else max(0.001, min(100.0, 100.0 * rows / estimate))
    if dialect == "bigquery":
        source = f"{table} TABLESAMPLE SYSTEM ({percent:.3f} PERCENT)"
    elif dialect == "snowflake":
        source = f"{table} SAMPLE ({rows} ROWS)"
    elif dialect == "databricks":
        source = f"{table} TABLESAMPLE ({rows} ROWS)"
    elif dialect == "duckdb":
        source = f"{table} TABLESAMPLE RESERVOIR ({rows} ROWS)"
    elif dialect == "trino":
        source = f"{table} TABLESAMPLE BERNOULLI ({percent:.3f})"
    else:  # redshift, and anything without a sampling clause
        source = f"(SELECT {column} FROM {table} LIMIT {rows}) AS sampled"
    return f"SELECT DISTINCT {column} FROM {source} WHERE {column} IS NOT NULL LIMIT {rows}"
