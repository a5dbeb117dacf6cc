"""View synthesis: join the tables a question needs into one view the SQL writer can query.

DANKE (kws-text-to-sql §3, §4.4) joins the needed tables along a Steiner tree of the foreign-key
graph; Lucy (§3.3) adds the constraints that make the joins *right*, not just connected:

- C3  a many-to-many relation goes through its bridge table;
- C4  a lookup table is only ever a leaf, never the connector between two other tables;
- C5  the fewest extra tables — here: the minimum-cost tree, where declared and catalog edges cost
      1 and inferred edges a little more, so declared edges win ties (exact Dreyfus–Wagner up to
      8 requested tables, the shortest-path heuristic beyond);
- inner tables of a star or snowflake (and subtypes) are LEFT JOINed along their branch.

Two foreign keys between the same tables are two roles, and the view carries one aliased copy
per role (`source_airport_city`, `dest_airport_city`) so the SQL writer picks the role, not the
join. A connector table that only passes its key through (paper between paper_dataset and
paper_keyphrase) is left out and its referrers joined on the shared key. The view exposes every
joined table's primary key and knows its grain, so counts over a fanned-out join can use
COUNT(DISTINCT key) and the generator is told when the view repeats rows.
"""

from __future__ import annotations

import heapq
import itertools
import math
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from sqlglot import exp

from core.catalog import Catalog, Column, Table
from core.graph import Edge, RelationshipGraph, build_graph

EXACT_LIMIT = 8  # requested tables up to which the tree is provably minimal
MAX_ROLES = 8  # copies of one table per parent, at most
MAX_ALIASES = 40  # role copies stop multiplying subtrees beyond this
BRIDGE_BONUS = 0.05  # a bridge path wins ties against other connectors of the same length
FORCED = 0.01  # weight of a bridge edge when C3 forces the bridge in

_SAFE = re.compile(r"^[a-z_][a-z0-9_]*$")
# Words that must be quoted as identifiers in at least one supported dialect.
_RESERVED_WORDS = """
    all alter analyse analyze and any array as asc asymmetric authorization between binary both by
    case cast check collate column condition constraint create cross current_date current_role
    current_time current_timestamp current_user database databases default deferrable delete desc
    distinct do drop else end except exists false fetch for foreign freeze from full function grant
    group groups having ilike in index initially inner insert intersect interval into is isnull join
    key keys lateral leading left like limit localtime localtimestamp match natural not notnull null
    of offset on only or order outer over overlaps partition placing primary range rank read
    references returning right row rows schema select session_user show similar some symmetric table
    tablesample then to trailing true union unique update usage user using values variadic verbose
    when where window with
"""
RESERVED = frozenset(_RESERVED_WORDS.split())


# ---------------------------------------------------------------------------------------------
# the view


@dataclass(frozen=True)
class ViewColumn:
    name: str  # column name inside the view, e.g. client_name
    alias: str  # alias of the table instance it comes from
    table: str
    column: str
    type: str = ""
    kind: str = "other"
    description: str = ""
    primary_key: bool = False  # part of its table's primary key (COUNT(DISTINCT ...) over a fan-out)


@dataclass(frozen=True)
class JoinStep:
    """Join `table AS alias` onto the view built so far."""

    alias: str
    table: str
    kind: str  # "inner" | "left"
    on: tuple[tuple[str, str], ...]  # (existing_alias.column, alias.column)
    origin: str = "declared"  # declared | catalog | inferred
    reason: str = ""
    role: str | None = None
    schema: str | None = None
    parent: str = ""  # alias this step joins onto
    confidence: float = 1.0
    fans_out: bool = False  # repeats the rows joined so far (one-to-many)
    determines_parent: bool = False  # each row of this table matches at most one parent row
    why: str = ""  # why the table is in the view: requested, connector, bridge, role, lookup...


@dataclass(frozen=True)
class View:
    root_alias: str
    root_table: str
    steps: tuple[JoinStep, ...] = ()
    columns: tuple[ViewColumn, ...] = ()
    fans_out: bool = False
    name: str = "v"
    notes: tuple[str, ...] = field(default_factory=tuple)
    root_schema: str | None = None
    requested: tuple[str, ...] = ()
    grain: tuple[str, ...] = ()  # aliases whose keys identify a row
    cost: float = 0.0
    method: str = ""  # how the tree was found: exact / approximate / single table
    dropped: tuple[str, ...] = ()  # requested tables that could not be joined

    @property
    def tables(self) -> list[str]:
        return [self.root_table, *(s.table for s in self.steps)]

    @property
    def single_table(self) -> bool:
        return not self.steps

    @property
    def aliases(self) -> dict[str, str]:
        """alias → table."""
        return {self.root_alias: self.root_table, **{s.alias: s.table for s in self.steps}}

    def column(self, name: str) -> ViewColumn | None:
        low = name.lower()
        return next((c for c in self.columns if c.name.lower() == low), None)

    def join_edges(self) -> set[frozenset[tuple[str, str]]]:
        """Join conditions as unordered (table, column) pairs, lower case (what the benchmark compares)."""
        tables = self.aliases
        out = set()
        for s in self.steps:
            for left, right in s.on:
                la, lc = left.split(".", 1)
                ra, rc = right.split(".", 1)
                out.add(frozenset(((tables[la].lower(), lc.lower()), (tables[ra].lower(), rc.lower()))))
        return out

    def select(self, dialect: str | None = None, columns: Sequence[str] | None = None) -> exp.Select:
        """The SELECT that defines the view, over base tables.

        `columns` keeps only those view columns, and drops LEFT JOINs that neither add rows nor
        feed a kept column (a many-to-one LEFT JOIN never changes the row count).
        """
        keep = self.columns if columns is None else [c for c in self.columns if c.name in set(columns)]
        steps = self.needed_steps({c.alias for c in keep}) if columns is not None else list(self.steps)
        query = exp.select(
            *(
                column_expr(self, c.alias, c.column, dialect).as_(_ident(c.name, dialect, alias=True))
                for c in keep
            )
        )
        query.set("from_", self.from_expr(dialect))
        query.set("joins", self.join_exprs(steps, dialect))
        return query

    def from_expr(self, dialect: str | None = None) -> exp.From:
        return exp.From(this=table_expr(self.root_table, self.root_schema, self.root_alias, dialect))

    def join_exprs(self, steps: Sequence[JoinStep], dialect: str | None = None) -> list[exp.Join]:
        joins = []
        for step in steps:
            cond = exp.and_(
                *(
                    exp.EQ(
                        this=column_expr(self, *left.split(".", 1), dialect),
                        expression=column_expr(self, *right.split(".", 1), dialect),
                    )
                    for left, right in step.on
                )
            )
            side = "LEFT" if step.kind == "left" else None
            joins.append(
                exp.Join(this=table_expr(step.table, step.schema, step.alias, dialect), on=cond, side=side)
            )
        return joins

    def needed_steps(self, used_aliases: set[str]) -> list[JoinStep]:
        """Steps to keep when only `used_aliases` are read: every INNER or row-multiplying join,
        and LEFT joins on the way to a used alias."""
        children: dict[str, list[JoinStep]] = {}
        for s in self.steps:
            children.setdefault(s.parent, []).append(s)
        keep: set[str] = set()

        def visit(step: JoinStep) -> bool:
            needed = step.kind != "left" or step.fans_out or step.alias in used_aliases
            for child in children.get(step.alias, []):
                needed = visit(child) or needed
            if needed:
                keep.add(step.alias)
            return needed

        for s in children.get(self.root_alias, []):
            visit(s)
        return [s for s in self.steps if s.alias in keep]

    def explain(self) -> list[str]:
        """What the trace shows: the tables, each join and why, the grain — for a person debugging."""
        if self.single_table:
            lines = [f"view = table {self.root_table} (no join needed)"]
            return [*lines, *self.notes]
        requested = {t.lower() for t in self.requested}
        added = sorted({s.table for s in self.steps if s.table.lower() not in requested} - {self.root_table})
        lines = [
            f"view {self.name}: {len(self.aliases)} table instances, cost {self.cost:g} ({self.method})",
            f"requested: {', '.join(self.requested)}" + (f"; added: {', '.join(added)}" if added else ""),
            f"FROM {self.root_table}"
            + (f" AS {self.root_alias}" if self.root_alias != self.root_table else ""),
        ]
        for s in self.steps:
            on = " AND ".join(f"{a} = {b}" for a, b in s.on)
            target = s.table + (f" AS {s.alias}" if s.alias != s.table else "")
            why = "; ".join(
                x for x in (s.reason, s.why, "repeats rows (one-to-many)" if s.fans_out else "") if x
            )
            lines.append(f"{s.kind.upper()} JOIN {target} ON {on} — {why}")
        lines.append(grain_text(self))
        return [*lines, *self.notes]


