"""Schedules in Teams: made by typing in a chat with the served adapter, run by the worker's Teams
side with the stored conversation reference (a proactive post to the fake Bot Connector, no
incoming request), paused from a card."""

from __future__ import annotations

import datetime as dt

from bot.schedule_runs import run_and_post
from bot.teams import posts
from core.askbase import Askbase
from core.bench.fakes.bot_connector import FakeConnector
from core.schedules import store
from core.schedules.parse import parse_schedule
from core.schedules.triggers import next_fire_time
from core.settings import load_settings
from tests.teams_harness import TeamsServed, teams_env

ANON = {"ASKBASE_TEAMS__ALLOW_ANONYMOUS": "true", "ASKBASE_SCHEDULES__MIN_INTERVAL_S": "60"}


def test_a_schedule_made_in_teams_is_posted_proactively_and_paused_from_its_card(
    tmp_path, demo_var, monkeypatch
):
    env = {**teams_env(tmp_path, demo_var), **ANON}
    with FakeConnector() as connector:
        served = TeamsServed(env, tmp_path, connector)
        try:
            place = served.client.place("channel", conversation="1700000000777")
            activity = served.client.activity(
                "schedule every 2 hours how many clients are there?", place=place, mention=True
            )
            thread = activity["conversation"]["id"]
            served.client.post(activity)
            connector.card_in(thread, lambda m: "Scheduled" in m.all_text(), timeout=20)

            for name, value in served.env.items():  # the worker's settings are the server's
                monkeypatch.setenv(name, value)
            askbase = Askbase(load_settings())
            try:
                (made,) = [s for s in store.active(askbase.state) if s.platform == "teams"]
                assert made.owner == "00000000-0000-4000-8000-00000000a11c"
                assert made.channel == "19:general0123456789abcdef@thread.tacv2"
                assert made.address and made.address["conversation"]["id"] == thread
                assert made.address["serviceUrl"] == connector.service_url

                due = next_fire_time(made.trigger, dt.datetime.now(dt.UTC)) + dt.timedelta(seconds=1)
                runner = posts.teams_runner(askbase, worker_id="test", clock=lambda: due)
                before = len(connector.in_conversation(thread))
                done = run_and_post(runner, made.id)
                assert done.status == "posted", done.detail
                run = connector.wait_for(
                    lambda c: next((m for m in c.in_conversation(thread)[before:] if m.is_answer), None)
                )
                assert run.reply_to is None  # a new message in the thread, not a reply to anything
                assert run.sentence() == "Number of clients: 300." and "every 2 hours" in run.all_text()
                (latest,) = store.runs(askbase.state, made.id, limit=1)
                assert latest.status == "posted" and latest.message_ts == run.id

                pause = run.action("Pause schedule")
                press = served.client.activity(None, place=place, value=pause["data"], reply_to=run.id)
                served.client.post(press)
                connector.wait_for(lambda c: store.get(askbase.state, made.id).paused, timeout=10)
                again = run_and_post(runner, made.id)
                assert again.status == "skipped" and again.detail == "paused"

                # someone else cannot resume it
                resume = {"askbase": "schedule_resume", "s": made.id}
                other = served.client.activity(
                    None, place=place, value=resume, user="bbbbbbbb-0000-4000-8000-000000000002", name="Bob"
                )
                served.client.post(other)
                connector.card_in(thread, lambda m: "Only the person who made" in m.all_text(), timeout=10)
                assert store.get(askbase.state, made.id).paused
            finally:
                askbase.close()
        finally:
            served.stop()


def test_a_teams_schedule_fails_with_a_reason_when_the_worker_has_no_teams_app(
    state_url, demo_var, monkeypatch
):
    monkeypatch.setenv("ASKBASE_VAR_DIR", str(demo_var))
    monkeypatch.setenv("ASKBASE_STATE_URL", state_url)
    askbase = Askbase(load_settings())
    try:
        made = store.create(
            askbase.state,
            team="",
            channel="19:c@thread.v2",
            owner="someone",
            question="How many clients are there?",
            sql="SELECT COUNT(*) FROM client",
            database="demo",
            trigger=parse_schedule("every 2 hours"),
            platform="teams",
            address={"conversation": {"id": "19:c@thread.v2"}, "serviceUrl": "http://127.0.0.1:9/"},
        )
        due = next_fire_time(made.trigger, dt.datetime.now(dt.UTC)) + dt.timedelta(seconds=1)
        runner = posts.teams_runner(askbase, clock=lambda: due)
        assert runner.sender is None
        done = run_and_post(runner, made.id)
        assert done.status == "failed" and "no Teams app" in done.detail
    finally:
        askbase.close()
