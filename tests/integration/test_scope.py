"""What the SQL writer sees: the whole schema when it fits the budget, a recall-first pruned one
when it does not — and how the writer's reply is read, whatever shape it comes in."""

from __future__ import annotations

import re
import sqlite3

import pytest

from core.askbase import Askbase
from core.execute import ResultSet
from core.generate import ALTERNATIVE, PRIMARY, Candidate, read_draft
from core.judge import _index
from core.llm import LLM, Completion, LLMBadReply, LLMRefused
from core.run import Run
from core.schema_text import ASKBASE, estimated_tokens, schema_text
from core.select import Tried, select
from tests.fakes import model_replies as mr

NO_PAYMENT_IN_MUNICH = (
    "SELECT c.name FROM client c JOIN location l ON l.id = c.loc_id WHERE l.city = 'München' "
    "AND NOT EXISTS (SELECT 1 FROM payment p WHERE p.client_id = c.id)"
)


def test_the_whole_schema_is_shown_when_it_fits_the_budget(settings, llm_settings, fake_llm):
    app = Askbase(settings, llm=LLM(llm_settings))
    fake_llm.respond("generate", mr.writing("SELECT COUNT(*) FROM client"))
    outcome = app.ask("How many clients are there?")
    scope = next(s for s in outcome.trace.stages if s.name == "scope")
    assert scope.outputs["whole_schema"] and not scope.outputs["used_llm"]
    system = fake_llm.calls("generate")[0].system
    db = app.database("demo")
    assert all(re.search(rf'CREATE TABLE "?{t.name}"? \(', system) for t in db.catalog.tables)
    assert [r.task for r in fake_llm.requests] == ["generate"]  # no linking call below the budget
    app.close()


def test_above_the_budget_the_schema_is_pruned_for_recall(settings, llm_settings, fake_llm, demo_var):
    small = settings.model_copy(
        update={"engine": settings.engine.model_copy(update={"schema_token_budget": 900})}
    )
    app = Askbase(small, llm=LLM(llm_settings))
    db = app.database("demo")
    assert estimated_tokens(db, ASKBASE) > 900
    # the linker names too little (only the clients): what the question's words hit stays anyway
    fake_llm.script("link", mr.json_fenced({"tables": ["client"]}))
    fake_llm.respond("generate", mr.writing(NO_PAYMENT_IN_MUNICH))
    outcome = app.ask("Which clients in munchen have no payment?")
    assert outcome.status == "answer", outcome.error
    with sqlite3.connect(demo_var / "demo.sqlite") as conn:
        assert sorted(map(list, outcome.rows)) == sorted(map(list, conn.execute(NO_PAYMENT_IN_MUNICH)))
    scope = next(s for s in outcome.trace.stages if s.name == "scope")
    assert not scope.outputs["whole_schema"] and scope.outputs["used_llm"]
    shown = set(scope.outputs["shown"])
    assert {"client", "payment", "location"} <= shown  # words and values hit them: never dropped
    assert len(shown) < len(db.catalog.tables)
    system = fake_llm.calls("generate")[0].system
    assert "CREATE TABLE payment (" in system and "CREATE TABLE runtime_cpu (" not in system
    assert [r.task for r in fake_llm.requests] == ["link", "generate"]  # two calls above the budget
    app.close()


def test_a_pruned_schema_text_holds_only_its_tables_and_their_joins(demo_db, settings):
    text = schema_text(demo_db, settings.engine, ASKBASE, ["client", "location"])
    assert "CREATE TABLE client (" in text and "CREATE TABLE location (" in text
    assert "CREATE TABLE payment (" not in text
    # the join between them (the type as the engine names it: INTEGER on SQLite, BIGINT on DuckDB)
    assert re.search(r"loc_id (INTEGER|BIGINT) NOT NULL REFERENCES location\(id\)", text)
    assert "'ACT' active" in text  # what the catalog says a code means


def test_understanding_as_a_separate_call_still_works(settings, llm_settings, fake_llm):
    separate = settings.model_copy(
        update={"engine": settings.engine.model_copy(update={"understand": "separate"})}
    )
    app = Askbase(separate, llm=LLM(llm_settings))
    fake_llm.script("understand", mr.json_fenced(mr.understanding("Count the clients", [], ["clients"])))
    fake_llm.respond("generate", mr.writing("SELECT COUNT(*) FROM client"))
    outcome = app.ask("How many clients are there?")
    assert outcome.status == "answer" and [r.task for r in fake_llm.requests] == ["understand", "generate"]
    app.close()


# ---------------------------------------------------------------- reading the writer's reply


def completion(text: str, finish: str = "stop") -> Completion:
    return Completion(text=text, model="m", finish_reason=finish)


def test_two_labelled_blocks_with_prose_and_reasoning_are_two_candidates():
    text = (
        "<think>Clients without payments: anti-join.</think>\n**Task:** clients with no payment\n"
        "**Plan:** client NOT EXISTS payment\n\nHere you go:\n"
        "```sql\n-- primary\nSELECT name FROM client c WHERE NOT EXISTS (SELECT 1 FROM payment p WHERE p.client_id = c.id);\n```\n"
        "And another way:\n```SQL\n-- alternative: same reading\nSELECT c.name FROM client c LEFT JOIN payment p ON p.client_id = c.id WHERE p.id IS NULL\n```\n"
        "Both should return the same clients."
    )
    draft = read_draft(completion(text))
    assert [c.label for c in draft.candidates] == [PRIMARY, ALTERNATIVE]
    assert draft.candidates[0].sql.endswith("c.id)") and "LEFT JOIN" in draft.candidates[1].sql
    assert draft.task == "clients with no payment" and "NOT EXISTS" in draft.plan
    assert not draft.candidates[1].reading


