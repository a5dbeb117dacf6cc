"""The schema as an SQL writer reads it: CREATE TABLE statements with keys and a few example rows.

One rendering for two readers, so the comparison between them measures what differs and
nothing else:

- the plain-prompt baseline (core/bench/plain.py, `PLAIN`): what a competent engineer pastes
  without Askbase — the database's own CREATE TABLE with the primary and foreign keys it
  declares, and 3 example rows per table (Rajkumar et al. 2022, "CreateTable + SelectRow");
- Askbase's SQL writer (core/generate.py, `ASKBASE`): the same statements from the same example
  rows, plus what Askbase knows that the database does not say — code meanings, relationships
  from the catalog file and inferred joins (as REFERENCES), table descriptions, and the column
  descriptions the question touches (CHESS retrieves context rather than pasting all of it) —
  laid out so the knowledge costs no extra tokens: a column's example values sit on its own line
  as a comment (no header row repeating the names, none for keys, whose numbers say nothing,
  two distinct values each), and long cells and descriptions are cut short.

Denied tables and columns are neither described nor sampled; example rows go through the guard
and the read-only executor, so masking applies to them as to any answer.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from sqlglot import exp

from core.access import DataRules
from core.catalog import Catalog, Column, Table
from core.database import Database
from core.execute import Limits, QueryError, execute
from core.joins.identifiers import identifier, table_expr
from core.run import check_for
from core.settings import EngineSettings
from core.values.columns import looks_like_id_name

log = logging.getLogger(__name__)

CHARS_PER_TOKEN = 4  # what budgets assume of a tokenizer: English and SQL run 3.5–4.5 characters a token
MAX_MEANINGS = 8  # stored codes and their meanings shown in a column's comment
EXAMPLES = 2  # distinct example values per column, from the sampled rows
DESCRIPTION_CHARS = 70  # of a column's description (its first clause when longer)
TABLE_DESCRIPTION_CHARS = 50  # of a table's: what it holds, not everything it records
MEANING_CHARS = 30  # of a stored code's meaning
EXAMPLES_NOTE = "-- A comment of values alone lists example values of its column."


@dataclass(frozen=True)
class SchemaStyle:
    sample_rows: int = 3
    cell_chars: int = 80  # example rows show the shape of values, not whole documents
    knowledge: bool = (
        False  # Askbase's own knowledge: descriptions, code meanings, catalog and inferred joins
    )


MASKED_NOTE = "masked: may only be selected or counted, never filtered, joined, sorted or grouped on"

PLAIN = SchemaStyle()
ASKBASE = SchemaStyle(cell_chars=32, knowledge=True)


def tokens(text: str) -> int:
    """A tokenizer-free estimate of a text's size in tokens, for budgets."""
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def visible(db: Database) -> Sequence[tuple[Table, Sequence[str]]]:
    """The tables a question may show, each with the columns the database's rules allow.

    Worked out once per catalog and rules: every question asks, and on a 10,000-table warehouse
    checking each of 200,000 columns took half a second a question (`core.bench linking`).
    """
    rules = DataRules.of(db.config)
    return db.catalog.memo(("visible", rules), lambda: _visible(db.catalog.tables, rules))


@dataclass(frozen=True)
class VisibleNames:
    """The visible tables' names in catalog order, by lower-case name, and each one's place."""

    names: tuple[str, ...]
    by_lower: dict[str, str]
    place: dict[str, int]


def visible_names(db: Database) -> VisibleNames:
    """The visible tables' names, worked out once per catalog and rules: the scope asks per
    question, and on a warehouse would otherwise walk 10,000 tables several times."""
    rules = DataRules.of(db.config)

    def build() -> VisibleNames:
        names = tuple(t.name for t, _ in visible(db))
        return VisibleNames(names, {n.lower(): n for n in names}, {n: i for i, n in enumerate(names)})

    return db.catalog.memo(("visible_names", rules), build)


def _visible(tables: Sequence[Table], rules: DataRules) -> tuple[tuple[Table, tuple[str, ...]], ...]:
    out = []
    for table in tables:
        if rules.table_denied(table.name, table.schema):
            continue
        if not rules.deny_columns:
            columns = tuple(c.name for c in table.columns)
        else:
            columns = tuple(
                c.name for c in table.columns if not rules.column_denied(table.name, c.name, table.schema)
            )
        if columns:
            out.append((table, columns))
    return tuple(out)


Described = frozenset[tuple[str, str]]  # (table, column), lower case: whose descriptions to show


