"""The SQL guard: only one read-only, bounded query that the asker may see ever reaches a database.

Why a parsed-tree allowlist rather than keyword lists: comments, quoting, nesting and dialect quirks
defeat `startswith("SELECT")` and blocklists. We parse with sqlglot in the target database's dialect
and accept a statement only if *every* node of its tree is a known read-only construct and every
function is known to be side-effect free. What runs is regenerated from the checked tree (comments
dropped, LIMIT applied) — never the text we were given.

Decisions the executor, the access rules and the tests rely on:
- Exactly one statement; a trailing `;` is fine. Blank or comment-only input → DENY "is empty".
  Anything sqlglot cannot parse, or parses only as an opaque command, is denied.
- The statement must be a SELECT, a set operation (UNION/INTERSECT/EXCEPT) or PostgreSQL `TABLE t`.
  SHOW, EXPLAIN, DESCRIBE and top-level VALUES are denied: they answer no question about the data,
  SHOW leaks server settings, and EXPLAIN ANALYZE executes its statement.
- DML/DDL anywhere (data-modifying CTEs included), SELECT INTO, locking clauses (FOR UPDATE/SHARE,
  LOCK IN SHARE MODE), transaction and session commands are denied.
- Functions: the ones sqlglot models are allowed except those that reveal identity, server state or
  version (current_user, version(), database()...), touch sequences, files or other services; the
  ones it does not model only from `ALLOWED_FUNCTIONS` (ordinary analytics functions of SQLite,
  PostgreSQL and MySQL). `DANGEROUS_FUNCTIONS` names the known bad ones (sleep, files, dblink,
  query_to_xml, set_config, locks...) for a precise reason; `current_setting` is among them because
  it leaks configuration. Schema-qualified calls are denied: they can reach user-defined functions.
- System catalogs are denied: pg_catalog, information_schema, mysql, performance_schema, sys, any
  `pg_*`, `sqlite_*` or `pragma_*` table. The bot answers questions about business data, the schema
  it needs comes from its own catalog, and these views leak other users, sessions and settings.
- Other databases are denied: three-part names everywhere, `db.table` in MySQL, attached schemas in
  SQLite (only `main.` is accepted). `schema.table` is fine in PostgreSQL and the warehouse
  dialects (a BigQuery dataset, a Trino or Databricks schema).
- Warehouse dialects (`duckdb` — also for `files://` —, `snowflake`, `bigquery`, `databricks` or
  `spark`, `trino` or `presto`, `redshift`): parsed and regenerated in the engine's own dialect,
  with its own ways to reach outside the data denied — functions that read files or other
  systems (`read_*`, `parquet_*`, `iceberg_*`, `delta_*`, `glob` in DuckDB, `*_scan`, `query()`,
  `EXTERNAL_QUERY`, `read_files`, `reflect`, `http_request`), reveal the session (`getenv`,
  `CURRENT_ROLE()`, `secret()`) or another query's result (`RESULT_SCAN`), Snowflake's `SYSTEM$`
  functions and `@stage`s, DuckDB tables named like a file or URL (`FROM 'x.csv'`), Databricks'
  files by path (`csv.`/path``), BigQuery's `INFORMATION_SCHEMA`, `__TABLES__`, `@@` variables and
  wildcard tables, Trino's `system` catalog and `$` metadata tables, Redshift's `STL_`/`STV_`/
  `SVL_`/`SVV_`/`SYS_` tables, `duckdb_*` system functions. Their statements (`COPY`, `PUT`,
  `EXPORT DATA`, `ATTACH`, `INSTALL`, `LOAD`, `CALL`, `EXECUTE IMMEDIATE`, scripting, `SET
  SESSION`, `UNLOAD` ...) are not SELECTs. Names compare as each engine compares them (`names.py`).
- MySQL user variables (`@x`, `:=`) and system variables (`@@x`) are denied; so are PostgreSQL's bare
  `user`, `current_role`... (quote a column of that name).
- Executable comments (`/*! */`, `/*M! */`), optimizer hints (`/*+ */`, e.g. MySQL SET_VAR), comments
  inside comments and comments holding a `;` are denied. Strings are read both ways a server may
  read backslashes (MySQL NO_BACKSLASH_ESCAPES, PostgreSQL standard_conforming_strings); the other
  reading must be harmless too (not SQL at all, or a query that passes). Control characters are
  denied; invisible ones (zero-width, bidi, non-breaking spaces) are denied outside strings.
- A recursive CTE whose recursive step has no WHERE or JOIN ... ON on a column and no LIMIT can never
  stop and is denied. Other runaway queries (huge cross joins, WHERE clauses that are always true
  in effect) are the executor's statement timeout's job.
- LIMIT: the outermost query gets `LIMIT policy.limit` when it has none; a larger literal LIMIT or
  FETCH FIRST (or LIMIT ALL / NULL / negative) is lowered to it; a LIMIT expression keeps its value
  inside a wrapping query that is limited.
- Policy: `deny_tables` / `allowed_tables` match a table by name or `schema.name`; CTE names hide a
  table only where SQL scoping says they do, and only when the database certainly reads the two
  names as one (`names.py`: PostgreSQL folds unquoted names and keeps quoted ones, SQLite ignores
  ASCII case, MySQL's alias rules depend on a server setting, so both readings are checked).
- Columns: `deny_columns` ("table.column") denies any reference whose resolved lineage can reach
  the column (`lineage.py`): through a column list that renames the table's columns by position
  (`customers AS x(a, b, c, t)`: `x.t` is the fourth column, resolved with
  `policy.table_columns`; without it a renamed column could be any one, so it is denied), through
  aliases that differ only in case (each FROM item a qualifier may name is checked), through
  subqueries (resolved where they stand), unqualified or with an unknown qualifier; `*` or `t.*`
  over its table, whole-row references (`SELECT t FROM t`, `row_to_json(t)`, `(t).*`, and
  PostgreSQL's function notation `t.row_to_json` — any `t.name` that is not a column of t), NATURAL
  JOIN over it, USING it, and the row type of its table or of a denied table (`NULL::payroll`).
  Reasons name the rule, never data values.
- Masks: a reference whose lineage reaches a `mask_columns` column may stand only as an output
  column (bare or renamed, through derived tables, CTEs and UNION ALL) or inside COUNT; any other
  use — a filter, a join, a sort, a group, a function, a comparison by UNION — is denied with the
  column's name (`masks.py`): a predicate leaks bits of the value, and enough of them leak it all.
- Sizes: REPEAT, LPAD/RPAD, SPACE, ARRAY_FILL and GENERATE_SERIES in the output build their value
  whole inside one call, out of reach of the timeout and the caps: their size must be a plain
  number within `policy.value_cap` (`sizes.py`).
- MySQL/MariaDB: REGEXP is printed as the operator (MariaDB has no REGEXP_LIKE).

`python -m core.guard check --dialect D` reads one statement per line from stdin and prints one
`ALLOW` or `DENY <reason>` line per input line (a blank line → DENY "is empty"; a line that is
not UTF-8 → DENY); exit code 0, or 2 on bad usage such as an unknown dialect. `--deny-table`,
`--deny-column`, `--mask-column`, `--allow-table` and `--columns TABLE=COL,COL,...` set the policy. `python -m core.guard
bench` measures speed against a bare sqlglot baseline.

Modules, in the order check() uses them:

  dialects.py   the dialects the guard knows (DIALECTS, normalize_dialect, SCHEMA_DIALECTS)
  reading.py    checks on the raw text, then exactly one statement parsed (uses lexing.py)
  lexing.py     how each database reads quotes and comments: code, strings and comments apart
  tree.py       every node read-only, every function allowed, no system or foreign tables
  allowlist.py  the lists tree.py applies: node types, functions, system tables
  policy.py     GuardPolicy: denied and allowed tables, denied columns, the tables' columns
  lineage.py    which real table columns each column reference can read
  names.py      when two spellings name the same table, alias or CTE, per database
  columns.py    the column rules applied to that lineage; row types of guarded tables
  masks.py      the mask rules: a masked column is shown or counted, nothing else
  sizes.py      values built whole in one call: their size a plain, bounded number
  limit.py      the SQL that runs: regenerated from the tree, LIMIT applied
  verdict.py    Verdict, and Deny — how a check says no
  cli.py        python -m core.guard check | bench
"""