# ---------------------------------------------------------------------------------------------
# identifiers


def _needs_quotes(name: str, dialect: str | None) -> bool:
    low = name.lower()
    if low in RESERVED or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
        return True
    if name == low:
        return False
    if dialect is None:
        return True
    from sqlglot.dialects.dialect import Dialect, NormalizationStrategy

    strategy = Dialect.get_or_raise(dialect).NORMALIZATION_STRATEGY
    if strategy == NormalizationStrategy.LOWERCASE:
        return True
    if strategy == NormalizationStrategy.UPPERCASE:
        return name != name.upper()
    return False


def _ident(name: str, dialect: str | None, alias: bool = False) -> exp.Identifier:
    quoted = _needs_quotes(name, dialect) if not alias else not _SAFE.match(name) or name in RESERVED
    return exp.Identifier(this=name, quoted=quoted)


def column_expr(view: View, alias: str, column: str, dialect: str | None) -> exp.Column:
    """`alias.column` of a table instance of the view, quoted only where the dialect needs it."""
    table = view.aliases.get(alias, alias)
    qualifier = _ident(table, dialect) if alias == table else _ident(alias, dialect, alias=True)
    return exp.Column(this=_ident(column, dialect), table=qualifier)


def table_expr(table: str, schema: str | None, alias: str, dialect: str | None) -> exp.Table:
    node = exp.Table(this=_ident(table, dialect), db=_ident(schema, dialect) if schema else None)
    if alias != table:
        node.set("alias", exp.TableAlias(this=_ident(alias, dialect, alias=True)))
    return node


def _safe_name(text: str) -> str:
    """A lower-case identifier (alias or view column name); reserved words are quoted where used."""
    name = re.sub(r"[^a-z0-9_]+", "_", text.lower()).strip("_") or "t"
    return "t_" + name if name[0].isdigit() else name


# ---------------------------------------------------------------------------------------------
# minimum-cost tree (Steiner) over the table graph


@dataclass
class _Tree:
    nodes: list[str]
    pairs: list[tuple[str, str]]
    cost: float
    method: str
    candidates: int = 0


def steiner_tree(
    weights: Mapping[str, Mapping[str, float]],
    terminals: Sequence[str],
    blocked: frozenset[str] | set[str] = frozenset(),
    override: Mapping[tuple[str, str], float] | None = None,
    exact_limit: int = EXACT_LIMIT,
) -> tuple[_Tree, list[str]]:
    """Minimum-weight tree connecting `terminals` (and the terminals it cannot reach).

    Exact (Dreyfus–Wagner) up to `exact_limit` terminals, on the nodes that can lie on an optimal
    tree: v is kept only if its distances to its two nearest terminals sum to at most the cost of
    a known tree (a Steiner node of degree ≥ 2 lies on a path between two terminals).
    """
    override = override or {}
    labels, cells, bound = _two_nearest(weights, terminals, blocked, override)
    reach = [t for t in terminals if cells[t] == cells[terminals[0]]]
    unreachable = [t for t in terminals if t not in reach]
    if len(reach) == 1:
        return _Tree([reach[0]], [], 0.0, "single table", 1), unreachable
    # a Steiner node of degree ≥ 2 lies on a path between two terminals: d1 + d2 ≤ any tree's cost
    reach_set = set(reach)
    candidates = set(reach) | {
        v
        for v, ls in labels.items()
        if len(ls) == 2 and ls[0][1] in reach_set and ls[0][0] + ls[1][0] <= bound[cells[reach[0]]] + 1e-9
    }
    graph = _reduced_graph(weights, candidates, set(reach), override)
    order = reach + sorted(set(graph) - set(reach))
    sparse = _Sparse(graph, order)
    if len(reach) <= exact_limit:
        pairs = _dreyfus_wagner(sparse, len(reach))
        method = "exact"
    else:
        pairs = _shortest_path_heuristic(sparse, len(reach))
        method = "approximate"
    index = {n: i for i, n in enumerate(order)}
    expanded = [p for i, j in pairs for p in itertools.pairwise(graph[order[i]][order[j]][1])]
    nodes, tree_pairs, cost = _cleanup(expanded, weights, override, set(reach))
    tree = _Tree(
        nodes=sorted(nodes, key=lambda n: (n not in index or index[n] >= len(reach), index.get(n, 0), n)),
        pairs=tree_pairs,
        cost=round(cost, 4),
        method=method,
        candidates=len(candidates),
    )
    return tree, unreachable