def schema_text(
    db: Database,
    settings: EngineSettings,
    style: SchemaStyle = PLAIN,
    tables: Sequence[str] | None = None,
    described: Described | None = None,
) -> str:
    """CREATE TABLE with keys, then a few example rows, for every visible table (or `tables`).

    `described` (Askbase's style): the columns whose catalog descriptions the question needs —
    CHESS shows the descriptions retrieval found relevant, not all of them (papers/chess.txt
    §3.1); None shows every description. Example rows are read once per table and database.
    """
    wanted = None if tables is None else tuple(sorted({t.lower() for t in tables}))
    if described is not None:
        return _render(db, settings, style, wanted, described)
    key = ("schema_text", db.name, style, wanted)
    return db.catalog.memo(key, lambda: _render(db, settings, style, wanted, None))


def _render(
    db: Database,
    settings: EngineSettings,
    style: SchemaStyle,
    wanted: tuple[str, ...] | None,
    described: Described | None,
) -> str:
    shown = _wanted(db, wanted)
    names = {t.name.lower() for t, _ in shown}
    parts = []
    for table, columns in shown:
        rows = _sampled(db, table, columns, settings, style.sample_rows)
        if style.knowledge:
            parts.append(_annotated(db, table, columns, names, rows, style, described))
            continue
        ddl = create_table(db, table, columns, names)
        parts.append(
            ddl + ("\n" + sample_comment(table.name, columns, rows, style.cell_chars) if rows else "")
        )
    if style.knowledge and style.sample_rows > 0:
        return EXAMPLES_NOTE + "\n" + "\n\n".join(parts)
    return "\n\n".join(parts)


def _wanted(db: Database, wanted: Sequence[str] | None) -> Sequence[tuple[Table, Sequence[str]]]:
    """The visible tables named in `wanted` (lower case), in catalog order, looked up by name
    rather than by walking every table of the catalog for each question."""
    shown = visible(db)
    if wanted is None:
        return shown
    rules = DataRules.of(db.config)
    at = db.catalog.memo(("visible at", rules), lambda: {t.name.lower(): i for i, (t, _) in enumerate(shown)})
    return [shown[i] for i in sorted(at[w] for w in wanted if w in at)]


def read_examples(
    db: Database, settings: EngineSettings, style: SchemaStyle, tables: Sequence[str] | None = None
) -> int:
    """Read (and remember) the example rows `schema_text` will show for `tables`, now; returns how
    many tables were read from the database rather than remembered.

    Why apart: on a warehouse a table's first sight costs a query (`core.bench linking` times these
    reads apart from Askbase's own work), and a caller may want them done before a deadline."""
    if style.sample_rows <= 0:
        return 0
    wanted = None if tables is None else tuple(sorted({t.lower() for t in tables}))
    read = 0
    for table, columns in _wanted(db, wanted):
        key = _sample_key(db, table, columns, style.sample_rows)
        if not db.catalog.remembers(key):
            read += 1
        _sampled(db, table, columns, settings, style.sample_rows)
    return read


def _sample_key(db: Database, table: Table, columns: Sequence[str], n: int) -> Hashable:
    return ("sample", db.name, table.name.lower(), tuple(c.lower() for c in columns), n)


def _sampled(
    db: Database, table: Table, columns: Sequence[str], settings: EngineSettings, n: int
) -> list[tuple[Any, ...]]:
    return db.catalog.memo(
        _sample_key(db, table, columns, n), lambda: sample(db, table, columns, settings, n)
    )


RENDERS_KEPT = 20_000  # tables' renderings remembered per catalog (_annotated), then forgotten at once


def _annotated(
    db: Database,
    table: Table,
    columns: Sequence[str],
    shown: set[str],
    rows: Sequence[Sequence[Any]],
    style: SchemaStyle,
    described: Described | None,
) -> str:
    """`annotated_table` of a table and the example rows `_sampled` read, remembered per catalog.

    Why: a warehouse's pruned scope shows some 40 tables, mostly the same hub neighbours question
    after question, and rendering each anew was most of the synthesis stage's steady time
    (`python -m core.bench linking`). The key holds everything the rendering reads: the rules,
    the graph (inferred joins), the columns and the style (which fix the example rows: `_sampled`
    reads them once per catalog, table, columns and number), which of the tables it refers to
    are shown, and which of its columns' descriptions are wanted.
    """
    low = table.name.lower()
    rules = DataRules.of(db.config)
    graph_id = id(db.graph)
    targets = frozenset(t for t in _ref_tables(db, table, graph_id) if t in shown)
    mine = None if described is None else frozenset(c for t, c in described if t == low)
    key = (db.name, rules, graph_id, low, tuple(columns), style, targets, mine)
    kept: dict[Hashable, str] = db.catalog.memo(("annotated tables",), dict)
    text = kept.get(key)
    if text is None:
        text = annotated_table(db, table, columns, shown, rows, style.cell_chars, described)
        if len(kept) >= RENDERS_KEPT:
            kept.clear()  # one step, so threads rendering at once never see it half done
        kept[key] = text
    return text


