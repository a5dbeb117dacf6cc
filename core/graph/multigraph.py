"""The relationship multigraph: `Edge` (one join condition) and `RelationshipGraph`.

Two foreign keys between the same two tables are two edges, because they are two different
questions (flights.source_airport and flights.dest_airport → airports). The graph keeps its
patterns (bridges, lookups, stars, snowflakes, subtypes, role tables, typed facts, parallel
paths) indexed the way view synthesis asks: lookups, bridges per table pair, the branch parent of
each star/snowflake/subtype member, role tables and the subtypes of each supertype.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from core.catalog import Catalog, Origin, Pattern
from core.graph.names import KEY_WORDS, words_of

# Part of the cache key: bump it when inference or detection changes, so cached graphs are rebuilt.
GRAPH_VERSION = 8  # 8: keys found in the data, owners decide direction and ties (core/graph/owners.py)
EXCLUSIVE = "exclusive"  # a subtype pattern whose children never share a parent row
OVERLAPPING = "overlapping"  # one whose children do share parent rows (in the data)
SHARED_KEY_EXTRA = 0.05  # a shared-key edge costs a little more than the real edges it stands for
SUBTYPE_KINDS = ("subtype", "typed_fact")


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
    # a shared-key edge: table references supertype `via`, whose key ref_table (a subtype) shares
    via: str = ""
    # a role copy made by view synthesis: its name, and (column of `table`, code) in the join
    label: str = ""
    where: tuple[tuple[str, str], ...] = ()

    @property
    def cost(self) -> float:
        """Steiner weight: one table joined = 1; declared edges before inferred ones (Lucy C5 + ours)."""
        extra = SHARED_KEY_EXTRA if self.via else 0.0
        if self.origin != "inferred":
            return 1.0 + extra
        return 1.15 + 0.5 * (1.0 - self.confidence) + extra

    @property
    def is_self(self) -> bool:
        return self.table.lower() == self.ref_table.lower()

    @property
    def key(self) -> frozenset[frozenset[tuple[str, str]]]:
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
        if self.label:
            return self.label
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
        where = "".join(f" AND {self.table}.{c} = '{v}'" for c, v in self.where)
        return f"{left} → {right}{where} [{how}]"


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
        self._descriptions: dict[str, str] = {}  # describe_table's texts, by lower-case table name
        # (table, column) of every column that refers to another table (lower case)
        self.reference_columns: frozenset[tuple[str, str]] = frozenset(
            (e.table.lower(), c.lower()) for e in self.edges if not e.is_self for c in e.columns
        )
        self.lookups: frozenset[str] = frozenset(p.root.lower() for p in self.patterns if p.kind == "lookup")
        bridges: dict[frozenset[str], list[str]] = defaultdict(list)
        for p in self.patterns:
            if p.kind == "many_to_many" and len(p.tables) == 2:
                bridges[frozenset(t.lower() for t in p.tables)].append(p.root.lower())
        for p in self.patterns:
            if p.kind == "role" and len(p.tables) == 2:
                bridges[frozenset(t.lower() for t in p.tables)].append(p.root.lower())
        self.bridges: dict[frozenset[str], list[str]] = dict(bridges)
        self.branch_parent: dict[str, tuple[str, Pattern]] = {}
        for p in self.patterns:
            if p.kind in ("star", "snowflake", *SUBTYPE_KINDS):
                for child, parent in self._branch(p).items():
                    self.branch_parent.setdefault(child, (parent, p))
        # parents whose subtypes are mutually exclusive: never join two of them to each other
        self.exclusive: frozenset[str] = frozenset(
            p.root.lower()
            for p in self.patterns
            if p.kind in SUBTYPE_KINDS and (p.origin == "catalog" or p.description.startswith(EXCLUSIVE))
        )
        # role tables (lower-case name → pattern) and each supertype's subtypes
        self.roles: dict[str, Pattern] = {p.root.lower(): p for p in self.patterns if p.kind == "role"}
        subtypes: dict[str, list[str]] = defaultdict(list)
        for p in self.patterns:
            if p.kind in SUBTYPE_KINDS:
                subtypes[p.root.lower()].extend(t.lower() for t in p.tables)
        self.subtypes: dict[str, tuple[str, ...]] = {k: tuple(dict.fromkeys(v)) for k, v in subtypes.items()}
        self.parallel: tuple[Pattern, ...] = tuple(p for p in self.patterns if p.kind == "parallel_path")
        from_root: dict[str, list[int]] = defaultdict(list)
        for i, p in enumerate(self.parallel):
            from_root[p.root.lower()].append(i)
        self._parallel_from: dict[str, tuple[int, ...]] = {k: tuple(v) for k, v in from_root.items()}
        # each table's patterns (as root or member), asked for every table a view joins: a scan of
        # all patterns per table cost milliseconds on a warehouse's graph (`core.bench linking`)
        by_table: dict[str, list[Pattern]] = defaultdict(list)
        for p in self.patterns:
            for name in dict.fromkeys([p.root.lower(), *(t.lower() for t in p.tables)]):
                by_table[name].append(p)
        self._patterns_of: dict[str, tuple[Pattern, ...]] = {k: tuple(v) for k, v in by_table.items()}

    # -- lookups ------------------------------------------------------------------------------

    def neighbors(self, table: str) -> dict[str, list[Edge]]:
        """Other tables joined to `table`, each with its edges (lower-case names)."""
        return {k: v for k, v in self._adjacency.get(table.lower(), {}).items() if k != table.lower()}

    def edges_between(self, a: str, b: str) -> list[Edge]:
        return list(self._adjacency.get(a.lower(), {}).get(b.lower(), []))

    def self_edges(self, table: str) -> list[Edge]:
        return self.edges_between(table, table)

    def parallel_from(self, roots: Iterable[str]) -> list[Pattern]:
        """The parallel paths whose root is one of `roots` (lower case), in the graph's order: a
        view looks up those of its own tables, not all of a warehouse's thousands."""
        found = {i for root in roots for i in self._parallel_from.get(root, ())}
        return [self.parallel[i] for i in sorted(found)]

    def patterns_of(self, table: str) -> list[Pattern]:
        """The patterns `table` is the root or a member of, in the graph's order."""
        return list(self._patterns_of.get(table.lower(), ()))

    def describe_table(self, table: str) -> str:
        """Pattern roles of a table, for the trace: 'lookup', 'bridge of client↔resource_pool'...

        Remembered per table: every join a view makes asks it of the joined table, and a
        warehouse's hub belongs to a thousand patterns (a millisecond a call, `core.bench linking`).
        The graph's patterns never change once built, so neither does the text.
        """
        low = table.lower()
        text = self._descriptions.get(low)
        if text is None:
            text = self._descriptions[low] = self._describe(low)
        return text

    def neighbor_names(self, table: str) -> list[str]:
        """The keys of `neighbors(table)`, in its order, without copying each one's edges."""
        low = table.lower()
        return [k for k in self._adjacency.get(low, ()) if k != low]

    def _describe(self, low: str) -> str:
        out = []
        for p in self.patterns_of(low):
            src = "catalog" if p.origin == "catalog" else "detected"
            if p.kind == "lookup":
                out.append(f"lookup table ({src})")
            elif p.kind == "many_to_many" and p.root.lower() == low:
                out.append(f"bridge of many-to-many {' ↔ '.join(p.tables)} ({src})")
            elif p.kind == "many_to_many":
                out.append(f"many-to-many {' ↔ '.join(p.tables)} through {p.root} ({src})")
            elif p.kind == "role" and p.root.lower() == low:
                codes = ", ".join(f"{c} {m}" if m != c else c for c, m in p.codes[:8])
                out.append(
                    f"role table: {' ↔ '.join(p.tables)}, the role in {p.column}"
                    + (f" ({codes})" if codes else "")
                    + f" ({src})"
                )
            elif p.kind == "role":
                out.append(f"plays roles through {p.root} ({src})")
            elif p.kind == "typed_fact" and p.root.lower() == low:
                out.append(f"typed fact: each row is one of {', '.join(p.tables)} ({src})")
            elif p.kind == "typed_fact":
                out.append(f"type of {p.root} (typed fact, {src})")
            elif p.kind == "subtype" and p.root.lower() == low:
                out.append(f"supertype of {', '.join(p.tables)} ({src})")
            elif p.kind == "subtype":
                out.append(f"subtype of {p.root}, sharing its key ({src})")
            elif p.kind == "parallel_path" and p.root.lower() == low:
                out.append(f"reaches {p.tables[0]} directly and through {p.tables[1]} ({src})")
            elif p.kind == "parallel_path":
                continue
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
        cache: dict[tuple[frozenset[str], frozenset[str]], RelationshipGraph]
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
            Edge(
                **{
                    **e,
                    "columns": tuple(e["columns"]),
                    "ref_columns": tuple(e["ref_columns"]),
                    "where": tuple(tuple(w) for w in e.get("where") or ()),
                }
            )
            for e in data["edges"]
        )
        patterns = tuple(
            Pattern(
                **{**p, "tables": tuple(p["tables"]), "codes": tuple(tuple(c) for c in p.get("codes") or ())}
            )
            for p in data["patterns"]
        )
        return cls(catalog=catalog, edges=edges, patterns=patterns, stats=dict(data.get("stats") or {}))
