"""Reflection in bulk: a warehouse's tables, columns, keys and views in a handful of queries.

Why not SQLAlchemy's inspector: it asks table by table (columns, then keys, then comments), and a
warehouse answers each call in tens of milliseconds at best — 10,000 tables took minutes, and
some dialects' inspectors do not work at all on the SQLAlchemy this project uses (duckdb_engine's
reads pg_catalog tables DuckDB does not have). Here, whatever the number of tables:

- one query for every column of every reflected schema (INFORMATION_SCHEMA.COLUMNS; BigQuery: a
  UNION ALL of each dataset's), with the table type joined in (table or view);
- one query for the keys (primary, unique, foreign) — DuckDB's `duckdb_constraints()`,
  INFORMATION_SCHEMA's constraint views elsewhere, none on Trino; Snowflake keeps no key columns
  in INFORMATION_SCHEMA, so there it is `SHOW PRIMARY KEYS` / `SHOW UNIQUE KEYS` / `SHOW IMPORTED
  KEYS` per schema (three queries a schema, whatever its number of tables);
- one for view definitions and one for row estimates where the engine keeps them.

Several schemas (datasets) per database: `schemas` names them; a table keeps its schema
(`Table.schema`), shown to the model and in answers as `schema.table` when there are several
(core/schema_text.py). A table of a later schema whose name an earlier schema already has is left
out with a warning: the catalog and the guard look tables up by name.

`signature` is one aggregate row per database (a hash of every column's schema, table, name and
type, computed by the engine where it can), so checking a cached catalog costs one small query.
"""

from __future__ import annotations

