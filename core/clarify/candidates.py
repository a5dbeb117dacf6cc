"""Grounded candidates: the competing readings the engine actually found in the data.

Sphinteract's LLM guesses where a question is ambiguous from the schema alone. Askbase first
looks at what retrieval, linking and the join view found, and only calls a question ambiguous
when the data shows real competition:

- AmbValue: one typed value is stored, equally well, in two columns ('Lyon' is a customer's city
  and a supplier's city; 'Singapore' a city and a country);
- AmbTableColumn: one word names two tables or columns equally well and nothing else in the
  question settles it; or the view holds one table in two roles (departure and arrival airport)
  and the question filters on that table;
- AmbOutput: the main task names an attribute that two columns of one table carry equally well.

Each candidate set lists its choices with a plain label and, where the engine can pin it, a
`Reading` (core/keyword/readings.py) as the option value, so the answer is applied exactly
rather than re-read from words. `strong` candidate sets justify asking before answering (clarify
= auto); weak ones are only shown to the LLM when it is asked anyway.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from core.catalog import Catalog
from core.clarify.transcript import options_key
from core.joins import View
from core.keyword.readings import Reading
from core.link import SCHEMA_MIN, VALUE_MIN, Linking
from core.plurals import name_phrase
from core.retrieval import Retrieval, SchemaMatch, ValueMatch

VALUE_TIE = 0.03  # two stored values this close for one typed value compete
SCHEMA_TIE = 0.02  # two schema names this close for one word compete (same kind of match only)
NAMES_TABLE = 0.95  # a word matching a table this well names the table, not one of its columns
MAX_CHOICES = 4
T = TypeVar("T")
VIA_RANK = {"choice": 0, "name": 0, "value": 0, "meaning": 1, "synonym": 1, "description": 2}


@dataclass(frozen=True)
class Choice:
    label: str  # plain words, as the button shows it
    value: str  # Reading.encode() when the engine can pin it, else the label itself
    detail: str = ""  # what it means in the schema (for the LLM): "customers.city = 'Lyon'"


@dataclass(frozen=True)
class Candidates:
    kind: str  # AmbValue | AmbTableColumn | AmbOutput
    words: str  # the words of the question the choices compete for
    choices: tuple[Choice, ...]
    strong: bool = True  # the data alone says the question cannot be answered without guessing

    @property
    def key(self) -> str:
        return options_key(c.value for c in self.choices)

    def question(self) -> str:
        """A plain question when no LLM phrases it."""
        if self.kind == "AmbValue":
            return f"Which '{self.words}' do you mean?"
        if self.kind == "AmbOutput":
            return f"What should the answer show for '{self.words}'?"
        return f"What does '{self.words}' refer to?"


def words_of(name: str) -> str:
    return name_phrase(name)


def value_label(table: str, column: str, value: str, meaning: str = "") -> str:
    what = f"{words_of(table)} {words_of(column)} is {value}"
    return f"{what} ({meaning})" if meaning and meaning.lower() != value.lower() else what


def column_label(catalog: Catalog, table: str, column: str | None) -> str:
    if column is None:
        t = catalog.table(table)
        return f"{words_of(table)}" + (f" ({t.description[:60]})" if t is not None and t.description else "")
    return f"{words_of(table)} {words_of(column)}"


def find_candidates(
    retrieval: Retrieval,
    linking: Linking,
    view: View | None,
    catalog: Catalog,
    *,
    main_task: str = "",
    pinned: Sequence[Reading] = (),
) -> list[Candidates]:
    """Every set of competing readings, strongest first; words the person already settled are skipped."""
    settled = {r.words.casefold() for r in pinned}
    needed = _needed_tables(retrieval)
    found: list[Candidates] = []
    found.extend(_value_ties(retrieval, needed, settled))
    found.extend(_schema_ties(retrieval, linking, catalog, settled, main_task))
    if view is not None:
        found.extend(_role_ties(retrieval, view, settled))
    unique: dict[str, Candidates] = {}
    for c in found:
        if len(c.choices) >= 2:
            unique.setdefault(c.key, c)
    return sorted(unique.values(), key=lambda c: not c.strong)


def _needed_tables(retrieval: Retrieval) -> set[str]:
    """Tables the question's object words name without doubt (what settles a value's table)."""
    return {
        m.table
        for m in retrieval.schema
        if m.column is None and m.score >= NAMES_TABLE and VIA_RANK.get(m.via, 2) <= 1
    }


def _value_ties(retrieval: Retrieval, needed: set[str], settled: set[str]) -> list[Candidates]:
    by_word: dict[str, list[ValueMatch]] = {}
    for m in retrieval.values:
        if m.score >= VALUE_MIN and m.keyword.casefold() not in settled:
            by_word.setdefault(m.keyword.casefold(), []).append(m)
    out = []
    for matches in by_word.values():
        matches.sort(key=lambda m: -m.score)
        best = matches[0].score
        close: dict[tuple[str, str], ValueMatch] = {}
        for m in matches:
            if best - m.score <= VALUE_TIE:
                close.setdefault((m.table, m.column), m)
        if len(close) < 2:
            continue
        tied = list(close.values())
        # A value in a table the question names settles it ('active clients': client.status).
        in_needed = [m for m in tied if m.table in needed]
        if len(in_needed) == 1:
            continue
        tied = in_needed or tied
        if len(tied) < 2:
            continue
        choices = tuple(
            Choice(
                label=value_label(m.table, m.column, m.value, m.meaning),
                value=Reading(words=m.keyword, table=m.table, column=m.column, value=m.value).encode(),
                detail=f"{m.table}.{m.column} = '{m.value}'",
            )
            for m in tied[:MAX_CHOICES]
        )
        out.append(Candidates("AmbValue", tied[0].keyword, choices, strong=True))
    return out


def _schema_ties(
    retrieval: Retrieval, linking: Linking, catalog: Catalog, settled: set[str], main_task: str
) -> list[Candidates]:
    by_word: dict[str, list[SchemaMatch]] = {}
    for m in retrieval.schema:
        if m.score >= SCHEMA_MIN and m.keyword.casefold() not in settled:
            by_word.setdefault(m.keyword, []).append(m)
    ambiguous = {k.casefold() for k in linking.ambiguous}
    task = main_task.casefold()
    out = []
    for word, matches in by_word.items():
        matches.sort(key=lambda m: (-m.score, VIA_RANK.get(m.via, 2)))
        best = matches[0]
        if word.casefold() in ambiguous:
            # Tables tie for the word and no other word of the question settles which.
            tied = _distinct(
                [m for m in matches if _ties(best, m)], key=lambda m: (m.table, m.column), limit=MAX_CHOICES
            )
            if len({m.table for m in tied}) >= 2:
                out.append(Candidates("AmbTableColumn", word, _column_choices(catalog, word, tied), True))
            continue
        if any(m.column is None and m.score >= NAMES_TABLE for m in matches):
            continue  # the word names a table
        # Two columns of one table carry the word equally well ('date': signup or birth date).
        same = _distinct(
            [m for m in matches if m.column and m.table == best.table and _ties(best, m)],
            key=lambda m: m.column,
            limit=MAX_CHOICES,
        )
        if len(same) >= 2 and best.column:
            kind = "AmbOutput" if word.casefold() in task else "AmbTableColumn"
            out.append(Candidates(kind, word, _column_choices(catalog, word, same), strong=False))
    return out


def _ties(best: SchemaMatch, other: SchemaMatch) -> bool:
    return best.score - other.score <= SCHEMA_TIE and VIA_RANK.get(best.via, 2) == VIA_RANK.get(other.via, 2)


def _distinct(items: Iterable[T], key: Callable[[T], Hashable], limit: int) -> list[T]:
    seen: set[Hashable] = set()
    out: list[T] = []
    for item in items:
        k = key(item)
        if k not in seen:
            seen.add(k)
            out.append(item)
    return out[:limit]


def _column_choices(catalog: Catalog, word: str, matches: Sequence[SchemaMatch]) -> tuple[Choice, ...]:
    return tuple(
        Choice(
            label=column_label(catalog, m.table, m.column),
            value=Reading(words=word, table=m.table, column=m.column).encode(),
            detail=f"{m.table}.{m.column}" if m.column else m.table,
        )
        for m in matches
    )


def role_groups(view: View) -> dict[str, list[str]]:
    """Tables the view holds in several roles: table → aliases (one per role)."""
    groups: dict[str, list[str]] = {}
    for s in view.steps:
        if s.role:
            groups.setdefault(s.table, []).append(s.alias)
    return {t: a for t, a in groups.items() if len(a) > 1}


def _role_ties(retrieval: Retrieval, view: View, settled: set[str]) -> list[Candidates]:
    """A value of a table the view holds twice (two roles): which role does the question mean?"""
    groups = role_groups(view)
    if not groups:
        return []
    out = []
    seen: set[str] = set()
    for m in retrieval.values:
        word = m.keyword.casefold()
        if m.table not in groups or m.score < VALUE_MIN or word in seen or word in settled:
            continue
        seen.add(word)
        choices = []
        for alias in groups[m.table][:MAX_CHOICES]:
            col = next((c for c in view.columns if c.alias == alias and c.column == m.column), None)
            if col is None:
                continue
            label = f"{words_of(alias)} {words_of(m.column)} is {m.value}"
            choices.append(Choice(label=label, value=label, detail=f"{col.name} = '{m.value}'"))
        if len(choices) >= 2:
            out.append(Candidates("AmbTableColumn", m.keyword, tuple(choices), strong=True))
    return out


def pin(retrieval: Retrieval, readings: Sequence[Reading]) -> Retrieval:
    """Retrieval with the person's chosen readings as the only matches of their words.

    The LLM pipeline then links the chosen table (a supplier's city brings `suppliers` into the
    view) and tells the SQL writer the chosen stored value, exactly as keyword mode pins it.
    """
    if not readings:
        return retrieval
    schema, values = list(retrieval.schema), list(retrieval.values)
    for r in readings:
        word = r.words.casefold()
        if r.value is not None and r.column:
            values = [m for m in values if m.keyword.casefold() != word]
            values.insert(0, ValueMatch(r.words, r.table, r.column, r.value, 1.0, via="choice"))
        else:
            schema = [m for m in schema if m.keyword.casefold() != word]
            schema.insert(0, SchemaMatch(r.words, r.table, r.column, 1.0, via="choice"))
    return Retrieval(schema=schema, values=values, descriptions=retrieval.descriptions, notes=retrieval.notes)
