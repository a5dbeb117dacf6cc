"""The design patterns Lucy reasons with (§3.1), from the catalog or read off the edges.

Detected here, conservatively (a wrong "lookup" would forbid a legitimate path, a wrong "bridge"
would force a detour; the catalog can always declare what detection misses, or `ignore` what it
gets wrong):

- many-to-many bridges: a table that exists to pair rows of two others;
- role tables: a bridge whose extra column is a small set of codes naming the role one side plays
  in the other (a party is the 'AG' agent or the 'PH' holder of an agreement) — found by profiling
  the codes, or from the catalog's value meanings or a code table the column references;
- subtypes: a table whose key is (a unique reference to) another table's key (policy.policy_id is
  an agreement_id), exclusive when their keys never overlap;
- typed facts: a fact table (it belongs to an owner) with several one-to-one subtype tables, one
  per type of row (claim_amount is a loss payment, a loss reserve, ...);
- lookup tables: small code tables many others point at;
- parallel paths: a table that reaches another both directly and through a third
  (policy_amount → policy, and policy_amount → policy_coverage_detail → policy).

Stars and snowflakes come from the catalog only.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence, Set
from dataclasses import replace

from core.catalog import Catalog, Column, Pattern, Table
from core.graph.columns import non_key_class
from core.graph.multigraph import EXCLUSIVE, OVERLAPPING, Edge
from core.graph.names import table_stems, words_of
from core.graph.profiling import Profiler

LOOKUP_WORDS = frozenset(
    {"ref", "lookup", "lkp", "lu", "type", "types", "code", "codes", "status", "kind", "enum"}
)
# Words in a column name that say it names a role: party_role_code, participation_type, capacity.
ROLE_WORDS = frozenset({"role", "roles", "function", "capacity", "relationship", "relation", "participation"})
MAX_ROLE_CODES = 12  # more distinct values than this is data, not a set of roles
MAX_CODE_CHARS = 30


def catalog_patterns(catalog: Catalog) -> list[Pattern]:
    """The catalog's patterns, without the corrections that only switch a detection off."""
    return [p for p in catalog.patterns if catalog.table(p.root) is not None and not p.ignore]


def detect_patterns(
    catalog: Catalog, edges: Sequence[Edge], given: Sequence[Pattern], profiler: Profiler | None = None
) -> list[Pattern]:
    """Bridges, role tables, subtypes, typed facts, lookups and parallel paths read off the edges.

    A pattern the catalog declares or ignores (same kind, same root) is not detected again.
    """
    trusted = [e for e in edges if not e.is_self and (e.origin != "inferred" or e.confidence >= 0.7)]
    outgoing: dict[str, list[Edge]] = defaultdict(list)
    incoming: dict[str, list[Edge]] = defaultdict(list)
    for e in trusted:
        outgoing[e.table.lower()].append(e)
        incoming[e.ref_table.lower()].append(e)
    # the catalog's word on a root, declared or ignored, settles that kind of pattern there
    settled = {(p.kind, p.root.lower()) for p in [*catalog.patterns, *given]}
    claimed = {p.root.lower() for p in given} | {t.lower() for p in given for t in p.tables}
    out: list[Pattern] = []

    roles = _role_tables(catalog, outgoing, incoming, claimed, settled, profiler)
    out += roles
    role_roots = {p.root.lower() for p in roles} | {p.root.lower() for p in given if p.kind == "role"}

    # many-to-many: a table that exists to pair rows of two others
    bridges: set[str] = set()
    for t in catalog.tables:
        low = t.name.lower()
        outs = outgoing.get(low, [])
        sides = sorted({e.ref_table for e in outs}, key=str.lower)
        if len(sides) != 2 or incoming.get(low) or low in claimed or low in role_roots:
            continue
        if any(e.src_unique for e in outs):
            continue
        fk_cols = {c.lower() for e in outs for c in e.columns}
        surrogate = {c.lower() for c in t.primary_key} if len(t.primary_key) == 1 else set()
        payload = [c for c in t.columns if c.name.lower() not in fk_cols | surrogate]
        if len(payload) > 2 or any(non_key_class(c) == "amount" for c in payload):
            continue  # money changing hands is a fact of its own (a payment), not a pairing
        bridges.add(low)
        if ("many_to_many", low) not in settled:
            out.append(Pattern("many_to_many", t.name, tuple(sides), "detected", "pairs rows of two tables"))

    out += _subtypes(catalog, trusted, outgoing, bridges | role_roots, settled, profiler)

    # lookup: a small code table many others point at, pointing nowhere itself
    for t in catalog.tables:
        low = t.name.lower()
        if low in claimed or low in bridges or low in role_roots or outgoing.get(low):
            continue
        referrers = {e.table.lower() for e in incoming.get(low, [])}
        if len(referrers) < 2 or len(t.columns) > 4 or ("lookup", low) in settled:
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
    lookups = {p.root.lower() for p in [*given, *out] if p.kind == "lookup"}
    out += _parallel_paths(catalog, outgoing, lookups, settled)
    return out


