"""Schedules from Slack: `/ask schedule`, the Schedule button and its modal, `/ask schedules` with its
buttons, the App Home tab, and who may change what. The real Bolt app behind its HTTP server gets
signed requests; Slack is the fake Web API and the model the fake OpenAI server.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from typing import Any

import pytest

from core.bench.fakes.slack_api import FakeSlack
from core.schedules import store
from core.settings import AccessRule
from core.state import audit
from tests.slack_harness import RunningBot, hand

CHANNEL = "C0001"
USER = "U0001"


def eventually(predicate, timeout: float = 15):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


def thread_text(slack: FakeSlack, channel: str, needle: str):
    """The first message of ours in the channel whose text contains `needle`."""
    return slack.wait_for(
        lambda s: next(
            (m for m in s.messages.values() if m.channel == channel and needle in m.all_text()), None
        ),
        timeout=15,
    )


def schedule_via_command(bot: RunningBot, text: str, channel: str = CHANNEL, user: str = USER):
    response = bot.sender.command(f"schedule {text}", channel=channel, user=user)
    assert response.status == 200 and not response.body
    return thread_text(bot.slack, channel, "scheduled")


def click(bot: RunningBot, action_id: str, value: str, *, user: str = USER, channel: str = CHANNEL,
          ephemeral: bool = False, home: bool = False, response_url: str = "") -> None:  # fmt: skip
    """A button in an ephemeral `/ask schedules` list, in the channel, or on the App Home tab."""
    payload: dict[str, Any] = {
        "type": "block_actions",
        "user": {"id": user, "username": user.lower(), "team_id": "T0001"},
        "api_app_id": "A0001",
        "token": "legacy-verification-token",
        "trigger_id": f"trigger.{time.monotonic_ns()}",
        "team": {"id": "T0001", "domain": "askbase-test"},
        "actions": [
            {"type": "button", "action_id": action_id, "block_id": "b", "value": value, "action_ts": "1"}
        ],
    }
    if home:
        payload["container"] = {"type": "view", "view_id": "V0HOME"}
        payload["view"] = {"id": "V0HOME", "type": "home", "blocks": []}
    else:
        payload["container"] = {
            "type": "message",
            "message_ts": "1700000000.000001",
            "channel_id": channel,
            "is_ephemeral": ephemeral,
        }
        payload["channel"] = {"id": channel, "name": "general"}
        payload["response_url"] = response_url or "http://127.0.0.1:9/respond"
        if not ephemeral:
            payload["message"] = {"type": "message", "ts": "1700000000.000001", "user": "UBOT", "text": ""}
    assert bot.sender.interaction(payload).status == 200


def ephemeral_notes(slack: FakeSlack, user: str) -> list[str]:
    return [
        c.args.get("text", "") for c in slack.calls_to("chat.postEphemeral") if c.args.get("user") == user
    ]


# ---------------------------------------------------------------- /ask schedule


def test_ask_schedule_answers_once_then_stores_that_sql_in_the_persons_timezone(bot, slack, plan, demo_var):
    note = schedule_via_command(bot, "every weekday at 9:00 how many clients are there?")
    assert "every weekday at 09:00 (Europe/Berlin)" in note.all_text()  # the fake users.info says Berlin
    assert "Next run" in note.all_text() and "/ask schedules" in note.all_text()

    answer = next(m for m in slack.messages.values() if m.channel == CHANNEL and m.result())
    assert answer.result() == hand(demo_var, "SELECT COUNT(*) FROM client")
    assert note.thread_ts == answer.thread_ts  # the confirmation sits with the answer it repeats

    (s,) = store.for_channel(bot.state, "T0001", CHANNEL)
    assert (s.owner, s.question, s.database) == (USER, "how many clients are there?", "demo")
    assert s.trigger.timezone == "Europe/Berlin" and s.trigger.day_of_week == "mon,tue,wed,thu,fri"
    assert "count(" in s.sql.lower() and s.source_trace == answer.button_value("show_sql")


def test_ask_schedule_with_a_condition_and_an_interval(bot, slack, plan):
    schedule_via_command(bot, "every 2 hours only when changed: how many clients are there?")
    (s,) = store.for_channel(bot.state, "T0001", CHANNEL)
    assert s.trigger.seconds == 7200 and s.condition.kind == "changed"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "Write when first"),
        ("every fortnight how many clients", "can't tell when"),
        ("every weekday how many clients", "what time"),
        ("every 10 seconds how many clients", "at most every minute"),
    ],
)
def test_ask_schedule_explains_what_it_cannot_read_and_schedules_nothing(bot, slack, plan, text, says):
    reply = bot.sender.command(f"schedule {text}").json()
    assert reply["response_type"] == "ephemeral" and says in reply["text"]
    assert store.for_channel(bot.state, "T0001", CHANNEL) == []
    assert slack.calls_to("chat.postMessage") == []


def test_a_question_that_merely_starts_with_schedule_is_answered(bot, slack, plan):
    assert bot.sender.command("schedule of client visits: how many clients are there?").status == 200
    root = thread_text(slack, CHANNEL, "schedule of client visits")
    slack.wait_for(lambda s: (a := s.answer_in(CHANNEL, root.ts)) is not None and a.result(), timeout=15)
    assert store.for_channel(bot.state, "T0001", CHANNEL) == []


def test_the_minimum_interval_is_a_setting(make_bot, slack, plan):
    bot = make_bot(schedules={"min_interval_s": 5})
    schedule_via_command(bot, "every 5 seconds how many clients are there?")
    (s,) = store.for_channel(bot.state, "T0001", CHANNEL)
    assert s.trigger.seconds == 5


def test_nothing_is_scheduled_when_the_question_gets_no_answer(bot, slack, plan, fake_llm):
    plan.sql = "SELECT no_such_column FROM client"
    bot.sender.command("schedule every day at 8:00 how many clients are there?")
    note = thread_text(slack, CHANNEL, "didn't schedule")
    assert "Retry" in note.all_text()
    assert store.for_channel(bot.state, "T0001", CHANNEL) == []


def test_creating_a_schedule_runs_its_sql_once_more_as_the_owner_and_audits_that(bot, slack, plan):
    schedule_via_command(bot, "every day at 7:00 how many clients are there?")
    entries = audit.entries_since(bot.state, dt.timedelta(days=1))
    made = [(e["user"], e["channel"], e["status"], e["rows"]) for e in entries if e["source"] == "schedule"]
    assert made == [(USER, CHANNEL, "answer", 1)]


def test_sql_that_is_no_longer_allowed_is_not_scheduled(make_bot, slack, plan, demo_var):
    bot = make_bot()
    _, view = open_modal(bot, slack)
    # meanwhile an admin denies the table (another web process, the new configuration)
    demo = {"url": f"sqlite:///{demo_var / 'demo.sqlite'}", "deny_tables": ["client"]}
    stricter = make_bot(databases={"demo": demo})
    reply = stricter.sender.view("view_submission", "schedule_create", private_metadata=view["private_metadata"],
                                 values=modal_values())  # fmt: skip
    assert reply.status == 200 and not reply.body
    (note,) = eventually(lambda: ephemeral_notes(slack, USER))
    assert note.startswith("I didn't schedule it:") and "not allowed" in note and "client" in note
    assert store.for_channel(bot.state, "T0001", CHANNEL) == []


# ---------------------------------------------------------------- the Schedule button and its modal


def modal_values(**fields: Any) -> dict[str, Any]:
    values = {
        "how": {
            "how": {"type": "static_select", "selected_option": {"value": fields.get("how", "weekdays")}}
        },
        "every": {"every": {"type": "number_input", "value": fields.get("every")}},
        "at": {"at": {"type": "timepicker", "selected_time": fields.get("at", "09:00")}},
        "days": {
            "days": {
                "type": "checkboxes",
                "selected_options": [{"value": str(d)} for d in fields.get("days", [])],
            }
        },
        "cron": {"cron": {"type": "plain_text_input", "value": fields.get("cron")}},
        "tz": {"tz": {"type": "plain_text_input", "value": fields.get("tz", "Europe/Berlin")}},
        "channel": {
            "channel": {
                "type": "conversations_select",
                "selected_conversation": fields.get("channel", CHANNEL),
            }
        },
        "when": {
            "when": {"type": "radio_buttons", "selected_option": {"value": fields.get("when", "always")}}
        },
        "condition": {"condition": {"type": "plain_text_input", "value": fields.get("condition")}},
    }
    return values


def open_modal(bot: RunningBot, slack: FakeSlack):
    _, ts = bot.sender.mention("how many clients are there?")
    answer = slack.wait_for(lambda s: s.answer_in(CHANNEL, ts), timeout=15)
    bot.sender.click("schedule_open", answer.button_value("schedule_open"), channel=CHANNEL,
                     message_ts=answer.ts, thread_ts=ts)  # fmt: skip
    opened = slack.wait_for(lambda s: s.calls_to("views.open"), timeout=15)[-1].args["view"]
    return ts, opened


def test_the_schedule_button_opens_a_modal_and_the_form_creates_the_schedule(bot, slack, plan):
    thread, view = open_modal(bot, slack)
    assert view["callback_id"] == "schedule_create"
    blocks = {b.get("block_id"): b for b in view["blocks"]}
    assert blocks["tz"]["element"]["initial_value"] == "Europe/Berlin"  # the person's Slack timezone
    assert blocks["channel"]["element"]["initial_conversation"] == CHANNEL  # this channel by default
    assert {o["value"] for o in blocks["when"]["element"]["options"]} == {
        "always",
        "not_empty",
        "changed",
        "condition",
    }
    assert {o["value"] for o in blocks["how"]["element"]["options"]} >= {
        "minutes",
        "hours",
        "daily",
        "weekly",
        "cron",
    }

    values = modal_values(how="weekly", days=[0, 2], at="08:30", tz="America/New_York", when="condition",
                          condition="clients > 0")  # fmt: skip
    reply = bot.sender.view("view_submission", "schedule_create", private_metadata=view["private_metadata"],
                            values=values)  # fmt: skip
    assert reply.status == 200 and not reply.body  # accepted: the modal closes
    note = thread_text(slack, CHANNEL, "scheduled")
    assert note.thread_ts == thread  # confirmed under the answer
    (s,) = store.for_channel(bot.state, "T0001", CHANNEL)
    assert s.trigger.describe() == "weekly on Mon, Wed at 08:30 (America/New_York)"
    assert (s.condition.kind, s.condition.column, s.condition.op, s.condition.value) == (
        "column",
        "clients",
        ">",
        0,
    )
    assert s.owner == USER and "count(" in s.sql.lower()


@pytest.mark.parametrize(
    ("fields", "block", "says"),
    [
        ({"how": "minutes", "every": None}, "every", "how many minutes"),
        ({"how": "minutes", "every": "0"}, "every", "how many minutes"),
        ({"how": "weekly", "days": []}, "days", "at least one day"),
        ({"how": "cron", "cron": "every day"}, "cron", "five fields"),
        ({"how": "cron", "cron": "* * * * *"}, "cron", ""),  # allowed: once a minute is the default minimum
        ({"tz": "Mars/Olympus"}, "tz", "not a timezone"),
        ({"when": "condition", "condition": "many"}, "condition", "count > 0"),
    ],
)
def test_the_modal_points_at_the_field_that_is_wrong(bot, slack, plan, fields, block, says):
    _, view = open_modal(bot, slack)
    reply = bot.sender.view("view_submission", "schedule_create", private_metadata=view["private_metadata"],
                            values=modal_values(**fields))  # fmt: skip
    if not says:
        assert not reply.body
        eventually(lambda: store.for_channel(bot.state, "T0001", CHANNEL))
        return
    body = reply.json()
    assert body["response_action"] == "errors" and says in body["errors"][block]
    assert store.for_channel(bot.state, "T0001", CHANNEL) == []


def test_the_modal_will_not_schedule_into_a_channel_whose_database_the_person_may_not_use(
    make_bot, slack, plan
):
    bot = make_bot(access={"rules": [AccessRule(databases=["demo"], channels=[CHANNEL])]})
    _, view = open_modal(bot, slack)
    reply = bot.sender.view("view_submission", "schedule_create", private_metadata=view["private_metadata"],
                            values=modal_values(channel="C0ELSEWHERE"))  # fmt: skip
    assert "may not query `demo`" in reply.json()["errors"]["channel"]


# ---------------------------------------------------------------- /ask schedules and its buttons


def test_the_channel_list_pauses_resumes_runs_and_deletes(bot, slack, plan):
    schedule_via_command(bot, "every day at 7:00 how many clients are there?")
    (s,) = store.for_channel(bot.state, "T0001", CHANNEL)
    listing = bot.sender.command("schedules").json()
    assert listing["response_type"] == "ephemeral"
    text = json.dumps(listing)
    assert "how many clients are there?" in text and "every day at 07:00 (Europe/Berlin)" in text
    assert {"schedule_pause", "schedule_run", "schedule_delete"} <= set(
        e["action_id"] for b in listing["blocks"] if b["type"] == "actions" for e in b["elements"]
    )
    url = slack.response_url("list")

    click(bot, "schedule_pause", str(s.id), ephemeral=True, response_url=url)
    refreshed = slack.wait_for(lambda f: f.calls_to("response_url"), timeout=15)[-1].args
    assert refreshed["replace_original"] in (True, "true") and "Paused" in json.dumps(refreshed["blocks"])
    assert store.get(bot.state, s.id).paused
    assert "schedule_resume" in json.dumps(refreshed["blocks"])

    click(bot, "schedule_resume", str(s.id), ephemeral=True, response_url=url)
    eventually(lambda: not store.get(bot.state, s.id).paused)

    before = len(slack.calls_to("chat.postMessage"))
    click(bot, "schedule_run", str(s.id), ephemeral=True, response_url=url)
    run = slack.wait_for(
        lambda f: next((m for m in list(f.messages.values()) if "run now by <@U0001>" in m.all_text()), None),
        timeout=15,
    )
    assert (
        run.channel == CHANNEL
        and run.result() is not None
        and len(slack.calls_to("chat.postMessage")) > before
    )

    click(bot, "schedule_delete", str(s.id), ephemeral=True, response_url=url)
    eventually(lambda: store.get(bot.state, s.id) is None)
    assert "No scheduled questions" in json.dumps(bot.sender.command("schedules").json())


def test_only_the_owner_or_a_channel_admin_changes_a_schedule(bot, slack, plan):
    schedule_via_command(bot, "every day at 7:00 how many clients are there?")
    (s,) = store.for_channel(bot.state, "T0001", CHANNEL)

    click(bot, "schedule_delete", str(s.id), user="U0OTHER")
    eventually(lambda: ephemeral_notes(slack, "U0OTHER"))
    assert "Only <@U0001>" in ephemeral_notes(slack, "U0OTHER")[0]
    click(bot, "schedule_pause", str(s.id), user="U0OTHER")
    eventually(lambda: len(ephemeral_notes(slack, "U0OTHER")) == 2)
    assert store.get(bot.state, s.id) is not None and not store.get(bot.state, s.id).paused

    slack.channels[CHANNEL] = {"creator": "U0CREATOR"}
    click(bot, "schedule_pause", str(s.id), user="U0CREATOR")
    eventually(lambda: store.get(bot.state, s.id).paused)

    slack.users["U0ADMIN"] = {"is_admin": True}
    click(bot, "schedule_delete", str(s.id), user="U0ADMIN")
    eventually(lambda: store.get(bot.state, s.id) is None)


# ---------------------------------------------------------------- App Home


def test_the_home_tab_lists_the_persons_schedules_with_their_buttons(bot, slack, plan):
    schedule_via_command(bot, "every day at 7:00 how many clients are there?")
    schedule_via_command(bot, "every 2 hours how many clients are there?", channel="C0002", user="U0OTHER")
    (mine,) = store.for_owner(bot.state, USER)

    event = {"type": "app_home_opened", "user": USER, "channel": "D0001", "tab": "home", "event_ts": "1.1"}
    assert bot.sender.event(event).status == 200
    home = eventually(lambda: slack.home_views.get(USER))
    text = json.dumps(home)
    assert home["type"] == "home" and "every day at 07:00" in text and "every 2 hours" not in text
    assert f"<#{CHANNEL}>" in text

    click(bot, "schedule_pause", str(mine.id), home=True)
    eventually(lambda: "Paused" in json.dumps(slack.home_views[USER]))
    assert store.get(bot.state, mine.id).paused
