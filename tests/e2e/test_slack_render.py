"""Block Kit rendering: what a person sees, always inside Slack's limits whatever the result."""

from __future__ import annotations

import datetime as dt
import json
import threading
from dataclasses import replace

from bot.failures import failure_of
from bot.slack import render
from bot.slack.files import csv_bytes
from core.answer import Clarification, Option, Outcome
from core.conversation.queue import AnswerQueue, Position
from core.pipeline import NO_LLM_NOTE
from core.summary import present
from core.trace import Trace
from tests.slack_harness import read_csv


def texts(node) -> list[str]:
    found = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "text" and isinstance(value, str):
                found.append(value)
            else:
                found.extend(texts(value))
    elif isinstance(node, list):
        for item in node:
            found.extend(texts(item))
    return found


def within_limits(message: render.Message) -> None:
    assert len(message.blocks) <= 50
    assert all(len(t) <= 3000 for t in texts(message.blocks))
    tables = [b for b in message.blocks if b["type"] in ("table", "data_table")]
    assert len(tables) <= 1
    for table in tables:
        assert len(table["rows"]) <= (100 if table["type"] == "table" else 101)
        assert all(len(row) <= 20 for row in table["rows"])
        assert sum(len(c["text"]) for row in table["rows"] for c in row) <= 10_000
        assert all(c["text"] for row in table["rows"] for c in row)  # Slack refuses empty cells


def outcome(columns, rows, **kw) -> Outcome:
    return Outcome(
        status="answer",
        question="q?",
        database="demo",
        answer="The answer.",
        columns=tuple(columns),
        rows=rows,
        **kw,
    )


def test_a_huge_wide_result_stays_within_slack_limits_and_asks_for_the_csv():
    columns = [f"column_{i}" for i in range(30)]
    rows = [tuple("x" * 500 if j % 3 else i * j for j in range(30)) for i in range(5000)]
    for style in render.STYLES:
        message = render.answer_message(outcome(columns, rows, truncated=True), table_rows=99, style=style)
        within_limits(message)
        assert message.wants_csv
        note = " ".join(texts(message.blocks))
        assert "5,000 rows" in note and "cut" in note
        if style.table != "text":
            assert "10 more columns" in note


def test_the_table_shows_the_first_rows_and_values_as_people_read_them():
    rows = [
        (1, "Acme", None, 2.5, dt.date(2024, 1, 31), ""),
        (2, "Bolt & Co <x>", 3, 0.1 + 0.2, None, "a\nb"),
    ]
    message = render.answer_message(outcome(["id", "client_name", "num_pools", "share", "day", "note"], rows))
    table = next(b for b in message.blocks if b["type"] == "table")
    cells = [[c["text"] for c in row] for row in table["rows"]]
    assert cells == [
        ["ID", "Client name", "Number of pools", "Share", "Day", "Note"],  # headers people read
        ["1", "Acme", "—", "2.5", "2024-01-31", " "],  # NULL as —; Slack refuses empty cells
        ["2", "Bolt & Co <x>", "3", "0.3", "—", "a b"],  # 0.1 + 0.2 is 0.3, as in the CSV
    ]
    assert table["column_settings"][0] == {"align": "right"}  # numbers line up
    assert not message.wants_csv
    within_limits(message)


def test_one_rounding_for_sentence_table_and_csv():
    rows = [("Acme", 13092.369999999997), ("Bolt", 500.5)]
    o = outcome(["client", "total"], rows)
    presentation = present(o)
    table = next(
        b for b in render.answer_message(o, presentation=presentation).blocks if b["type"] == "table"
    )
    assert [r[1]["text"] for r in table["rows"][1:]] == ["13,092.37", "500.50"]
    assert "13,092.37" in presentation.sentence
    assert read_csv(csv_bytes(o.columns, o.rows, presentation))[1:] == [
        ["Acme", "13092.37"],
        ["Bolt", "500.5"],
    ]


