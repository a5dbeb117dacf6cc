"""Link stage: decide which tables (and columns) the question needs.

Retrieval usually settles it without an LLM: each object keyword's best table, each filter value's
table. The LLM is asked (Lucy's PROMPTA) only when the schema is too large to trust name
matching, when nothing matched, or when a keyword matches two tables equally well.

Table recall first: the tables on the join path between the tables the question names are always
linked too — the connectors of the Steiner tree under Lucy's constraints (`core.joins`), not just
the named tables — so whatever reads the linking (the SQL writer, the clarifier) sees the whole
path. On large schemas the LLM is shown those path tables as well.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

from pydantic import BaseModel

from core import prompts
from core.catalog import Catalog
from core.graph import RelationshipGraph, graph_for
from core.joins import synthesize_view
from core.joins.steiner import KnownTrees
from core.llm import LLM
from core.retrieval import Retrieval, SchemaMatch, ValueMatch
from core.understand import Understanding

SCHEMA_MIN = 0.80  # below this a name match is noise
VALUE_MIN = 0.80
TIE = 0.03  # two tables this close for one keyword: the matches disagree
JOIN_PATHS_KEPT = 256  # join paths remembered per graph (join_path)


class LinkReply(BaseModel):
    tables: list[str]


@dataclass(frozen=True)
class Linking:
    tables: tuple[str, ...]
    columns: dict[str, tuple[str, ...]] = field(default_factory=dict)  # table → columns named by the question
    reasons: dict[str, str] = field(default_factory=dict)  # table → why it is in
    used_llm: bool = False
    ambiguous: tuple[str, ...] = ()  # keywords whose best matches disagreed


class LinkError(ValueError):
    pass


def match_tables(retrieval: Retrieval) -> tuple[dict[str, str], dict[str, list[str]], list[str]]:
    """Tables and columns the matches point at, and the keywords that matched two tables alike.

    A keyword that matches several tables equally well ("status" is a column of many tables) is
    settled by the other keywords when one of its candidates is already needed; only otherwise is it
    ambiguous.
    """
    reasons: dict[str, str] = {}
    columns: dict[str, list[str]] = {}

    def take(table: str, column: str | None, why: str) -> None:
        reasons.setdefault(table, why)
        if column:
            columns.setdefault(table, []).append(column)

    by_keyword: dict[str, list[SchemaMatch]] = {}
    for m in retrieval.schema:
        if m.score >= SCHEMA_MIN:
            by_keyword.setdefault(m.keyword, []).append(m)
    tied: dict[str, list[SchemaMatch]] = {}
    for keyword, matches in by_keyword.items():
        matches.sort(key=lambda m: -m.score)
        best = matches[0]
        alike = [best, *(m for m in matches[1:] if m.table != best.table and best.score - m.score <= TIE)]
        if len(alike) > 1:
            tied[keyword] = alike
        else:
            take(best.table, best.column, _why(keyword, best))
    values: dict[str, list[ValueMatch]] = {}
    for v in sorted(retrieval.values, key=lambda v: -v.score):
        if v.score >= VALUE_MIN:
            values.setdefault(v.keyword, []).append(v)
    for found in values.values():
        # "active" is client.status 'ACT' and compute.status 'active': the table the question
        # already names wins a tie.
        close = [m for m in found if found[0].score - m.score <= TIE]
        v = next((m for m in close if m.table in reasons), close[0])
        take(v.table, v.column, f"value '{v.value}' is stored in {v.table}.{v.column}")
    ambiguous: list[str] = []
    for keyword, alike in tied.items():
        settled = next((m for m in alike if m.table in reasons), None)
        if settled is None:
            ambiguous.append(keyword)
            settled = alike[0]
        take(settled.table, settled.column, _why(keyword, settled))
    return reasons, columns, ambiguous


def _why(keyword: str, m: SchemaMatch) -> str:
    return f"'{keyword}' matches {m.table}{'.' + m.column if m.column else ''}"


def link(
    understanding: Understanding,
    retrieval: Retrieval,
    catalog: Catalog,
    llm: LLM | None,
    *,
    llm_min_tables: int = 25,
    graph: RelationshipGraph | None = None,
) -> Linking:
    """`graph`: the database's relationship graph (restricted to what the asker may see); without
    one, the graph already built for the catalog, else its declared joins (`graph_for`)."""
    graph = graph if graph is not None else graph_for(catalog)
    reasons, columns, ambiguous = match_tables(retrieval)
    large = len(catalog.tables) >= llm_min_tables
    if llm is not None and (large or not reasons or ambiguous):
        tables = _ask_llm(understanding, retrieval, catalog, llm, reasons, graph)
        for t in tables:
            reasons.setdefault(t, "chosen by the LLM")
        return with_join_path(
            Linking(
                tables=tuple(tables),
                columns={t: tuple(dict.fromkeys(c)) for t, c in columns.items() if t in tables},
                reasons={t: reasons[t] for t in tables},
                used_llm=True,
                ambiguous=tuple(ambiguous),
            ),
            graph,
            understanding.question,
        )
    if not reasons:
        raise LinkError("none of the question's words matched a table, a column or a stored value")
    return with_join_path(
        Linking(
            tables=tuple(reasons),
            columns={t: tuple(dict.fromkeys(c)) for t, c in columns.items()},
            reasons=reasons,
            ambiguous=tuple(ambiguous),
        ),
        graph,
        understanding.question,
    )


def join_path(graph: RelationshipGraph, tables: list[str], question: str = "") -> list[str]:
    """The tables the view would add to join `tables`: connectors, bridges, role tables (by name).

    Remembered per graph (up to JOIN_PATHS_KEPT): scope, linking and pruning ask for the
    same tables' path within one question, and on a warehouse's graph each search costs tens of
    milliseconds (`python -m core.bench linking`)."""
    known = [t for t in tables if graph.catalog.table(t) is not None]
    if len(known) < 2:
        return []
    memo: dict[tuple[tuple[str, ...], str], list[str]] = graph.__dict__.setdefault("_join_paths", {})
    key = (tuple(known), question)
    if key not in memo:
        try:
            view = synthesize_view(graph, known, question=question, trees=question_trees(graph, question))
        except ValueError:
            return []
        named = {t.lower() for t in known}
        if len(memo) >= JOIN_PATHS_KEPT:
            memo.clear()  # one step, so threads answering at once never see it half done
        memo[key] = [t for t in dict.fromkeys(view.tables) if t.lower() not in named]
    return list(memo[key])


def question_trees(graph: RelationshipGraph, question: str) -> KnownTrees:
    """The join trees found for `question` on `graph` (up to JOIN_PATHS_KEPT questions).

    Scope finds the join path between the tables the question names; the join recipe is then
    asked for exactly those tables and reuses that tree (`core.joins.steiner.steiner_tree`)
    instead of searching a warehouse's graph again. Per question, so no answer depends on
    what was asked before.
    """
    kept: dict[str, KnownTrees] = graph.__dict__.setdefault("_join_trees", {})
    trees = kept.get(question)
    if trees is None:
        if len(kept) >= JOIN_PATHS_KEPT:
            kept.clear()  # one step, as in join_path
        trees = kept.setdefault(question, {})
    return trees


def forget_join_paths(graph: RelationshipGraph) -> None:
    """Drop the join paths and trees remembered for `graph` (benchmarks time each question afresh)."""
    graph.__dict__.pop("_join_paths", None)
    graph.__dict__.pop("_join_trees", None)


def with_join_path(linking: Linking, graph: RelationshipGraph, question: str = "") -> Linking:
    """Table recall first: the linking plus the tables on the join path between its tables."""
    added = join_path(graph, list(linking.tables), question)
    if not added:
        return linking
    between = " and ".join(linking.tables) if len(linking.tables) == 2 else ", ".join(linking.tables)
    reasons = dict(linking.reasons)
    for t in added:
        reasons.setdefault(t, f"on the join path between {between}")
    return replace(linking, tables=(*linking.tables, *added), reasons=reasons)


def _ask_llm(
    understanding: Understanding,
    retrieval: Retrieval,
    catalog: Catalog,
    llm: LLM,
    matched: dict[str, str],
    graph: RelationshipGraph,
) -> list[str]:
    # Large schemas: show the matched tables, the path between them and their neighbours, never
    # thousands of tables.
    if len(catalog.tables) > 60:
        names = set(matched) | set(retrieval.tables()[:20])
        names |= set(join_path(graph, list(matched), understanding.question))
        touching = _relationship_ends(catalog)
        for t in matched:
            names.update(touching.get(t, ()))
        at = _positions(catalog)  # catalog order, without walking every table per question
        shown = [catalog.tables[i] for i in sorted(i for n in names for i in at.get(n, ()))][:60]
        shown = shown or list(catalog.tables[:60])
    else:
        shown = list(catalog.tables)
    tables_json = {
        t.name: f"{t.description} Properties of {t.name}: {', '.join(c.name for c in t.columns)}.".strip()
        for t in shown
    }
    hints = "\n".join(f"- {t}: {why}" for t, why in matched.items()) or "(no matches)"
    messages = prompts.render(
        "link",
        tables_json=json.dumps(tables_json, indent=1),
        hints=hints,
        question=understanding.question.replace('"', "'"),
        table_names=json.dumps([t.name for t in shown]),
    )
    reply = llm.json("link", messages, LinkReply)
    known = catalog.memo(("link_names",), lambda: {t.name.lower(): t.name for t in catalog.tables})
    tables = list(dict.fromkeys(known[t.lower()] for t in reply.tables if t.lower() in known))
    if not tables:
        if matched:
            return list(matched)
        raise LinkError("the LLM named no table of this database")
    return tables


def _relationship_ends(catalog: Catalog) -> dict[str, frozenset[str]]:
    """For each table in a relationship, both ends of every relationship it is in: what
    `_ask_llm` shows beside a matched table, without scanning a warehouse's tens of thousands of
    relationships per question. Exact names, as `matched` holds them."""

    def build() -> dict[str, frozenset[str]]:
        ends: dict[str, set[str]] = {}
        for rel in catalog.relationships:
            for t in (rel.table, rel.ref_table):
                ends.setdefault(t, set()).update((rel.table, rel.ref_table))
        return {t: frozenset(e) for t, e in ends.items()}

    return catalog.memo(("link_relationship_ends",), build)


def _positions(catalog: Catalog) -> dict[str, tuple[int, ...]]:
    """Where each table name stands in the catalog (several places when schemas share a name)."""

    def build() -> dict[str, tuple[int, ...]]:
        at: dict[str, list[int]] = {}
        for i, t in enumerate(catalog.tables):
            at.setdefault(t.name, []).append(i)
        return {n: tuple(v) for n, v in at.items()}

    return catalog.memo(("link_positions",), build)
