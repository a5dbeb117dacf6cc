"""synthesize_view: the tables a question needs → the view that joins them, pass by pass.

1. weights: each table pair's cheapest edge (declared and catalog edges before inferred ones,
   bridge legs a little cheaper) — `graph_weights`;
2. the minimum-cost tree over the requested tables, lookup tables blocked as connectors (C4;
   relaxed, and noted, only when nothing else connects) — `core.joins.steiner`;
3. Lucy's constraints on that tree — `core.joins.constraints`;
4. parallel paths settled (`core.joins.patterns`);
5. requested lookup tables hung off the tables that reference them, one copy each;
6. tree → view — `core.joins.materialize`, with one copy of a role table per role the question
   names and one copy of a typed fact per type (`core.joins.patterns`).

The question's words (optional) only decide between joins the patterns allow: which roles,
which types, which of two parallel paths; tables they name through a pattern join the request.

Every decision that is not obvious leaves a note on the view, which the trace shows.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Mapping, Sequence

from core.catalog import Catalog, Table
from core.graph import RelationshipGraph, build_graph
from core.joins.constraints import elide_pass_through, enforce_bridges, fewer_fanouts
from core.joins.materialize import materialize, role_edges
from core.joins.patterns import named_roles, named_tables, resolve_parallel, typed_plan
from core.joins.steiner import KnownTrees, Weights, path_to_tree, steiner_tree
from core.joins.view import View
from core.joins.wording import Wording

BRIDGE_BONUS = 0.05  # a bridge path wins ties against other connectors of the same length


def graph_weights(graph: RelationshipGraph) -> Weights:
    """Edge weights between tables (cheapest parallel edge), cached on the graph."""
    cached: Weights | None = graph.__dict__.get("_weights")
    if cached is not None:
        return cached
    bridge_legs = {frozenset((b, side)) for sides, bs in graph.bridges.items() for b in bs for side in sides}
    weights = Weights()
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
    question: str = "",
    trees: KnownTrees | None = None,
) -> View:
    """The view joining `tables` (most relevant first) along the best tree Lucy's constraints allow.

    Denied tables are never joined, not even as connectors; denied columns are neither shown nor
    joined on. `question` decides what the patterns leave open: roles, types, parallel paths.
    `trees`: the minimal trees this question's other views found (`steiner_tree`), so a view of
    tables a join path already connects does not search the graph again.
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
    words = Wording(question)
    role_copies = named_roles(graph, words)
    for extra, why in named_tables(graph, requested, words, role_copies):
        requested.append(extra)
        notes.append(f"added {catalog.known_table(extra).name}: {why}")
    lookups = graph.lookups
    asked_lookups = [t for t in requested if t in lookups] if len(requested) > 1 else []
    core = [t for t in requested if t not in asked_lookups] or requested[:1]
    asked_lookups = [t for t in asked_lookups if t not in core]

    weights = graph_weights(graph)
    blocked = frozenset(lookups - set(core))
    tree, unreachable = steiner_tree(weights, core, blocked, trees=trees)
    if unreachable and blocked:
        relaxed, still = steiner_tree(weights, core, frozenset(), trees=trees)
        if len(still) < len(unreachable):
            used = sorted(set(relaxed.nodes) & blocked)
            notes.append(
                f"no path avoids lookup table(s) {', '.join(used)}: joined through them (Lucy C4 relaxed)"
            )
            tree, unreachable = relaxed, still
    tree = enforce_bridges(graph, weights, core, blocked, tree, set(requested), notes)
    tree = fewer_fanouts(graph, weights, tree, requested)
    ties: list[str] = []
    tree = resolve_parallel(graph, tree, words, notes, ties)
    tree_pairs = {frozenset(p): None for p in tree.pairs}
    nodes = list(tree.nodes)
    dropped = [catalog.known_table(t).name for t in unreachable]

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
            path = path_to_tree(weights, lk, set(nodes), frozenset(lookups - {lk}))
            if path is None:
                dropped.append(catalog.known_table(lk).name)
                continue
            for a, b in itertools.pairwise(path):
                tree_pairs[frozenset((a, b))] = None
            nodes.extend(n for n in path if n not in nodes)
    if dropped:
        notes.append(f"could not join {', '.join(dropped)} to the other tables: left out of the view")

    roles = {pair: role_edges(graph, *sorted(pair)) for pair in tree_pairs}
    roles, nodes, elided = elide_pass_through(
        graph, roles, nodes, set(requested), {a for a, _ in attachments}
    )
    notes.extend(elided)
    excluded = sorted(
        lk for lk in lookups - set(nodes) if sum(1 for n in nodes if graph.edges_between(n, lk)) >= 2
    )
    if excluded:
        notes.append("not used as connectors (lookup tables, Lucy C4): " + ", ".join(excluded))
    plan = {t: c for t, c in role_copies.items() if t in nodes}
    for role_table in sorted(set(nodes) & set(graph.roles) - set(plan)):
        p = graph.roles[role_table]
        codes = ", ".join(f"'{c}' {m}" if m != c else f"'{c}'" for c, m in p.codes[:8])
        notes.append(
            f"{p.root} says which role {p.tables[1]} plays in {p.tables[0]} in {p.column}"
            + (f" ({codes})" if codes else "")
            + ": filter on it for one role"
        )
    typed = {
        f: [c for c in cs if frozenset((f, c)) in roles]
        for f, cs in typed_plan(graph, nodes, requested).items()
    }
    typed = {f: cs for f, cs in typed.items() if cs}
    return materialize(
        graph,
        requested,
        nodes,
        roles,
        attachments,
        repeated,
        columns,
        tree,
        dropped,
        notes,
        role_plan=plan,
        typed=typed,
        ties=ties,
    )