def _two_nearest(
    weights: Mapping[str, Mapping[str, float]],
    terminals: Sequence[str],
    blocked: frozenset[str] | set[str],
    override: Mapping[tuple[str, str], float],
) -> tuple[dict[str, list[tuple[float, str]]], dict[str, str], dict[str, float]]:
    """Each table's nearest and second-nearest distinct terminals, in one Dijkstra pass.

    A table reached from two terminals closes a path between them; once those paths connect all
    terminals their total is the cost of a real tree — an upper bound — and the search stops at
    that distance, since no farther table can be on an optimal tree. Returns the labels, each
    terminal's component (terminals that can be joined at all) and the bound per component.
    """
    labels: dict[str, list[tuple[float, str]]] = {}
    parent = {t: t for t in terminals}
    total = dict.fromkeys(terminals, 0.0)

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    groups = len(set(terminals))
    bound = math.inf
    heap = [(0.0, t, t) for t in terminals]
    heapq.heapify(heap)
    while heap:
        d, u, t = heapq.heappop(heap)
        if d > bound:
            break
        mine = labels.get(u)
        if mine is None:
            labels[u] = [(d, t)]
        elif len(mine) == 1 and mine[0][1] != t:
            mine.append((d, t))
        else:
            continue
        for v, w in weights.get(u, {}).items():
            if v in blocked:
                continue
            dv = d + override.get((u, v), w)
            theirs = labels.get(v)
            if theirs is not None:
                # a path from t through u and v to v's nearest terminal: join their groups
                a, b = find(t), find(theirs[0][1])
                if a != b:
                    parent[a] = b
                    total[b] += total.pop(a) + dv + theirs[0][0]
                    groups -= 1
                    if groups == 1:
                        bound = total[b]
                if len(theirs) == 2 or theirs[0][1] == t:
                    continue
            heapq.heappush(heap, (dv, v, t))
    cells = {t: find(t) for t in terminals}
    bounds = {root: total[root] for root in set(cells.values())}
    # Mehlhorn's tighter bound: the MST of terminals linked across Voronoi cell borders
    links = []
    for u, ls in labels.items():
        du, tu = ls[0]
        for v, w in weights.get(u, {}).items():
            theirs = labels.get(v)
            if theirs is not None and v not in blocked and tu < theirs[0][1]:
                links.append((du + override.get((u, v), w) + theirs[0][0], tu, theirs[0][1]))
    parent = {t: t for t in terminals}
    mst = dict.fromkeys(terminals, 0.0)
    for w, a, b in sorted(links):
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[ra] = rb
            mst[rb] += mst.pop(ra) + w
    for t in terminals:
        root = find(t)
        if (
            root == t
            and cells[t] in bounds
            and all(cells[x] == cells[t] for x in terminals if find(x) == root)
        ):
            bounds[cells[t]] = min(bounds[cells[t]], mst[root])
    return labels, cells, bounds


def _reduced_graph(
    weights: Mapping[str, Mapping[str, float]],
    nodes: set[str],
    keep: set[str],
    override: Mapping[tuple[str, str], float],
) -> dict[str, dict[str, tuple[float, tuple[str, ...]]]]:
    """The subgraph on `nodes`, reduced without changing the optimum: non-terminal leaves removed
    (no optimal tree ends in one) and chains of degree-2 tables contracted into one weighted edge
    that remembers its path. Schemas are tree-like, so this shrinks the all-pairs step a lot."""
    g: dict[str, dict[str, tuple[float, tuple[str, ...]]]] = {u: {} for u in nodes}
    for u in nodes:
        for v, wt in weights.get(u, {}).items():
            if v in nodes and v != u:
                g[u][v] = (override.get((u, v), wt), (u, v))
    changed = True
    while changed:
        changed = False
        for n in sorted(g):
            if n in keep or n not in g:
                continue
            nbrs = g[n]
            if len(nbrs) == 2:
                (a, (wa, pa)), (b, (wb, pb)) = sorted(nbrs.items())
                path = (*pa[::-1], *pb[1:])
                if wa + wb < g[a].get(b, (math.inf, ()))[0]:
                    g[a][b] = (wa + wb, path)
                    g[b][a] = (wa + wb, path[::-1])
            elif len(nbrs) > 2:
                continue
            for v in nbrs:
                del g[v][n]
            del g[n]
            changed = True
    return g


class _Sparse:
    """The reduced candidate graph as arrays, for vectorised shortest-path relaxation.

    Dreyfus–Wagner's relaxation step, dp[S][v] = min_u g[S][u] + dist(u, v), is done as
    Bellman–Ford over the edge list for all subsets S of one size at once, instead of through an
    all-pairs distance matrix: O(edges) per round rather than O(tables²) memory and O(tables³) time.
    """

    def __init__(self, graph: Mapping[str, Mapping[str, tuple[float, tuple[str, ...]]]], order: list[str]):
        index = {n: i for i, n in enumerate(order)}
        edges = sorted((index[v], index[u], wt) for u, nbrs in graph.items() for v, (wt, _) in nbrs.items())
        self.n = len(order)
        self.dst = np.array([e[0] for e in edges], dtype=np.int64)
        self.src = np.array([e[1] for e in edges], dtype=np.int64)
        self.w = np.array([e[2] for e in edges], dtype=float)
        self.targets, self.starts = np.unique(self.dst, return_index=True)
        self.incoming: dict[int, list[tuple[int, float]]] = {}
        for d, s, wt in edges:
            self.incoming.setdefault(d, []).append((s, wt))

    def relax(self, g: np.ndarray) -> np.ndarray:
        """Row-wise shortest distances from the potentials `g` (shape: rows × tables)."""
        d = g.copy()
        if not len(self.src):
            return d
        for _ in range(self.n):
            best = np.minimum.reduceat(d[:, self.src] + self.w, self.starts, axis=1)
            current = d[:, self.targets]
            better = best < current - 1e-12
            if not better.any():
                break
            d[:, self.targets] = np.where(better, best, current)
        return d

    def trace(self, d: np.ndarray, g: np.ndarray, v: int) -> tuple[list[tuple[int, int]], int]:
        """Walk back from v along tight edges to where the potential was set; (edges, that node)."""
        edges = []
        while d[v] < g[v] - 1e-9:
            u = next(s for s, wt in self.incoming[v] if abs(d[s] + wt - d[v]) < 1e-9)
            edges.append((u, v))
            v = u
        return edges, v


