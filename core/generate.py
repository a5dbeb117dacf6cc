"""Generate and revise stages (LAIA-SQL §4.3): SQL over the view, and fixes fed by the error.

The prompt has LAIA-SQL's four parts: data schema (the view as one table with descriptions and
sample rows, the stored values that matched, the relevant descriptions, confirmed examples), user
question reasoning (question, main task, sub tasks), constraints, and incentives.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core import prompts
from core.conversation import Turn, describe_history
from core.examples import Example
from core.joins import View, grain_text, view_ddl
from core.llm import LLM
from core.retrieval import Retrieval
from core.understand import Understanding

DIALECT_NAMES = {"sqlite": "SQLite", "postgres": "PostgreSQL", "mysql": "MySQL"}


@dataclass(frozen=True)
class Candidate:
    sql: str  # over the view
    note: str = ""  # what the model said about it (revisions explain the fix)


@dataclass(frozen=True)
class Context:
    """Everything the generator and the reviser see besides the question."""

    view: View
    samples: Sequence[tuple[Any, ...]] = ()
    retrieval: Retrieval | None = None
    examples: Sequence[Example] = ()
    history: Sequence[Turn] = ()
    dialect: str = "sqlite"
    today: dt.date | None = None
    clarifications: str = ""  # rejected SQL and answers to clarifying questions (core/clarify)


def _values_section(view: View, retrieval: Retrieval | None) -> str:
    if retrieval is None or not retrieval.values:
        return ""
    lines = []
    for m in retrieval.values[:12]:
        names = [c.name for c in view.columns if c.table == m.table and c.column == m.column]
        if names:
            where = " or ".join(names)
            lines.append(f"- {where} = '{m.value}' (the user wrote '{m.keyword}')")
    return "### Values found in the data\n" + "\n".join(lines) + "\n" if lines else ""


def _descriptions_section(view: View, retrieval: Retrieval | None) -> str:
    if retrieval is None or not retrieval.descriptions:
        return ""
    tables = {c.table for c in view.columns}
    lines = [
        f"- {d.table}{'.' + d.column if d.column else ''}: {d.text}"
        for d in retrieval.descriptions[:8]
        if d.table in tables
    ]
    return "### Relevant descriptions\n" + "\n".join(lines) + "\n" if lines else ""


def _examples_section(examples: Sequence[Example]) -> str:
    if not examples:
        return ""
    parts = ["### Confirmed answers to similar questions (SQL over the base tables)"]
    for ex in examples:
        parts.append(f"Question: {ex.question}\n```sql\n{ex.sql}\n```")
    return "\n".join(parts) + "\n"


def _fanout_note(view: View) -> str:
    note = grain_text(view)
    if view.fans_out:
        note += " Avoid summing a value that repeats across joined rows."
    return note


def _common(understanding: Understanding, ctx: Context) -> dict[str, str]:
    return {
        "dialect": DIALECT_NAMES.get(ctx.dialect, ctx.dialect),
        "view_name": ctx.view.name,
        "view_ddl": view_ddl(ctx.view, list(ctx.samples)),
        "values": _values_section(ctx.view, ctx.retrieval),
        "question": understanding.question,
        "main_task": "; ".join(understanding.main_task) or understanding.question,
        "sub_tasks": "; ".join(understanding.sub_tasks) or "(none)",
    }


def generate(understanding: Understanding, ctx: Context, llm: LLM) -> Candidate:
    history = describe_history(ctx.history)
    messages = prompts.render(
        "generate",
        **_common(understanding, ctx),
        descriptions=_descriptions_section(ctx.view, ctx.retrieval),
        examples=_examples_section(ctx.examples),
        fanout=_fanout_note(ctx.view),
        today=(ctx.today or dt.date.today()).isoformat(),
        history=f"Earlier in this conversation:\n{history}\n" if history else "",
        clarifications=f"{ctx.clarifications}\n" if ctx.clarifications else "",
    )
    sql, completion = llm.sql("generate", messages)
    return Candidate(sql=sql, note=completion.text[:2000])


def revise(
    understanding: Understanding, ctx: Context, failed: Candidate, problem: str, llm: LLM
) -> Candidate:
    messages = prompts.render(
        "revise",
        **_common(understanding, ctx),
        sql=failed.sql,
        problem=problem,
        clarifications=f"{ctx.clarifications}\n" if ctx.clarifications else "",
    )
    sql, completion = llm.sql("revise", messages)
    return Candidate(sql=sql, note=completion.text[:2000])
