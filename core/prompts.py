"""Prompt templates: one file per LLM task in prompts/, rendered with `$name` placeholders.

A file has a `[system]` section and a `[user]` section. Templates use string.Template syntax so
JSON examples with braces need no escaping; a literal dollar sign is written `$$`. The files are
package data of the top-level `prompts` package, read through `importlib.resources`, so an
installed wheel finds them from any working directory.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from string import Template

PROMPTS_PACKAGE = "prompts"


@cache
def _load(task: str) -> tuple[Template, Template]:
    text = resources.files(PROMPTS_PACKAGE).joinpath(f"{task}.md").read_text(encoding="utf-8")
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
