"""Scope stage: which tables the SQL writer sees, and which the question's words name.

The writer does best with the whole schema in front of it — a plain prompt with every table
beat a writer caged in one pre-joined view — so whenever the whole schema fits the token budget
(`engine.schema_token_budget`) it gets every table, with no LLM call and nothing to get wrong.
Only above the budget is the schema pruned, CHESS-style (papers/chess.txt §3.2, Schema Selector)
but tuned for recall: the tables the LLM linker picks (Lucy's PROMPTA, core/link.py), every
table a question word or a stored value hit, the connectors on the join paths between them,
then their one-hop neighbours while the budget allows. A table a keyword or value hit is never
dropped, even past the budget. A word that matches only a column referring to another table
("clients" and `invoice.client_id`) names the table referred to: the table holding the column is
shown but not joined in (on a warehouse, hundreds of tables refer to `client`, and a join path
through all of them is neither wanted nor cheap to find).

Separately, the tables the question's words *name* (schema words, not stored values: a value
hint never pulls a table into a join) are what the join recipe is built from (core/view.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from core.database import Database
from core.graph import RelationshipGraph
from core.keyword.shapes import BUCKET_ADVERBS, BUCKET_UNITS, CUES
from core.link import SCHEMA_MIN, TIE, VALUE_MIN, LinkError, join_path, link
from core.llm import LLM
from core.retrieval import Retrieval
from core.schema_text import ASKBASE, VisibleNames, table_tokens, visible_names
from core.settings import EngineSettings
from core.understand import Understanding

NAMES = 0.90  # a word matching a table's name (or synonym) this well names the table
NAMES_COLUMN = 0.95  # ... a column's, when no other table's column ties with it


@dataclass(frozen=True)
class Scope:
    tables: tuple[str, ...]  # what the writer sees, in catalog order
    named: tuple[str, ...]  # what the question's words name, plus the join path between them
    whole: bool  # the whole schema fits the budget
    tokens: int  # estimated size of the schema text shown
    used_llm: bool = False
    reasons: dict[str, str] = field(default_factory=dict)  # table → why it is in (pruned scopes only)
    described: frozenset[tuple[str, str]] = frozenset()  # columns whose descriptions the question needs

    def trace(self) -> dict[str, object]:
        out: dict[str, object] = {
            "whole_schema": self.whole,
            "tables": len(self.tables),
            "estimated_tokens": self.tokens,
            "named": list(self.named),
            "used_llm": self.used_llm,
        }
        if not self.whole:
            out["shown"] = list(self.tables)
            out["reasons"] = self.reasons
        return out


def restricted_graph(db: Database) -> RelationshipGraph:
    return db.graph.restricted(db.config.deny_tables, db.config.deny_columns)


def described_columns(retrieval: Retrieval) -> frozenset[tuple[str, str]]:
    """(table, column) the question's words matched by name or by description: their catalog
    descriptions are worth the writer's tokens (CHESS retrieves context, it does not dump it)."""
    out = {
        (m.table.lower(), m.column.lower()) for m in retrieval.schema if m.column and m.score >= SCHEMA_MIN
    }
    out |= {(d.table.lower(), d.column.lower()) for d in retrieval.descriptions if d.column}
    out |= {(v.table.lower(), v.column.lower()) for v in retrieval.values if v.score >= VALUE_MIN}
    return frozenset(out)


# Calendar units ('per month', 'yearly'): a time bucket of whatever the question is about, so a
# column named like one ('usage.month') does not name its table.
CALENDAR_WORDS = frozenset([*BUCKET_UNITS, *(f"{u}s" for u in BUCKET_UNITS), *BUCKET_ADVERBS])
# 'total', 'average', 'highest': words that say what to compute, not what it is computed over
COMPUTING_WORDS = frozenset(
    p[0] for p, (kind, _) in CUES.items() if len(p) == 1 and kind in ("agg", "super", "count")
)


