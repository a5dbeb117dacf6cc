"""Adaptive Cards built from outcomes, checked the way Teams would read them: schema 1.5 element
types and required properties, readable headers, escaped text, the size limit, the actions."""

from __future__ import annotations

import datetime as dt
import json

from bot.failures import failure_of
from bot.slack import render
from bot.teams import cards, links
from bot.teams.incoming import conversation_key, short_id
from bot.teams.outcome_cards import TEAMS
from core.access import Principal
from core.answer import Clarification, Option, Outcome, Reuse
from core.database import not_configured
from core.summary import present
from tests.paths import ROOT

# Adaptive Cards 1.5: element and action types, and the properties each requires.
ELEMENTS = {
    "TextBlock": {"text"},
    "Table": {"rows"},
    "TableRow": {"cells"},
    "TableCell": {"items"},
    "Container": {"items"},
    "Image": {"url"},
    "ActionSet": {"actions"},
    "Input.Text": {"id"},
    "Input.ChoiceSet": {"id", "choices"},
}
ACTIONS = {
    "Action.Submit": set(),
    "Action.ShowCard": {"card"},
    "Action.ToggleVisibility": {"targetElements"},
    "Action.OpenUrl": {"url"},
    "Action.Execute": {"verb"},  # Universal Actions: answered with a card for the presser alone
}


def check_card(card: dict, top: bool = True) -> None:
    assert card["type"] == "AdaptiveCard" and card["version"] == "1.5"
    if top:
        assert card["$schema"] == cards.SCHEMA
    ids: list[str] = []

    def element(node: dict) -> None:
        kind = node["type"]
        assert kind in ELEMENTS, kind
        assert ELEMENTS[kind] <= node.keys(), (kind, node.keys())
        if "id" in node:
            ids.append(node["id"])
        for key in ("items", "rows", "cells"):
            for child in node.get(key, []):
                element(child)
        for act in node.get("actions", []):
            action(act)

    def action(node: dict) -> None:
        kind = node["type"]
        assert kind in ACTIONS, kind
        assert ACTIONS[kind] <= node.keys()
        assert node.get("title")
        if kind == "Action.ShowCard":
            check_card(node["card"], top=False)
        if kind in ("Action.Submit", "Action.Execute"):
            assert node["data"][cards.ACTION]

    for node in card["body"]:
        element(node)
    for act in card.get("actions", []):
        action(act)
    assert len(ids) == len(set(ids))  # ids are unique within a card


def outcome(**kwargs) -> Outcome:
    base = {
        "status": "answer",
        "question": "Revenue by region",
        "database": "demo",
        "answer": "Revenue by region — 3 rows.",
        "sql": "SELECT region, SUM(amount) AS total_amount FROM payments GROUP BY region",
        "columns": ("region", "total_amount"),
        "rows": [("EU", 1200.5), ("US", 900.0), ("[click](http://evil.example)", 1.0)],
    }
    return Outcome(**{**base, **kwargs})


def test_an_answer_card_is_valid_1_5_with_readable_headers_escaped_cells_and_six_actions():
    content = cards.answer_card(outcome(), table_rows=10, chart_url="https://bot.example/files/x")
    check_card(content)
    rows = cards.shown_rows(content)
    assert rows[0] == ["Region", "Total amount"]
    assert rows[3][0] == "[click]\u200b(http://evil.example)"  # a value never becomes a link
    assert [a["title"] for a in content["actions"]] == ["Show SQL", "Details", "CSV", "👍", "👎", "Schedule"]
    private = {a["title"]: a for a in content["actions"] if a["type"] == "Action.Execute"}
    assert set(private) == {"Details", "CSV", "👍"}  # answered for the presser alone
    toggle = content["actions"][0]
    (sql,) = [e for e in content["body"] if e.get("id") == toggle["targetElements"][0]]
    assert sql["isVisible"] is False and "SUM(amount)" in sql["items"][0]["text"]  # no backslashes
    assert any(e["type"] == "Image" for e in content["body"])
    assert "3 rows" in json.dumps(content, ensure_ascii=False)
    chats = cards.answer_card(outcome(), votes=False)  # Teams' own feedback buttons in chats
    assert [a["title"] for a in chats["actions"]] == ["Show SQL", "Details", "CSV", "Schedule"]


