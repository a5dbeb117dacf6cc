"""Prompt templates: one file per LLM task in prompts/, rendered with `$name` placeholders.

A file has a `[system]` section and a `[user]` section. Templates use string.Template syntax so
JSON examples with braces need no escaping; a literal dollar sign is written `$$`.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from string import Template

PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"


@cache
def _load(task: str) -> tuple[Template, Template]:
    text = (PROMPTS_DIR / f"{task}.md").read_text()
    if "[system]" not in text or "[user]" not in text:
        raise ValueError(f"prompts/{task}.md needs a [system] and a [user] section")
    system, user = text.split("[system]", 1)[1].split("[user]", 1)
    return Template(system.strip()), Template(user.strip())


def render(task: str, **values: object) -> list[dict[str, str]]:
    """Chat messages for `task`; a missing placeholder is a programming error and raises KeyError."""
    system, user = _load(task)
    strings = {k: str(v) for k, v in values.items()}
    return [
        {"role": "system", "content": system.substitute(strings)},
        {"role": "user", "content": user.substitute(strings)},
    ]