def _ref_tables(db: Database, table: Table, graph_id: int) -> frozenset[str]:
    """The tables (lower case) `table`'s joins refer to, the only ones whose presence in a scope
    changes its rendering; remembered per table and graph."""
    refs: dict[str, frozenset[str]] = db.catalog.memo(("referred tables", graph_id), dict)
    low = table.name.lower()
    found = refs.get(low)
    if found is None:
        found = refs[low] = frozenset(r.ref_table.lower() for r in _relationships(db, table, knowledge=True))
    return found


def ddl_text(db: Database, style: SchemaStyle = PLAIN, tables: Sequence[str] | None = None) -> str:
    """The CREATE TABLE statements alone: no example rows, so no query (for sizing a schema)."""
    wanted = None if tables is None else {t.lower() for t in tables}
    shown = [(t, cols) for t, cols in visible(db) if wanted is None or t.name.lower() in wanted]
    names = {t.name.lower() for t, _ in shown}
    if style.knowledge:
        return "\n\n".join(annotated_table(db, t, cols, names) for t, cols in shown)
    return "\n\n".join(create_table(db, t, cols, names) for t, cols in shown)


def estimated_tokens(db: Database, style: SchemaStyle = PLAIN, tables: Sequence[str] | None = None) -> int:
    """What `schema_text` would cost, without reading a row: the statements, plus example rows
    estimated at a short cell per column."""
    sizes = table_tokens(db, style)
    if tables is None:
        return sum(sizes.values())
    return sum(sizes.get(t.lower(), 0) for t in set(tables))


def table_tokens(db: Database, style: SchemaStyle = PLAIN) -> dict[str, int]:
    """Each visible table's estimated share of `schema_text` (lower-case names), built once."""

    def estimate() -> dict[str, int]:
        shown = visible(db)
        names = {t.name.lower() for t, _ in shown}
        cell = min(style.cell_chars, 10) + 3
        out = {}
        for t, cols in shown:
            ddl = annotated_table(db, t, cols, names) if style.knowledge else create_table(db, t, cols, names)
            rows = style.sample_rows * len(cols) * cell + (0 if style.knowledge else 40)
            out[t.name.lower()] = tokens(ddl) + rows // CHARS_PER_TOKEN + 1
        return out

    return db.catalog.memo(("table_tokens", db.name, style), estimate)


def create_table(db: Database | Catalog, table: Table, columns: Sequence[str], shown: set[str]) -> str:
    """CREATE TABLE as the database declares it: types, NOT NULL, primary key, foreign keys.

    Only foreign keys the database declares: relationships Askbase infers or reads from its
    catalog file are Askbase's knowledge, which a plain prompt does not have.
    """
    catalog = db if isinstance(db, Catalog) else db.catalog
    dialect = catalog.dialect
    keep = {c.lower() for c in columns}

    def name(text: str) -> str:
        return _quoted_name(text, dialect)

    lines = []
    for c in table.columns:
        if c.name.lower() in keep:
            lines.append(f"  {name(c.name)} {c.type or 'TEXT'}{'' if c.nullable else ' NOT NULL'}")
    if table.primary_key and all(k.lower() in keep for k in table.primary_key):
        lines.append(f"  PRIMARY KEY ({', '.join(name(k) for k in table.primary_key)})")
    for r in _relationships(db, table, knowledge=False):
        if (
            r.origin == "declared"
            and r.ref_table.lower() in shown
            and all(c.lower() in keep for c in r.columns)
        ):
            lines.append(
                f"  FOREIGN KEY ({', '.join(name(c) for c in r.columns)}) REFERENCES "
                f"{name(r.ref_table)} ({', '.join(name(c) for c in r.ref_columns)})"
            )
    head = table_expr(table.name, table.schema, table.name, dialect).sql(dialect=dialect)
    return f"CREATE TABLE {head} (\n" + ",\n".join(lines) + "\n);"


