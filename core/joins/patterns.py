"""The enterprise patterns in a view, decided by the question's words (Lucy §3.3, "more constraints").

- Role tables: a party plays roles in an agreement (role code 'AG' agent, 'PH' holder). A role the
  question names gets its own copy of the role table, with the role filter in the join, and its
  own copy of the party ("agents and the policies they sold"; "holder and agent of each policy").
- Typed facts: an amount table typed by one-to-one subtype tables (loss payment, loss reserve...).
  Each type the question names gets its own copy of the amount table, joined to its subtype table
  inside the copy's join, so "loss payment and loss reserve by claim" never reads a reserve as a
  payment.
- Parallel paths: A reaches B directly and through C. The question's words decide: naming C routes
  through C; when C is in the view for another reason the two paths are equally good, and the
  recipe says which one the view took and what the other join would be.

Subtypes need no pass here: shared-key edges (core.graph.shared_keys) join the tables hanging off a
supertype straight to its subtype.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from core.graph import RelationshipGraph
from core.graph.multigraph import OVERLAPPING
from core.graph.names import words_of
from core.joins.identifiers import safe_name
from core.joins.steiner import Tree
from core.joins.wording import Wording


@dataclass(frozen=True)
class RoleCopy:
    """One role named by the question: a copy of `table` with `column` = `code` in its join."""

    table: str  # the role table, lower case
    column: str
    code: str
    label: str  # alias of the player's copy: agent, policy_holder
    how: str  # why: "'agent' names code AG", or a guess from the code's letters
    said: str = ""  # the words of the question that named it


def meanings(meaning: str) -> list[str]:
    """'policy holder, policyholder / owner' → the phrases any of which names the role."""
    return [m.strip() for m in re.split(r"[,;/|]", meaning) if m.strip()]


def named_roles(graph: RelationshipGraph, words: Wording) -> dict[str, list[RoleCopy]]:
    """Role table → the roles the question names in it (nothing when it names none)."""
    out: dict[str, list[RoleCopy]] = {}
    if not words:
        return out
    for low, p in graph.roles.items():
        copies = []
        for code, meaning in p.codes:
            phrases = meanings(meaning)
            said = max((m for m in phrases if m != code and words.names(m)), key=len, default=None)
            if said is not None:
                copies.append(
                    RoleCopy(low, p.column, code, safe_name(phrases[0]), f"'{said}' is code {code}", said)
                )
            elif words.names_code(code):
                label = phrases[0] if phrases and phrases[0] != code else f"role_{code}"
                copies.append(RoleCopy(low, p.column, code, safe_name(label), f"code {code} named", code))
            elif meaning == code and (guess := words.abbreviates(code)) is not None:
                how = f"'{guess}' read as code {code} (a guess from its letters: give the codes meanings in the catalog)"
                copies.append(RoleCopy(low, p.column, code, safe_name(guess), how, guess))
        if copies:
            out[low] = copies
    return out


def named_tables(
    graph: RelationshipGraph, requested: Sequence[str], words: Wording, roles: dict[str, list[RoleCopy]]
) -> list[tuple[str, str]]:
    """Tables the question names through a pattern although linking did not ask for them:
    (table, why). A subtype ("loss reserve") of a requested typed fact or supertype, the role table
    of a named role next to a requested table, the middle table of a parallel path."""
    if not words:
        return []
    asked = set(requested)

    def near(table: str) -> bool:  # asked, or joined to a table asked (not: every neighbour of a hub)
        return table in asked or any(t in asked for t in graph.neighbors(table))

    out: dict[str, str] = {}
    words = words.without([c.said for cs in roles.values() for c in cs if c.said])
    for parent, children in graph.subtypes.items():
        if not near(parent):
            continue
        for child in children:
            table = graph.catalog.table(child)
            if child not in asked and table is not None and _named(words, table.name, table.synonyms):
                out.setdefault(child, f"the question names {table.name}, a type of {parent}")
    for role_table, copies in roles.items():
        thing, player = (t.lower() for t in graph.roles[role_table].tables)
        sides = {thing, player, *graph.subtypes.get(thing, ()), *graph.subtypes.get(player, ())}
        if role_table not in asked and any(map(near, sides | {role_table})) and sides & (asked | set(out)):
            out.setdefault(role_table, f"the question names the role {', '.join(c.label for c in copies)}")
        things = {thing, *graph.subtypes.get(thing, ())}
        if len(copies) > 1 and (role_table in asked or role_table in out) and not things & (asked | set(out)):
            # two roles in one agreement: the agreement ties them together
            out.setdefault(thing, f"it ties the roles {', '.join(c.label for c in copies)} to one {thing}")
    for p in graph.parallel_from(asked):
        a, b, c = p.root.lower(), p.tables[0].lower(), p.tables[1].lower()
        if b in asked and c not in asked:
            table = graph.catalog.table(c)
            common = {w for t in (a, b) for w in words_of(t)}
            if table is not None and (
                words.distinctive(table.name, common) or _named(words, "", table.synonyms)
            ):
                out.setdefault(
                    c, f"the question names {table.name}: {p.root} reaches {p.tables[0]} through it"
                )
    return list(out.items())


def _named(words: Wording, name: str, synonyms: Iterable[str]) -> bool:
    return (bool(name) and words.names(name)) or any(words.names(s) for s in synonyms)


def typed_plan(
    graph: RelationshipGraph, nodes: Sequence[str], requested: Sequence[str]
) -> dict[str, list[str]]:
    """Typed fact → its subtypes in the view that each get their own copy of the fact.

    Only when the fact hangs off another table of the view (its owner): alone, one row per amount
    with the subtypes LEFT JOINed is the view. Not when the data shows rows of two types at once
    (a checking and a savings account of one customer): then one row with both is what is meant.
    """
    present = set(nodes)
    out: dict[str, list[str]] = {}
    typed = {
        p.root.lower()
        for p in graph.patterns
        if p.kind == "typed_fact" or (p.kind == "subtype" and len(p.tables) > 1)
    }
    # copies are right whatever the split; only types that share rows read better as one row each
    overlapping = {p.root.lower() for p in graph.patterns if p.description.startswith(OVERLAPPING)}
    for fact, children in graph.subtypes.items():
        if fact not in present or fact not in typed:
            continue
        chosen = [c for c in children if c in present]
        # the owner: a table of the view the fact belongs to (claim_amount → claim)
        owners = [
            n
            for n, edges in graph.neighbors(fact).items()
            if n in present
            and n not in children
            and any(e.table.lower() == fact and not e.src_unique and not e.via for e in edges)
        ]
        if not chosen or not owners or (len(chosen) > 1 and fact in overlapping):
            continue
        if fact in requested and len(chosen) == 1 and not any(o in requested for o in owners):
            continue
        out[fact] = chosen
    return out


def resolve_parallel(
    graph: RelationshipGraph, tree: Tree, words: Wording, notes: list[str], ties: list[str]
) -> Tree:
    """A reaches B directly and through C, all three in the view: two of the three joins make the tree.

    The question decides when it names the role of one of the two references to B (a department's
    *head* is department.head_id → employee; a professor's own record is professor.emp_id →
    employee). Otherwise the tree stays as the cost and fan-out passes left it, and the recipe
    says which joins it used and what the other join would be: the SQL writer (or the clarifier)
    decides. Without C in the view, A's own reference is the only path, and a note says so.
    """
    pairs = list(tree.pairs)
    nodes = set(tree.nodes)
    for p in graph.parallel_from(nodes):
        a, b, c = p.root.lower(), p.tables[0].lower(), p.tables[1].lower()
        if b not in nodes:
            continue
        present = {frozenset(q) for q in pairs}
        ab, ac, cb = frozenset((a, b)), frozenset((a, c)), frozenset((c, b))
        if c not in nodes:
            if ab in present:
                notes.append(
                    f"{p.root} also reaches {p.tables[0]} through {p.tables[1]}: the view uses {p.root}'s own "
                    f"reference ({_join_text(graph, a, b)}) because the question does not name {p.tables[1]}"
                )
            continue
        if len({ab, ac, cb} & present) != 2:
            continue
        via_c = _names_role(graph, words, c, b)
        direct = _names_role(graph, words, a, b)
        want = {ac, cb} if via_c and not direct else {ab, ac} if direct and not via_c else None
        if want is not None:
            pairs = [q for q in pairs if frozenset(q) not in {ab, ac, cb}] + [_ordered(x) for x in want]
            side = f"{p.tables[1]}'s" if want == {ac, cb} else f"{p.root}'s own"
            notes.append(
                f"{p.root} reaches {p.tables[0]} directly and through {p.tables[1]}: the question names {side}"
            )
            continue
        used = [x for x in (ab, ac, cb) if x in present]
        other = next(x for x in (ab, ac, cb) if x not in present)
        ties.append(
            f"{p.root} reaches {p.tables[0]} directly and through {p.tables[1]}: the view joins "
            + " and ".join(_join_text(graph, *sorted(x)) for x in used)
            + f"; the other reading joins {_join_text(graph, *sorted(other))} instead"
        )
    return Tree(tree.nodes, list(pairs), tree.cost, tree.method, tree.candidates)


def _ordered(pair: frozenset[str]) -> tuple[str, str]:
    a, b = sorted(pair)
    return a, b


def _join_text(graph: RelationshipGraph, a: str, b: str) -> str:
    return ", ".join(
        f"{e.table}.{x} = {e.ref_table}.{y}"
        for e in graph.edges_between(a, b)[:1]
        for x, y in zip(e.columns, e.ref_columns, strict=True)
    )


def _names_role(graph: RelationshipGraph, words: Wording, src: str, ref: str) -> bool:
    """Does the question name what `src`'s reference to `ref` means (head, manager, holder)?"""
    common = set(words_of(ref)) | {"id", "num", "no", "code", "key", "number", "identifier"}
    for e in graph.edges_between(src, ref):
        if e.table.lower() == src and words.distinctive(" ".join(e.columns), common | set(words_of(src))):
            return True
    return False
