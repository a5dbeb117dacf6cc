"""What an import brought (dbt, OSI), what it left out and why, and which of it fits the schema.

Why a report and not an error: a dbt project or an OSI file holds many definitions, written for
a warehouse that may not match this database today (a model not built here, a column renamed)
or in a form a definition cannot say (a cumulative metric, a join through two hops). The data
team needs to see every one that was left out, with the reason, and still get the rest — while
nothing that does not fit the schema is ever stored, so it cannot mislead an answer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace

from core.catalog import Catalog
from core.definitions.check import _label, check
from core.definitions.model import Definition, Definitions
from core.guard import GuardPolicy


@dataclass(frozen=True)
class Skipped:
    """One thing an import did not bring, and why, in words the data team can act on."""

    what: str  # the dbt unique_id, the OSI element ("metric 'avg orders'")
    reason: str

    def __str__(self) -> str:
        return f"{self.what}: {self.reason}"


@dataclass(frozen=True)
class Imported:
    """The definitions an import read, and what it skipped."""

    definitions: tuple[Definition, ...] = ()
    skipped: tuple[Skipped, ...] = ()

    def summary(self) -> str:
        """'3 metrics, 2 entities, 1 relationship' — what a person reads first."""
        plural = {
            "entity": "entities",
            "metric": "metrics",
            "filter": "filters",
            "relationship": "relationships",
            "instruction": "instructions",
        }
        counts = Counter(d.kind for d in self.definitions)
        parts = [f"{n} {kind if n == 1 else plural[kind]}" for kind, n in counts.items()]
        return ", ".join(parts) or "no definitions"

    def plus(self, skipped: Iterable[Skipped]) -> Imported:
        return replace(self, skipped=(*self.skipped, *skipped))


def fitting(
    imported: Imported, catalog: Catalog, policy: GuardPolicy | None, others: Iterable[Definition] = ()
) -> Imported:
    """The imported definitions that fit the schema (core/definitions/check.py) beside the
    database's `others`; each one that does not is moved to `skipped` with the check's words.

    Checked again after each round of removals: a ratio whose numerator did not fit no longer
    names a defined metric, and must go too.
    """
    context = tuple(others)
    kept = list(imported.definitions)
    skipped = list(imported.skipped)
    while kept:
        problems = check(Definitions((*context, *kept)), catalog, policy)
        bad: dict[int, str] = {}
        for i, d in enumerate(kept):
            label = f"{_label(d)}: "
            found = next((p for p in problems if p.startswith(label)), None)
            if found is not None:
                bad[i] = found[len(label) :]
        if not bad:
            break
        skipped.extend(Skipped(_what(kept[i]), reason) for i, reason in bad.items())
        kept = [d for i, d in enumerate(kept) if i not in bad]
    return Imported(tuple(kept), tuple(skipped))


def _what(d: Definition) -> str:
    origin = d.provenance.origin
    return f"{d.kind} '{d.name}'" + (f" ({origin})" if origin else "")
