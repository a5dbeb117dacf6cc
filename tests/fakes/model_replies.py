"""Replies shaped like real models' output, for scripting the fake OpenAI server.

Real models rarely return bare JSON or bare SQL: they reason first, wrap payloads in markdown
fences, add a closing sentence, hit the token limit mid-object, or refuse. Tests use these shapes
so the parsing is exercised the way production traffic exercises it.
"""

from __future__ import annotations

import json
from typing import Any


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
