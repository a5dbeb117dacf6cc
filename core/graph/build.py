"""build_graph: declared and catalog edges, inferred ones, patterns, shared-key edges; cached on disk.

The cache is one JSON file per database next to the catalog's, keyed by the catalog's signature
and GRAPH_VERSION, so a changed schema or a change to inference rebuilds it.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from core.catalog import Catalog, safe_filename
from core.graph.infer import infer_edges
from core.graph.keys import is_unique
from core.graph.multigraph import GRAPH_VERSION, Edge, RelationshipGraph
from core.graph.patterns import catalog_patterns, complete_roles, detect_patterns
from core.graph.profiling import PROFILE_BUDGET_S, Profiler
from core.graph.shared_keys import shared_key_edges

log = logging.getLogger(__name__)


def _held(catalog: Catalog) -> dict[str, RelationshipGraph]:
    """The graphs built for this catalog object (catalogs are immutable, so they never go stale)."""
    return catalog.memo("relationship graphs", dict)


def graph_for(catalog: Catalog) -> RelationshipGraph:
    """The best graph already built for `catalog` — the profiled one the database uses — or, before
    there is one, a graph of its declared and catalog joins only (a guess from names could send
    the path through joins the data would reject)."""
    held = _held(catalog)
    if "profiled" in held:
        return held["profiled"]
    if "declared" not in held:
        full = build_graph(catalog)
        held["declared"] = RelationshipGraph(
            catalog=catalog,
            edges=tuple(e for e in full.edges if e.origin != "inferred"),
            patterns=full.patterns,
            stats=full.stats,
        )
    return held["declared"]


def build_graph(
    catalog: Catalog,
    engine: sa.Engine | None = None,
    *,
    cache_dir: str | Path | None = None,
    profile: bool = True,
    budget_s: float = PROFILE_BUDGET_S,
) -> RelationshipGraph:
    """The relationship graph of `catalog`; profiles values through `engine` when one is given."""
    cache_file = Path(cache_dir) / f"{safe_filename(catalog.database)}.graph.json" if cache_dir else None
    if cache_file and cache_file.is_file() and catalog.signature:
        try:
            data = json.loads(cache_file.read_text())
            if data.get("version") == GRAPH_VERSION and data.get("signature") == catalog.signature:
                graph = RelationshipGraph.from_dict(catalog, data)
                if data.get("stats", {}).get("profiled_tables"):
                    _held(catalog)["profiled"] = graph
                return graph
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("ignoring unreadable graph cache %s: %s", cache_file, exc)
    started = time.perf_counter()
    profiler = Profiler(catalog, engine, budget_s) if engine is not None and profile else None
    edges = _known_edges(catalog)
    report: Counter[str] = Counter()
    edges += infer_edges(catalog, edges, profiler, report)
    patterns = complete_roles(catalog, catalog_patterns(catalog), profiler)
    patterns += detect_patterns(catalog, edges, patterns, profiler)
    shared = shared_key_edges(catalog, edges, patterns)
    edges += shared
    stats = {
        "build_ms": round((time.perf_counter() - started) * 1000, 1),
        "declared": sum(e.origin == "declared" for e in edges),
        "catalog": sum(e.origin == "catalog" for e in edges),
        "inferred": sum(e.origin == "inferred" and not e.via for e in edges),
        "shared_key": len(shared),
        "inference": dict(sorted(report.items())),
        "profiled_tables": profiler.tables_read if profiler else 0,
        "profile_complete": profiler.complete if profiler else False,
    }
    graph = RelationshipGraph(catalog=catalog, edges=tuple(edges), patterns=tuple(patterns), stats=stats)
    if profiler is not None:
        _held(catalog)["profiled"] = graph
    if cache_file and catalog.signature:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache_file.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(graph.to_dict()))
        tmp.replace(cache_file)
    return graph


def _known_edges(catalog: Catalog) -> list[Edge]:
    """Declared and catalog relationships, with what the catalog says about key uniqueness."""
    out: list[Edge] = []
    seen: set[frozenset[Any]] = set()
    for r in catalog.relationships:
        src, ref = catalog.table(r.table), catalog.table(r.ref_table)
        if src is None or ref is None:
            continue
        edge = Edge(
            table=src.name,
            columns=tuple(r.columns),
            ref_table=ref.name,
            ref_columns=tuple(r.ref_columns),
            origin=r.origin,
            confidence=r.confidence if r.origin == "inferred" else 1.0,
            evidence=r.description,
            ref_unique=is_unique(ref, r.ref_columns),
            src_unique=is_unique(src, r.columns),
        )
        if edge.key in seen:
            continue
        seen.add(edge.key)
        out.append(edge)
    return out
