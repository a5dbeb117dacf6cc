"""When two query results say the same thing: one comparison for the engine and the benchmark.

The engine asks it of its own candidate queries (core/pipeline.py: two candidates that agree
are answered without another LLM call); the benchmark asks it of a query and the gold query
(core/bench/ask.py). Both mean the same by "the same result": the same multiset of rows — in
order only when asked to respect an order, where rows that tie on the ordering keys may come in
any order — with the columns matched up whatever their order and names, and values compared
with 10 significant digits, so 0.30000000000000004 equals 0.3 and 2 equals 2.0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from decimal import Decimal
from typing import Any

Row = tuple[Any, ...]


def norm(v: Any) -> Any:
    """A value as the comparison sees it: numbers to 10 significant digits, dates as ISO text."""
    if v is None:
        return None
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, int | float | Decimal):
        f = float(v)
        return float(f"{f:.10g}")
    if isinstance(v, bytes | bytearray | memoryview):
        return bytes(v).hex()
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return str(v)


def same_rows(
    got: Sequence[Sequence[Any]],
    want: Sequence[Sequence[Any]],
    *,
    ordered: bool = False,
    tie_keys: Sequence[int] | None = None,
) -> bool:
    """Do `got` and `want` hold the same rows, whatever the order and names of their columns?

    `ordered`: `want` is in a meaningful order that `got` must follow; `tie_keys` are the
    columns of `want` that order it (rows equal on them may come in any order); None when they
    are not known, and then the order must match exactly.
    """
    w = [tuple(norm(v) for v in r) for r in want]
    g = [tuple(norm(v) for v in r) for r in got]
    if len(w) != len(g):
        return False
    if not w:
        return True
    width = len(w[0])
    if any(len(r) != width for r in g):
        return False
    sig_w = [Counter(r[i] for r in w) for i in range(width)]
    sig_g = [Counter(r[i] for r in g) for i in range(width)]
    options = [[j for j in range(width) if sig_g[j] == sig_w[i]] for i in range(width)]
    if any(not o for o in options):
        return False
    for perm in _assignments(options, 0, frozenset()):
        rows = [tuple(r[j] for j in perm) for r in g]
        if _rows_equal(rows, w, ordered, tie_keys):
            return True
    return False


def _assignments(options: list[list[int]], i: int, used: frozenset[int]) -> Iterator[list[int]]:
    """Each way to give every column of `want` a distinct column of `got` with the same values."""
    if i == len(options):
        yield []
        return
    for j in options[i]:
        if j not in used:
            for rest in _assignments(options, i + 1, used | {j}):
                yield [j, *rest]


def _rows_equal(g: list[Row], w: list[Row], ordered: bool, tie_keys: Sequence[int] | None) -> bool:
    if not ordered:
        return Counter(g) == Counter(w)
    if tie_keys is None:
        return g == w
    start = 0
    for end in range(1, len(w) + 1):
        if end == len(w) or tuple(w[end][k] for k in tie_keys) != tuple(w[start][k] for k in tie_keys):
            if Counter(g[start:end]) != Counter(w[start:end]):
                return False
            start = end
    return True
