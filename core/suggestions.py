"""Questions to suggest for a database: what people can ask it, in their own words.

First the catalog's own `examples` (written by whoever knows the data), then questions people
asked and confirmed with 👍 (core/state/feedback.py), and only when both give fewer than three, questions
built from the catalog: a table whose column has documented values ("How many clients are there
per segment?"), then plain counts of its documented tables. Every suggestion names
real tables and columns of that database — never a generic "What can you do?". Pure; the chat
adapters show them (Slack's assistant panel, App Home; Teams' suggested actions).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from core.catalog import Catalog, Table
from core.plurals import plural
from core.result_shape import humanize

DEFAULT_LIMIT = 4
ENOUGH = 3  # written questions below this are topped up with built ones
MAX_QUESTION = 120


def _plural(table: Table) -> str:
    """'business_category' → 'business categories'; a name in the plural already stays."""
    return plural(humanize(table.name).lower())


def _built(catalog: Catalog) -> list[str]:
    """Questions the catalog itself supports: counts per documented category, then plain counts,
    biggest documented tables first."""
    documented = sorted((t for t in catalog.tables if t.description), key=lambda t: -(t.row_estimate or 0))
    by_category: list[str] = []
    for table in documented:
        coded = next(
            (c for c in table.columns if c.values and not c.primary_key and 2 <= len(c.values) <= 12), None
        )
        if coded is not None:
            by_category.append(f"How many {_plural(table)} are there per {humanize(coded.name).lower()}?")
    counts = [f"How many {_plural(t)} are there?" for t in documented]
    return by_category + counts


def example_questions(
    catalog: Catalog, confirmed: Iterable[str] = (), limit: int = DEFAULT_LIMIT
) -> list[str]:
    """Up to `limit` distinct questions for `catalog`'s database, the catalog's own first."""
    out: list[str] = []
    seen: set[str] = set()

    def take(questions: Sequence[str] | Iterable[str]) -> None:
        for question in questions:
            text = " ".join(str(question).split())
            key = text.lower().rstrip("?. ")
            if not text or key in seen or len(text) > MAX_QUESTION or len(out) >= limit:
                continue
            seen.add(key)
            out.append(text)

    take(catalog.examples)
    take(confirmed)
    if len(out) < min(ENOUGH, limit):  # questions people wrote beat built ones; top up only when few
        enough = min(ENOUGH, limit)
        for question in _built(catalog):
            if len(out) >= enough:
                break
            take([question])
    return out
