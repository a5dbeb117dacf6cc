"""Scheduled runs in Teams: who the owner is there, how a failure reads, and the proactive posts.

core/schedules/tick.py runs a tick and says what to show; this module shows it, from the worker
process, with the conversation reference stored with the schedule (`address`) and the SDK's
proactive path — no incoming request involved. A result is posted like an answer (the card with
its buttons, headed with the schedule, followed by what changed, with Pause), and stored as a turn
of the schedule's conversation so Show SQL, CSV, 👍 and follow-ups work on it. A failing run posts
one notice per failure (Teams cards are not edited from the worker); whether the result got out
goes back to the core (`delivered` / `undelivered`), which records the run.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from microsoft_agents.authentication.msal import MsalConnectionManager
from microsoft_agents.hosting.aiohttp import CloudAdapter

from bot.charts import chart_spec
from bot.teams import cards, links
from bot.teams.config import app_id, sdk_configuration, startup_problem
from bot.teams.incoming import conversation_key
from bot.teams.proactive import Sender, reference_from
from bot.teams.schedules import schedule_line, when_text
from core.access import Principal
from core.askbase import Askbase
from core.schedules import tick
from core.schedules.store import Schedule
from core.schedules.tick import ChatUnavailable, Failure, Result, Tick
from core.schedules.triggers import as_utc, next_fire_time
from core.state import conversations

log = logging.getLogger("askbase.teams.schedules")


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@dataclass
class TeamsRunner:
    """Runs schedules made in Teams and posts them there; the `Chat` of their ticks."""

    askbase: Askbase
    sender: Sender | None  # None: this worker has no Teams configuration (runs fail, and say so)
    link_key: bytes
    public_url: str | None
    worker_id: str = ""
    clock: Callable[[], dt.datetime] = utcnow

    def principal(self, schedule: Schedule) -> Principal:
        if self.sender is None:
            raise ChatUnavailable("the worker has no Teams app configured (see docs/teams.md)")
        if not schedule.address:
            raise ChatUnavailable("the schedule has no Teams conversation to post to")
        return Principal.teams(user=schedule.owner, channel=schedule.channel, team=schedule.team or None)

    def explain(self, schedule: Schedule, failure: Failure) -> str:
        if failure.kind == "access":
            return f"Its owner may no longer query '{schedule.database}' here."
        if failure.kind == "connection":
            return f"I could not reach the database '{schedule.database}'."
        if failure.kind == tick.DELIVERY:
            return f"Teams did not take the post ({failure.detail})."
        if failure.kind == tick.INTERNAL or not failure.detail.strip():
            return "Something went wrong on my side (the log has the details)."
        text = failure.detail.strip()
        return text if text.endswith((".", "!", "?")) else text + "."


def teams_runner(
    askbase: Askbase, *, worker_id: str = "", clock: Callable[[], dt.datetime] = utcnow
) -> TeamsRunner:
    """The worker's Teams side, from the same settings as `serve --teams`."""
    settings = askbase.settings
    sender = None
    if startup_problem(settings) is None:
        connections = MsalConnectionManager(**sdk_configuration(settings))
        sender = Sender(CloudAdapter(connection_manager=connections), app_id(settings))
    return TeamsRunner(
        askbase=askbase,
        sender=sender,
        link_key=links.signing_key(settings),
        public_url=(settings.teams.public_url or "").rstrip("/") or None,
        worker_id=worker_id,
        clock=clock,
    )


def run_and_post(runner: TeamsRunner, schedule_id: int, *, manual_by: str | None = None) -> Tick:
    """Run a schedule once (the tick due now) and post what it says in its Teams conversation."""
    done = tick.run_tick(
        runner.askbase,
        schedule_id,
        runner,
        now=as_utc(runner.clock()),
        manual_by=manual_by,
        worker=runner.worker_id,
    )
    if done.status == "ready":
        done = _deliver(runner, done)
    if done.notice is not None and done.schedule is not None:
        _report_failure(runner, done.schedule, done.notice)
    return done


