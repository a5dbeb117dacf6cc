"""How each database compares names: when two spellings of a table, alias or CTE name the same thing.

Why this matters: a rule keyed on a lower-cased alias lets `c` and `"C"` overwrite each other,
and PostgreSQL reads them as two aliases — so `c.tax_id` could be checked against the wrong table.
Each database has its own rules:

- PostgreSQL folds unquoted names to lower case (ASCII letters only) and keeps quoted names as
  written: `c`, `C` and `"c"` are one name, `"C"` is another.
- SQLite compares names without regard to ASCII case, quoted or not; with two FROM items whose
  aliases differ only in case it takes the one that has the column.
- MySQL/MariaDB compare table aliases as written on Linux (`lower_case_table_names = 0`) and
  without case elsewhere (1, 2), a server setting the guard cannot see; CTE names (MariaDB) and
  column names never depend on case.
- Snowflake folds unquoted names to upper case and keeps quoted ones; DuckDB, Trino and Databricks
  ignore case, quoted or not; Redshift folds like PostgreSQL and also ignores quoted case unless
  `enable_case_sensitive_identifier` is on, and BigQuery keeps table names' case and ignores
  aliases' — both read both ways, like MySQL.

Two answers per pair of names, so every use can pick its safe side: `same` when the database
certainly reads them as one name (then a CTE hides a table, a match ends the search for a
qualifier), `may_be_same` when it might under some setting (then every such FROM item is checked).
Column names are compared without case everywhere, which only ever checks more.
"""

from __future__ import annotations

from sqlglot import exp

# DuckDB, Trino and Databricks compare names without case, quoted or not.
_CASELESS = frozenset({"sqlite", "duckdb", "trino", "databricks"})
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def key(name: exp.Identifier, dialect: str) -> str:
    """The name as the database certainly looks it up."""
    text = name.this if isinstance(name.this, str) else name.name
    if dialect in ("postgres", "redshift"):  # Redshift may keep quoted case (a setting): the strict reading
        return text if name.quoted else text.translate(_ASCII_LOWER)
    if dialect == "snowflake":  # unquoted names are upper case there
        return text if name.quoted else text.upper()
    if dialect in _CASELESS:
        return text.lower()
    return text  # mysql, bigquery: as written (the strict reading)


def same(a: exp.Identifier, b: exp.Identifier, dialect: str) -> bool:
    """The database reads `a` and `b` as one name, whatever its settings."""
    return key(a, dialect) == key(b, dialect)


def may_be_same(a: exp.Identifier, b: exp.Identifier, dialect: str) -> bool:
    """The database reads `a` and `b` as one name under some setting (MySQL's case rules)."""
    return same(a, b, dialect) or (
        dialect in ("mysql", "bigquery", "redshift") and a.name.lower() == b.name.lower()
    )


def column_key(name: str) -> str:
    """Column names compared for the rules: without case, so a rule can only match more."""
    return name.lower()
