"""Benchmarks: `python -m core.bench joins|values|ask|clarify ...`; each prints figures and a baseline."""
