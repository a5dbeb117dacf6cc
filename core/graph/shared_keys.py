"""Shared-key edges: a table that references a supertype joins its subtypes directly, on the key.

policy.policy_id *is* an agreement_id (a subtype: its primary key is a foreign key to the
supertype's). So agreement_party_role.agreement_id = policy.policy_id is a join in its own right:
the roles of policies, without passing through agreement. Without these edges the tree would
have to go through the supertype, and a shorter but wrong path elsewhere could win (C5).

A shared-key edge costs a little more than one real edge, so when the supertype is in the view
anyway the real edges are used.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.catalog import Catalog, Pattern
from core.graph.multigraph import SUBTYPE_KINDS, Edge


def shared_key_edges(catalog: Catalog, edges: Sequence[Edge], patterns: Sequence[Pattern]) -> list[Edge]:
    """X → supertype U and subtype S → U on U's key: the edge X → S, with X's columns and S's key."""
    by_ref: dict[str, list[Edge]] = {}
    for e in edges:
        if not e.is_self and e.ref_unique:
            by_ref.setdefault(e.ref_table.lower(), []).append(e)
    present = {e.key for e in edges}
    out: list[Edge] = []
    for p in patterns:
        if p.kind not in SUBTYPE_KINDS:
            continue
        parent = p.root.lower()
        family = {parent, *(t.lower() for t in p.tables)}
        for child in p.tables:
            for link in by_ref.get(parent, []):
                if link.table.lower() != child.lower() or not link.src_unique or not _trusted(link):
                    continue
                key = [c.lower() for c in link.ref_columns]
                for e in by_ref.get(parent, []):
                    if (
                        e.table.lower() in family
                        or not _trusted(e)
                        or sorted(c.lower() for c in e.ref_columns) != sorted(key)
                    ):
                        continue
                    order = [key.index(c.lower()) for c in e.ref_columns]
                    edge = Edge(
                        table=e.table,
                        columns=e.columns,
                        ref_table=link.table,
                        ref_columns=tuple(link.columns[i] for i in order),
                        origin=e.origin if link.origin != "inferred" else "inferred",
                        confidence=min(e.confidence, link.confidence),
                        evidence=f"{link.table} shares the key of {p.root}, which {e.table} references",
                        ref_unique=True,
                        src_unique=e.src_unique,
                        via=p.root,
                    )
                    if edge.key not in present:
                        present.add(edge.key)
                        out.append(edge)
    return out


def _trusted(e: Edge) -> bool:
    return e.origin != "inferred" or e.confidence >= 0.85
