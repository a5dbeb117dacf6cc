"""Naming conventions: the words of an identifier, singular forms, and what looks like a key.

Most databases declare few foreign keys; their column names say the rest (`restaurant_id`,
`SourceAirport`, `paperId`). Names are compared as flat lower-case words, so `created_at`,
`CreatedAt` and `createdat` are one name.
"""

from __future__ import annotations

import re

from core.plurals import singular

# Words that end a key column's name: customer_id, country_code, order_no.
KEY_WORDS = frozenset(
    {"id", "code", "key", "no", "num", "number", "nr", "nbr", "cd", "uuid", "guid", "ref", "identifier"}
)
# Column names too common to mean "the same thing" when two tables share them (compared without
# separators or case: created_at, CreatedAt and createdat are one name).
_GENERIC = """
    name type title description desc value status date year month day time created updated createdat
    updatedat comment comments note notes details otherdetails amount price count version label rank
    age sex gender email phone address city country state zip zipcode url homepage
"""
GENERIC_NAMES = frozenset(_GENERIC.split()) | KEY_WORDS


def words_of(name: str) -> list[str]:
    """Identifier → lower-case words: 'SourceAirport' → [source, airport], 'RESTAURANT_ID' → [restaurant, id]."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", spaced)
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w]


def flat_name(name: str) -> str:
    """'SourceAirport', 'source_airport' → 'sourceairport'."""
    return "".join(words_of(name))


def table_stems(name: str) -> set[str]:
    """Ways a column may spell a table: customers → {customers, customer}; ref_colors → {color, ...}."""
    words = words_of(name)
    if not words:
        return set()
    stems = {"".join(words), "".join([*words[:-1], singular(words[-1])])}
    if len(words) > 1 and words[0] in ("ref", "tbl", "t", "dim", "fact", "lkp", "lu"):
        rest = words[1:]
        stems |= {"".join(rest), "".join([*rest[:-1], singular(rest[-1])])}
    return {s for s in stems if s}


def is_key_like(name: str) -> bool:
    words = words_of(name)
    return bool(words) and (words[-1] in KEY_WORDS or name.lower().endswith("id"))


def is_generic(name: str) -> bool:
    return flat_name(name) in GENERIC_NAMES or len(flat_name(name)) <= 2


def key_suffix(flat: str) -> str | None:
    """The key word a flat name ends with ('msid' → 'id'), when something comes before it."""
    return next(
        (w for w in sorted(KEY_WORDS, key=len, reverse=True) if flat.endswith(w) and len(flat) > len(w)), None
    )
