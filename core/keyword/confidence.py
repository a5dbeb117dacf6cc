"""How sure keyword mode is of its reading: the evidence for and against answering.

Keyword mode's one job is to be right or silent. A reading that reached this point placed every
word of the question (core/keyword/abstain.py); what is left to doubt is generic, never about a
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
from core.keyword.columns import NUMERIC, TEMPORAL, column_kind, is_key, is_pointer, label_columns
from core.keyword.match import Lexicon, Mention, Sense
from core.keyword.plan import Context, Decline, Measure, Plan, Query, Ref
from core.keyword.shapes import RELATION_VERBS, singular_phrase
from core.values import fold, similarity

TREE_SLACK = 0.5  # another join tree this close in cost is as plausible (one more table costs ≥ 1)
CLOSE_RIVAL = 0.15  # a competing reading of a phrase this close in total score is a real doubt
PARTIAL = 0.95  # a column matched below this names only part of it ('date' for end_date)
DRAGGED_IN = 0.6  # ... and is the only reason its table is in the reading
SHARED_BY = 3  # a word in column names of this many tables names no column by itself
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


def assess(plan: Plan, view: View, ctx: Context, question: str = "") -> Confidence:
    """The confidence of the first reader's `plan` answered over `view`; raises Decline when a
    join is unsound. `question`: the words the view was synthesized with."""
    check_joins(plan, view, ctx, question)
    evidence = [
        *_match_evidence(plan, ctx.lex),
        *_join_evidence(plan, view, ctx.lex),
        *_reading_evidence(plan, view, ctx.lex),
    ]
    evidence = [e for e in evidence if e.score < 1.0]
    score = 1.0
    for e in evidence:
        score *= e.score
    return Confidence(round(score, 4), tuple(sorted(evidence, key=lambda e: e.score)))


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

    @classmethod
    def of(cls, plan: Plan, lex: Lexicon, question: str = "") -> JoinNeeds:
        q = plan.query
        named = {t.lower() for t in q.tables}
        named |= {m.sense.table.lower() for m in plan.matching.mentions if m.sense}
        for t in plan.shape.tokens:
            if t.kind == "word" and len(t.low) > 2:  # 'business category' names business
                named |= {x.table.lower() for x in lex.schema(t.low) if x.kind == "table" and x.score >= 0.95}
        tokens = plan.shape.tokens
        words = tuple(
            tokens[i].low
            for i in plan.matching.unmatched
            if tokens[i].low in RELATION_VERBS or tokens[i].low.endswith(("ed", "ing", "en"))
        )
        read = {r.table.lower() for r in q.all_refs()} | {m.table.lower() for m in q.measures}
        filtered = frozenset((f.ref.table.lower(), f.ref.column.lower()) for f in q.filters)
        return cls(frozenset(read), frozenset(named), words, question or plan.shape.question, filtered)


def check_joins(plan: Plan, view: View, ctx: Context, question: str = "") -> None:
    """Decline when the view would join unsoundly or when another join tree is as plausible."""
    db = ctx.lex.db
    reason = join_doubt(
        view, JoinNeeds.of(plan, ctx.lex, question), db.graph, db.config.deny_tables, db.config.deny_columns
    )
    if reason:
        raise Decline(reason)


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


def _placed(plan: Plan) -> list[Mention]:
    return [m for m in plan.matching.mentions if m.sense is not None and plan.role(m).kind not in ("",)]


def _match_evidence(plan: Plan, lex: Lexicon) -> list[Evidence]:
    out = []
    placed = _placed(plan)
    for m in placed:
        s = m.sense
        assert s is not None
        elsewhere = {x.sense.table.lower() for x in placed if x is not m and x.sense is not None}
        if (
            s.kind == "column"
            and s.score < PARTIAL
            and elsewhere
            and s.table.lower() not in elsewhere
            and _shared_words(lex, m.words)
        ):
            # 'the date the claim was made' read as policy.end_date: a word that names only part
            # of a column must not pull in a table nothing else in the question is about
            out.append(
                Evidence(
                    "match",
                    DRAGGED_IN,
                    f"'{m.words}' names only part of {s.where}, and nothing else asked is about {s.table}",
                    words=m.words,
                )
            )
        if s.score < 0.999 and s.via != "choice":
            how = {
                "fuzzy": "is spelled like",
                "contains": "is part of values of",
                "synonym": "is a synonym of",
                "meaning": "is the meaning of a code in",
            }.get(s.via, "resembles")
            out.append(Evidence("match", round(s.score, 3), f"'{m.words}' only {how} {s.where}"))
        other_kind = _other_kind(m)
        if other_kind is not None:
            out.append(
                Evidence(
                    "margin",
                    0.4,
                    f"'{m.words}' could also be {_sense_text(other_kind)}",
                    words=m.words,
                    options=(s, other_kind),
                )
            )
        close = _close_rivals(m, plan, lex)
        if close:
            rival, gap = close[0]
            score = round(0.5 + 0.5 * gap / CLOSE_RIVAL, 3)
            out.append(
                Evidence(
                    "margin",
                    score,
                    f"'{m.words}' could also be {_sense_text(rival)}",
                    words=m.words,
                    options=(s, *(r for r, _ in close[:3])),
                )
            )
    return out


def _shared_words(lex: Lexicon, words: str) -> bool:
    """Every word is part of column names in several tables ('date', 'status', 'details'): said
    alone it does not pick one of them, as 'street' picks location.street_name."""
    tokens = [singular_phrase(w) for w in re.findall(r"[a-z0-9]+", words.lower())]
    if not tokens:
        return False
    holders: dict[str, set[str]] = {t: set() for t in tokens}
    for table in lex.catalog.tables:
        for c in table.columns:
            parts = {singular_phrase(p) for p in re.findall(r"[a-z0-9]+", c.name.lower().replace("_", " "))}
            for t in tokens:
                if t in parts:
                    holders[t].add(table.name.lower())
    return all(len(h) >= SHARED_BY for h in holders.values())


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


def _close_rivals(m: Mention, plan: Plan, lex: Lexicon) -> list[tuple[Sense, float]]:
    """Competing readings of a phrase that would change the answer and came within CLOSE_RIVAL
    of the chosen one, nearest first, with their margins (pinned phrases have none)."""
    assert m.sense is not None
    if m.pinned:
        return []
    role = plan.role(m).kind
    return [
        (rival, gap)
        for rival, gap in m.rivals
        if gap < CLOSE_RIVAL and not lex.same_thing(rival, m.sense) and fits_role(lex, rival, m.sense, role)
    ]


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


def _join_evidence(plan: Plan, view: View, lex: Lexicon) -> list[Evidence]:
    out: list[Evidence] = []
    weakest: JoinStep | None = min(
        (s for s in view.steps if s.origin == "inferred"), key=lambda s: s.confidence, default=None
    )
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
    q = plan.query
    for m in [*q.measures, *(h.measure for h in q.having)]:
        if m.func != "COUNT" or m.column is not None or not _repeats(view, m.table):
            continue
        key = _key_strength(lex, m.table)
        if key < 1.0:
            out.append(
                Evidence(
                    "joins",
                    key,
                    f"{m.table} rows repeat in the joins and "
                    + ("it has no key to count each once" if key < 0.5 else "its key is not declared"),
                )
            )
    return out


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


def _reading_evidence(plan: Plan, view: View, lex: Lexicon) -> list[Evidence]:
    q = plan.query
    out: list[Evidence] = []
    distinct_cue = q.distinct or any(c.kind == "distinct" for c in plan.shape.cues)
    for m in q.measures:
        ref = m.ref
        if (
            m.func == "COUNT"
            and ref is not None
            and m.distinct
            and not distinct_cue
            and not is_key(lex, ref)
            and not is_pointer(lex, ref)
        ):
            out.append(
                Evidence(
                    "reading",
                    0.5,
                    f"'{m.words}' was read as the number of different {ref.column} values, "
                    f"not of {m.table} rows",
                )
            )
        if m.func in ("SUM", "AVG") and ref is not None and _identifies(lex, ref):
            out.append(Evidence("reading", 0.1, f"it would add up {ref.column}, which identifies rows"))
        if m.func == "AVG" and ref is not None and q.groups and _own_rows(lex, q, m.table):
            # 'the average amount settled per claim' means over the claims, not each claim alone
            out.append(
                Evidence(
                    "reading",
                    0.3,
                    f"grouping by each {m.table} row makes the average of {ref.column} that row's own value",
                )
            )
        if m.func in ("SUM", "AVG") and ref is not None and _repeated_parent(view, m.table):
            out.append(
                Evidence(
                    "reading",
                    0.3,
                    f"each {m.table} {ref.column} would count once per {view.root_table} row it is joined to",
                )
            )
        if m.func == "COUNT" and m.column is None and (stored := _stored_count(plan, m, lex)):
            # 'how many faculty' over a faculty table with a Faculty number: rows or the figure?
            out.append(
                Evidence(
                    "reading",
                    0.4,
                    f"'{m.words}' is also the stored number {m.table}.{stored}: "
                    f"it counts {m.table} rows, not that figure",
                )
            )
        if m.func == "COUNT" and m.column is None:
            through = _counted_through(view, m.table, lex)
            if through:
                out.append(
                    Evidence(
                        "reading",
                        0.5,
                        f"{m.table} is counted through {through}: different {m.table} rows, not {through} rows",
                    )
                )
        if m.func == "AVG" and _averaged_over_children(q, view, m, lex):
            out.append(
                Evidence(
                    "reading",
                    0.4,
                    f"the average of {m.table} {m.column} is over {m.table} rows, not per {q.target}",
                )
            )
    out.extend(_cue_names_column(plan, lex))
    weights = {
        "read as highest": 0.8,
        "read as lowest": 0.8,
        "without a number": 0.75,
        "rows added up": 0.8,
        "rows averaged": 0.8,
        "the date is": 0.85,
        "' read as ": 0.8,
    }
    for note in q.notes:
        score = next((w for k, w in weights.items() if k in note), 1.0)
        if score < 1.0:
            out.append(Evidence("reading", score, note))
    return out


def _stored_count(plan: Plan, m: Measure, lex: Lexicon) -> str:
    """A number column of the counted table that the count's own words name as well as the
    table ('faculty' → faculty.Faculty): the figure may be what was asked for."""
    for x in plan.matching.mentions:
        if x.sense is None or x.sense.kind != "table" or x.sense.table.lower() != m.table.lower():
            continue
        for s in x.senses:
            if (
                s.kind == "column"
                and s.column
                and s.table.lower() == m.table.lower()
                and s.score >= PARTIAL
                and column_kind(lex, s.table, s.column) in NUMERIC
                and not is_key(lex, Ref(s.table, s.column))
            ):
                return s.column
    return ""


def _identifies(lex: Lexicon, ref: Ref) -> bool:
    """A key, a foreign key, or an id-named column: numbers that name rows, not amounts."""
    low = ref.column.lower()
    return (
        is_key(lex, ref)
        or is_pointer(lex, ref)
        or low == "id"
        or (low.endswith(("_id", "id")) and len(low) <= 12)
    )


def _own_rows(lex: Lexicon, q: Query, table: str) -> bool:
    """Every group is a column that identifies a row of `table` (its key or its name)."""
    identifying = {c.lower() for c in (*lex.key_of(table), *label_columns(lex, table))}
    return all(g.table.lower() == table.lower() and g.column.lower() in identifying for g in q.groups)


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


def _counted_through(view: View, table: str, lex: Lexicon) -> str:
    """'the instructor who taught the most courses', counted through course offerings: the number
    of different courses, or of offerings? Asked when the counted table is reached from a joined
    table of its own standing (not a bridge of two keys), which the question did not name."""
    if not _repeats(view, table):
        return ""
    graph = lex.db.graph
    bridges = {b for bs in graph.bridges.values() for b in bs}
    requested = {t.lower() for t in view.requested}
    aliases = view.aliases
    mine = {a for a, t in aliases.items() if t.lower() == table.lower()}
    for alias, refs in _referrers(view).items():
        if alias not in mine:
            continue
        for r in refs:
            other = aliases[r].lower()
            if other not in requested and other not in bridges and other not in graph.lookups:
                return aliases[r]
    return ""


def _averaged_over_children(q: Query, view: View, m: Measure, lex: Lexicon) -> bool:
    """AVG of a column of the target's child rows, not grouped by the target: the average over
    the rows, or of each target's average? ('the average rating of businesses in a city')."""
    if q.target is None or m.table.lower() == q.target.lower():
        return False
    if any(g.table.lower() == q.target.lower() for g in q.groups):
        return False  # one average per target: no doubt
    ref_target = {e.ref_table.lower() for e in lex.db.graph.edges if e.table.lower() == m.table.lower()}
    return q.target.lower() in ref_target and not view.single_table


def _cue_names_column(plan: Plan, lex: Lexicon) -> list[Evidence]:
    """'the total count of check-ins' where check-in rows have a count column: the cue word may
    be that column."""
    out = []
    tables = {m.table.lower() for m in plan.query.measures} | {(plan.query.target or "").lower()}
    for cue in plan.shape.cues:
        if cue.kind not in ("count", "agg"):
            continue
        for word in cue.words.lower().split():
            for x in lex.schema(word):
                if (
                    x.kind == "column"
                    and x.via == "name"
                    and x.score >= 0.99
                    and x.table.lower() in tables
                    and column_kind(lex, x.table, x.column or "") in NUMERIC
                ):
                    out.append(Evidence("reading", 0.3, f"'{word}' is also the column {x.where}"))
    return out


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
        w for w in re.findall(r"[a-z]+", question.lower()) if w in RELATION_VERBS and _words_pick([w], tables)
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
