"""`python -m core.bench joins --schema insurance`: the report an engineer reads, with every count it promises."""

from __future__ import annotations

import json
import subprocess
import sys


def test_the_join_benchmark_reports_patterns_self_joins_inference_and_the_baseline():
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "core.bench",
            "joins",
            "--schema",
            "insurance",
            "--json",
            "--large-tables",
            "60",
            "--large-queries",
            "5",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    for pattern in ("subtype", "role", "role filtered", "typed fact", "parallel path", "self-join"):
        counts = result["patterns"][pattern]
        assert counts["cases"] > 0 and 0 <= counts["baseline"] <= 1 and 0 <= counts["covered"] <= 1
    assert result["self_join"] > 0 and 0 <= result["self_join_covered_instances"] <= 1
    # inference found the four undeclared keys and joined on no date, flag, amount or free text
    assert result["inference"]["kept by name"] + result["inference"].get("kept by values", 0) == 4
    assert result["inferred_on_non_key_columns"] == 0
    assert result["skipped_foreign_keys"] == 1  # claim → claims_office, a table that is not there
    text = proc.stdout
    assert "networkx approximate Steiner tree" in text and "self-joins (role-playing)" in text
    assert "pattern typed fact" in text and "inference: proposed" in text
