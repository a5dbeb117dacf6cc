"""The dialects the guard knows the rules of, and sqlglot's dialect objects for them.

SQLite, PostgreSQL and MySQL/MariaDB, and the warehouses of core/warehouse/: DuckDB (`files://`
folders are DuckDB too), Snowflake, BigQuery, Databricks (Spark SQL), Trino (Presto) and Redshift.
Each is parsed and regenerated in its own sqlglot dialect: a query checked in one dialect and run
in another could mean something else.
"""

from __future__ import annotations

import functools

from sqlglot.dialects.dialect import Dialect

# Dialect names we accept → sqlglot's name. The guard's dialect-specific rules are written for these.
DIALECTS = {
    "sqlite": "sqlite",
    "postgres": "postgres",
    "postgresql": "postgres",
    "mysql": "mysql",
    "mariadb": "mysql",
    "duckdb": "duckdb",
    "files": "duckdb",  # a folder of Parquet/CSV files, read by DuckDB
    "snowflake": "snowflake",
    "bigquery": "bigquery",
    "databricks": "databricks",
    "spark": "databricks",
    "trino": "trino",
    "presto": "trino",
    "redshift": "redshift",
}

# Dialects whose `schema.table` names a schema of the same database (MySQL's names a database).
SCHEMA_DIALECTS = frozenset(
    {"postgres", "duckdb", "snowflake", "bigquery", "databricks", "trino", "redshift"}
)


class UnknownDialectError(ValueError):
    """The guard only knows the rules of the dialects in DIALECTS."""


def normalize_dialect(dialect: str) -> str:
    """'PostgreSQL', 'mariadb' → the name the rules are written for ('postgres', 'mysql')."""
    try:
        return DIALECTS[dialect.strip().lower()]
    except KeyError:
        known = ", ".join(sorted(set(DIALECTS.values())))
        raise UnknownDialectError(f"unknown SQL dialect {dialect!r}; the guard knows {known}") from None


@functools.cache
def sqlglot_dialect(name: str) -> Dialect:
    """One Dialect object per name, reused for every statement."""
    return Dialect.get_or_raise(name)
