"""Keyword mode's lexicon (core/keyword/lexicon.yaml): one data file, checked against its schema on
load, that every reader of a question takes its words from — cue phrases, comparison signs,
spellings of common words, word sets, numbers, time units and the definitions grammar's words."""

from __future__ import annotations

import copy
import fnmatch
import tomllib
from typing import Any

import pytest
import yaml

from core.keyword import lexicon as lexicon_module
from core.keyword.lexicon import LEXICON_FILE, WORDS, LexiconError, parse
from core.keyword.shapes import CUES, read_shape, tokenize
from core.settings import ROOT

RAW = yaml.safe_load((ROOT / "core" / "keyword" / LEXICON_FILE).read_text())


def test_the_lexicon_ships_as_package_data():
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert any(fnmatch.fnmatch(LEXICON_FILE, pattern) for pattern in package_data["core.keyword"])


def test_the_packaged_lexicon_loads_and_fits_its_schema():
    assert lexicon_module.lexicon() is WORDS
    assert WORDS.cues[("how", "many")] == ("count", "")
    assert WORDS.cues[("at", "least")] == ("cmp", ">=")
    assert "on" in WORDS.definitions["with"]  # quoted in the file: YAML would read a bare on as true
    assert set(CUES) <= set(WORDS.cues)  # the first reader's cue table is the lexicon's


def _changed(path: str, value: Any) -> dict[str, Any]:
    data = copy.deepcopy(RAW)
    *parents, last = path.split(".")
    node = data
    for key in parents:
        node = node[key]
    if value is None:
        del node[last]
    else:
        node[last] = value
    return data


@pytest.mark.parametrize(
    "path, value, problem",
    [
        ("version", 2, "version: 1"),
        ("colours", {"red": ["crimson"]}, "unknown ['colours']"),
        ("spellings", None, "missing ['spellings']"),
        ("cues.count", {"": ["How Many"]}, "must be lower case"),
        ("cues.cmp", {">>": ["much more than"]}, "cues.cmp: unknown argument '>>'"),
        ("cues.list", {"": ["how many"]}, "'how many' is already a count cue"),
        ("cues.date_prep", {True: ["on"]}, "unknown argument True"),  # a bare on in YAML
        ("symbols.~", ["~"], "symbols: unknown ['~']"),
        ("words.stop", [], "words.stop must be a non-empty list"),
        ("numbers.dozen", "12", "numbers.dozen must be a whole number"),
        ("time_units.fortnight", ["fortnight"], "time_units: unknown ['fortnight']"),
        ("definitions.phrases.colour", ["red"], "definitions.phrases: unknown ['colour']"),
        ("definitions.patterns.year", "(19", "definitions.patterns.year does not compile"),
        (
            "definitions.patterns.fiscal_rule",
            "fiscal (?P<year>\\d{4})",
            "lacks the group(s) ['end', 'start']",
        ),
    ],
)
def test_a_lexicon_that_does_not_fit_is_refused_naming_the_key(path, value, problem):
    with pytest.raises(LexiconError) as info:
        parse(_changed(path, value), "lexicon.yaml")
    assert str(info.value).startswith("lexicon.yaml") and problem in str(info.value)


@pytest.mark.parametrize(
    "sign, op", [(">", ">"), ("≥", ">="), (">=", ">="), ("≤", "<="), ("<>", "!="), ("≠", "!=")]
)
def test_a_comparison_sign_is_read_as_its_comparison_never_dropped(sign, op):
    shape = read_shape(f"hosts with memory {sign} 1024")
    assert [(c.kind, c.arg) for c in shape.cues if c.kind == "cmp"] == [("cmp", op)]


@pytest.mark.parametrize("typed, read", [("teh", "the"), ("hwo", "how"), ("mnay", "many"), ("waht", "what")])
def test_a_typo_of_a_common_word_is_read_as_the_word(typed, read):
    assert [t.low for t in tokenize(f"{typed} clients")] == [read, "clients"]
