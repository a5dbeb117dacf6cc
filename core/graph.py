"""The relationship graph of a database: which tables join to which, on what, and how sure we are.

A multigraph over tables. Every edge is one join condition `table.columns = ref_table.ref_columns`:
two foreign keys between the same two tables are two edges (flights.source_airport and
flights.dest_airport → airports), because they are two different questions. Edges come from

- declared foreign keys (origin "declared"),
- relationships written in the catalog YAML (origin "catalog"),
- inference, for the many databases that declare few keys (origin "inferred", with a confidence):
  column-name conventions (`restaurant_id` → restaurant.id, `start_station_id` → station.id,
  `paperId` → paper.paperId) and value-inclusion profiling on a sample (most values of A.x are
  values of the unique column B.y).

On top of the edges sit the design patterns Lucy reasons with (§3.1): many-to-many bridges,
lookup tables, stars, snowflakes and subtypes — from the catalog, or detected from the edges.

Profiling reads a few thousand rows per table, never whole tables, under a time budget; the
graph is cached on disk next to the catalog, keyed by the catalog's signature.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from core.catalog import Catalog, Column, Origin, Pattern, Table

log = logging.getLogger(__name__)

GRAPH_VERSION = 5  # 5: a column that names one of several keyed tables points at it

# Inferred edges below this confidence are not joined on.
MIN_CONFIDENCE = 0.5
# Profiling budget: rows read per table for candidate columns, values kept per key column.
SAMPLE_ROWS = 2000
SAMPLE_VALUES = 200
KEY_VALUES = 5000
PROFILE_BUDGET_S = 10.0
PROFILE_MAX_TABLES = 2000

# Words that end a key column's name: customer_id, country_code, order_no.
KEY_WORDS = frozenset({"id", "code", "key", "no", "num", "number", "nr", "nbr", "cd", "uuid", "guid", "ref"})
# Column names too common to mean "the same thing" when two tables share them (compared without
# separators or case: created_at, CreatedAt and createdat are one name).
_GENERIC = """
    name type title description desc value status date year month day time created updated createdat
    updatedat comment comments note notes details otherdetails amount price count version label rank
    age sex gender email phone address city country state zip zipcode url homepage
"""
GENERIC_NAMES = frozenset(_GENERIC.split()) | KEY_WORDS
LOOKUP_WORDS = frozenset(
    {"ref", "lookup", "lkp", "lu", "type", "types", "code", "codes", "status", "kind", "enum"}
)
IRREGULAR_SINGULAR = {
    "people": "person",
    "persons": "person",
    "children": "child",
    "men": "man",
    "women": "woman",
    "staff": "staff",
    "series": "series",
    "status": "status",
    "data": "data",
    "media": "media",
    "criteria": "criterion",
}
EXCLUSIVE = "exclusive"  # a subtype pattern whose children never share a parent row
_INFERABLE_KINDS = frozenset({"integer", "number", "text", "other"})


# ---------------------------------------------------------------------------------------------
# edges


@dataclass(frozen=True)
class Edge:
    """`table.columns = ref_table.ref_columns`; the ref side is the referenced (usually unique) key."""

    table: str
    columns: tuple[str, ...]
    ref_table: str
    ref_columns: tuple[str, ...]
    origin: Origin = "declared"
    confidence: float = 1.0
    evidence: str = ""
    ref_unique: bool = True  # ref_columns are a key of ref_table: the edge is many-to-one
    src_unique: bool = False  # columns are a key of table too: one-to-one

    @property
    def cost(self) -> float:
        """Steiner weight: one table joined = 1; declared edges before inferred ones (Lucy C5 + ours)."""
        if self.origin != "inferred":
            return 1.0
        return 1.15 + 0.5 * (1.0 - self.confidence)

    @property
    def pair(self) -> frozenset[str]:
        return frozenset((self.table.lower(), self.ref_table.lower()))

    @property
    def is_self(self) -> bool:
        return self.table.lower() == self.ref_table.lower()

    @property
    def key(self) -> frozenset[tuple[str, str]]:
        """Identity as unordered column pairs, case-insensitively (what the benchmark compares)."""
        return frozenset(
            frozenset(((self.table.lower(), a.lower()), (self.ref_table.lower(), b.lower())))
            for a, b in zip(self.columns, self.ref_columns, strict=True)
        )

    def side(self, table: str) -> tuple[str, ...]:
        """The columns on `table`'s side of the edge."""
        return self.columns if table.lower() == self.table.lower() else self.ref_columns

    def other(self, table: str) -> str:
        return self.ref_table if table.lower() == self.table.lower() else self.table

    def multiplies(self, from_table: str) -> bool:
        """Does joining the other table onto `from_table` repeat `from_table`'s rows?"""
        if from_table.lower() == self.table.lower():
            return not self.ref_unique
        return not self.src_unique

    @property
    def role(self) -> str:
        """What the referencing columns call the referenced row: source_airport, cited_paper, manager."""
        words: list[str] = []
        for col in self.columns:
            parts = words_of(col)
            while len(parts) > 1 and parts[-1] in KEY_WORDS:
                parts = parts[:-1]
            words.extend(parts)
        return "_".join(words) or self.ref_table.lower()

    def origin_text(self) -> str:
        if self.origin == "declared":
            return "declared foreign key"
        if self.origin == "catalog":
            return "catalog relationship"
        return f"inferred {self.confidence:.2f}"

    def __str__(self) -> str:
        left = ", ".join(f"{self.table}.{c}" for c in self.columns)
        right = ", ".join(f"{self.ref_table}.{c}" for c in self.ref_columns)
        how = self.origin_text() + (f": {self.evidence}" if self.evidence else "")
        return f"{left} → {right} [{how}]"


