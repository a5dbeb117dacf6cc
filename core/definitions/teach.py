"""Definitions taught in words: "define loss ratio as total loss divided by premium".

Reading the sentence is a small grammar (`TEACHING`): a cue ("define", "let", "from now on"),
the term, a copula ("as", "means", "is", "=") and the meaning. The meaning becomes a structured
definition one of two ways:

- without the LLM, when the words already are one: a SQL condition on one table's columns
  ("status = 'Operational'", "Status is Operational") is a filter, an aggregate over one table
  ("SUM(amount) of payments") a metric, "A divided by B" / "A per B" over two defined metrics a
  ratio;
- otherwise the LLM drafts it (prompts/define.md) from the schema and the definitions in force.

Either way the draft is checked against the schema and the guard (core/definitions/check.py)
before anyone sees it; a draft that does not fit says why, and nothing is stored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

import sqlglot
from pydantic import BaseModel
from sqlglot import exp
from sqlglot.optimizer.qualify import qualify

from core.catalog import Catalog
from core.definitions.model import Definition, Definitions, Kind, Provenance, Scope, Source
from core.keyword.readings import Reading
from core.llm import LLM, LLMError
from core.prompts import render

TEACHING = re.compile(
    r"""^\s*(?:please\s+)?
        (?:define|let|from\s+now\s+on,?|remember\s+that|note\s+that)\s+
        ["'“‘]?(?P<name>[^"'”’]+?)["'”’]?\s+
        (?:as|means?|is|=|stands\s+for|should\s+mean)\s+
        (?P<meaning>.+?)\s*[.!]?\s*$""",
    re.I | re.X | re.S,
)
_RATIO = re.compile(r"^(?P<a>.+?)\s+(?:divided\s+by|over|per|/)\s+(?P<b>.+?)$", re.I)
_NULLS = re.compile(r"^(not\s+)?null$", re.I)  # `x IS NOT NULL` is SQL, not the value 'NOT NULL'
# "city = 'Singapore'": a remembered clarification choice's condition
_EQUALS = re.compile(r"^\s*(?P<column>[A-Za-z_]\w*)\s*=\s*'(?P<value>(?:[^']|'')*)'\s*$")
_IS_VALUE = re.compile(
    r"^(?P<column>[A-Za-z_][\w ]*?)\s+(?:is|=|equals)\s+['\"]?(?P<value>[^'\"]+?)['\"]?$", re.I
)


@dataclass(frozen=True)
class Teaching:
    name: str
    meaning: str


def read_teaching(text: str) -> Teaching | None:
    """'define loss ratio as total loss divided by premium' → (loss ratio, total loss divided by premium)."""
    match = TEACHING.match(text.strip())
    if not match:
        return None
    name = match.group("name").strip().strip(".,:")
    meaning = match.group("meaning").strip()
    if not name or not meaning or len(name) > 80:
        return None
    return Teaching(name=name, meaning=meaning)


@dataclass(frozen=True)
class Draft:
    """A definition drafted from words, or why there is none."""

    definition: Definition | None
    problem: str = ""  # why there is no usable definition, for the person
    by_llm: bool = False
    notes: tuple[str, ...] = field(default_factory=tuple)


class DraftReply(BaseModel):
    kind: str
    name: str = ""
    description: str = ""
    synonyms: list[str] = []
    table: str = ""
    sql: str = ""
    filter: str = ""
    grain: list[str] = []
    numerator: str = ""
    denominator: str = ""
    unit: str = ""
    text: str = ""


def draft(
    teaching: Teaching,
    catalog: Catalog,
    definitions: Definitions,
    llm: LLM | None,
    *,
    schema_text: str,
    source: Source = "taught",
    scope: Scope | None = None,
) -> Draft:
    """The definition the words say, by keyword reading first, then by the LLM."""
    provenance = Provenance(source=source)
    found = by_keywords(teaching, catalog, definitions)
    if found is not None:
        return Draft(replace(found, scope=scope or Scope(), provenance=provenance))
    if llm is None:
        return Draft(
            None,
            "I could not read that as a condition, an aggregate or a ratio of defined metrics, and no"
            " language model is configured to draft it. Try e.g. `define operational as status = 'Operational'`.",
        )
    messages = render(
        "define",
        dialect=catalog.dialect,
        schema=schema_text,
        existing=existing_text(definitions),
        name=teaching.name,
        meaning=teaching.meaning,
    )
    try:
        reply = llm.json("define", messages, DraftReply)
    except LLMError as exc:
        return Draft(None, f"The language model could not draft it: {exc}", by_llm=True)
    d = from_reply(reply, teaching.name, teaching.meaning, scope or Scope(), provenance)
    if d is None:
        return Draft(
            None, reply.description or "That cannot be defined over this database's data.", by_llm=True
        )
    return Draft(d, by_llm=True)


def from_reply(
    reply: DraftReply, name: str, meaning: str, scope: Scope, provenance: Provenance
) -> Definition | None:
    """The model's structured reply as a Definition (None when it said it cannot be one)."""
    if reply.kind not in ("entity", "metric", "filter", "instruction"):
        return None
    kind: Kind = reply.kind  # type: ignore[assignment]  # checked just above
    return Definition(
        kind=kind,
        name=name or reply.name,
        description=reply.description,
        synonyms=tuple(s for s in reply.synonyms if s and s.lower() != (name or reply.name).lower())[:8],
        table=reply.table,
        sql=reply.sql,
        filter=reply.filter,
        grain=tuple(reply.grain),
        numerator=reply.numerator,
        denominator=reply.denominator,
        unit=reply.unit,
        text=reply.text or (meaning if kind == "instruction" else ""),
        scope=scope,
        provenance=provenance,
    )


