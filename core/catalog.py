"""The catalog: what a database holds, reflected from the database and overlaid with a YAML file.

Reflection gives tables, columns, types, keys and row estimates; the YAML overlay adds what a
database cannot say about itself: descriptions, synonyms, value meanings, relationships it does
not declare, and design patterns (Lucy §3.1: many-to-many, lookup, star, snowflake).

Reflecting a large schema is slow, so catalogs are cached on disk keyed by a cheap schema
signature (one query per dialect) plus the overlay file's content; a changed schema is noticed on
the next load.
"""

from __future__ import annotations

import gc
import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields, replace
from itertools import starmap
from pathlib import Path
from typing import Any, Literal, TypeVar, cast, get_args

import sqlalchemy as sa

from core.yaml_text import load_yaml

log = logging.getLogger(__name__)
T = TypeVar("T")

ColumnKind = Literal["text", "integer", "number", "date", "datetime", "boolean", "binary", "other"]
Origin = Literal["declared", "catalog", "inferred"]
PatternKind = Literal[
    "many_to_many", "lookup", "star", "snowflake", "subtype", "role", "typed_fact", "parallel_path"
]

CACHE_VERSION = 3  # 2: views and their definitions; 3: columns as lists (a third of the bytes)


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    kind: ColumnKind = "other"
    nullable: bool = True
    primary_key: bool = False
    description: str = ""
    synonyms: tuple[str, ...] = ()
    values: Mapping[str, str] = field(default_factory=dict)  # stored value → what it means
    unit: str = ""  # unit of measure of its values ("€", "MHz"), for headers, sentences and charts
    label: str = ""  # a short header for people ("Credit"), when the name alone reads badly


@dataclass(frozen=True)
class Relationship:
    """A join condition `table.columns = ref_table.ref_columns` (ref side is the referenced key)."""

    table: str
    columns: tuple[str, ...]
    ref_table: str
    ref_columns: tuple[str, ...]
    origin: Origin = "declared"
    confidence: float = 1.0
    description: str = ""

    def __str__(self) -> str:
        left = ", ".join(f"{self.table}.{c}" for c in self.columns)
        right = ", ".join(f"{self.ref_table}.{c}" for c in self.ref_columns)
        return f"{left} → {right} ({self.origin})"


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...] = ()
    unique: tuple[tuple[str, ...], ...] = ()
    row_estimate: int | None = None
    description: str = ""
    synonyms: tuple[str, ...] = ()
    schema: str | None = None

    def column(self, name: str) -> Column | None:
        low = name.lower()
        return next((c for c in self.columns if c.name.lower() == low), None)


_COLUMN_NAMES = tuple(f.name for f in fields(Column))
_SYNONYMS = _COLUMN_NAMES.index("synonyms")  # a list in JSON, a tuple in the dataclass
_COLUMN_DEFAULTS = tuple(Column("", "").__dict__[name] for name in _COLUMN_NAMES)
_FIELDS = len(_COLUMN_NAMES)


def _column_row(column: Column) -> list[Any]:
    """A column as the cache keeps it: its fields in order, without the defaults at the end (a
    column of a reflected warehouse is name, type, kind, nullable, key: a fifth of the bytes).
    Read from the instance's dict, which holds the fields in order: getattr per field took two
    seconds for 200,000 columns."""
    row = list(column.__dict__.values())[:_FIELDS]  # anything memoised on it comes after
    n = len(row)
    while n > 2 and row[n - 1] == _COLUMN_DEFAULTS[n - 1]:
        n -= 1
    del row[n:]
    return row


_frozen_once = False


@contextmanager
def collection_paused(*, freeze: bool = True) -> Iterator[None]:
    """No garbage collection while a large catalog is made or written out; the first one made
    frozen (`freeze`).

    Why: 200,000 columns are no garbage, yet collecting while they were made took a third of a
    cache read (and tripled writing one out), and the first full collection after it, walking
    them all, another 0.4 s (`python -m core.bench reflect`). `gc.freeze` puts what is alive out
    of the collector's reach, as servers do once at start-up — but it takes everything alive in
    the process at that moment, and a cycle among those that dies later is never freed. So it is
    done once, for the first catalog a process loads (at start, with little else alive); a
    refresh later in a long-running process, or a catalog written out, only pauses collection.
    """
    global _frozen_once
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if freeze and not _frozen_once:
                _frozen_once = True
                gc.freeze()
            gc.enable()