# ---------------------------------------------------------------------------------------------
# role tables


def _role_tables(
    catalog: Catalog,
    outgoing: dict[str, list[Edge]],
    incoming: dict[str, list[Edge]],
    claimed: set[str],
    settled: Set[tuple[str, str]],
    profiler: Profiler | None,
) -> list[Pattern]:
    """Bridges whose extra column is a small set of codes naming the role one side plays in the other."""
    out = []
    for t in catalog.tables:
        low = t.name.lower()
        if low in claimed or ("role", low) in settled or incoming.get(low):
            continue
        outs = [e for e in outgoing.get(low, []) if e.ref_unique and not e.src_unique and not e.via]
        if len(outs) < 2:
            continue
        for col in t.columns:
            if not set(words_of(col.name)) & ROLE_WORDS or col.kind not in ("text", "integer", "other"):
                continue
            code_edges = [e for e in outs if col.name.lower() in (c.lower() for c in e.columns)]
            sides = sorted({e.ref_table for e in outs if e not in code_edges}, key=str.lower)
            if len(sides) != 2 or non_key_class(col) is not None:
                continue
            codes = _role_codes(catalog, t, col, code_edges, profiler)
            if len(codes) < 2:
                continue
            thing, player = _player_last(col, sides)
            shown = ", ".join(f"{c} = {m}" if m != c else c for c, m in codes[:8])
            out.append(
                Pattern(
                    "role",
                    t.name,
                    (thing, player),
                    "detected",
                    f"{player} plays a role in {thing}, named by {col.name}: {shown}",
                    column=col.name,
                    codes=codes,
                )
            )
            break
    return out


def _role_codes(
    catalog: Catalog, table: Table, col: Column, code_edges: Sequence[Edge], profiler: Profiler | None
) -> tuple[tuple[str, str], ...]:
    """The codes of a role column and what they mean: the catalog's value meanings, else the code
    table the column references, else the distinct values profiling finds (meaning = the code)."""
    if col.values:
        return tuple((str(k), str(v)) for k, v in col.values.items())[:MAX_ROLE_CODES]
    if profiler is None:
        return ()
    for e in code_edges:
        ref = catalog.table(e.ref_table)
        if ref is None or len(e.columns) != 1:
            continue
        label = _label_column(ref, e.ref_columns[0])
        pairs = profiler.pairs(ref, e.ref_columns[0], label.name) if label is not None else []
        if 2 <= len(pairs) <= MAX_ROLE_CODES:
            return tuple(sorted(dict(pairs).items()))
    sample = profiler.sample(table)
    values = sorted((sample or {}).get(col.name) or ())
    rows = profiler.rows_sampled.get(table.name.lower(), 0)
    if not 2 <= len(values) <= MAX_ROLE_CODES or rows < 2 * len(values):
        return ()
    if any(len(v) > MAX_CODE_CHARS for v in values) or non_key_class(col, values) is not None:
        return ()
    return tuple((v, v) for v in values)


def _label_column(table: Table, key: str) -> Column | None:
    """The text column that names a code table's rows: its name, label or description."""
    texts = [c for c in table.columns if c.kind in ("text", "other") and c.name.lower() != key.lower()]
    named = [c for c in texts if set(words_of(c.name)) & {"name", "label", "title", "description", "desc"}]
    found = named or texts
    return found[0] if found else None


def _player_last(col: Column, sides: Sequence[str]) -> tuple[str, str]:
    """(the thing, the player): the side the role column's name names plays the role."""
    words = "".join(words_of(col.name))
    named = [s for s in sides if any(stem in words for stem in table_stems(s) if len(stem) >= 3)]
    if len(named) == 1:
        player = named[0]
        return next(s for s in sides if s != player), player
    return sides[0], sides[1]


# ---------------------------------------------------------------------------------------------
# subtypes and typed facts


