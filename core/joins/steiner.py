"""Minimum-cost trees over a weighted graph of tables (the Steiner tree problem).

Pure graph algorithms: nodes are strings, weights a mapping of mappings; nothing here knows about
catalogs, foreign keys or Lucy's constraints (`core.joins.constraints` adds those on top).

`steiner_tree` is exact (Dreyfus–Wagner) up to EXACT_LIMIT terminals and uses the shortest-path
heuristic beyond. Both run on a graph first cut down to the nodes that can lie on an optimal tree
and then reduced (`_reduced_graph`), which is what keeps them fast on schemas of hundreds of tables.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

EXACT_LIMIT = 8  # requested tables up to which the tree is provably minimal
COMPONENTS_KEPT = 8  # blocked sets whose components a `Weights` remembers


@dataclass
class Tree:
    """A tree found by `steiner_tree`: its nodes (terminals first), edges, cost and how it was found."""

    nodes: list[str]
    pairs: list[tuple[str, str]]
    cost: float
    method: str
    candidates: int = 0


class DisjointSets:
    """Union–find with path halving: which nodes a growing forest already connects."""

    def __init__(self, items: Iterable[str] = ()) -> None:
        self.parent = {x: x for x in items}

    def find(self, x: str) -> str:
        parent = self.parent
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(self, root: str, into: str) -> None:
        """Hang the set whose root is `root` under the root `into`."""
        self.parent[root] = into


class Weights(dict[str, dict[str, float]]):
    """Edge weights (node → neighbour → weight) that remember their connected components.

    Built once per relationship graph and searched for every question: knowing which requested
    tables no path can join lets the search skip them instead of exhausting a component of
    thousands of tables to find out (`python -m core.bench linking`).
    """

    def components(self, blocked: frozenset[str]) -> dict[str, str]:
        """Each node's component (a representative node) in the graph without `blocked`."""
        cache: dict[frozenset[str], dict[str, str]] = self.__dict__.setdefault("_components", {})
        found = cache.get(blocked)
        if found is None:
            if len(cache) >= COMPONENTS_KEPT:
                cache.clear()  # one step: threads searching at once never see it half done
            found = cache[blocked] = _components(self, blocked)
        return found

    def twins(self) -> dict[str, str]:
        """Tables another one stands in for: the same neighbours at the same weights (each maps
        to the first of its kind by name).

        An optimal tree never needs two such twins: whatever the second connects, the first
        connects at the same cost. A warehouse holds many (the daily, history and staging copies of
        a table refer to the same dimensions), and searching one of each instead of all of them
        is what keeps a question's join search short at 10,000 tables (`core.bench linking`)."""
        found: dict[str, str] | None = self.__dict__.get("_twins")
        if found is None:
            first: dict[tuple[tuple[str, float], ...], str] = {}
            found = {}
            for node in sorted(self):
                if self[node]:
                    stand_in = first.setdefault(tuple(sorted(self[node].items())), node)
                    if stand_in != node:
                        found[node] = stand_in
            self.__dict__["_twins"] = found
        return found


KnownTrees = dict[tuple[frozenset[str], frozenset[str]], Tree]  # (tables, blocked) → minimal tree


def _known_tree(trees: KnownTrees, terminals: Sequence[str], blocked: frozenset[str]) -> Tree | None:
    """A tree found before whose tables are exactly `terminals`, with the same tables blocked.

    Such a tree is minimal for them too: it was minimal for a subset of them, and any tree
    spanning them spans that subset. So a question's join recipe, asked for the tables its join
    path already found, is that path rather than a second search of the whole graph.
    """
    found = trees.get((frozenset(terminals), blocked))
    if found is None:
        return None
    order = {n: i for i, n in enumerate(dict.fromkeys(terminals))}
    nodes = sorted(found.nodes, key=lambda n: order[n])
    return Tree(nodes, list(found.pairs), found.cost, found.method, found.candidates)


def _remember(trees: KnownTrees, tree: Tree, blocked: frozenset[str]) -> None:
    """Keep a provably minimal (exact) tree for `_known_tree`."""
    if tree.method == "exact":
        trees[(frozenset(tree.nodes), blocked)] = Tree(
            list(tree.nodes), list(tree.pairs), tree.cost, tree.method, tree.candidates
        )