def _dreyfus_wagner(sparse: _Sparse, k: int) -> list[tuple[int, int]]:
    """Exact Steiner tree for terminals 0..k-1 (node indices); terminal 0 is the root."""
    kk = k - 1
    full = (1 << kk) - 1
    n = sparse.n
    dp = np.full((full + 1, n), np.inf)
    pot = np.full((full + 1, n), np.inf)
    split = np.zeros((full + 1, n), dtype=np.int64)
    by_size: dict[int, list[int]] = {}
    for mask in range(1, full + 1):
        by_size.setdefault(mask.bit_count(), []).append(mask)
    for size in sorted(by_size):
        masks = by_size[size]
        for mask in masks:
            if size == 1:
                pot[mask, mask.bit_length()] = 0.0
                continue
            low = mask & -mask
            sub = (mask - 1) & mask
            while sub:
                if sub & low:
                    val = dp[sub] + dp[mask ^ sub]
                    better = val < pot[mask] - 1e-12
                    pot[mask] = np.where(better, val, pot[mask])
                    split[mask] = np.where(better, sub, split[mask])
                sub = (sub - 1) & mask
        dp[masks] = sparse.relax(pot[masks])
    pairs: list[tuple[int, int]] = []
    stack = [(full, 0)]
    while stack:
        mask, v = stack.pop()
        edges, u = sparse.trace(dp[mask], pot[mask], v)
        pairs.extend(edges)
        if mask & (mask - 1):
            s = int(split[mask, u])
            stack.extend([(s, u), (mask ^ s, u)])
    return pairs


def _shortest_path_heuristic(sparse: _Sparse, k: int) -> list[tuple[int, int]]:
    """Takahashi–Matsuyama (grow the tree by the nearest terminal) from a few starts; cheapest wins."""
    best_pairs: list[tuple[int, int]] = []
    best_cost = math.inf
    for start in range(min(k, 3)):
        in_tree = {start}
        pairs: list[tuple[int, int]] = []
        cost = 0.0
        while not set(range(k)) <= in_tree:
            g = np.full((1, sparse.n), np.inf)
            g[0, sorted(in_tree)] = 0.0
            d = sparse.relax(g)[0]
            t = min((i for i in range(k) if i not in in_tree), key=lambda i: (d[i], i))
            edges, _ = sparse.trace(d, g[0], t)
            cost += d[t]
            pairs.extend(edges)
            in_tree.update(x for e in edges for x in e)
        if cost < best_cost:
            best_cost, best_pairs = cost, pairs
    return best_pairs


def _cleanup(
    pairs: list[tuple[str, str]],
    weights: Mapping[str, Mapping[str, float]],
    override: Mapping[tuple[str, str], float],
    terminals: set[str],
) -> tuple[set[str], list[tuple[str, str]], float]:
    """MST of the union of paths (breaks any cycle), then strip non-terminal leaves."""

    def weight(a: str, b: str) -> float:
        return override.get((a, b), weights[a][b])

    edges = sorted({tuple(sorted(p)) for p in pairs if p[0] != p[1]}, key=lambda e: (weight(*e), e))
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    tree: list[tuple[str, str]] = []
    for a, b in edges:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[ra] = rb
            tree.append((a, b))
    nodes = set(terminals) | {x for e in tree for x in e}
    changed = True
    while changed:
        changed = False
        degree: dict[str, int] = {}
        for a, b in tree:
            degree[a] = degree.get(a, 0) + 1
            degree[b] = degree.get(b, 0) + 1
        for n in sorted(nodes):
            if n not in terminals and degree.get(n, 0) <= 1:
                nodes.discard(n)
                tree = [e for e in tree if n not in e]
                changed = True
    return nodes, tree, float(sum(weight(a, b) for a, b in tree))


# ---------------------------------------------------------------------------------------------
# synthesis


def graph_weights(graph: RelationshipGraph) -> dict[str, dict[str, float]]:
    """Edge weights between tables (cheapest parallel edge), cached on the graph."""
    cached = graph.__dict__.get("_weights")
    if cached is not None:
        return cached
    bridge_legs = {frozenset((b, side)) for sides, bs in graph.bridges.items() for b in bs for side in sides}
    weights: dict[str, dict[str, float]] = {}
    for t in sorted(t.name.lower() for t in graph.catalog.tables):
        row: dict[str, float] = {}
        for other, edges in sorted(graph.neighbors(t).items()):
            bonus = BRIDGE_BONUS if frozenset((t, other)) in bridge_legs else 0.0
            row[other] = min(e.cost for e in edges) - bonus
        weights[t] = row
    graph.__dict__["_weights"] = weights
    return weights


def synthesize_view(
    graph: RelationshipGraph | Catalog,
    tables: Sequence[str],
    columns: Mapping[str, Sequence[str]] | None = None,
    *,
    deny_tables: Collection[str] = (),
    deny_columns: Collection[str] = (),
) -> View:
    """The view joining `tables` (most relevant first) along the best tree Lucy's constraints allow.

    Denied tables are never joined, not even as connectors; denied columns are neither shown nor
    joined on.
    """
    if isinstance(graph, Catalog):
        graph = build_graph(graph)
    full = graph.catalog
    graph = graph.restricted(deny_tables, deny_columns)
    catalog = graph.catalog
    notes: list[str] = []
    wanted: list[Table] = []
    repeated: set[str] = set()
    for name in tables:
        t = catalog.table(name)
        if t is None:
            denied = full.table(name) is not None
            notes.append(
                f"table {name!r} is not available to questions"
                if denied
                else f"unknown table {name!r} ignored"
            )
        elif t in wanted:
            repeated.add(t.name.lower())
        else:
            wanted.append(t)
    if not wanted:
        raise ValueError("no known table to build a view from")
    requested = [t.name.lower() for t in wanted]
    lookups = graph.lookups
    asked_lookups = [t for t in requested if t in lookups] if len(requested) > 1 else []
    core = [t for t in requested if t not in asked_lookups] or requested[:1]
    asked_lookups = [t for t in asked_lookups if t not in core]

    weights = graph_weights(graph)
    blocked = frozenset(lookups - set(core))
    tree, unreachable = steiner_tree(weights, core, blocked)
    if unreachable and blocked:
        relaxed, still = steiner_tree(weights, core, frozenset())
        if len(still) < len(unreachable):
            used = sorted(set(relaxed.nodes) & blocked)
            notes.append(
                f"no path avoids lookup table(s) {', '.join(used)}: joined through them (Lucy C4 relaxed)"
            )
            tree, unreachable = relaxed, still
    tree = _enforce_bridges(graph, weights, core, blocked, tree, set(requested), notes)
    tree = _fewer_fanouts(graph, weights, tree, requested)
    tree_pairs = {frozenset(p): None for p in tree.pairs}
    nodes = list(tree.nodes)
    dropped = [catalog.table(t).name for t in unreachable]  # type: ignore[union-attr]

    # requested lookups hang off the tables that reference them (one copy each: Lucy C4)
    attachments: list[tuple[str, str]] = []
    for lk in asked_lookups:
        referrers = [n for n in nodes if graph.edges_between(n, lk)]
        chosen = [n for n in referrers if n in requested] or referrers
        if len(chosen) == 1:
            tree_pairs[frozenset((chosen[0], lk))] = None
            nodes.append(lk)
        elif chosen:
            attachments.extend((n, lk) for n in chosen)
        else:
            path = _path_to_tree(weights, lk, set(nodes), frozenset(lookups - {lk}))
            if path is None:
                dropped.append(catalog.table(lk).name)  # type: ignore[union-attr]
                continue
            for a, b in itertools.pairwise(path):
                tree_pairs[frozenset((a, b))] = None
            nodes.extend(n for n in path if n not in nodes)
    if dropped:
        notes.append(f"could not join {', '.join(dropped)} to the other tables: left out of the view")

    roles = {pair: _roles(graph, *sorted(pair)) for pair in tree_pairs}
    roles, nodes, elided = _elide_pass_through(
        graph, roles, nodes, set(requested), {a for a, _ in attachments}
    )
    notes.extend(elided)
    excluded = sorted(
        lk for lk in lookups - set(nodes) if sum(1 for n in nodes if graph.edges_between(n, lk)) >= 2
    )
    if excluded:
        notes.append("not used as connectors (lookup tables, Lucy C4): " + ", ".join(excluded))
    return _materialize(graph, requested, nodes, roles, attachments, repeated, columns, tree, dropped, notes)