def test_the_other_reading_is_read_from_the_label_and_a_repeat_is_one_candidate():
    text = mr.candidates("SELECT 1", "SELECT 2", reading="orders whose supplier is in Lyon")
    draft = read_draft(completion(text))
    assert draft.candidates[1].reading == "orders whose supplier is in Lyon"
    same = read_draft(completion(mr.candidates("SELECT COUNT(*) FROM t", "select count(*)   from t")))
    assert len(same.candidates) == 1


def test_a_reply_cut_off_mid_block_keeps_only_the_whole_candidate():
    text = mr.candidates("SELECT a FROM t", "SELECT b FROM t WHERE")
    cut = text[: text.index("WHERE") + 5]
    draft = read_draft(completion(cut, finish="length"))
    assert [c.sql for c in draft.candidates] == ["SELECT a FROM t"] and draft.cut
    # cut inside the only block: it is all there is, and the run will say what is wrong
    only = read_draft(completion("```sql\nSELECT a FROM", finish="length"))
    assert only.candidates[0].sql == "SELECT a FROM"


def test_no_query_at_all_is_a_bad_reply_and_a_refusal_is_a_refusal():
    with pytest.raises(LLMBadReply):
        read_draft(completion("Task: count\nPlan: I would count the rows."))
    with pytest.raises(LLMRefused):
        read_draft(completion(mr.REFUSAL))
    bare = read_draft(completion('{"sql": "SELECT 1"}'))
    assert bare.candidates == (Candidate(sql="SELECT 1", note='{"sql": "SELECT 1"}'),)


# ---------------------------------------------------------------- choosing by running


def tried(label: str, rows=None, error: bool = False) -> Tried:
    from core.execute import QueryError

    if error:
        run = Run(sql="x", error=QueryError("no such table: x", "syntax"))
    else:
        run = Run(sql="x", result=ResultSet(columns=("n",), rows=rows or []))
    return Tried(Candidate(sql=label, label=label), run)


def test_selection_rules():
    assert select([tried("a", [(1,), (2,)]), tried("b", [(2,), (1,)])]).decision == "agree"
    assert select([tried("a", [(1,)]), tried("b", [(2,)])]).decision == "disagree"
    one = select([tried("a", error=True), tried("b", [(3,)])])
    assert one.decision == "one" and one.chosen.candidate.label == "b"
    empty = select([tried("a", []), tried("b", [(5,)])])
    assert empty.decision == "one" and empty.chosen.candidate.label == "b"
    assert select([tried("a", []), tried("b", error=True)]).decision == "vacuous"
    assert select([tried("a", error=True), tried("b", error=True)]).decision == "failed"
    assert select([tried("a", [(0,)])]).decision == "vacuous"


def test_the_judges_choice_is_read_however_it_is_written():
    assert [_index(x, 2) for x in ("A", "b", "Query B", 2, "1", "neither", 7)] == [0, 1, 1, 1, 0, 0, 0]


def test_labels_outside_the_blocks_and_a_primary_given_second_are_read():
    text = (
        "Task: orders from Lyon\n\n**Alternative** (other reading: the supplier's city):\n"
        "```sql\nSELECT 2\n```\n\n**Primary:**\n```sql\nSELECT 1\n```\n"
    )
    draft = read_draft(completion(text))
    assert [(c.label, c.sql) for c in draft.candidates] == [(PRIMARY, "SELECT 1"), (ALTERNATIVE, "SELECT 2")]
    assert draft.candidates[1].reading == "the supplier's city"


def test_per_month_does_not_join_a_table_whose_column_is_called_month(settings, llm_settings, fake_llm):
    # usage.month is a column named like the calendar unit: joining usage to payments would
    # repeat every payment once per usage month, and the recipe would hand the writer that join
    app = Askbase(settings, llm=LLM(llm_settings))
    sql = "SELECT strftime('%Y-%m', p.paid_on) AS month, SUM(a.amount) FROM payment p JOIN payment_amount a ON a.payment_id = p.id GROUP BY 1"
    fake_llm.respond("generate", mr.writing(sql))
    outcome = app.ask("Total payment amount per month in 2025")
    assert outcome.status == "answer", outcome.error
    system = fake_llm.calls("generate")[0].system
    recipe = system.split("### Join recipe")[1].split("###")[0] if "### Join recipe" in system else ""
    assert '"usage"' not in recipe and "usage." not in recipe
    app.close()


def test_a_word_that_says_what_to_compute_does_not_join_the_column_it_is_a_synonym_of(
    settings, llm_settings, fake_llm
):
    # 'total' is a synonym of payment_amount.amount in the demo's catalog; in 'the highest total
    # usage cost' it is a sum, and a recipe through payments repeats each usage row per payment
    app = Askbase(settings, llm=LLM(llm_settings))
    sql = (
        "SELECT c.name, SUM(u.cost) AS total FROM usage u JOIN client c ON c.id = u.client_id "
        "GROUP BY c.id ORDER BY total DESC LIMIT 3"
    )
    fake_llm.respond("generate", mr.writing(sql))
    outcome = app.ask("Which 3 clients have the highest total usage cost?")
    assert outcome.status == "answer", outcome.error
    system = fake_llm.calls("generate")[0].system
    recipe = system.split("### Join recipe")[1].split("###")[0] if "### Join recipe" in system else ""
    assert "payment" not in recipe
    app.close()
