"""Definitions imported from a dbt project's compiled artifacts, not retyped by hand.

Why the artifacts and not the project's YAML: `dbt parse` (or any build) has already resolved
refs, aliases, schemas, generic tests and the semantic layer into `target/manifest.json` and
`target/semantic_manifest.json`; reading those gives exactly what dbt built, under the names it
built it, with every macro applied. Nothing here runs dbt or the warehouse.

What becomes what (provenance source 'dbt', origin the dbt unique_id, owner from `meta.owner` or
the model's group):
- a documented model, seed, snapshot or source, and every semantic model → an entity over the
  table Askbase queries (the model's alias, matched to the database's catalog), carrying the
  descriptions of the model and its columns, `meta.synonyms`, and the `accepted_values` of its
  columns as `values` (each value with its column, and its meaning when the column's
  `meta.values` gives one). Its name is what people call it (the semantic model's label or
  primary entity, the model's name in the singular) and never a table's name or an SQL keyword;
- a `relationships` test, and a foreign entity of one semantic model that is the primary entity
  of another → a relationship (`to.field = table.column`);
- a categorical dimension whose expression is a condition (`amount > 100`), or a boolean column
  → a named filter;
- a simple metric → a metric: its measure's aggregate (sum, count, count_distinct, average, min,
  max, sum_boolean, median, percentile) over the semantic model's table, the metric's and the
  measure input's `filter` translated to SQL (`{{ Dimension('order__status') }} = 'completed'`
  → `status = 'completed'`; a dimension of another semantic model reached through a foreign
  entity → `customer_id IN (SELECT customer_id FROM customers WHERE ...)`). An additive one
  (sum, count) is given the grain of the semantic model's primary entity, so a query may select
  from it by name;
- a ratio metric → numerator / denominator; when its inputs carry their own filters, one
  aggregate `CAST(n AS DOUBLE) / NULLIF(d, 0)` over the table instead;
- a derived metric whose inputs are all over one table, without time offsets → one aggregate
  expression (each input's filter folded into its aggregate with CASE WHEN).
What cannot be said as a definition is skipped with the reason: cumulative and conversion
metrics, time offsets, semi-additive measures, filters through more than one join, models not
in the database.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp

from core.catalog import Catalog
from core.definitions.importing import Imported, Skipped
from core.definitions.load import DefinitionError
from core.definitions.model import Definition, Provenance, ref_of
from core.joins.identifiers import RESERVED, identifier

# dbt adapter type → sqlglot dialect, when no catalog says which SQL the database speaks
ADAPTER_DIALECTS = {
    "postgres": "postgres",
    "redshift": "redshift",
    "snowflake": "snowflake",
    "bigquery": "bigquery",
    "databricks": "databricks",
    "spark": "spark",
    "duckdb": "duckdb",
    "trino": "trino",
    "athena": "athena",
    "mysql": "mysql",
    "sqlite": "sqlite",
    "sqlserver": "tsql",
    "fabric": "tsql",
    "synapse": "tsql",
    "oracle": "oracle",
    "clickhouse": "clickhouse",
}
RELATION_TYPES = ("model", "seed", "snapshot")
ADDITIVE = ("sum", "count", "sum_boolean")  # re-aggregated by SUM at a coarser grain, still right
KEY_TYPES = ("primary", "unique", "natural")


class Untranslatable(ValueError):
    """A dbt construct a definition cannot say; the message is the reason shown to the data team."""


def artifacts(path: str | Path) -> tuple[Path, Path | None]:
    """manifest.json and semantic_manifest.json (None when absent) of a project dir, its target
    dir, or the manifest itself."""
    p = Path(path)
    if p.is_file() and p.name.endswith(".json"):
        semantic = p.parent / "semantic_manifest.json"
        return p, semantic if semantic.is_file() else None
    for d in (p / "target", p):
        if (d / "manifest.json").is_file():
            semantic = d / "semantic_manifest.json"
            return d / "manifest.json", semantic if semantic.is_file() else None
    raise DefinitionError(
        f"{path}: no manifest.json here or in its target/ directory; run `dbt parse` (or `dbt build`) first"
    )


def read_project(path: str | Path, catalog: Catalog | None = None) -> Imported:
    """Every definition the dbt project at `path` (project dir, target dir or manifest.json)
    holds, over the tables of `catalog` (when given: relations not in it are skipped), and
    everything skipped with its reason."""
    manifest_path, semantic_path = artifacts(path)
    manifest = _json(manifest_path)
    if semantic_path is not None:
        semantic = _json(semantic_path)
    else:  # older dbt, or a parse without the semantic layer: the manifest holds the same nodes
        semantic = {
            "semantic_models": list((manifest.get("semantic_models") or {}).values()),
            "metrics": list((manifest.get("metrics") or {}).values()),
        }
    return _Project(manifest, semantic, catalog).read()


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise DefinitionError(f"{path}: cannot read: {exc}") from exc
    if not isinstance(data, dict):
        raise DefinitionError(f"{path}: not a dbt artifact (expected a JSON object)")
    return data


# ---------------------------------------------------------------------------------------------
# the project, indexed


@dataclass(frozen=True)
class Relation:
    """A dbt node that is a table or view in the warehouse, and the table Askbase queries."""

    unique_id: str
    name: str  # the dbt name
    table: str  # as the database's catalog names it; "" when the database does not have it
    built_as: str  # dbt's relation_name, for messages
    description: str
    columns: Mapping[str, Mapping[str, Any]]
    meta: Mapping[str, Any]
    owner: str


@dataclass(frozen=True)
class SemanticModel:
    unique_id: str
    data: Mapping[str, Any]
    relation: Relation | None

    @property
    def name(self) -> str:
        return str(self.data.get("name") or "")

    def entity(self, name: str) -> Mapping[str, Any] | None:
        return next((e for e in self.data.get("entities") or () if e.get("name") == name), None)

    def dimension(self, name: str) -> Mapping[str, Any] | None:
        return next((d for d in self.data.get("dimensions") or () if d.get("name") == name), None)

    @property
    def primary(self) -> Mapping[str, Any] | None:
        return next((e for e in self.data.get("entities") or () if e.get("type") == "primary"), None)

    @property
    def meta(self) -> Mapping[str, Any]:
        return _meta(self.data)


class _Project:
    """The manifest and semantic manifest, read once into what the conversions look up."""

    def __init__(self, manifest: Mapping[str, Any], semantic: Mapping[str, Any], catalog: Catalog | None):
        self.manifest = manifest
        self.catalog = catalog
        adapter = str((manifest.get("metadata") or {}).get("adapter_type") or "")
        self.dialect = catalog.dialect if catalog is not None else ADAPTER_DIALECTS.get(adapter, "postgres")
        self.project = str((manifest.get("metadata") or {}).get("project_name") or "")
        self.relations = self._relations()
        self.tests = [n for n in (manifest.get("nodes") or {}).values() if n.get("resource_type") == "test"]
        ids = {v.get("name"): k for k, v in (manifest.get("semantic_models") or {}).items()}
        self.semantic_models = [
            SemanticModel(
                ids.get(sm.get("name")) or f"semantic_model.{self.project}.{sm.get('name')}",
                sm,
                self._relation_of_semantic(ids.get(sm.get("name")), sm),
            )
            for sm in semantic.get("semantic_models") or ()
        ]
        self.metric_ids = {v.get("name"): k for k, v in (manifest.get("metrics") or {}).items()}
        self.metric_nodes = {v.get("name"): v for v in (manifest.get("metrics") or {}).values()}
        self.metrics = {str(m.get("name")): m for m in semantic.get("metrics") or ()}
        self.measures: dict[str, tuple[SemanticModel, Mapping[str, Any]]] = {
            str(measure.get("name")): (sm, measure)
            for sm in self.semantic_models
            for measure in sm.data.get("measures") or ()
        }
        catalog_names = {t.name.lower() for t in catalog.tables} if catalog is not None else set()
        self.table_names = catalog_names | {r.table.lower() for r in self.relations.values() if r.table}

    # --- relations ------------------------------------------------------------------------

    def _relations(self) -> dict[str, Relation]:
        out: dict[str, Relation] = {}
        groups = self.manifest.get("groups") or {}
        nodes = list((self.manifest.get("nodes") or {}).items()) + list(
            (self.manifest.get("sources") or {}).items()
        )
        for uid, node in nodes:
            kind = node.get("resource_type")
            config = node.get("config") or {}
            if kind not in (*RELATION_TYPES, "source") or config.get("enabled") is False:
                continue
            if config.get("materialized") == "ephemeral":
                continue
            alias = str(node.get("alias") or node.get("identifier") or node.get("name") or "")
            group = groups.get(f"group.{node.get('package_name')}.{node.get('group') or config.get('group')}")
            group_owner = _owner_text((group or {}).get("owner"))
            meta = {**_meta(node), **(node.get("source_meta") or {})} if kind == "source" else _meta(node)
            out[uid] = Relation(
                unique_id=uid,
                name=str(node.get("name") or alias),
                table=self._table(alias, str(node.get("schema") or "")),
                built_as=str(node.get("relation_name") or alias),
                description=_text(node.get("description")),
                columns=node.get("columns") or {},
                meta=meta,
                owner=_owner_text(meta.get("owner")) or group_owner,
            )
        return out

    def _table(self, alias: str, schema: str) -> str:
        """The catalog's spelling of the relation dbt built as `schema.alias`."""
        if self.catalog is None:
            return alias
        matches = [t for t in self.catalog.tables if t.name.lower() == alias.lower()]
        if not matches:
            return ""
        same_schema = [t for t in matches if (t.schema or "").lower() == schema.lower()]
        return (same_schema or matches)[0].name

    def _relation_of_semantic(self, uid: str | None, sm: Mapping[str, Any]) -> Relation | None:
        node = (self.manifest.get("semantic_models") or {}).get(uid or "") or {}
        for dep in (node.get("depends_on") or {}).get("nodes") or ():
            if dep in self.relations:
                return self.relations[dep]
        built = (sm.get("node_relation") or {}).get("relation_name")
        return next((r for r in self.relations.values() if built and r.built_as == built), None)

    def column(self, relation: Relation, name: str) -> str:
        """The catalog's spelling of a column of `relation`."""
        table = self.catalog.table(relation.table) if self.catalog is not None and relation.table else None
        found = table.column(name) if table is not None else None
        return found.name if found is not None else name

    def boolean_column(self, relation: Relation, name: str) -> bool:
        table = self.catalog.table(relation.table) if self.catalog is not None and relation.table else None
        found = table.column(name) if table is not None else None
        return found is not None and found.kind == "boolean"

    def parse(self, sql: str) -> exp.Expr:
        try:
            return sqlglot.parse_one(sql, read=self.dialect)
        except sqlglot.errors.SqlglotError as exc:
            raise Untranslatable(f"cannot read its SQL ({sql}): {str(exc).splitlines()[0]}") from exc

    def sql(self, node: exp.Expr) -> str:
        return node.sql(dialect=self.dialect)

    # --- everything -----------------------------------------------------------------------

    def read(self) -> Imported:
        skipped: list[Skipped] = []
        metrics = self._metrics(skipped)
        filters = self._filters(skipped)
        taken = self.table_names | {d.ref for d in (*metrics, *filters)}
        entities = self._entities(taken, skipped)
        relationships = self._relationships(skipped)
        return Imported((*entities, *metrics, *filters, *relationships), tuple(skipped))

    # --- entities -------------------------------------------------------------------------

    def _accepted_values(self) -> dict[tuple[str, str], list[str]]:
        """(relation unique_id, column) → its accepted values, from `accepted_values` tests."""
        out: dict[tuple[str, str], list[str]] = {}
        for test in self.tests:
            meta = test.get("test_metadata") or {}
            if meta.get("name") != "accepted_values" or meta.get("namespace") not in (None, "dbt"):
                continue
            kwargs = meta.get("kwargs") or {}
            attached = test.get("attached_node") or next(
                iter((test.get("depends_on") or {}).get("nodes") or ()), ""
            )
            column = str(test.get("column_name") or kwargs.get("column_name") or "")
            values = kwargs.get("values")
            if attached in self.relations and column and isinstance(values, list):
                out.setdefault((attached, column), []).extend(str(v) for v in values)
        return out

    def _entities(self, taken: set[str], skipped: list[Skipped]) -> list[Definition]:
        accepted = self._accepted_values()
        by_relation: dict[str, list[SemanticModel]] = {}
        for sm in self.semantic_models:
            if sm.relation is None:
                skipped.append(Skipped(sm.unique_id, "its model is not a table or view dbt builds"))
                continue
            by_relation.setdefault(sm.relation.unique_id, []).append(sm)
        out: list[Definition] = []
        for uid, relation in self.relations.items():
            sms = by_relation.get(uid, [])
            values = [
                (column, value) for (owner, column), vs in accepted.items() if owner == uid for value in vs
            ]
            documented = (
                relation.description
                or _synonyms(relation.meta)
                or values
                or any(_text(c.get("description")) for c in relation.columns.values())
            )
            if not sms and not documented:
                continue
            origin = sms[0].unique_id if sms else uid
            if not relation.table:
                skipped.append(Skipped(origin, f"{relation.built_as} is not in the database"))
                continue
            name = _entity_name(relation, sms, taken)
            if name is None:
                skipped.append(
                    Skipped(
                        origin, f"no name for it that is not a table's or an SQL keyword ({relation.name})"
                    )
                )
                continue
            taken.add(ref_of(name))
            meta = {**relation.meta, **(sms[0].meta if sms else {})}
            words = [relation.name, *_synonyms(meta)]
            out.append(
                Definition(
                    kind="entity",
                    name=name,
                    table=relation.table,
                    description=_entity_description(relation, sms, values, self),
                    synonyms=_unique_words(name, words),
                    values=_values(relation, values),
                    provenance=Provenance(
                        source="dbt", owner=_owner_text(meta.get("owner")) or relation.owner, origin=origin
                    ),
                )
            )
        return out

    # --- relationships --------------------------------------------------------------------

    def _relationships(self, skipped: list[Skipped]) -> list[Definition]:
        out: list[Definition] = []
        seen: set[tuple[str, str, str, str]] = set()
        names: set[str] = set()

        def add(origin: str, table: Relation, column: str, to: Relation, field: str, said: str) -> None:
            if not table.table or not to.table:
                missing = table if not table.table else to
                skipped.append(Skipped(origin, f"{missing.built_as} is not in the database"))
                return
            column, field = self.column(table, column), self.column(to, field)
            key = (table.table.lower(), column.lower(), to.table.lower(), field.lower())
            if key in seen:
                return
            seen.add(key)
            name = f"{table.table} to {to.table}"
            if ref_of(name) in names:
                name = f"{name} by {column}"
            names.add(ref_of(name))
            on = exp.EQ(
                this=exp.column(identifier(field, self.dialect), table=identifier(to.table, self.dialect)),
                expression=exp.column(
                    identifier(column, self.dialect), table=identifier(table.table, self.dialect)
                ),
            )
            out.append(
                Definition(
                    kind="relationship",
                    name=name,
                    table=table.table,
                    to=to.table,
                    sql=self.sql(on),
                    description=said,
                    provenance=Provenance(source="dbt", owner=table.owner, origin=origin),
                )
            )

        for test in self.tests:
            meta = test.get("test_metadata") or {}
            if meta.get("name") != "relationships" or meta.get("namespace") not in (None, "dbt"):
                continue
            kwargs = meta.get("kwargs") or {}
            deps = [d for d in (test.get("depends_on") or {}).get("nodes") or () if d in self.relations]
            attached = test.get("attached_node") or ""
            if attached not in self.relations:
                skipped.append(
                    Skipped(str(test.get("unique_id")), "its model is not a table or view dbt builds")
                )
                continue
            targets = [d for d in deps if d != attached] or [attached]
            column = str(test.get("column_name") or kwargs.get("column_name") or "")
            field = str(kwargs.get("field") or "")
            if not column or not field or len(targets) != 1:
                skipped.append(Skipped(str(test.get("unique_id")), "cannot tell which columns it joins"))
                continue
            table, to = self.relations[attached], self.relations[targets[0]]
            add(
                str(test.get("unique_id")),
                table,
                column,
                to,
                field,
                f"Every {table.name}.{column} is a {to.name}.{field} (dbt relationships test).",
            )
        for sm in self.semantic_models:
            for entity in sm.data.get("entities") or ():
                if entity.get("type") != "foreign" or sm.relation is None:
                    continue
                fk = _plain_column(entity)
                other = next(
                    (
                        o
                        for o in self.semantic_models
                        if o is not sm
                        and o.relation is not None
                        and (e := o.entity(str(entity.get("name")))) is not None
                        and e.get("type") in KEY_TYPES
                    ),
                    None,
                )
                if other is None or other.relation is None or fk is None:
                    continue
                pk = _plain_column(other.entity(str(entity.get("name"))) or {})
                if pk is None:
                    continue
                add(
                    sm.unique_id,
                    sm.relation,
                    fk,
                    other.relation,
                    pk,
                    f"The {entity.get('name')} of a {sm.name} row (dbt semantic entity).",
                )
        return out

    # --- filters from dimensions ----------------------------------------------------------

    def _filters(self, skipped: list[Skipped]) -> list[Definition]:
        """Conditions the semantic models name as dimensions ("is large": amount > 100)."""
        out: list[Definition] = []
        for sm in self.semantic_models:
            if sm.relation is None or not sm.relation.table:
                continue
            for dim in sm.data.get("dimensions") or ():
                if dim.get("type") != "categorical":
                    continue
                name = str(dim.get("name"))
                expr = str(dim.get("expr") or name)
                origin = f"{sm.unique_id}.{name}"
                try:
                    node = self.parse(expr)
                except Untranslatable:
                    continue
                condition = isinstance(node, exp.Predicate | exp.Connector | exp.Not | exp.Boolean)
                if not condition and not (
                    isinstance(node, exp.Column) and self.boolean_column(sm.relation, node.name)
                ):
                    continue
                label = str(dim.get("label") or "") or name.replace("_", " ")
                if any(d.ref == ref_of(label) for d in out):  # the same dimension name on two models
                    label = f"{label} {sm.relation.table}"
                out.append(
                    Definition(
                        kind="filter",
                        name=label,
                        synonyms=_unique_words(label, [name, *_synonyms(_meta(dim))]),
                        table=sm.relation.table,
                        sql=self.sql(node),
                        description=_text(dim.get("description")),
                        provenance=Provenance(
                            source="dbt",
                            owner=_owner_text(sm.meta.get("owner")) or sm.relation.owner,
                            origin=origin,
                        ),
                    )
                )
        return out

    # --- metrics --------------------------------------------------------------------------

    def _metrics(self, skipped: list[Skipped]) -> list[Definition]:
        """Simple metrics first, then ratios and derived metrics (which name them)."""
        out: dict[str, Definition] = {}
        order = sorted(self.metrics.values(), key=lambda m: m.get("type") != "simple")
        for metric in order:
            name = str(metric.get("name"))
            origin = self.metric_ids.get(name) or f"metric.{self.project}.{name}"
            try:
                d = self._metric(metric, out)
            except Untranslatable as exc:
                skipped.append(Skipped(origin, str(exc)))
                continue
            if d is not None:
                out[name] = d
        return list(out.values())

    def _metric(self, metric: Mapping[str, Any], done: Mapping[str, Definition]) -> Definition | None:
        kind = metric.get("type")
        params = metric.get("type_params") or {}
        name = str(metric.get("name"))
        node = self.metric_nodes.get(name) or {}
        meta = {**_meta(metric), **_meta(node)}
        said = _said(name)
        base = Definition(
            kind="metric",
            name=said,
            description=_text(metric.get("description")),
            synonyms=_unique_words(said, [name, str(metric.get("label") or ""), *_synonyms(meta)]),
            unit=str(meta.get("unit") or ""),
            format=str(meta.get("format") or ""),
            provenance=Provenance(
                source="dbt",
                owner=_owner_text(meta.get("owner")),
                origin=self.metric_ids.get(name) or f"metric.{self.project}.{name}",
            ),
        )
        if kind == "simple":
            agg = self._simple(metric)
            relation = agg.sm.relation
            assert relation is not None
            grain = self._grain(agg, said)
            owner = base.provenance.owner or _owner_text(agg.sm.meta.get("owner")) or relation.owner
            return _replace(
                base,
                table=relation.table,
                sql=self.sql(agg.aggregate),
                filter=self.sql(agg.condition) if agg.condition is not None else "",
                grain=grain,
                description=base.description or _text(agg.measure.get("description")),
                provenance=Provenance(source="dbt", owner=owner, origin=base.provenance.origin),
            )
        if kind == "ratio":
            num, den = params.get("numerator") or {}, params.get("denominator") or {}
            plain = all(
                not (part.get("filter") or part.get("offset_window") or part.get("offset_to_grain"))
                for part in (num, den)
            )
            if plain and num.get("name") in done and den.get("name") in done:
                parts = done[num["name"]], done[den["name"]]
                owner = base.provenance.owner or parts[0].provenance.owner
                return _replace(
                    base,
                    numerator=parts[0].name,
                    denominator=parts[1].name,
                    provenance=replace(base.provenance, owner=owner),
                )
            folded = self._folded(metric, set())
            return self._single(base, folded)
        if kind == "derived":
            return self._single(base, self._folded(metric, set()))
        if kind == "cumulative":
            raise Untranslatable(
                "a cumulative metric (a running total over time) cannot be said as one aggregate"
            )
        if kind == "conversion":
            raise Untranslatable(
                "a conversion metric (events followed by other events) cannot be said as one aggregate"
            )
        raise Untranslatable(f"metrics of type {kind!r} are not read")

    def _single(self, base: Definition, folded: _Folded) -> Definition:
        relation = folded.sm.relation
        assert relation is not None
        owner = base.provenance.owner or _owner_text(folded.sm.meta.get("owner")) or relation.owner
        return _replace(
            base,
            table=relation.table,
            sql=self.sql(folded.expression),
            provenance=Provenance(source="dbt", owner=owner, origin=base.provenance.origin),
        )

    def _grain(self, agg: _Aggregate, name: str) -> tuple[str, ...]:
        """The primary entity's key, for an additive metric: one row per order, with its revenue."""
        primary = agg.sm.primary
        key = _plain_column(primary) if primary is not None else None
        relation = agg.sm.relation
        if (
            key is None
            or relation is None
            or agg.measure.get("agg") not in ADDITIVE
            or ref_of(name) in self.table_names
            or ref_of(name) == key.lower()
        ):
            return ()
        return (self.column(relation, key),)

    def _simple(self, metric: Mapping[str, Any]) -> _Aggregate:
        params = metric.get("type_params") or {}
        measure_input = params.get("measure") or {}
        if isinstance(measure_input, str):
            measure_input = {"name": measure_input}
        measure_name = str(measure_input.get("name") or "")
        if measure_name not in self.measures:
            raise Untranslatable(f"its measure {measure_name or '(none)'} is not in any semantic model")
        sm, measure = self.measures[measure_name]
        if sm.relation is None:
            raise Untranslatable(f"the semantic model {sm.name} is over no table or view dbt builds")
        if not sm.relation.table:
            raise Untranslatable(f"{sm.relation.built_as} is not in the database")
        if measure.get("non_additive_dimension"):
            raise Untranslatable(
                f"its measure {measure_name} is semi-additive (non_additive_dimension): its value at a"
                " period's end cannot be said as one aggregate"
            )
        aggregate = self._aggregate(measure)
        conditions = [
            self._where(w, sm, measure)
            for source in (metric.get("filter"), measure_input.get("filter"))
            for w in _where_templates(source)
        ]
        return _Aggregate(sm, measure, aggregate, _and(conditions))

    def _aggregate(self, measure: Mapping[str, Any]) -> exp.Expr:
        agg = str(measure.get("agg") or "")
        expr = self.parse(str(measure.get("expr") or measure.get("name")))
        params = measure.get("agg_params") or {}
        if agg == "sum":
            return exp.Sum(this=expr)
        if agg == "count":
            return exp.Count(this=expr)
        if agg == "count_distinct":
            return exp.Count(this=exp.Distinct(expressions=[expr]))
        if agg == "average":
            return exp.Avg(this=expr)
        if agg == "min":
            return exp.Min(this=expr)
        if agg == "max":
            return exp.Max(this=expr)
        if agg == "sum_boolean":
            return exp.Sum(
                this=exp.Case(
                    ifs=[exp.If(this=expr, true=exp.Literal.number(1))], default=exp.Literal.number(0)
                )
            )
        if agg == "median":
            return self.parse(f"PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY {self.sql(expr)})")
        if agg == "percentile":
            p = params.get("percentile")
            if not isinstance(p, int | float):
                raise Untranslatable("a percentile measure without agg_params.percentile")
            fn = "PERCENTILE_DISC" if params.get("use_discrete_percentile") else "PERCENTILE_CONT"
            return self.parse(f"{fn}({p}) WITHIN GROUP (ORDER BY {self.sql(expr)})")
        raise Untranslatable(f"the aggregation {agg!r} is not read")

    def _folded(self, metric: Mapping[str, Any], busy: set[str]) -> _Folded:
        """The metric as one aggregate expression over its table, each filter folded inside."""
        name = str(metric.get("name"))
        if name in busy:
            raise Untranslatable(f"the metric {name} uses itself")
        kind = metric.get("type")
        params = metric.get("type_params") or {}
        if kind == "simple":
            agg = self._simple(metric)
            return _Folded(agg.sm, fold(agg.aggregate, agg.condition))
        if kind not in ("ratio", "derived"):
            raise Untranslatable(f"it uses the {kind} metric {name}, which cannot be said as one aggregate")
        inputs = (
            [params.get("numerator") or {}, params.get("denominator") or {}]
            if kind == "ratio"
            else list(params.get("metrics") or ())
        )
        parts: dict[str, _Folded] = {}
        for part in inputs:
            if isinstance(part, str):
                part = {"name": part}
            if part.get("offset_window") or part.get("offset_to_grain"):
                raise Untranslatable(
                    f"it compares {part.get('name')} with an earlier period (offset), which a definition cannot say"
                )
            used = self.metrics.get(str(part.get("name")))
            if used is None:
                raise Untranslatable(f"it uses {part.get('name')}, which is not a metric of the project")
            inner = self._folded(used, busy | {name})
            extra = [self._where(w, inner.sm, None) for w in _where_templates(part.get("filter"))]
            if extra:
                if used.get("type") != "simple":
                    raise Untranslatable(f"it filters the {used.get('type')} metric {used.get('name')}")
                inner = _Folded(inner.sm, fold(inner.expression, _and(extra)))
            parts[str(part.get("alias") or part.get("name"))] = inner
        models = {p.sm.unique_id for p in parts.values()}
        if len(models) != 1:
            tables = sorted({p.sm.name for p in parts.values()})
            raise Untranslatable(
                f"its parts are over different semantic models ({', '.join(tables)}); a definition is over one table"
            )
        sm = next(iter(parts.values())).sm
        if kind == "ratio":
            names = [str(p.get("alias") or p.get("name")) for p in inputs]
            n, d = parts[names[0]].expression, parts[names[1]].expression
            return _Folded(sm, ratio_expression(n, d))
        formula = self.parse(str(params.get("expr") or ""))
        for column in list(formula.find_all(exp.Column)):
            if column.table or column.name not in parts:
                raise Untranslatable(f"its expression names {column.sql()}, which is not one of its metrics")
            column.replace(exp.Paren(this=parts[column.name].expression.copy()))
        return _Folded(sm, formula)

    # --- filters written in MetricFlow's jinja --------------------------------------------

    def _where(self, template: str, sm: SemanticModel, measure: Mapping[str, Any] | None) -> exp.Expr:
        """A MetricFlow where filter as a condition on `sm`'s table. The parts of an AND that
        read another semantic model (reached by one entity) become one `fk IN (SELECT key FROM
        other WHERE ...)`."""
        found: dict[str, tuple[SemanticModel, exp.Expr]] = {}

        def placeholder(match: re.Match[str]) -> str:
            key = f"askbase_dbt_ref_{len(found)}"
            found[key] = self._element(match, sm, measure)
            return key

        text = _CALL.sub(placeholder, template)
        if "{{" in text or "{%" in text:
            raise Untranslatable(f"its filter uses jinja that is not a dimension or entity: {template}")
        tree = self.parse(text)
        own: list[exp.Expr] = []
        elsewhere: dict[str, list[exp.Expr]] = {}
        for part in list(tree.flatten()) if isinstance(tree, exp.And) else [tree]:
            owners = {found[c.name][0].unique_id for c in part.find_all(exp.Column) if c.name in found}
            if isinstance(part, exp.Column) and part.name in found:  # a boolean dimension alone
                part = found[part.name][1].copy()
            for column in list(part.find_all(exp.Column)):
                if column.name in found:
                    node = found[column.name][1].copy()
                    column.replace(exp.Paren(this=node) if isinstance(node, exp.Binary) else node)
            if len(owners) > 1:
                raise Untranslatable(f"its filter reads several semantic models in one condition: {template}")
            if owners <= {sm.unique_id}:
                own.append(part)
            else:
                elsewhere.setdefault(owners.pop(), []).append(part)
        by_id = {o.unique_id: o for o, _ in found.values()}
        for uid, parts in elsewhere.items():
            other = by_id[uid]
            link = _link(sm, other)
            if link is None or other.relation is None or not other.relation.table:
                raise Untranslatable(
                    f"its filter reads {other.name}, which {sm.name} does not reach by one entity"
                )
            fk, pk = link
            inner = (
                exp.select(exp.column(identifier(self.column(other.relation, pk), self.dialect)))
                .from_(exp.table_(identifier(other.relation.table, self.dialect)))
                .where(_and(parts))
            )
            own.append(
                exp.In(
                    this=exp.column(
                        identifier(self.column(sm.relation, fk) if sm.relation else fk, self.dialect)
                    ),
                    query=exp.Subquery(this=inner),
                )
            )
        condition = _and(own)
        assert condition is not None
        return condition

    def _element(
        self, match: re.Match[str], sm: SemanticModel, measure: Mapping[str, Any] | None
    ) -> tuple[SemanticModel, exp.Expr]:
        fn, args, kwargs = _call(match)
        chain = match.group("chain") or ""
        if fn == "Metric":
            raise Untranslatable("its filter compares another metric's value, which a definition cannot say")
        if not args or not isinstance(args[0], str):
            raise Untranslatable(f"cannot read the filter call {match.group(0)}")
        path = [str(p) for p in kwargs.get("entity_path") or ()]
        parts = args[0].split("__")
        element, entities = parts[-1], [*path, *parts[:-1]]
        if fn == "Entity":
            entity = sm.entity(element)
            if entity is None:
                raise Untranslatable(f"its filter names the entity {args[0]}, which {sm.name} does not have")
            return sm, self.parse(_element_expr(entity, element))
        if element == "metric_time":
            column = (measure or {}).get("agg_time_dimension") or (sm.data.get("defaults") or {}).get(
                "agg_time_dimension"
            )
            if not column:
                raise Untranslatable(f"{sm.name} has no agg_time_dimension for metric_time")
            dim = sm.dimension(str(column)) or {"name": column}
            owner, expr = sm, _element_expr(dim, str(column))
        else:
            owner, expr = self._dimension_of(entities, element, sm)
        node = self.parse(expr)
        grain = args[1] if fn == "TimeDimension" and len(args) > 1 else kwargs.get("time_granularity_name")
        for method, value in re.findall(r"\.\s*(\w+)\s*\(\s*'?([^')]*)'?\s*\)", chain):
            if method == "grain":
                grain = value
            elif method == "date_part":
                node = self.parse(f"EXTRACT({value.upper()} FROM {self.sql(node)})")
            elif method != "descending":
                raise Untranslatable(f"cannot read .{method}() in its filter")
        if isinstance(grain, str) and grain and grain.lower() != "day":
            node = self.parse(f"DATE_TRUNC('{grain.lower()}', {self.sql(node)})")
        return owner, node

    def _dimension_of(
        self, entities: Sequence[str], element: str, sm: SemanticModel
    ) -> tuple[SemanticModel, str]:
        if len(entities) != 1:
            raise Untranslatable(
                f"its filter reaches {element} through {len(entities)} entities; only one join is read"
            )
        entity = entities[0]
        candidates = [sm] + [o for o in self.semantic_models if o is not sm]
        for owner in candidates:
            e = owner.entity(entity)
            if e is None or (owner is not sm and e.get("type") not in KEY_TYPES):
                continue
            dim = owner.dimension(element)
            if dim is not None:
                return owner, _element_expr(dim, element)
            other = owner.entity(element)
            if other is not None:
                return owner, _element_expr(other, element)
        raise Untranslatable(f"its filter names {entity}__{element}, which no semantic model defines")


