"""Lucy's constraints on the minimum-cost tree: passes that each take a tree and return a better one.

- `enforce_bridges` (C3): both sides of a many-to-many in the view are joined through its bridge;
- `fewer_fanouts`: among equally cheap trees, the one that repeats fewer rows;
- `elide_pass_through`: a connector that only passes its key through is left out, and its
  referrers joined to each other on that key.

C4 (a lookup table is never a connector) is not a pass: `synthesize_view` blocks lookup tables
before the tree is searched. C5 (fewest extra tables) is the tree's cost itself.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence

from core.graph import Edge, RelationshipGraph
from core.joins.steiner import Tree, adjacency, steiner_tree, tree_path

FORCED = 0.01  # weight of a bridge edge when C3 forces the bridge in


def enforce_bridges(
    graph: RelationshipGraph,
    weights: Mapping[str, Mapping[str, float]],
    core: list[str],
    blocked: frozenset[str],
    tree: Tree,
    requested: set[str],
    notes: list[str],
) -> Tree:
    """Lucy C3: both sides of a many-to-many in the view are joined through its bridge."""
    terminals = list(core)
    override: dict[tuple[str, str], float] = {}
    for _ in range(3):
        violation = next(
            (
                (a, b, bridges[0])
                for sides, bridges in graph.bridges.items()
                for a, b in [sorted(sides)]
                if c3_violated(tree, a, b, bridges, requested)
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


def c3_violated(tree: Tree, a: str, b: str, bridges: Sequence[str], requested: set[str]) -> bool:
    """A path between the sides that skips the bridge through tables nobody asked for.

    A direct edge is another relation (a department's head), and a path through requested tables
    is the relation the question names (usage per client and pool): neither breaks C3.
    """
    path = tree_path(tree.pairs, a, b)
    if path is None or len(path) <= 2:
        return False
    inner = path[1:-1]
    return not any(n in bridges for n in inner) and any(n not in requested for n in inner)


def fanouts(
    pairs: Iterable[Collection[str]], root: str, edges_of: Callable[[str, str], Sequence[Edge]]
) -> int:
    """Joins that repeat rows when the tree is read from `root`."""
    adj = adjacency(sorted(p) for p in pairs)
    count = 0
    stack: list[tuple[str, str | None]] = [(root, None)]
    while stack:
        node, parent = stack.pop()
        for child in adj.get(node, []):
            if child != parent:
                count += any(e.multiplies(node) for e in edges_of(node, child))
                stack.append((child, node))
    return count


def fewer_fanouts(
    graph: RelationshipGraph, weights: Mapping[str, Mapping[str, float]], tree: Tree, requested: list[str]
) -> Tree:
    """Among equally cheap trees on the same tables, prefer the one that repeats fewer rows.

    professor → employee and professor → department beats employee ← professor plus
    department → employee (the department's head): same cost, but the first reads as one row per
    professor. Local search: swap a tree edge for an equally heavy non-tree edge on its cycle.
    """
    if len(tree.pairs) < 2:
        return tree
    roots = [t for t in requested if t in tree.nodes] or tree.nodes[:1]

    def score(pairs: Sequence[tuple[str, str]]) -> int:
        return min(fanouts(pairs, r, graph.edges_between) for r in roots)

    def keeps_c3(pairs: Sequence[tuple[str, str]]) -> bool:
        probe = Tree(tree.nodes, list(pairs), tree.cost, tree.method)
        for sides, bridges in graph.bridges.items():
            a, b = sorted(sides)
            if c3_violated(probe, a, b, bridges, set(requested)):
                return False
        return True

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
            path = tree_path(pairs, u, v) or []
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
    return Tree(tree.nodes, pairs, tree.cost, tree.method, tree.candidates)


def elide_pass_through(
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
        subtypes = [b for b in branch if b and b[0] == p and b[1].kind in ("subtype", "typed_fact")]
        if any(b and b[0] == p and b[1].kind not in ("subtype", "typed_fact") for b in branch) or (
            len(subtypes) > 1 and p in graph.exclusive
        ):
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
