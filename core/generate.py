"""Generate and revise stages: the SQL writer's prompt, its candidates, and fixes fed by the error.

The writer sees the schema (core/schema_text.py: every table when it fits the budget), the join
recipe as an optional CTE (core/view.py), the stored spellings of the question's values
(core/hints.py), confirmed examples, the conversation and the clarification transcript — and
writes, in one reply, a short plan (LAIA-SQL §4.1's decomposition: the task becomes the SELECT,
the steps the JOIN / WHERE / GROUP BY) and two candidate queries (CHESS's candidate generator,
within one call): a primary and an alternative that is either the same reading written another
way, so that running both checks it, or — when the question has two readings — the other one.
The pipeline runs both and chooses (core/select.py).

Replies are read defensively: prose and reasoning around the blocks, one block only (one
candidate), a block cut off at the token limit (dropped when another candidate is whole), bare
SQL or JSON with no fence at all.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass

from core import prompts
from core.conversation import Turn, describe_history
from core.examples import Example
from core.llm import LLM, Completion, LLMBadReply, LLMRefused
from core.replies import SQL_START, RefusalError, ReplyError, extract_sql, strip_reasoning

DIALECT_NAMES = {
    "sqlite": "SQLite",
    "postgres": "PostgreSQL",
    "mysql": "MySQL",
    "duckdb": "DuckDB",
    "snowflake": "Snowflake",
    "bigquery": "BigQuery (GoogleSQL)",
    "databricks": "Databricks SQL",
    "trino": "Trino",
    "redshift": "Amazon Redshift",
}
DATES = {
    "sqlite": "Dates are ISO text: use date(), strftime('%Y', col), julianday(), and compare 'YYYY-MM-DD' strings.",
    "postgres": "Dates: DATE_TRUNC, EXTRACT, CURRENT_DATE - INTERVAL '1 month'.",
    "mysql": "Dates: YEAR(), DATE_FORMAT(), DATE_SUB(CURDATE(), INTERVAL 1 MONTH).",
    "duckdb": "Dates: date_trunc('month', col), extract(year FROM col), strftime(col, '%Y-%m'), current_date - INTERVAL 1 MONTH.",
    "snowflake": "Dates: DATE_TRUNC('MONTH', col), YEAR(col), DATEADD(month, -1, CURRENT_DATE()).",
    "bigquery": "Dates: DATE_TRUNC(col, MONTH), EXTRACT(YEAR FROM col), DATE_SUB(CURRENT_DATE(), INTERVAL 1 MONTH).",
    "databricks": "Dates: date_trunc('MONTH', col), year(col), add_months(current_date(), -1).",
    "trino": "Dates: date_trunc('month', col), year(col), current_date - INTERVAL '1' MONTH.",
    "redshift": "Dates: DATE_TRUNC('month', col), EXTRACT(YEAR FROM col), DATEADD(month, -1, CURRENT_DATE).",
}
PRIMARY, ALTERNATIVE, REVISED = "primary", "alternative", "revised"
MAX_NOTE = 2000

_BLOCK = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(```|\Z)", re.S)
_SQL_LANGS = {
    "sql",
    "sqlite",
    "postgresql",
    "postgres",
    "mysql",
    "psql",
    "duckdb",
    "snowflake",
    "bigquery",
    "googlesql",
    "databricks",
    "sparksql",
    "trino",
    "redshift",
}
_LABEL = re.compile(r"^\s*(?:--|#)\s*(.*)$")
_READING = re.compile(r"other\s+reading\s*[:\-—]\s*(.+)$", re.I)
_FIELD = r"^[\s>*_#-]*{name}[\s*_]*:[\s*_]*(.+?)\s*$"


@dataclass(frozen=True)
class Candidate:
    sql: str  # over the base tables and/or the recipe's CTE name
    label: str = PRIMARY  # primary | alternative | revised
    reading: str = ""  # the writer's words for the other reading it took, when it took one
    note: str = ""  # what the model said around it (revisions explain the fix)


@dataclass(frozen=True)
class Draft:
    """What the writer replied: its candidates, in order, and its plan."""

    candidates: tuple[Candidate, ...]
    task: str = ""  # what the answer is, in a few words (the answer sentence starts with it)
    plan: str = ""
    question: str = ""  # the question as a standalone one, when it followed up on earlier turns
    cut: bool = False  # a candidate was cut off at the token limit and dropped
    assumed: str = ""  # a reading of the question's words that nothing fixed, in the writer's words


@dataclass(frozen=True)
class Context:
    """Everything the writer and the reviser see besides the question."""

    schema: str  # CREATE TABLE text of the tables in scope (core/schema_text.py)
    recipe: str = ""  # the join recipe as CTE text (core/view.py), or ""
    recipe_name: str = ""
    values: str = ""  # the value hints section (core/hints.py), or ""
    examples: Sequence[Example] = ()
    history: Sequence[Turn] = ()
    dialect: str = "sqlite"
    today: dt.date | None = None
    clarifications: str = ""  # rejected SQL and answers to clarifying questions (core/clarify)
    definitions: str = ""  # the business definitions the question needs (core/definitions/prompt.py)


def _recipe_section(ctx: Context) -> str:
    if not ctx.recipe:
        return ""
    return (
        "\n### Join recipe (a hint)\n"
        f"How the tables the question names join. Select from `{ctx.recipe_name}` as a table, copy "
        "its joins, or ignore it: it drops entities with no match and leaves keys out.\n"
        f"{ctx.recipe}\n"
    )


def _examples_section(examples: Sequence[Example]) -> str:
    if not examples:
        return ""
    parts = ["\n### Confirmed answers to similar questions"]
    for ex in examples:
        parts.append(f"Question: {ex.question}\n```sql\n{ex.sql}\n```")
    return "\n".join(parts) + "\n"


def _common(question: str, ctx: Context) -> dict[str, str]:
    return {
        "dialect": DIALECT_NAMES.get(ctx.dialect, ctx.dialect),
        "schema": ctx.schema,
        "recipe": _recipe_section(ctx),
        "values": f"\n{ctx.values}" if ctx.values else "",
        "definitions": ctx.definitions,
        "dates": DATES.get(ctx.dialect, "Use the dialect's date functions."),
        "today": (ctx.today or dt.date.today()).isoformat(),
        "question": question,
        "clarifications": f"{ctx.clarifications}\n" if ctx.clarifications else "",
    }


def generate(question: str, ctx: Context, llm: LLM) -> Draft:
    """One call: the plan and up to two candidates. Raises LLMError (LLMRefused when the model
    declines) when the reply holds no query at all."""
    history = describe_history(ctx.history)
    messages = prompts.render(
        "generate",
        **_common(question, ctx),
        examples=_examples_section(ctx.examples),
        history=f"Earlier in this conversation:\n{history}\n" if history else "",
        standalone=(
            "\nThe question may follow up on earlier ones: start your reply with "
            "`Question: <it as a standalone question>`."
            if history
            else ""
        ),
    )
    completion = llm.chat("generate", messages)
    return read_draft(completion, follow_up=bool(history))


def read_draft(completion: Completion, follow_up: bool = False) -> Draft:
    """The writer's reply as a Draft; raises LLMRefused or LLMBadReply when it holds no query."""
    if completion.refusal:
        raise LLMRefused(f"The language model declined: {completion.refusal}")
    text = completion.text
    body = strip_reasoning(text)
    blocks = _sql_blocks(body)
    cut_at_limit = completion.finish_reason == "length"
    cut = False
    if len(blocks) > 1 and (not blocks[-1][1] or cut_at_limit):
        blocks = blocks[:-1]  # the last block was cut off: a half query must not be run
        cut = True
    candidates: list[Candidate] = []
    for i, (block, _closed, before) in enumerate(blocks):
        label, reading, sql = _labelled(block, before, first=i == 0)
        if sql and not any(_same_sql(sql, c.sql) for c in candidates):
            candidates.append(Candidate(sql=sql, label=label, reading=reading, note=text[:MAX_NOTE]))
        if len(candidates) == 2:
            break
    # the one the writer calls primary first, wherever it put it (a tie keeps the reply's order)
    candidates.sort(key=lambda c: c.label != PRIMARY)
    if not candidates:
        try:
            candidates = [Candidate(sql=extract_sql(text), note=text[:MAX_NOTE])]
        except RefusalError as exc:
            raise LLMRefused(f"The language model declined: {exc}") from exc
        except ReplyError as exc:
            limit = " (cut off at the token limit)" if cut_at_limit else ""
            raise LLMBadReply(f"The language model's reply had no SQL: {exc}{limit}") from exc
    head = body.split("```", 1)[0]
    return Draft(
        candidates=tuple(candidates),
        task=_field(head, "task"),
        plan=_field(head, "plan"),
        question=_field(head, r"(?:standalone\s+)?question") if follow_up else "",
        cut=cut,
        assumed=_assumed(_field(head, "assumed")),
    )


