"""Naming conventions: the words of an identifier, singular forms, and what looks like a key.

Most databases declare few foreign keys; their column names say the rest (`restaurant_id`,
`SourceAirport`, `paperId`). Names are compared as flat lower-case words, so `created_at`,
`CreatedAt` and `createdat` are one name.
"""

from __future__ import annotations

import re
from functools import lru_cache

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
    return list(_words(name))


@lru_cache(maxsize=65536)
def _words(name: str) -> tuple[str, ...]:
    """Cached: inference asks for the words of the same few thousand names over and over."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", spaced)
    return tuple(w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w)


def flat_name(name: str) -> str:
    """'SourceAirport', 'source_airport' → 'sourceairport'."""
    return "".join(words_of(name))


def table_stems(name: str) -> set[str]:
    """Ways a column may spell a table: customers → {customers, customer}; ref_colors → {color, ...}."""
    words = words_of(name)
    if not words:
        return set()
    stems = {"".join(words)} | {"".join([*words[:-1], s]) for s in _singulars(words[-1])}
    if len(words) > 1 and words[0] in _TABLE_PREFIXES:
        rest = words[1:]
        stems |= {"".join(rest)} | {"".join([*rest[:-1], s]) for s in _singulars(rest[-1])}
    return {s for s in stems if s}


def _singulars(word: str) -> set[str]:
    """The singular, and for an '-es' plural the word without it too (campuses: campus, not campuse)."""
    out = {singular(word)}
    if len(word) > 4 and word.endswith("es"):
        out.add(word[:-2])
    return out


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


# How plainly a key column's name names a table (`names_table`), strongest first.
SPELLED, ABBREVIATED, INITIAL, UNNAMED = 3, 2, 1, 0


def key_head(name: str) -> list[str]:
    """The words a key column's name puts before its key word, role numbers dropped:
    conference_id → [conference], cid → [c], Club_ID_1 → [club], prod_type_id → [prod, type];
    [] for a bare key word (id, code)."""
    words = [w for w in (re.sub(r"\d+", "", w) for w in words_of(name)) if w]
    if len(words) > 1 and words[-1] in KEY_WORDS:
        return words[:-1]
    if len(words) == 1:
        if words[0] in KEY_WORDS:
            return []
        suffix = key_suffix(words[0])
        return [words[0][: -len(suffix)]] if suffix else words
    return words


def names_table(column: str, table: str) -> int:
    """How plainly the key column `column` names `table`: SPELLED (conference_id, customer_id →
    customers), ABBREVIATED (conf_id, cust_id, prod_type_id → product_types, dc_id →
    domain_conference, or the table's head noun: card_id → customers_cards), INITIAL (cid →
    conference, msid → movies) or UNNAMED.

    This is how the owner of a key is told from the tables that merely repeat it: in a small
    sample domain_conference.cid is as unique as conference.cid, but only one of them is named.
    """
    head = key_head(column)
    if not head:
        return UNNAMED
    flat = "".join(head)
    stems = table_stems(table)
    if flat in stems:
        return SPELLED
    words = words_of(table)
    if len(words) > 1 and words[0] in _TABLE_PREFIXES:
        words = words[1:]
    if not words:
        return UNNAMED
    words = [*words[:-1], singular(words[-1])]
    if len(words) > 1 and flat in _singulars(words[-1]) | {words[-1]}:
        return ABBREVIATED  # the table's head noun: card_id in customers_cards
    if len(flat) >= 2:
        if len(head) == len(words) and all(w.startswith(h) for h, w in zip(head, words, strict=True)):
            return ABBREVIATED
        if len(words) > 1 and flat == "".join(w[0] for w in words):
            return ABBREVIATED
        whole = "".join(words_of(table))
        if len(flat) <= MAX_LETTERS and flat[0] == whole[0] and _in_order(flat, whole):
            return INITIAL
    elif len(words) == 1 and words[0].startswith(flat):
        return INITIAL
    return UNNAMED


def mentions(column: str, table: str) -> int:
    """How plainly `column` names `table` anywhere in its name: a role before the table's name
    (cited_paper_id names paper) spells it out too."""
    flat = flat_name(column)
    if any(s in flat for s in table_stems(table) if len(s) >= 3):
        return SPELLED
    return names_table(column, table)


_TABLE_PREFIXES = ("ref", "tbl", "t", "dim", "fact", "lkp", "lu")
MAX_LETTERS = 3  # an abbreviation by scattered letters (msid → movies) is short; longer is a word


def _in_order(short: str, long: str) -> bool:
    """Are the letters of `short` in `long`, in order (msid in movies)?"""
    it = iter(long)
    return all(ch in it for ch in short)