def annotated_table(
    db: Database | Catalog,
    table: Table,
    columns: Sequence[str],
    shown: set[str],
    rows: Sequence[Sequence[Any]] = (),
    cell_chars: int = ASKBASE.cell_chars,
    described: Described | None = None,
) -> str:
    """CREATE TABLE with what Askbase knows, one column a line, each with its comment:

        CREATE TABLE client ( -- Customers of the service
          id INTEGER NOT NULL PRIMARY KEY,
          status TEXT, -- values: 'ACT' = active, 'CHN' = churned
          loc_id INTEGER REFERENCES location(id),
          signup_date TEXT -- '2024-03-01', '2023-11-17'
        );

    Example values (a comment of quoted values and numbers alone: `EXAMPLES_NOTE` says so once,
    above the schema) come from `rows`, in `columns` order; key columns and coded columns whose
    meanings are listed get none.
    """
    catalog = db if isinstance(db, Catalog) else db.catalog
    dialect = catalog.dialect
    wanted = {x.lower() for x in columns}
    keep = [c for c in table.columns if c.name.lower() in wanted]
    index = {c.name.lower(): i for i, c in enumerate(columns_in(columns, keep))}

    def name(text: str) -> str:
        return _quoted_name(text, dialect)

    pk = [k.lower() for k in table.primary_key]
    single_pk = len(pk) == 1
    refs: dict[str, _Rel] = {}
    multi: list[_Rel] = []
    kept = {c.name.lower() for c in keep}
    for r in _relationships(db, table, knowledge=True):
        if r.ref_table.lower() not in shown or not all(c.lower() in kept for c in r.columns):
            continue
        if len(r.columns) == 1:
            refs.setdefault(r.columns[0].lower(), r)
        else:
            multi.append(r)
    rules = DataRules.of(db.config) if isinstance(db, Database) else None
    lines: list[tuple[str, str]] = []
    for c in keep:
        low = c.name.lower()
        definition = f"  {name(c.name)} {c.type or 'TEXT'}{'' if c.nullable else ' NOT NULL'}"
        if single_pk and low in pk:
            definition += " PRIMARY KEY"
        ref = refs.get(low)
        if ref is not None:
            definition += f" REFERENCES {name(ref.ref_table)}({name(ref.ref_columns[0])})"
        # a key's description says what its REFERENCES or PRIMARY KEY already says
        keyish = low in pk or ref is not None or _key_like(c)
        shows = described is None or (table.name.lower(), low) in described
        notes = [_short(c.description)] if c.description and shows and not keyish else []
        if rules is not None and rules.column_masked(table.name, c.name, table.schema):
            notes.insert(0, MASKED_NOTE)  # the guard refuses any other use (core/guard/masks.py)
        if c.values:
            codes = ", ".join(
                f"'{k}' {_short(v, MEANING_CHARS)}" for k, v in list(c.values.items())[:MAX_MEANINGS]
            )
            notes.append(f"values: {codes}")
        if rows and low not in pk and ref is None and not c.values and low in index and not _key_like(c):
            notes.append(_examples([row[index[low]] for row in rows], cell_chars))
        lines.append((definition, "; ".join(n for n in notes if n)))
    if table.primary_key and not single_pk and all(k in kept for k in pk):
        lines.append((f"  PRIMARY KEY ({', '.join(name(k) for k in table.primary_key)})", ""))
    for r in multi:
        lines.append(
            (
                f"  FOREIGN KEY ({', '.join(name(c) for c in r.columns)}) REFERENCES "
                f"{name(r.ref_table)} ({', '.join(name(c) for c in r.ref_columns)})",
                "inferred join" if r.origin == "inferred" else "",
            )
        )
    head = table_expr(table.name, table.schema, table.name, dialect).sql(dialect=dialect)
    about = f" -- {_short(table.description, TABLE_DESCRIPTION_CHARS)}" if table.description else ""
    body = []
    for i, (definition, note) in enumerate(lines):
        comma = "," if i < len(lines) - 1 else ""
        body.append(f"{definition}{comma}" + (f" -- {note}" if note else ""))
    return "\n".join([f"CREATE TABLE {head} ({about}", *body, ");"])


@functools.lru_cache(maxsize=65_536)
def _quoted_name(text: str, dialect: str) -> str:
    """A name as the dialect writes it; remembered, since building it through sqlglot was a third
    of the schema text's time on a warehouse's wide scope (`python -m core.bench linking`)."""
    return identifier(text, dialect).sql(dialect=dialect)


def columns_in(columns: Sequence[str], keep: Sequence[Column]) -> list[Column]:
    """`keep` in the order of `columns` (the order example rows were read in)."""
    by_name = {c.name.lower(): c for c in keep}
    return [by_name[c.lower()] for c in columns if c.lower() in by_name]


def _key_like(c: Column) -> bool:
    """An integer column named like an identifier (customer_id, CustomerId, authorid): its
    example numbers say nothing."""
    return c.kind == "integer" and (looks_like_id_name(c.name) or c.name.lower().endswith("id"))


