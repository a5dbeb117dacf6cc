"""A question's normalized text: what two askings of the same question have in common.

It keys the answer cache (core/answer_cache.py) and is the exact-match baseline the verified-query
matcher is measured against (`python -m core.bench verified`). Only differences that cannot change
the meaning go: case, accents, punctuation around words, runs of spaces, a leading "please" and
trailing question marks. Everything else — every word, number and value — stays, so two different
questions never share a key.
"""

from __future__ import annotations

import re
import unicodedata

_SPACES = re.compile(r"\s+")
# Punctuation that never carries meaning between words; inside a token ("prod-frankfurt-1",
# "3.5", "Network & CDN") it is kept.
_EDGE_PUNCT = re.compile(r"(?:(?<=\s)|^)[\"'“”‘’`(\[{]+|[\"'“”‘’`)\]},;:!?.]+(?=\s|$)")
_POLITE = re.compile(r"^(?:please|pls|hey|hi|hello)\b[\s,]*", re.IGNORECASE)


def normalize_question(question: str) -> str:
    """'  How many clients are in Zürich?? ' → 'how many clients are in zurich'."""
    text = unicodedata.normalize("NFKD", question.casefold())
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = _SPACES.sub(" ", text).strip()
    text = _POLITE.sub("", text)
    text = _EDGE_PUNCT.sub("", text)
    return _SPACES.sub(" ", text).strip()
