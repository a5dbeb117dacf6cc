"""YAML read with libyaml's C parser where PyYAML was built with it.

Why: `yaml.safe_load` is PyYAML's pure-Python parser. The lexicon alone took 130 ms of every
process's start with it (and every `python -m bot` a test or a user starts reads it), about ten
times what the C parser takes. Both accept the same documents and build the same plain values
(dicts, lists, strings, numbers); the C one is used when the installed PyYAML has it.
"""

from __future__ import annotations

from typing import Any

import yaml

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str) -> Any:
    """The plain values of a YAML document (None for an empty one); raises yaml.YAMLError."""
    return yaml.load(text, Loader=_LOADER)