def _examples(values: Sequence[Any], chars: int) -> str:
    """Two distinct values: enough to show a column's spelling, case and format (the question's
    own values get their stored spelling in the value hints, core/hints.py)."""
    distinct = [v for v in dict.fromkeys(values) if v is not None] or [None]
    return ", ".join(_literal(v, chars) for v in distinct[:EXAMPLES])


def _literal(value: Any, chars: int) -> str:
    if value is None or isinstance(value, bool | int | float):
        return "NULL" if value is None else str(value)
    text = cell(value, chars)
    return f"'{text}'"


@dataclass(frozen=True)
class _Rel:
    columns: tuple[str, ...]
    ref_table: str
    ref_columns: tuple[str, ...]
    origin: str
    confidence: float


def _relationships(db: Database | Catalog, table: Table, knowledge: bool) -> list[_Rel]:
    """The table's outgoing joins: the catalog's (declared and catalog file), and with
    `knowledge` the relationship graph's inferred ones too."""
    catalog = db if isinstance(db, Catalog) else db.catalog
    low = table.name.lower()
    declared = catalog.memo(("outgoing joins",), lambda: _by_table(catalog.relationships))
    out = [_Rel(r.columns, r.ref_table, r.ref_columns, r.origin, r.confidence) for r in declared.get(low, ())]
    if knowledge and isinstance(db, Database):
        graph = db.graph
        inferred = catalog.memo(("inferred joins", id(graph)), lambda: _by_table(graph.edges))
        seen = {(tuple(c.lower() for c in r.columns), r.ref_table.lower()) for r in out}
        for e in inferred.get(low, ()):
            if e.origin != "inferred" or (e.is_self and e.columns == e.ref_columns):
                continue
            key = (tuple(c.lower() for c in e.columns), e.ref_table.lower())
            if key not in seen:
                seen.add(key)
                out.append(_Rel(e.columns, e.ref_table, e.ref_columns, e.origin, e.confidence))
    return out


class _Joins(Protocol):
    @property
    def table(self) -> str: ...


J = TypeVar("J", bound=_Joins)


def _by_table(joins: Iterable[J]) -> dict[str, list[J]]:
    """Joins grouped by their table (lower case), in their order: looked up per table shown, which
    scanned every join of the catalog for each of a warehouse's tables (`core.bench linking`)."""
    out: dict[str, list[J]] = {}
    for j in joins:
        out.setdefault(j.table.lower(), []).append(j)
    return out


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _short(text: str, chars: int = DESCRIPTION_CHARS) -> str:
    """A description on one line, its first clause when long: what a column is, not its history."""
    line = _one_line(text).rstrip(".")
    if len(line) <= chars:
        return line
    cut = line[:chars]
    for stop in (";", ". ", " ("):
        if stop in cut[chars // 3 :]:
            return cut[: cut.rindex(stop)].rstrip()
    return cut[: cut.rfind(" ")].rstrip() + "..."


def sample_comment(
    table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]], cell_chars: int = PLAIN.cell_chars
) -> str:
    lines = [f"/*\n{len(rows)} example rows from table {table}:", " | ".join(columns)]
    lines += [" | ".join(cell(v, cell_chars) for v in row) for row in rows]
    return "\n".join(lines) + "\n*/"


def cell(value: Any, chars: int = PLAIN.cell_chars) -> str:
    """A value as an example row shows it: one line, cut to `chars`."""
    if value is None:
        return "NULL"
    if isinstance(value, bytes | bytearray | memoryview):
        return "<binary>"
    text = " ".join(str(value).split())
    return text if len(text) <= chars else text[: chars - 3] + "..."


def sample(
    db: Database, table: Table, columns: Sequence[str], settings: EngineSettings, n: int
) -> list[tuple[Any, ...]]:
    """The first `n` rows, through the guard and the read-only executor (so masking applies)."""
    if n <= 0:
        return []
    dialect = db.catalog.dialect
    select = exp.select(*(exp.Column(this=identifier(c, dialect)) for c in columns)).from_(
        table_expr(table.name, table.schema, table.name, dialect)
    )
    # built here, so no need of the copy `limit` makes by default (most of a read's time: sqlglot
    # deep-copies the tree, several milliseconds for a 20-column table, `core.bench linking`)
    verdict = check_for(db, select.limit(n, copy=False).sql(dialect=dialect), settings)
    if not verdict.allowed:
        log.info("no example rows for %s: %s", table.name, verdict.reason)
        return []
    try:
        return execute(db, verdict.sql, Limits(row_cap=n, timeout_s=5)).rows
    except QueryError as exc:
        log.info("no example rows for %s: %s", table.name, exc.message)
        return []