def _components(weights: Mapping[str, Mapping[str, float]], blocked: frozenset[str]) -> dict[str, str]:
    """Connected components by union–find over every edge between two unblocked nodes."""
    sets = DisjointSets()
    for u, row in weights.items():
        if u in blocked:
            continue
        for v in row:
            if v not in blocked:
                a, b = sets.find(u), sets.find(v)
                if a != b:
                    sets.union(a, b)
    return {n: sets.find(n) for n in list(sets.parent)}


def _apart(
    weights: Mapping[str, Mapping[str, float]], terminals: Sequence[str], blocked: frozenset[str] | set[str]
) -> set[str]:
    """Terminals in another component than the first one (none known unless `weights` remembers
    its components, or when a terminal is itself blocked: the search then finds out)."""
    if not isinstance(weights, Weights) or len(set(terminals)) < 2 or any(t in blocked for t in terminals):
        return set()
    parts = weights.components(frozenset(blocked))
    first = parts.get(terminals[0], terminals[0])
    return {t for t in terminals if parts.get(t, t) != first}


def adjacency(pairs: Iterable[Iterable[str]]) -> dict[str, list[str]]:
    """Each node's neighbours in an undirected edge list, in the order the edges come."""
    adj: dict[str, list[str]] = {}
    for x, y in pairs:
        adj.setdefault(x, []).append(y)
        adj.setdefault(y, []).append(x)
    return adj


def steiner_tree(
    weights: Mapping[str, Mapping[str, float]],
    terminals: Sequence[str],
    blocked: frozenset[str] | set[str] = frozenset(),
    override: Mapping[tuple[str, str], float] | None = None,
    exact_limit: int = EXACT_LIMIT,
    trees: KnownTrees | None = None,
) -> tuple[Tree, list[str]]:
    """Minimum-weight tree connecting `terminals` (and the terminals it cannot reach).

    Exact (Dreyfus–Wagner) up to `exact_limit` terminals, on the nodes that can lie on an optimal
    tree: v is kept only if its distances to its two nearest terminals sum to at most the cost of
    a known tree (a Steiner node of degree ≥ 2 lies on a path between two terminals). `trees`:
    exact trees found before for the same question, reused when their tables are exactly the
    terminals (and added to) — never shared across questions, so an answer never depends on
    which question came before.
    """
    override = override or {}
    if trees is not None and not override:
        known = _known_tree(trees, terminals, frozenset(blocked))
        if known is not None:
            return known, []
    apart = _apart(weights, terminals, blocked)
    searched = [t for t in terminals if t not in apart]
    skipped = _stood_in_for(weights, terminals, blocked) if not override else frozenset()
    labels, cells, bound = _two_nearest(weights, searched, blocked | skipped, override)
    reach = [t for t in searched if cells[t] == cells[terminals[0]]]
    unreachable = [t for t in terminals if t not in reach]
    if len(reach) == 1:
        return Tree([reach[0]], [], 0.0, "single table", 1), unreachable
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
    tree = Tree(
        nodes=sorted(nodes, key=lambda n: (n not in index or index[n] >= len(reach), index.get(n, 0), n)),
        pairs=tree_pairs,
        cost=round(cost, 4),
        method=method,
        candidates=len(candidates),
    )
    if trees is not None and not override:
        _remember(trees, tree, frozenset(blocked))
    return tree, unreachable