def test_text_is_escaped_only_where_it_would_become_markup_and_never_with_visible_backslashes():
    assert cards.escape("smb (122), mid-size & co.") == "smb (122), mid-size & co."
    assert cards.escape("paid_on 3 * 4 #1") == "paid_on 3 * 4 #1"
    assert cards.escape("[x](http://e.example)") == "[x]\u200b(http://e.example)"
    assert cards.escape("- a\n1. b\n> c") == "\u200b- a\n\u200b1. b\n\u200b> c"
    assert cards.escape("**bold** and _it_") == "\\*\\*bold\\*\\* and \\_it\\_"  # pairs only


def test_a_large_result_shows_fewer_rows_until_the_card_fits_and_says_so():
    wide = Outcome(
        status="answer",
        question="everything",
        database="demo",
        columns=tuple(f"column_{i}" for i in range(12)),
        rows=[tuple("x" * 100 for _ in range(12)) for _ in range(400)],
    )
    content = cards.answer_card(wide, table_rows=50)
    assert cards.size_of(content) <= cards.MAX_CARD_BYTES
    rows = cards.shown_rows(content)
    assert 1 < len(rows) < 51 and len(rows[0]) == cards.MAX_COLUMNS
    text = json.dumps(content)
    assert f"showing the first {len(rows) - 1}" in text and "4 more columns in the CSV" in text


def test_a_single_value_is_a_sentence_not_a_one_by_one_table_as_in_slack():
    o = outcome(
        question="How many clients are there?",
        sql="SELECT COUNT(*) AS number_of_clients FROM client",
        columns=("number_of_clients",),
        rows=[(300,)],
        answer="",
    )
    content = cards.answer_card(o)
    check_card(content)
    assert cards.shown_rows(content) == []
    assert "300" in content["body"][0]["text"]
    assert "1 row" not in json.dumps(content, ensure_ascii=False)  # nothing to count
    slack = render.answer_message(o)
    assert not any(b["type"] in ("table", "data_table") for b in slack.blocks)
    assert content["body"][0]["text"] == cards.escape(present(o).sentence)


def test_a_card_reads_like_the_slack_message_of_the_same_answer():
    """Sentence, headers, rounding and NULL are decided once (bot/answer_view.py): a number is
    13,092.37 in Teams exactly where Slack shows 13,092.37, never 13092.369999999997."""
    o = outcome(
        sql="SELECT client, SUM(paid) AS total_paid, MAX(note) AS note FROM payments GROUP BY client",
        columns=("client", "total_paid", "note"),
        rows=[("Acme", 13092.369999999997, None), ("Bolt", 500.5, "late")],
        answer="",
    )
    content = cards.answer_card(o)
    slack = render.answer_message(o)
    slack_table = next(b for b in slack.blocks if b["type"] == "table")
    assert cards.shown_rows(content) == [[c["text"] for c in row] for row in slack_table["rows"]]
    assert cards.shown_rows(content)[1] == ["Acme", "13,092.37", "—"]
    sentence = present(o).sentence
    assert "13,092.37" in sentence
    assert content["body"][0]["text"] == cards.escape(sentence)
    assert slack.blocks[0]["text"]["text"] == render.escape(sentence)


def test_a_clarification_card_has_one_button_per_reading_and_other_with_a_box():
    c = Clarification(
        question="Which city do you mean?",
        options=(Option("customers' city", "customers.city"), Option("suppliers' city", "suppliers.city")),
    )
    content = cards.clarification_card(
        Outcome(status="clarify", question="orders from Lyon", clarification=c)
    )
    check_card(content)
    submits = [a for a in content["actions"] if a["type"] == "Action.Submit"]
    assert [a["data"] for a in submits] == [
        {"askbase": "clarify", "c": c.id, "i": 0},
        {"askbase": "clarify", "c": c.id, "i": 1},
    ]
    other, details = content["actions"][-2:]
    assert other["title"] == "Other…" and other["card"]["body"][0]["id"] == "answer"
    assert details["type"] == "Action.ToggleVisibility"  # the readings behind, on the presser's screen