import functools
import hashlib
import logging
from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from core.catalog import (
    Catalog,
    Column,
    ColumnKind,
    DatabaseView,
    Relationship,
    Table,
    collection_paused,
    resolve_relationships,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Key:
    schema: str
    table: str
    kind: str  # PRIMARY KEY | UNIQUE | FOREIGN KEY
    name: str
    columns: tuple[str, ...]
    ref_table: str = ""
    ref_columns: tuple[str, ...] = ()


def default_schemas(engine: sa.Engine, configured: Sequence[str]) -> list[str]:
    if configured:
        return list(configured)
    name = engine.dialect.name
    if name == "duckdb":
        return ["main"]
    dataset: object = getattr(engine.dialect, "dataset_id", None)
    if name == "bigquery" and dataset:
        return [str(dataset)]  # the dataset of the URL
    with engine.connect() as conn:
        schema = conn.dialect.default_schema_name
    if schema:
        return [schema]
    raise ValueError(f"name the schemas to read for this {name} database (`schemas:` in its settings)")


def _in(values: Iterable[str]) -> str:
    return ", ".join("'" + v.replace("'", "''") + "'" for v in values)


def _only(column: str, tables: Collection[str] | None, where: str = "AND") -> str:
    """A filter to the named tables (an incremental refresh re-reads only those); "" for all."""
    return "" if tables is None else f" {where} {column} IN ({_in(sorted(tables)) or 'NULL'})"


def _columns_sql(dialect: str, schemas: Sequence[str], tables: Collection[str] | None = None) -> str:
    if dialect == "bigquery":
        return " UNION ALL ".join(
            f"SELECT c.table_schema, c.table_name, c.column_name, c.data_type, c.is_nullable, "
            f"c.ordinal_position, t.table_type FROM `{s}`.INFORMATION_SCHEMA.COLUMNS c "
            f"JOIN `{s}`.INFORMATION_SCHEMA.TABLES t ON t.table_name = c.table_name"
            + _only("c.table_name", tables, "WHERE")
            for s in schemas
        )
    upper = dialect == "snowflake"  # Snowflake keeps unquoted names in upper case
    wanted = _in(s.upper() if upper else s for s in schemas)
    return (
        "SELECT c.table_schema, c.table_name, c.column_name, c.data_type, c.is_nullable, "
        "c.ordinal_position, t.table_type, c.numeric_precision, c.numeric_scale "
        "FROM information_schema.columns c "
        "JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name "
        f"WHERE c.table_schema IN ({wanted}){_only('c.table_name', tables)} ORDER BY 1, 2, 6"
    )


ColumnRow = tuple[str, str, str, str, bool, str]  # schema, table, column, type, nullable, table type


def read_columns(
    conn: sa.Connection, schemas: Sequence[str], tables: Collection[str] | None = None
) -> list[ColumnRow]:
    """(schema, table, column, type, nullable, table type) for every column (of `tables` when
    named), in table order."""
    rows = conn.exec_driver_sql(_columns_sql(conn.dialect.name, schemas, tables)).all()
    out = [
        (
            str(r[0]),
            str(r[1]),
            str(r[2]),
            _type(r),
            str(r[4]).upper() in ("YES", "TRUE", "Y", "1"),
            str(r[6]),
        )
        for r in rows
    ]
    if conn.dialect.name == "bigquery":  # a UNION ALL has no order of its own
        order = {(r[0], r[1], r[2]): int(r[5]) for r in rows}
        out.sort(key=lambda r: (r[0], r[1], order[(r[0], r[1], r[2])]))
    return out


def _type(row: Sequence[Any]) -> str:
    """The column's type as people read it: NUMBER(38,0) where the engine gives precision apart."""
    name = str(row[3])
    numeric = name.upper() in ("NUMBER", "DECIMAL", "NUMERIC")
    if len(row) > 8 and row[8] is not None and numeric and "(" not in name:
        return f"{name}({row[7]},{row[8]})"
    return name


def read_keys(
    conn: sa.Connection, schemas: Sequence[str], tables: Collection[str] | None = None
) -> list[Key]:
    """The keys of `schemas` (declared on `tables` when named: the caller filters the rest)."""
    dialect = conn.dialect.name
    try:
        if dialect == "duckdb":
            return _duckdb_keys(conn, schemas, tables)
        if dialect == "snowflake":
            return _snowflake_keys(conn, schemas)
        if dialect == "trino":
            return []  # Trino's connectors report no keys
        if dialect == "bigquery":
            return _grouped(
                conn.exec_driver_sql(
                    " UNION ALL ".join(_ansi_keys_sql(f"`{s}`.INFORMATION_SCHEMA", [s]) for s in schemas)
                ).all()
            )
        return _grouped(conn.exec_driver_sql(_ansi_keys_sql("information_schema", schemas, tables)).all())
    except sa.exc.DBAPIError as exc:  # an engine without these views: no declared keys, joins inferred
        log.info("keys could not be read (%s); relationships will be inferred", str(exc).splitlines()[0])
        conn.rollback()
        return []


def _duckdb_keys(conn: sa.Connection, schemas: Sequence[str], tables: Collection[str] | None) -> list[Key]:
    rows = conn.exec_driver_sql(
        "SELECT schema_name, table_name, constraint_type, constraint_name, constraint_column_names, "
        "referenced_table, referenced_column_names FROM duckdb_constraints() "
        "WHERE database_name = current_database() "
        f"AND schema_name IN ({_in(schemas)}) AND constraint_type IN ('PRIMARY KEY', 'UNIQUE', 'FOREIGN KEY')"
        + _only("table_name", tables)
    ).all()
    return [
        Key(
            schema=r[0],
            table=r[1],
            kind=r[2],
            name=r[3],
            columns=tuple(r[4] or ()),
            ref_table=r[5] or "",
            ref_columns=tuple(r[6] or ()),
        )
        for r in rows
    ]


def _snowflake_keys(conn: sa.Connection, schemas: Sequence[str]) -> list[Key]:
    """Snowflake keeps key columns only in SHOW output: one SHOW per kind and schema."""
    keys: list[Key] = []
    for schema in schemas:
        where = f"IN SCHEMA {_ident(schema)}"
        for kind, show in (("PRIMARY KEY", "SHOW PRIMARY KEYS"), ("UNIQUE", "SHOW UNIQUE KEYS")):
            parts: dict[tuple[str, str, str], list[tuple[int, str]]] = defaultdict(list)
            for row in conn.exec_driver_sql(f"{show} {where}").mappings():
                r = {k.lower(): v for k, v in row.items()}
                key = (str(r["schema_name"]), str(r["table_name"]), str(r.get("constraint_name") or ""))
                parts[key].append((int(r.get("key_sequence") or 0), str(r["column_name"])))
            keys += [
                Key(s, t, kind, n, tuple(c for _, c in sorted(cols))) for (s, t, n), cols in parts.items()
            ]
        imported: dict[tuple[str, str, str], list[tuple[int, str, str, str]]] = defaultdict(list)
        for row in conn.exec_driver_sql(f"SHOW IMPORTED KEYS {where}").mappings():
            r = {k.lower(): v for k, v in row.items()}
            if not r.get("pk_table_name") or not r.get("fk_table_name"):
                continue
            key = (str(r["fk_schema_name"]), str(r["fk_table_name"]), str(r.get("fk_name") or ""))
            imported[key].append(
                (
                    int(r.get("key_sequence") or 0),
                    str(r["fk_column_name"]),
                    str(r["pk_table_name"]),
                    str(r["pk_column_name"]),
                )
            )
        for (s, t, n), cols in imported.items():
            ordered = sorted(cols)
            keys.append(
                Key(
                    s,
                    t,
                    "FOREIGN KEY",
                    n,
                    tuple(c[1] for c in ordered),
                    ordered[0][2],
                    tuple(c[3] for c in ordered),
                )
            )
    return keys


def _ident(name: str) -> str:
    """A schema name as Snowflake reads it: bare when it is a plain word, else quoted as given."""
    if name.replace("_", "a").isalnum() and not name[0].isdigit():
        return name
    return '"' + name.replace('"', '""') + '"'


def _ansi_keys_sql(where: str, schemas: Sequence[str], tables: Collection[str] | None = None) -> str:
    return (
        "SELECT tc.table_schema, tc.table_name, tc.constraint_type, tc.constraint_name, kcu.column_name, "
        "kcu.ordinal_position, rk.table_name, rk.column_name "
        f"FROM {where}.table_constraints tc "
        f"JOIN {where}.key_column_usage kcu ON kcu.constraint_name = tc.constraint_name "
        "AND kcu.constraint_schema = tc.constraint_schema AND kcu.table_name = tc.table_name "
        f"LEFT JOIN {where}.referential_constraints rc ON rc.constraint_name = tc.constraint_name "
        "AND rc.constraint_schema = tc.constraint_schema "
        f"LEFT JOIN {where}.key_column_usage rk ON rk.constraint_name = rc.unique_constraint_name "
        "AND rk.constraint_schema = rc.unique_constraint_schema "
        "AND rk.ordinal_position = kcu.position_in_unique_constraint "
        f"WHERE tc.table_schema IN ({_in(schemas)}) "
        "AND tc.constraint_type IN ('PRIMARY KEY', 'UNIQUE', 'FOREIGN KEY')" + _only("tc.table_name", tables)
    )


def _grouped(rows: Sequence[Sequence[Any]]) -> list[Key]:
    parts: dict[tuple[str, str, str, str], list[tuple[int, str, str, str]]] = defaultdict(list)
    for r in rows:
        parts[(r[0], r[1], r[2], r[3])].append((int(r[5] or 0), r[4], r[6] or "", r[7] or ""))
    keys = []
    for (schema, table, kind, name), cols in parts.items():
        ordered = sorted(cols)
        keys.append(
            Key(
                schema,
                table,
                kind,
                name,
                tuple(c[1] for c in ordered),
                ordered[0][2] if kind == "FOREIGN KEY" else "",
                tuple(c[3] for c in ordered) if kind == "FOREIGN KEY" else (),
            )
        )
    return keys


def read_views(
    conn: sa.Connection, schemas: Sequence[str], tables: Collection[str] | None = None
) -> dict[tuple[str, str], str]:
    """(schema, view) → its SELECT, where the engine says."""
    dialect = conn.dialect.name
    try:
        if dialect == "duckdb":
            rows = conn.exec_driver_sql(
                "SELECT schema_name, view_name, sql FROM duckdb_views() WHERE NOT internal "
                f"AND database_name = current_database() AND schema_name IN ({_in(schemas)})"
                + _only("view_name", tables)
            ).all()
        elif dialect == "bigquery":
            rows = conn.exec_driver_sql(
                " UNION ALL ".join(
                    f"SELECT table_schema, table_name, view_definition FROM `{s}`.INFORMATION_SCHEMA.VIEWS"
                    for s in schemas
                )
            ).all()
        else:
            wanted = _in(s.upper() if dialect == "snowflake" else s for s in schemas)
            rows = conn.exec_driver_sql(
                "SELECT table_schema, table_name, view_definition FROM information_schema.views "
                f"WHERE table_schema IN ({wanted})" + _only("table_name", tables)
            ).all()
    except sa.exc.DBAPIError as exc:
        log.info("view definitions could not be read: %s", str(exc).splitlines()[0])
        conn.rollback()
        return {}
    return {(str(r[0]), str(r[1])): _view_select(str(r[2] or "")) for r in rows}


def _view_select(definition: str) -> str:
    """DuckDB and Snowflake give the whole CREATE VIEW; the access rules want its SELECT."""
    text = definition.strip().rstrip(";")
    upper = text.upper()
    if upper.startswith("CREATE"):
        at = upper.find(" AS ")
        return text[at + 4 :].strip() if at >= 0 else ""
    return text


def read_estimates(
    conn: sa.Connection, schemas: Sequence[str], tables: Collection[str] | None = None
) -> dict[tuple[str, str], int]:
    dialect = conn.dialect.name
    try:
        if dialect == "duckdb":
            rows = conn.exec_driver_sql(
                "SELECT schema_name, table_name, estimated_size FROM duckdb_tables() "
                f"WHERE database_name = current_database() AND schema_name IN ({_in(schemas)})"
                + _only("table_name", tables)
            ).all()
        elif dialect == "snowflake":
            rows = conn.exec_driver_sql(
                "SELECT table_schema, table_name, row_count FROM information_schema.tables "
                f"WHERE table_schema IN ({_in(s.upper() for s in schemas)})" + _only("table_name", tables)
            ).all()
        elif dialect == "bigquery":
            rows = conn.exec_driver_sql(
                " UNION ALL ".join(
                    f"SELECT dataset_id, table_id, row_count FROM `{s}`.__TABLES__" for s in schemas
                )
            ).all()
        else:
            return {}
    except sa.exc.DBAPIError as exc:
        log.info("row estimates could not be read: %s", str(exc).splitlines()[0])
        conn.rollback()
        return {}
    return {(str(r[0]), str(r[1])): int(r[2] or 0) for r in rows}


@functools.cache  # a schema has few distinct type names and many columns
def kind_of(type_name: str) -> ColumnKind:
    """A column's kind from the type name INFORMATION_SCHEMA gives (NUMBER(38,0) is an integer)."""
    t = type_name.upper().strip()
    if t.startswith(("BOOL",)):
        return "boolean"
    if t.startswith(("NUMBER", "DECIMAL", "NUMERIC")):
        scale = t.partition(",")[2].rstrip(")").strip()
        return "integer" if scale in ("0",) else "number"
    if any(
        t.startswith(p)
        for p in (
            "INT",
            "BIGINT",
            "SMALLINT",
            "TINYINT",
            "HUGEINT",
            "UBIGINT",
            "UINTEGER",
            "BYTEINT",
            "LONG",
            "SHORT",
        )
    ):
        return "integer"
    if any(t.startswith(p) for p in ("FLOAT", "DOUBLE", "REAL", "BIGNUMERIC")):
        return "number"
    if t.startswith(("TIMESTAMP", "DATETIME")):
        return "datetime"
    if t.startswith("DATE"):
        return "date"
    if any(t.startswith(p) for p in ("VARCHAR", "CHAR", "TEXT", "STRING", "NVARCHAR", "CHARACTER")):
        return "text"
    if any(t.startswith(p) for p in ("BLOB", "BINARY", "VARBINARY", "BYTES", "BYTEA")):
        return "binary"
    return "other"


def bulk_reflect(
    engine: sa.Engine,
    database: str,
    schemas: Sequence[str],
    dialect: str,
    qualify: bool,
    views_are_tables: bool = False,
) -> Catalog:
    """The catalog of `schemas`, read in bulk. `qualify`: tables keep their schema (several schemas,
    or one named in the settings) so the SQL names it. `views_are_tables`: a files:// database,
    whose views are its tables (one per file)."""
    with engine.connect() as conn:
        columns = read_columns(conn, schemas)
        keys = read_keys(conn, schemas)
        definitions = read_views(conn, schemas)
        estimates = read_estimates(conn, schemas)
        conn.rollback()
    with collection_paused():  # 200,000 columns are no garbage: no collection while they are made
        return assemble(columns, keys, definitions, estimates, database, dialect, qualify, views_are_tables)


def assemble(
    columns: Sequence[ColumnRow],
    keys: Sequence[Key],
    definitions: dict[tuple[str, str], str],
    estimates: dict[tuple[str, str], int],
    database: str,
    dialect: str,
    qualify: bool,
    views_are_tables: bool,
) -> Catalog:
    """The catalog from what the engine said (read in bulk, or kept from the last reflection for
    the tables that did not change: core/warehouse/incremental.py)."""
    by_table: dict[tuple[str, str], list[tuple[str, str, bool]]] = defaultdict(list)
    kinds: dict[tuple[str, str], str] = {}
    for schema, table, column, type_name, nullable, table_type in columns:
        by_table[(schema, table)].append((column, type_name, nullable))
        kinds[(schema, table)] = table_type
    pks, uniques, foreign = _split_keys(keys)
    tables: list[Table] = []
    views: list[DatabaseView] = []
    seen: dict[str, str] = {}
    for (schema, name), cols in by_table.items():
        if name.lower() in seen:
            log.warning(
                "%s.%s left out: schema %s has a table of that name", schema, name, seen[name.lower()]
            )
            continue
        seen[name.lower()] = schema
        shown_schema = schema if qualify else None
        if "VIEW" in kinds[(schema, name)].upper() and not views_are_tables:
            views.append(
                DatabaseView(
                    name=name,
                    columns=tuple(c for c, _, _ in cols),
                    definition=definitions.get((schema, name), ""),
                    schema=shown_schema,
                )
            )
            continue
        pk = pks.get((schema, name), ())
        tables.append(
            Table(
                name=name,
                columns=tuple(
                    Column(name=c, type=t, kind=kind_of(t), nullable=n, primary_key=c in pk)
                    for c, t, n in cols
                ),
                primary_key=pk,
                unique=tuple(uniques.get((schema, name), ())),
                row_estimate=estimates.get((schema, name)),
                schema=shown_schema,
            )
        )
    for (schema, name), definition in sorted(definitions.items()):
        # an engine that lists a view's definition but not its columns (fakesnow): kept, with no
        # columns, so the access rules still judge what it shows from its definition
        if (schema, name) not in by_table and name.lower() not in seen and not views_are_tables:
            views.append(
                DatabaseView(name=name, columns=(), definition=definition, schema=schema if qualify else None)
            )
    return finish(database, dialect, tables, views, foreign)


def finish(
    database: str, dialect: str, tables: Sequence[Table], views: Sequence[DatabaseView], keys: Iterable[Key]
) -> Catalog:
    """The catalog of these tables and views, related by the foreign keys among `keys`: shared
    by a full reflection and an incremental one that keeps most tables as they were."""
    relationships = [
        Relationship(table=k.table, columns=k.columns, ref_table=k.ref_table, ref_columns=k.ref_columns)
        for k in keys
        if k.kind not in ("PRIMARY KEY", "UNIQUE") and k.ref_table and k.columns
    ]
    return Catalog(
        database=database,
        dialect=dialect,
        tables=tuple(tables),
        relationships=tuple(resolve_relationships(list(tables), relationships)),
        views=tuple(views),
    )


def _split_keys(
    keys: Sequence[Key],
) -> tuple[dict[tuple[str, str], tuple[str, ...]], dict[tuple[str, str], list[tuple[str, ...]]], list[Key]]:
    """Primary keys and unique keys by (schema, table), and the foreign keys."""
    pks: dict[tuple[str, str], tuple[str, ...]] = {}
    uniques: dict[tuple[str, str], list[tuple[str, ...]]] = defaultdict(list)
    foreign: list[Key] = []
    for key in keys:
        where = (key.schema, key.table)
        if key.kind == "PRIMARY KEY":
            pks[where] = key.columns
        elif key.kind == "UNIQUE":
            uniques[where].append(key.columns)
        else:
            foreign.append(key)
    return pks, uniques, foreign


def signature(engine: sa.Engine, schemas: Sequence[str]) -> str:
    """A cheap fingerprint of the schemas: one aggregate row where the engine can hash for us."""
    dialect = engine.dialect.name
    with engine.connect() as conn:
        if dialect == "duckdb":  # each table's CREATE statement holds its columns and keys
            row = conn.exec_driver_sql(
                "SELECT count(*), sum(hash(schema_name, table_name, sql)), "
                "(SELECT sum(hash(schema_name, view_name, sql)) FROM duckdb_views() WHERE NOT internal) "
                "FROM duckdb_tables() WHERE database_name = current_database() "
                f"AND schema_name IN ({_in(schemas)})"
            ).one()
            rows: Sequence[Sequence[Any]] = [tuple(row)]
        else:
            rows = read_columns(conn, schemas)
        conn.rollback()
    digest = hashlib.sha256()
    for r in rows:
        digest.update(repr(tuple(r)).encode())
    return digest.hexdigest()[:16]
