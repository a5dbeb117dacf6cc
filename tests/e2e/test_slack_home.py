"""The App Home tab through the real Bolt app: onboarding, databases with example questions, recent
questions with "Ask again", schedules, and — for admins only — what in the setup made questions fail."""

from __future__ import annotations

import json

import pytest
import yaml

from core.askbase import Askbase
from core.bench.fakes.slack_api import FakeSlack
from core.demo import CATALOG_PATH
from core.llm import LLM
from core.settings import load_settings
from tests.slack_harness import RunningBot, hand
from tests.slack_requests import SIGNING_SECRET

USER = "U0001"
CHANNEL = "C0001"


def open_home(bot: RunningBot, slack: FakeSlack, user: str = USER) -> dict:
    before = len([c for c in slack.calls_to("views.publish") if c.args.get("user_id") == user])
    event = {
        "type": "app_home_opened",
        "user": user,
        "channel": "D" + user[1:],
        "tab": "home",
        "event_ts": "1.1",
    }
    bot.sender.event(event)
    slack.wait_for(
        lambda s: len([c for c in s.calls_to("views.publish") if c.args.get("user_id") == user]) > before
    )
    return slack.home_views[user]


def click_on_home(bot: RunningBot, action_id: str, value: str, user: str = USER) -> None:
    payload = {
        "type": "block_actions",
        "user": {"id": user, "username": user.lower(), "team_id": "T0001"},
        "api_app_id": "A0001",
        "token": "legacy-verification-token",
        "container": {"type": "view", "view_id": "V0HOME"},
        "trigger_id": "trigger.home",
        "team": {"id": "T0001", "domain": "askbase-test"},
        "view": {"id": "V0HOME", "type": "home", "blocks": []},
        "actions": [
            {"type": "button", "action_id": action_id, "block_id": "b1", "value": value, "action_ts": "1.2"}
        ],
    }
    assert bot.sender.interaction(payload).status == 200


def buttons(view: dict) -> list[dict]:
    found = []
    for block in view["blocks"]:
        found.extend(block.get("elements", []) if block["type"] == "actions" else [])
        if block.get("accessory"):
            found.append(block["accessory"])
    return found


def test_a_first_visit_shows_how_to_ask_and_the_databases_with_real_example_questions(make_bot, slack):
    bot = make_bot()
    view = open_home(bot, slack)
    text = json.dumps(view)
    assert view["type"] == "home" and len(view["blocks"]) <= 100
    assert "Welcome to Askbase" in text and "*DM me*" in text and "&lt;question&gt;" in text
    assert "`demo`" in text and "Your scheduled questions" in text
    examples = yaml.safe_load(CATALOG_PATH.read_text())["examples"][:3]
    asks = [b for b in buttons(view) if b["action_id"] == "home_ask"]
    assert [json.loads(b["value"]) for b in asks] == [{"q": q, "db": "demo"} for q in examples]
    assert "Setup" not in text  # not an admin


def test_recent_questions_can_be_asked_again_and_are_answered_in_the_dm(make_bot, slack, plan, demo_var):
    bot = make_bot()
    _, ts = bot.sender.mention("how many clients are there?")
    slack.wait_for(lambda s: s.answer_in(CHANNEL, ts))
    view = open_home(bot, slack)
    text = json.dumps(view)
    assert "Welcome to Askbase" not in text and "Your recent questions" in text
    again = next(b for b in buttons(view) if b["text"]["text"] == "Ask again")
    asked = json.loads(again["value"])  # the question is read back from its answer's trace
    assert set(asked) == {"t", "db"} and asked["db"] == "demo"

    click_on_home(bot, "home_ask", again["value"])
    root = slack.wait_for(  # posted to the user id: Slack's DM between the app and that person
        lambda s: next((m for m in s.messages.values() if m.channel == USER and m.thread_ts is None), None)
    )
    assert f"<@{USER}> asked: *how many clients are there?*" in root.all_text()
    answer = slack.wait_for(lambda s: (a := s.answer_in(USER, root.ts)) is not None and a.result() and a)
    assert answer.result() == hand(demo_var, "SELECT COUNT(*) FROM client")


def test_admins_see_what_in_the_setup_made_questions_fail_and_others_do_not(make_bot, slack, plan, fake_llm):
    from tests.fakes.openai_server import Reply

    slack.users["U0ADMIN"] = {"is_admin": True}
    bot = make_bot()
    fake_llm.script("generate", *[Reply(status=401)] * 10)
    _, ts = bot.sender.mention("how many clients are there?")
    failed = slack.wait_for(lambda s: s.answer_in(CHANNEL, ts))
    assert "OPENAI" not in failed.all_text()  # the asker is not told to configure anything

    admin = json.dumps(open_home(bot, slack, "U0ADMIN"))
    assert "Setup" in admin and "1 question failed in the last day" in admin and "OPENAI_API_KEY" in admin
    assert "Setup" not in json.dumps(open_home(bot, slack, USER))


