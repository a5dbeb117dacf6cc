"""What the columns of a result mean, read from the SQL that produced them and the catalog.

A result arrives as names and values; a person needs more to read it: "total_paid" is a *sum* of
`payment_amount.amount` (so a chart of it starts at zero), "segment" holds codes the catalog
spells out, "credit" is in euros, and the rows are ordered highest first. This module traces each
output column back through CTEs and subqueries to the base column it reads (sqlglot's lineage,
qualified with the catalog's tables), notes the outermost aggregate and the ORDER BY, and gives
every column a header a person can read. Anything it cannot work out is left empty — the result
still shows, with humanized names and no unit — so an unusual query never breaks an answer.

Platform-neutral (no chat imports): the Slack and Teams adapters, charts and CSV files use the
same `ResultShape`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

import sqlglot
from sqlglot import exp
from sqlglot.lineage import Node, lineage

from core.catalog import Catalog, Column, ColumnKind
from core.plurals import singular
from core.units import unit_of

log = logging.getLogger(__name__)

Aggregate = Literal["count", "sum", "avg", "min", "max", ""]
AGGREGATES: dict[type[exp.Expr], Aggregate] = {
    exp.Count: "count",
    exp.Sum: "sum",
    exp.Avg: "avg",
    exp.Min: "min",
    exp.Max: "max",
}

# Column names that say what kind of value, not of what: headed with their table ('Datacenter name').
GENERIC_HEADERS = frozenset({"name", "title", "label", "description", "type", "status", "code"})
ID_NAMES = re.compile(r"(^id$|_id$|^id_|_no$|^code$|_code$|phone|zip|postcode|postal)", re.I)
TIME_NAMES = re.compile(r"(^|_)(date|day|week|month|year|quarter|time|at|on|period)(_|$)", re.I)
ACRONYMS = {
    "id": "ID",
    "ids": "IDs",
    "cpu": "CPU",
    "gpu": "GPU",
    "ram": "RAM",
    "gb": "GB",
    "mb": "MB",
    "tb": "TB",
    "mhz": "MHz",
    "ghz": "GHz",
    "url": "URL",
    "dc": "DC",
    "vm": "VM",
    "sla": "SLA",
    "kpi": "KPI",
    "eur": "EUR",
    "usd": "USD",
    "vat": "VAT",
    "iso": "ISO",
}
ABBREVIATIONS = {"qty": "quantity", "amt": "amount", "avg": "average", "pct": "percent", "cnt": "count"}
COUNT_PREFIXES = ("num", "nb", "n", "number", "count", "cnt", "no")
AGGREGATE_WORDS: dict[Aggregate, str] = {
    "count": "Count",
    "sum": "Total",
    "avg": "Average",
    "min": "Lowest",
    "max": "Highest",
    "": "",
}


@dataclass(frozen=True)
class ColumnMeaning:
    """One output column as a person reads it."""

    name: str  # as the database returned it
    header: str  # for people: "Total paid", "Client name"
    unit: str = ""  # of its values: "€", "MHz"; "" when unknown or mixed
    aggregate: Aggregate = ""  # the outermost aggregate that produced it
    table: str = ""  # the base table and column it reads, when exactly one
    column: str = ""
    kind: ColumnKind | None = None  # the base column's kind
    codes: Mapping[str, str] = field(default_factory=dict)  # stored code → what it means
    identifier: bool = False  # an id, a code, a year: written without thousands separators

    @property
    def additive(self) -> bool:
        """Counts and sums: zero is a meaningful baseline for them."""
        return self.aggregate in ("count", "sum")

    @property
    def titled(self) -> str:
        """The header with its unit: 'Credit (€)'."""
        return f"{self.header} ({self.unit})" if self.unit else self.header


@dataclass(frozen=True)
class Ordering:
    index: int  # the output column the rows are sorted by
    descending: bool


@dataclass(frozen=True)
class ResultShape:
    columns: tuple[ColumnMeaning, ...]
    order: tuple[Ordering, ...] = ()

    def __getitem__(self, index: int) -> ColumnMeaning:
        return self.columns[index]

    def __len__(self) -> int:
        return len(self.columns)

    @property
    def headers(self) -> tuple[str, ...]:
        return tuple(c.titled for c in self.columns)


# ---------------------------------------------------------------- headers


def humanize(name: str) -> str:
    """'num_clients' → 'Number of clients', 'avg_cpu_mhz' → 'Average CPU MHz', 'id' → 'ID',
    'MEMORY_GB_HOURS' → 'Memory GB hours'."""
    name = name.strip()
    if not any(ch.islower() for ch in name) and (len(name) > 3 or not name.isalpha()):
        # a name in capitals is one a case-insensitive engine keeps so (Snowflake, Oracle): its words
        # are words, not acronyms; a lone short one (SKU, VAT) still is
        name = name.lower()
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)  # camelCase
    words = [w for w in re.split(r"[\s_\-.]+", text) if w]
    if not words:
        return "Value"
    lower = [w.lower() for w in words]
    if len(lower) > 1 and lower[0] in COUNT_PREFIXES and lower[1] != "of":
        words, lower = ["number", "of", *words[1:]], ["number", "of", *lower[1:]]
    out = []
    for word, low in zip(words, lower, strict=True):
        if low in ACRONYMS:
            out.append(ACRONYMS[low])
        elif low in ABBREVIATIONS:
            out.append(ABBREVIATIONS[low])
        else:
            out.append(word if word.isupper() and len(word) > 1 else low)
    first = out[0]
    out[0] = first if first in ACRONYMS.values() else first[:1].upper() + first[1:]
    return " ".join(out)


def _header(name: str, aggregate: Aggregate, source: Column | None) -> str:
    if source is not None and source.label and name.lower() == source.name.lower():
        return source.label
    if aggregate == "count" and name.lower() in (*COUNT_PREFIXES, "c", "total"):
        return "Count"
    if "(" in name:  # an unaliased expression: COUNT(*), SUM(amount)
        inner = source.label or humanize(source.name) if source is not None else ""
        word = AGGREGATE_WORDS[aggregate]
        if word and inner:
            return f"{word} {_lower_first(inner)}"
        return word or "Value"
    return humanize(name)


def _lower_first(text: str) -> str:
    """'CPU cores' stays, 'Name' → 'name': for a header inside a longer one."""
    first = text.split(" ", 1)[0]
    return text if first in ACRONYMS.values() else text[:1].lower() + text[1:]


def _identifier(name: str, source: Column | None) -> bool:
    names = [name] + ([source.name] if source is not None else [])
    if any(ID_NAMES.search(n) for n in names):
        return True
    if source is not None and source.primary_key:
        return True
    return bool(TIME_NAMES.search(name)) and (source is None or source.kind in ("integer", "text", None))


def plain_shape(columns: Sequence[str]) -> ResultShape:
    """Headers from the names alone: when there is no SQL, or it cannot be read."""
    metas = tuple(
        ColumnMeaning(name=c, header=_header(c, "", None), identifier=_identifier(c, None)) for c in columns
    )
    return ResultShape(columns=_distinct_headers(metas, None))


# ---------------------------------------------------------------- reading the SQL


def _schema(catalog: Catalog) -> dict[str, dict[str, str]]:
    return catalog.memo(
        "lineage_schema",
        lambda: {t.name: {c.name: c.type or "TEXT" for c in t.columns} for t in catalog.tables},
    )


def _outer_select(tree: exp.Expr) -> exp.Select | None:
    if isinstance(tree, exp.Select):
        return tree
    return None  # UNION / INTERSECT: the columns come from several selects


def _aggregate_in(expression: exp.Expr | None) -> Aggregate:
    if expression is None:
        return ""
    for node in expression.bfs():
        kind = AGGREGATES.get(type(node))
        if kind:
            return kind
    return ""


def _keeps_unit(expression: exp.Expr) -> bool:
    """True when nothing but wrappers and at most one aggregate stand between the column and the output
    (a ratio, a difference or a product has a unit of its own, which the catalog does not say)."""
    # arithmetic, or a comparison in a CASE: the result has a unit of its own
    return not any(isinstance(node, exp.Binary) for node in expression.walk())


def _base_column(node: Node, catalog: Catalog) -> Column | None:
    """The one catalog column a lineage node reads, or None when it reads none or several."""
    leaves = [n for n in node.walk() if not n.downstream]
    found: set[tuple[str, str]] = set()
    for leaf in leaves:
        if not isinstance(leaf.expression, exp.Table):
            continue
        table = leaf.expression.name
        column = leaf.name.rsplit(".", 1)[-1]
        found.add((table.lower(), column.lower()))
    if len(found) != 1:
        return None
    table_name, column_name = next(iter(found))
    owner = catalog.table(table_name)
    return owner.column(column_name) if owner is not None else None


def _meaning(
    name: str, projection: exp.Expr | None, node: Node | None, catalog: Catalog | None
) -> ColumnMeaning:
    simple = projection is None or _keeps_unit(projection)
    aggregate = _aggregate_in(projection) if simple else ""  # SUM(x) / COUNT(*) is neither
    source: Column | None = None
    table = ""
    if node is not None and catalog is not None:
        if aggregate == "" and simple and node.downstream:  # the aggregate may sit in a CTE or subquery
            aggregate = next((a for a in (_aggregate_in(n.expression) for n in node.walk()) if a), "")
        source = _base_column(node, catalog)
        if source is not None:
            leaf = next(n for n in node.walk() if isinstance(n.expression, exp.Table))
            table = leaf.expression.name
    unit = ""
    if source is not None and aggregate != "count" and simple:
        unit = unit_of(source)
    return ColumnMeaning(
        name=name,
        header=_header(name, aggregate, source),
        unit=unit,
        aggregate=aggregate,
        table=table if source is not None else "",
        column=source.name if source is not None else "",
        kind=source.kind if source is not None else None,
        codes=dict(source.values) if source is not None and aggregate in ("", "min", "max") else {},
        identifier=aggregate not in ("count", "sum", "avg") and _identifier(name, source),
    )


def _ordering(select: exp.Select, names: Sequence[str]) -> tuple[Ordering, ...]:
    order = select.args.get("order")
    if order is None:
        return ()
    projections = select.expressions
    lowered = [n.lower() for n in names]
    out = []
    for item in order.expressions:
        target = item.this
        index: int | None = None
        if isinstance(target, exp.Literal) and target.is_int:
            index = int(target.this) - 1
        elif isinstance(target, exp.Column) and target.name.lower() in lowered:
            index = lowered.index(target.name.lower())
        else:
            sql = target.sql()
            index = next((i for i, p in enumerate(projections) if p.unalias().sql() == sql), None)
        if index is not None and 0 <= index < len(names):
            out.append(Ordering(index, bool(item.args.get("desc"))))
    return tuple(out)


def _distinct_headers(metas: tuple[ColumnMeaning, ...], catalog: Catalog | None) -> tuple[ColumnMeaning, ...]:
    """Two columns both headed 'Name' become 'Client name' and 'Resource pool name'; a lone `name`
    read from the datacenter table is headed 'Datacenter name' too — a header 'Name' over twelve
    rows does not say names of what, and neither would a chart's axis."""
    seen: dict[str, int] = {}
    for m in metas:
        seen[m.header.lower()] = seen.get(m.header.lower(), 0) + 1
    out = []
    for m in metas:
        generic = m.header.lower() in GENERIC_HEADERS and m.column.lower() == m.header.lower()
        if m.table and (seen[m.header.lower()] > 1 or generic):
            table = catalog.table(m.table) if catalog is not None else None
            owner = humanize(singular_name(table.name if table is not None else m.table))
            m = replace(m, header=f"{owner} {_lower_first(m.header)}")
        out.append(m)
    return tuple(out)