def _enforce_bridges(
    graph: RelationshipGraph,
    weights: Mapping[str, Mapping[str, float]],
    core: list[str],
    blocked: frozenset[str],
    tree: _Tree,
    requested: set[str],
    notes: list[str],
) -> _Tree:
    """Lucy C3: both sides of a many-to-many in the view are joined through its bridge."""
    terminals = list(core)
    override: dict[tuple[str, str], float] = {}
    for _ in range(3):
        violation = next(
            (
                (a, b, bridges[0])
                for sides, bridges in graph.bridges.items()
                for a, b in [sorted(sides)]
                if _c3_violated(tree, a, b, bridges, requested)
            ),
            None,
        )
        if violation is None:
            return tree
        a, b, bridge = violation
        notes.append(f"{a} and {b} are many-to-many: joined through bridge {bridge} (Lucy C3)")
        if bridge not in terminals:
            terminals.append(bridge)
        for side in (a, b):
            override[(bridge, side)] = override[(side, bridge)] = FORCED
        tree, _ = steiner_tree(weights, terminals, blocked - {bridge}, override)
    return tree


def _c3_violated(tree: _Tree, a: str, b: str, bridges: Sequence[str], requested: set[str]) -> bool:
    """A path between the sides that skips the bridge through tables nobody asked for.

    A direct edge is another relation (a department's head), and a path through requested tables
    is the relation the question names (usage per client and pool): neither breaks C3.
    """
    path = _tree_path(tree.pairs, a, b)
    if path is None or len(path) <= 2:
        return False
    inner = path[1:-1]
    return not any(n in bridges for n in inner) and any(n not in requested for n in inner)


def _tree_path(pairs: Sequence[tuple[str, str]], a: str, b: str) -> list[str] | None:
    adj: dict[str, list[str]] = {}
    for x, y in pairs:
        adj.setdefault(x, []).append(y)
        adj.setdefault(y, []).append(x)
    prev = {a: a}
    stack = [a]
    while stack:
        n = stack.pop()
        for m in adj.get(n, []):
            if m not in prev:
                prev[m] = n
                stack.append(m)
    if b not in prev:
        return None
    path = [b]
    while path[-1] != a:
        path.append(prev[path[-1]])
    return path[::-1]


def _fanouts(
    pairs: Iterable[Collection[str]], root: str, edges_of: Callable[[str, str], Sequence[Edge]]
) -> int:
    """Joins that repeat rows when the tree is read from `root`."""
    adj: dict[str, list[str]] = {}
    for x, y in (sorted(p) for p in pairs):
        adj.setdefault(x, []).append(y)
        adj.setdefault(y, []).append(x)
    count = 0
    stack: list[tuple[str, str | None]] = [(root, None)]
    while stack:
        node, parent = stack.pop()
        for child in adj.get(node, []):
            if child != parent:
                count += any(e.multiplies(node) for e in edges_of(node, child))
                stack.append((child, node))
    return count


def _fewer_fanouts(
    graph: RelationshipGraph, weights: Mapping[str, Mapping[str, float]], tree: _Tree, requested: list[str]
) -> _Tree:
    """Among equally cheap trees on the same tables, prefer the one that repeats fewer rows.

    professor → employee and professor → department beats employee ← professor plus
    department → employee (the department's head): same cost, but the first reads as one row per
    professor. Local search: swap a tree edge for an equally heavy non-tree edge on its cycle.
    """
    if len(tree.pairs) < 2:
        return tree
    roots = [t for t in requested if t in tree.nodes] or tree.nodes[:1]

    def score(pairs: Sequence[tuple[str, str]]) -> int:
        return min(_fanouts(pairs, r, graph.edges_between) for r in roots)

    def keeps_c3(pairs: Sequence[tuple[str, str]]) -> bool:
        probe = _Tree(tree.nodes, list(pairs), tree.cost, tree.method)
        return not any(
            _c3_violated(probe, *sorted(sides), bridges, set(requested))
            for sides, bridges in graph.bridges.items()
        )

    pairs = list(tree.pairs)
    best = score(pairs)
    members = sorted(tree.nodes)
    improved = True
    while improved and best > 0:
        improved = False
        present = {frozenset(p) for p in pairs}
        swaps = (
            (u, v, w)
            for u in members
            for v, w in weights.get(u, {}).items()
            if v in tree.nodes and u < v and frozenset((u, v)) not in present
        )
        for u, v, w in swaps:
            path = _tree_path(pairs, u, v) or []
            for x, y in itertools.pairwise(path):
                if abs(weights[x][y] - w) > 1e-9:
                    continue
                candidate = [p for p in pairs if frozenset(p) != frozenset((x, y))] + [(u, v)]
                s = score(candidate)
                if s < best and keeps_c3(candidate):
                    pairs, best, improved = candidate, s, True
                    break
            if improved:
                break
    return _Tree(tree.nodes, pairs, tree.cost, tree.method, tree.candidates)