def _columns_of(rows: list[list[Any]]) -> tuple[Column, ...]:
    """The columns of cached rows; rows that stop before the synonyms go straight to Column."""
    if not rows or max(map(len, rows)) <= _SYNONYMS:
        return tuple(starmap(Column, rows))
    return tuple(
        Column(*r[:_SYNONYMS], *((tuple(r[_SYNONYMS]),) if len(r) > _SYNONYMS else ()), *r[_SYNONYMS + 1 :])
        for r in rows
    )


_TABLE_FIELDS = [f for f in fields(Table) if f.name != "columns"]


def table_dict(t: Table) -> dict[str, Any]:
    """A table as the cache keeps it: one list per column in the dataclass's field order, the
    defaults at its end left out."""
    return {
        **{f.name: getattr(t, f.name) for f in _TABLE_FIELDS},
        "columns": [_column_row(c) for c in t.columns],
    }


def table_from_dict(t: Mapping[str, Any]) -> Table:
    """The table `table_dict` wrote."""
    return Table(
        **{
            **t,
            "columns": _columns_of(t["columns"]),
            "primary_key": tuple(t["primary_key"]),
            "unique": tuple(tuple(u) for u in t["unique"]),
            "synonyms": tuple(t["synonyms"]),
        }
    )


@dataclass(frozen=True)
class Pattern:
    """A design pattern (Lucy §3.1).

    many_to_many: root = bridge table, tables = the two side tables.
    lookup: root = the lookup table, tables = ().
    star / snowflake: root = the root (fact) table, tables = its inner tables.
    subtype: root = the parent table, tables = child tables sharing its key.
    role: root = the role table, tables = (the thing, the party playing a role in it), column = the
        role code column, codes = (code, meaning) pairs.
    typed_fact: root = the fact table, tables = its one-to-one subtype tables (one per type).
    parallel_path: root = the table with two ways to reach tables[0]: directly and through tables[1].
    `ignore`: an admin's correction — a detected pattern of this kind on this root is wrong.
    """

    kind: PatternKind
    root: str
    tables: tuple[str, ...] = ()
    origin: Literal["catalog", "detected"] = "catalog"
    description: str = ""
    column: str = ""
    codes: tuple[tuple[str, str], ...] = ()
    ignore: bool = False


@dataclass(frozen=True)
class DatabaseView:
    """A view of the database: not shown to the model, but its definition decides what it exposes.

    A view over a denied or masked column shows that column under the view's name; the access
    rules follow it there (core/view_rules.py) from this definition.
    """

    name: str
    columns: tuple[str, ...]  # in order
    definition: str  # its SELECT, as the database reports it ("" when it would not say)
    schema: str | None = None