@dataclass(frozen=True)
class _Aggregate:
    sm: SemanticModel
    measure: Mapping[str, Any]
    aggregate: exp.Expr
    condition: exp.Expr | None


@dataclass(frozen=True)
class _Folded:
    sm: SemanticModel
    expression: exp.Expr


# ---------------------------------------------------------------------------------------------
# helpers

# {{ Dimension('order__status') }}, {{ TimeDimension('metric_time', 'month') }},
# {{ Dimension('order__ordered_at').grain('month') }}, {{ Entity('customer') }}, {{ Metric(...) }}
_CALL = re.compile(
    r"\{\{\s*(?P<fn>Dimension|TimeDimension|Entity|Metric)\s*\((?P<args>[^{}]*?)\)"
    r"(?P<chain>(?:\s*\.\s*\w+\s*\([^(){}]*\))*)\s*\}\}"
)


def _call(match: re.Match[str]) -> tuple[str, list[Any], dict[str, Any]]:
    try:
        call = ast.parse(f"f({match.group('args')})", mode="eval").body
        assert isinstance(call, ast.Call)
        args = [ast.literal_eval(a) for a in call.args]
        kwargs = {str(k.arg): ast.literal_eval(k.value) for k in call.keywords}
    except (SyntaxError, ValueError, AssertionError) as exc:
        raise Untranslatable(f"cannot read the filter call {match.group(0)}") from exc
    return match.group("fn"), args, kwargs


