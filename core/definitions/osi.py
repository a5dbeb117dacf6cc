"""Definitions read from and written as Open Semantic Interchange (OSI, now Apache Ossie) YAML.

Why OSI: it is the format other tools (dbt, Snowflake, Salesforce/Tableau, ThoughtSpot, GoodData
...) agreed to exchange semantic models in, so definitions move between them and Askbase without
being typed again. The file (spec 0.1.1; 0.2's dataset-scoped metrics are read too):

    version: "0.1.1"
    semantic_model:
      - name: insurance
        ai_context: {instructions: "..."}            # → instructions, one per line
        datasets:                                     # a table, or an entity (`source` a query)
          - name: policy_amount
            source: policy_amount
            primary_key: [policy_amount_id]
            fields:                                   # a condition (or datatype Boolean) → filter
              - {name: premium, expression: {dialects: [{dialect: ANSI_SQL, expression: "amount_type = 'premium'"}]}, datatype: Boolean}
        relationships:                                # from (many) → to (one) on columns
          - {name: claim_policy, from: claim, to: policy, from_columns: [policy_id], to_columns: [policy_id]}
        metrics:                                      # an aggregate over one dataset's columns
          - {name: written_premium, expression: {dialects: [{dialect: ANSI_SQL, expression: "SUM(CASE WHEN policy_amount.amount_type = 'premium' THEN policy_amount.amount END)"}]}}

Reading maps that onto definitions (source 'osi', origin the file); what a definition cannot
say (a metric over two datasets, an expression only in MDX) is skipped with the reason.
Writing puts each definition where OSI has a place for it, in plain SQL other tools can read
(a metric's filter folded into its aggregate, its columns qualified by dataset), and keeps what
OSI has no field for — filter, grain, unit, format, values, scope, owner, a relationship through
other tables, scoped instructions — in a custom extension of vendor ASKBASE on the same element,
so `export → import` gives the same definitions back. A file with those extensions is read from
them; one without is read from OSI's own fields.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import sqlglot
import yaml
from sqlglot import exp

from core.catalog import Catalog
from core.definitions.dbt import fold, ratio_expression
from core.definitions.expand import definition_sql
from core.definitions.importing import Imported, Skipped
from core.definitions.load import DefinitionError
from core.definitions.model import Definition, Provenance, ref_of
from core.yaml_text import load_yaml

VERSION = "0.1.1"
VENDOR = "ASKBASE"
# sqlglot dialect → the OSI dialect its SQL is written in (the rest write ANSI_SQL)
OSI_DIALECTS = {"snowflake": "SNOWFLAKE", "databricks": "DATABRICKS", "bigquery": "BIGQUERY"}
SQL_DIALECTS = {
    "ANSI_SQL": None,
    "SNOWFLAKE": "snowflake",
    "DATABRICKS": "databricks",
    "BIGQUERY": "bigquery",
}
_QUERY = re.compile(r"^\s*\(?\s*(select|with)\b", re.IGNORECASE)


def is_osi(path: str | Path) -> bool:
    """Is the file an OSI document (a mapping with a `semantic_model` list)? Decided by content,
    so a database's `definitions:` setting may list OSI and Askbase YAML files alike."""
    try:
        data = load_yaml(Path(path).read_text())
    except (OSError, yaml.YAMLError):
        return False
    return isinstance(data, Mapping) and isinstance(data.get("semantic_model"), list)


