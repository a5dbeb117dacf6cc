"""Singular and plural forms of English nouns, for names and questions (via `inflect`).

Matching a question to a schema compares words in the singular ('statuses' finds `status`,
'species' finds `species`), and keyword mode's hints name a table in the plural. English has too
many irregular forms for suffix rules (they turned 'statuses' into 'statuse' and 'series' into
'sery'), so `inflect` decides. Around it sit the guards a schema needs: short words (ids, gas,
has) and Latin singulars (status, campus, analysis) stay as they are, and `data`/`media` keep the
sense databases give them. Results are cached: names and questions repeat the same few words.

Imports nothing of ours, so any module can use it.
"""

from __future__ import annotations

from functools import lru_cache

import inflect

_ENGINE = inflect.engine()
# Plurals that name one thing in a schema ('data', 'media'), where inflect would give the Latin singular.
KEEP = frozenset({"data", "media", "metadata", "news", "staff"})
# inflect reads these as plural pronouns ('they' → 'it', 'we' → 'I'); in a question they are glue.
PRONOUNS = frozenset({"we", "they", "them", "these", "those", "ourselves", "themselves", "yourselves"})
NOT_PLURAL_ENDINGS = ("ss", "us", "is")  # class, status, campus, analysis: singular already
# Singulars ending in s that inflect cuts ('lens' → 'len': 'which camera lens …' read as plural)
SINGULAR_IN_S = frozenset(
    {
        "lens",
        "canvas",
        "atlas",
        "bias",
        "alias",
        "chaos",
        "ethos",
        "kudos",
        "physics",
        "mathematics",
        "economics",
        "politics",
        "athletics",
        "gymnastics",
        "logistics",
    }
)


@lru_cache(maxsize=65536)
def singular(word: str) -> str:
    """'statuses' → 'status', 'series' → 'series', 'cities' → 'city'; a singular word is returned as is."""
    if (
        not word.isalpha()
        or (len(word) <= 3 and word.endswith("s"))  # ids, gas, has, its: no plural to undo
        or word in KEEP
        or word in SINGULAR_IN_S
        or word in PRONOUNS
        or word.endswith(NOT_PLURAL_ENDINGS)
    ):
        return word
    return _ENGINE.singular_noun(word) or word


@lru_cache(maxsize=4096)
def plural(phrase: str) -> str:
    """'resource pool' → 'resource pools', 'status' → 'statuses'; 'orders' is plural already."""
    words = phrase.split()
    if not words or not words[-1].isalpha() or words[-1] in KEEP or singular(words[-1]) != words[-1]:
        return phrase
    return " ".join([*words[:-1], _ENGINE.plural_noun(words[-1])])


def name_phrase(name: str) -> str:
    """A table's or column's name as words in a sentence: 'payment_amount' → 'payment amount'. A name
    in capitals is how Snowflake (and Oracle) keep names written without quotes, so its words are
    said in lower case, as the same schema's are on other engines: 'CPU_CORES' → 'cpu cores'."""
    text = name.replace("_", " ").strip()
    return text.lower() if not any(ch.islower() for ch in text) else text