@dataclass(frozen=True)
class Catalog:
    database: str
    dialect: str  # sqlglot dialect name
    tables: tuple[Table, ...]
    relationships: tuple[Relationship, ...] = ()  # declared foreign keys and catalog relationships
    patterns: tuple[Pattern, ...] = ()
    description: str = ""
    signature: str = ""
    examples: tuple[str, ...] = ()  # questions people ask of it (suggested prompts, App Home)
    views: tuple[DatabaseView, ...] = ()

    def table(self, name: str) -> Table | None:
        return self.memo("tables_by_name", lambda: {t.name.lower(): t for t in self.tables}).get(name.lower())

    def known_table(self, name: str) -> Table:
        """The table of a name taken from this catalog (a join graph's node): KeyError if not there."""
        found = self.table(name)
        if found is None:
            raise KeyError(name)
        return found

    def memo(self, key: Hashable, build: Callable[[], T]) -> T:
        """Something derived from this catalog (an index, a dictionary), built once per catalog.

        Catalogs are immutable, so what is derived from one never goes stale; a changed schema is
        a new Catalog object with an empty memo.
        """
        memo: dict[Hashable, Any] | None = self.__dict__.get("_memo")
        if memo is None:
            memo = {}
            object.__setattr__(self, "_memo", memo)
        if key not in memo:
            memo[key] = build()
        return cast(T, memo[key])  # one cache for every key: each key has one build, so one type

    def remembers(self, key: Hashable) -> bool:
        """Whether `memo` has built `key` already (a caller that counts the costly builds)."""
        memo: dict[Hashable, Any] | None = self.__dict__.get("_memo")
        return memo is not None and key in memo

    def relationships_of(self, table: str) -> list[Relationship]:
        low = table.lower()
        return [r for r in self.relationships if low in (r.table.lower(), r.ref_table.lower())]

    def patterns_of(self, kind: PatternKind) -> list[Pattern]:
        return [p for p in self.patterns if p.kind == kind]

    def to_dict(self) -> dict[str, Any]:
        """What the disk cache holds. Written out field by field: `dataclasses.asdict` deep-copies
        every value and took 10 s for a catalog of 10,000 tables × 20 columns."""
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        with collection_paused(freeze=False):  # its rows are no garbage while they are made
            data["tables"] = [table_dict(t) for t in self.tables]
        data["relationships"] = [asdict(r) for r in self.relationships]
        data["patterns"] = [asdict(p) for p in self.patterns]
        data["views"] = [asdict(v) for v in self.views]
        data["version"] = CACHE_VERSION
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Catalog:
        with collection_paused():  # 200,000 columns are no garbage while they are made
            return cls._from_dict(data)

    @classmethod
    def _from_dict(cls, data: dict[str, Any]) -> Catalog:
        tables = tuple(map(table_from_dict, data["tables"]))
        rels = tuple(
            Relationship(**{**r, "columns": tuple(r["columns"]), "ref_columns": tuple(r["ref_columns"])})
            for r in data["relationships"]
        )
        patterns = tuple(
            Pattern(
                **{
                    **p,
                    "tables": tuple(p["tables"]),
                    "codes": tuple(tuple(c) for c in p.get("codes") or ()),
                }
            )
            for p in data["patterns"]
        )
        return cls(
            database=data["database"],
            dialect=data["dialect"],
            tables=tables,
            relationships=rels,
            patterns=patterns,
            description=data.get("description", ""),
            signature=data.get("signature", ""),
            examples=tuple(data.get("examples") or ()),
            views=tuple(
                DatabaseView(**{**v, "columns": tuple(v["columns"])}) for v in data.get("views") or ()
            ),
        )


# ---------------------------------------------------------------------------------------------
# dialects and types

SQLGLOT_DIALECTS = {
    "sqlite": "sqlite",
    "postgresql": "postgres",
    "mysql": "mysql",
    "mariadb": "mysql",
    "mssql": "tsql",
    "oracle": "oracle",
    "snowflake": "snowflake",
    "bigquery": "bigquery",
    "trino": "trino",
    "databricks": "databricks",
    "duckdb": "duckdb",
    "redshift": "redshift",
}


def sqlglot_dialect(engine: sa.Engine) -> str:
    return SQLGLOT_DIALECTS.get(engine.dialect.name, engine.dialect.name)


def column_kind(type_: Any) -> ColumnKind:
    """Coarse kind of a SQLAlchemy type, used to decide what to index, aggregate or compare."""
    try:
        python_type = type_.python_type
    except (NotImplementedError, AttributeError):
        python_type = None
    name = str(type_).lower()
    if python_type is bool or "bool" in name:
        return "boolean"
    # MySQL/MariaDB store BOOLEAN as TINYINT(1); reflection only keeps the display width.
    if name.startswith("tinyint") and getattr(type_, "display_width", None) == 1:
        return "boolean"
    if python_type is int:
        return "integer"
    if python_type is float or (python_type is not None and python_type.__name__ == "Decimal"):
        return "number"
    if python_type is not None and python_type.__name__ == "datetime":
        return "datetime"
    if python_type is not None and python_type.__name__ == "date":
        return "date"
    if python_type is str:
        return "text"
    if python_type is bytes:
        return "binary"
    # SQLite accepts any type name; fall back on the name itself.
    if any(k in name for k in ("int",)):
        return "integer"
    if any(k in name for k in ("char", "text", "clob", "string", "enum")):
        return "text"
    if any(k in name for k in ("real", "floa", "doub", "num", "dec", "money")):
        return "number"
    if "timestamp" in name or "datetime" in name:
        return "datetime"
    if "date" in name:
        return "date"
    if "blob" in name or "binary" in name:
        return "binary"
    if name in ("", "null"):
        return "text"  # untyped SQLite columns hold text in practice
    return "other"


# ---------------------------------------------------------------------------------------------
# reflection