def test_links_verify_only_unchanged_unexpired_tokens(tmp_path):
    key = b"k" * 32
    who = Principal.teams(user="u1", channel="19:c@thread.v2", team=None)
    token, link = links.issue(key, "csv", "trace1", who, ttl_s=60)
    back = links.verify(key, token)
    assert back == link and back.principal == who
    for bad in (token[:-2] + "xy", token.replace(".", ""), "", "a.b"):
        try:
            links.verify(key, bad)
        except links.BadLink:
            continue
        raise AssertionError(f"accepted {bad!r}")
    try:
        links.verify(b"other" * 8, token)
        raise AssertionError("accepted another key's token")
    except links.BadLink:
        pass
    later = link.expires_at.replace(microsecond=0) + dt.timedelta(seconds=2)
    try:
        links.verify(key, token, now=later)
        raise AssertionError("accepted an expired token")
    except links.BadLink as exc:
        assert "expired" in str(exc)


def test_ids_fit_the_state_columns_and_conversation_keys_follow_threads_and_chats():
    long = "a:1" + "x" * 150
    assert len(short_id(long)) <= 64 and short_id(long) == short_id(long) and short_id("19:c") == "19:c"
    thread = "19:c@thread.tacv2;messageid=17"
    assert conversation_key(thread, "demo") == conversation_key(thread, "sales") == f"teams:{thread}"
    assert conversation_key("19:g@thread.v2", "demo") != conversation_key("19:g@thread.v2", "sales")
    assert len(conversation_key(long + long, "demo")) <= 200


def test_core_has_no_teams_import():
    for path in (ROOT / "core").rglob("*.py"):
        text = path.read_text()
        assert "microsoft_agents" not in text and "bot.teams" not in text, path


def test_errors_are_worded_by_the_shared_failures_with_teams_commands_and_retry_only_when_transient():
    gone = Outcome.failed("how many?", "unknown_database", not_configured("retired"), database="retired")
    content = cards.error_card(failure_of(gone, TEAMS), gone.trace.id)
    check_card(content)
    text = json.dumps(content, ensure_ascii=False)
    assert "The database 'retired' is not configured any more. Pick another one with db NAME." in text
    assert [a["title"] for a in content["actions"]] == ["Details"]  # trying again cannot help: no Retry
    # Slack says the same, with its own command
    slack = failure_of(gone)
    assert slack.text.endswith("Pick another one with `/ask db NAME`.") and not slack.retry

    refused = Outcome.failed("how many?", "access", "engine words naming /ask db", database="hr")
    assert "Use db to see the databases you may use here" in failure_of(refused, TEAMS).text

    down = Outcome.failed("how many?", "database", "connection refused on 10.0.0.5", database="demo")
    content = cards.error_card(failure_of(down, TEAMS), down.trace.id)
    assert [a["title"] for a in content["actions"]] == ["Retry", "Details"]
    assert "10.0.0.5" not in json.dumps(content)  # the admins' detail stays in the log


def test_verify_sits_below_an_answer_that_ran_new_sql_and_a_reused_one_says_who_verified_it():
    content = cards.answer_card(outcome(), can_verify=True)
    check_card(content)
    (verify,) = [e for e in content["body"] if e["type"] == "ActionSet"]
    assert (
        verify["actions"][0]["title"] == "✅ Verify" and verify["actions"][0]["data"]["askbase"] == "verify"
    )
    assert len(content["actions"]) == 6  # Teams' row of six stays as it was
    assert not [e for e in cards.answer_card(outcome())["body"] if e["type"] == "ActionSet"]

    when = dt.datetime(2026, 11, 25, 9, 30, tzinfo=dt.UTC)
    reused = outcome(
        reuse=Reuse(verified_id=1, verified_by="aad-guid", verified_at=when, verifier_name="Ana")
    )
    content = cards.answer_card(reused, can_verify=True)
    check_card(content)
    text = json.dumps(content, ensure_ascii=False)
    assert "✅ Verified by Ana on 2026-11-25" in text and "aad-guid" not in text
    assert not [e for e in content["body"] if e["type"] == "ActionSet"]  # verified already
