"""Definitions written in YAML: the `definitions:` section of a catalog file (or a file of its own).

    definitions:
      entities:
        - name: agent
          description: A party that sells policies: its role on the agreement is 'AG'.
          synonyms: [agents, sales agent]
          sql: SELECT p.*, r.agreement_id FROM party p JOIN agreement_party_role r ON ...
      metrics:
        - name: total loss
          table: claim_amount
          sql: SUM(amount)
          grain: [claim_id]
          unit: EUR
        - {name: loss ratio, numerator: total loss, denominator: written premium, format: percent}
      filters:
        - {name: in force, table: policy, sql: "policy_status = 'in force'"}
      relationships:
        - {name: policy holder of a policy, table: policy, to: policy_holder, sql: "policy_holder.agreement_id = policy.policy_id"}
      instructions:
        - text: Amounts are in euros unless a currency column says otherwise.
        - {text: "'Existing' reactors are the operational ones.", scope: {channel: C0123}}

Each section is a list of mappings with a `name` (instructions need only `text`), or a mapping of
name → body. `owner`, `date` and `version` may be given per definition; the rest of the
provenance is the file. A field no kind knows is an error that names the file and the
definition, so a typo never silently drops meaning.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

import yaml

from core.definitions.model import Definition, Kind, Provenance, Scope, Source
from core.yaml_text import load_yaml

SECTIONS: dict[str, Kind] = {
    "entities": "entity",
    "metrics": "metric",
    "filters": "filter",
    "relationships": "relationship",
    "instructions": "instruction",
}
_FIELDS = {f.name for f in fields(Definition)} - {"kind", "scope", "provenance", "id", "status"}
_PROVENANCE = {"owner", "date", "version"}
_LISTS = ("synonyms", "grain", "via")
ALIASES = {"from": "table", "condition": "sql", "expression": "sql", "over": "table", "on": "sql"}


class DefinitionError(ValueError):
    """A definition that cannot be read or does not fit the schema; the message names where."""


def load_file(path: str | Path, source: Source = "yaml") -> tuple[Definition, ...]:
    """The definitions of a YAML file (its `definitions:` section, or the whole file if it has none)."""
    try:
        data = load_yaml(Path(path).read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise DefinitionError(f"{path}: cannot read definitions: {exc}") from exc
    if not isinstance(data, Mapping):
        raise DefinitionError(f"{path}: expected a mapping with a 'definitions:' section")
    # a catalog file holds its definitions under `definitions:`; a file of definitions alone may
    # hold the sections at the top (a catalog's own `relationships:` is not one of them)
    section = data.get("definitions", data if data and set(data) <= set(SECTIONS) else {})
    return parse(section or {}, str(path), source)


def parse(data: Mapping[str, Any], where: str, source: Source = "yaml") -> tuple[Definition, ...]:
    if not isinstance(data, Mapping):
        raise DefinitionError(f"{where}: 'definitions' must be a mapping of sections ({', '.join(SECTIONS)})")
    unknown = set(data) - set(SECTIONS)
    if unknown:
        raise DefinitionError(
            f"{where}: unknown section(s) {', '.join(sorted(map(str, unknown)))} under definitions"
            f" (expected {', '.join(SECTIONS)})"
        )
    out: list[Definition] = []
    for section, kind in SECTIONS.items():
        for name, body in _items(data.get(section), section, where):
            out.append(_definition(kind, name, body, where, source))
    return tuple(out)


def _items(value: Any, section: str, where: str) -> list[tuple[str, Mapping[str, Any]]]:
    if value is None:
        return []
    if isinstance(value, Mapping):
        return [(str(k), v if isinstance(v, Mapping) else {"sql": v}) for k, v in value.items()]
    if not isinstance(value, list):
        raise DefinitionError(f"{where}: definitions.{section} must be a list or a mapping")
    items = []
    for i, item in enumerate(value):
        if isinstance(item, str) and section == "instructions":
            item = {"text": item}
        if not isinstance(item, Mapping):
            raise DefinitionError(f"{where}: definitions.{section}[{i}] must be a mapping")
        name = item.get("name") or (item.get("text", "")[:60] if section == "instructions" else "")
        if not name:
            raise DefinitionError(f"{where}: definitions.{section}[{i}] has no name")
        items.append((str(name), item))
    return items


def _definition(kind: Kind, name: str, body: Mapping[str, Any], where: str, source: Source) -> Definition:
    label = f"{where}: {kind} '{name}'"
    values: dict[str, Any] = {}
    provenance: dict[str, Any] = {"source": source, "origin": where}
    scope = Scope()
    for raw_key, value in body.items():
        key = ALIASES.get(str(raw_key), str(raw_key))
        if key == "name":
            continue
        if key == "scope":
            scope = _scope(value, label)
        elif key in _PROVENANCE:
            provenance[key] = int(value) if key == "version" else _text(value)
        elif key in _LISTS:
            values[key] = tuple(str(v) for v in (value if isinstance(value, list) else [value]))
        elif key == "values":
            if not isinstance(value, Mapping):
                raise DefinitionError(f"{label}: values must map stored values to meanings")
            values[key] = tuple((str(k), str(v)) for k, v in value.items())
        elif key in _FIELDS:
            values[key] = str(value).strip() if value is not None else ""
        else:
            raise DefinitionError(f"{label}: unknown field '{raw_key}'")
    definition = Definition(kind=kind, name=name, scope=scope, provenance=Provenance(**provenance), **values)
    _required(definition, label)
    return definition


def _required(d: Definition, label: str) -> None:
    missing = {
        "entity": [] if d.sql or d.table else ["table or sql"],
        "metric": [] if d.ratio or (d.sql and d.table) else ["table and sql, or numerator and denominator"],
        "filter": [f for f in ("table", "sql") if not getattr(d, f)],
        "relationship": [f for f in ("table", "to", "sql") if not getattr(d, f)],
        "instruction": [] if d.text else ["text"],
    }[d.kind]
    if missing:
        raise DefinitionError(f"{label}: needs {', '.join(missing)}")


def _scope(value: Any, label: str) -> Scope:
    if value in (None, "", "database", "everywhere"):
        return Scope()
    if not isinstance(value, Mapping) or set(value) - {"channel", "team", "user"}:
        raise DefinitionError(f"{label}: scope is 'database' or a mapping of channel, team, user")
    return Scope(**{k: str(v) for k, v in value.items()})


def _text(value: Any) -> str:
    return value.isoformat() if isinstance(value, dt.date) else str(value)


def dump(definitions: Iterable[Definition]) -> dict[str, Any]:
    """The `definitions:` section that `parse` reads back as the same definitions (export, files
    written by the learning bench): each kind's fields that are set, with scope and provenance."""
    sections: dict[str, list[dict[str, Any]]] = {}
    kinds = {kind: section for section, kind in SECTIONS.items()}
    for d in definitions:
        body: dict[str, Any] = {"name": d.name} if d.kind != "instruction" or d.name != d.text[:60] else {}
        for key in sorted(_FIELDS):
            value = getattr(d, key)
            if key == "values" and value:
                body[key] = dict(value)
            elif value not in ("", ()):
                body[key] = list(value) if isinstance(value, tuple) else value
        if not d.scope.everywhere:
            body["scope"] = {k: v for k, v in vars(d.scope).items() if v}
        for key in ("owner", "date"):
            if getattr(d.provenance, key):
                body[key] = getattr(d.provenance, key)
        if d.provenance.version != 1:
            body["version"] = d.provenance.version
        sections.setdefault(kinds[d.kind], []).append(body)
    return {section: sections[section] for section in SECTIONS if section in sections}


def dump_yaml(definitions: Iterable[Definition]) -> str:
    return yaml.safe_dump({"definitions": dump(definitions)}, sort_keys=False, allow_unicode=True, width=100)
