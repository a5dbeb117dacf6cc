"""When a schedule fires, whether a run posts, and what changed — the pure rules (core/schedules/)."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from core.previews import PREVIEW_BYTES
from core.schedules.conditions import Condition, ConditionError, parse_condition, should_post
from core.schedules.diff import describe_diff, diff
from core.schedules.errors import ScheduleError
from core.schedules.missed import missed_runs
from core.schedules.parse import split_schedule
from core.schedules.results import fingerprint, snapshot
from core.schedules.triggers import (
    TriggerSpec,
    backoff_until,
    check_frequency,
    cron_spec,
    daily_spec,
    fire_times,
    interval_spec,
    latest_fire_time,
    next_fire_time,
    weekly_spec,
)

UTC = dt.UTC
BERLIN = ZoneInfo("Europe/Berlin")
MONDAY_10_UTC = dt.datetime(2025, 6, 2, 10, 0, tzinfo=UTC)  # Monday 2 June 2025, 12:00 in Berlin


def local(spec, when):
    return when.astimezone(ZoneInfo(spec.timezone))


# ---------------------------------------------------------------- reading "/ask schedule …"


@pytest.mark.parametrize(
    ("text", "label", "question"),
    [
        (
            "every weekday at 9:00 how many open incidents?",
            "every weekday at 09:00",
            "how many open incidents?",
        ),
        ("every 15 minutes revenue today", "every 15 minutes", "revenue today"),
        ("every 2 hours: open tickets", "every 2 hours", "open tickets"),
        ("every 30 seconds ping", "every 30 seconds", "ping"),
        ("daily at 7am signups yesterday", "every day at 07:00", "signups yesterday"),
        ("every day at 5:30 pm late orders", "every day at 17:30", "late orders"),
        ("weekly on mon,wed at 8:30 churned clients", "weekly on Mon, Wed at 08:30", "churned clients"),
        ("every monday and thursday at 17:45 backlog", "weekly on Mon, Thu at 17:45", "backlog"),
        ("mon-fri at 9 open incidents", "every weekday at 09:00", "open incidents"),
        ("every weekend at 10am visits", "every weekend day at 10:00", "visits"),
        (
            "monthly on the 1st at 9:00 revenue last month",
            "monthly on the 1st at 09:00",
            "revenue last month",
        ),
        ("hourly queue length", "every hour", "queue length"),
        ("cron 0 9 * * 1-5 open incidents", "cron `0 9 * * 1-5`", "open incidents"),
        ("every day at 9 amounts by region", "every day at 09:00", "amounts by region"),
    ],
)
def test_schedules_read_the_way_people_write_them(text, label, question):
    spec, condition, rest = split_schedule(text, "Europe/Berlin")
    assert spec.label == label
    assert rest == question
    assert condition == Condition()


def test_a_weekday_schedule_fires_monday_to_friday_at_that_time_in_the_persons_timezone():
    spec, _, _ = split_schedule("every weekday at 9:00 q", "Europe/Berlin")
    times = fire_times(spec, MONDAY_10_UTC, MONDAY_10_UTC + dt.timedelta(days=7))
    assert [local(spec, t).strftime("%a %H:%M") for t in times] == [
        "Tue 09:00",
        "Wed 09:00",
        "Thu 09:00",
        "Fri 09:00",
        "Mon 09:00",
    ]
    assert spec.describe() == "every weekday at 09:00 (Europe/Berlin)"


def test_a_timezone_written_after_the_time_wins_over_the_persons():
    spec, _, question = split_schedule("daily at 8:00 America/New_York open tickets", "Europe/Berlin")
    assert spec.timezone == "America/New_York" and question == "open tickets"
    first = next_fire_time(spec, MONDAY_10_UTC)
    assert local(spec, first).strftime("%H:%M") == "08:00"


def test_cron_weekdays_are_read_as_crontab_numbers_sunday_is_0_and_7():
    """APScheduler 3 counts 0 as Monday; a crontab line must still mean what crontab means."""

    def days(expr):
        spec = cron_spec(expr)
        times = fire_times(spec, MONDAY_10_UTC, MONDAY_10_UTC + dt.timedelta(days=7))
        return sorted({t.strftime("%a") for t in times})

    assert days("0 9 * * 1-5") == ["Fri", "Mon", "Thu", "Tue", "Wed"]
    assert days("0 9 * * 0") == ["Sun"]
    assert days("0 9 * * 7") == ["Sun"]
    assert days("0 9 * * 5-7") == ["Fri", "Sat", "Sun"]
    assert days("0 9 * * sat,sun") == ["Sat", "Sun"]
    assert days("0 9 * * */2") == ["Sat", "Sun", "Thu", "Tue"]  # 0,2,4,6 = Sun, Tue, Thu, Sat


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("every weekday how many clients", "what time"),
        ("tomorrow how many clients", "can't tell when"),
        ("every 5 minutes", "What should I ask"),
        ("cron 0 9 * * 8 q", "not a day of the week"),
        ("cron 61 9 * * * q", "can't read the cron"),
        ("every day at 25:00 q", "not a time of day"),
    ],
)
def test_unreadable_schedules_say_how_to_write_them(text, says):
    with pytest.raises(ScheduleError, match=says):
        split_schedule(text)


@pytest.mark.parametrize(
    ("text", "condition"),
    [
        ("every hour only when changed: open tickets", Condition("changed")),
        ("every hour if it changes open tickets", Condition("changed")),
        ("every hour when not empty, late orders", Condition("not_empty")),
        ("every hour only when count > 0: late orders", Condition("column", "count", ">", 0.0)),
        ("every hour if status = 'late' orders", Condition("column", "status", "=", "late")),
    ],
)
def test_a_post_condition_can_follow_the_schedule(text, condition):
    _, found, question = split_schedule(text)
    assert found == condition
    assert question in ("open tickets", "late orders", "orders")


def test_a_question_starting_with_when_is_not_taken_for_a_condition():
    _, condition, question = split_schedule("every day at 9:00 when did the last order arrive?")
    assert condition.kind == "always" and question == "when did the last order arrive?"


def test_frequency_is_bounded_below_by_the_setting():
    now = MONDAY_10_UTC
    check_frequency(interval_spec(60), 60, now)
    with pytest.raises(ScheduleError, match="at most every minute"):
        check_frequency(interval_spec(30), 60, now)
    with pytest.raises(ScheduleError, match="every 2 minutes"):
        check_frequency(cron_spec("*/2 * * * *"), 300, now)
    check_frequency(interval_spec(2), 1, now)  # a test deployment may allow seconds


# ---------------------------------------------------------------- ticks


def test_an_interval_ticks_on_a_grid_from_its_anchor():
    spec = interval_spec(90).anchored(MONDAY_10_UTC)
    later = MONDAY_10_UTC + dt.timedelta(seconds=200)
    assert latest_fire_time(spec, later) == MONDAY_10_UTC + dt.timedelta(seconds=180)
    assert next_fire_time(spec, later) == MONDAY_10_UTC + dt.timedelta(seconds=270)
    # the worker's trigger agrees with the arithmetic
    trigger = spec.trigger()
    after = trigger.get_next_fire_time(None, MONDAY_10_UTC + dt.timedelta(seconds=200))
    assert after == MONDAY_10_UTC + dt.timedelta(seconds=270)


def test_the_tick_of_a_late_run_is_the_latest_scheduled_time_before_it():
    spec = weekly_spec(range(5), 9, 0, "Europe/Berlin")
    saturday = dt.datetime(2025, 6, 7, 12, 0, tzinfo=UTC)
    tick = latest_fire_time(spec, saturday)
    assert local(spec, tick).strftime("%a %H:%M") == "Fri 09:00"


def test_missed_runs_count_the_scheduled_times_between_the_last_run_and_this_one():
    spec = interval_spec(60).anchored(MONDAY_10_UTC)
    tick = MONDAY_10_UTC + dt.timedelta(minutes=10)
    missed = missed_runs(spec, MONDAY_10_UTC + dt.timedelta(minutes=6), tick)
    assert missed.count == 3  # :07, :08, :09 — :10 is this run
    assert "3 scheduled times" in missed.note()
    assert missed_runs(spec, tick - dt.timedelta(minutes=1), tick).count == 0


def test_failures_back_off_doubling_from_the_schedules_own_period():
    spec = interval_spec(60).anchored(MONDAY_10_UTC)
    assert backoff_until(spec, MONDAY_10_UTC, 1) == MONDAY_10_UTC + dt.timedelta(minutes=1)
    assert backoff_until(spec, MONDAY_10_UTC, 3) == MONDAY_10_UTC + dt.timedelta(minutes=4)
    daily = daily_spec(9, 0)
    assert backoff_until(daily, MONDAY_10_UTC, 5) == MONDAY_10_UTC + dt.timedelta(days=1)


def test_specs_survive_json():
    spec = cron_spec("30 8 * * 1,3", "Asia/Tokyo").anchored(MONDAY_10_UTC)
    assert TriggerSpec.from_json(spec.to_json()) == spec
    condition = parse_condition("total >= 1000.5")
    assert Condition.from_json(condition.to_json()) == condition


# ---------------------------------------------------------------- when to post


def test_post_conditions():
    cols, rows = ("team", "open"), [("core", 3), ("web", 0)]
    fp = fingerprint(cols, rows)
    assert should_post(Condition(), cols, [], fp, fp).post
    assert not should_post(Condition("not_empty"), cols, [], fp, None).post
    assert should_post(Condition("not_empty"), cols, rows, fp, None).post
    assert should_post(Condition("changed"), cols, rows, fp, None).post  # the first result
    assert not should_post(Condition("changed"), cols, rows, fp, fp).post
    assert should_post(Condition("changed"), cols, rows[:1], fingerprint(cols, rows[:1]), fp).post
    assert should_post(parse_condition("open > 2"), cols, rows, fp, None).post
    assert not should_post(parse_condition("OPEN > 3"), cols, rows, fp, None).post
    assert should_post(parse_condition("team = 'web'"), cols, rows, fp, None).post
    assert not should_post(parse_condition("team = 'ops'"), cols, rows, fp, None).post
    with pytest.raises(ConditionError, match="no column 'count'"):
        should_post(parse_condition("count > 0"), cols, rows, fp, None)


def test_a_condition_that_is_not_a_comparison_says_how_to_write_one():
    with pytest.raises(ScheduleError, match="count > 0"):
        parse_condition("lots of rows")


# ---------------------------------------------------------------- what changed


def snap(cols, rows):
    return snapshot(cols, rows, budget=PREVIEW_BYTES)


def test_diff_of_a_single_number_says_up_or_down_by_how_much():
    before, after = snap(["clients"], [(120,)]), snap(["clients"], [(125,)])
    lines = describe_diff(diff(before, after))
    assert lines == ["clients: 120 → 125 (▲ 5)"]
    lines = describe_diff(diff(after, before))
    assert lines == ["clients: 125 → 120 (▼ 5)"]


def test_diff_by_key_names_rows_added_removed_and_numbers_changed():
    before = snap(["team", "open"], [("core", 3), ("web", 5), ("ops", 1)])
    after = snap(["team", "open"], [("core", 4), ("web", 5), ("data", 2)])
    d = diff(before, after)
    assert [r[0] for r in d.added] == ["data"]
    assert [r[0] for r in d.removed] == ["ops"]
    assert [(c.key, c.old, c.new) for c in d.changes] == [(("core",), 3, 4)]
    text = "\n".join(describe_diff(d))
    assert "1 row added: data" in text and "1 row removed: ops" in text and "core — open: 3 → 4 (▲ 1)" in text


def test_diff_of_rows_without_a_key_compares_whole_rows():
    before = snap(["amount"], [(10,), (20,), (20,)])
    after = snap(["amount"], [(20,), (30,)])
    d = diff(before, after)
    assert sorted(d.added) == [(30,)] and sorted(d.removed) == [(10,), (20,)]
    assert "Rows: 3 → 2" in describe_diff(d)


def test_diff_says_when_nothing_changed_and_when_there_is_nothing_to_compare():
    same = snap(["team", "open"], [("core", 3)])
    assert describe_diff(diff(same, same)) == ["No change since the last run."]
    assert "First run" in describe_diff(diff(None, same))[0]
    other = snap(["team", "closed"], [("core", 3)])
    assert "different columns" in describe_diff(diff(same, other))[0]


def test_year_and_id_columns_are_keys_not_numbers_that_went_up():
    before = snap(["year", "revenue"], [(2023, 100), (2024, 150)])
    after = snap(["year", "revenue"], [(2023, 100), (2024, 170), (2025, 20)])
    d = diff(before, after)
    assert [r[0] for r in d.added] == [2025]
    assert [(c.key, c.new) for c in d.changes] == [((2024,), 170)]


def test_a_harness_lowers_the_minimum_interval_through_the_environment(monkeypatch):
    from core.settings import load_settings

    assert load_settings().schedules.min_interval_s == 60
    monkeypatch.setenv("ASKBASE_SCHEDULES__MIN_INTERVAL_S", "1")
    monkeypatch.setenv("ASKBASE_SCHEDULES__POLL_S", "0.2")
    schedules = load_settings().schedules
    assert (schedules.min_interval_s, schedules.poll_s) == (1, 0.2)
    check_frequency(interval_spec(1), schedules.min_interval_s, MONDAY_10_UTC)
