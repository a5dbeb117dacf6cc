"""Keyword mode's lexicon: its words as data (lexicon.yaml), checked against a schema, loaded once.

Why data: a phrasing keyword mode does not read yet is a row here and a test, never a branch in
the reader, and a reviewer can see every word it knows in one file. The file's schema is in its
own header; `parse` checks it and names the key that does not fit, and a bad file stops the import
of keyword mode rather than one question. Nothing here names a table: the schema's own words (the
keyword dictionary, the value index, the business definitions) are merged in per database when a
question is read.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from core.yaml_text import load_yaml

LEXICON_FILE = "lexicon.yaml"
OPS = (">", ">=", "<", "<=", "=", "!=")
# Each cue kind and the arguments its phrases may carry ('' for none); unsupported takes any reason.
CUE_ARGS: Mapping[str, tuple[str, ...]] = {
    "count": ("",),
    "agg": ("AVG", "SUM", "MIN", "MAX"),
    "super": ("desc", "asc"),
    "top": ("desc", "asc"),
    "group": ("",),
    "by": ("",),
    "order": ("",),
    "dir": ("desc", "asc", "young", "old"),
    "alpha": ("", "desc"),
    "cmp": OPS,
    "between": ("",),
    "date_prep": ("in", "on", "before", "after", "since", "until"),
    "relative": ("last", "this", "today", "ytd"),
    "list": ("", "wh"),
    "distinct": ("",),
    "text": ("prefix", "suffix", "contains"),
    "or": ("",),
    "and": ("",),
    "unsupported": (),
    "neg": ("", "without", "except"),
    "share": ("",),
    "det": ("",),
    "be": ("",),
    "have": ("",),
    "aux": ("",),
    "with": ("",),
    "of": ("",),
    "rel": ("",),
    "exist": ("",),
    "prep": ("",),
    "filler": ("",),
    "verb": ("",),
    "names": ("",),
}
# Kinds only the grammar reads; the first reader (core/keyword/shapes.py) reads their words as
# stop words, and negations and ratios as wording it declines (FIRST_READER).
GRAMMAR_KINDS = ("det", "be", "have", "aux", "with", "of", "rel", "exist", "prep", "filler", "verb", "names")
FIRST_READER = {"neg": ("unsupported", "a negation"), "share": ("unsupported", "a ratio")}
WORD_SETS = (
    "stop",
    "row_nouns",
    "relation_verbs",
    "fillers",
    "measure_units",
    "recent",
    "starts",
    "back",
    "follow_on",
    "pointing",
    "every_column",
    "names_only",
    "follow_on_leads",
    "verb_particles",
    "birth_words",
    "by_birth",
    "contains_after",
    "counts",
    "labels",
    "naming",
    "priced",
    "events",
    "not_year_after",
    "early_year_after",
    "number_before",
    "ratio_words",
    "ratio_links",
    "any",
    "money_units",
    "key_words",
    "date_words",
    "scopes",
    "money_words",
    "money_hints",
    "first_names",
    "last_names",
    "among",
    "infinitive",
    "sum_after",
    "rank_words",
    "noun_suffixes",
    "column_cues",
    "unplaced",
    "possessives",
    "topic_leads",
    "range_starts",
    "ages_high",
    "ages_low",
    "participle_suffixes",
    "time_questions",
)
UNITS = ("day", "week", "month", "quarter", "year")
DEFINITION_CATEGORIES = (
    "lead",
    "tail",
    "det",
    "count",
    "list",
    "group",
    "with",
    "in",
    "fiscal",
    "most",
    "top",
    "prefix",
)
DEFINITION_PATTERNS: Mapping[str, tuple[str, ...]] = {
    "year": (),
    "fiscal_year": ("year",),
    "fiscal_rule": ("year", "start", "end"),
    "value_rule": ("words", "value"),
    "said_word": ("word",),
    "clauses": (),
}
SECTIONS = (
    "version",
    "spellings",
    "symbols",
    "cues",
    "words",
    "numbers",
    "time_units",
    "buckets",
    "agents",
    "sexes",
    "implied",
    "definitions",
)


class LexiconError(ValueError):
    """The lexicon file does not fit its schema."""


@dataclass(frozen=True)
class Lexicon:
    """Every word keyword mode reads a question with, by what it does."""

    spellings: Mapping[str, str]  # typed → read as
    symbols: Mapping[str, str]  # '≥' → '>='
    cues: Mapping[tuple[str, ...], tuple[str, str]]  # phrase words → (kind, arg)
    sets: Mapping[str, frozenset[str]]  # stop, row_nouns, relation_verbs, fillers, measure_units
    numbers: Mapping[str, int]
    time_units: Mapping[str, str]  # 'days' → 'day'
    buckets: Mapping[str, str]  # 'monthly' → 'month'
    agents: Mapping[str, str]  # 'wrote' → 'writer'
    sexes: Mapping[str, str]  # 'women' → 'F'
    implied: Mapping[str, tuple[str, ...]]  # 'longest' → ('length', 'duration', 'milliseconds')
    definitions: Mapping[str, frozenset[str]]  # the definitions grammar: category → phrases (as typed)
    patterns: Mapping[str, re.Pattern[str]]

    def phrases(self, kind: str, arg: str | None = None) -> frozenset[str]:
        """The cue phrases of a kind (and argument), as typed."""
        return frozenset(
            " ".join(p) for p, (k, a) in self.cues.items() if k == kind and (arg is None or a == arg)
        )


def parse(data: Any, source: str = LEXICON_FILE) -> Lexicon:
    """The lexicon in `data` (the YAML read), checked against the schema in lexicon.yaml's header."""
    if not isinstance(data, dict) or data.get("version") != 1:
        raise LexiconError(f"{source}: expected a mapping with version: 1")
    _keys(source, "", data, SECTIONS, required=SECTIONS)
    spellings = {
        _word(source, f"spellings.{k}", k): _word(source, f"spellings.{k}", v)
        for k, v in _map(source, "spellings", data).items()
    }
    symbols = {
        _text(source, f"symbols.{op}", s): op
        for op, listed in _keys(source, "symbols", _map(source, "symbols", data), OPS).items()
        for s in _list(source, f"symbols.{op}", listed)
    }
    return Lexicon(
        spellings=spellings,
        symbols=symbols,
        cues=_cues(source, _map(source, "cues", data)),
        sets={
            name: frozenset(_word(source, f"words.{name}", w) for w in _list(source, f"words.{name}", listed))
            for name, listed in _keys(
                source, "words", _map(source, "words", data), WORD_SETS, WORD_SETS
            ).items()
        },
        numbers={
            _word(source, f"numbers.{w}", w): _number(source, f"numbers.{w}", n)
            for w, n in _map(source, "numbers", data).items()
        },
        time_units=_inverted(source, "time_units", data, UNITS),
        buckets=_inverted(source, "buckets", data, UNITS),
        agents=_inverted(source, "agents", data, None),
        sexes=_inverted(source, "sexes", data, ("F", "M")),
        implied=_implied(source, _map(source, "implied", data)),
        definitions=_definition_phrases(source, _map(source, "definitions", data)),
        patterns=_patterns(source, _map(source, "definitions", data)),
    )