def _where_templates(value: Any) -> Iterator[str]:
    """The where_sql_templates of a filter as dbt stores it (or a plain string)."""
    if not value:
        return
    if isinstance(value, str):
        yield value
        return
    if isinstance(value, Mapping):
        for w in value.get("where_filters") or ():
            text = w.get("where_sql_template") if isinstance(w, Mapping) else w
            if text:
                yield str(text)
        return
    if isinstance(value, list):
        for item in value:
            yield from _where_templates(item)


def _link(sm: SemanticModel, other: SemanticModel) -> tuple[str, str] | None:
    """(column of sm, key column of other) for an entity both have, a key of `other`."""
    for e in sm.data.get("entities") or ():
        o = other.entity(str(e.get("name")))
        if o is not None and o.get("type") in KEY_TYPES:
            fk, pk = _plain_column(e), _plain_column(o)
            if fk and pk:
                return fk, pk
    return None


def _element_expr(element: Mapping[str, Any] | None, name: str) -> str:
    return str((element or {}).get("expr") or name)


def _plain_column(element: Mapping[str, Any]) -> str | None:
    """The column an entity is, when it is one column (not an expression)."""
    expr = str(element.get("expr") or element.get("name") or "")
    return expr if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", expr) else None


def _and(conditions: Sequence[exp.Expr]) -> exp.Expr | None:
    if not conditions:
        return None
    out = conditions[0]
    for c in conditions[1:]:
        out = exp.And(this=_paren(out), expression=_paren(c))
    return out