def _post(runner: TeamsRunner, s: Schedule, content: dict[str, Any], summary: str) -> str:
    if runner.sender is None or not s.address:
        raise ChatUnavailable("no Teams conversation to post to")
    return asyncio.run(runner.sender.post(reference_from(s.address), content, summary))


def _deliver(runner: TeamsRunner, ready: Tick) -> Tick:
    s, result = ready.schedule, ready.result
    assert s is not None and result is not None
    try:
        activity_id = _post(runner, s, run_card(runner, s, result), f"{s.question} — {result.outcome.answer}")
    except ChatUnavailable as exc:
        return tick.undelivered(runner.askbase, runner, ready, Failure(tick.UNREACHABLE, str(exc)))
    except Exception as exc:  # the connector refused it (HTTP error), or could not be reached
        log.warning("schedule %s: post failed: %s", s.id, exc)
        return tick.undelivered(runner.askbase, runner, ready, Failure(tick.DELIVERY, type(exc).__name__))
    _remember_turn(runner, s, result)
    return tick.delivered(runner.askbase, ready, activity_id or "posted")


def _remember_turn(runner: TeamsRunner, s: Schedule, result: Result) -> None:
    """The run as a turn of the schedule's conversation: the buttons under it find it."""
    key = conversation_key(str((s.address or {}).get("conversation", {}).get("id") or s.channel), s.database)
    try:
        conversations.ensure_conversation(
            runner.askbase.state, key, s.database, channel=s.channel, user=s.owner
        )
        conversations.record_turn(runner.askbase.state, key, result.outcome, user=s.owner)
    except Exception:
        log.exception("schedule %s: could not store the turn", s.id)


def run_card(runner: TeamsRunner, s: Schedule, result: Result) -> dict[str, Any]:
    """An answer card framed as a scheduled run: what it is, the result, what changed, Pause."""
    outcome = result.outcome
    head = f"🔁 **{cards.escape(s.question)}** — {cards.escape(schedule_line(s))}"
    if result.manual_by:
        head += " · run now"
    tail: list[dict[str, Any]] = []
    if result.changes:
        tail.append(cards.note("**Since the last run:** " + cards.escape("; ".join(result.changes))))
    if result.missed.count:
        tail.append(cards.note(f"⏳ {cards.escape(result.missed.note())}"))
    tail.append({"type": "ActionSet", "actions": [cards.submit("Pause schedule", "schedule_pause", s=s.id)]})
    chart = None
    if runner.public_url and outcome.rows and chart_spec(outcome.columns, outcome.rows, outcome.question):
        owner = Principal.teams(user=s.owner, channel=s.channel, team=s.team or None)
        token, _ = links.issue(
            runner.link_key, "png", outcome.trace.id, owner, runner.askbase.settings.teams.link_ttl_s
        )
        chart = links.url(runner.public_url, token)
    return cards.answer_card(
        outcome,
        table_rows=max(1, min(runner.askbase.settings.teams.table_rows, 50)),
        chart_url=chart,
        head=[cards.note(head)],
        tail=tail,
    )


def _report_failure(runner: TeamsRunner, s: Schedule, notice: tick.Notice) -> None:
    if s.paused:
        text = (
            f"⏸ I paused the scheduled question “{s.question}” after {s.failures} failed runs in a row. "
            f"Last error: {notice.text} Its owner can resume it: type schedules."
        )
    else:
        after = notice.retry_at - dt.timedelta(microseconds=1) if notice.retry_at else None
        following = next_fire_time(s.trigger, after) if after else None
        text = (
            f"⚠️ The scheduled question “{s.question}” failed. {notice.text} I'll try again "
            f"{when_text(following) if following else 'later'} ({s.failures} of {notice.limit} failures in a row; "
            f"at {notice.limit} I pause it)."
        )
    try:
        _post(runner, s, cards.message_card(text), text)
    except Exception as exc:
        log.warning("schedule %s: could not report the failure: %s", s.id, exc)
