"""The Teams adapter as a deployment runs it: `python -m bot serve --teams`, activities posted to
its real `/api/messages`, replies recorded by a fake Bot Connector (the activities' serviceUrl).
Anonymous local mode, no LLM key: keyword mode answers."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
import time

import sqlalchemy as sa

from core.bench.fakes.bot_connector import FakeConnector
from tests.clarify_fixtures import shop_db
from tests.processes import ROOT, refusing_port
from tests.teams_harness import TeamsServed, teams_env

ANON = {"ASKBASE_TEAMS__ALLOW_ANONYMOUS": "true"}


def audit_rows(tmp_path, source: str) -> list[dict]:
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'state.sqlite'}")
    with engine.connect() as conn:
        rows = conn.execute(
            sa.text("SELECT * FROM audit_log WHERE source = :s ORDER BY id"), {"s": source}
        ).all()
    engine.dispose()
    return [dict(r._mapping) for r in rows]


def test_without_an_app_id_or_the_setting_the_command_exits_with_a_clear_message(tmp_path, demo_var):
    done = subprocess.run(
        [sys.executable, "-m", "bot", "serve", "--teams", "--port", "1"],
        cwd=ROOT,
        env={**teams_env(tmp_path, demo_var), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__CLIENTID" in done.stderr
    assert "ASKBASE_TEAMS__ALLOW_ANONYMOUS=true" in done.stderr


def test_a_question_in_a_personal_chat_gets_an_adaptive_card_saying_300_within_10_seconds(tmp_path, demo_var):
    with FakeConnector() as connector:
        served = TeamsServed({**teams_env(tmp_path, demo_var), **ANON}, tmp_path, connector)
        try:
            activity = served.client.activity("How many clients are there?")
            conversation = activity["conversation"]["id"]
            started = time.monotonic()
            status, _ = served.client.post(activity)
            assert status == 202
            answer = connector.card_in(conversation, lambda m: m.is_answer, timeout=10)
            assert time.monotonic() - started < 10
            assert answer.card["type"] == "AdaptiveCard" and answer.card["version"] == "1.5"
            # one value: a sentence that says it, not a 1 × 1 table (as in Slack)
            assert answer.sentence() == "Number of clients: 300." and answer.table() == []
            assert "Keyword mode" in answer.all_text() and "1 row" not in answer.all_text()
            # in a chat, Teams' own 👍 / 👎 under the message take the card's place
            assert [a["title"] for a in answer.card["actions"]] == ["Show SQL", "Details", "CSV", "Schedule"]
            assert answer.feedback_loop and not answer.ai_generated  # keyword mode: no LLM wrote it
            # typing first, then the answer: all at {serviceUrl}/v3/conversations/{id}/activities…
            kinds = [c.body.get("type") for c in connector.calls if c.conversation == conversation]
            assert kinds[0] == "typing" and kinds[-1] == "message"
            assert all(c.path.startswith("/v3/conversations/") for c in connector.calls)
            log = served.output()
            assert "ANONYMOUS mode" in log  # the SDK's local-development mode is never silent
            assert audit_rows(tmp_path, "teams")[-1]["status"] == "answer"
        finally:
            assert served.stop() == 0


def test_a_mention_in_a_channel_is_answered_in_its_thread_once_even_when_delivered_twice(tmp_path, demo_var):
    with FakeConnector() as connector:
        served = TeamsServed({**teams_env(tmp_path, demo_var), **ANON}, tmp_path, connector)
        try:
            place = served.client.place("channel", conversation="1700000000001")
            activity = served.client.activity("how many clients are there?", place=place, mention=True)
            thread = activity["conversation"]["id"]
            assert served.client.post(activity)[0] == 202
            connector.card_in(thread, lambda m: m.is_answer, timeout=15)
            assert served.client.post(activity)[0] == 202  # Teams retries a request it thinks timed out
            time.sleep(1.5)
            answers = [m for m in connector.in_conversation(thread) if m.is_answer]
            assert len(answers) == 1
            assert answers[0].reply_to == activity["id"]  # the reply sits under the question
            assert len(audit_rows(tmp_path, "teams")) == 1  # asked once
            rows = audit_rows(tmp_path, "teams")
            assert rows[0]["channel"] == "19:general0123456789abcdef@thread.tacv2"
            assert rows[0]["question"] == "how many clients are there?"  # the @mention removed

            # a follow-up in the thread continues the conversation (one conversation row, two turns)
            follow = served.client.activity("how many clients are there?", place=place, mention=True)
            served.client.post(follow)
            connector.wait_for(
                lambda c: len([m for m in c.in_conversation(thread) if m.is_answer]) == 2, timeout=15
            )
            engine = sa.create_engine(f"sqlite:///{tmp_path / 'state.sqlite'}")
            with engine.connect() as conn:
                turns = conn.execute(
                    sa.text("SELECT count(*) FROM turns WHERE conversation_id = :c"), {"c": f"teams:{thread}"}
                ).scalar()
            engine.dispose()
            assert turns == 2
        finally:
            served.stop()


def test_an_ambiguous_question_gets_one_button_per_reading_and_the_press_answers_that_reading(tmp_path):
    db = shop_db(tmp_path / "shop.sqlite")
    config = tmp_path / "askbase.yaml"
    config.write_text(f"databases:\n  shop:\n    url: sqlite:///{db}\n")
    env = {
        **teams_env(tmp_path, tmp_path / "var"),
        **ANON,
        "ASKBASE_CONFIG": str(config),
        "ASKBASE_DEFAULT_DB": "shop",
    }
    with FakeConnector() as connector:
        served = TeamsServed(env, tmp_path, connector)
        try:
            place = served.client.place("groupChat")
            activity = served.client.activity("How many orders from Lyon?", place=place, mention=True)
            chat = activity["conversation"]["id"]
            served.client.post(activity)
            question = connector.card_in(chat, lambda m: m.action("Other…") is not None, timeout=30)
            options = [a for a in question.submits() if a["data"].get("askbase") == "clarify"]
            titles = " ".join(a["title"] for a in options)
            assert len(options) == 2 and "customers" in titles and "suppliers" in titles
            supplier = next(a for a in options if "suppliers" in a["title"])

            # someone else may not answer the asker's question
            other = served.client.activity(
                None,
                place=place,
                value=supplier["data"],
                reply_to=question.id,
                user="bbbbbbbb-0000-4000-8000-000000000002",
                name="Bob",
            )
            served.client.post(other)
            connector.card_in(chat, lambda m: "Only the person who asked" in m.all_text(), timeout=10)

            press = served.client.activity(None, place=place, value=supplier["data"], reply_to=question.id)
            assert served.client.post(press)[0] == 202
            answer = connector.card_in(chat, lambda m: m.is_answer, timeout=30)
            expected = sa.create_engine(f"sqlite:///{db}")
            with expected.connect() as conn:
                count = conn.execute(
                    sa.text(
                        "SELECT COUNT(*) FROM orders JOIN suppliers ON suppliers.id = orders.supplier_id "
                        "WHERE suppliers.city = 'Lyon'"
                    )
                ).scalar()
            expected.dispose()
            assert answer.sentence().endswith(f": {count}.") and answer.table() == []
            # the question's card now says what was chosen, and has no buttons left
            shown = connector.messages[question.id]
            assert shown.updates == 1 and "Alice chose" in shown.all_text() and not shown.submits()
            # a second press answers nothing twice
            again = served.client.activity(None, place=place, value=supplier["data"], reply_to=question.id)
            served.client.post(again)
            connector.card_in(chat, lambda m: "answered already" in m.all_text(), timeout=10)
            assert len([m for m in connector.in_conversation(chat) if m.is_answer]) == 1
        finally:
            served.stop()


def test_csv_and_chart_links_are_signed_expire_and_rerun_through_the_engine(tmp_path, demo_var):
    env = {**teams_env(tmp_path, demo_var), **ANON, "ASKBASE_TEAMS__LINK_TTL_S": "600"}
    with FakeConnector() as connector:
        served = TeamsServed(env, tmp_path, connector)
        try:
            activity = served.client.activity("How many clients are there?")
            chat = activity["conversation"]["id"]
            served.client.post(activity)
            answer = connector.card_in(chat, lambda m: m.is_answer, timeout=15)
            press = served.client.activity(None, value=answer.action("CSV")["data"], reply_to=answer.id)
            served.client.post(press)
            link_card = connector.card_in(chat, lambda m: m.action("Download CSV") is not None, timeout=10)
            url = link_card.action("Download CSV")["url"]
            assert url.startswith(f"{served.base}/files/")

            status, headers, body = served.get(url)
            assert status == 200 and headers["Content-Type"].startswith("text/csv")
            assert list(csv.reader(io.StringIO(body.decode()))) == [["number_of_clients"], ["300"]]
            assert [r["source"] for r in audit_rows(tmp_path, "csv")] == ["csv"]  # audited as an export

            token = url.rsplit("/", 1)[1]
            forged = token[:-3] + ("AAA" if not token.endswith("AAA") else "BBB")
            assert served.get(f"{served.base}/files/{forged}")[0] == 403
            assert served.get(f"{served.base}/files/not-a-token")[0] == 403
            assert len(audit_rows(tmp_path, "csv")) == 1  # refused links reach no database

            # the access log names the downloads without their tokens: a link's token is its secret
            logged = '"GET /files/… HTTP/1.1" 403'
            deadline = time.monotonic() + 5
            while served.output().count(logged) < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            log = served.output()
            assert log.count('"GET /files/… HTTP/1.1" 200') == 1 and log.count(logged) == 2
            assert token not in log and forged not in log and "not-a-token" not in log
        finally:
            served.stop()


def test_an_oversize_question_is_refused_and_only_a_preview_is_kept(tmp_path, demo_var):
    """Issue 18 §9 for Teams: refused, and dropped — the audit row, the turn, its trace, the
    activity's claim (kept to answer it after a crash) and the log hold a 200-character preview."""
    with FakeConnector() as connector:
        served = TeamsServed({**teams_env(tmp_path, demo_var), **ANON}, tmp_path, connector)
        try:
            tail = "X" * 6000 + " end-of-the-long-question"
            activity = served.client.activity(f"how many clients are there? {tail}")
            served.client.post(activity)
            reply = connector.card_in(activity["conversation"]["id"], lambda m: True, timeout=15)
            assert "keep it under 2,000" in reply.all_text()
            engine = sa.create_engine(f"sqlite:///{tmp_path / 'state.sqlite'}")
            with engine.connect() as conn:
                stored = [
                    str(v)
                    for sql in (
                        "SELECT question FROM audit_log",
                        "SELECT question FROM turns",
                        "SELECT data FROM traces WHERE id NOT LIKE '~%'",
                        "SELECT payload FROM question_claims",
                    )
                    for v in conn.execute(sa.text(sql)).scalars()
                ]
                kept = [
                    str(v)
                    for v in conn.execute(sa.text("SELECT data FROM traces WHERE id LIKE '~%'")).scalars()
                ]
            engine.dispose()  # (kept: the card the refusal was posted as, for a private Details)
            assert len(stored) == 4 and all("more characters dropped" in s for s in stored), stored
            assert not [s for s in [*stored, *kept] if "end-of-the-long-question" in s]
        finally:
            served.stop()
        assert "end-of-the-long-question" not in served.output()


