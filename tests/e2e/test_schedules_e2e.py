"""The issue's harness, end to end: `python -m bot serve --http` and `python -m bot worker` as two
processes sharing one ASKBASE_STATE_URL, and the fake Slack API. Like the Slack harness it sets no
LLM key: the question is answered once in keyword mode, and the schedule re-runs that SQL.

A schedule made with the slash command runs and posts; paused, the posts stop; resumed, they come
back; the worker restarts and the schedule survives; deleted, it is gone. The minimum interval is
lowered for the test with ASKBASE_SCHEDULES__MIN_INTERVAL_S, as a harness would.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest

from bot.worker import JOBS_TABLE
from core.bench.fakes.slack_api import FakeSlack
from tests.e2e.test_slack_serve import Served, base_env
from tests.processes import BotProcess
from tests.slack_harness import hand

CHANNEL = "C0E2E"
EVERY_S = 1
pytestmark = pytest.mark.slow  # two processes and real ticks: `make test-fast` leaves it out


class WorkerProcess(BotProcess):
    """`python -m bot worker`; a restarted worker writes on in the same log."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        super().__init__(["worker"], env, log, append=True)


def runs_posted(slack: FakeSlack) -> list:
    return [
        m
        for m in list(slack.messages.values())
        if m.channel == CHANNEL and m.result() is not None and ":repeat:" in m.all_text()
    ]


def wait_posts(slack: FakeSlack, n: int, timeout: float = 20) -> int:
    slack.wait_for(lambda s: len(runs_posted(s)) >= n, timeout=timeout)
    return len(runs_posted(slack))


def quiet(slack: FakeSlack, state: Path) -> int:
    """The running worker has dropped the job, a run already under way has landed, and a whole
    interval (and then some) passes without a post."""
    deadline = time.monotonic() + 20
    while scheduled_jobs(state) or running_runs(state):
        assert time.monotonic() < deadline, "the worker kept the job, or a run never finished"
        time.sleep(0.05)
    count = len(runs_posted(slack))
    time.sleep(EVERY_S * 1.5)
    assert len(runs_posted(slack)) == count
    return count


def running_runs(state: Path) -> int:
    with sqlite3.connect(state) as conn:
        return conn.execute("SELECT COUNT(*) FROM schedule_runs WHERE status = 'running'").fetchone()[0]


def scheduled_jobs(state: Path) -> int:
    """Jobs in the worker's APScheduler job store (same state database)."""
    with sqlite3.connect(state) as conn:
        return conn.execute(f"SELECT COUNT(*) FROM {JOBS_TABLE}").fetchone()[0]


def click(served: Served, action_id: str, schedule_id: str, response_url: str) -> None:
    payload = {
        "type": "block_actions",
        "user": {"id": "U0001", "username": "u0001", "team_id": "T0001"},
        "api_app_id": "A0001",
        "token": "legacy-verification-token",
        "trigger_id": "trigger.e2e",
        "team": {"id": "T0001", "domain": "askbase-test"},
        "container": {"type": "message", "message_ts": "1.1", "channel_id": CHANNEL, "is_ephemeral": True},
        "channel": {"id": CHANNEL, "name": "e2e"},
        "response_url": response_url,
        "actions": [
            {
                "type": "button",
                "action_id": action_id,
                "block_id": "b",
                "value": schedule_id,
                "action_ts": "1",
            }
        ],
    }
    assert served.sender.interaction(payload).status == 200


@pytest.mark.slow  # two processes on real time: ~13 s
@pytest.mark.timeout(180)
def test_a_schedule_made_in_slack_runs_pauses_resumes_survives_a_worker_restart_and_is_deleted(
    demo_var, tmp_path
):
    pytest.importorskip("core.keyword")
    state = tmp_path / "state.sqlite"  # base_env's ASKBASE_STATE_URL
    with FakeSlack() as slack:
        env = {
            **base_env(slack, tmp_path, demo_var),
            "ASKBASE_SCHEDULES__MIN_INTERVAL_S": "1",
            "ASKBASE_SCHEDULES__POLL_S": "0.2",
            "ASKBASE_SCHEDULES__LEASE_S": "3",
        }
        served = Served(env, tmp_path)
        worker = WorkerProcess(env, tmp_path / "worker.log")
        try:
            # create it with the slash command: answered once, then scheduled
            assert (
                served.sender.command(
                    f"schedule every {EVERY_S} second how many clients are there?", channel=CHANNEL
                ).status
                == 200
            )
            slack.wait_for(
                lambda s: any(
                    m.channel == CHANNEL and "scheduled" in m.all_text() for m in list(s.messages.values())
                ),
                timeout=30,
            )
            listing = served.sender.command("schedules", channel=CHANNEL).json()
            (schedule_id,) = {
                e["value"]
                for b in listing["blocks"]
                if b["type"] == "actions"
                for e in b["elements"]
                if e["action_id"] == "schedule_pause"
            }

            # runs are posted, each with the current result
            wait_posts(slack, 2, timeout=30)
            assert runs_posted(slack)[0].result() == hand(demo_var, "SELECT COUNT(*) FROM client")

            # pause: the posts stop
            url = slack.response_url("list")
            click(served, "schedule_pause", schedule_id, url)
            slack.wait_for(
                lambda s: "Paused" in json.dumps([c.args for c in s.calls_to("response_url")]), timeout=15
            )
            paused_at = quiet(slack, state)

            # resume: they come back
            click(served, "schedule_resume", schedule_id, url)
            wait_posts(slack, paused_at + 2)

            # the worker restarts: the schedule survives
            assert worker.stop() == 0, worker.output()
            stopped_at = len(runs_posted(slack))
            worker = WorkerProcess(env, tmp_path / "worker.log")
            wait_posts(slack, stopped_at + 2, timeout=30)

            # delete: it is gone, and nothing more is posted
            click(served, "schedule_delete", schedule_id, url)
            slack.wait_for(
                lambda s: "Deleted" in json.dumps([c.args for c in s.calls_to("response_url")]), timeout=15
            )
            quiet(slack, state)
            assert "No scheduled questions" in json.dumps(
                served.sender.command("schedules", channel=CHANNEL).json()
            )
        finally:
            worker_code = worker.stop()
            serve_code = served.stop()
        assert worker_code == 0, worker.output()
        assert serve_code == 0, served.output()
        assert "leads the scheduler" in worker.output()