def _path_to_tree(
    weights: Mapping[str, Mapping[str, float]], source: str, targets: set[str], blocked: frozenset[str]
) -> list[str] | None:
    prev: dict[str, str] = {}
    dist = {source: 0.0}
    heap = [(0.0, source)]
    while heap:
        d, u = heapq.heappop(heap)
        if u in targets:
            path = [u]
            while path[-1] != source:
                path.append(prev[path[-1]])
            return path
        if d > dist[u]:
            continue
        for v, w in weights.get(u, {}).items():
            if v in blocked and v not in targets:
                continue
            if d + w < dist.get(v, math.inf):
                dist[v] = d + w
                prev[v] = u
                heapq.heappush(heap, (d + w, v))
    return None


def _roles(graph: RelationshipGraph, a: str, b: str) -> list[Edge]:
    """The parallel edges worth a copy each: all declared/catalog ones, else the surest inferred ones."""
    edges = graph.edges_between(a, b)
    trusted = [e for e in edges if e.origin != "inferred"]
    if trusted:
        chosen = trusted + [e for e in edges if e.origin == "inferred" and e.confidence >= 0.85]
    else:
        top = max(e.confidence for e in edges)
        chosen = [e for e in edges if e.confidence >= top - 0.1]
    seen: set[tuple[str, tuple[str, ...]]] = set()
    out = []
    for e in sorted(chosen, key=lambda e: (e.cost, e.table.lower(), e.columns)):
        k = (e.table.lower(), tuple(c.lower() for c in e.columns))
        if k not in seen:
            seen.add(k)
            out.append(e)
    return out[:MAX_ROLES]


def _elide_pass_through(
    graph: RelationshipGraph,
    roles: dict[frozenset[str], list[Edge]],
    nodes: list[str],
    requested: set[str],
    attached: set[str],
) -> tuple[dict[frozenset[str], list[Edge]], list[str], list[str]]:
    """Leave out a connector that only passes its key through, joining its referrers directly.

    paper_dataset.paper_id = paper_keyphrase.paper_id means the same as going through paper.paper_id
    when paper's own columns are not wanted — and it is how people write that join. A referrer
    with two roles (cite.citing_paper_id, cite.cited_paper_id) keeps one copy per role.
    """
    notes = []
    for p in sorted(n for n in nodes if n not in requested and n not in attached and n not in graph.lookups):
        incident = [(pair, es) for pair, es in roles.items() if p in pair]
        if len(incident) < 2:
            continue
        edges = [e for _, es in incident for e in es]
        if any(e.ref_table.lower() != p or e.table.lower() == p for e in edges):
            continue
        branch = [graph.branch_parent.get(e.table.lower()) for e in edges]
        if any(b and b[0] == p and (b[1].kind != "subtype" or p in graph.exclusive) for b in branch):
            continue  # a star's branches, or exclusive subtypes: joined to each other they match nothing
        if len({tuple(c.lower() for c in e.ref_columns) for e in edges}) != 1:
            continue
        single = sorted(
            (es[0] for _, es in incident if len(es) == 1),
            key=lambda e: (e.table.lower() not in requested, e.table.lower()),
        )
        if not single:
            continue
        anchor = single[0]
        key = f"{edges[0].ref_table}.{', '.join(edges[0].ref_columns)}"
        for pair, _ in incident:
            del roles[pair]
        for _, es in incident:
            if anchor in es:
                continue
            roles[frozenset((es[0].table.lower(), anchor.table.lower()))] = [
                Edge(
                    table=e.table,
                    columns=e.columns,
                    ref_table=anchor.table,
                    ref_columns=anchor.columns,
                    origin="inferred" if "inferred" in (e.origin, anchor.origin) else e.origin,
                    confidence=min(e.confidence, anchor.confidence),
                    evidence=f"both reference {key}, whose own columns are not needed",
                    ref_unique=anchor.src_unique,
                    src_unique=e.src_unique,
                )
                for e in es
            ]
        nodes = [n for n in nodes if n != p]
        notes.append(
            f"left out pass-through table {edges[0].ref_table}: its key {key} is already in its referrers"
        )
    return roles, nodes, notes


# ---------------------------------------------------------------------------------------------
# from tree to steps and columns


def _materialize(
    graph: RelationshipGraph,
    requested: list[str],
    nodes: list[str],
    roles: dict[frozenset[str], list[Edge]],
    attachments: list[tuple[str, str]],
    repeated: set[str],
    columns: Mapping[str, Sequence[str]] | None,
    tree: _Tree,
    dropped: list[str],
    notes: list[str],
) -> View:
    catalog = graph.catalog
    adj: dict[str, list[str]] = {n: [] for n in nodes}
    for pair in roles:
        a, b = sorted(pair)
        adj.setdefault(a, []).append(b)
        adj.setdefault(b, []).append(a)
    rank = {t: i for i, t in enumerate(requested)}
    for n in adj:
        adj[n].sort(key=lambda x: (rank.get(x, len(rank)), x))
    root = _choose_root(graph, requested, nodes, roles)
    root_table = catalog.table(root)
    assert root_table is not None

    used_aliases: set[str] = set()

    def new_alias(base: str) -> str:
        alias = _safe_name(base)
        n = 2
        while alias in used_aliases:
            alias = f"{_safe_name(base)}_{n}"
            n += 1
        used_aliases.add(alias)
        return alias

    root_alias = new_alias(root_table.name)
    steps: list[JoinStep] = []
    instances: dict[str, list[str]] = {root: [root_alias]}
    left_aliases: set[str] = set()

    def grow(node: str, alias: str, came_from: str | None) -> None:
        for child in adj.get(node, []):
            if child == came_from:
                continue
            edges = roles[frozenset((node, child))]
            if len(steps) + len(edges) > MAX_ALIASES:
                edges = edges[:1]
            table = catalog.table(child)
            assert table is not None
            parent_is_copy = alias != _safe_name(catalog.table(node).name)  # type: ignore[union-attr]
            for edge in edges:
                multi = len(edges) > 1
                base = _safe_name(_role_alias(edge, node, table.name) if multi else table.name)
                if (parent_is_copy and alias != root_alias) or (not multi and base in used_aliases):
                    base = f"{alias}_{base}"
                child_alias = new_alias(base)
                kind, why = _join_kind(graph, node, child, alias in left_aliases, multi, requested)
                if kind == "left":
                    left_aliases.add(child_alias)
                steps.append(_step(graph, edge, node, alias, child, child_alias, table, kind, why, multi))
                instances.setdefault(child, []).append(child_alias)
                grow(child, child_alias, node)

    grow(root, root_alias, None)
    for node, lk in attachments:
        table = catalog.table(lk)
        assert table is not None
        edges = _roles(graph, node, lk)
        for alias in instances.get(node, []):
            for edge in edges:
                base = (
                    f"{alias}_{table.name}"
                    if len(edges) == 1
                    else f"{alias}_{_role_alias(edge, node, table.name)}"
                )
                child_alias = new_alias(base)
                why = f"lookup table, one copy per referring table ({graph.describe_table(lk)})"
                steps.append(_step(graph, edge, node, alias, lk, child_alias, table, "left", why, True))
    for t in sorted(repeated):
        for edge in graph.self_edges(t):
            table = catalog.table(t)
            assert table is not None
            for alias in list(instances.get(t, [])):
                child_alias = new_alias(f"{alias}_{edge.role}")
                why = f"{table.name} asked for twice: second copy in role {edge.role}"
                steps.append(
                    _step(graph, edge, t, alias, t, child_alias, table, "left", why, True, self_ref=True)
                )

    view_columns = _columns(catalog, root_alias, root_table, steps, columns)
    name = root_table.name if not steps else _view_name(catalog, requested)
    view = View(
        root_alias=root_alias,
        root_table=root_table.name,
        steps=tuple(steps),
        columns=tuple(view_columns),
        name=name,
        notes=tuple(notes),
        root_schema=root_table.schema,
        requested=tuple(catalog.table(t).name for t in requested),  # type: ignore[union-attr]
        cost=tree.cost,
        method=f"{tree.method} Steiner tree over {tree.candidates} candidate tables"
        if steps
        else "single table",
        dropped=tuple(dropped),
    )
    grain = _grain(view)
    return replace(view, grain=tuple(grain), fans_out=grain != [root_alias])


