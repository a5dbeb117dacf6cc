"""How sure keyword mode is of its reading: the evidence for and against answering.

Keyword mode's one job is to be right or silent. A reading that reached this point placed every
word of the question (core/keyword/bind.py); what is left to doubt is generic, never about a
particular question:

- the joins: every join follows a key (never many rows to many), the tree does not link two
  things only through a third the question never names, no table is joined in two roles the
  words cannot tell apart, and no other join tree of about the same cost would do as well — when
  two would, the words must name the one taken ('written' → writes). These are hard rules: a
  reading that breaks one is declined (`Decline`), whatever the threshold.
- how well the words matched (an exact name, a synonym, a near spelling of a stored value);
- the margin to the nearest competing reading of a phrase (another column, another value);
- the evidence behind each join (a declared foreign key, or one inferred from names and values);
- readings of the question's shape that have a competitor keyword mode cannot rule out: 'number
  of X' for a column (different X values, or X rows?), the average of a child's column said of the
  parent (over rows, or over parents?), a cue word that is also a column's name ('count').

Each doubt is an `Evidence` with a score in (0, 1]; the confidence is their product. Keyword mode
answers when it is at least `engine.keyword_min_confidence` (config/askbase.yaml), and the
benchmark prints how often answers in each confidence bucket were right (core/bench/calibration.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from core.graph import RelationshipGraph
from core.joins import JoinStep, View, synthesize_view
from core.keyword.columns import NUMERIC, TEMPORAL, column_kind, is_pointer, label_columns
from core.keyword.lexicon import WORDS
from core.keyword.match import Lexicon, Mention, Sense
from core.keyword.query import Decline, Query, Ref
from core.values import fold, similarity

TREE_SLACK = 0.5  # another join tree this close in cost is as plausible (one more table costs ≥ 1)
CLOSE_RIVAL = 0.15  # a competing reading of a phrase this close in total score is a real doubt
MATCH_TIE = 0.05  # a reading of another kind (a value against a table or column) this close
EvidenceKind = Literal["match", "margin", "joins", "reading"]


@dataclass(frozen=True)
class Evidence:
    """One doubt about the reading: how much it lowers the confidence, and why, in plain words.
    A doubt between concrete readings of a phrase carries them (the chosen one first), so the
    person can be asked which one they meant."""

    kind: EvidenceKind
    score: float  # 1.0: no doubt at all
    says: str
    words: str = ""
    options: tuple[Sense, ...] = ()


@dataclass(frozen=True)
class Confidence:
    score: float
    evidence: tuple[Evidence, ...] = ()

    @property
    def weakest(self) -> Evidence | None:
        return min(self.evidence, key=lambda e: e.score, default=None)

    def askable(self, threshold: float) -> Evidence | None:
        """A doubt between two to four concrete readings of a phrase that, once the person
        settles it, would leave the reading sure enough to answer: ask instead of declining."""
        # a word whose best reading drags in a table nothing else is about: its rivals in that
        # table are no better a guess, so there is nothing sound to offer
        dragged = {e.words for e in self.evidence if e.kind == "match" and e.words and not e.options}
        for e in sorted(self.evidence, key=lambda e: e.score):
            if e.words in dragged:
                continue
            if 2 <= len(e.options) <= 4 and self.score / e.score >= threshold:
                return e
        return None

    def trace(self, threshold: float) -> dict[str, Any]:
        return {
            "score": round(self.score, 3),
            "threshold": threshold,
            "evidence": [f"{e.kind} {e.score:.2f}: {e.says}" for e in self.evidence],
        }


# ---------------------------------------------------------------------------------------------
# joins: hard rules


@dataclass(frozen=True)
class JoinNeeds:
    """What the question asks of the joins, as the join rules read it."""

    read: frozenset[str]  # tables whose rows or columns the query reads (lower case)
    named: frozenset[str]  # tables the question names in any word
    words: tuple[str, ...] = ()  # words that name a relation rather than a thing ('written')
    question: str = ""  # the words view synthesis reads roles, types and paths from
    filtered: frozenset[tuple[str, str]] = frozenset()  # (table, column) the query filters on


def join_doubt(
    view: View,
    needs: JoinNeeds,
    graph: RelationshipGraph,
    deny_tables: Sequence[str] = (),
    deny_columns: Sequence[str] = (),
) -> str:
    """Why keyword mode must not answer over `view` ('' when the joins are sound and unique)."""
    if view.single_table:
        return unsound(view, needs) or unnamed_kind(view, needs, graph)
    return (
        unsound(view, needs)
        or unnamed_kind(view, needs, graph)
        or other_key(view, graph.restricted(deny_tables, deny_columns))
        or rival_tree(view, needs, graph, deny_tables, deny_columns)
    )


def unnamed_kind(view: View, needs: JoinNeeds, graph: RelationshipGraph) -> str:
    """A role table joined for no role ('the organisations that hold business policies' joined
    through every party role — agent, broker, holder alike), or the amounts of a typed fact read
    across all its types (loss payments and reserves added together): the words name neither,
    so keyword mode cannot tell which rows are meant."""
    for p in graph.patterns:
        root = p.root.lower()
        if p.kind == "role":
            joined = [s for s in view.steps if s.table.lower() == root]
            unnamed = (view.root_table.lower() == root or joined) and not any(s.role for s in joined)
            if unnamed and (root, p.column.lower()) not in needs.filtered:
                codes = ", ".join(meaning or code for code, meaning in p.codes[:5])
                return f"it does not say which role {p.tables[-1]} plays in {p.tables[0]} ({codes})"
        if p.kind == "typed_fact" and root in needs.read:
            types = {t.lower() for t in p.tables}
            if not types & {t.lower() for t in view.tables}:
                return f"it does not say which kind of {p.root} is meant ({', '.join(p.tables)})"
    return ""


def unsound(view: View, needs: JoinNeeds) -> str:
    """Why joining along `view` would not mean what the question says ('' when it would)."""
    if view.ties:
        return f"the tables can be joined in two equally good ways ({view.ties[0]}), and the words do not say which"
    aliases = view.aliases
    for s in view.steps:
        hub = _passed_through(s)
        if hub and hub.lower() not in needs.named:
            parent = aliases.get(s.parent, s.parent)
            cols = ", ".join(c.split(".", 1)[1] for pair in s.on for c in pair[:1])
            return (
                f"{parent} and {s.table} are linked only through a shared {cols} of {hub}, which the "
                "question does not mention (it matches many rows to many)"
            )
    copies: dict[str, list[str]] = {}
    for alias, table in aliases.items():
        copies.setdefault(table.lower(), []).append(alias)
    for table, names in copies.items():
        if len(names) > 1 and table in needs.read:
            return f"{table} is joined in {len(names)} roles and the words do not say which one is meant"
    return _hub(view, needs)


_PASS_THROUGH = re.compile(r"both reference ([^ ]+)\.[^.\s]+, whose own columns")


def _passed_through(step: JoinStep) -> str:
    """The table a step's join leaves out between two tables that both reference it (view
    synthesis joins paper_dataset.paper_id = paper_keyphrase.paper_id when paper's own columns are
    not needed): '' for a join along a key."""
    if not (step.fans_out and not step.determines_parent):
        return ""
    found = _PASS_THROUGH.search(step.reason)
    return found.group(1) if found else ""


def _referrers(view: View) -> dict[str, list[str]]:
    """For each alias, the neighbouring aliases in the tree that reference it (many-to-one)."""
    out: dict[str, list[str]] = {}
    for s in view.steps:
        if not s.fans_out:  # the parent references this step's table
            out.setdefault(s.alias, []).append(s.parent)
        if s.determines_parent:  # this step's table references the parent
            out.setdefault(s.parent, []).append(s.alias)
    return out


def _hub(view: View, needs: JoinNeeds) -> str:
    """Two tables joined only because both point at a row of a third that the question never
    names (conferences and publications 'of the same domain') relate in a way the question
    did not ask about."""
    aliases = view.aliases
    for alias, refs in _referrers(view).items():
        table = aliases[alias]
        if len(set(refs)) < 2 or table.lower() in needs.named:
            continue
        others = sorted({aliases[a] for a in refs})
        return f"{' and '.join(others)} are linked only through {table}, which the question does not mention"
    return ""


def other_key(view: View, graph: RelationshipGraph) -> str:
    """Two parts of the join tree that another foreign key links as directly as the one taken
    (a student's department, or the department of the student's course?): either tree answers,
    and they can differ."""
    aliases = view.aliases
    children: dict[str, list[str]] = {}
    for s in view.steps:
        children.setdefault(s.parent, []).append(s.alias)

    def below(alias: str) -> set[str]:
        out, todo = {alias}, [alias]
        while todo:
            for c in children.get(todo.pop(), []):
                out.add(c)
                todo.append(c)
        return out

    for s in view.steps:
        if s.role is not None or _passed_through(s):
            continue
        inside = below(s.alias)
        a = {aliases[x].lower() for x in inside}
        b = {aliases[x].lower() for x in aliases if x not in inside}
        pair = {aliases[s.parent].lower(), s.table.lower()}
        taken = 1.15 + 0.5 * (1.0 - s.confidence) if s.origin == "inferred" else 1.0
        for e in graph.edges:
            ends = {e.table.lower(), e.ref_table.lower()}
            if e.is_self or ends == pair or ends & a & b or ends & graph.lookups:
                continue
            crosses = (e.table.lower() in a and e.ref_table.lower() in b) or (
                e.table.lower() in b and e.ref_table.lower() in a
            )
            if crosses and e.cost <= taken + TREE_SLACK:
                return (
                    f"{e.table} and {e.ref_table} are linked by {', '.join(e.columns)} as well as through "
                    f"{aliases[s.parent]}–{s.table}, and the words do not say which"
                )
    return ""


def rival_tree(
    view: View,
    needs: JoinNeeds,
    graph: RelationshipGraph,
    deny_tables: Sequence[str] = (),
    deny_columns: Sequence[str] = (),
) -> str:
    """Another sound join tree over the same tables, about as cheap, that the words do not rule
    out: the question could mean either connection ('courses taken by students in a program':
    the courses of the program, or the courses on the students' records)."""
    requested = {t.lower() for t in view.requested}
    connectors = [t for t in dict.fromkeys(view.tables) if t.lower() not in requested]
    mine = {t.lower() for t in view.tables}
    for c in connectors:
        try:
            other = synthesize_view(
                graph,
                list(view.requested),
                deny_tables=[*deny_tables, c],
                deny_columns=deny_columns,
                question=needs.question,
            )
        except ValueError:
            continue
        # as plausible: about as cheap, or no more tables (Lucy's C3 makes a bridge path cheap
        # by fiat, so cost alone would hide a shorter connection the words may mean)
        close = other.cost <= view.cost + TREE_SLACK or len(other.tables) <= len(view.tables)
        if other.dropped or not close or unsound(other, needs):
            continue
        theirs = {t.lower() for t in other.tables}
        if _words_pick(needs.words, mine - theirs) and not _words_pick(needs.words, theirs - mine):
            continue  # 'authors who have written publications': writes, not the shared domain
        bridges = {b for bs in graph.bridges.values() for b in bs}
        if not needs.words and (mine - theirs) & bridges and not (theirs - mine) & bridges:
            # Lucy's C3: with no verb naming an event ('taken', 'bought'), two things are related
            # through their bridge ('clients in the Frankfurt datacenter': assigned pools), not
            # through a table of events that also links them (usage)
            continue
        return (
            f"the tables can be joined through {', '.join(sorted(mine - requested))} or through "
            f"{', '.join(sorted(theirs - requested)) or 'a direct key'}, and the words do not say which"
        )
    return ""


def _words_pick(words: Sequence[str], tables: set[str]) -> bool:
    """A relation word names one of `tables` ('written' → writes, 'enrolled' → enrollment)."""
    for w in words:
        stem = fold(w)
        for t in tables:
            for part in fold(t.replace("_", " ")).split():
                if len(part) >= 4 and (stem[:4] == part[:4] or similarity(stem, part) >= 0.75):
                    return True
    return False


# ---------------------------------------------------------------------------------------------
# soft evidence


def _other_kind(m: Mention) -> Sense | None:
    """A reading of another kind about as good: 'premium' names the table of amounts by a synonym
    and is also a stored amount type — all the amounts, or only the premiums?"""
    assert m.sense is not None
    if m.pinned:
        return None
    chosen = m.sense
    for s in m.senses:
        if (s.kind == "value") != (chosen.kind == "value") and s.score >= chosen.score - MATCH_TIE:
            return s
    return None


def fits_role(lex: Lexicon, alt: Sense, chosen: Sense, role: str) -> bool:
    """Only readings that could play the same part compete: the date a year is compared with must
    be a date, what is summed must be a number."""
    if alt.kind != "column" or not alt.column or not chosen.column:
        return True
    a = column_kind(lex, alt.table, alt.column)
    c = column_kind(lex, chosen.table, chosen.column)
    if role in ("subject", "measure", "order") and (c in TEMPORAL or c in NUMERIC):
        return a in TEMPORAL if c in TEMPORAL else a in NUMERIC
    return True


def _sense_text(s: Sense) -> str:
    if s.kind == "value":
        return f"{s.where} = '{s.value}'"
    return s.where


def _repeats(view: View, table: str) -> bool:
    """Do rows of `table` repeat in the view (as the compiler decides it)?"""
    if not view.fans_out:
        return False
    aliases = [a for a, t in view.aliases.items() if t.lower() == table.lower()]
    return not (len(view.grain) == 1 and aliases and view.grain[0] in aliases)


def _key_strength(lex: Lexicon, table: str) -> float:
    """How surely the compiler can count each row of `table` once over a join that repeats it:
    a declared key, a key other tables are found to reference, an id-like column, or nothing."""
    t = lex.table(table)
    if t is None:
        return 0.3
    if t.primary_key or any(len(u) == 1 for u in t.unique):
        return 1.0
    if lex.key_of(table):
        return 0.85
    labels = label_columns(lex, table)
    if len(labels) == 1 and labels[0].lower().endswith("id") and not is_pointer(lex, Ref(table, labels[0])):
        return 0.75
    return 0.3


def _repeated_parent(view: View, table: str) -> bool:
    """A table whose rows repeat in the view without the compiler taking each once: the view does
    not fan out from its root, but `table` is a parent of the rows it is joined to (a program's
    requirement repeated for each of its students)."""
    if view.fans_out or view.single_table:
        return False  # a fanned-out view is deduplicated by key (compile.py), or declined
    aliases = {a for a, t in view.aliases.items() if t.lower() == table.lower()}
    if aliases & set(view.grain):
        return False
    referenced = {a for a, refs in _referrers(view).items() for _ in refs}
    return bool(aliases & referenced)


# ---------------------------------------------------------------------------------------------
# the grammar's reading (core/keyword/bind.py): the same evidence, over its parts and query


def judge(
    query: Query,
    placed: Sequence[tuple[Mention, str]],
    view: View,
    lex: Lexicon,
    question: str,
    doubts: Sequence[tuple[float, str]] = (),
) -> Confidence:
    """The confidence of a bound reading over `view`; raises Decline when a join is unsound.
    `placed` are the question's parts with the role each plays; `doubts` what the binding pass
    chose between (score, why)."""
    db = lex.db
    named = {m.sense.table.lower() for m, _ in placed if m.sense is not None} | {
        t.lower() for t in query.tables
    }
    read = {r.table.lower() for r in query.all_refs()} | {m.table.lower() for m in query.measures}
    # verbs that name a table of one join path ('use' → usage): a verb that names none ('serve')
    # leaves two things related through their bridge (Lucy's C3)
    tables = {t.name.lower() for t in lex.catalog.tables}
    words = tuple(
        w
        for w in re.findall(r"[a-z]+", question.lower())
        if w in WORDS.sets["relation_verbs"] and _words_pick([w], tables)
    )
    filtered = frozenset((f.ref.table.lower(), f.ref.column.lower()) for f in query.filters)
    needs = JoinNeeds(frozenset(read), frozenset(named), words, question, filtered)
    reason = join_doubt(view, needs, db.graph, db.config.deny_tables, db.config.deny_columns)
    if reason:
        raise Decline(reason)
    evidence = [
        *_part_evidence(placed, lex),
        *_query_join_evidence(query, view, lex),
        *(Evidence("reading", score, says) for score, says in doubts),
    ]
    evidence = [e for e in evidence if e.score < 1.0]
    score = 1.0
    for e in evidence:
        score *= e.score
    return Confidence(round(score, 4), tuple(sorted(evidence, key=lambda e: e.score)))


def _part_evidence(placed: Sequence[tuple[Mention, str]], lex: Lexicon) -> list[Evidence]:
    out = []
    for m, role in placed:
        s = m.sense
        if s is None or m.pinned:
            continue
        if s.score < 0.999 and s.via != "choice":
            how = {
                "fuzzy": "is spelled like",
                "contains": "is part of values of",
                "synonym": "is a synonym of",
                "meaning": "is the meaning of a code in",
            }.get(s.via, "resembles")
            out.append(Evidence("match", round(s.score, 3), f"'{m.words}' only {how} {s.where}"))
        other = _other_kind(m)
        if other is not None and role not in ("thing", "owner"):
            out.append(
                Evidence(
                    "margin", 0.4, f"'{m.words}' could also be {_sense_text(other)}", m.words, (s, other)
                )
            )
        close = [
            (rival, gap)
            for rival, gap in m.rivals
            if gap < CLOSE_RIVAL and not lex.same_thing(rival, s) and fits_role(lex, rival, s, role)
        ]
        if close:
            rival, gap = close[0]
            out.append(
                Evidence(
                    "margin",
                    round(0.5 + 0.5 * gap / CLOSE_RIVAL, 3),
                    f"'{m.words}' could also be {_sense_text(rival)}",
                    m.words,
                    (s, *(r for r, _ in close[:3])),
                )
            )
    return out


def _query_join_evidence(q: Query, view: View, lex: Lexicon) -> list[Evidence]:
    out: list[Evidence] = []
    weakest = min((s for s in view.steps if s.origin == "inferred"), key=lambda s: s.confidence, default=None)
    if weakest is not None:
        out.append(
            Evidence(
                "joins", round(weakest.confidence, 3), f"the join {weakest.reason.split(' [')[0]} is inferred"
            )
        )
    for s in view.steps:
        if s.fans_out and not s.determines_parent and not _passed_through(s):
            out.append(
                Evidence(
                    "joins", 0.6, f"the join {s.reason.split(' [')[0]} is on columns not known to be keys"
                )
            )
    for m in q.measures:
        if m.func == "COUNT" and m.column is None and _repeats(view, m.table):
            key = _key_strength(lex, m.table)
            if key < 1.0:
                out.append(
                    Evidence("joins", key, f"{m.table} rows repeat in the joins and its key is not declared")
                )
        if m.func in ("SUM", "AVG") and m.ref is not None and _repeated_parent(view, m.table):
            out.append(
                Evidence(
                    "reading",
                    0.3,
                    f"each {m.table} {m.column} would count once per {view.root_table} row it is joined to",
                )
            )
    return out