def read(path: str | Path, dialect: str | None = None) -> Imported:
    """The definitions of an OSI file, in `dialect` (the database's SQL), and what was skipped."""
    try:
        data = load_yaml(Path(path).read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise DefinitionError(f"{path}: cannot read: {exc}") from exc
    return parse(data, str(path), dialect)


def load_file(path: str | Path, dialect: str | None = None) -> tuple[Definition, ...]:
    """What `core.definitions.declared` reads from an OSI file listed in `definitions:`."""
    return read(path, dialect).definitions


def parse(data: Any, where: str, dialect: str | None = None) -> Imported:
    if not isinstance(data, Mapping) or not isinstance(data.get("semantic_model"), list):
        raise DefinitionError(
            f"{where}: not an OSI document (expected `version` and a `semantic_model` list)"
        )
    out: list[Definition] = []
    skipped: list[Skipped] = []
    for model in data["semantic_model"]:
        if not isinstance(model, Mapping):
            raise DefinitionError(f"{where}: each semantic_model must be a mapping")
        reader = _Reader(model, where, dialect)
        out.extend(reader.read(skipped))
    return Imported(tuple(out), tuple(skipped))


# ---------------------------------------------------------------------------------------------
# reading


class _Reader:
    """One semantic model: its datasets give the names its fields, relationships and metrics use."""

    def __init__(self, model: Mapping[str, Any], where: str, dialect: str | None) -> None:
        self.model = model
        self.where = where
        self.dialect = dialect
        self.datasets = [d for d in model.get("datasets") or () if isinstance(d, Mapping)]
        self.target: dict[str, str] = {}  # dataset name → the table or entity ref it stands for
        self.fields: dict[tuple[str, str], exp.Expr] = {}  # (dataset, field) → its expression

    def read(self, skipped: list[Skipped]) -> list[Definition]:
        out: list[Definition] = []
        model_extension = _extension(self.model)
        for ds in self.datasets:
            out.extend(self._dataset(ds, skipped))
        for ds in self.datasets:
            for f in ds.get("fields") or ():
                out.extend(self._field(ds, f, skipped))
        for r in self.model.get("relationships") or ():
            out.extend(self._relationship(r, skipped))
        metrics: list[tuple[Mapping[str, Any] | None, Mapping[str, Any]]] = [
            (None, m) for m in self.model.get("metrics") or ()
        ]
        metrics += [(ds, m) for ds in self.datasets for m in ds.get("metrics") or ()]
        for owner, m in metrics:
            out.extend(self._metric(owner, m, skipped))
        if model_extension is not None:
            out.extend(self._exact(d) for d in model_extension.get("definitions") or ())
        else:
            out.extend(self._instructions(self.model.get("ai_context")))
        return out

    # --- each element ---------------------------------------------------------------------

    def _exact(self, data: Mapping[str, Any]) -> Definition:
        """A definition written by Askbase, from its ASKBASE extension."""
        try:
            d = Definition.from_json(dict(data))
        except (TypeError, ValueError) as exc:
            raise DefinitionError(f"{self.where}: unreadable {VENDOR} extension: {exc}") from exc
        return replace(
            d, id=None, status="active", provenance=replace(d.provenance, source="osi", origin=self.where)
        )

    def _dataset(self, ds: Mapping[str, Any], skipped: list[Skipped]) -> list[Definition]:
        name = str(ds.get("name") or "")
        source = str(ds.get("source") or "").strip()
        extension = _extension(ds)
        if extension is not None and extension.get("definition"):
            d = self._exact(extension["definition"])
            self.target[name] = d.ref if d.kind == "entity" else d.table or name
            return [d] if d.kind == "entity" else []
        if _QUERY.match(source):
            said = _said(name)
            self.target[name] = ref_of(said)
            return [self._native("entity", said, ds, sql=self._sql(source))]
        table = _last_part(source) or name
        self.target[name] = table
        if ref_of(name) == table.lower() or not table:
            return []
        return [self._native("entity", _said(name), ds, table=table)]

    def _field(self, ds: Mapping[str, Any], f: Mapping[str, Any], skipped: list[Skipped]) -> list[Definition]:
        dataset, name = str(ds.get("name") or ""), str(f.get("name") or "")
        extension = _extension(f)
        if extension is not None and extension.get("definition"):
            return [self._exact(extension["definition"])]
        found = self._expression(f.get("expression"))
        if found is None:
            return []
        try:
            node = sqlglot.parse_one(found[0], read=found[1])
        except sqlglot.errors.SqlglotError:
            return []
        self.fields[(dataset, name)] = node
        condition = isinstance(node, exp.Predicate | exp.Connector | exp.Not | exp.Boolean)
        if not condition and f.get("datatype") != "Boolean":
            return []
        return [
            self._native(
                "filter", _said(name), f, table=self.target.get(dataset, dataset), sql=self._out(node)
            )
        ]

    def _relationship(self, r: Mapping[str, Any], skipped: list[Skipped]) -> list[Definition]:
        extension = _extension(r)
        if extension is not None and extension.get("definition"):
            return [self._exact(extension["definition"])]
        name = str(r.get("name") or "")
        left, right = str(r.get("from") or ""), str(r.get("to") or "")
        froms, tos = list(r.get("from_columns") or ()), list(r.get("to_columns") or ())
        if left not in self.target or right not in self.target:
            skipped.append(
                Skipped(f"relationship '{name}'", f"joins {left} to {right}, not both datasets here")
            )
            return []
        if not froms or len(froms) != len(tos):
            skipped.append(Skipped(f"relationship '{name}'", "needs as many from_columns as to_columns"))
            return []
        table, to = self.target[left], self.target[right]
        on = " AND ".join(f"{to}.{t} = {table}.{f}" for f, t in zip(froms, tos, strict=True))
        return [self._native("relationship", _said(name), r, table=table, to=to, sql=on)]

    def _metric(
        self, ds: Mapping[str, Any] | None, m: Mapping[str, Any], skipped: list[Skipped]
    ) -> list[Definition]:
        extension = _extension(m)
        if extension is not None and extension.get("definition"):
            return [self._exact(extension["definition"])]
        name = str(m.get("name") or "")
        what = f"metric '{name}'"
        found = self._expression(m.get("expression"))
        if found is None:
            skipped.append(
                Skipped(what, "has no SQL expression (ANSI_SQL, SNOWFLAKE, DATABRICKS or BIGQUERY)")
            )
            return []
        text = found[0]
        try:
            node = sqlglot.parse_one(text, read=found[1])
        except sqlglot.errors.SqlglotError as exc:
            skipped.append(Skipped(what, f"cannot read its SQL: {str(exc).splitlines()[0]}"))
            return []
        if (
            isinstance(node, exp.Div)
            and isinstance(node.this, exp.Column)
            and isinstance(node.expression, exp.Column)
            and not node.this.table
            and not node.expression.table
        ):  # one metric over another, by name
            return [
                self._native(
                    "metric",
                    _said(name),
                    m,
                    numerator=_said(node.this.name),
                    denominator=_said(node.expression.name),
                )
            ]
        own = str(ds.get("name")) if ds is not None else None
        datasets = {c.table for c in _top_columns(node) if c.table}
        if own is not None:
            datasets.add(own)
        elif not datasets and len(self.datasets) == 1:
            datasets.add(str(self.datasets[0].get("name")))
        if len(datasets) != 1:
            reason = (
                f"spans datasets {', '.join(sorted(datasets))}; a definition's metric is over one table or entity"
                if datasets
                else "names no dataset"
            )
            skipped.append(Skipped(what, reason))
            return []
        dataset = datasets.pop()
        if dataset not in self.target:
            skipped.append(Skipped(what, f"is over {dataset}, which is not a dataset here"))
            return []
        for column in _top_columns(node):
            if column.table != dataset and column.table:
                continue
            field = self.fields.get((dataset, column.name)) if column.table else None
            column.set("table", None)
            if field is not None and not (isinstance(field, exp.Column) and field.name == column.name):
                column.replace(exp.Paren(this=field.copy()))
        if not node.find(exp.AggFunc):
            skipped.append(Skipped(what, f"is not an aggregate ({text})"))
            return []
        return [self._native("metric", _said(name), m, table=self.target[dataset], sql=self._out(node))]

    def _instructions(self, context: Any) -> list[Definition]:
        text = context.get("instructions") if isinstance(context, Mapping) else None
        lines = [re.sub(r"^\s*[-*•]\s*", "", line).strip() for line in str(text or "").splitlines()]
        return [
            Definition(
                kind="instruction",
                name=line[:60],
                text=line,
                provenance=Provenance(source="osi", origin=self.where),
            )
            for line in lines
            if line
        ]

    # --- helpers --------------------------------------------------------------------------

    def _native(self, kind: Any, name: str, element: Mapping[str, Any], **values: Any) -> Definition:
        context = element.get("ai_context")
        synonyms = context.get("synonyms") if isinstance(context, Mapping) else None
        return Definition(
            kind=kind,
            name=name,
            description=" ".join(str(element.get("description") or "").split()),
            synonyms=tuple(
                str(s) for s in synonyms or () if str(s).strip() and str(s).lower() != name.lower()
            ),
            provenance=Provenance(source="osi", origin=self.where),
            **values,
        )

    def _expression(self, expression: Any) -> tuple[str, str | None] | None:
        """The element's SQL and the sqlglot dialect to read it in: the database's own OSI
        dialect, else ANSI_SQL (read as the database's SQL), else another SQL dialect (read as
        that one and written as the database's)."""
        dialects = (expression or {}).get("dialects") if isinstance(expression, Mapping) else None
        by: dict[str, str] = {}
        for item in dialects or ():
            if isinstance(item, Mapping) and item.get("dialect") in SQL_DIALECTS and item.get("expression"):
                by.setdefault(str(item["dialect"]), str(item["expression"]))
        own = OSI_DIALECTS.get(self.dialect or "", "ANSI_SQL")
        for key in (own, "ANSI_SQL", *SQL_DIALECTS):
            if key in by:
                return by[key], self.dialect if key in (own, "ANSI_SQL") else SQL_DIALECTS[key]
        return None

    def _sql(self, text: str) -> str:
        try:
            return self._out(sqlglot.parse_one(text, read=self.dialect))
        except sqlglot.errors.SqlglotError:
            return text

    def _out(self, node: exp.Expr) -> str:
        return node.sql(dialect=self.dialect)


def _extension(element: Mapping[str, Any]) -> dict[str, Any] | None:
    for ext in element.get("custom_extensions") or ():
        if isinstance(ext, Mapping) and str(ext.get("vendor_name", "")).upper() == VENDOR:
            try:
                data = json.loads(ext.get("data") or "{}")
            except ValueError:
                return None
            return data if isinstance(data, dict) else None
    return None


def _top_columns(node: exp.Expr) -> list[exp.Column]:
    """The columns of an expression outside its subqueries (those belong to their own FROM)."""
    return [c for c in node.find_all(exp.Column) if c.find_ancestor(exp.Select) is None]


def _last_part(source: str) -> str:
    """`db.schema."Table"` → Table."""
    parts = [
        p.strip().strip('"`[]') for p in re.split(r"\.(?=(?:[^\"]*\"[^\"]*\")*[^\"]*$)", source) if p.strip()
    ]
    return parts[-1] if parts else ""


def _said(name: str) -> str:
    return name.replace("_", " ").strip()


# ---------------------------------------------------------------------------------------------
# writing


def dump(
    definitions: Iterable[Definition],
    *,
    name: str,
    description: str = "",
    catalog: Catalog | None = None,
    dialect: str | None = None,
) -> dict[str, Any]:
    """An OSI document of `definitions` (one semantic model named `name`)."""
    items = list(definitions)
    dialect = dialect or (catalog.dialect if catalog is not None else None)
    osi_dialect = OSI_DIALECTS.get(dialect or "", "ANSI_SQL")
    by_ref = {d.ref: d for d in items}
    entities = [d for d in items if d.kind == "entity"]
    entity_refs = {d.ref for d in entities}

    def expression(sql: str) -> dict[str, Any]:
        return {"dialects": [{"dialect": osi_dialect, "expression": sql}]}

    datasets: dict[str, dict[str, Any]] = {}
    for d in entities:
        datasets[d.ref] = {
            "name": d.ref,
            "source": definition_sql(d) if d.sql or d.filter else d.table,
            **_about(d),
        }

    def dataset(table: str) -> dict[str, Any]:
        key = _dataset_name(table, entity_refs)
        if key not in datasets:
            found = catalog.table(table) if catalog is not None else None
            datasets[key] = {
                "name": table,
                "source": f"{found.schema}.{found.name}" if found is not None and found.schema else table,
            }
            if found is not None and found.primary_key:
                datasets[key]["primary_key"] = list(found.primary_key)
            if found is not None and found.unique:
                datasets[key]["unique_keys"] = [list(u) for u in found.unique]
        return datasets[key]

    relationships: list[dict[str, Any]] = []
    metrics: list[dict[str, Any]] = []
    extra: list[dict[str, Any]] = []  # what has no OSI element: scoped or unusual ones
    for d in items:
        if d.kind == "filter":
            dataset(d.table).setdefault("fields", []).append(
                {"name": d.ref, "expression": expression(d.sql), "datatype": "Boolean", **_about(d)}
            )
        elif d.kind == "metric":
            sql = _metric_expression(d, by_ref, dialect, entity_refs)
            if not d.ratio:
                dataset(d.table)
            metrics.append({"name": d.ref, "expression": expression(sql), **_about(d)})
        elif d.kind == "relationship":
            columns = _join_columns(d, dialect)
            if columns is None:
                extra.append(_portable(d))
                continue
            dataset(d.table)
            dataset(d.to)
            relationships.append(
                {
                    "name": d.ref,
                    "from": _dataset_name(d.table, entity_refs),
                    "to": _dataset_name(d.to, entity_refs),
                    "from_columns": columns[0],
                    "to_columns": columns[1],
                    **_about(d),
                }
            )
        elif d.kind == "instruction":
            extra.append(_portable(d))
    model: dict[str, Any] = {"name": name}
    if description:
        model["description"] = description
    everywhere = [d.text for d in items if d.kind == "instruction" and d.scope.everywhere]
    if everywhere:
        model["ai_context"] = {"instructions": "\n".join(everywhere)}
    model["datasets"] = list(datasets.values())
    if relationships:
        model["relationships"] = relationships
    if metrics:
        model["metrics"] = metrics
    if extra:
        model["custom_extensions"] = [{"vendor_name": VENDOR, "data": json.dumps({"definitions": extra})}]
    return {"version": VERSION, "semantic_model": [model]}


def dump_yaml(definitions: Iterable[Definition], **kw: Any) -> str:
    return yaml.safe_dump(dump(definitions, **kw), sort_keys=False, allow_unicode=True, width=100)


def _about(d: Definition) -> dict[str, Any]:
    """Description, synonyms, and the definition itself as an ASKBASE extension."""
    out: dict[str, Any] = {}
    if d.description:
        out["description"] = d.description
    if d.synonyms:
        out["ai_context"] = {"synonyms": list(d.synonyms)}
    out["custom_extensions"] = [{"vendor_name": VENDOR, "data": json.dumps({"definition": _portable(d)})}]
    return out


def _portable(d: Definition) -> dict[str, Any]:
    """The definition as JSON, with what travels of its provenance (who, when, which version)."""
    data = d.to_json()
    for key in ("id", "status"):
        data.pop(key, None)
    provenance = {
        k: v
        for k, v in (data.pop("provenance", {}) or {}).items()
        if k in ("owner", "date", "version") and v and (k != "version" or v != 1)
    }
    if provenance:
        data["provenance"] = provenance
    scope = {k: v for k, v in (data.pop("scope", {}) or {}).items() if v}
    if scope:
        data["scope"] = scope
    return data


def _dataset_name(table: str, entity_refs: set[str]) -> str:
    """The dataset a definition's `table` is: an entity's (by its ref), or the table's own."""
    return ref_of(table) if ref_of(table) in entity_refs else table


def _metric_expression(
    d: Definition, by_ref: Mapping[str, Definition], dialect: str | None, entity_refs: set[str]
) -> str:
    """The metric as one SQL aggregate other tools read: columns qualified by their dataset, the
    filter folded inside; a ratio of two such aggregates, or of the two metrics by name."""
    if d.ratio:
        parts = [by_ref.get(ref_of(p)) for p in (d.numerator, d.denominator)]
        trees = [_qualified(p, dialect, entity_refs) for p in parts if p is not None and not p.ratio]
        if len(trees) == 2 and trees[0] is not None and trees[1] is not None:
            return ratio_expression(trees[0], trees[1]).sql(dialect=dialect)
        return f"{ref_of(d.numerator)} / {ref_of(d.denominator)}"
    tree = _qualified(d, dialect, entity_refs)
    return tree.sql(dialect=dialect) if tree is not None else d.sql


def _qualified(d: Definition, dialect: str | None, entity_refs: set[str]) -> exp.Expr | None:
    """The metric's aggregate with its filter folded in and its columns named by dataset."""
    try:
        tree = sqlglot.parse_one(d.sql, read=dialect)
        condition = sqlglot.parse_one(d.filter, read=dialect) if d.filter else None
    except sqlglot.errors.SqlglotError:
        return None
    dataset = _dataset_name(d.table, entity_refs)
    for node in (tree, condition):
        for column in _top_columns(node) if node is not None else ():
            if not column.table:
                column.set("table", exp.to_identifier(dataset))
    return fold(tree, condition)


def _join_columns(d: Definition, dialect: str | None) -> tuple[list[str], list[str]] | None:
    """(from_columns, to_columns) of an ON condition that is only `to.x = table.y AND ...`."""
    if d.via:
        return None
    try:
        tree = sqlglot.parse_one(d.sql, read=dialect)
    except sqlglot.errors.SqlglotError:
        return None
    parts = list(tree.flatten()) if isinstance(tree, exp.And) else [tree]
    froms: list[str] = []
    tos: list[str] = []
    for part in parts:
        if not isinstance(part, exp.EQ):
            return None
        sides = [part.this, part.expression]
        if not all(isinstance(s, exp.Column) for s in sides):
            return None
        by_table = {s.table.lower(): s.name for s in sides}
        if set(by_table) != {d.table.lower(), d.to.lower()} or d.table.lower() == d.to.lower():
            return None
        froms.append(by_table[d.table.lower()])
        tos.append(by_table[d.to.lower()])
    return froms, tos
