"""One run of a schedule (core/schedules/tick.py, posted by bot/slack/schedule_posts.py) against a real database, a real state database
and the fake Slack Web API, on a clock the test moves. Assertions are about what reaches Slack
and what the state database keeps.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from typing import Any

import pytest
import sqlalchemy as sa
from slack_sdk import WebClient

from bot.schedule_runs import run_and_post
from bot.slack.schedule_posts import Runner
from core.askbase import Askbase
from core.bench.fakes.slack_api import FakeSlack
from core.schedules import store
from core.schedules.conditions import Condition, parse_condition
from core.schedules.triggers import interval_spec
from core.settings import AccessRule, load_settings
from core.state import audit, conversations
from core.state.schema import schedules as schedules_table
from tests.clock import Clock
from tests.slack_requests import BOT_TOKEN

CHANNEL = "C0SCHED"
OWNER = "U0OWNER"
START = dt.datetime(2025, 6, 2, 8, 0, tzinfo=dt.UTC)
OPEN_BY_TEAM = (
    "SELECT team, COUNT(*) AS open FROM incidents WHERE status = 'open' GROUP BY team ORDER BY team"
)


class Shop:
    """A small SQLite database the test changes between runs (the bot only ever reads it)."""

    def __init__(self, path) -> None:
        self.path = path
        self.sql("CREATE TABLE incidents (id INTEGER PRIMARY KEY, team TEXT NOT NULL, status TEXT NOT NULL)")
        for team, status in [("core", "open"), ("core", "open"), ("web", "open"), ("web", "closed")]:
            self.add(team, status)

    def sql(self, statement: str, *params) -> list[tuple]:
        with sqlite3.connect(self.path) as conn:
            return conn.execute(statement, params).fetchall()

    def add(self, team: str, status: str = "open") -> None:
        self.sql("INSERT INTO incidents (team, status) VALUES (?, ?)", team, status)


class SlackWithGroups(FakeSlack):
    """The fake Web API plus usergroups.list, for access rules that name user groups."""

    groups: list[dict[str, Any]]

    def api_usergroups_list(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "usergroups": self.groups}


@pytest.fixture
def slack():
    fake = SlackWithGroups()
    fake.groups = []
    with fake:
        yield fake


@pytest.fixture
def shop(tmp_path) -> Shop:
    return Shop(tmp_path / "shop.sqlite")


@pytest.fixture
def clock() -> Clock:
    """The shared clock (tests/clock.py), at a fixed Monday morning so run times read the same every day."""
    return Clock(START)


@pytest.fixture
def make_runner(tmp_path, state_url, slack, shop, clock):
    opened: list[Askbase] = []

    def make(**overrides) -> Runner:
        settings = load_settings(
            var_dir=str(tmp_path / "var"),
            state_url=state_url,
            databases={"shop": {"url": f"sqlite:///{shop.path}"}},
            slack={"bot_token": BOT_TOKEN, "api_base_url": slack.base_url},
            **overrides,
        )
        askbase = Askbase(settings)
        opened.append(askbase)
        client = WebClient(token=BOT_TOKEN, base_url=slack.base_url)
        return Runner(askbase, lambda _team: client, worker_id="test", clock=clock)

    yield make
    for askbase in opened:
        askbase.close()


@pytest.fixture
def runner(make_runner) -> Runner:
    return make_runner()


def schedule(runner: Runner, sql: str = OPEN_BY_TEAM, *, every: int = 60, condition=None, owner=OWNER):
    return store.create(
        runner.askbase.state,
        team="T0001",
        channel=CHANNEL,
        owner=owner,
        question="How many open incidents per team?",
        sql=sql,
        database="shop",
        trigger=interval_spec(every),
        condition=condition or Condition(),
        now=runner.clock(),
    )


def posts(slack: FakeSlack, channel: str = CHANNEL):
    """Top-level messages in the channel, oldest first."""
    return sorted(
        (m for m in slack.messages.values() if m.channel == channel and m.thread_ts is None),
        key=lambda m: float(m.ts),
    )


def results(slack: FakeSlack):
    return [m for m in posts(slack) if m.table() is not None]


def audited(runner: Runner) -> list[tuple]:
    """Every audit row so far: (source, user, channel, status, rows)."""
    entries = audit.entries_since(runner.askbase.state, dt.timedelta(days=3650))
    return [(e["source"], e["user"], e["channel"], e["status"], e["rows"]) for e in entries]


# ---------------------------------------------------------------- a run


def test_a_run_posts_the_result_like_an_answer_with_table_chart_and_buttons(runner, slack, shop, clock):
    s = schedule(runner)
    clock.advance(60)
    report = run_and_post(runner, s.id)
    assert report.status == "posted"

    (message,) = posts(slack)
    assert message.table() == [["Team", "Open"], ["core", "2"], ["web", "1"]]
    text = message.all_text()
    assert "How many open incidents per team?" in text and "every minute" in text and f"<@{OWNER}>" in text
    assert "First run" in text
    assert {"show_sql", "get_csv", "feedback_up", "schedule_pause", "schedule_run"} <= set(
        message.action_ids()
    )
    # a category → number breakdown gets its chart, in the thread under the result
    files = slack.wait_for(lambda s: s.files_in(CHANNEL, message.ts))
    assert [f.filename.rsplit(".", 1)[-1] for f in files] == ["png"]
    # the buttons work later: the run is stored as a turn of its own thread
    trace_id = message.button_value("show_sql")
    turn = conversations.turn_by_trace(runner.askbase.state, trace_id)
    assert turn is not None and turn.sql.startswith("SELECT team") and turn.database == "shop"
    # recorded and audited
    (run,) = store.runs(runner.askbase.state, s.id)
    assert (run.status, run.rows, run.scheduled_for, run.message_ts) == (
        "posted",
        2,
        START + dt.timedelta(seconds=60),
        message.ts,
    )
    assert audited(runner) == [("schedule_run", OWNER, CHANNEL, "answer", 2)]  # exactly one row


def test_each_run_says_what_changed_since_the_last(runner, slack, shop, clock):
    s = schedule(runner)
    clock.advance(60)
    run_and_post(runner, s.id)
    shop.add("core")
    shop.add("data")
    shop.sql("UPDATE incidents SET status = 'closed' WHERE team = 'web'")
    clock.advance(60)
    run_and_post(runner, s.id)

    latest = posts(slack)[-1]
    assert latest.table() == [["Team", "Open"], ["core", "3"], ["data", "1"]]
    text = latest.all_text()
    assert "1 row added: data" in text
    assert "1 row removed: web" in text
    assert "core — open: 2 → 3 (▲ 1)" in text


def test_a_tick_runs_once_however_often_it_is_fired(runner, slack, clock):
    s = schedule(runner)
    clock.advance(61)
    assert run_and_post(runner, s.id).status == "posted"
    clock.advance(5)  # still the same tick
    assert run_and_post(runner, s.id).status == "duplicate"
    assert len(results(slack)) == 1
    assert len(store.runs(runner.askbase.state, s.id)) == 1
    assert len(audited(runner)) == 1  # the refused repeat reached no database


# ---------------------------------------------------------------- when to post


def test_only_when_changed_stays_quiet_until_the_result_changes(runner, slack, shop, clock):
    s = schedule(runner, condition=Condition("changed"))
    clock.advance(60)
    assert run_and_post(runner, s.id).status == "posted"  # the first result is news
    clock.advance(60)
    assert run_and_post(runner, s.id).status == "quiet"
    assert len(results(slack)) == 1
    shop.add("web")
    clock.advance(60)
    assert run_and_post(runner, s.id).status == "posted"
    assert results(slack)[-1].table()[-1] == ["web", "2"]
    assert [r.status for r in store.runs(runner.askbase.state, s.id)] == ["posted", "quiet", "posted"]


def test_only_when_not_empty(runner, slack, shop, clock):
    late = "SELECT id, team FROM incidents WHERE status = 'late' ORDER BY id"
    s = schedule(runner, late, condition=Condition("not_empty"))
    clock.advance(60)
    assert run_and_post(runner, s.id).status == "quiet"
    assert results(slack) == []
    shop.add("ops", "late")
    clock.advance(60)
    assert run_and_post(runner, s.id).status == "posted"
    assert results(slack)[0].table()[1][1] == "ops"


def test_only_when_a_column_condition_holds(runner, slack, shop, clock):
    s = schedule(runner, condition=parse_condition("open > 2"))
    clock.advance(60)
    assert run_and_post(runner, s.id).status == "quiet"  # core has 2
    shop.add("core")
    clock.advance(60)
    assert run_and_post(runner, s.id).status == "posted"
    assert "only when open &gt; 2" in results(slack)[0].all_text()  # mrkdwn escapes ">"


# ---------------------------------------------------------------- pause, resume, run now, downtime


def test_paused_schedules_do_not_post_and_resume_without_counting_the_pause_as_missed(runner, slack, clock):
    s = schedule(runner)
    clock.advance(60)
    run_and_post(runner, s.id)
    store.pause(runner.askbase.state, s.id, reason="by test")
    clock.advance(300)
    assert run_and_post(runner, s.id).status == "skipped"
    assert len(results(slack)) == 1
    store.resume(runner.askbase.state, s.id, now=clock())
    clock.advance(60)
    assert run_and_post(runner, s.id).status == "posted"
    assert "was not running" not in results(slack)[-1].all_text()


def test_runs_missed_while_no_worker_ran_become_one_run_with_a_note(runner, slack, clock):
    s = schedule(runner)
    clock.advance(60)
    run_and_post(runner, s.id)
    clock.advance(60 * 5 + 3)  # down for five ticks
    assert run_and_post(runner, s.id).status == "posted"
    note = results(slack)[-1].all_text()
    assert "not running at 4 scheduled times; this one run covers them" in note
    assert len(results(slack)) == 2


def test_run_now_posts_at_once_even_when_paused_and_names_who_asked(runner, slack, clock):
    s = schedule(runner)
    store.pause(runner.askbase.state, s.id)
    clock.advance(7)
    report = run_and_post(runner, s.id, manual_by="U0CLICK")
    assert report.status == "posted"
    assert "run now by <@U0CLICK>" in results(slack)[0].all_text()
    assert store.get(runner.askbase.state, s.id).paused  # still paused; the scheduled ticks are untouched
    assert store.runs(runner.askbase.state, s.id)[0].manual


# ---------------------------------------------------------------- failures


def test_failures_post_one_error_back_off_then_pause_and_tell_the_owner(runner, slack, shop, clock):
    s = schedule(runner)
    shop.sql("ALTER TABLE incidents RENAME TO incidents_old")
    clock.advance(60)
    assert run_and_post(runner, s.id).status == "failed"
    (error,) = posts(slack)
    assert "failed" in error.text and "no such table: incidents" in error.text and "1 of 3" in error.text

    clock.advance(60)
    assert run_and_post(runner, s.id).status == "failed"  # the second failure: the same message, edited
    assert posts(slack) == [error] and "2 of 3" in slack.messages[error.ts].text
    clock.advance(60)
    assert run_and_post(runner, s.id).status == "skipped"  # backing off: this tick is left out
    clock.advance(60)
    assert run_and_post(runner, s.id).status == "paused"

    assert "paused" in slack.messages[error.ts].text.lower()
    dm = [m for m in slack.messages.values() if m.channel == OWNER]
    assert len(dm) == 1 and "paused it" in dm[0].text and "no such table" in dm[0].text
    after = store.get(runner.askbase.state, s.id)
    assert after.paused and after.failures == 3
    clock.advance(60)
    assert run_and_post(runner, s.id).status == "skipped"
    assert [r.status for r in store.runs(runner.askbase.state, s.id)] == ["failed"] * 3
    assert len([m for m in slack.messages.values() if m.channel == CHANNEL]) == 1


def test_a_run_that_works_again_clears_the_failure(runner, slack, shop, clock):
    s = schedule(runner)
    shop.sql("ALTER TABLE incidents RENAME TO incidents_old")
    clock.advance(60)
    run_and_post(runner, s.id)
    shop.sql("ALTER TABLE incidents_old RENAME TO incidents")
    clock.advance(60)
    assert run_and_post(runner, s.id).status == "posted"
    assert "works again" in posts(slack)[0].text
    assert store.get(runner.askbase.state, s.id).failures == 0


# ---------------------------------------------------------------- permissions and the guard at run time


def test_the_owners_database_permissions_apply_at_run_time(make_runner, slack, clock):
    runner = make_runner(access={"rules": [AccessRule(databases=["shop"], users=["U0ANALYST"])]})
    s = schedule(runner, owner="U0INTERN")
    clock.advance(60)
    assert run_and_post(runner, s.id).status == "failed"
    (error,) = posts(slack)
    assert f"<@U0INTERN> may no longer query `shop` from <#{CHANNEL}>" in error.text
    assert results(slack) == []
    assert audited(runner) == [("schedule_run", "U0INTERN", CHANNEL, "error", 0)]  # the refusal, once


def test_access_rules_naming_user_groups_are_checked_against_the_owners_groups(make_runner, slack, clock):
    slack.groups = [{"id": "S0DATA", "handle": "data-team", "users": ["U0ANALYST"]}]
    runner = make_runner(access={"rules": [AccessRule(databases=["shop"], usergroups=["data-team"])]})
    member, outsider = schedule(runner, owner="U0ANALYST"), schedule(runner, owner="U0INTERN")
    clock.advance(60)
    assert run_and_post(runner, member.id).status == "posted"
    assert run_and_post(runner, outsider.id).status == "failed"
    assert len(results(slack)) == 1


def test_stored_sql_is_guarded_again_before_every_run(runner, slack, shop, clock):
    s = schedule(runner)
    with runner.askbase.state.begin() as conn:  # someone with access to the state database edits the row
        conn.execute(
            schedules_table.update().where(schedules_table.c.id == s.id).values(sql="DELETE FROM incidents")
        )
    clock.advance(60)
    assert run_and_post(runner, s.id).status == "failed"
    assert "not allowed any more: it" in posts(slack)[0].text
    assert shop.sql("SELECT COUNT(*) FROM incidents") == [(4,)]
    assert [(source, status) for source, _, _, status, _ in audited(runner)] == [("schedule_run", "error")]


def test_a_schedule_whose_database_is_no_longer_configured_says_so(runner, slack, clock):
    s = store.create(
        runner.askbase.state,
        team="T0001",
        channel=CHANNEL,
        owner=OWNER,
        question="How many open incidents per team?",
        sql=OPEN_BY_TEAM,
        database="retired",
        trigger=interval_spec(60),
        now=clock(),
    )
    clock.advance(60)
    assert run_and_post(runner, s.id).status == "failed"
    (error,) = posts(slack)
    assert "The database 'retired' is not configured any more." in error.text and "1 of 3" in error.text


def test_a_result_slack_refuses_is_a_failed_run_and_is_posted_at_the_next_tick(runner, slack, clock):
    s = schedule(runner, condition=Condition("changed"))
    slack.fail("chat.postMessage", "not_in_channel")
    clock.advance(60)
    assert run_and_post(runner, s.id).status == "failed"
    (error,) = posts(slack)
    assert f"I could not post in <#{CHANNEL}> (not_in_channel)." in error.text and "1 of 3" in error.text
    assert [r.status for r in store.runs(runner.askbase.state, s.id)] == ["failed"]

    # nobody saw that result, so "only when changed" posts the same result next time
    clock.advance(60)
    assert run_and_post(runner, s.id).status == "posted"
    assert results(slack)[0].table() == [["Team", "Open"], ["core", "2"], ["web", "1"]]
    assert "works again" in slack.messages[error.ts].text
    assert [r.status for r in store.runs(runner.askbase.state, s.id)] == ["posted", "failed"]
    assert [status for _, _, _, status, _ in audited(runner)] == ["answer", "answer"]  # one per run


def test_a_deleted_schedule_does_nothing(runner, slack, clock):
    s = schedule(runner)
    assert store.delete(runner.askbase.state, s.id)
    clock.advance(60)
    assert run_and_post(runner, s.id).status == "skipped"
    assert slack.calls_to("chat.postMessage") == []
    with runner.askbase.state.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(schedules_table)).scalar() == 0


def test_old_run_records_are_pruned(runner, slack, clock, monkeypatch):
    monkeypatch.setattr(store, "RUNS_KEPT", 3)
    s = schedule(runner)
    for _ in range(5):
        clock.advance(60)
        run_and_post(runner, s.id)
    kept = store.runs(runner.askbase.state, s.id)
    assert [r.scheduled_for for r in kept] == [START + dt.timedelta(minutes=m) for m in (5, 4, 3)]
    assert len(results(slack)) == 5