def test_the_data_table_block_carries_numbers_as_numbers_and_pages():
    rows = [(f"client {i}", i * 1000.25) for i in range(150)]
    style = render.Style("data_table", "context_actions")
    message = render.answer_message(outcome(["client", "paid"], rows), table_rows=20, style=style)
    within_limits(message)
    block = next(b for b in message.blocks if b["type"] == "data_table")
    assert block["caption"] and block["page_size"] == 20 and len(block["rows"]) == 101
    assert block["rows"][0] == [{"type": "raw_text", "text": "Client"}, {"type": "raw_text", "text": "Paid"}]
    assert block["rows"][2][1] == {"type": "raw_number", "value": 1000.25, "text": "1,000.25"}
    assert message.wants_csv  # 150 rows, 100 in the table


def test_a_single_value_is_a_sentence_not_a_table():
    o = outcome(["clients"], [(300,)])
    message = render.answer_message(o)
    assert not any(b["type"] in ("table", "data_table") for b in message.blocks)
    assert "300" in message.text and not message.wants_csv
    assert "1 row" not in " ".join(texts(message.blocks))


def test_the_trace_id_is_only_behind_details():
    o = outcome(["segment", "n"], [("smb", 1), ("startup", 2)])
    for style in render.STYLES:
        message = render.answer_message(o, style=style)
        assert o.trace.id not in message.text
        visible = [t for b in message.blocks if b["type"] in ("section", "context") for t in texts(b)]
        assert not any(o.trace.id in t for t in visible)
        assert o.trace.id in json.dumps(message.blocks)  # the buttons still carry it


def test_table_rows_setting_is_capped_at_what_slack_takes():
    rows = [(i,) for i in range(500)]
    message = render.answer_message(outcome(["n"], rows), table_rows=1000)
    table = next(b for b in message.blocks if b["type"] == "table")
    assert len(table["rows"]) == 100 and message.wants_csv


def test_monospace_fallback_carries_the_same_rows():
    rows = [(f"client {i}", i) for i in range(300)]
    message = render.answer_message(outcome(["name", "n"], rows), table_rows=50, use_table=False)
    within_limits(message)
    body = "\n".join(texts(message.blocks))
    assert "```" in body and "client 49" in body and "client 50" not in body
    assert not any(b["type"] == "table" for b in message.blocks)


def test_keyword_mode_is_labelled_with_its_reading_and_no_setup_advice():
    reading = "The LLM failed (The language model is unavailable: HTTP 401.), so this was answered in keyword mode. Counted rows of client"
    o = outcome(["n"], [(300,)], mode="keyword", interpretation=reading)
    body = " ".join(texts(render.answer_message(o).blocks))
    assert "Keyword mode" in body and "Counted rows of client" in body
    assert "401" not in body and "LLM failed" not in body


def test_answer_buttons_carry_the_trace_and_leave_room_for_schedules():
    o = outcome(["n"], [(1,), (2,)])
    buttons = next(b for b in render.answer_message(o).blocks if b["type"] == "actions")["elements"]
    assert [b["action_id"] for b in buttons] == [
        "show_sql",
        "show_details",
        "get_csv",
        "feedback_up",
        "feedback_down",
        "schedule_open",
    ]
    assert {b["value"] for b in buttons} == {o.trace.id}


def test_feedback_buttons_sit_in_a_context_actions_block():
    o = outcome(["n"], [(1,), (2,)])
    message = render.answer_message(o, style=render.Style("table", "context_actions"))
    actions = next(b for b in message.blocks if b["type"] == "actions")
    assert "feedback_up" not in [e["action_id"] for e in actions["elements"]]
    block = message.blocks[-1]
    assert block["type"] == "context_actions"
    (element,) = block["elements"]
    assert element["type"] == "feedback_buttons" and element["action_id"] == "feedback"
    assert element["positive_button"]["value"] == f"up:{o.trace.id}"
    assert element["negative_button"]["value"] == f"down:{o.trace.id}"
    voted = render.with_vote(message.blocks, "👍 <@U1> confirmed this answer.", o.trace.id)
    again = render.with_vote(voted, "👎 <@U2> said this answer is wrong.", o.trace.id)
    notes = [t for b in again if b.get("block_id") == f"vote:{o.trace.id}" for t in texts(b)]
    assert notes == ["👎 <@U2> said this answer is wrong."] and again[-1]["type"] == "context_actions"