def schema_signature(engine: sa.Engine, schema: str | None = None) -> str:
    """A cheap fingerprint of the schema, to tell whether a cached catalog is still right."""
    name = engine.dialect.name
    rows: Sequence[Sequence[Any]]
    with engine.connect() as conn:
        if name == "sqlite":
            rows = conn.execute(sa.text("SELECT type, name, sql FROM sqlite_master ORDER BY name")).all()
        elif name == "postgresql":
            rows = conn.execute(
                sa.text(
                    "SELECT c.table_name, c.column_name, c.data_type, "
                    "(SELECT count(*) FROM information_schema.table_constraints t "
                    " WHERE t.table_schema = c.table_schema AND t.table_name = c.table_name) "
                    "FROM information_schema.columns c WHERE c.table_schema = :s "
                    "ORDER BY 1, c.ordinal_position"
                ),
                {"s": schema or "public"},
            ).all()
            rows = [*rows, *_view_definitions(conn, schema or "public")]
        elif name in ("mysql", "mariadb"):
            rows = conn.execute(
                sa.text(
                    "SELECT table_name, column_name, column_type, column_key FROM information_schema.columns "
                    "WHERE table_schema = COALESCE(:s, DATABASE()) ORDER BY 1, ordinal_position"
                ),
                {"s": schema},
            ).all()
            rows = [*rows, *_view_definitions(conn, schema)]
        else:
            inspector = sa.inspect(conn)
            rows = [(t,) for t in sorted(inspector.get_table_names(schema=schema))]
    digest = hashlib.sha256()
    for row in rows:
        digest.update(repr(tuple(row)).encode())
    return digest.hexdigest()[:16]


def _view_definitions(conn: sa.Connection, schema: str | None) -> Sequence[Sequence[Any]]:
    """Views' definitions, for the signature: a view redefined over other columns is a change."""
    where = "COALESCE(:s, DATABASE())" if conn.dialect.name in ("mysql", "mariadb") else ":s"
    query = f"SELECT table_name, view_definition FROM information_schema.views WHERE table_schema = {where} ORDER BY 1"
    return conn.execute(sa.text(query), {"s": schema}).all()


def row_estimates(engine: sa.Engine, tables: Iterable[str], schema: str | None = None) -> dict[str, int]:
    """Row counts from statistics where the engine keeps them, without scanning big tables."""
    name = engine.dialect.name
    tables = list(tables)
    out: dict[str, int] = {}
    with engine.connect() as conn:
        if name == "postgresql":
            rows = conn.execute(
                sa.text(
                    "SELECT c.relname, c.reltuples::bigint FROM pg_class c "
                    "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = :s AND c.relkind = 'r'"
                ),
                {"s": schema or "public"},
            ).all()
            out = {r[0]: max(int(r[1]), 0) for r in rows}
        elif name in ("mysql", "mariadb"):
            rows = conn.execute(
                sa.text(
                    "SELECT table_name, table_rows FROM information_schema.tables "
                    "WHERE table_schema = COALESCE(:s, DATABASE())"
                ),
                {"s": schema},
            ).all()
            out = {r[0]: int(r[1] or 0) for r in rows}
        elif name == "sqlite":
            for table in tables:
                quoted = '"' + table.replace('"', '""') + '"'
                # MAX(rowid) reads one b-tree edge: an estimate that ignores deleted rows. COUNT(*)
                # serves WITHOUT ROWID tables; a table dropped since it was listed gets no estimate.
                for count in ("MAX(rowid)", "COUNT(*)"):
                    try:
                        out[table] = int(conn.execute(sa.text(f"SELECT {count} FROM {quoted}")).scalar() or 0)
                        break
                    except sa.exc.DBAPIError:
                        continue
    return out


def reflect(engine: sa.Engine, database: str, schema: str | None = None) -> Catalog:
    """Tables, columns, types, keys and row estimates of a live database.

    A live database can change while it is read: a table listed first and dropped before its
    columns are read is left out (and logged) rather than failing the whole catalog, and a foreign
    key onto it is dropped with it by `resolve_relationships`.
    """
    inspector = sa.inspect(engine)
    names = sorted(inspector.get_table_names(schema=schema))
    estimates = row_estimates(engine, names, schema)
    tables: list[Table] = []
    relationships: list[Relationship] = []
    for name in names:
        try:
            table, keys = _reflect_table(inspector, name, schema, estimates.get(name))
        except sa.exc.NoSuchTableError:
            log.warning("table %s skipped: it was dropped while the catalog was read", name)
            continue
        tables.append(table)
        relationships.extend(keys)
    return Catalog(
        database=database,
        dialect=sqlglot_dialect(engine),
        tables=tuple(tables),
        relationships=tuple(resolve_relationships(tables, relationships)),
        views=tuple(_reflect_views(inspector, schema)),
    )


