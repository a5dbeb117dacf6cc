"""Names in the SQL a view produces: quoted only where a dialect needs it, aliases safe everywhere."""

from __future__ import annotations

import re

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect, NormalizationStrategy

_SAFE = re.compile(r"^[a-z_][a-z0-9_]*$")
# Words that must be quoted as identifiers in at least one supported dialect.
_RESERVED_WORDS = """
    all alter analyse analyze and any array as asc asymmetric authorization between binary both by
    case cast check collate column condition constraint create cross current_date current_role
    current_time current_timestamp current_user database databases default deferrable delete desc
    distinct do drop else end except exists false fetch for foreign freeze from full function grant
    group groups having ilike in index initially inner insert intersect interval into is isnull join
    key keys lateral leading left like limit localtime localtimestamp match natural not notnull null
    of offset on only or order outer over overlaps partition placing primary range rank read
    references returning right row rows schema select session_user show similar some symmetric table
    tablesample then to trailing true union unique update usage user using values variadic verbose
    when where window with
"""
RESERVED = frozenset(_RESERVED_WORDS.split())


def _needs_quotes(name: str, dialect: str | None) -> bool:
    low = name.lower()
    if low in RESERVED or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
        return True
    if name == low:
        return False
    if dialect is None:
        return True
    strategy = Dialect.get_or_raise(dialect).NORMALIZATION_STRATEGY
    if strategy == NormalizationStrategy.LOWERCASE:
        return True
    if strategy == NormalizationStrategy.UPPERCASE:
        return name != name.upper()
    return False


def identifier(name: str, dialect: str | None, alias: bool = False) -> exp.Identifier:
    """A table or column name keeps its case, so it is quoted where the dialect would fold it;
    an alias is ours (see `safe_name`), quoted only when it is reserved or unusual."""
    quoted = _needs_quotes(name, dialect) if not alias else not _SAFE.match(name) or name in RESERVED
    return exp.Identifier(this=name, quoted=quoted)


def table_expr(table: str, schema: str | None, alias: str, dialect: str | None) -> exp.Table:
    node = exp.Table(this=identifier(table, dialect), db=identifier(schema, dialect) if schema else None)
    if alias != table:
        node.set("alias", exp.TableAlias(this=identifier(alias, dialect, alias=True)))
    return node


def safe_name(text: str) -> str:
    """A lower-case identifier (alias or view column name); reserved words are quoted where used."""
    name = re.sub(r"[^a-z0-9_]+", "_", text.lower()).strip("_") or "t"
    return "t_" + name if name[0].isdigit() else name
