"""What a column can hold, for inference hygiene: dates, flags, amounts and free text are never keys.

A join inferred on `effective_date` matches every row written on the same day; one on a 0/1 flag,
an amount or a comment matches by coincidence. Declared keys are trusted as they are, but an
*inferred* edge must never use such a column on either side. The class comes from the declared
kind and type first, then the column's name, then (when profiled) its sampled values — SQLite
stores dates as text and flags as integers, so the type alone is not enough.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Literal

from core.catalog import Column
from core.graph.names import KEY_WORDS, is_key_like, words_of

NonKey = Literal["datetime", "flag", "amount", "long text"]

DATE_WORDS = frozenset({"date", "time", "timestamp", "datetime", "dt", "dob", "birthday"})
FLAG_PREFIXES = frozenset({"is", "has", "can", "was", "should", "allow", "allows"})
FLAG_WORDS = frozenset({"flag", "yn", "ind", "indicator", "bool", "boolean"})
_AMOUNT = """
    amount amt price cost total balance salary fee fees rate revenue budget income expense expenses
    premium payment payments tax discount charge charges wage wages profit loss sum value
"""
AMOUNT_WORDS = frozenset(_AMOUNT.split())
_TEXT = "description desc comment comments note notes remark remarks text body details summary abstract"
TEXT_WORDS = frozenset(_TEXT.split())
FLAG_VALUES = (
    frozenset({"0", "1"}),
    frozenset({"y", "n"}),
    frozenset({"t", "f"}),
    frozenset({"true", "false"}),
    frozenset({"yes", "no"}),
)
LONG_TEXT_AVG = 64  # average characters above which a text column is prose, not a code or a name
LONG_TEXT_MAX = 200
_DATE_VALUE = re.compile(
    r"^(\d{4}-\d{1,2}-\d{1,2}([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?)?|\d{1,2}/\d{1,2}/\d{2,4}|\d{1,2}:\d{2}(:\d{2})?)"
    r"(\s*([AaPp][Mm]|Z|[+-]\d{2}:?\d{2}))?$"
)
_DECIMAL_TYPE = re.compile(r"(real|floa|doub|money|dec|numeric)\w*\s*(\(\s*\d+\s*(,\s*(\d+)\s*)?\))?", re.I)


def non_key_class(column: Column, sample: Collection[str] | None = None) -> NonKey | None:
    """Why `column` can never be an inferred join key, or None when it could be one."""
    kind = column.kind
    if kind in ("date", "datetime"):
        return "datetime"
    if kind == "boolean":
        return "flag"
    words = words_of(column.name)
    type_name = column.type.lower()
    if any(w in type_name for w in ("date", "time")) and "int" not in type_name:
        return "datetime"
    if words and words[-1] in DATE_WORDS:
        return "datetime"
    if words and ((words[0] in FLAG_PREFIXES and len(words) > 1) or words[-1] in FLAG_WORDS):
        return "flag"
    # 'msid' and 'paperId' look like keys; 'amount_paid' does not, though it ends in "id"
    key_like = is_key_like(column.name) and (len(words) == 1 or words[-1] in KEY_WORDS)
    if kind in ("number", "integer") and not key_like and words and words[-1] in AMOUNT_WORDS:
        return "amount"
    if kind == "number" and _decimal_type(type_name) and not key_like and not column.primary_key:
        return "amount"
    if kind == "text" and not key_like and words and words[-1] in TEXT_WORDS:
        return "long text"
    values = [v for v in (sample or ()) if v != ""]
    if len(values) >= 3:
        if sum(1 for v in values if _DATE_VALUE.match(v)) >= 0.8 * len(values):
            return "datetime"
        lowered = frozenset(v.lower() for v in values)
        if len(lowered) == 2 and lowered in FLAG_VALUES and not (key_like and lowered == FLAG_VALUES[0]):
            return "flag"
        fractional = sum(1 for v in values if _fractional(v))
        if kind in ("number", "other") and not column.primary_key and fractional >= 0.2 * len(values):
            return "amount"
        if kind in ("text", "other"):
            lengths = [len(v) for v in values]
            if sum(lengths) / len(lengths) > LONG_TEXT_AVG or max(lengths) > LONG_TEXT_MAX:
                return "long text"
    return None


def _decimal_type(type_name: str) -> bool:
    """REAL, FLOAT, DOUBLE, MONEY or DECIMAL/NUMERIC with a scale: a measured quantity, not a key.

    NUMERIC without a scale (and SQLite's `number`) often holds ids, so it is left to the values.
    """
    m = _DECIMAL_TYPE.search(type_name)
    if m is None:
        return False
    word = m.group(1)
    if word in ("dec", "numeric"):
        return bool(m.group(4)) and int(m.group(4)) > 0
    return True


def _fractional(value: str) -> bool:
    try:
        f = float(value)
    except ValueError:
        return False
    return f != int(f) if abs(f) < 1e15 else False