def singular_name(name: str) -> str:
    """'datacenters' → 'datacenter', 'resource_pools' → 'resource_pool': the last word singular."""
    head, sep, last = name.rpartition("_")
    return f"{head}{sep}{singular(last.lower())}" if last.isalpha() else name


def result_shape(sql: str, columns: Sequence[str], catalog: Catalog | None = None) -> ResultShape:
    """Each output column's header, unit and aggregate, and the ORDER BY, for `sql`'s result."""
    if not sql.strip() or not columns:
        return plain_shape(columns)
    dialect = catalog.dialect if catalog is not None else None
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
        select = _outer_select(tree)
        if select is None:
            return plain_shape(columns)
        projections: list[exp.Expr | None] = list(select.expressions)
        if len(projections) != len(columns) or any(isinstance(p, exp.Star) for p in projections):
            projections = [None] * len(columns)
        nodes: list[Node | None] = [None] * len(columns)
        if catalog is not None:
            try:
                found = list(lineage(None, sql, _schema(catalog), dialect=dialect).values())
                if len(found) == len(columns):  # one node per output column, in select order
                    nodes = list(found)
            except Exception as exc:  # a query lineage cannot follow: no units, the rest still works
                log.debug("lineage failed for %r: %s", sql[:200], exc)
        metas = tuple(_meaning(name, projections[i], nodes[i], catalog) for i, name in enumerate(columns))
        return ResultShape(columns=_distinct_headers(metas, catalog), order=_ordering(select, columns))
    except Exception as exc:  # unparsable SQL in an odd dialect: the plain shape still reads fine
        log.debug("could not read the shape of %r: %s", sql[:200], exc)
        return plain_shape(columns)