def _keys(
    source: str,
    where: str,
    data: Mapping[str, Any],
    allowed: tuple[str, ...] | None,
    required: tuple[str, ...] = (),
) -> Mapping[str, Any]:
    unknown = sorted(str(k) for k in data if allowed is not None and k not in allowed)
    missing = sorted(k for k in required if k not in data)
    if unknown or missing:
        at = f"{where}: " if where else ""
        raise LexiconError(f"{source}: {at}unknown {unknown}, missing {missing}")
    return data


def _map(source: str, where: str, data: Mapping[str, Any]) -> Mapping[str, Any]:
    value = data.get(where.rsplit(".", 1)[-1]) if "." not in where else data
    if not isinstance(value, dict):
        raise LexiconError(f"{source}: {where} must be a mapping")
    return value


def _list(source: str, where: str, value: Any) -> list[Any]:
    if not isinstance(value, list) or not value:
        raise LexiconError(f"{source}: {where} must be a non-empty list")
    return value


def _text(source: str, where: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip() or value != value.strip():
        raise LexiconError(f"{source}: {where} must be text (quote on, off, yes and no), got {value!r}")
    return value


def _word(source: str, where: str, value: Any) -> str:
    """A phrase in lower case, single-spaced (how tokens are compared)."""
    text = _text(source, where, value)
    if text != text.lower() or "  " in text:
        raise LexiconError(f"{source}: {where}: {text!r} must be lower case, one space between words")
    return text


def _number(source: str, where: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise LexiconError(f"{source}: {where} must be a whole number")
    return value


def _cues(source: str, data: Mapping[str, Any]) -> Mapping[tuple[str, ...], tuple[str, str]]:
    out: dict[tuple[str, ...], tuple[str, str]] = {}
    for kind, args in _keys(source, "cues", data, tuple(CUE_ARGS)).items():
        if not isinstance(args, dict):
            raise LexiconError(f"{source}: cues.{kind} must map arguments to phrases")
        for arg, listed in args.items():
            if CUE_ARGS[kind] and arg not in CUE_ARGS[kind]:
                raise LexiconError(
                    f"{source}: cues.{kind}: unknown argument {arg!r}, expected {list(CUE_ARGS[kind])}"
                )
            for phrase in _list(source, f"cues.{kind}.{arg}", listed):
                key = tuple(_word(source, f"cues.{kind}.{arg}", phrase).split())
                if key in out:
                    raise LexiconError(
                        f"{source}: cues.{kind}.{arg}: {phrase!r} is already a {out[key][0]} cue"
                    )
                out[key] = (kind, str(arg))
    return out


def _inverted(
    source: str, section: str, data: Mapping[str, Any], keys: tuple[str, ...] | None
) -> Mapping[str, str]:
    """{key: [word, ...]} read as word → key, each word under one key only."""
    out: dict[str, str] = {}
    for key, listed in _keys(source, section, _map(source, section, data), keys).items():
        for w in _list(source, f"{section}.{key}", listed):
            word = _word(source, f"{section}.{key}", w)
            if word in out:
                raise LexiconError(f"{source}: {section}.{key}: {word!r} is already under {out[word]}")
            out[word] = str(key)
    return out


def _implied(source: str, data: Mapping[str, Any]) -> Mapping[str, tuple[str, ...]]:
    """{column word: [word, ...]} read as word → the column words it implies, in the file's order."""
    out: dict[str, list[str]] = {}
    for column, listed in data.items():
        word = _word(source, f"implied.{column}", column)
        for w in _list(source, f"implied.{column}", listed):
            out.setdefault(_word(source, f"implied.{column}", w), []).append(word)
    return {w: tuple(cs) for w, cs in out.items()}


def _definition_phrases(source: str, data: Mapping[str, Any]) -> Mapping[str, frozenset[str]]:
    phrases = _keys(source, "definitions", data, ("phrases", "patterns"), ("phrases", "patterns"))["phrases"]
    if not isinstance(phrases, dict):
        raise LexiconError(f"{source}: definitions.phrases must be a mapping")
    _keys(source, "definitions.phrases", phrases, DEFINITION_CATEGORIES, DEFINITION_CATEGORIES)
    out = {}
    for category, listed in phrases.items():
        if not isinstance(listed, list) or not all(isinstance(p, str) and p.strip() for p in listed):
            raise LexiconError(f"{source}: definitions.phrases.{category} must be a list of phrases")
        out[category] = frozenset(listed)
    return out


def _patterns(source: str, data: Mapping[str, Any]) -> Mapping[str, re.Pattern[str]]:
    patterns = data["patterns"]
    if not isinstance(patterns, dict):
        raise LexiconError(f"{source}: definitions.patterns must be a mapping")
    _keys(source, "definitions.patterns", patterns, tuple(DEFINITION_PATTERNS), tuple(DEFINITION_PATTERNS))
    compiled: dict[str, re.Pattern[str]] = {}
    for name, text in patterns.items():
        try:
            compiled[name] = re.compile(str(text), re.IGNORECASE)
        except re.error as exc:
            raise LexiconError(f"{source}: definitions.patterns.{name} does not compile: {exc}") from exc
        lacking = set(DEFINITION_PATTERNS[name]) - set(compiled[name].groupindex)
        if lacking:
            raise LexiconError(f"{source}: definitions.patterns.{name} lacks the group(s) {sorted(lacking)}")
    return compiled


@functools.cache
def lexicon() -> Lexicon:
    """The packaged lexicon, read and checked once per process."""
    text = resources.files("core.keyword").joinpath(LEXICON_FILE).read_text(encoding="utf-8")
    return parse(load_yaml(text))


WORDS = lexicon()  # a lexicon that does not fit its schema stops the import, not a question