from __future__ import annotations

from sqlglot import exp

from core.guard.allowlist import ALLOWED_FUNCTIONS, DANGEROUS_FUNCTIONS
from core.guard.dialects import DIALECTS, UnknownDialectError, normalize_dialect
from core.guard.limit import limited_sql
from core.guard.policy import GuardPolicy, check_policy, real_tables, table_keys
from core.guard.reading import MAX_NODES, MAX_SQL_CHARS, parse_one
from core.guard.sizes import check_sizes
from core.guard.tree import check_tree
from core.guard.verdict import Deny, Verdict

__all__ = [
    "ALLOWED_FUNCTIONS",
    "DANGEROUS_FUNCTIONS",
    "DIALECTS",
    "MAX_NODES",
    "MAX_SQL_CHARS",
    "RULES_VERSION",
    "GuardPolicy",
    "UnknownDialectError",
    "Verdict",
    "check",
    "normalize_dialect",
]


# Raised when the guard starts refusing what it allowed before: cached answers and verified
# queries stamped with an older version are checked again before reuse (core/answer_cache.py).
RULES_VERSION = 3  # 2: masked columns may only be shown or counted; 3: warehouse dialects' denials

_DEFAULT_POLICY = GuardPolicy()  # frozen, so one instance can be every call's default


def check(sql: str, dialect: str, policy: GuardPolicy = _DEFAULT_POLICY) -> Verdict:
    """ALLOW one read-only query (returned rewritten with its LIMIT) or DENY it with a reason."""
    name = normalize_dialect(dialect)
    root: exp.Expr | None = None
    try:
        root = parse_one(sql, name)
        tables = real_tables(check_tree(root, name), name)
        check_policy(root, tables, policy, name)
        check_sizes(root, policy.value_cap)
        return Verdict(True, limited_sql(root, name, policy.limit), tables=table_keys(tables))
    except Deny as deny:
        return Verdict(False, "", deny.reason, _tables_of(root, name))
    except RecursionError:
        return Verdict(False, "", "is nested too deeply")


def _tables_of(root: exp.Expr | None, dialect: str) -> tuple[str, ...]:
    """The tables a denied statement named, for the audit log."""
    try:
        return table_keys(real_tables(list(root.find_all(exp.Table)), dialect)) if root else ()
    except RecursionError:
        return ()