def _sql_blocks(body: str) -> list[tuple[str, bool, str]]:
    """Fenced blocks holding SQL, in order: each with whether its fence was closed, and the last
    line of prose before it (where some models put the label: "**Alternative** (other reading: …)")."""
    out = []
    end_of_last = 0
    for match in _BLOCK.finditer(body):
        lang, block, end = match.group(1).lower(), match.group(2), match.group(3)
        before = body[end_of_last : match.start()].strip().splitlines()
        end_of_last = match.end()
        if lang in _SQL_LANGS or (lang == "" and SQL_START.search(block)):
            out.append((block.strip(), bool(end), before[-1] if before else ""))
    return out


def _labelled(block: str, before: str, first: bool) -> tuple[str, str, str]:
    """(label, the other reading if it says so, the SQL) of one block."""
    lines = block.strip().splitlines()
    label = PRIMARY if first else ALTERNATIVE
    said = before.strip("*_#:> ").lower()
    if said.startswith(ALTERNATIVE):
        label = ALTERNATIVE
    elif said.startswith(PRIMARY):
        label = PRIMARY
    found = _READING.search(before)
    reading = _reading(found.group(1)) if found else ""
    while lines and (labelled := _LABEL.match(lines[0])) and not SQL_START.match(lines[0]):
        said = labelled.group(1).strip()
        if said.lower().startswith(ALTERNATIVE):
            label = ALTERNATIVE
        elif said.lower().startswith(PRIMARY):
            label = PRIMARY
        found = _READING.search(said)
        if found:
            reading = _reading(found.group(1))
        lines = lines[1:]
    sql = "\n".join(lines).strip()
    while sql.endswith(";"):
        sql = sql[:-1].rstrip()
    return label, reading, sql


