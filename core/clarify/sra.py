"""Summarize–Review–Ask (Sphinteract §6.2.2) with early stopping (§6.2.3), one LLM call.

The prompt (prompts/clarify.md) carries the question, the schema the SQL writer sees, the
rejected SQL, the answers so far and the competing readings the engine found in the data; the
reply is validated with pydantic and then held to the rules a person notices: one question,
2–4 plain options (no SQL; "Other…" is added by the adapters), never a question asked before.
An option the model ties to a grounded reading carries that reading as its value, so the choice
is applied exactly.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from core import prompts
from core.answer import Clarification, Option
from core.clarify.candidates import Candidates
from core.clarify.transcript import Transcript, describe, normalize, options_key
from core.llm import LLM

KINDS = {
    "ambquestion": "AmbQuestion",
    "ambtablecolumn": "AmbTableColumn",
    "ambcolumn": "AmbTableColumn",
    "amboutput": "AmbOutput",
    "ambvalue": "AmbValue",
}
MAX_OPTIONS = 4
MAX_LABEL = 75  # Slack's limit for a button's text
MAX_QUESTION = 300
_OTHER = re.compile(
    r"^\s*(\(?[a-e]\)|[a-e][.)])?\s*(other|others|none of (the|these)|something else)\b", re.I
)
_LETTER = re.compile(r"^\s*(\(?[a-eA-E]\)|[a-eA-E][.)])\s+")
_SQL = re.compile(
    r"```|\bselect\b.+\bfrom\b|\bwhere\b\s+\w+\s*(=|<|>|\blike\b|\bin\b)|\bgroup\s+by\b|\border\s+by\b|"
    r"\bjoin\b.+\bon\b|\bcount\s*\(|\bsum\s*\(|\bavg\s*\(",
    re.I | re.S,
)


class SRAOption(BaseModel):
    text: str = ""
    candidate: str | None = None


class SRAReply(BaseModel):
    """The model's Summarize–Review–Ask output."""

    summary: str = ""
    review: dict[str, str] = Field(default_factory=dict)
    ask: bool = True
    kind: str = "AmbQuestion"
    question: str = ""
    options: list[SRAOption | str] = Field(default_factory=list)


@dataclass
class SRAResult:
    clarification: Clarification | None
    summary: str = ""
    review: dict[str, str] = field(default_factory=dict)
    reason: str = ""  # why no question was asked, for the trace

    def trace(self) -> dict[str, object]:
        out: dict[str, object] = {"summary": self.summary, "review": self.review}
        if self.clarification is not None:
            c = self.clarification
            out["asked"] = f"{c.kind}: {c.question}"
            out["options"] = [o.label for o in c.options]
        else:
            out["stopped"] = self.reason
        return out


def candidates_text(candidates: Sequence[Candidates]) -> tuple[str, dict[str, str]]:
    """The readings found in the data, with ids the model can cite; and id → option value."""
    if not candidates:
        return "", {}
    lines = ["Readings found in the data:"]
    ids: dict[str, str] = {}
    for i, c in enumerate(candidates, 1):
        parts = []
        for j, choice in enumerate(c.choices):
            cid = f"C{i}{chr(ord('a') + j)}"
            ids[cid.lower()] = choice.value
            ids[normalize(choice.label)] = choice.value
            parts.append(f"{cid} {choice.label} [{choice.detail}]")
        what = "is stored in" if c.kind == "AmbValue" else "can mean"
        lines.append(f"C{i} ({c.kind}) — '{c.words}' {what}: " + "; ".join(parts))
    return "\n".join(lines) + "\n", ids


def looks_like_sql(text: str) -> bool:
    return bool(_SQL.search(text))


def clean_label(text: str) -> str:
    label = " ".join(_LETTER.sub("", text).split()).strip(" .;")
    return label if len(label) <= MAX_LABEL else label[: MAX_LABEL - 1].rstrip() + "…"


def summarize_review_ask(
    question: str,
    schema: str,
    transcript: Transcript,
    candidates: Sequence[Candidates],
    llm: LLM,
) -> SRAResult:
    """One SRA round: a new multiple-choice question, or None when nothing is left to ask."""
    listed, ids = candidates_text(candidates)
    history = describe(transcript.exchanges, transcript.rejected_sql)
    messages = prompts.render(
        "clarify",
        schema=schema,
        transcript=f"{history}\n" if history else "",
        candidates=listed,
        question=question,
    )
    reply = llm.json("clarify", messages, SRAReply)
    result = SRAResult(None, reply.summary.strip(), {k: str(v) for k, v in reply.review.items()})
    text = " ".join(reply.question.split())
    if not reply.ask or not text:
        result.reason = "the model found nothing left to clarify"
        return result
    if looks_like_sql(text):
        result.reason = "the model's question contained SQL"
        return _fallback(result, transcript, candidates)
    options = _options(reply.options, ids)
    if len(options) < 2:
        result.reason = "the model offered fewer than two usable options"
        return _fallback(result, transcript, candidates)
    if transcript.already_asked(text, options_key(o.value for o in options), [o.label for o in options]):
        result.reason = "the model repeated a question already asked"
        return _fallback(result, transcript, candidates)
    kind = KINDS.get(normalize(reply.kind).replace(" ", ""), "AmbQuestion")
    result.clarification = Clarification(question=text[:MAX_QUESTION], options=tuple(options), kind=kind)
    return result


def _options(raw: Sequence[SRAOption | str], ids: dict[str, str]) -> list[Option]:
    out: list[Option] = []
    seen: set[str] = set()
    for item in raw:
        text, cid = (item, None) if isinstance(item, str) else (item.text, item.candidate)
        label = clean_label(text or "")
        if not label or _OTHER.match(text or "") or looks_like_sql(label):
            continue
        value = ids.get((cid or "").strip().lower()) or ids.get(normalize(label)) or label
        norm = normalize(label)
        if norm in seen:
            continue
        seen.add(norm)
        out.append(Option(label=label, value=value))
    return out[:MAX_OPTIONS]


def _fallback(result: SRAResult, transcript: Transcript, candidates: Sequence[Candidates]) -> SRAResult:
    """When the model's question is unusable, ask about the data's own candidates directly."""
    for c in candidates:
        if c.strong and not transcript.already_asked(c.question(), c.key):
            result.clarification = direct(c)
            result.reason += "; asked about the readings found in the data instead"
            return result
    return result


def direct(c: Candidates) -> Clarification:
    """A clarifying question about grounded candidates, phrased without an LLM."""
    return Clarification(
        question=c.question(),
        options=tuple(Option(label=clean_label(ch.label), value=ch.value) for ch in c.choices[:MAX_OPTIONS]),
        kind=c.kind,
    )
