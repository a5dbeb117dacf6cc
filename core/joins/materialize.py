"""From tree to view: where it starts, one table instance per role, INNER or LEFT, columns, grain.

The tree says which tables meet on which edges; the view needs more: a root (`_choose_root`), an
alias per copy of a table (two foreign keys to the same table are two roles, two copies), the join
kind of each step (LEFT along a star's branch, for role copies and under another LEFT JOIN), the
columns with names unique in the view, and the grain — which aliases' keys identify a row.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import replace

from core.catalog import Catalog, Column, Table
from core.graph import Edge, RelationshipGraph
from core.joins.constraints import fanouts
from core.joins.identifiers import safe_name
from core.joins.patterns import RoleCopy
from core.joins.steiner import Tree, adjacency
from core.joins.view import JoinStep, View, ViewColumn

MAX_ROLES = 8  # copies of one table per parent, at most
MAX_ALIASES = 40  # role copies stop multiplying subtrees beyond this


def materialize(
    graph: RelationshipGraph,
    requested: list[str],
    nodes: list[str],
    roles: dict[frozenset[str], list[Edge]],
    attachments: list[tuple[str, str]],
    repeated: set[str],
    columns: Mapping[str, Sequence[str]] | None,
    tree: Tree,
    dropped: list[str],
    notes: list[str],
    role_plan: Mapping[str, Sequence[RoleCopy]] | None = None,
    typed: Mapping[str, Sequence[str]] | None = None,
    ties: Sequence[str] = (),
) -> View:
    """The view of the tree whose table pairs are the keys of `roles`, each joined once per role edge.

    `attachments` are (referrer, lookup) pairs: every instance of the referrer gets its own copy
    of the lookup; `repeated` tables were asked for twice and get a second copy along their
    self-reference. `role_plan`: role tables joined once per role the question names, the role
    filter in the join; `typed`: typed facts copied once per subtype, each copy joined to its
    subtype table inside its own (parenthesised) join.
    """
    role_plan = role_plan or {}
    typed = typed or {}
    catalog = graph.catalog
    adj: dict[str, list[str]] = {n: [] for n in nodes} | adjacency(sorted(pair) for pair in roles)
    rank = {t: i for i, t in enumerate(requested)}
    for n in adj:
        adj[n].sort(key=lambda x: (rank.get(x, len(rank)), x))
    # start from the thing the roles are played in (policy), not the role table or its players
    players = {t: _players(graph, t) for t in role_plan}
    avoid = set(role_plan) | set(typed) | {c for cs in typed.values() for c in cs}
    for t in role_plan:
        thing = graph.roles[t].tables[0].lower()
        if {thing, *graph.subtypes.get(thing, ())} & set(nodes):
            avoid |= players[t]
    root = _choose_root(graph, requested, nodes, roles, avoid)
    root_table = catalog.table(root)
    assert root_table is not None

    used_aliases: set[str] = set()
    applied: list[str] = []

    def new_alias(base: str) -> str:
        alias = safe_name(base)
        n = 2
        while alias in used_aliases:
            alias = f"{safe_name(base)}_{n}"
            n += 1
        used_aliases.add(alias)
        return alias

    root_alias = new_alias(root_table.name)
    steps: list[JoinStep] = []
    instances: dict[str, list[str]] = {root: [root_alias]}
    left_aliases: set[str] = set()

    def add(step: JoinStep, node: str) -> None:
        steps.append(step)
        instances.setdefault(node, []).append(step.alias)
        if step.kind == "left":
            left_aliases.add(step.alias)

    def grow(
        node: str, alias: str, came_from: str | None, skip: frozenset[str] = frozenset(), label: str = ""
    ) -> None:
        for child in adj.get(node, []):
            if child == came_from or child in skip:
                continue
            edges = roles[frozenset((node, child))]
            if len(steps) + len(edges) > MAX_ALIASES:
                edges = edges[:1]
            table = catalog.table(child)
            assert table is not None
            under_left = alias in left_aliases
            if child in role_plan and child != root:
                _role_copies(child, role_plan[child], node, alias, edges[0], table, under_left)
                continue
            if child in typed and node not in typed[child]:
                _typed_copies(child, typed[child], node, alias, edges[0], table, under_left)
                continue
            parent_is_copy = alias != safe_name(catalog.known_table(node).name)
            for edge in edges:
                multi = len(edges) > 1
                base = safe_name(_role_alias(edge, node, table.name) if multi else table.name)
                if label and not multi and safe_name(label) not in used_aliases:
                    base = safe_name(label)
                elif (parent_is_copy and alias != root_alias) or (not multi and base in used_aliases):
                    base = f"{alias}_{base}"
                child_alias = new_alias(base)
                kind, why = _join_kind(graph, node, child, under_left, multi, requested)
                add(_step(graph, edge, node, alias, child, child_alias, table, kind, why, multi), child)
                grow(child, child_alias, node)

    def _role_copies(
        child: str,
        copies: Sequence[RoleCopy],
        node: str,
        alias: str,
        edge: Edge,
        table: Table,
        under_left: bool,
    ) -> None:
        """One copy of the role table per named role, its code in the join; the player follows it."""
        many = len(copies) > 1
        for rc in copies:
            child_alias = new_alias(f"{rc.label}_role")
            kind = "left" if many or under_left else "inner"
            why = f"role table, one copy per role the question names: {rc.how}"
            if kind == "left":
                why += "; LEFT JOIN: a missing role does not drop the row"
            col = table.column(rc.column)
            where = ((f"{child_alias}.{col.name if col else rc.column}", rc.code),)
            role_edge = replace(edge, label=rc.label)
            step = _step(
                graph, role_edge, node, alias, child, child_alias, table, kind, why, True, where=where
            )
            add(step, child)
            for nxt in adj.get(child, []):
                if nxt != node:
                    # the player's copy is named for the role (agent); the rest keep their names
                    grow(
                        child,
                        child_alias,
                        node,
                        skip=frozenset(adj[child]) - {nxt},
                        label=rc.label if nxt in players[child] else "",
                    )
        applied.append(
            f"role table {table.name}: "
            + ", ".join(f"{rc.label} ({rc.column} = '{rc.code}')" for rc in copies)
            + " — one copy each, the role filter in the join"
        )

    def _typed_copies(
        fact: str, subtypes: Sequence[str], node: str, alias: str, edge: Edge, table: Table, under_left: bool
    ) -> None:
        """One copy of the fact per subtype, each restricted to its type by an inner join inside it."""
        for sub in subtypes:
            sub_table = catalog.table(sub)
            assert sub_table is not None
            copy_alias = new_alias(f"{sub_table.name}_{table.name}")
            why = f"typed fact: the {sub_table.name} rows of {table.name} (one copy per type named)"
            step = _step(
                graph, replace(edge, label=sub), node, alias, fact, copy_alias, table, "left", why, True
            )
            add(step, fact)
            sub_alias = new_alias(sub_table.name)
            link = roles[frozenset((fact, sub))][0]
            why = f"restricts {copy_alias} to {sub_table.name} rows (joined inside its parentheses)"
            inner = _step(graph, link, fact, copy_alias, sub, sub_alias, sub_table, "inner", why, False)
            add(replace(inner, within=copy_alias), sub)
            grow(sub, sub_alias, fact)
            grow(fact, copy_alias, node, skip=frozenset(subtypes))
        applied.append(
            f"typed fact {table.name}: one copy per type ({', '.join(subtypes)}), each joined to its type"
            " inside its own join; the copies repeat each other's rows, so aggregate each copy on its own"
        )

    grow(root, root_alias, None)
    for node, lk in attachments:
        table = catalog.table(lk)
        assert table is not None
        edges = role_edges(graph, node, lk)
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
    steps += _second_copies(graph, repeated, nodes, root, root_alias, steps, instances, new_alias)

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
        requested=tuple(catalog.known_table(t).name for t in requested),
        cost=tree.cost,
        method=f"{tree.method} Steiner tree over {tree.candidates} candidate tables"
        if steps
        else "single table",
        dropped=tuple(dropped),
        ties=tuple(ties),
        patterns=tuple(applied),
    )
    grain = _grain(view)
    return replace(view, grain=tuple(grain), fans_out=grain != [root_alias])


def _second_copies(
    graph: RelationshipGraph,
    repeated: set[str],
    nodes: list[str],
    root: str,
    root_alias: str,
    steps: list[JoinStep],
    instances: dict[str, list[str]],
    new_alias: Callable[[str], str],
) -> list[JoinStep]:
    """A table asked for twice with no self-reference: a second copy of its branch.

    "Papers written by both A and B": writes and author twice. The second copy of writes hangs
    where the first does (on the paper), or — when writes is where the view starts and the paper
    itself is not in the view — on the key the two copies share (writes_2.paper_id =
    writes.paper_id); the repeated tables below it (author) are copied under it.
    """
    out: list[JoinStep] = []
    by_alias = {s.alias: s for s in steps}
    table_of = {root_alias: root, **{s.alias: s.table.lower() for s in steps}}
    for t in sorted(repeated):
        if graph.self_edges(t) or len(instances.get(t, [])) != 1:
            continue  # a self-reference made the copy, or roles already did
        first = instances[t][0]
        step = by_alias.get(first)
        if step is not None and table_of[step.parent] in repeated:
            continue  # copied with the branch above it
        table = graph.catalog.table(t)
        assert table is not None
        copy_alias = new_alias(f"{first}_2")
        why = f"{table.name} asked for twice: a second copy of its branch"
        if step is not None:
            out.append(
                replace(step, alias=copy_alias, on=_realias(step.on, first, copy_alias), why=why, kind="left")
            )
        else:
            # the view starts at t: hang the copy on what both copies reference — a table of the
            # view that is not repeated (the paper), else the key itself (writes.paper_id)
            refs = [
                e
                for e in graph.edges
                if e.table.lower() == t
                and len(e.columns) == 1
                and e.ref_unique
                and not e.via
                and not e.is_self
            ]
            hubs = [e for e in refs if e.ref_table.lower() in nodes and e.ref_table.lower() not in repeated]
            shared = hubs or [e for e in refs if e.ref_table.lower() not in nodes]
            if len(shared) != 1:
                continue
            edge = shared[0]
            col = edge.columns[0]
            key = f"{edge.ref_table}.{edge.ref_columns[0]}"
            hub = instances[edge.ref_table.lower()][0] if hubs else first
            anchor = f"{hub}.{edge.ref_columns[0]}" if hubs else f"{first}.{col}"
            out.append(
                JoinStep(
                    alias=copy_alias,
                    table=table.name,
                    kind="inner",
                    on=((anchor, f"{copy_alias}.{col}"),),
                    origin=edge.origin,
                    reason=f"both copies reference {key}",
                    schema=table.schema,
                    parent=hub,
                    confidence=edge.confidence,
                    fans_out=True,
                    why=why + f", on the {key} they share",
                )
            )
        copies = {first: copy_alias}
        for s in steps:  # the repeated tables below the first copy, in join order
            if s.parent in copies and s.table.lower() in repeated and s.alias not in copies:
                copies[s.alias] = new_alias(f"{copy_alias}_{s.table}")
                on = _realias(_realias(s.on, s.parent, copies[s.parent]), s.alias, copies[s.alias])
                out.append(
                    replace(s, alias=copies[s.alias], parent=copies[s.parent], on=on, why=why, kind="left")
                )
    return out


def _realias(on: tuple[tuple[str, str], ...], old: str, new: str) -> tuple[tuple[str, str], ...]:
    def swap(ref: str) -> str:
        alias, col = ref.split(".", 1)
        return f"{new}.{col}" if alias == old else ref

    return tuple((swap(a), swap(b)) for a, b in on)


def _players(graph: RelationshipGraph, role_table: str) -> set[str]:
    """The tables that play the role: the player side of the role table and its subtypes."""
    player = graph.roles[role_table].tables[1].lower()
    return {player, *graph.subtypes.get(player, ())}


def _choose_root(
    graph: RelationshipGraph,
    requested: list[str],
    nodes: list[str],
    roles: Mapping[frozenset[str], list[Edge]],
    avoid: Set[str] = frozenset(),
) -> str:
    """Where the view starts: as high in the pattern trees as the tables allow (a star's root before
    its branches, so they can be LEFT JOINed), requested before connectors, then the table from
    which the fewest joins repeat rows, then the most relevant one.

    tax and supercharge alone start from payment_amount, their parent: starting from tax would keep
    only tax amounts, and every supercharge column would be NULL.
    """

    in_view = set(nodes)

    def depth(t: str) -> int:
        """Ancestors of `t` along pattern trees that are in the view too."""
        seen = {t}
        while t in graph.branch_parent and graph.branch_parent[t][0] not in seen:
            t = graph.branch_parent[t][0]
            seen.add(t)
        return len(seen & in_view) - 1

    present = [t for t in requested if t in nodes]
    pool = (
        [t for t in nodes if t not in graph.lookups and t not in avoid]
        or [t for t in nodes if t not in graph.lookups]
        or list(nodes)
    )
    top = min(depth(t) for t in pool)
    candidates = [t for t in present if depth(t) == top and t in pool] or [t for t in pool if depth(t) == top]

    def edges_of(a: str, b: str) -> Sequence[Edge]:
        return roles[frozenset((a, b))]

    return min(
        candidates,
        key=lambda t: (fanouts(roles, t, edges_of), present.index(t) if t in present else len(present), t),
    )


def role_edges(graph: RelationshipGraph, a: str, b: str) -> list[Edge]:
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


def _role_alias(edge: Edge, parent: str, table: str) -> str:
    """source_airport for flights.source_airport → airports; managed_department for the reverse way."""
    if edge.table.lower() == parent.lower():
        role = edge.role
        stems = {w for w in re.split(r"_", role) if w}
        tname = safe_name(table)
        if any(tname.startswith(s) or s.startswith(tname.rstrip("s")) for s in stems if len(s) >= 3):
            return role
        return f"{role}_{tname}"
    return f"{safe_name(table)}_by_{edge.role}"


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
    where: tuple[tuple[str, str], ...] = (),
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
        where=where,
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
            name = c.name if single else safe_name(f"{alias}_{c.name}")
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
    base = "_".join(safe_name(t) for t in requested[:3])[:48].strip("_") or "joined"
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
