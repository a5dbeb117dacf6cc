"""Teaching Askbase what words mean, end to end in Slack (issue 32): define → approve → used in the
next answer; a non-analyst's proposal queued in the analysts' App Home, not used until approved;
a clarification choice remembered for one channel and not another; an assumption's Correct button;
a 👎 comment that states a rule.

The real Bolt app runs behind its HTTP server; Slack is the fake Web API, the model the fake OpenAI
server with replies shaped like a real model's (its request log shows what the SQL writer was
told), the data the demo database. Everything asserted is what a person in Slack sees, or what the
writer was shown.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest

from core.bench.fakes.slack_api import FakeSlack, Message
from core.teaching import Teacher
from tests.fakes import model_replies as mr
from tests.fakes.openai_server import Reply
from tests.slack_harness import Plan, RunningBot

CHANNEL = "C0001"
OTHER_CHANNEL = "C0002"
ASKER = "U0001"
COLLEAGUE = "U0002"
ANALYST = "U0ANALYST"
ACTIVE = "SELECT COUNT(*) AS clients FROM client WHERE status = 'ACT'"
DEFINE = "define active client as a client whose account status is ACT"
DRAFT = {  # what a real model replies to prompts/define.md for DEFINE
    "kind": "filter",
    "name": "active client",
    "description": "Clients whose account is active (status code ACT).",
    "synonyms": ["active clients", "active customers"],
    "table": "client",
    "sql": "status = 'ACT'",
}


@pytest.fixture
def make_bot(make_bot):
    """The shared make_bot (tests/conftest.py), with ANALYST an analyst."""

    def make(**overrides: Any) -> RunningBot:
        overrides.setdefault("verified", {"analysts": {"users": [ANALYST]}, "schema_check_s": 0})
        return make_bot(**overrides)

    return make


@pytest.fixture
def drafting(fake_llm) -> None:
    """The model drafts DEFINE as DRAFT, reasoning first the way models do."""
    fake_llm.respond(
        "define",
        lambda body: Reply(content="The status code ACT marks active accounts.\n" + mr.json_fenced(DRAFT)),
    )


def wait(predicate, timeout: float = 15):
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)
    return value


def reply(bot: RunningBot, text: str, *, user: str = ASKER, channel: str = CHANNEL) -> Message:
    """Mention the bot in a new thread; its first reply there."""
    _, ts = bot.sender.mention(text, user=user, channel=channel)
    return bot.slack.wait_for(lambda s: s.answer_in(channel, ts), timeout=20)


def click(bot: RunningBot, action_id: str, value: str, message: Message, *, user: str) -> None:
    response = bot.sender.click(
        action_id,
        value,
        channel=message.channel,
        message_ts=message.ts,
        thread_ts=message.thread_ts,
        user=user,
        blocks=message.blocks,
    )
    assert response.status == 200


def ephemeral(slack: FakeSlack, user: str, words: str) -> Message:
    return slack.wait_for(
        lambda s: next((m for m in s.ephemerals if m.to == user and words in m.all_text()), None)
    )


def writer_definitions(fake_llm) -> str:
    """The "Business definitions" section of the last prompt the SQL writer got ("" when none)."""
    prompt = fake_llm.calls("generate")[-1].messages[0]["content"]
    return prompt.partition("### Business definitions")[2].partition("\n### ")[0]


def home_of(bot: RunningBot, user: str) -> str:
    bot.slack.home_views.pop(user, None)
    event = {"type": "app_home_opened", "user": user, "channel": "D0001", "tab": "home", "event_ts": "1.1"}
    assert bot.sender.event(event).status == 200
    return json.dumps(wait(lambda: bot.slack.home_views.get(user)))


def home_click(bot: RunningBot, action_id: str, value: str, user: str) -> None:
    payload = {
        "type": "block_actions",
        "user": {"id": user, "username": user.lower(), "team_id": "T0001"},
        "api_app_id": "A0001",
        "token": "legacy-verification-token",
        "trigger_id": "trigger.home",
        "team": {"id": "T0001", "domain": "askbase-test"},
        "container": {"type": "view", "view_id": "V0HOME"},
        "view": {"id": "V0HOME", "type": "home", "blocks": []},
        "actions": [
            {"type": "button", "action_id": action_id, "block_id": "b", "value": value, "action_ts": "1"}
        ],
    }
    assert bot.sender.interaction(payload).status == 200


def count_active(plan: Plan) -> None:
    plan.main_task = "Count the active clients"
    plan.objects = ["clients"]
    plan.sql = ACTIVE


# ---------------------------------------------------------------- define → approve → used


def test_an_analyst_defines_approves_and_the_next_answer_uses_it_then_undo_takes_it_back(
    make_bot, slack, plan, fake_llm, drafting, hand
):
    bot = make_bot()
    drafted = reply(bot, DEFINE, user=ANALYST)
    text = drafted.all_text()
    ((active, total),) = hand("SELECT SUM(status = 'ACT'), COUNT(*) FROM client")
    assert "*active client*" in text and "Clients whose account is active" in text
    assert "SELECT * FROM client WHERE status = 'ACT'" in text  # its SQL
    assert f"{active:,} of {total:,} client rows" in text  # the preview figure, computed
    assert "*Approve* makes it active at once" in text
    assert {"teach_approve", "teach_reject"} <= set(drafted.action_ids())
    assert "define" in fake_llm.calls("define")[0].user.lower()  # the model drafted it

    click(bot, "teach_approve", drafted.button_value("teach_approve"), drafted, user=ANALYST)
    approved = wait(
        lambda: "approved" in slack.messages[drafted.ts].all_text() and slack.messages[drafted.ts]
    )
    assert f"<@{ANALYST}> approved *active client*: it is active at once" in approved.all_text()
    assert approved.action_ids() == ["teach_undo"]  # Approve / Reject are gone; Undo for analysts

    count_active(plan)
    answer = reply(bot, "How many active clients are there?", user=COLLEAGUE)
    assert answer.result() == [[str(active)]]
    section = writer_definitions(fake_llm)
    assert '"active client"' in section and "status = 'ACT'" in section
    today = time.gmtime()
    assert f":book: Using: *active client* (defined by <@{ANALYST}>, {today.tm_mday} " in answer.all_text()

    click(bot, "teach_undo", approved.button_value("teach_undo"), approved, user=ANALYST)
    wait(lambda: "undid *active client*" in slack.messages[drafted.ts].all_text())
    again = reply(bot, "How many active clients are there today?", user=COLLEAGUE)
    assert "Using:" not in again.all_text() and "active client" not in writer_definitions(fake_llm)


# ---------------------------------------------------------------- a non-analyst's proposal is queued


def test_a_non_analysts_proposal_waits_in_the_analysts_home_and_is_not_used_until_approved(
    make_bot, slack, plan, fake_llm, drafting
):
    bot = make_bot()
    drafted = reply(bot, DEFINE)
    assert "Sent to the analysts for review" in drafted.all_text()
    assert "You are an analyst" not in drafted.all_text()

    click(bot, "teach_approve", drafted.button_value("teach_approve"), drafted, user=ASKER)
    refused = ephemeral(slack, ASKER, "Only analysts can approve")
    assert refused.thread_ts == drafted.thread_ts
    (waiting,) = Teacher(bot.askbase).pending("demo")
    assert (waiting.name, waiting.status, waiting.provenance.owner) == ("active client", "proposed", ASKER)

    count_active(plan)
    answer = reply(bot, "How many active clients are there?")
    assert "Using:" not in answer.all_text()
    assert "active client" not in writer_definitions(fake_llm)  # proposed is not in force

    assert "teach_approve" not in home_of(bot, ASKER)  # the queue is the analysts'
    home = home_of(bot, ANALYST)
    assert "Proposed definitions" in home and "active client" in home and "teach_approve" in home
    home_click(bot, "teach_approve", str(waiting.id), ANALYST)
    wait(lambda: "approved *active client*" in json.dumps(slack.home_views.get(ANALYST, {})))
    assert Teacher(bot.askbase).pending("demo") == []
    home = home_of(bot, ANALYST)  # what an analyst may still undo
    assert "Taught in chat, active now" in home and "teach_undo" in home

    used = reply(bot, "How many active clients are there now?", user=COLLEAGUE)
    assert "Using: *active client* (defined by" in used.all_text()
    assert "status = 'ACT'" in writer_definitions(fake_llm)


def test_what_cannot_be_drafted_says_why_with_an_example_that_works(make_bot, slack):
    bot = make_bot(llm=False)  # keyword mode: no model to draft free words
    _, ts = bot.sender.message("define churned as the clients we lost", channel="D0001")  # a DM
    said = slack.wait_for(lambda s: s.answer_in("D0001", ts), timeout=20)
    text = said.all_text()
    assert "I could not draft that definition" in text and "no language model is configured" in text
    assert "teach_approve" not in said.action_ids()

    unknown = reply(bot, "define big hosts as compute.gpu_count > 2")
    assert "I could not draft that definition" in unknown.all_text()
    example = re.search(r"e\.g\. `(define [^`]+)`", unknown.all_text())
    assert example, unknown.all_text()
    works = reply(bot, example.group(1).replace("&#x27;", "'"))  # the example given does draft
    assert "proposed a definition" in works.all_text()
    assert len(Teacher(bot.askbase).pending()) == 1  # only what could be drafted is stored


def test_a_definition_name_cannot_ping_the_channel(make_bot, slack):
    bot = make_bot(llm=False)
    _, ts = bot.sender.mention("define &lt;!channel&gt; clients as client.status = 'ACT'", user=ANALYST)
    drafted = slack.wait_for(lambda s: s.answer_in(CHANNEL, ts), timeout=20)
    text = drafted.all_text()
    assert "&lt;!channel&gt; clients" in text and "<!channel>" not in text


def test_slash_define_posts_the_proposal_in_the_channel(make_bot, slack):
    bot = make_bot(llm=False)
    assert bot.sender.command("define big hosts as compute.cpu_cores > 16", user=ASKER).status == 200
    posted = slack.wait_for(
        lambda s: next((m for m in s.messages.values() if "big hosts" in m.all_text()), None), timeout=20
    )
    assert posted.channel == CHANNEL and "cpu_cores &gt; 16" in posted.all_text()  # escaped, as Slack wants
    assert "Sent to the analysts for review" in posted.all_text()


# ---------------------------------------------------------------- learned from a clarification


SINGAPORE = "How many clients are in Singapore?"
IN_CITY = (
    "SELECT COUNT(*) AS clients FROM client JOIN location ON location.id = client.loc_id "
    "WHERE location.city = 'Singapore'"
)


def script_singapore(fake_llm) -> None:
    """An SRA round that asks which 'Singapore' when the data offers both readings (and the
    person has not answered yet); a writer that counts the clients in the city."""

    def clarify(body):
        prompt = body["messages"][-1]["content"]
        ids = {label.strip(): cid for cid, label in re.findall(r"(C\d[ab]) ([^\[]+)\[", prompt)}
        city = next((c for label, c in ids.items() if "city" in label), None)
        country = next((c for label, c in ids.items() if "country" in label), None)
        if "answered:" in prompt or not (city and country):
            return Reply(content=mr.json_fenced({"summary": "Count clients.", "ask": False}))
        return Reply(
            content=mr.json_fenced(
                {
                    "summary": "Count the clients in Singapore.",
                    "review": {"AmbValue": "Singapore is both a city and a country"},
                    "ask": True,
                    "kind": "AmbValue",
                    "question": "Which 'Singapore' do you mean?",
                    "options": [
                        {"text": "the city of Singapore", "candidate": city},
                        {"text": "the country Singapore", "candidate": country},
                    ],
                }
            )
        )

    fake_llm.respond("clarify", clarify)
    fake_llm.respond(
        "generate", lambda body: Reply(content=mr.candidates(IN_CITY, task="Clients in Singapore"))
    )


def clarification_in(slack: FakeSlack, channel: str, thread_ts: str) -> Message:
    return slack.wait_for(
        lambda s: next((m for m in s.thread(channel, thread_ts) if "clarify_other" in m.action_ids()), None),
        timeout=20,
    )


def option(message: Message, words: str) -> tuple[str, str]:
    for block in message.blocks:
        for e in block.get("elements", []) if block.get("type") == "actions" else []:
            if e["action_id"].startswith("clarify_option_") and words in e["text"]["text"]:
                return e["action_id"], e["value"]
    raise AssertionError(f"no option with {words!r}")


def test_a_reading_remembered_for_a_channel_applies_there_and_not_in_another(make_bot, slack, fake_llm, hand):
    script_singapore(fake_llm)
    bot = make_bot(engine={"clarify": "always"})
    _, ts = bot.sender.mention(SINGAPORE, user=ASKER)
    question = clarification_in(slack, CHANNEL, ts)
    action_id, value = option(question, "city")
    bot.sender.click(action_id, value, channel=CHANNEL, message_ts=question.ts, thread_ts=ts, user=ASKER)
    ((in_city,),) = hand(
        "SELECT COUNT(*) FROM client c JOIN location l ON l.id = c.loc_id WHERE l.city = 'Singapore'"
    )
    slack.wait_for(lambda s: any(m.result() == [[str(in_city)]] for m in s.thread(CHANNEL, ts)), timeout=20)

    offer = ephemeral(slack, ASKER, "Always read 'Singapore' as the city of Singapore?")
    assert offer.thread_ts == ts
    remember = next(
        e
        for b in offer.blocks
        if b["type"] == "actions"
        for e in b["elements"]
        if "channel" in e["text"]["text"]
    )
    bot.sender.click(
        remember["action_id"],
        remember["value"],
        channel=CHANNEL,
        message_ts=offer.ts,
        thread_ts=ts,
        user=ASKER,
    )
    ephemeral(slack, ASKER, f"Remembered in <#{CHANNEL}>")

    asked = len(fake_llm.calls("generate"))
    here = reply(bot, SINGAPORE, user=COLLEAGUE)  # the same channel: read as remembered, not asked again
    assert here.result() == [[str(in_city)]] and "clarify_other" not in here.action_ids()
    assert len(fake_llm.calls("generate")) == asked + 1
    section = writer_definitions(fake_llm)
    assert '"Singapore"' in section and "city = 'Singapore'" in section
    assert f"Using: *Singapore* (defined by <@{ASKER}>" in here.all_text()

    _, elsewhere_ts = bot.sender.mention(SINGAPORE, user=COLLEAGUE, channel=OTHER_CHANNEL)
    elsewhere = clarification_in(slack, OTHER_CHANNEL, elsewhere_ts)  # not remembered there: asked
    assert "Which 'Singapore' do you mean?" in elsewhere.all_text()

    home = home_of(bot, ASKER)  # listed with who and when, removable
    assert "Readings you remembered" in home and "teach_remove" in home and f"<#{CHANNEL}>" in home
    (learned,) = [d for _, d in Teacher(bot.askbase).remembered_by(ASKER)]
    home_click(bot, "teach_remove", str(learned.id), ASKER)
    wait(lambda: "Removed *Singapore*" in json.dumps(slack.home_views.get(ASKER, {})))
    assert Teacher(bot.askbase).remembered_by(ASKER) == []


# ---------------------------------------------------------------- an assumption, and its Correct button


def test_an_assumption_line_has_a_correct_button_that_leads_to_a_proposal(make_bot, slack, fake_llm, hand):
    fake_llm.respond(
        "generate",
        lambda body: Reply(
            content="Task: Count the active clients\nPlan: client, filter on status\n"
            "Assumed: 'active' as status = 'ACT'\n\n" + f"```sql\n-- primary\n{ACTIVE}\n```"
        ),
    )
    bot = make_bot()
    answer = reply(bot, "How many active clients are there?")
    assumed = next(b for b in answer.blocks if str(b.get("block_id", "")).startswith("assumed:"))
    assert "Assumed: Read 'active' as status = 'ACT'" in assumed["text"]["text"]
    button = assumed["accessory"]
    assert button["text"]["text"] == "Correct this" and json.loads(button["value"])["w"] == "active"

    click(bot, button["action_id"], button["value"], answer, user=ASKER)
    modal = slack.wait_for(lambda s: s.calls_to("views.open"))[-1].args["view"]
    word = next(b for b in modal["blocks"] if b.get("block_id") == "word")
    assert word["element"]["initial_value"] == "active"
    values = {
        "word": {"word": {"type": "plain_text_input", "value": "active client"}},
        "meaning": {"meaning": {"type": "plain_text_input", "value": "client.status = 'ACT'"}},
    }
    assert (
        bot.sender.view(
            "view_submission", "teach_correct", private_metadata=modal["private_metadata"], values=values
        ).status
        == 200
    )
    proposal = slack.wait_for(
        lambda s: next(
            (m for m in s.thread(CHANNEL, answer.thread_ts) if "proposed a definition" in m.all_text()), None
        ),
        timeout=20,
    )
    ((active,),) = hand("SELECT COUNT(*) FROM client WHERE status = 'ACT'")
    assert "*active client*" in proposal.all_text() and f"{active:,} of" in proposal.all_text()
    assert "Sent to the analysts for review" in proposal.all_text()
    (waiting,) = Teacher(bot.askbase).pending("demo")
    assert waiting.name == "active client"


# ---------------------------------------------------------------- a 👎 comment that states a rule


def test_a_thumbs_down_comment_that_states_a_rule_queues_a_proposal(make_bot, slack, plan):
    bot = make_bot(engine={"clarify": "off"})
    answer = reply(bot, "How many clients are there?")
    bot.sender.click(
        "feedback",
        answer.feedback_values()["negative"],
        channel=CHANNEL,
        message_ts=answer.ts,
        thread_ts=answer.thread_ts,
        action_type="feedback_buttons",
        user=ASKER,
    )
    modal = slack.wait_for(lambda s: s.calls_to("views.open"))[-1].args["view"]
    values = {
        "comment": {
            "comment": {
                "type": "plain_text_input",
                "value": "Wrong. Define active client as client.status = 'ACT'.",
            }
        }
    }
    assert (
        bot.sender.view(
            "view_submission", "feedback_down", private_metadata=modal["private_metadata"], values=values
        ).status
        == 200
    )
    proposal = slack.wait_for(
        lambda s: next(
            (m for m in s.thread(CHANNEL, answer.thread_ts) if "comment states a rule" in m.all_text()), None
        ),
        timeout=20,
    )
    assert (
        "*active client*" in proposal.all_text() and "Sent to the analysts for review" in proposal.all_text()
    )
    (waiting,) = Teacher(bot.askbase).pending("demo")
    assert (waiting.name, waiting.status) == ("active client", "proposed")