def _paren(node: exp.Expr) -> exp.Expr:
    return exp.Paren(this=node) if isinstance(node, exp.Connector) else node


def fold(aggregate: exp.Expr, condition: exp.Expr | None) -> exp.Expr:
    """SUM(x) with a condition → SUM(CASE WHEN condition THEN x END): the filter inside the
    aggregate, so parts with different filters share one SELECT."""
    if condition is None:
        return aggregate.copy()
    tree = aggregate.copy()
    for agg in list(tree.find_all(exp.AggFunc)):
        if isinstance(agg.parent, exp.WithinGroup):
            order = agg.parent.expression
            for ordered in order.find_all(exp.Ordered):
                ordered.set("this", _when(condition, ordered.this))
            continue
        target = agg.this
        if isinstance(target, exp.Distinct):
            target.set("expressions", [_when(condition, e) for e in target.expressions])
        elif isinstance(target, exp.Star) or target is None:
            agg.set("this", _when(condition, exp.Literal.number(1)))
        else:
            agg.set("this", _when(condition, target))
    return tree


def _when(condition: exp.Expr, value: exp.Expr) -> exp.Expr:
    return exp.Case(ifs=[exp.If(this=condition.copy(), true=value.copy())])


def ratio_expression(numerator: exp.Expr, denominator: exp.Expr) -> exp.Expr:
    return exp.Div(
        this=exp.Cast(this=numerator.copy(), to=exp.DataType.build("double")),
        expression=exp.Nullif(this=denominator.copy(), expression=exp.Literal.number(0)),
    )