# ---------------------------------------------------------------------------------------------
# the graph


@dataclass
class RelationshipGraph:
    """Edges and patterns over a catalog's tables, with the indexes view synthesis asks for."""

    catalog: Catalog
    edges: tuple[Edge, ...]
    patterns: tuple[Pattern, ...] = ()
    stats: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        adjacency: dict[str, dict[str, list[Edge]]] = defaultdict(lambda: defaultdict(list))
        for e in self.edges:
            if e.is_self:
                adjacency[e.table.lower()][e.table.lower()].append(e)
                continue
            adjacency[e.table.lower()][e.ref_table.lower()].append(e)
            adjacency[e.ref_table.lower()][e.table.lower()].append(e)
        self._adjacency = {k: dict(v) for k, v in adjacency.items()}
        self.lookups: frozenset[str] = frozenset(p.root.lower() for p in self.patterns if p.kind == "lookup")
        bridges: dict[frozenset[str], list[str]] = defaultdict(list)
        for p in self.patterns:
            if p.kind == "many_to_many" and len(p.tables) == 2:
                bridges[frozenset(t.lower() for t in p.tables)].append(p.root.lower())
        self.bridges: dict[frozenset[str], list[str]] = dict(bridges)
        self.bridge_tables: frozenset[str] = frozenset(b for bs in bridges.values() for b in bs)
        self.branch_parent: dict[str, tuple[str, Pattern]] = {}
        for p in self.patterns:
            if p.kind in ("star", "snowflake", "subtype"):
                for child, parent in self._branch(p).items():
                    self.branch_parent.setdefault(child, (parent, p))
        # parents whose subtypes are mutually exclusive: never join two of them to each other
        self.exclusive: frozenset[str] = frozenset(
            p.root.lower()
            for p in self.patterns
            if p.kind == "subtype" and (p.origin == "catalog" or p.description.startswith(EXCLUSIVE))
        )
        self.inner_tables: frozenset[str] = frozenset(
            t.lower() for p in self.patterns if p.kind in ("star", "snowflake") for t in p.tables
        )

    # -- lookups ------------------------------------------------------------------------------

    def table(self, name: str) -> Table | None:
        return self.catalog.table(name)

    def neighbors(self, table: str) -> dict[str, list[Edge]]:
        """Other tables joined to `table`, each with its edges (lower-case names)."""
        return {k: v for k, v in self._adjacency.get(table.lower(), {}).items() if k != table.lower()}

    def edges_between(self, a: str, b: str) -> list[Edge]:
        return list(self._adjacency.get(a.lower(), {}).get(b.lower(), []))

    def self_edges(self, table: str) -> list[Edge]:
        return self.edges_between(table, table)

    def patterns_of(self, table: str) -> list[Pattern]:
        low = table.lower()
        return [p for p in self.patterns if p.root.lower() == low or low in (t.lower() for t in p.tables)]

    def describe_table(self, table: str) -> str:
        """Pattern roles of a table, for the trace: 'lookup', 'bridge of client↔resource_pool'..."""
        low = table.lower()
        out = []
        for p in self.patterns_of(table):
            src = "catalog" if p.origin == "catalog" else "detected"
            if p.kind == "lookup":
                out.append(f"lookup table ({src})")
            elif p.kind == "many_to_many" and p.root.lower() == low:
                out.append(f"bridge of many-to-many {' ↔ '.join(p.tables)} ({src})")
            elif p.kind == "many_to_many":
                out.append(f"many-to-many {' ↔ '.join(p.tables)} through {p.root} ({src})")
            elif p.root.lower() == low:
                out.append(f"root of {p.kind} ({src})")
            else:
                out.append(f"{p.kind} branch of {p.root} ({src})")
        return "; ".join(out)

    def _branch(self, p: Pattern) -> dict[str, str]:
        """Parent of each inner table along the pattern's tree, found by BFS from the root."""
        members = {t.lower() for t in p.tables}
        parent: dict[str, str] = {}
        frontier = [p.root.lower()]
        seen = {p.root.lower()}
        while frontier:
            nxt = []
            for node in frontier:
                for other in sorted(self.neighbors(node)):
                    if other in members and other not in seen:
                        seen.add(other)
                        parent[other] = node
                        nxt.append(other)
            frontier = nxt
        return parent

    def restricted(
        self, deny_tables: Iterable[str] = (), deny_columns: Iterable[str] = ()
    ) -> RelationshipGraph:
        """This graph without denied tables, denied columns and the edges that use them.

        `deny_tables` are names or schema.names; `deny_columns` are "table.column". Cached per rule set.
        """
        tables = frozenset(t.lower().rsplit(".", 1)[-1] for t in deny_tables)
        columns = frozenset(c.lower() for c in deny_columns)
        if not tables and not columns:
            return self
        cache = self.__dict__.setdefault("_restricted", {})
        key = (tables, columns)
        if key not in cache:
            kept = tuple(
                replace(t, columns=tuple(c for c in t.columns if f"{t.name}.{c.name}".lower() not in columns))
                for t in self.catalog.tables
                if t.name.lower() not in tables
            )
            names = {t.name.lower() for t in kept}

            def allowed(e: Edge) -> bool:
                cols = [f"{e.table}.{c}".lower() for c in e.columns]
                cols += [f"{e.ref_table}.{c}".lower() for c in e.ref_columns]
                return e.table.lower() in names and e.ref_table.lower() in names and not set(cols) & columns

            cache[key] = RelationshipGraph(
                catalog=replace(self.catalog, tables=kept),
                edges=tuple(e for e in self.edges if allowed(e)),
                patterns=tuple(
                    p for p in self.patterns if {p.root.lower(), *(t.lower() for t in p.tables)} <= names
                ),
                stats=self.stats,
            )
        return cache[key]

    # -- cache --------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": GRAPH_VERSION,
            "signature": self.catalog.signature,
            "edges": [asdict(e) for e in self.edges],
            "patterns": [asdict(p) for p in self.patterns],
            "stats": self.stats,
        }

    @classmethod
    def from_dict(cls, catalog: Catalog, data: Mapping[str, Any]) -> RelationshipGraph:
        edges = tuple(
            Edge(**{**e, "columns": tuple(e["columns"]), "ref_columns": tuple(e["ref_columns"])})
            for e in data["edges"]
        )
        patterns = tuple(Pattern(**{**p, "tables": tuple(p["tables"])}) for p in data["patterns"])
        return cls(catalog=catalog, edges=edges, patterns=patterns, stats=dict(data.get("stats") or {}))


