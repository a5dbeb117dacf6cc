"""The relationship graph as an admin reads it: the patterns that decide joins, and how to correct them.

`python -m bot catalog show` prints `graph_report`: every pattern (declared in the catalog or
detected), every inferred join with its evidence, what inference proposed and dropped, and a YAML
block in the catalog's own format. Pasting that block under `patterns:` in the database's catalog
YAML confirms the patterns (then they no longer depend on detection); editing it corrects them;
`ignore: true` switches a wrong detection off.
"""

from __future__ import annotations

from typing import Any

import yaml

from core.catalog import Pattern
from core.graph.multigraph import RelationshipGraph

KIND_TITLES = {
    "subtype": "Subtypes (a table whose key is another table's key)",
    "role": "Role tables (which party plays which role, by a code)",
    "typed_fact": "Typed facts (each row is one of several one-to-one types)",
    "parallel_path": "Parallel paths (two legitimate ways to reach a table)",
    "many_to_many": "Many-to-many bridges",
    "lookup": "Lookup tables (never a connector)",
    "star": "Stars",
    "snowflake": "Snowflakes",
}


def graph_report(graph: RelationshipGraph) -> list[str]:
    """Lines for a person: edges by origin, patterns by kind, inferred joins, inference counts."""
    stats = graph.stats
    lines = [
        f"database {graph.catalog.database}: {len(graph.catalog.tables)} tables; joins: "
        f"{stats.get('declared', 0)} declared, {stats.get('catalog', 0)} from the catalog, "
        f"{stats.get('inferred', 0)} inferred, {stats.get('shared_key', 0)} through a shared key",
    ]
    for kind, title in KIND_TITLES.items():
        patterns = [p for p in graph.patterns if p.kind == kind]
        if not patterns:
            continue
        lines += ["", f"{title}:"]
        for p in patterns:
            lines.append(f"  - {_pattern_text(p)}")
    inferred = [e for e in graph.edges if e.origin == "inferred" and not e.via]
    if inferred:
        lines += ["", "Inferred joins (not declared by the database):"]
        lines += [f"  - {e}" for e in inferred]
    report = stats.get("inference") or {}
    if report:
        proposed = report.get("proposed by name", 0) + report.get("proposed by values", 0)
        kept = report.get("kept by name", 0) + report.get("kept by values", 0)
        dropped = [
            f"{k.removeprefix('dropped: ')} {v}" for k, v in report.items() if k.startswith("dropped") and v
        ]
        lines.append(
            f"inference proposed {proposed} joins and kept {kept}"
            + (f"; dropped: {', '.join(dropped)}" if dropped else "")
        )
        directions = [
            f"{k.removeprefix('direction ')} {v}"
            for k, v in sorted(report.items())
            if k.startswith("direction by")
        ]
        if directions:
            lines.append(
                "where both columns look unique, which one references the other was set "
                + ", ".join(directions)
                + (
                    f" ({report['direction flipped']} turned around)"
                    if report.get("direction flipped")
                    else ""
                )
            )
    return lines


def _pattern_text(p: Pattern) -> str:
    src = "catalog" if p.origin == "catalog" else "detected"
    if p.kind == "role":
        codes = ", ".join(f"{c} = {m}" if m != c else c for c, m in p.codes) or "codes unknown"
        what = f"{p.root}: {p.tables[1]} plays a role in {p.tables[0]}; {p.column}: {codes}"
    elif p.kind in ("subtype", "typed_fact"):
        what = f"{p.root} → {', '.join(p.tables)}"
    elif p.kind == "parallel_path":
        what = f"{p.root} reaches {p.tables[0]} directly and through {p.tables[1]}"
    elif p.kind == "many_to_many":
        what = f"{p.root} pairs {' and '.join(p.tables)}"
    elif p.kind == "lookup":
        what = p.root
    else:
        what = f"{p.root}: {', '.join(p.tables)}"
    note = f" — {p.description}" if p.description and p.kind not in ("parallel_path", "role") else ""
    return f"{what} [{src}]{note}"


def patterns_yaml(graph: RelationshipGraph) -> str:
    """The patterns as a `patterns:` block of the catalog YAML (config/README.md documents the keys)."""
    items: list[dict[str, Any]] = []
    for p in graph.patterns:
        item: dict[str, Any] = {"kind": p.kind, "root": p.root}
        if p.tables:
            item["tables"] = list(p.tables)
        if p.column:
            item["column"] = p.column
        if p.codes:
            item["codes"] = dict(p.codes)
        if p.description:
            item["description"] = p.description
        items.append(item)
    return yaml.safe_dump(
        {"patterns": items}, sort_keys=False, allow_unicode=True, width=100, default_flow_style=None
    )