def test_a_rejected_key_behind_a_keyword_mode_answer_reaches_admins_not_the_asker(
    make_bot, slack, plan, fake_llm
):
    from tests.fakes.openai_server import Reply

    slack.users["U0ADMIN"] = {"is_admin": True}
    bot = make_bot(engine={"fallback_to_keyword": True})
    fake_llm.script("generate", *[Reply(status=401)] * 10)
    _, ts = bot.sender.mention("how many clients are there?")
    answer = slack.wait_for(lambda s: s.answer_in(CHANNEL, ts))
    assert "Keyword mode" in answer.all_text()
    assert "401" not in answer.all_text() and "LLM failed" not in answer.all_text()
    assert "answered in keyword mode in the last day" in json.dumps(open_home(bot, slack, "U0ADMIN"))


def test_without_an_llm_admins_are_told_on_home_not_in_answers(make_bot, slack):
    slack.users["U0ADMIN"] = {"is_owner": True}
    bot = make_bot(llm=False, engine={"fallback_to_keyword": False})
    _, ts = bot.sender.mention("how many clients are there?")
    answer = slack.wait_for(lambda s: s.answer_in(CHANNEL, ts))
    assert "OPENAI" not in answer.all_text()
    assert "No language model is configured" in json.dumps(open_home(bot, slack, "U0ADMIN"))


def test_a_setup_problem_is_sent_to_the_installer_once_a_day(
    demo_var, state_url, slack, llm_settings, plan, fake_llm
):
    """OAuth install by U0001; the endpoint then refuses the key: the installer gets one DM with the advice."""
    import re
    import urllib.request
    from urllib.parse import parse_qs, urlparse

    from tests.fakes.openai_server import Reply

    pytest.importorskip("greenlet")  # slack_sdk's SQLAlchemy stores import sqlalchemy.ext.asyncio
    settings = load_settings(
        var_dir=str(demo_var),
        state_url=state_url,
        slack={
            "client_id": "111.222",
            "client_secret": "oauth-client-secret",
            "signing_secret": SIGNING_SECRET,
            "api_base_url": slack.base_url,
        },
        engine={"fallback_to_keyword": False},
    )
    bot = RunningBot(Askbase(settings, llm=LLM(llm_settings)), slack)
    try:
        base = f"http://127.0.0.1:{bot.port}"
        with urllib.request.urlopen(f"{base}/slack/install") as page:
            html, cookie = page.read().decode(), page.headers["Set-Cookie"].split(";")[0]
        state = parse_qs(
            urlparse(re.search(r'<a href="([^"]+)"', html).group(1).replace("&amp;", "&")).query
        )["state"][0]
        callback = f"{base}/slack/oauth_redirect?code=abc&state={state}"
        urllib.request.urlopen(urllib.request.Request(callback, headers={"Cookie": cookie})).close()

        fake_llm.script("generate", *[Reply(status=401)] * 20)
        for channel in ("C0001", "C0002"):
            _, ts = bot.sender.mention("how many clients are there?", channel=channel, user="U0ASKER")
            failed = slack.wait_for(lambda s, c=channel, t=ts: s.answer_in(c, t))
            assert "OPENAI" not in failed.all_text()
    finally:
        bot.close()  # waits for the workers: every note that was going to be sent is sent
    dms = [c.args for c in slack.calls_to("chat.postMessage") if c.args["channel"] == "U0001"]
    assert len(dms) == 1 and "OPENAI_API_KEY" in dms[0]["text"]


def test_ask_again_works_for_a_long_question_in_any_script(make_bot, slack, plan):
    """A button's value holds 2,000 characters; a long question in Japanese is far more than that
    once JSON escapes it. Ask again names the answer instead, and reads the question back whole."""
    bot = make_bot()
    question = "顧客は何人いますか " * 150 + "?"  # 1,501 characters, 9,000 once \u-escaped
    _, ts = bot.sender.mention(question)
    slack.wait_for(lambda s: s.answer_in(CHANNEL, ts), timeout=15)
    again = next(b for b in buttons(open_home(bot, slack)) if b["text"]["text"] == "Ask again")
    assert len(again["value"]) <= 2000
    click_on_home(bot, "home_ask", again["value"])
    root = slack.wait_for(
        lambda s: next((m for m in s.messages.values() if m.channel == USER and m.thread_ts is None), None)
    )
    assert "顧客は何人いますか " * 3 in root.text
    slack.wait_for(lambda s: s.answer_in(USER, root.ts), timeout=15)
    asked = [t for t in slack.calls_to("chat.postMessage") if t.args.get("channel") == USER]
    assert question.rstrip("?").strip()[:100] in asked[0].args["text"]
