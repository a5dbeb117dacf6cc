"""Benchmarks: `python -m core.bench joins|values|ask|clarify|verified ...`; each prints figures and a baseline."""