def named_tables(retrieval: Retrieval) -> list[str]:
    """Tables the question's schema words name without doubt, best first.

    A word names a table when it matches the table's name or synonym well, or one column's name
    so well that no other table's column ties with it. Words that match two tables alike name
    neither (the writer sees both and decides); stored values name nothing here, and nor does a
    calendar unit ('per month') or a word that says what to compute ('total', 'highest') that
    happens to be a column's name or synonym.
    """
    by_word: dict[str, list[tuple[float, str, bool]]] = {}
    for m in retrieval.schema:
        word = m.keyword.casefold().strip()
        if m.column is not None and word in CALENDAR_WORDS:
            continue  # 'per month' buckets any date: usage.month does not make it about usage
        if m.column is not None and word in COMPUTING_WORDS:
            continue  # 'the highest total usage cost': 'total' is a sum, not payment_amount.amount
        if m.score >= SCHEMA_MIN:
            by_word.setdefault(m.keyword.casefold(), []).append((m.score, m.table, m.column is None))
    scored: dict[str, float] = {}
    for matches in by_word.values():
        matches.sort(key=lambda x: (-x[0], not x[2]))
        score, table, is_table = matches[0]
        rivals = {t for s, t, _ in matches[1:] if t != table and score - s <= TIE}
        if rivals or score < (NAMES if is_table else NAMES_COLUMN):
            continue
        scored[table] = max(scored.get(table, 0.0), score)
    return sorted(scored, key=lambda t: -scored[t])


def scope(
    db: Database,
    retrieval: Retrieval,
    understanding: Understanding,
    settings: EngineSettings,
    llm: LLM | None,
) -> Scope:
    """The tables the writer sees. Raises LinkError only above the budget, when neither the
    question's words nor the LLM point at any table."""
    graph = restricted_graph(db)
    sizes = table_tokens(db, ASKBASE)
    names = visible_names(db)
    total = sum(sizes.values())
    if total <= settings.schema_token_budget:
        named = named_tables(retrieval)  # a pruned scope names what linking found instead
        return Scope(
            tables=names.names,
            named=(*named, *join_path(graph, named, understanding.question)),
            whole=True,
            tokens=total,
            described=described_columns(retrieval),
        )
    return _pruned(db, retrieval, understanding, settings, llm, graph, sizes, names)


def _pruned(
    db: Database,
    retrieval: Retrieval,
    understanding: Understanding,
    settings: EngineSettings,
    llm: LLM | None,
    graph: RelationshipGraph,
    sizes: dict[str, int],
    names: VisibleNames,
) -> Scope:
    catalog = db.catalog
    known = names.by_lower
    reasons: dict[str, str] = {}
    used_llm = False
    try:
        linking = link(understanding, retrieval, catalog, llm, llm_min_tables=0, graph=graph)
        used_llm = linking.used_llm
        for t in linking.tables:
            reasons.setdefault(t, linking.reasons.get(t, "linked"))
    except LinkError:
        linking = None
    joined = {t.lower() for t in reasons}  # the tables the join path connects
    for m in retrieval.schema:
        if m.score >= SCHEMA_MIN:
            reasons.setdefault(m.table, f"the word '{m.keyword}' matches it")
            if m.column is None or (m.table.lower(), m.column.lower()) not in graph.reference_columns:
                joined.add(m.table.lower())
    for v in retrieval.values:
        if v.score >= VALUE_MIN:
            reasons.setdefault(v.table, f"'{v.keyword}' is stored in it")
            joined.add(v.table.lower())
    core = [known[t.lower()] for t in reasons if t.lower() in known]
    if not core:
        raise LinkError("none of the question's words matched a table, a column or a stored value")
    for t in join_path(graph, [t for t in core if t.lower() in joined], understanding.question):
        if t.lower() in known and t not in core:
            core.append(known[t.lower()])
            reasons.setdefault(known[t.lower()], "on the join path between the tables above")
    chosen = set(core)
    spent = sum(sizes.get(t.lower(), 0) for t in chosen)
    for t in _neighbours(graph, core, known):
        cost = sizes.get(t.lower(), 0)
        if spent + cost > settings.schema_token_budget:
            continue
        chosen.add(t)
        spent += cost
        reasons.setdefault(t, "joins a table above")
    named = linking.tables if linking is not None else tuple(named_tables(retrieval))
    shown = sorted((t for t in chosen if t in names.place), key=names.place.__getitem__)  # catalog order
    return Scope(
        tables=tuple(shown),
        named=tuple(t for t in named if t.lower() in known),
        whole=False,
        tokens=spent,
        used_llm=used_llm,
        reasons={t: reasons[t] for t in shown if t in reasons},
        described=described_columns(retrieval),
    )


def _neighbours(graph: RelationshipGraph, core: Sequence[str], known: dict[str, str]) -> list[str]:
    """Tables one join away from `core`, those joined to more of it first."""
    inside = {t.lower() for t in core}
    links: dict[str, int] = {}
    for t in core:
        for other in graph.neighbor_names(t):  # a hub has a thousand: no copy of their edges
            if other not in inside and other in known:
                links[other] = links.get(other, 0) + 1
    return [known[t] for t in sorted(links, key=lambda t: (-links[t], t))]
