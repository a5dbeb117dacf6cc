"""Definitions checked against the schema when they are loaded, each with a message a person can fix.

A definition that does not fit the database would mislead every answer that uses it, so each is
turned into the SELECT it stands for and read with sqlglot against the catalog:

- every table is a table of the database or a definition named like one; every column exists
  (sqlglot's qualify, which knows each table's columns and each definition's outputs);
- an entity or a metric at a grain does not take the name of a real table (it could never be
  selected: the database's table would win);
- a metric's `sql` is an aggregate (SUM, COUNT, AVG, MIN, MAX ...), with no window; its grain
  columns are columns of its table; a ratio's numerator and denominator are metrics;
- a filter is a condition, not an aggregate;
- a relationship's ON condition compares columns of both sides, and meets a key of `to` (its
  primary key or a unique key): otherwise one row would meet several and every sum over the
  join would count twice — "fans out";
- the SELECT passes the guard with the database's rules (`policy`), so a definition can never
  read a denied column or write.

`check` returns the problems (empty when all is well); `checked` raises the first as a
DefinitionError. Messages name where the definition came from and the definition itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import sqlglot
from sqlglot import exp
from sqlglot.optimizer.qualify import qualify

from core.catalog import Catalog
from core.definitions.expand import ExpansionError, definition_sql, expand
from core.definitions.load import DefinitionError
from core.definitions.model import Definition, Definitions
from core.guard import GuardPolicy
from core.guard import check as guard_check


def check(definitions: Definitions, catalog: Catalog, policy: GuardPolicy | None = None) -> list[str]:
    """Every problem, one line each ("config/x.yaml: metric 'loss ratio': ...")."""
    real = {t.name.lower() for t in catalog.tables}
    schema: dict[str, dict[str, str]] = {
        t.name.lower(): {c.name.lower(): "TEXT" for c in t.columns} for t in catalog.tables
    }
    problems: list[str] = []
    # definitions named like tables get their output columns first, in dependency order
    for d in _table_like_in_order(definitions, real):
        label = _label(d)
        if d.ref in real:
            problems.append(f"{label}: has the name of a table ({d.ref}); give it another name")
            continue
        try:
            schema[d.ref] = {c: "TEXT" for c in _outputs(d, definitions, real, schema, catalog.dialect)}
        except (DefinitionError, ExpansionError, sqlglot.errors.SqlglotError, ValueError) as exc:
            problems.append(f"{label}: {_first_line(exc)}")
    for d in definitions:
        if d.kind == "instruction":
            continue
        try:
            sql = _probe(d, definitions)
            _read(sql, schema, catalog.dialect)
            _kind_rules(d, definitions, catalog, schema)
            if policy is not None:
                expanded, _ = expand(sql, definitions, real, catalog.dialect)
                verdict = guard_check(expanded, catalog.dialect, policy)
                if not verdict.allowed:
                    raise DefinitionError(f"would be refused: it {verdict.reason}")
        except (DefinitionError, ExpansionError, sqlglot.errors.SqlglotError, ValueError) as exc:
            problems.append(f"{_label(d)}: {_first_line(exc)}")
    return list(dict.fromkeys(problems))


def checked(definitions: Definitions, catalog: Catalog, policy: GuardPolicy | None = None) -> Definitions:
    problems = check(definitions, catalog, policy)
    if problems:
        raise DefinitionError(problems[0] + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""))
    return definitions


def _label(d: Definition) -> str:
    where = d.provenance.origin or d.provenance.source
    return f"{where}: {d.kind} '{d.name}'"


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__


def _table_like_in_order(definitions: Definitions, real: set[str]) -> list[Definition]:
    out: list[Definition] = []
    pending = [d for d in definitions if d.named_like_table]
    for _ in range(len(pending) + 1):
        progressed = False
        for d in list(pending):
            needs = {t.name.lower() for t in _tables_of(definition_sql(d))} - real - {d.ref}
            if needs <= {o.ref for o in out} | (needs - {p.ref for p in pending}):
                out.append(d)
                pending.remove(d)
                progressed = True
        if not progressed:
            break
    return out + pending


def _tables_of(sql: str) -> list[exp.Table]:
    try:
        return list(sqlglot.parse_one(sql).find_all(exp.Table))
    except sqlglot.errors.SqlglotError:
        return []


def _probe(d: Definition, definitions: Definitions) -> str:
    """A SELECT that uses the definition the way a query would."""
    if d.kind == "entity" or (d.kind == "metric" and d.grain and not d.ratio):
        return definition_sql(d)
    if d.kind == "metric" and d.ratio:
        for part in (d.numerator, d.denominator):
            found = definitions.by_ref(part)
            if found is None or found.kind != "metric":
                raise DefinitionError(f"names '{part}', which is not a defined metric")
        return "SELECT 1"
    if d.kind == "metric":
        where = f" WHERE {d.filter}" if d.filter else ""
        return f"SELECT {d.sql} AS {d.ref} FROM {d.table}{where}"
    if d.kind == "filter":
        return f"SELECT 1 FROM {d.table} WHERE {d.sql}"
    if d.kind == "relationship":
        via = "".join(f" CROSS JOIN {t}" for t in d.via)
        return f"SELECT 1 FROM {d.table}{via} JOIN {d.to} ON {d.sql}"
    return "SELECT 1"


def _read(sql: str, schema: Mapping[str, Mapping[str, str]], dialect: str) -> exp.Expr:
    tree = sqlglot.parse_one(sql, read=dialect)
    for table in tree.find_all(exp.Table):
        name = table.name.lower()
        ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
        if name not in schema and name not in ctes and not isinstance(table.this, exp.Func):
            raise DefinitionError(f"unknown table {table.name}")
    try:
        return qualify(tree, schema=dict[str, object](schema), dialect=dialect, validate_qualify_columns=True)
    except sqlglot.errors.OptimizeError as exc:
        raise DefinitionError(_column_problem(str(exc))) from exc


def _column_problem(message: str) -> str:
    text = message.strip().splitlines()[0]
    if "Column" in text and "could not be resolved" in text:
        return "unknown column " + text.split("'")[1] if "'" in text else text
    return text


def _outputs(
    d: Definition,
    definitions: Definitions,
    real: set[str],
    schema: Mapping[str, Mapping[str, str]],
    dialect: str,
) -> list[str]:
    tree = _read(definition_sql(d), schema, dialect)
    query = tree
    while isinstance(query, exp.SetOperation):
        query = query.this
    if not isinstance(query, exp.Select):
        raise DefinitionError("is not a SELECT")
    names = [p.alias_or_name.lower() for p in query.expressions]
    if len(set(names)) != len(names):
        raise DefinitionError(f"has two output columns of one name ({', '.join(names)})")
    return names


def _kind_rules(
    d: Definition, definitions: Definitions, catalog: Catalog, schema: Mapping[str, Mapping[str, str]]
) -> None:
    if d.kind == "metric" and not d.ratio:
        expression = sqlglot.parse_one(d.sql, read=catalog.dialect)
        if not isinstance(expression, exp.AggFunc) and not expression.find(exp.AggFunc):
            raise DefinitionError(
                f"is not an aggregate ({d.sql}); write it as SUM(...), COUNT(...), AVG(...)"
            )
        if expression.find(exp.Window):
            raise DefinitionError("uses a window function; a metric is a plain aggregate")
        columns = schema.get(d.table.lower(), {})
        for g in d.grain:
            if g.split(".")[-1].lower() not in columns:
                raise DefinitionError(f"grain column {g} is not a column of {d.table}")
    elif d.kind == "filter":
        condition = sqlglot.parse_one(d.sql, read=catalog.dialect)
        if condition.find(exp.AggFunc):
            raise DefinitionError("is an aggregate; a filter is a condition on rows")
    elif d.kind == "relationship":
        _no_fan_out(d, definitions, catalog)


def _no_fan_out(d: Definition, definitions: Definitions, catalog: Catalog) -> None:
    """The ON condition must meet a whole key of `to`, or each row would meet several."""
    keys = _keys_of(d.to, definitions, catalog)
    if keys is None:
        return  # an entity written as SQL: its key is not known
    condition = sqlglot.parse_one(d.sql, read=catalog.dialect)
    target = d.to.lower()
    met = {
        side.name.lower()
        for eq in condition.find_all(exp.EQ)
        for side in (eq.left, eq.right)
        if isinstance(side, exp.Column) and side.table.lower() == target
    }
    if not any(key and set(key) <= met for key in keys):
        shown = " or ".join("(" + ", ".join(k) + ")" for k in keys if k) or "none"
        raise DefinitionError(
            f"joins {d.to} on {', '.join(sorted(met)) or 'no column of it'}, not on a key of it"
            f" (keys: {shown}): one {d.table} row would meet several {d.to} rows (a fan-out)"
        )


def _keys_of(name: str, definitions: Definitions, catalog: Catalog) -> Sequence[tuple[str, ...]] | None:
    table = catalog.table(name)
    if table is None:
        entity = definitions.by_ref(name)
        if entity is None or entity.kind != "entity" or entity.sql:
            return None
        table = catalog.table(entity.table)
        if table is None:
            return None
    keys = [tuple(k.lower() for k in table.primary_key)] if table.primary_key else []
    keys.extend(tuple(c.lower() for c in u) for u in table.unique)
    return keys