def _choose_root(
    graph: RelationshipGraph,
    requested: list[str],
    nodes: list[str],
    roles: Mapping[frozenset[str], list[Edge]],
) -> str:
    """Where the view starts: as high in the pattern trees as the tables allow (a star's root before
    its branches, so they can be LEFT JOINed), requested before connectors, then the table from
    which the fewest joins repeat rows, then the most relevant one.

    tax and supercharge alone start from payment_amount, their parent: starting from tax would keep
    only tax amounts, and every supercharge column would be NULL.
    """

    def depth(t: str) -> int:
        seen = {t}
        while t in graph.branch_parent and graph.branch_parent[t][0] not in seen:
            t = graph.branch_parent[t][0]
            seen.add(t)
        return len(seen) - 1

    present = [t for t in requested if t in nodes]
    pool = [t for t in nodes if t not in graph.lookups] or list(nodes)
    top = min(depth(t) for t in pool)
    candidates = [t for t in present if depth(t) == top and t in pool] or [t for t in pool if depth(t) == top]

    def edges_of(a: str, b: str) -> Sequence[Edge]:
        return roles[frozenset((a, b))]

    return min(
        candidates,
        key=lambda t: (_fanouts(roles, t, edges_of), present.index(t) if t in present else len(present), t),
    )


def _role_alias(edge: Edge, parent: str, table: str) -> str:
    """source_airport for flights.source_airport → airports; managed_department for the reverse way."""
    if edge.table.lower() == parent.lower():
        role = edge.role
        stems = {w for w in re.split(r"_", role) if w}
        tname = _safe_name(table)
        if any(tname.startswith(s) or s.startswith(tname.rstrip("s")) for s in stems if len(s) >= 3):
            return role
        return f"{role}_{tname}"
    return f"{_safe_name(table)}_by_{edge.role}"


def _join_kind(
    graph: RelationshipGraph, parent: str, child: str, parent_left: bool, multi: bool, requested: list[str]
) -> tuple[str, str]:
    role = graph.describe_table(child)
    why = ["requested" if child in requested else "connector"]
    if role:
        why.append(role)
    branch = graph.branch_parent.get(child)
    left = ""
    if branch is not None and branch[0] == parent:
        left = f"LEFT JOIN along the {branch[1].kind} branch: rows without one are kept"
    elif multi:
        left = "LEFT JOIN: one copy per role, a missing role does not drop the row"
    elif parent_left:
        left = "LEFT JOIN: under a LEFT JOIN"
    if left:
        why.append(left)
    return ("left" if left else "inner"), "; ".join(why)


def _step(
    graph: RelationshipGraph,
    edge: Edge,
    parent: str,
    parent_alias: str,
    child: str,
    alias: str,
    table: Table,
    kind: str,
    why: str,
    role: bool,
    self_ref: bool = False,
) -> JoinStep:
    if self_ref:
        parent_cols, child_cols = edge.columns, edge.ref_columns
        fans, back = not edge.ref_unique, edge.src_unique
    else:
        parent_cols, child_cols = edge.side(parent), edge.side(child)
        fans, back = edge.multiplies(parent), not edge.multiplies(child)
    return JoinStep(
        alias=alias,
        table=table.name,
        kind=kind,
        on=tuple(
            (f"{parent_alias}.{p}", f"{alias}.{c}") for p, c in zip(parent_cols, child_cols, strict=True)
        ),
        origin=edge.origin,
        reason=str(edge),
        role=edge.role if role else None,
        schema=table.schema,
        parent=parent_alias,
        confidence=edge.confidence,
        fans_out=fans,
        determines_parent=back,
        why=why,
    )


def _described(column: Column) -> str:
    """The column's description plus what its coded values mean (status 'ACT' = active)."""
    if not column.values:
        return column.description
    codes = "; ".join(f"'{code}' = {meaning}" for code, meaning in list(column.values.items())[:12])
    return f"{column.description} Values: {codes}.".strip()


def _columns(
    catalog: Catalog,
    root_alias: str,
    root_table: Table,
    steps: Sequence[JoinStep],
    wanted: Mapping[str, Sequence[str]] | None,
) -> list[ViewColumn]:
    """Every instance's primary key, then the wanted columns (all of them when none are named).

    A foreign key column joined to a key that is in the view says the same thing twice
    (orders_customer_id = customer_id); it is left out unless asked for by name.
    """
    single = not steps
    wanted_low = {k.lower(): {c.lower() for c in v} for k, v in (wanted or {}).items()}
    tables = {root_alias: root_table, **{s.alias: catalog.table(s.table) for s in steps}}
    redundant = _redundant_join_columns(tables, steps)
    out: list[ViewColumn] = []
    taken: set[str] = set()
    for alias, table in tables.items():
        assert table is not None
        pk = {c.lower() for c in table.primary_key}
        want = wanted_low.get(table.name.lower(), set()) if wanted is not None else None
        cols = [c for c in table.columns if c.name.lower() in pk] + [
            c
            for c in table.columns
            if c.name.lower() not in pk
            and (want is None or c.name.lower() in want)
            and ((alias, c.name.lower()) not in redundant or (want and c.name.lower() in want))
        ]
        if not cols and want is not None:
            cols = list(table.columns[:1])
        for c in cols:
            name = c.name if single else _safe_name(f"{alias}_{c.name}")
            base, n = name, 2
            while name.lower() in taken:
                name = f"{base}_{n}"
                n += 1
            taken.add(name.lower())
            out.append(
                ViewColumn(
                    name=name,
                    alias=alias,
                    table=table.name,
                    column=c.name,
                    type=c.type,
                    kind=c.kind,
                    description=_described(c),
                    primary_key=c.name.lower() in pk,
                )
            )
    return out