def test_a_deterministic_error_has_no_retry_and_no_setup_advice():
    o = Outcome(
        status="error",
        question="q",
        error="The query was refused because it writes data (DELETE).",
        error_kind="guard",
        trace=Trace(),
    )
    message = render.outcome_message(o)
    ids = [e["action_id"] for b in message.blocks if b["type"] == "actions" for e in b["elements"]]
    assert "retry" not in ids and "show_details" in ids
    assert "writes data" in message.text

    no_llm = Outcome(
        status="error",
        question="q",
        error="I can't tell what to count." + NO_LLM_NOTE,
        error_kind="keyword_abstain",
        trace=Trace(),
    )
    body = " ".join(texts(render.outcome_message(no_llm).blocks))
    assert "OPENAI" not in body and "can't tell what to count" in body


def test_a_transient_error_offers_retry_and_escapes_markup():
    o = Outcome(
        status="error",
        question="q",
        error="The query took <too> long & was stopped",
        error_kind="timeout",
        trace=Trace(),
    )
    message = render.outcome_message(o)
    body = " ".join(texts(message.blocks))
    assert "&lt;too&gt;" in body and "&amp;" in body
    actions = [e for b in message.blocks if b["type"] == "actions" for e in b["elements"]]
    assert [(a["action_id"], a["value"]) for a in actions] == [
        ("retry", o.trace.id),
        ("show_details", o.trace.id),
    ]


def test_llm_failures_tell_the_asker_in_their_terms():
    rejected = Outcome(
        status="error",
        question="q",
        error="The language model is unavailable: the API key was rejected (HTTP 401).",
        error_kind="llm",
    )
    failure = failure_of(rejected)
    assert not failure.retry and "401" not in failure.text and "OPENAI_API_KEY" in failure.admin_note
    down = replace(rejected, error="The language model is unavailable: the request timed out.")
    assert failure_of(down).retry


def test_help_escapes_its_own_markup():
    body = " ".join(texts(render.help_message(["demo"], "demo").blocks))
    assert "&lt;question&gt;" in body and "<question>" not in body


def test_help_tells_admins_about_private_results():
    body = " ".join(texts(render.help_message(["demo"], "demo").blocks))
    assert "`/ask private on` (workspace admins)" in body and "`/ask private off`" in body


def test_a_clarification_is_a_question_with_one_button_per_reading_and_other():
    c = Clarification(
        "Which date counts as 'first'?", (Option("Construction start", "a"), Option("Operation start", "b"))
    )
    o = Outcome(status="clarify", question="first plant?", clarification=c)
    message = render.outcome_message(o)
    buttons = [e for b in message.blocks if b["type"] == "actions" for e in b["elements"]]
    assert [b["text"]["text"] for b in buttons] == [
        "Construction start",
        "Operation start",
        "Other…",
        "Details",
    ]
    assert all(b["action_id"].startswith("clarify_") for b in buttons)
    assert len({b["action_id"] for b in buttons}) == 4  # Slack wants them unique in a block
    assert json.loads(buttons[0]["value"])["c"] == c.id


def test_clarification_buttons_say_the_readings_in_words_with_the_data_behind_details():
    def reading(table: str, column: str, value: str) -> str:
        return "reading:" + json.dumps({"words": value, "table": table, "column": column, "value": value})

    c = Clarification(
        "Which value does 'Lyon' mean?",
        (
            Option("customers city = 'Lyon'", reading("customers", "city", "Lyon")),
            Option("suppliers city = 'Lyon'", reading("suppliers", "city", "Lyon")),
        ),
    )
    message = render.outcome_message(Outcome(status="clarify", question="orders from Lyon?", clarification=c))
    buttons = [e["text"]["text"] for b in message.blocks if b["type"] == "actions" for e in b["elements"]]
    assert buttons[:2] == ["customers in Lyon", "suppliers in Lyon"]
    assert "Which value" not in message.text and "“Lyon”" in message.text
    details = json.dumps(render.readings_modal(c))
    assert "customers.city = 'Lyon'" in details and "suppliers in Lyon" in details