def _meta(node: Mapping[str, Any]) -> dict[str, Any]:
    """A node's meta: dbt keeps it at the top and under config (config wins, as in dbt)."""
    top = node.get("meta") or {}
    config = (node.get("config") or {}).get("meta") or {}
    return {**(top if isinstance(top, Mapping) else {}), **(config if isinstance(config, Mapping) else {})}


def _owner_text(value: Any) -> str:
    """meta.owner as dbt projects write it: a name, an email, a list, or {name, email}."""
    if isinstance(value, Mapping):
        value = value.get("name") or value.get("email")
    if isinstance(value, list | tuple):
        value = ", ".join(str(v) for v in value if v)
    return str(value).strip() if value else ""


def _synonyms(meta: Mapping[str, Any]) -> list[str]:
    value = meta.get("synonyms")
    if isinstance(value, str):
        return [s.strip() for s in value.split(",") if s.strip()]
    return [str(v) for v in value or () if str(v).strip()] if isinstance(value, list) else []


def _text(value: Any) -> str:
    return " ".join(str(value or "").split())


def _said(name: str) -> str:
    """'average_order_value' → 'average order value': what people say; the ref is the same."""
    return name.replace("_", " ").strip()


def _unique_words(name: str, words: Sequence[str]) -> tuple[str, ...]:
    """Synonyms that say something the name does not (not the name again, in another case or
    with underscores)."""
    seen = {_said(name).lower()}
    out: list[str] = []
    for w in words:
        key = _said(w).lower()
        if w and key not in seen:
            seen.add(key)
            out.append(w)
    return tuple(out)


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def _entity_name(relation: Relation, sms: Sequence[SemanticModel], taken: set[str]) -> str | None:
    """What people call the thing a model holds, that no table, keyword or other definition is."""
    candidates: list[str] = []
    for sm in sms:
        candidates.append(str(sm.data.get("label") or ""))
        primary = sm.primary
        if primary is not None:
            candidates.append(str(primary.get("name") or ""))
        candidates.append(sm.name)
    singular = _singular(relation.name)
    candidates += [singular, relation.name, f"{_said(singular)} record"]
    for candidate in candidates:
        said = _said(candidate)
        ref = ref_of(said)
        if said and ref not in taken and ref not in RESERVED and not ref.endswith("_id"):
            return said
    return None