def _redundant_join_columns(
    tables: Mapping[str, Table | None], steps: Sequence[JoinStep]
) -> set[tuple[str, str]]:
    """(alias, column) of foreign keys whose joined primary key is in the view too."""
    out = set()
    for s in steps:
        pairs = [(p.split(".", 1), c.split(".", 1)) for p, c in s.on]
        for key_side, fk_side in ((1, 0), (0, 1)):
            key_alias = pairs[0][key_side][0]
            key_table = tables[key_alias]
            key_cols = {pr[key_side][1].lower() for pr in pairs}
            if key_table is not None and key_cols == {c.lower() for c in key_table.primary_key}:
                out |= {(pr[fk_side][0], pr[fk_side][1].lower()) for pr in pairs}
                break
    return out


def _view_name(catalog: Catalog, requested: Sequence[str]) -> str:
    base = "_".join(_safe_name(t) for t in requested[:3])[:48].strip("_") or "joined"
    name = f"{base}_view"
    while catalog.table(name) is not None:
        name += "_"
    return name


def _grain(view: View) -> list[str]:
    """Aliases whose keys together identify a row: the ones no other alias determines."""
    determines: dict[str, set[str]] = {a: set() for a in view.aliases}
    for s in view.steps:
        if not s.fans_out:
            determines[s.parent].add(s.alias)
        if s.determines_parent:
            determines[s.alias].add(s.parent)

    def closure(a: str) -> set[str]:
        seen = {a}
        stack = [a]
        while stack:
            for b in determines[stack.pop()]:
                if b not in seen:
                    seen.add(b)
                    stack.append(b)
        return seen

    reach = {a: closure(a) for a in view.aliases}
    order = list(view.aliases)
    grain: list[str] = []
    covered: set[str] = set()
    for a in order:
        if a in covered:
            continue
        dominated = any(a in reach[b] and b not in reach[a] for b in order)
        if not dominated:
            grain.append(a)
            covered |= reach[a]
    for a in order:  # anything left (cycles of one-to-one) joins the grain
        if a not in covered:
            grain.append(a)
            covered |= reach[a]
    return grain


# ---------------------------------------------------------------------------------------------
# presentation


def grain_text(view: View) -> str:
    """One line on what a row of the view is, which rows repeat, and how to count them."""
    aliases = view.aliases

    def label(a: str) -> str:
        return aliases[a] if a == aliases[a] else f"{a} ({aliases[a]})"

    if not view.fans_out:
        return f"grain: one row per {view.root_table}" + (
            " — the joins add columns, not rows" if view.steps else ""
        )
    repeating = [a for a in aliases if not (len(view.grain) == 1 and a == view.grain[0])]
    counts = []
    for a in repeating:
        keys = [c.name for c in view.columns if c.alias == a and c.primary_key]
        if len(keys) == 1:
            counts.append(f"COUNT(DISTINCT {keys[0]})")
    text = (
        f"grain: one row per {' × '.join(label(a) for a in view.grain)} — "
        f"rows of {', '.join(label(a) for a in repeating[:6])}{' ...' if len(repeating) > 6 else ''} repeat"
    )
    if counts:
        text += f"; count them with {', '.join(counts[:6])}"
    return text + "; do not SUM a column of a table whose rows repeat"


def view_ddl(view: View, samples: Sequence[Sequence[Any]] = ()) -> str:
    """The view as one table for the SQL writer: CREATE TABLE with column notes, sample rows, fan-out.

    `samples` are rows in `view.columns` order (see `sample_sql`).
    """
    lines = [f"CREATE TABLE {view.name} ("]
    for i, c in enumerate(view.columns):
        note = [f"{c.table}.{c.column}" if view.steps else ""]
        if c.primary_key:
            note.append(f"key of {c.alias if c.alias != c.table else c.table}")
        if c.description:
            note.append(c.description)
        text = "; ".join(n for n in note if n)
        comma = "," if i < len(view.columns) - 1 else ""
        lines.append(f"  {c.name} {c.type or 'TEXT'}{comma}" + (f"  -- {text}" if text else ""))
    lines.append(");")
    if view.steps:
        lines.append(f"-- Already joined (do not join again): {join_summary(view)}")
        lines.append("-- " + grain_text(view))
        left = sorted({s.alias for s in view.steps if s.kind == "left"})
        if left:
            lines.append(
                "-- LEFT JOINed, NULL when there is no matching row: "
                + ", ".join(f"{a}_*" for a in left)
                + ". Test membership with <alias>_<key> IS NOT NULL."
            )
        roles = _role_groups(view)
        for table, aliases in roles.items():
            lines.append(
                f"-- {', '.join(a + '_*' for a in aliases)} are the same table {table} in different roles: "
                "use the one the question means."
            )
    if samples:
        names = [c.name for c in view.columns]
        lines.append(f"/* {len(samples)} example rows:")
        lines.append(" | ".join(names))
        for row in samples:
            lines.append(" | ".join(_cell(v) for v in row))
        lines.append("*/")
    return "\n".join(lines)


def join_summary(view: View) -> str:
    parts = [view.root_table]
    for s in view.steps:
        target = s.table if s.alias == s.table else f"{s.table} as {s.alias}"
        parts.append(f"{'LEFT ' if s.kind == 'left' else ''}{target}")
    return " → ".join(parts)


def _role_groups(view: View) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for s in view.steps:
        if s.role:
            groups.setdefault(s.table, []).append(s.alias)
    return {t: a for t, a in groups.items() if len(a) > 1}


def _cell(value: Any) -> str:
    text = "NULL" if value is None else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def view_sql(view: View, dialect: str) -> str:
    return view.select(dialect).sql(dialect=dialect, pretty=True)


def sample_sql(view: View, dialect: str, limit: int = 3) -> str:
    """SELECT a few rows of the view (columns in `view.columns` order), for `view_ddl`."""
    return view.select(dialect).limit(limit).sql(dialect=dialect)
