"""Putting a new question's values into a verified query: literal nodes replaced in the parsed tree.

Never string formatting: the SQL is parsed with sqlglot, each parameter's literals are found by
their place in the tree, checked to still read as they did when the query was verified, and
replaced by new literal nodes, which sqlglot quotes for the dialect ("O'Brien" is 'O''Brien').
The guard then checks the result like any other SQL (core/askbase.py runs it through `_rerun`).
When no value changes, the verified SQL is returned as it was written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from core.verified.literals import literal_nodes, months_between, replace_date, shift, value_form, write_value
from core.verified.query import Param


class SubstitutionError(ValueError):
    """The verified SQL no longer has the literals its parameters name."""


@dataclass(frozen=True)
class Binding:
    """A parameter of a verified query, and what a new question gives it."""

    param: Param
    text: str  # the new question's words
    value: str = ""  # kind "value": the stored value they name
    when: tuple[int, ...] = ()  # other kinds
    score: float = 1.0  # how surely the words name the value

    @property
    def changed(self) -> bool:
        if self.param.kind == "value":
            return self.value != self.param.value
        return self.when != self.param.when

    @property
    def shown(self) -> str:
        return self.value if self.param.kind == "value" else self.text


def substitute(sql: str, dialect: str, bindings: Sequence[Binding]) -> str:
    if not any(b.changed for b in bindings):
        return sql
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except SqlglotError as exc:
        raise SubstitutionError(f"the verified SQL could not be read: {exc}") from exc
    nodes = literal_nodes(tree)
    for b in bindings:
        p = b.param
        for index, original in zip(p.literals, p.originals, strict=True):
            if index >= len(nodes) or str(nodes[index].this) != original:
                raise SubstitutionError(f"the literal {original!r} of '{p.name}' is not where it was")
    for b in bindings:
        if not b.changed:
            continue
        for index, original in zip(b.param.literals, b.param.originals, strict=True):
            node = nodes[index]
            text = new_text(b, original)
            node.replace(exp.Literal.string(text) if node.is_string else exp.Literal.number(text))
    return tree.sql(dialect=dialect)


def new_text(b: Binding, original: str) -> str:
    p = b.param
    if p.kind == "value":
        form = value_form(original, p.value)
        if form is None:
            raise SubstitutionError(f"{original!r} does not write {p.value!r}")
        return write_value(form, b.value)
    if p.kind == "number":
        return str(b.when[0])
    if p.kind == "date":
        return replace_date(original, (b.when[0], b.when[1], b.when[2]))
    return shift(original, months_between(p.kind, p.when, b.when))
