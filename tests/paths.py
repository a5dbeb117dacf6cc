"""Where the checkout's files are, for tests at any level of tests/ (unit, integration, e2e)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the checkout
TESTS = ROOT / "tests"
DATA = TESTS / "data"  # question sets, fixtures' files
CORPUS = TESTS / "corpus"  # the guard's attack and legitimate-query corpora