def test_status_message_names_the_stage():  # the last-resort progress message
    for stage, words in [
        ("understand", "Understanding"),
        ("retrieve", "Searching the data"),
        ("generate", "Writing SQL"),
        ("execute", "Running it"),
    ]:
        assert words in render.status_message("q", stage).text


def test_trace_modal_stays_within_modal_limits():
    trace = {
        "id": "abc",
        "question": "q",
        "database": "demo",
        "ms": 12.0,
        "llm_calls": 2,
        "tokens": 10,
        "stages": [
            {
                "name": f"s{i}",
                "ms": 1.0,
                "llm_calls": [],
                "outputs": {"sql": "x" * 10_000, "l": ["y" * 400] * 50},
                "error": None,
            }
            for i in range(60)
        ],
    }
    view = render.trace_modal(trace)
    assert len(view["blocks"]) <= 100 and len(view["title"]["text"]) <= 24
    assert all(len(t) <= 3000 for t in texts(view["blocks"]))


def test_the_answering_queue_runs_its_workers_and_answers_the_rest_in_order_never_refusing():
    queue = AnswerQueue(1)
    release = threading.Event()
    started = threading.Semaphore(0)
    order: list[int] = []

    def job(n: int) -> None:
        order.append(n)
        started.release()
        release.wait(5)

    assert queue.idle and queue.position() == Position(ahead=0, starts_now=True, long=False)
    assert queue.put(job, 0) and started.acquire(timeout=5)
    assert not queue.idle and queue.position() == Position(ahead=0, starts_now=False, long=False)
    for n in range(1, 40):  # far more than a worker's share: every one waits its turn
        assert queue.put(job, n)
    assert queue.waiting == 39 and queue.position() == Position(ahead=39, starts_now=False, long=True)
    release.set()
    for _ in range(39):
        assert started.acquire(timeout=5)
    queue.shutdown(wait=True)
    assert order == list(range(40))  # in the order they arrived
    assert not queue.put(job, 40)  # only a stopped queue takes nothing (the process is going away)


def test_the_question_is_the_message_without_the_bots_mention():
    from bot.slack.listeners.questions import question_text

    assert question_text("<@UBOT> how many  clients &amp; pools?", "UBOT") == "how many clients & pools?"
    assert (
        question_text("clients with more than 5 &gt; pools in R&amp;D", None)
        == "clients with more than 5 > pools in R&D"
    )
    assert question_text("&amp;lt;tag&amp;gt;", None) == "&lt;tag&gt;"  # decoded once, as typed
    assert question_text("see <https://x.io/a|the report> in <#C1|sales>", None) == "see the report in #sales"
    assert question_text("payments by <@U0042> <@UBOT|askbase>?", "UBOT") == "payments by <@U0042> ?"
    # an app_mention always addresses the bot, even if auth.test named another id
    assert question_text("<@UOTHER> how many clients?", "UBOT", addressed=True) == "how many clients?"
    assert question_text("<@UBOT>", "UBOT") == ""


def test_a_number_json_cannot_carry_stays_text_in_the_data_table():
    rows = [("a", 1.5), ("b", float("nan")), ("c", float("inf"))]
    message = render.answer_message(outcome(["k", "v"], rows), style=render.Style("data_table", "buttons"))
    block = next(b for b in message.blocks if b["type"] == "data_table")
    assert [c["type"] for c in (r[1] for r in block["rows"][1:])] == ["raw_number", "raw_text", "raw_text"]
    json.dumps(block, allow_nan=False)  # Slack takes strict JSON only