def _entity_description(
    relation: Relation, sms: Sequence[SemanticModel], values: Sequence[tuple[str, str]], project: _Project
) -> str:
    """The model's description, then its documented columns, with their accepted values."""
    said = [relation.description] + [_text(sm.data.get("description")) for sm in sms]
    lines = [s if s.endswith(".") else f"{s}." for s in dict.fromkeys(s for s in said if s)]
    dims = {
        str(d.get("expr") or d.get("name")): _text(d.get("description"))
        for sm in sms
        for d in sm.data.get("dimensions") or ()
    }
    accepted: dict[str, list[str]] = {}
    for column, value in values:
        accepted.setdefault(column, []).append(value)
    columns: list[str] = []
    names = list(relation.columns) + [c for c in accepted if c not in relation.columns]
    for name in names:
        col = relation.columns.get(name) or {}
        text = _text(col.get("description")) or dims.get(name, "")
        meanings = _meanings(col)
        if name in accepted:
            shown = [f"{v} ({meanings[v]})" if v in meanings else v for v in accepted[name]]
            text = f"{text.rstrip('.')}; one of {', '.join(shown)}" if text else f"one of {', '.join(shown)}"
        if text:
            columns.append(f"{project.column(relation, name)}: {text.rstrip('.')}")
    if columns:
        lines.append("Columns: " + "; ".join(columns) + ".")
    return " ".join(lines)


def _meanings(column: Mapping[str, Any]) -> dict[str, str]:
    """A column's `meta.values` (or `meta.value_meanings`): stored value → what it means."""
    meta = _meta(column)
    value = meta.get("values") or meta.get("value_meanings") or {}
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, Mapping) else {}


def _values(relation: Relation, values: Sequence[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """Each accepted value with the column it is a value of, and its meaning when known."""
    out: list[tuple[str, str]] = []
    for column, value in values:
        meaning = _meanings(relation.columns.get(column) or {}).get(value, "")
        out.append((value, f"{column}: {meaning}" if meaning else column))
    return tuple(dict.fromkeys(out))


def _replace(d: Definition, **changes: Any) -> Definition:
    return replace(d, **changes)