def error_card(connector: FakeConnector, activity: dict) -> object:
    return connector.card_in(activity["conversation"]["id"], lambda m: "⚠️" in m.all_text(), timeout=30)


def test_a_question_keyword_mode_cannot_answer_is_worded_for_people_without_retry(tmp_path, demo_var):
    """Deterministic: the same question fails the same way, so no Retry; the engine's advice to
    set OPENAI_API_KEY is the admins' business, never the card's (bot/failures.py, as in Slack)."""
    with FakeConnector() as connector:
        served = TeamsServed({**teams_env(tmp_path, demo_var), **ANON}, tmp_path, connector)
        try:
            activity = served.client.activity("What is the meaning of life?")
            served.client.post(activity)
            card = error_card(connector, activity)
            said = card.all_text()
            assert "without guessing" in said and "“life”" in said  # in the asker's words
            assert "Answers are limited right now" in said  # no LLM: keyword mode only
            assert "OPENAI_API_KEY" not in card.all_text()
            assert card.action("Retry") is None and card.submits() == []
            assert audit_rows(tmp_path, "teams")[-1]["error_kind"] == "keyword_abstain"
        finally:
            served.stop()


def test_an_llm_that_cannot_be_reached_is_a_transient_failure_with_retry(tmp_path, demo_var):
    """Transient: the model's endpoint does not answer; trying again later can help, so Retry —
    and the person reads what happened in their terms, not the endpoint's error."""
    with refusing_port() as port, FakeConnector() as connector:
        env = {
            **teams_env(tmp_path, demo_var),
            **ANON,
            "OPENAI_API_KEY": "test-key",
            "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1",  # nothing listens there
            "ASKBASE_LLM__MAX_ATTEMPTS": "1",
            "ASKBASE_ENGINE__FALLBACK_TO_KEYWORD": "false",
        }
        served = TeamsServed(env, tmp_path, connector)
        try:
            activity = served.client.activity("How many clients are there?")
            served.client.post(activity)
            card = error_card(connector, activity)
            assert "did not answer in time. Try again in a minute." in card.all_text()
            assert "could not be reached" not in card.all_text()  # the endpoint's words stay in the log
            retry = card.action("Retry")
            assert retry is not None and retry["data"]["askbase"] == "retry"
            assert audit_rows(tmp_path, "teams")[-1]["error_kind"] == "llm"
        finally:
            served.stop()