def _reflect_views(inspector: sa.Inspector, schema: str | None) -> list[DatabaseView]:
    """Every view with its columns and definition; a view that cannot be read is kept with no
    definition (the access rules then treat it as reading anything: core/view_rules.py)."""
    try:
        names = sorted(inspector.get_view_names(schema=schema))
    except (NotImplementedError, sa.exc.SQLAlchemyError) as exc:
        log.info("could not list views: %s", exc)
        return []
    views = []
    for name in names:
        try:
            columns = tuple(c["name"] for c in inspector.get_columns(name, schema=schema))
        except sa.exc.SQLAlchemyError as exc:  # dropped meanwhile, or a view over a dropped table
            log.warning("view %s skipped: %s", name, exc)
            continue
        try:
            definition = str(inspector.get_view_definition(name, schema=schema) or "")
        except (NotImplementedError, sa.exc.SQLAlchemyError) as exc:
            log.warning("could not read the definition of view %s: %s", name, exc)
            definition = ""
        views.append(DatabaseView(name=name, columns=columns, definition=definition, schema=schema))
    return views


def _reflect_table(
    inspector: sa.Inspector, name: str, schema: str | None, row_estimate: int | None
) -> tuple[Table, list[Relationship]]:
    """One table and the foreign keys declared on it, as the database reports them."""
    pk = tuple(inspector.get_pk_constraint(name, schema=schema).get("constrained_columns") or ())
    columns = tuple(
        Column(
            name=c["name"],
            type=str(c["type"]),
            kind=column_kind(c["type"]),
            nullable=bool(c.get("nullable", True)),
            primary_key=c["name"] in pk,
            description=c.get("comment") or "",
        )
        for c in inspector.get_columns(name, schema=schema)
    )
    try:
        unique = tuple(
            tuple(u["column_names"]) for u in inspector.get_unique_constraints(name, schema=schema)
        )
    except NotImplementedError:
        unique = ()
    try:
        comment = (inspector.get_table_comment(name, schema=schema) or {}).get("text") or ""
    except NotImplementedError:
        comment = ""
    table = Table(
        name=name,
        columns=columns,
        primary_key=pk,
        unique=unique,
        row_estimate=row_estimate,
        description=comment,
        schema=schema,
    )
    keys = [
        Relationship(
            table=name,
            columns=tuple(fk["constrained_columns"]),
            ref_table=fk["referred_table"],
            ref_columns=tuple(fk.get("referred_columns") or ()),
            origin="declared",
        )
        for fk in inspector.get_foreign_keys(name, schema=schema)
        if fk.get("referred_table") and fk.get("constrained_columns")
    ]
    return table, keys


def resolve_relationships(tables: list[Table], rels: list[Relationship]) -> list[Relationship]:
    """Fix what SQLite lets through: FKs naming a table in another case, or no referenced columns."""
    by_name = {t.name.lower(): t for t in tables}
    out: list[Relationship] = []
    seen: set[tuple[str, tuple[str, ...], str, tuple[str, ...]]] = set()
    for r in rels:
        ref = by_name.get(r.ref_table.lower())
        src = by_name.get(r.table.lower())
        if ref is None or src is None:
            missing = r.ref_table if ref is None else r.table
            log.warning("foreign key %s skipped: table %s is not in the database", r, missing)
            continue
        ref_cols = r.ref_columns or ref.primary_key
        if len(ref_cols) != len(r.columns):
            continue
        cols = tuple((src.column(c) or Column(c, "")).name for c in r.columns)
        ref_cols = tuple((ref.column(c) or Column(c, "")).name for c in ref_cols)
        if not all(src.column(c) for c in cols) or not all(ref.column(c) for c in ref_cols):
            continue
        key = (src.name, cols, ref.name, ref_cols)
        if key in seen:
            continue
        seen.add(key)
        out.append(replace(r, table=src.name, columns=cols, ref_table=ref.name, ref_columns=ref_cols))
    return out


# ---------------------------------------------------------------------------------------------
# YAML overlay


def _as_tuple(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value)