def _stood_in_for(
    weights: Mapping[str, Mapping[str, float]], terminals: Sequence[str], blocked: frozenset[str] | set[str]
) -> frozenset[str]:
    """The twins (`Weights.twins`) the search can leave out: not a terminal, and their stand-in is
    searched (not blocked itself)."""
    if not isinstance(weights, Weights):
        return frozenset()
    kept: dict[frozenset[str], frozenset[str]] = weights.__dict__.setdefault("_stood_in_for", {})
    key = frozenset(blocked)
    found = kept.get(key)
    if found is None:
        if len(kept) >= COMPONENTS_KEPT:
            kept.clear()  # one step, as in `Weights.components`
        found = kept[key] = frozenset(n for n, rep in weights.twins().items() if rep not in blocked)
    asked = found.intersection(terminals)
    return found - asked if asked else found


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
    joined = DisjointSets(terminals)
    total = dict.fromkeys(terminals, 0.0)
    groups = len(set(terminals))
    bound = 0.0 if groups == 1 else math.inf
    heap = [(0.0, t, t) for t in terminals]
    heapq.heapify(heap)
    while heap:
        d, u, t = heapq.heappop(heap)
        if d > bound:
            break
        mine = labels.get(u)
        if mine is None:
            labels[u] = [(d, t)]
            nearest = d
        elif len(mine) == 1 and mine[0][1] != t:
            mine.append((d, t))
            nearest = mine[0][0]
        else:
            continue
        if nearest + d > bound + 1e-9:
            continue  # u cannot lie on a tree within the bound: its label, not its neighbours
        for v, w in weights.get(u, {}).items():
            if v in blocked:
                continue
            dv = d + (override.get((u, v), w) if override else w)
            if dv > bound:
                continue  # popped, it would end the search (bound is finite once all are joined)
            theirs = labels.get(v)
            if theirs is not None:
                if groups > 1:  # a path from t through u and v to v's nearest terminal
                    a, b = joined.find(t), joined.find(theirs[0][1])
                    if a != b:
                        joined.union(a, b)
                        total[b] += total.pop(a) + dv + theirs[0][0]
                        groups -= 1
                        if groups == 1:
                            bound = total[b]
                # a third label, the same terminal again, or a second one too far to matter
                if len(theirs) == 2 or theirs[0][1] == t or theirs[0][0] + dv > bound + 1e-9:
                    continue
            heapq.heappush(heap, (dv, v, t))
    cells = {t: joined.find(t) for t in terminals}
    bounds = {root: total[root] for root in set(cells.values())}
    return labels, cells, _mehlhorn(weights, terminals, blocked, override, labels, cells, bounds)


def _mehlhorn(
    weights: Mapping[str, Mapping[str, float]],
    terminals: Sequence[str],
    blocked: frozenset[str] | set[str],
    override: Mapping[tuple[str, str], float],
    labels: Mapping[str, list[tuple[float, str]]],
    cells: Mapping[str, str],
    bounds: dict[str, float],
) -> dict[str, float]:
    """Mehlhorn's tighter bound per component: the MST of terminals linked across the borders of
    their (searched) Voronoi cells. Every link is a real path, so any spanning tree of them is a
    real tree and its cost an upper bound."""
    links = []
    for u, ls in labels.items():
        du, tu = ls[0]
        for v, w in weights.get(u, {}).items():
            theirs = labels.get(v)
            if theirs is not None and v not in blocked and tu < theirs[0][1]:
                links.append(
                    (du + (override.get((u, v), w) if override else w) + theirs[0][0], tu, theirs[0][1])
                )
    linked = DisjointSets(terminals)
    mst = dict.fromkeys(terminals, 0.0)
    for w, a, b in sorted(links):
        ra, rb = linked.find(a), linked.find(b)
        if ra != rb:
            linked.union(ra, rb)
            mst[rb] += mst.pop(ra) + w
    for t in terminals:
        root = linked.find(t)
        if (
            root == t
            and cells[t] in bounds
            and all(cells[x] == cells[t] for x in terminals if linked.find(x) == root)
        ):
            bounds[cells[t]] = min(bounds[cells[t]], mst[root])
    return bounds


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
    forest = DisjointSets()
    tree: list[tuple[str, str]] = []
    for a, b in edges:
        ra, rb = forest.find(a), forest.find(b)
        if ra != rb:
            forest.union(ra, rb)
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


def tree_path(pairs: Sequence[tuple[str, str]], a: str, b: str) -> list[str] | None:
    """The path from a to b along a tree's edges; None when they are not connected."""
    adj = adjacency(pairs)
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


def path_to_tree(
    weights: Mapping[str, Mapping[str, float]], source: str, targets: set[str], blocked: frozenset[str]
) -> list[str] | None:
    """Cheapest path (Dijkstra) from `source` to the nearest of `targets`, listed from that target."""
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
