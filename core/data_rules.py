"""The rules a database's data is read under: its deny and mask settings, followed through views.

`rules_for(db)` is what the guard (core/run.py) and the executor's masks (`mask_plan`) apply; the
settings alone (`DataRules.of(db.config)`) would miss what views show.

Why views: the guard and the executor judge a query by the tables it names, and a view is a name of
its own — `SELECT tid FROM customer_view` read a denied `customers.tax_id` in full on PostgreSQL
and MariaDB, where the view runs with its owner's rights (SQLite's authorizer sees through views
by itself). So each view's definition, reflected into the catalog (`Catalog.views`), goes through
the same output lineage as masking (core/masking.py), and the database's rules are extended:

- a view column computed from a denied column (or any column of a denied table) is denied;
- a view column computed from a masked column is masked (shown masked or counted, nothing else);
- a view over views is followed to a fixed point;
- a view whose definition cannot be read or followed is denied whole when it might read a denied
  table or column, and masked whole when it might read a masked one. Fewer rights, never more.

Filtering inside a view is the view owner's business (a view that keeps only some rows is how a
database often grants a subset): only what the view shows is judged.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import sqlglot
from sqlglot import exp

from core.access import DataRules
from core.catalog import Catalog, DatabaseView
from core.database import Database
from core.guard import GuardPolicy
from core.masking import NOTHING, MaskPlan, plan_masks


def rules_for(db: Database) -> DataRules:
    """The database's deny and mask rules, extended to the views that show those columns."""
    rules = DataRules.of(db.config)
    if not rules.any:
        return rules
    catalog = db.catalog
    if not catalog.views:
        return rules
    return catalog.memo(("view_rules", rules), lambda: through_views(rules, catalog))


def rules_policy(db: Database) -> GuardPolicy:
    """The guard's policy of these rules alone (no LIMIT, no size cap): what any SQL — a query, a
    definition — may read here. core/run.py adds the engine's caps for what runs."""
    catalog = db.catalog
    rules = rules_for(db)
    return GuardPolicy(
        limit=None,
        deny_tables=rules.deny_tables,
        deny_columns=rules.deny_columns,
        mask_columns=rules.mask_columns,
        value_cap=None,
        # the columns in order: the guard resolves column lists (`AS x(a, b)`) with them
        table_columns=catalog.memo("guard_table_columns", lambda: schema_of(catalog)),
    )


def mask_plan(db: Database, sql: str) -> MaskPlan:
    """Which output columns of `sql` show masked values on `db` (NOTHING when none is masked)."""
    rules = DataRules.of(db.config)
    if not rules.mask_columns:
        return NOTHING
    try:
        catalog = db.catalog
        rules = rules_for(db)
    except Exception as exc:  # no catalog, no lineage: mask
        return MaskPlan(everything=True, reason=f"no catalog ({type(exc).__name__})")
    return plan_masks(sql, catalog.dialect, rules.mask_columns, schema_of(catalog))


def schema_of(catalog: Catalog) -> dict[str, tuple[str, ...]]:
    """{table or view: its columns in order}, lower-case: what a query over either can name."""
    out = {t.name.lower(): tuple(c.name.lower() for c in t.columns) for t in catalog.tables}
    for view in catalog.views:
        out.setdefault(view.name.lower(), tuple(c.lower() for c in view.columns))
    return out


def through_views(rules: DataRules, catalog: Catalog) -> DataRules:
    schema = schema_of(catalog)
    denied_tables = set(rules.deny_tables)
    denied = set(rules.deny_columns) | {
        f"{table}.{column}" for table in denied_tables for column in schema.get(table.rsplit(".", 1)[-1], ())
    }
    masked = set(rules.mask_columns)
    for _ in range(len(catalog.views) + 1):  # each round settles at least one more level of views
        before = (len(denied_tables), len(denied), len(masked))
        for view in catalog.views:
            name = view.name.lower()
            if name in denied_tables:
                continue
            shows_denied = _shown(view, catalog.dialect, denied, schema)
            if shows_denied is None:
                denied_tables.add(name)
                denied.update(f"{name}.{c.lower()}" for c in view.columns)
                continue
            denied.update(f"{name}.{c}" for c in shows_denied)
            shows_masked = _shown(view, catalog.dialect, masked, schema)
            columns = [c.lower() for c in view.columns] if shows_masked is None else shows_masked
            masked.update(f"{name}.{c}" for c in columns)
        if (len(denied_tables), len(denied), len(masked)) == before:
            break
    return DataRules(
        deny_tables=frozenset(denied_tables), deny_columns=frozenset(denied), mask_columns=frozenset(masked)
    )


def _shown(
    view: DatabaseView, dialect: str, guarded: set[str], schema: Mapping[str, tuple[str, ...]]
) -> list[str] | None:
    """The view's columns that show a `guarded` column; None: cannot tell, and it might."""
    if not guarded:
        return []
    tables = {key.rsplit(".", 1)[0].rsplit(".", 1)[-1] for key in guarded}
    query = _query_of(view.definition, dialect)
    if query is None:
        return None if not view.definition or _names_any(view.definition, tables) else []
    plan = plan_masks(query.sql(dialect=dialect), dialect, guarded, schema)
    if plan.everything:
        return None
    if not plan.columns:
        return []
    if len(plan.columns) != len(view.columns):
        return None  # a column list we cannot line up with the SELECT's outputs
    return [c.lower() for c, shown in zip(view.columns, plan.columns, strict=True) if shown]


def _query_of(definition: str, dialect: str) -> exp.Query | None:
    """The view's SELECT, tables unqualified (MySQL reports `db`.`table`; rules name tables)."""
    if not definition.strip():
        return None
    try:
        tree = sqlglot.parse_one(definition.strip().rstrip(";"), read=dialect)
    except sqlglot.errors.SqlglotError:
        return None
    if isinstance(tree, exp.Create):
        tree = tree.expression
    if not isinstance(tree, exp.Query):
        return None
    for table in tree.find_all(exp.Table):
        table.set("db", None)
        table.set("catalog", None)
    for column in tree.find_all(exp.Column):  # `db`.`t`.`c` → `t`.`c`
        column.set("db", None)
        column.set("catalog", None)
    return tree


def _names_any(text: str, tables: set[str]) -> bool:
    words = set(re.findall(r"[a-z_][a-z0-9_$]*", text.lower()))
    return bool(words & tables)
