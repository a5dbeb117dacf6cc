"""Values a database would build whole before any cap applies: their size must be known and small.

Why: the executor caps what it fetches (rows, bytes, one cell), and the statement timeout stops a
query between rows — but PostgreSQL builds `array_fill(1, ARRAY[1e8])::text` or
`repeat('x', 1e9)` as one value inside one function call, which neither cap sees and which ran
11.8 s past a 5 s timeout. So the functions that build a value (or a series of rows in the
output) from a size argument are allowed only when that size is a plain number within
`GuardPolicy.value_cap`:

- `repeat(s, n)`, `lpad(s, n[, f])`, `rpad(s, n[, f])`, `space(n)`: n ≤ value_cap;
- `array_fill(v, ARRAY[n, m, ...])`: n × m × ... ≤ value_cap;
- `generate_series(a, b[, step])` in the output (a set-returning function in SELECT): the number
  of rows ≤ value_cap. In FROM it yields rows like any table, which the timeout and the row cap
  stop, so date spines over a column's range stay possible there.

A size computed from columns or expressions cannot be bounded before the query runs: denied,
with a reason that says to write the size as a number.
"""

from __future__ import annotations

from sqlglot import exp

from core.guard.verdict import Deny

_PADS = ("lpad", "rpad")


def check_sizes(root: exp.Expr, cap: int | None) -> None:
    if cap is None:
        return
    for node in root.walk():
        if isinstance(node, exp.Repeat):
            _bounded(node.args.get("times"), cap, "REPEAT")
        elif isinstance(node, exp.Pad):
            _bounded(node.args.get("expression"), cap, "LPAD" if node.args.get("is_left") else "RPAD")
        elif isinstance(node, exp.Anonymous) and node.name.lower() in (*_PADS, "space", "repeat"):
            size = node.expressions[0] if node.name.lower() == "space" else _arg(node, 1)
            _bounded(size, cap, node.name.upper())
        elif isinstance(node, exp.Anonymous) and node.name.lower() == "array_fill":
            dims = _arg(node, 1)
            parts = dims.expressions if isinstance(dims, exp.Array) else [dims]
            total = 1
            for part in parts:
                total *= _bounded(part, cap, "ARRAY_FILL")
            if total > cap:
                raise Deny(f"builds an array of {total:,} elements with ARRAY_FILL (at most {cap:,})")
        elif isinstance(node, exp.ExplodingGenerateSeries | exp.GenerateSeries) and _in_output(node):
            start = _number(node.args.get("start"))
            end = _number(node.args.get("end"))
            step = _number(node.args.get("step")) if node.args.get("step") is not None else 1
            if start is None or end is None or step is None or step == 0:
                raise Deny(
                    "calls GENERATE_SERIES in the output with bounds that are not plain numbers;"
                    " write them as numbers, or use it in FROM"
                )
            rows = max(0, (end - start) // step + 1)
            if rows > cap:
                raise Deny(f"generates {rows:,.0f} rows with GENERATE_SERIES (at most {cap:,})")


def _arg(node: exp.Anonymous, index: int) -> exp.Expr | None:
    return node.expressions[index] if len(node.expressions) > index else None


def _bounded(size: exp.Expr | None, cap: int, function: str) -> int:
    value = _number(size)
    if value is None:
        raise Deny(f"calls {function} with a size that is not a plain number; write the size as a number")
    if value > cap:
        raise Deny(f"builds a value of {value:,.0f} with {function} (at most {cap:,})")
    return max(0, int(value))


def _number(node: exp.Expr | None) -> float | None:
    negative = False
    while isinstance(node, exp.Paren | exp.Neg | exp.Cast):
        negative ^= isinstance(node, exp.Neg)
        node = node.this
    if isinstance(node, exp.Literal) and not node.is_string:
        try:
            value = float(node.this)
        except ValueError:
            return None
        return -value if negative else value
    return None


def _in_output(node: exp.Expr) -> bool:
    """Is the node part of a SELECT's output list (not a FROM item)?"""
    current = node
    while current.parent is not None:
        if isinstance(current.parent, exp.Select):
            return current.arg_key == "expressions"
        if isinstance(current.parent, exp.Table | exp.From | exp.Join | exp.Lateral):
            return False
        current = current.parent
    return False