def _split_ref(ref: str) -> tuple[str, tuple[str, ...]]:
    """`t.a`, `t.a, b` or `t.a, t.b` → ("t", ("a", "b")); `t` alone means t's primary key."""
    table, _, cols = ref.partition(".")
    table = table.strip()
    out = []
    for col in (c.strip() for c in cols.split(",")):
        prefix, dot, rest = col.partition(".")
        if dot and prefix.strip().lower() == table.lower():
            col = rest.strip()
        if col:
            out.append(col)
    return table, tuple(out)


def overlay(catalog: Catalog, data: Mapping[str, Any]) -> Catalog:
    """Apply a YAML catalog (see config/demo_catalog.yaml for the format) to a reflected catalog.

    Unknown tables and columns are reported in the log and skipped, so a stale overlay never
    breaks a database that changed underneath it.
    """
    table_notes: Mapping[str, Any] = {k.lower(): v or {} for k, v in (data.get("tables") or {}).items()}
    tables = []
    for t in catalog.tables:
        note = table_notes.get(t.name.lower())
        if isinstance(note, str):
            note = {"description": note}
        if not note:
            tables.append(t)
            continue
        col_notes = {k.lower(): v or {} for k, v in (note.get("columns") or {}).items()}
        for unknown in set(col_notes) - {c.name.lower() for c in t.columns}:
            log.warning("catalog overlay: %s.%s is not in the database", t.name, unknown)
        columns = []
        for c in t.columns:
            cn = col_notes.get(c.name.lower())
            if isinstance(cn, str):
                cn = {"description": cn}
            if cn:
                values = {str(k): str(v) for k, v in (cn.get("values") or {}).items()}
                c = replace(
                    c,
                    description=cn.get("description", c.description) or "",
                    synonyms=_as_tuple(cn.get("synonyms")),
                    values=values,
                    unit=str(cn.get("unit") or c.unit),
                    label=str(cn.get("label") or c.label),
                )
            columns.append(c)
        tables.append(
            replace(
                t,
                columns=tuple(columns),
                description=note.get("description", t.description) or "",
                synonyms=_as_tuple(note.get("synonyms")),
            )
        )
    for unknown in set(table_notes) - {t.name.lower() for t in catalog.tables}:
        log.warning("catalog overlay: table %s is not in the database", unknown)

    by_name = {t.name.lower(): t for t in tables}
    rels = list(catalog.relationships)
    for r in data.get("relationships") or []:
        if not isinstance(r, Mapping) or not r.get("from") or not r.get("to"):
            log.warning("catalog overlay: relationship %r needs 'from' and 'to'", r)
            continue
        table, cols = _split_ref(str(r["from"]))
        ref_table, ref_cols = _split_ref(str(r["to"]))
        rel = Relationship(
            table=table,
            columns=cols,
            ref_table=ref_table,
            ref_columns=ref_cols,
            origin="catalog",
            description=r.get("description", ""),
        )
        if not resolve_relationships(tables, [rel]):
            log.warning("catalog overlay: relationship %s names unknown tables or columns", rel)
            continue
        rels.append(rel)
    rels = resolve_relationships(tables, rels)

    patterns = []
    for p in data.get("patterns") or []:
        kind = p.get("kind")
        if kind not in get_args(PatternKind):
            log.warning(
                "catalog overlay: unknown pattern kind %r (known: %s)", kind, ", ".join(get_args(PatternKind))
            )
            continue
        root = p.get("root") or p.get("bridge") or p.get("table") or ""
        codes = p.get("codes") or {}
        pattern = Pattern(
            kind=kind,
            root=(by_name[root.lower()].name if root.lower() in by_name else root),
            tables=tuple(
                by_name[x.lower()].name if x.lower() in by_name else x for x in _as_tuple(p.get("tables"))
            ),
            origin="catalog",
            description=p.get("description", ""),
            column=str(p.get("column") or ""),
            codes=tuple((str(k), str(v)) for k, v in codes.items()) if isinstance(codes, Mapping) else (),
            ignore=bool(p.get("ignore", False)),
        )
        missing = [x for x in (pattern.root, *pattern.tables) if x.lower() not in by_name]
        if missing:
            log.warning("catalog overlay: pattern %s names unknown tables %s", kind, missing)
            continue
        patterns.append(pattern)
    return replace(
        catalog,
        tables=tuple(tables),
        relationships=tuple(rels),
        patterns=tuple(patterns),
        description=data.get("description", catalog.description) or "",
        examples=tuple(str(q).strip() for q in data.get("examples") or () if str(q).strip()),
    )


