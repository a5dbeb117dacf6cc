"""Retrieve stage: find the question's words in the schema, the catalog and the stored values (no LLM).

- object keywords → the keyword dictionary (core/dictionary.py, DANKE §3): tables and columns by
  name, synonym or description;
- filter values → the value index (core/values/): the stored spelling of the value, its table
  and column ('E176' → compute.hostname = 'E-176'; 'open' → ticket.status = 'OPN');
- the question → description retrieval (core/descriptions.py): the catalog notes worth showing.

The dictionary and the description index are built once per catalog; the value index lives on
disk and is opened once per database. With no keywords (keyword mode without an LLM), keywords
are guessed from the question.
"""

from __future__ import annotations

import re

from core.database import Database
from core.descriptions import description_index
from core.dictionary import STOPWORDS, keyword_dictionary
from core.retrieval import Keywords, Retrieval, ValueMatch
from core.values import Access

VALUES_PER_KEYWORD = 5
VALUE_FLOOR = 0.7  # weaker value matches mislead more than they help
VALUE_SPREAD = 0.08  # matches this close to a keyword's best are kept as alternatives
OBJECT_AS_VALUE_MIN = 0.85  # an object keyword that names no table may still be a stored value
NAMED_MIN = 0.8


# ---------------------------------------------------------------------------------------------
# keywords from the question alone (keyword mode, no LLM)

_QUOTED = re.compile(r"[\"'“”‘’`]([^\"'“”‘’`]{1,80})[\"'“”‘’`]")
_TOKEN = re.compile(r"[\w][\w\-./]*[\w]|[\w]", re.UNICODE)
_CODE = re.compile(r"^(?=.*\d)[\w\-./]+$|^[A-Z]{2,}[\w\-]*$")


def guess_keywords(question: str) -> Keywords:
    """Objects and values from the question's words, for when no LLM extracted them.

    Values: quoted text, codes and numbers ('E176', 'INV-2024-00123', '2024'), and runs of
    capitalised words past the first word ('New York'). Objects: the other content words and
    pairs of neighbouring ones ('resource pool').
    """
    values: list[str] = [m.strip() for m in _QUOTED.findall(question) if m.strip()]
    rest = _QUOTED.sub(" ", question)
    objects: list[str] = []
    run: list[str] = []
    content: list[str] = []
    tokens = _TOKEN.findall(rest)
    for i, tok in enumerate(tokens):
        if (_CODE.match(tok) and not tok.isalpha()) or (tok.isupper() and len(tok) > 1):
            values.append(tok)
            content.append("")
            continue
        if i > 0 and tok[:1].isupper() and tok.lower() not in STOPWORDS:
            run.append(tok)
            content.append("")
            continue
        if run:
            values.append(" ".join(run))
            run = []
        low = tok.lower()
        content.append("" if low in STOPWORDS else low)
    if run:
        values.append(" ".join(run))
    for i, w in enumerate(content):
        if w:
            objects.append(w)
            if i + 1 < len(content) and content[i + 1]:
                objects.append(f"{w} {content[i + 1]}")
    return Keywords(objects=tuple(dict.fromkeys(objects)), values=tuple(dict.fromkeys(values)))


# ---------------------------------------------------------------------------------------------
# the stage


def _close_to_best(matches: list[ValueMatch]) -> list[ValueMatch]:
    """The matches of one keyword worth showing: an exact match hides near misses ('INV-2024-00124'
    next to 'INV-2024-00123'), but values about as good as the best stay, so an ambiguous keyword
    ('Frankfurt': a city and a datacenter) is seen as ambiguous."""
    if not matches:
        return []
    best = matches[0].score
    floor = best if best >= 1.0 else max(VALUE_FLOOR, best - VALUE_SPREAD)
    return [m for m in matches if m.score >= floor]


def retrieve(
    question: str, keywords: Keywords, db: Database, *, every_object_as_value: bool = False
) -> Retrieval:
    """Schema matches for the object keywords, stored values for the filter values, descriptions
    for the question; nothing the database's access rules deny.

    `every_object_as_value`: look every object keyword up among stored values, not only those
    that name no table or column ('active' names a status column and is also the meaning of
    client.status 'ACT'). LLM mode asks for it: its keywords are the question's own words, and
    core/hints.py decides which matches are worth showing. Without a value index (a large
    database searched directly) only the words that name nothing are looked up, as otherwise.
    """
    catalog = db.catalog
    access = Access.of(db)
    notes: list[str] = []
    if not keywords.objects and not keywords.values:
        keywords = guess_keywords(question)
        notes.append(
            f"keywords guessed from the question: objects {list(keywords.objects)}, values {list(keywords.values)}"
        )

    dictionary = keyword_dictionary(catalog, access)
    schema = [m for kw in dict.fromkeys(keywords.objects) for m in dictionary.match(kw)]

    index = db.values
    values = [
        m
        for kw in dict.fromkeys(keywords.values)
        for m in _close_to_best(index.lookup(kw, k=VALUES_PER_KEYWORD))
    ]
    # An object keyword that names no table or column may be a stored value ('Frankfurt servers').
    named = {m.keyword for m in schema if m.score >= NAMED_MIN}
    for kw in dict.fromkeys(keywords.objects):
        # every object word only with an index: direct searches are slow, keep them to the few
        wide = every_object_as_value and index.mode != "direct"
        if (wide or kw not in named) and kw not in keywords.values:
            values.extend(m for m in _close_to_best(index.lookup(kw, k=3)) if m.score >= OBJECT_AS_VALUE_MIN)
    if index.mode == "direct":
        notes.append("no value index yet: values were searched directly (run `python -m bot index build`)")

    descriptions = description_index(catalog, access).rank(
        " ".join([question, *keywords.objects, *keywords.values])
    )
    schema.sort(key=lambda m: -m.score)
    values.sort(key=lambda m: -m.score)
    return Retrieval(schema=schema, values=values, descriptions=descriptions, notes=notes)
