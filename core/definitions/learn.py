"""Definitions learned from corrections: what business meaning did a wrong answer miss?

When an answer is corrected — an analyst verifies a fixed SQL for it, or a benchmark knows the
right SQL — the difference often is not a slip but meaning the schema does not hold ("total loss"
also counts expense reserves). One LLM call (prompts/learn.md) is shown the question, the wrong
and the right SQL, and proposes definitions that would hold for other questions too; each is
checked against the schema and the guard like any definition, and what does not fit is dropped.
What comes out is a proposal: an analyst approves it (core/teaching.py), or the learning bench
(core/bench/learn.py) measures what it is worth on questions it was not learned from.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from pydantic import BaseModel

from core.catalog import Catalog
from core.definitions.check import check
from core.definitions.model import Definition, Definitions, Provenance, Scope
from core.definitions.teach import DraftReply, existing_text, from_reply
from core.guard import GuardPolicy
from core.llm import LLM, LLMError
from core.prompts import render

log = logging.getLogger(__name__)

MAX_PER_CORRECTION = 3


class LearnReply(BaseModel):
    definitions: list[DraftReply] = []


@dataclass(frozen=True)
class Learned:
    proposed: tuple[Definition, ...]  # fit the schema, ready for review
    dropped: tuple[str, ...]  # why the others were left out


def from_correction(
    question: str,
    wrong_sql: str,
    right_sql: str,
    catalog: Catalog,
    definitions: Definitions,
    llm: LLM,
    *,
    schema_text: str,
    policy: GuardPolicy | None = None,
    origin: str = "",
) -> Learned:
    """The definitions a correction teaches, checked; none when the LLM fails (it only proposes)."""
    messages = render(
        "learn",
        dialect=catalog.dialect,
        schema=schema_text,
        existing=existing_text(definitions),
        question=question,
        wrong=wrong_sql.strip(),
        right=right_sql.strip(),
    )
    try:
        reply = llm.json("learn", messages, LearnReply)
    except LLMError as exc:
        log.info("no definitions learned from a correction: %s", exc)
        return Learned((), (f"the language model failed: {exc}",))
    provenance = Provenance(source="learned", origin=origin)
    proposed: list[Definition] = []
    dropped: list[str] = []
    known = {d.ref for d in definitions}
    for item in reply.definitions[:MAX_PER_CORRECTION]:
        d = from_reply(item, item.name, item.text, Scope(), provenance)
        if d is None or not d.name.strip():
            dropped.append(f"not a definition: {item.name or item.kind}")
            continue
        if d.ref in known:
            dropped.append(f"{d.kind} '{d.name}': already defined")
            continue
        problems = [p for p in check(definitions.plus([*proposed, d]), catalog, policy) if f"'{d.name}'" in p]
        if problems:
            dropped.append(problems[0])
            continue
        proposed.append(d)
        known.add(d.ref)
    return Learned(tuple(proposed), tuple(dropped))