# ---------------------------------------------------------------------------------------------
# loading with a cache


def load_catalog(
    engine: sa.Engine,
    database: str,
    *,
    overlay_path: str | Path | None = None,
    schema: str | None = None,
    cache_dir: str | Path | None = None,
    reflector: Callable[[], Catalog] | None = None,
    signer: Callable[[], str] | None = None,
    refresher: Refresher | None = None,
) -> Catalog:
    """The catalog of `engine`, from the disk cache when the schema and overlay are unchanged.

    `reflector` and `signer` replace `reflect` and `schema_signature` for engines read in bulk
    (core/warehouse/reflect.py). `refresher`, instead of `reflector`, is given the cache that no
    longer matches (or None) and returns the catalog with what it wants kept beside it in the
    cache for next time (core/warehouse/incremental.py: one file, read and written once).
    """
    overlay_text = Path(overlay_path).read_text() if overlay_path else ""
    schema_sign = signer() if signer is not None else schema_signature(engine, schema)
    signature = hashlib.sha256(f"{CACHE_VERSION}|{schema_sign}|{overlay_text}".encode()).hexdigest()[:16]
    cache_file = Path(cache_dir) / f"{safe_filename(database)}.catalog.json" if cache_dir else None
    stale: dict[str, Any] | None = None
    if cache_file and cache_file.is_file():
        try:
            with collection_paused():  # as in from_dict: the lists of a large catalog are no garbage
                data = json.loads(cache_file.read_text())
            if data.get("signature") == signature and data.get("version") == CACHE_VERSION:
                return Catalog.from_dict(data)
            log.info("schema of %s changed; reflecting again", database)
            stale = data
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("ignoring unreadable catalog cache %s: %s", cache_file, exc)
    kept: dict[str, Any] | None = None
    if refresher is not None:
        raw, kept = refresher(stale)
    else:
        raw = reflector() if reflector is not None else reflect(engine, database, schema)
    catalog = overlay(raw, load_yaml(overlay_text) or {}) if overlay_text else raw
    catalog = replace(catalog, signature=signature)
    if kept is not None:  # the tables as reflected where the overlay made new ones
        kept = {**kept, RAW_TABLES: _unlike(raw, catalog)}
    if cache_file:
        _write_cache(cache_file, catalog, kept)
    return catalog


Refresher = Callable[[Mapping[str, Any] | None], tuple[Catalog, dict[str, Any]]]
KEPT = "reflected"  # where a refresher's record is in the cache
RAW_TABLES = "raw_tables"  # ... and the tables the overlay changed, as reflected (by position)


def _unlike(raw: Catalog, catalog: Catalog) -> dict[str, dict[str, Any]]:
    """The reflected tables the overlay replaced (it keeps the others, and their order)."""
    return {
        str(i): table_dict(a)
        for i, (a, b) in enumerate(zip(raw.tables, catalog.tables, strict=True))
        if a is not b
    }


def reflected_catalog(stale: Mapping[str, Any]) -> Catalog:
    """The catalog as reflected, from a cache that kept its record: the cached (overlaid)
    catalog with the tables the overlay changed put back as they were read."""
    with collection_paused():
        catalog = Catalog.from_dict(dict(stale))
        raw = stale[KEPT][RAW_TABLES]
        if raw:
            tables = list(catalog.tables)
            for i, t in raw.items():
                tables[int(i)] = table_from_dict(t)
            catalog = replace(catalog, tables=tuple(tables))
    return catalog


def _write_cache(cache_file: Path, catalog: Catalog, kept: dict[str, Any] | None = None) -> None:
    """Write under a name of our own, then rename: processes loading at once never clash.

    The cache only saves time, so failing to write it (read-only disk) is logged, not raised.
    """
    tmp: Path | None = None
    try:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f".{cache_file.name}.", suffix=".tmp", dir=cache_file.parent)
        tmp = Path(name)
        data = catalog.to_dict()
        if kept is not None:
            data[KEPT] = kept
        with os.fdopen(fd, "w") as f:
            f.write(json.dumps(data))
        tmp.replace(cache_file)
    except OSError as exc:
        log.warning("could not write catalog cache %s: %s", cache_file, exc)
        if tmp is not None:
            tmp.unlink(missing_ok=True)


def safe_filename(name: str) -> str:
    """A database name as a file name, for the caches kept per database under var/."""
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name)[:80] or "db"
