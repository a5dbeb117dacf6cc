"""Payloads are found in replies shaped like real models' output."""

import pytest

from core.replies import RefusalError, ReplyError, extract_json, extract_sql
from tests.fakes import model_replies as mr

OBJ = mr.understanding(
    "Count the clients", ["Keep clients in Berlin"], ["clients"], [("equal to", "city is Berlin", "Berlin")]
)


@pytest.mark.parametrize(
    "shape",
    [
        mr.json_fenced,
        mr.json_reasoning_first,
        mr.json_with_prose,
        mr.json_python_style,
        lambda o: __import__("json").dumps(o),
    ],
)
def test_json_found_in_every_common_shape(shape):
    assert extract_json(shape(OBJ)) == OBJ


def test_truncated_json_is_closed_keeping_complete_members():
    data = extract_json(mr.json_truncated(OBJ))
    assert data["main_task"] == ["Count the clients"]


def test_trailing_commas_tolerated():
    assert extract_json('{"tables": ["client", "payment",],}') == {"tables": ["client", "payment"]}


def test_reasoning_json_is_ignored_in_favour_of_the_final_object():
    text = '<think>maybe {"tables": ["wrong"]}</think> {"tables": ["client"]}'
    assert extract_json(text) == {"tables": ["client"]}


def test_last_json_object_wins_when_model_drafts_first():
    text = 'Draft: {"tables": ["a"]}\nOn reflection: {"tables": ["client", "payment"]}'
    assert extract_json(text) == {"tables": ["client", "payment"]}


def test_refusal_is_recognised():
    with pytest.raises(RefusalError):
        extract_json(mr.REFUSAL)
    with pytest.raises(RefusalError):
        extract_sql(mr.REFUSAL)


def test_no_json_explains_itself():
    with pytest.raises(ReplyError, match="no JSON"):
        extract_json("The answer is forty-two.")
    with pytest.raises(ReplyError, match="empty"):
        extract_json("   ")


SQL = "SELECT COUNT(*) FROM v WHERE location_city = 'Berlin'"


@pytest.mark.parametrize("shape", [mr.sql_fenced, mr.sql_bare, mr.sql_in_prose])
def test_sql_found_in_every_common_shape(shape):
    assert extract_sql(shape(SQL)) == SQL


def test_last_sql_fence_is_the_final_answer():
    text = f"First try:\n```sql\nSELECT 1\n```\nBetter:\n```sql\n{SQL}\n```"
    assert extract_sql(text) == SQL


def test_sql_in_json_field():
    assert extract_sql('{"reasoning": "count", "sql": "SELECT 1;"}') == "SELECT 1"


def test_multiline_bare_sql_keeps_clauses_after_blank_lines():
    text = "SELECT a\nFROM v\n\nWHERE b = 1\n\nThis returns a."
    assert extract_sql(text) == "SELECT a\nFROM v\n\nWHERE b = 1"


def test_reasoning_block_sql_is_not_taken():
    text = "<think>SELECT * FROM wrong</think>\n```sql\nSELECT 2\n```"
    assert extract_sql(text) == "SELECT 2"
