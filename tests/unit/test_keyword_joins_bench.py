"""`python -m core.bench keyword_joins`: keyword mode's join rules judged against gold joins."""

from __future__ import annotations

import json
import sqlite3

from core.bench.keyword_joins import main

SCHOOL = """
CREATE TABLE department (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE student (id INTEGER PRIMARY KEY, name TEXT, dept_id INTEGER REFERENCES department (id));
CREATE TABLE course (id INTEGER PRIMARY KEY, title TEXT, dept_id INTEGER REFERENCES department (id));
CREATE TABLE enroll (
    student_id INTEGER REFERENCES student (id), course_id INTEGER REFERENCES course (id),
    PRIMARY KEY (student_id, course_id)
);
"""


def test_the_rules_keep_a_single_key_join_and_decline_two_keys_to_one_table(tmp_path, capsys):
    db = tmp_path / "database" / "school"
    db.mkdir(parents=True)
    with sqlite3.connect(db / "school.sqlite") as conn:
        conn.executescript(SCHOOL)
    gold = tmp_path / "gold.sql"
    gold.write_text(
        "SELECT T1.name FROM student AS T1 JOIN department AS T2 ON T1.dept_id = T2.id\tschool\n"
        "SELECT T1.name FROM student AS T1 JOIN enroll AS T2 ON T1.id = T2.student_id "
        "JOIN course AS T3 ON T2.course_id = T3.id JOIN department AS T4 ON T3.dept_id = T4.id "
        "WHERE T4.name = 'Physics'\tschool\n"
    )
    assert main(["--db-dir", str(tmp_path / "database"), "--gold", str(gold), "--json"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["cases"] == 2
    assert out["agrees_declined"] + out["differs_declined"] == 1  # the department reached two ways
    assert any("another key" in reason for reason in out["reasons"])