# ---------------------------------------------------------------------------------------------
# names


def words_of(name: str) -> list[str]:
    """Identifier → lower-case words: 'SourceAirport' → [source, airport], 'RESTAURANT_ID' → [restaurant, id]."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", spaced)
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w]


def singular(word: str) -> str:
    if word in IRREGULAR_SINGULAR:
        return IRREGULAR_SINGULAR[word]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("sses", "xes", "ches", "shes", "zes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _flat(name: str) -> str:
    return "".join(words_of(name))


def _table_stems(name: str) -> set[str]:
    """Ways a column may spell a table: customers → {customers, customer}; ref_colors → {color, ...}."""
    words = words_of(name)
    if not words:
        return set()
    stems = {"".join(words), "".join([*words[:-1], singular(words[-1])])}
    if len(words) > 1 and words[0] in ("ref", "tbl", "t", "dim", "fact", "lkp", "lu"):
        rest = words[1:]
        stems |= {"".join(rest), "".join([*rest[:-1], singular(rest[-1])])}
    return {s for s in stems if s}


def _is_key_like(name: str) -> bool:
    words = words_of(name)
    return bool(words) and (words[-1] in KEY_WORDS or name.lower().endswith("id"))


def _is_generic(name: str) -> bool:
    return _flat(name) in GENERIC_NAMES or len(_flat(name)) <= 2


# ---------------------------------------------------------------------------------------------
# building


def build_graph(
    catalog: Catalog,
    engine: sa.Engine | None = None,
    *,
    cache_dir: str | Path | None = None,
    profile: bool = True,
    budget_s: float = PROFILE_BUDGET_S,
) -> RelationshipGraph:
    """The relationship graph of `catalog`; profiles values through `engine` when one is given."""
    cache_file = Path(cache_dir) / f"{_safe(catalog.database)}.graph.json" if cache_dir else None
    if cache_file and cache_file.is_file() and catalog.signature:
        try:
            data = json.loads(cache_file.read_text())
            if data.get("version") == GRAPH_VERSION and data.get("signature") == catalog.signature:
                return RelationshipGraph.from_dict(catalog, data)
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("ignoring unreadable graph cache %s: %s", cache_file, exc)
    started = time.perf_counter()
    profiler = Profiler(catalog, engine, budget_s) if engine is not None and profile else None
    edges = _known_edges(catalog)
    edges += infer_edges(catalog, edges, profiler)
    patterns = _catalog_patterns(catalog)
    patterns += detect_patterns(catalog, edges, patterns, profiler)
    stats = {
        "build_ms": round((time.perf_counter() - started) * 1000, 1),
        "declared": sum(e.origin == "declared" for e in edges),
        "catalog": sum(e.origin == "catalog" for e in edges),
        "inferred": sum(e.origin == "inferred" for e in edges),
        "profiled_tables": profiler.tables_read if profiler else 0,
        "profile_complete": profiler.complete if profiler else False,
    }
    graph = RelationshipGraph(catalog=catalog, edges=tuple(edges), patterns=tuple(patterns), stats=stats)
    if cache_file and catalog.signature:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache_file.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(graph.to_dict()))
        tmp.replace(cache_file)
    return graph


def _known_edges(catalog: Catalog) -> list[Edge]:
    """Declared and catalog relationships, with what the catalog says about key uniqueness."""
    out: list[Edge] = []
    seen: set[frozenset[Any]] = set()
    for r in catalog.relationships:
        src, ref = catalog.table(r.table), catalog.table(r.ref_table)
        if src is None or ref is None:
            continue
        edge = Edge(
            table=src.name,
            columns=tuple(r.columns),
            ref_table=ref.name,
            ref_columns=tuple(r.ref_columns),
            origin=r.origin,
            confidence=r.confidence if r.origin == "inferred" else 1.0,
            evidence=r.description,
            ref_unique=_is_unique(ref, r.ref_columns),
            src_unique=_is_unique(src, r.columns),
        )
        if edge.key in seen:
            continue
        seen.add(edge.key)
        out.append(edge)
    return out


def _is_unique(table: Table, columns: Sequence[str]) -> bool:
    """Declared unique: the columns contain the primary key or a unique constraint."""
    cols = {c.lower() for c in columns}
    keys = [table.primary_key, *table.unique]
    return any(k and {c.lower() for c in k} <= cols for k in keys)


def _single_keys(table: Table) -> list[str]:
    keys = [table.primary_key, *table.unique]
    return [k[0] for k in keys if len(k) == 1]


# ---------------------------------------------------------------------------------------------
# profiling


class Profiler:
    """Reads small samples of column values, once per table, under a time budget."""

    def __init__(self, catalog: Catalog, engine: sa.Engine, budget_s: float) -> None:
        self.catalog = catalog
        self.engine = engine
        self.deadline = time.perf_counter() + budget_s
        self.complete = True
        self.tables_read = 0
        self._samples: dict[str, dict[str, set[str]] | None] = {}
        self._keys: dict[tuple[str, str], tuple[set[str], bool, bool] | None] = {}

    @contextmanager
    def _connect(self) -> Iterator[sa.Connection]:
        """A connection whose statements give up after a few seconds: profiling must stay cheap."""
        with self.engine.connect() as conn:
            timeout = {
                "postgresql": "SET statement_timeout = 5000",
                "mysql": "SET SESSION max_execution_time = 5000",
                "mariadb": "SET SESSION max_statement_time = 5",
            }.get("mariadb" if getattr(conn.dialect, "is_mariadb", False) else conn.dialect.name)
            if timeout:
                try:
                    conn.execute(sa.text(timeout))
                except sa.exc.SQLAlchemyError:
                    conn.rollback()
            yield conn

    def _out_of_time(self) -> bool:
        if time.perf_counter() > self.deadline or self.tables_read >= PROFILE_MAX_TABLES:
            self.complete = False
            return True
        return False

    def sample(self, table: Table) -> dict[str, set[str]] | None:
        """Distinct values (as text) of each column among the first SAMPLE_ROWS rows."""
        low = table.name.lower()
        if low in self._samples:
            return self._samples[low]
        if self._out_of_time():
            return None
        cols = [c.name for c in table.columns if c.kind in _INFERABLE_KINDS]
        result: dict[str, set[str]] | None = None
        if cols:
            query = sa.select(*(sa.column(c) for c in cols)).select_from(
                sa.table(table.name, schema=table.schema)
            )
            try:
                with self._connect() as conn:
                    rows = conn.execute(query.limit(SAMPLE_ROWS)).all()
                self.tables_read += 1
                result = {c: set() for c in cols}
                for row in rows:
                    for c, v in zip(cols, row, strict=True):
                        values = result[c]
                        if v is not None and len(values) < SAMPLE_VALUES:
                            values.add(_norm_value(v))
            except sa.exc.SQLAlchemyError as exc:
                log.info("profiling skipped %s: %s", table.name, exc)
        self._samples[low] = result
        return result

    def key_values(self, table: Table, column: str) -> tuple[set[str], bool, bool] | None:
        """(values, complete, unique) of a key candidate, reading at most KEY_VALUES rows."""
        k = (table.name.lower(), column.lower())
        if k in self._keys:
            return self._keys[k]
        if self._out_of_time():
            return None
        query = sa.select(sa.column(column)).select_from(sa.table(table.name, schema=table.schema))
        result = None
        try:
            with self._connect() as conn:
                rows = conn.execute(query.limit(KEY_VALUES + 1)).all()
            self.tables_read += 1
            values = [_norm_value(r[0]) for r in rows if r[0] is not None]
            complete = len(rows) <= KEY_VALUES
            distinct = set(values)
            result = (distinct, complete, len(distinct) == len(values))
        except sa.exc.SQLAlchemyError as exc:
            log.info("profiling skipped %s.%s: %s", table.name, column, exc)
        self._keys[k] = result
        return result

    def contains(self, table: Table, column: str, values: Iterable[str]) -> float | None:
        """Fraction of `values` found in table.column (exactly, for big tables via an IN query)."""
        vals = list(values)
        if not vals:
            return None
        keys = self.key_values(table, column)
        if keys is None:
            return None
        distinct, complete, _ = keys
        hits = sum(v in distinct for v in vals)
        if complete or hits == len(vals):
            return hits / len(vals)
        if self._out_of_time():
            return None
        col = sa.column(column)
        kind = (table.column(column) or Column(column, "")).kind
        # compare in the column's own type, so an index on the key can answer
        if kind in ("integer", "number") and all(re.fullmatch(r"-?\d+", v) for v in vals):
            condition = col.in_([int(v) for v in vals])
        elif kind == "text":
            condition = col.in_(vals)
        else:
            condition = sa.cast(col, sa.String).in_(vals)
        query = (
            sa.select(sa.func.count(sa.distinct(col)))
            .select_from(sa.table(table.name, schema=table.schema))
            .where(condition)
        )
        try:
            with self._connect() as conn:
                found = conn.execute(query).scalar() or 0
            return min(1.0, found / len(vals))
        except sa.exc.SQLAlchemyError:
            return hits / len(vals)


def _norm_value(v: Any) -> str:
    kind = type(v)
    if kind is int:
        return str(v)
    if kind is str:
        return v.strip()
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, float | Decimal) and v == int(v):
        return str(int(v))
    if isinstance(v, bytes):
        return v.hex()
    return str(v).strip()


def _specificity(values: set[str]) -> float:
    """How surprising inclusion in this key is: dense small integers are in every id column."""
    ints = []
    for v in values:
        try:
            ints.append(int(v))
        except ValueError:
            text = [x for x in values if len(x) >= 2]
            return 1.0 if len(text) >= 0.8 * len(values) else 0.5
    if not ints:
        return 0.0
    span = max(ints) - min(ints) + 1
    density = len(ints) / span if span > 0 else 1.0
    return max(0.0, min(1.0, 1.0 - density))


# ---------------------------------------------------------------------------------------------
# inference


@dataclass(frozen=True)
class _Key:
    table: Table
    column: str


class _NameIndex:
    """Every single-column key, indexed by the spellings a referencing column may use."""

    def __init__(self, catalog: Catalog) -> None:
        self.by_flat: dict[str, list[_Key]] = defaultdict(list)  # paperid → paper.paperId
        self.table_key: dict[str, list[_Key]] = defaultdict(list)  # restaurantid → restaurant.id
        self.named_key: dict[str, list[_Key]] = defaultdict(list)  # airportcode → airports.AirportCode
        self.stem_keyword: dict[str, list[_Key]] = defaultdict(list)  # airport → airports.AirportCode
        self.generic_by_prefix: dict[str, list[_Key]] = defaultdict(list)  # k → keyword.id
        self.short_by_letter: dict[str, list[_Key]] = defaultdict(list)  # m → movie.mid
        self.table_pk: dict[str, list[_Key]] = defaultdict(list)  # airline → airlines.uid
        for t in catalog.tables:
            tname = _flat(t.name)
            if len(t.primary_key) == 1:
                for stem in _table_stems(t.name):
                    if len(stem) >= 3:
                        self.table_pk[stem].append(_Key(t, t.primary_key[0]))
            for k in _single_keys(t):
                key = _Key(t, k)
                kflat = _flat(k)
                if not kflat:
                    continue
                self.by_flat[kflat].append(key)
                generic = _is_generic(k)
                for stem in _table_stems(t.name):
                    if len(stem) < 3:
                        continue
                    if generic:
                        self.table_key[stem + kflat].append(key)
                    elif kflat.startswith(stem):
                        self.named_key[kflat].append(key)
                        if kflat[len(stem) :] in KEY_WORDS:
                            self.stem_keyword[stem].append(key)
                if generic:
                    for n in (1, 2, 3):
                        if len(tname) > n:
                            self.generic_by_prefix[tname[:n]].append(key)
                else:
                    suffix = _key_suffix(kflat)
                    if suffix and len(kflat) - len(suffix) <= 3 and tname.startswith(kflat[: -len(suffix)]):
                        self.short_by_letter[kflat[0]].append(key)


def _key_suffix(flat: str) -> str | None:
    return next(
        (w for w in sorted(KEY_WORDS, key=len, reverse=True) if flat.endswith(w) and len(flat) > len(w)), None
    )


def infer_edges(catalog: Catalog, known: Sequence[Edge], profiler: Profiler | None = None) -> list[Edge]:
    """Edges the database does not declare: column-name conventions, checked or found by values."""
    known_keys = {e.key for e in known}
    # columns already used by a known edge on the referencing side are explained; don't re-infer them
    # (a declared key pointing at a non-key, like imdb's cast.msid → copyright.msid, explains nothing)
    explained = {
        (e.table.lower(), tuple(c.lower() for c in e.columns))
        for e in known
        if e.ref_unique and not e.is_self
    }
    index = _NameIndex(catalog)
    candidates: dict[tuple[str, str, str, str], tuple[float, str]] = {}

    def propose(src: Table, col: str, key: _Key, conf: float, why: str) -> None:
        if src.name.lower() == key.table.name.lower():
            return
        ident = (src.name.lower(), col.lower(), key.table.name.lower(), key.column.lower())
        if conf > candidates.get(ident, (0.0, ""))[0]:
            candidates[ident] = (conf, why)

    for src in catalog.tables:
        for c in src.columns:
            if c.kind not in _INFERABLE_KINDS or (src.name.lower(), (c.name.lower(),)) in explained:
                continue
            flat = _flat(c.name)
            if not flat:
                continue
            # 1. the same name as another table's single-column key (paperId → paper.paperId)
            if not _is_generic(c.name):
                for key in index.by_flat.get(flat, ()):
                    if key.table.name.lower() != src.name.lower() and _same_key_parent(src, c.name, key):
                        conf = 0.85 if _is_key_like(c.name) else 0.7
                        propose(src, c.name, key, conf, f"same name as key {key.table.name}.{key.column}")
            # 2. <table>_<key>: restaurant_id → restaurant.id (also a table's own key: a subtype)
            for key in index.table_key.get(flat, ()):
                propose(src, c.name, key, 0.85, f"'{c.name}' names table {key.table.name} and its key")
            # 2b. the bare table name: flights.airline → airlines.uid
            if not (c.primary_key and len(src.primary_key) == 1):
                for key in index.table_pk.get(flat, ()):
                    propose(src, c.name, key, 0.7, f"'{c.name}' names table {key.table.name}")
            if c.primary_key and len(src.primary_key) == 1:
                continue  # a table's own key is no role or abbreviation of another's
            # 3. <role>_<table>_<key>: start_station_id → station.id, citedPaperId → paper.paperId
            for i in range(1, len(flat) - 2):
                suffix = flat[i:]
                for key in index.table_key.get(suffix, ()):
                    propose(src, c.name, key, 0.75, f"'{c.name}' is a role of {key.table.name}")
                for key in index.named_key.get(suffix, ()):
                    propose(src, c.name, key, 0.75, f"'{c.name}' is a role of {key.table.name}.{key.column}")
                # SourceAirport → airports.AirportCode: role + table name, key word left out
                for key in index.stem_keyword.get(suffix, ()):
                    propose(src, c.name, key, 0.6, f"'{c.name}' is a role of {key.table.name}")
            # 4. abbreviations: kid → keyword.id, msid → movie.mid
            if _is_key_like(c.name) and not _is_generic(c.name):
                _propose_abbreviation(src, c.name, index, propose)

    out: list[Edge] = []
    for (s, col, r, rcol), (conf, why) in candidates.items():
        src = catalog.table(s)
        ref = catalog.table(r)
        assert src is not None and ref is not None
        src_col = src.column(col)
        ref_col = ref.column(rcol)
        if src_col is None or ref_col is None:
            continue
        # an integer column holding a text key's digits (SQLite allows it) needs the values to agree
        typed = _kinds_compatible(src_col.kind, ref_col.kind)
        if not typed and {src_col.kind, ref_col.kind} != {"integer", "text"}:
            continue
        evidence = f"name: {why}"
        checked = _check_values(profiler, src, src_col.name, ref, ref_col.name) if profiler else None
        if checked is not None:
            ratio, n = checked
            if ratio < 0.5 or (not typed and ratio < 0.9):
                continue
            conf = min(0.97, conf + 0.1) if ratio >= 0.9 else conf - 0.1
            evidence += f"; values: {ratio:.0%} of {n} sampled values found"
        elif not typed:
            continue
        if conf < MIN_CONFIDENCE:
            continue
        edge = Edge(
            table=src.name,
            columns=(src_col.name,),
            ref_table=ref.name,
            ref_columns=(ref_col.name,),
            origin="inferred",
            confidence=round(conf, 2),
            evidence=evidence,
            ref_unique=True,
            src_unique=_is_unique(src, (src_col.name,)),
        )
        if edge.key not in known_keys:
            known_keys.add(edge.key)
            out.append(edge)
    out = _keep_best_per_column(out)
    if profiler is not None:
        out += _value_edges(catalog, known, out, profiler, known_keys)
    out.sort(key=lambda e: (e.table.lower(), e.columns, e.ref_table.lower()))
    return out


def _same_key_parent(src: Table, column: str, key: _Key) -> bool:
    """For two tables keyed by the same column name, only the child points to the parent."""
    if not _is_unique(src, (column,)):
        return True
    # Both are keyed by `column`: a one-to-one pair. The parent is the one the name stands for.
    flat = _flat(column)
    key_named = any(flat.startswith(s) for s in _table_stems(key.table.name))
    src_named = any(flat.startswith(s) for s in _table_stems(src.name))
    if key_named != src_named:
        return key_named
    return (key.table.row_estimate or 0, key.table.name) > (src.row_estimate or 0, src.name)


def _propose_abbreviation(src: Table, column: str, index: _NameIndex, propose) -> None:  # type: ignore[no-untyped-def]
    words = words_of(column)
    flat = _flat(column)
    suffix = _key_suffix(flat)
    if suffix is None:
        return
    abbr = "".join(words[:-1]) if len(words) > 1 and words[-1] == suffix else flat[: -len(suffix)]
    matches: dict[tuple[str, str], tuple[_Key, float]] = {}
    if len(abbr) <= 3:
        for key in index.generic_by_prefix.get(abbr, ()):
            if _flat(key.column) == suffix and abbr not in _table_stems(key.table.name):
                matches[(key.table.name, key.column)] = (key, 0.55)  # kid → keyword.id
    for key in index.short_by_letter.get(abbr[:1], ()):
        kflat = _flat(key.column)
        if kflat.endswith(suffix) and kflat != flat and _is_subsequence(kflat[: -len(suffix)], abbr):
            matches[(key.table.name, key.column)] = (key, 0.5)  # msid → movie.mid
    matches = {k: v for k, v in matches.items() if v[0].table.name.lower() != src.name.lower()}
    if len(matches) == 1:
        key, conf = next(iter(matches.values()))
        propose(src, column, key, conf, f"'{column}' abbreviates {key.table.name}.{key.column}")


def _is_subsequence(short: str, long: str) -> bool:
    it = iter(long)
    return all(ch in it for ch in short)


def _kinds_compatible(a: str, b: str) -> bool:
    """Could these two columns hold the same key values? (SQLite's untyped columns could hold anything.)"""
    if a == b or "other" in (a, b):
        return True
    return {a, b} <= {"integer", "number"}


def _check_values(
    profiler: Profiler, src: Table, col: str, ref: Table, ref_col: str
) -> tuple[float, int] | None:
    sample = profiler.sample(src)
    if not sample or not sample.get(col):
        return None
    values = sample[col]
    ratio = profiler.contains(ref, ref_col, values)
    if ratio is None:
        return None
    return ratio, len(values)


def _keep_best_per_column(edges: list[Edge]) -> list[Edge]:
    """A column references one key: keep the most confident guess (ties: all of them)."""
    best: dict[tuple[str, str], float] = {}
    for e in edges:
        k = (e.table.lower(), e.columns[0].lower())
        best[k] = max(best.get(k, 0.0), e.confidence)
    return [e for e in edges if e.confidence >= best[(e.table.lower(), e.columns[0].lower())] - 1e-9]


def _value_edges(
    catalog: Catalog,
    known: Sequence[Edge],
    named: Sequence[Edge],
    profiler: Profiler,
    known_keys: set[frozenset[Any]],
) -> list[Edge]:
    """Edges found by values alone: A.x's sampled values all appear in the (data-)unique B.y."""
    used = {(e.table.lower(), e.columns[0].lower()) for e in [*known, *named] if len(e.columns) == 1}
    name_count: dict[str, int] = defaultdict(int)
    for t in catalog.tables:
        for c in t.columns:
            name_count[_flat(c.name)] += 1
    # key candidates: declared single keys, and columns unique in the data that look like keys or
    # share their name with another table's column (list.classroom → teachers.classroom)
    targets: list[tuple[Table, str, bool, float]] = []
    values_of: list[set[str]] = []
    for t in catalog.tables:
        declared = set(_single_keys(t))
        names = set(declared)
        for c in t.columns:
            if not _is_generic(c.name) and (_is_key_like(c.name) or name_count[_flat(c.name)] > 1):
                names.add(c.name)
        for name in sorted(names):
            col = t.column(name)
            if col is None or col.kind not in _INFERABLE_KINDS:
                continue
            kv = profiler.key_values(t, name)
            if kv is None:
                continue
            values, complete, unique = kv
            if not unique or len(values) < 3 or (not complete and name not in declared):
                continue
            if not complete:
                continue
            targets.append((t, col.name, name in declared, _specificity(values)))
            values_of.append(values)
    index: dict[str, list[int]] = defaultdict(list)
    for i, values in enumerate(values_of):
        for v in values:
            index[v].append(i)
    out: list[Edge] = []
    for src in catalog.tables:
        sample = profiler.sample(src)
        if not sample:
            continue
        for c in src.columns:
            values = sample.get(c.name) or set()
            if len(values) < 3 or (src.name.lower(), c.name.lower()) in used:
                continue
            if c.primary_key and len(src.primary_key) == 1:
                continue  # a table's own key referencing another is found by name (subtypes) or declared
            hits: dict[int, int] = defaultdict(int)
            for v in values:
                for i in index.get(v, ()):
                    hits[i] += 1
            best: list[tuple[float, int]] = []
            for i, n in hits.items():
                t, col, declared_key, spec = targets[i]
                if t.name.lower() == src.name.lower() or n < 0.95 * len(values):
                    continue
                ref_col = t.column(col)
                if ref_col is None or not _kinds_compatible(c.kind, ref_col.kind):
                    continue
                same_name = _flat(col) == _flat(c.name)
                names_table = any(s in _flat(c.name) for s in _table_stems(t.name) if len(s) >= 3)
                # a column merely unique in the data is a key only when the names agree too
                # (invoices.billing_postal_code's values are customers' postal codes, but no key)
                if not declared_key and not same_name and not (names_table and _is_key_like(col)):
                    continue
                if spec < 0.5 and not _is_key_like(c.name) and not same_name:
                    continue  # 1..N ids contain any small integer column
                best.append((0.55 + 0.3 * max(spec, 0.5 if same_name else 0.0), i))
            if len(best) > 1:
                # several tables are keyed by these values (every yelp table has a unique
                # business_id): the one the column's name names is the parent (→ business)
                flat = _flat(c.name)
                named_ones = [
                    b
                    for b in best
                    if any(s in flat for s in _table_stems(targets[b[1]][0].name) if len(s) >= 3)
                ]
                best = named_ones if len(named_ones) == 1 else best
            if len(best) != 1:
                continue  # no target, or several equally plausible ones
            conf, i = best[0]
            t, col, _, _ = targets[i]
            edge = Edge(
                table=src.name,
                columns=(c.name,),
                ref_table=t.name,
                ref_columns=(col,),
                origin="inferred",
                confidence=round(conf, 2),
                evidence=f"values: {hits[i]} of {len(values)} sampled values of {src.name}.{c.name} "
                f"are in {t.name}.{col}, which is unique",
                ref_unique=True,
                src_unique=_is_unique(src, (c.name,)),
            )
            if edge.key not in known_keys and conf >= MIN_CONFIDENCE:
                known_keys.add(edge.key)
                out.append(edge)
    return out


# ---------------------------------------------------------------------------------------------
# patterns


def _catalog_patterns(catalog: Catalog) -> list[Pattern]:
    return [p for p in catalog.patterns if catalog.table(p.root) is not None]


def detect_patterns(
    catalog: Catalog, edges: Sequence[Edge], given: Sequence[Pattern], profiler: Profiler | None = None
) -> list[Pattern]:
    """Bridges, lookups, subtypes and the stars/snowflakes they form, read off the edges.

    Detection is conservative: a wrong "lookup" would forbid a legitimate path, a wrong "bridge"
    would force a detour. The catalog can always declare what detection misses.
    """
    trusted = [e for e in edges if not e.is_self and (e.origin != "inferred" or e.confidence >= 0.7)]
    outgoing: dict[str, list[Edge]] = defaultdict(list)
    incoming: dict[str, list[Edge]] = defaultdict(list)
    for e in trusted:
        outgoing[e.table.lower()].append(e)
        incoming[e.ref_table.lower()].append(e)
    declared_roots = {(p.kind, p.root.lower()) for p in given}
    claimed = {p.root.lower() for p in given} | {t.lower() for p in given for t in p.tables}
    out: list[Pattern] = []

    # many-to-many: a table that exists to pair rows of two others
    bridges: set[str] = set()
    for t in catalog.tables:
        low = t.name.lower()
        outs = outgoing.get(low, [])
        sides = sorted({e.ref_table for e in outs}, key=str.lower)
        if len(sides) != 2 or incoming.get(low) or low in claimed:
            continue
        if any(e.src_unique for e in outs):
            continue
        fk_cols = {c.lower() for e in outs for c in e.columns}
        surrogate = {c.lower() for c in t.primary_key} if len(t.primary_key) == 1 else set()
        payload = [c for c in t.columns if c.name.lower() not in fk_cols | surrogate]
        if len(payload) > 2:
            continue
        bridges.add(low)
        if ("many_to_many", low) not in declared_roots:
            out.append(Pattern("many_to_many", t.name, tuple(sides), "detected", "pairs rows of two tables"))

    # subtype: a table keyed by (a unique reference to) its parent's key
    subtypes: dict[str, list[Edge]] = defaultdict(list)
    for e in trusted:
        if e.src_unique and e.ref_unique and e.table.lower() not in bridges:
            parent = catalog.table(e.ref_table)
            if parent is not None and catalog.table(e.table) is not None:
                subtypes[parent.name].append(e)
    for parent, links in sorted(subtypes.items()):
        if ("subtype", parent.lower()) in declared_roots:
            continue
        children = tuple(sorted({e.table for e in links}))
        note = "one-to-one extensions"
        if len(children) > 1 and profiler is not None and _disjoint(profiler, catalog, links):
            note = f"{EXCLUSIVE}: each {parent} row is at most one of them (their keys never overlap)"
        out.append(Pattern("subtype", parent, children, "detected", note))

    # lookup: a small code table many others point at, pointing nowhere itself
    for t in catalog.tables:
        low = t.name.lower()
        if low in claimed or low in bridges or outgoing.get(low):
            continue
        referrers = {e.table.lower() for e in incoming.get(low, [])}
        if len(referrers) < 2 or len(t.columns) > 4:
            continue
        named = bool(set(words_of(t.name)) & LOOKUP_WORDS)
        # keyed by a text value (a city name, a country code) rather than a surrogate id
        natural_key = len(t.primary_key) == 1 and (t.column(t.primary_key[0]) or t.columns[0]).kind == "text"
        text_cols = [c for c in t.columns if c.kind == "text" and not c.primary_key]
        descriptive = len(text_cols) == len(t.columns) - len(t.primary_key)  # no measures of its own
        if not text_cols or not (named or (natural_key and descriptive)):
            continue
        out.append(
            Pattern(
                "lookup", t.name, (), "detected", "code table referenced by " + ", ".join(sorted(referrers))
            )
        )
    return out


def _disjoint(profiler: Profiler, catalog: Catalog, links: Sequence[Edge]) -> bool:
    """Do the children's references to the parent never share a value (an exclusive split)?"""
    seen: set[str] = set()
    for e in links:
        table = catalog.table(e.table)
        kv = profiler.key_values(table, e.columns[0]) if table is not None and len(e.columns) == 1 else None
        if kv is None or len(kv[0]) < 5:
            return False
        if seen & kv[0]:
            return False
        seen |= kv[0]
    return True


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name)[:80] or "db"