def _subtypes(
    catalog: Catalog,
    trusted: Sequence[Edge],
    outgoing: dict[str, list[Edge]],
    not_children: set[str],
    settled: Set[tuple[str, str]],
    profiler: Profiler | None,
) -> list[Pattern]:
    """Tables keyed by (a unique reference to) a parent's key; several of them under a fact: a typed fact."""
    links: dict[str, list[Edge]] = defaultdict(list)
    for e in trusted:
        if e.src_unique and e.ref_unique and not e.via and e.table.lower() not in not_children:
            ref = catalog.table(e.ref_table)
            if ref is not None and catalog.table(e.table) is not None:
                links[ref.name].append(e)
    out = []
    for parent, edges in sorted(links.items()):
        low = parent.lower()
        if ("subtype", low) in settled or ("typed_fact", low) in settled:
            continue
        children = tuple(sorted({e.table for e in edges}, key=str.lower))
        child_set = {c.lower() for c in children}
        owners = sorted(
            {
                e.ref_table
                for e in outgoing.get(low, [])
                if not e.src_unique and e.ref_table.lower() not in child_set
            }
        )
        split = _disjoint(profiler, catalog, edges) if len(children) > 1 and profiler is not None else None
        if len(children) > 1 and owners:
            note = f"each {parent} row (of a {', '.join(owners)}) is typed by one-to-one tables"
            if split is True:
                note = f"{EXCLUSIVE}: each {parent} row is one of them (their keys never overlap); {note}"
            elif split is False:
                note = f"{OVERLAPPING}: a {parent} row can be several of them; {note}"
            out.append(Pattern("typed_fact", parent, children, "detected", note))
            continue
        shares = all(_is_whole_key(catalog, e) for e in edges)
        note = "subtypes sharing its primary key" if shares else "one-to-one extensions"
        if split is True:
            note = f"{EXCLUSIVE}: each {parent} row is at most one of them (their keys never overlap); {note}"
        elif split is False:
            note = f"{OVERLAPPING}: a {parent} row can be several of them; {note}"
        out.append(Pattern("subtype", parent, children, "detected", note))
    return out


def _is_whole_key(catalog: Catalog, e: Edge) -> bool:
    """Is the edge the child's whole primary key pointing at the parent's whole primary key?"""
    child, parent = catalog.table(e.table), catalog.table(e.ref_table)
    if child is None or parent is None:
        return False
    return {c.lower() for c in e.columns} == {c.lower() for c in child.primary_key} and {
        c.lower() for c in e.ref_columns
    } == {c.lower() for c in parent.primary_key}


def _disjoint(profiler: Profiler, catalog: Catalog, links: Sequence[Edge]) -> bool | None:
    """Do the children's references to the parent never share a value (an exclusive split)?

    True: disjoint; False: some parent row has two of them; None: too few rows to tell.
    """
    seen: set[str] = set()
    small = False
    for e in links:
        table = catalog.table(e.table)
        kv = profiler.key_values(table, e.columns[0]) if table is not None and len(e.columns) == 1 else None
        if kv is None:
            return None
        if seen & kv[0]:
            return False
        small = small or len(kv[0]) < 5
        seen |= kv[0]
    return None if small else True


# ---------------------------------------------------------------------------------------------
# parallel paths


def _parallel_paths(
    catalog: Catalog, outgoing: dict[str, list[Edge]], lookups: set[str], settled: Set[tuple[str, str]]
) -> list[Pattern]:
    """A reaches B directly and through C (A → B, A → C → B, all many-to-one): two legitimate paths."""
    ups: dict[str, dict[str, Edge]] = defaultdict(dict)
    for low, edges in outgoing.items():
        for e in edges:
            if e.ref_unique and not e.src_unique and not e.via:
                ups[low].setdefault(e.ref_table.lower(), e)
    out = []
    for a in sorted(ups):
        if ("parallel_path", a) in settled:
            continue
        for b in sorted(ups[a]):
            if b in lookups:
                continue
            for c in sorted(ups[a]):
                if c != b and b in ups.get(c, {}):
                    ta, tb, tc = (catalog.table(x) for x in (a, b, c))
                    if ta is None or tb is None or tc is None:
                        continue
                    out.append(
                        Pattern(
                            "parallel_path",
                            ta.name,
                            (tb.name, tc.name),
                            "detected",
                            f"{ta.name} reaches {tb.name} directly ({ups[a][b]}) and through {tc.name}",
                        )
                    )
    return out


def complete_roles(catalog: Catalog, patterns: Sequence[Pattern], profiler: Profiler | None) -> list[Pattern]:
    """Catalog role patterns with the codes filled in when the YAML names the column but not its codes."""
    out = []
    for p in patterns:
        table = catalog.table(p.root) if p.kind == "role" else None
        col = table.column(p.column) if table is not None and p.column else None
        if table is not None and col is not None and not p.codes:
            code_edges = [
                Edge(table.name, (col.name,), r.ref_table, r.ref_columns)
                for r in catalog.relationships_of(table.name)
                if r.table.lower() == table.name.lower()
                and [c.lower() for c in r.columns] == [col.name.lower()]
            ]
            p = replace(p, codes=_role_codes(catalog, table, col, code_edges, profiler))
        out.append(p)
    return out
