"""Replies shaped like real models' output, for scripting the fake OpenAI server.

Real models rarely return bare JSON or bare SQL: they reason first, wrap payloads in markdown
fences, add a closing sentence, hit the token limit mid-object, or refuse. Tests use these shapes
so the parsing is exercised the way production traffic exercises it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from tests.fakes.openai_server import Reply

# The generate prompt offers the join recipe by name when it has one (core/generate.py).
RECIPE_NAME = re.compile(r"[Ss]elect from `([^`]+)` as a table")


def recipe_name(body: dict[str, Any]) -> str:
    """The join recipe a generate/revise request offers, read from its system prompt as a model would."""
    match = RECIPE_NAME.search(body["messages"][0]["content"])
    assert match, "the request offers no join recipe"
    return match.group(1)


def candidates(
    primary: str,
    alternative: str | None = None,
    *,
    task: str = "the answer",
    plan: str = "Join the tables on their keys and filter.",
    reading: str = "",
) -> str:
    """A writer's reply as models write it: task and plan, then one or two labelled ```sql blocks."""
    parts = [f"Task: {task}\nPlan: {plan}\n", f"```sql\n-- primary\n{primary}\n```"]
    if alternative is not None:
        label = f"alternative: other reading: {reading}" if reading else "alternative: same reading"
        parts.append(f"```sql\n-- {label}\n{alternative};\n```")
    parts.append("Both queries return the requested result.")
    return "\n\n".join(parts)


def writing(primary: str, alternative: str | None = None, **kw: str) -> Callable[[dict[str, Any]], Reply]:
    """A responder that writes `primary` (and `alternative`); {recipe} is the offered recipe's name."""

    def reply(body: dict[str, Any]) -> Reply:
        fill = {"recipe": recipe_name(body)} if "{recipe}" in primary + (alternative or "") else {}
        return Reply(
            content=candidates(
                primary.format(**fill), alternative.format(**fill) if alternative else None, **kw
            )
        )

    return reply


def understanding(
    main_task: str,
    sub_tasks: list[str] | None = None,
    objects: list[str] | None = None,
    filters: list[tuple[str, str, str]] | None = None,
    standalone: str = "",
) -> dict[str, Any]:
    return {
        "standalone_question": standalone,
        "main_task": [main_task],
        "sub_tasks": sub_tasks or [],
        "object": objects or [],
        "implementation": [{"action": a, "condition": c, "value": v} for a, c, v in (filters or [])],
    }


def json_fenced(obj: Any) -> str:
    return f"Here is the analysis of the question:\n\n```json\n{json.dumps(obj, indent=2)}\n```\n\nLet me know if you need more."


def json_reasoning_first(obj: Any) -> str:
    return (
        "<think>The user wants a count. I should find the main task first, then the filters. "
        'Something like {"draft": true} would not be enough.</think>\n'
        f"Final answer:\n{json.dumps(obj)}"
    )


def json_with_prose(obj: Any) -> str:
    return f"Sure! Based on the question, the decomposition is {json.dumps(obj)} — hope this helps."


def json_truncated(obj: Any) -> str:
    text = json.dumps(obj)
    return text[: int(len(text) * 0.8)]


def json_python_style(obj: Any) -> str:
    return repr(obj)  # single quotes, True/None


def sql_fenced(sql: str, reasoning: str = "We need to filter and aggregate over the view.") -> str:
    return f"{reasoning}\n\n```sql\n{sql}\n```\n\nThis query returns the requested result."


def sql_bare(sql: str) -> str:
    return f"{sql};"


def sql_in_prose(sql: str) -> str:
    return f"The query is:\n{sql}\n\nIt counts rows that match."


REFUSAL = "I'm sorry, but I can't help with that request."


def fixing(sql: str) -> Callable[[dict[str, Any]], Reply]:
    """A reviser's responder: one sentence on the problem, then the corrected query."""
    return lambda body: Reply(content=sql_fenced(sql, "The column name was misspelled; here is the fix."))