def existing_text(definitions: Definitions) -> str:
    """The definitions in force, one line each, for a prompt that may build on them."""
    lines = [f'- {d.kind} "{d.name}" (`{d.ref}`)' for d in definitions if d.kind != "instruction"]
    return "\n### Existing definitions\n" + "\n".join(lines) + "\n" if lines else ""


def by_keywords(teaching: Teaching, catalog: Catalog, definitions: Definitions) -> Definition | None:
    """The definition when the words already are one (no LLM); None when they are not."""
    meaning = teaching.meaning.strip().rstrip(".")
    ratio = _RATIO.match(meaning)
    if ratio:
        a, b = definitions.by_ref(ratio.group("a")), definitions.by_ref(ratio.group("b"))
        if a is not None and b is not None and a.kind == b.kind == "metric":
            return Definition(
                kind="metric",
                name=teaching.name,
                description=f"{a.name} divided by {b.name}",
                numerator=a.name,
                denominator=b.name,
            )
    said = _IS_VALUE.match(meaning)
    if said and not re.search(r"[<>=()]", said.group("column")) and not _NULLS.match(said.group("value")):
        column = _column_named(said.group("column"), catalog)
        if column is not None:
            table, name = column
            value = said.group("value").strip().replace("'", "''")
            return Definition(
                kind="filter", name=teaching.name, table=table, sql=f"{name} = '{value}'", description=meaning
            )
    return _as_sql(teaching, meaning, catalog)


def _column_named(words: str, catalog: Catalog) -> tuple[str, str] | None:
    """The one column called that ('status', 'claim status'), as (table, column)."""
    wanted = re.sub(r"\s+", "_", words.strip().lower())
    found = [(t.name, c.name) for t in catalog.tables for c in t.columns if c.name.lower() == wanted]
    if len(found) == 1:
        return found[0]
    ends = [
        (t.name, c.name) for t in catalog.tables for c in t.columns if c.name.lower().endswith("_" + wanted)
    ]
    return ends[0] if len(ends) == 1 else None


def _as_sql(teaching: Teaching, meaning: str, catalog: Catalog) -> Definition | None:
    """A condition or an aggregate written in SQL over one table's columns."""
    try:
        node = sqlglot.parse_one(meaning, read=catalog.dialect)
    except sqlglot.errors.SqlglotError:
        return None
    columns = {c.name.lower() for c in node.find_all(exp.Column)}
    if not columns or node.find(exp.Select):
        return None
    tables = [t.name for t in catalog.tables if columns <= {c.name.lower() for c in t.columns}]
    qualified = {c.table.lower() for c in node.find_all(exp.Column) if c.table}
    if qualified:
        tables = [t for t in tables if t.lower() in qualified]
    if len(tables) != 1:
        return None
    table = tables[0]
    try:
        schema = {table: {c.name: "TEXT" for c in catalog.known_table(table).columns}}
        qualify(
            exp.select(node.copy()).from_(table), schema=dict[str, object](schema), dialect=catalog.dialect
        )
    except (sqlglot.errors.SqlglotError, KeyError):
        return None
    sql = node.sql(dialect=catalog.dialect)
    if isinstance(node, exp.AggFunc) or node.find(exp.AggFunc):
        return Definition(kind="metric", name=teaching.name, table=table, sql=sql, description=meaning)
    if isinstance(node, exp.Predicate | exp.Connector | exp.Not | exp.In | exp.Between | exp.Is):
        return Definition(kind="filter", name=teaching.name, table=table, sql=sql, description=meaning)
    return None


def described(d: Definition) -> str:
    """One line a person reads before approving: what it is, in SQL."""
    if d.kind == "instruction":
        return f"Rule: {d.text}"
    if d.ratio:
        return f"metric *{d.name}* = {d.numerator} ÷ {d.denominator}"
    if d.kind == "metric":
        where = f" WHERE {d.filter}" if d.filter else ""
        per = f", per {', '.join(d.grain)}" if d.grain else ""
        return f"metric *{d.name}* = {d.sql} FROM {d.table}{where}{per}"
    if d.kind == "filter":
        return f"filter *{d.name}*: {d.sql} (on {d.table})"
    if d.kind == "entity":
        return f"entity *{d.name}* = " + (d.sql or f"{d.table}" + (f" WHERE {d.filter}" if d.filter else ""))
    return f"relationship *{d.name}*: {d.table} JOIN {d.to} ON {d.sql}"


def learned_reading(d: Definition) -> Reading | None:
    """A reading remembered from a clarification ("'Singapore' read as the city": a learned filter
    `city = 'Singapore'`) as the reading that clarification pinned, so the word is read that way
    again without asking (core/pipeline.py adds it to the transcript's `assumed`)."""
    if d.kind != "filter" or d.provenance.source != "learned":
        return None
    match = _EQUALS.match(d.sql)
    if match is None:
        return None
    return Reading(d.name, d.table, match.group("column"), match.group("value").replace("''", "'"))
