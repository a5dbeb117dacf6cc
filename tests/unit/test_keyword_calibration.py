"""`python -m core.bench ask --mode keyword` prints how often answers of each confidence were right,
and counts as answered only what keyword mode answers at the configured threshold."""

from __future__ import annotations

import json
import sqlite3

import pytest

from core.bench.ask import main
from core.settings import load_settings


@pytest.fixture
def dataset(tmp_path):
    root = tmp_path / "bench"
    db_dir = root / "database" / "venues"
    db_dir.mkdir(parents=True)
    with sqlite3.connect(db_dir / "venues.sqlite") as con:
        con.executescript(
            """
            CREATE TABLE business (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
            CREATE TABLE checkin (
                id INTEGER PRIMARY KEY, business_id INTEGER REFERENCES business (id), count INTEGER
            );
            INSERT INTO business VALUES (1, 'Cafe Blue'), (2, 'Book Nook'), (3, 'Gym One');
            INSERT INTO checkin VALUES (1, 1, 5), (2, 1, 7), (3, 2, 2), (4, 3, 9);
            """
        )
    questions = [
        {
            "db_id": "venues",
            "question": "How many businesses are there?",
            "gold_sql": "SELECT COUNT(*) FROM business",
        },
        {
            # each check-in row carries a count: the sum is meant, keyword mode would count rows
            "db_id": "venues",
            "question": "What is the total count of check-ins for each business?",
            "gold_sql": "SELECT business.name, SUM(checkin.count) FROM checkin JOIN business "
            "ON checkin.business_id = business.id GROUP BY business.name",
        },
    ]
    (root / "questions.json").write_text(json.dumps(questions))
    return root


def run(capsys, *argv: str) -> tuple[dict, str]:
    assert main(["--mode", "keyword", "--json", "--quiet", *argv]) == 0
    captured = capsys.readouterr()
    return json.loads(captured.out.strip().splitlines()[-1]), captured.err


def test_the_reliability_table_shows_the_doubtful_answer_the_threshold_declines(dataset, capsys):
    out, printed = run(capsys, "--dataset", str(dataset))
    threshold = load_settings().engine.keyword_min_confidence
    calibration = out["calibration"]
    assert calibration["threshold"] == threshold
    assert f"threshold in use: {threshold:.2f}" in printed

    buckets = calibration["reliability"]
    assert sum(b["answered"] for b in buckets) == 2  # both readings were run and checked
    low = [b for b in buckets if b["high"] <= threshold and b["answered"]]
    assert [(b["answered"], b["wrong"]) for b in low] == [(1, 1)]  # the doubtful one was wrong

    # the figures are keyword mode's at the threshold: the doubtful reading is declined
    assert (out["answered"], out["correct"], out["wrong_rate"]) == (1, 1, 0.0)
    everything = next(r for r in calibration["tradeoff"] if r["threshold"] == 0.0)
    assert (everything["answered"], everything["wrong"]) == (2, 1)


def test_another_threshold_can_be_tried_from_the_command_line(dataset, capsys):
    out, printed = run(capsys, "--dataset", str(dataset), "--min-confidence", "0")
    assert (out["answered"], out["correct"]) == (2, 1)
    assert "threshold in use: 0.00" in printed
