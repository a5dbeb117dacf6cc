"""Block Kit rendering: what a person sees, always inside Slack's limits whatever the result."""

from __future__ import annotations

import datetime as dt
import json
import threading

from bot import render
from bot.worker_pool import WorkerPool
from core.answer import Clarification, Option, Outcome
from core.trace import Trace


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
    tables = [b for b in message.blocks if b["type"] == "table"]
    assert len(tables) <= 1
    for table in tables:
        assert len(table["rows"]) <= 100
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
    message = render.answer_message(outcome(columns, rows, truncated=True), table_rows=99)
    within_limits(message)
    assert message.wants_csv
    note = " ".join(texts(message.blocks))
    assert "5,000 rows" in note and "10 more columns" in note and "cut" in note


def test_the_table_shows_the_first_rows_and_values_as_people_read_them():
    rows = [
        (1, "Acme", None, 2.5, dt.date(2024, 1, 31), ""),
        (2, "Bolt & Co <x>", 3, 0.1 + 0.2, None, "a\nb"),
    ]
    message = render.answer_message(outcome(["id", "name", "n", "share", "day", "note"], rows))
    table = next(b for b in message.blocks if b["type"] == "table")
    cells = [[c["text"] for c in row] for row in table["rows"]]
    assert cells == [
        ["id", "name", "n", "share", "day", "note"],
        ["1", "Acme", "NULL", "2.5", "2024-01-31", " "],
        ["2", "Bolt & Co <x>", "3", "0.3", "NULL", "a b"],
    ]
    assert table["column_settings"][0] == {"align": "right"}  # numbers line up
    assert not message.wants_csv
    within_limits(message)


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


def test_keyword_mode_is_labelled_with_its_reading():
    o = outcome(["n"], [(300,)], mode="keyword", interpretation="Counted rows of client")
    body = " ".join(texts(render.answer_message(o).blocks))
    assert "Keyword mode" in body and "Counted rows of client" in body


def test_answer_buttons_carry_the_trace_and_leave_room_for_schedules():
    o = outcome(["n"], [(1,)])
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


def test_an_error_says_what_failed_offers_retry_and_escapes_markup():
    o = Outcome(status="error", question="q", error="The database rejected <the> query & more", trace=Trace())
    message = render.outcome_message(o)
    body = " ".join(texts(message.blocks))
    assert "&lt;the&gt;" in body and "&amp;" in body and o.trace.id in body
    actions = [e for b in message.blocks if b["type"] == "actions" for e in b["elements"]]
    assert [(a["action_id"], a["value"]) for a in actions] == [("retry", o.trace.id)]


def test_a_clarification_is_a_question_with_one_button_per_reading_and_other():
    c = Clarification(
        "Which date counts as 'first'?", (Option("Construction start", "a"), Option("Operation start", "b"))
    )
    o = Outcome(status="clarify", question="first plant?", clarification=c)
    message = render.outcome_message(o)
    buttons = [e for b in message.blocks if b["type"] == "actions" for e in b["elements"]]
    assert [b["text"]["text"] for b in buttons] == ["Construction start", "Operation start", "Other…"]
    assert all(b["action_id"].startswith("clarify_") for b in buttons)
    assert len({b["action_id"] for b in buttons}) == 3  # Slack wants them unique in a block
    assert json.loads(buttons[0]["value"])["c"] == c.id


def test_status_message_names_the_stage():
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


def test_worker_pool_runs_at_most_its_workers_and_refuses_beyond_its_queue():
    pool = WorkerPool(1, max_pending=1)
    release = threading.Event()
    started = threading.Event()

    def job() -> None:
        started.set()
        release.wait(5)

    assert pool.submit(job) and started.wait(5)
    assert not pool.idle
    assert pool.submit(job)  # waits its turn
    assert not pool.submit(job)  # full: the caller tells the person to retry
    release.set()
    pool.shutdown(wait=True)


def test_the_question_is_the_message_without_the_bots_mention():
    from bot.listeners.questions import question_text

    assert question_text("<@UBOT> how many  clients &amp; pools?", "UBOT") == "how many clients & pools?"
    assert question_text("payments by <@U0042> <@UBOT|askbase>?", "UBOT") == "payments by <@U0042> ?"
    # an app_mention always addresses the bot, even if auth.test named another id
    assert question_text("<@UOTHER> how many clients?", "UBOT", addressed=True) == "how many clients?"
    assert question_text("<@UBOT>", "UBOT") == ""
