"""Understand stage (LAIA-SQL §4.1): task decomposition and keyword extraction by the LLM.

Used only with `engine.understand: separate`: by default the decomposition is folded into the SQL
writer's reply (its Task and Plan lines, core/generate.py) and retrieval reads the question's own
words, which saves a call on every question. `Understanding` stays the type the stages share.

The main task becomes what follows SELECT, the sub tasks the joins and filters; object keywords
feed schema matching and implementation values feed value retrieval. A follow-up question is
rewritten into a standalone one using the conversation so far.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from core import prompts
from core.conversation import Turn, describe_history
from core.llm import LLM
from core.retrieval import Keywords


class Implementation(BaseModel):
    action: str = ""
    condition: str = ""
    value: str | int | float | None = ""


class UnderstandReply(BaseModel):
    """The JSON the model returns (field names follow the paper's figure)."""

    standalone_question: str = ""
    main_task: list[str] | str = Field(default_factory=list)
    sub_tasks: list[str] | str = Field(default_factory=list)
    object: list[str] = Field(default_factory=list)
    implementation: list[Implementation] = Field(default_factory=list)


@dataclass(frozen=True)
class Filter:
    action: str
    condition: str
    value: str = ""


@dataclass(frozen=True)
class Understanding:
    question: str  # standalone form
    main_task: tuple[str, ...] = ()
    sub_tasks: tuple[str, ...] = ()
    keywords: Keywords = field(default_factory=Keywords)
    filters: tuple[Filter, ...] = ()


def _as_list(value: list[str] | str) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    return tuple(s.strip() for s in items if s and s.strip())


def understand(
    question: str, history: Sequence[Turn], llm: LLM, database_description: str = ""
) -> Understanding:
    messages = prompts.render(
        "understand",
        question=question.replace('"', "'"),
        history=describe_history(history) or "(none: this is the first question)",
        database_description=database_description or "(no description)",
    )
    reply = llm.json("understand", messages, UnderstandReply)
    filters = tuple(
        Filter(i.action.strip(), i.condition.strip(), "" if i.value is None else str(i.value).strip())
        for i in reply.implementation
        if i.action or i.condition or i.value
    )
    objects = _as_list(reply.object)
    values = tuple(dict.fromkeys(f.value for f in filters if f.value))
    return Understanding(
        question=reply.standalone_question.strip() or question,
        main_task=_as_list(reply.main_task),
        sub_tasks=_as_list(reply.sub_tasks),
        keywords=Keywords(objects=objects, values=values),
        filters=filters,
    )