def _reading(text: str) -> str:
    return text.strip().rstrip(":.").strip("`'\"*() ").rstrip(".")


def _same_sql(a: str, b: str) -> bool:
    return " ".join(a.lower().split()) == " ".join(b.lower().split())


def _assumed(text: str) -> str:
    """The writer's 'Assumed:' line, unless it says there was nothing to assume."""
    said = text.strip().rstrip(".")
    if not said or said.lower() in ("none", "n/a", "nothing", "-", "no") or said.startswith("<"):
        return ""
    return said[:200]


def _field(text: str, name: str) -> str:
    found = re.search(_FIELD.format(name=name), text, re.I | re.M)
    return found.group(1).strip().strip("`") if found else ""


def revise(question: str, ctx: Context, failures: Sequence[tuple[Candidate, str]], llm: LLM) -> Candidate:
    """One call: a corrected query, given every failed candidate and what went wrong with it."""
    attempts = []
    for i, (candidate, problem) in enumerate(failures, 1):
        name = f"Query {i}" if len(failures) > 1 else "This query"
        attempts.append(f"{name}:\n```sql\n{candidate.sql}\n```\n{problem}")
    messages = prompts.render("revise", **_common(question, ctx), attempts="\n\n".join(attempts))
    sql, completion = llm.sql("revise", messages)
    return Candidate(sql=sql, label=REVISED, note=completion.text[:MAX_NOTE])
