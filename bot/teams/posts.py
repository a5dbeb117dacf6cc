"""Scheduled runs in Teams: who the owner is there, how a failure reads, and the proactive posts.

core/schedules/tick.py runs a tick and says what to show; bot/schedule_runs.py shows it through
the `TeamsRunner` here, from the worker
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

from bot.charts import chart_spec
from bot.schedule_runs import Undelivered, explain, next_try, schedule_line, utcnow
from bot.teams import cards, links
from bot.teams.config import app_id, sdk_configuration, startup_problem
from bot.teams.incoming import conversation_key
from bot.teams.outbound import ServiceUrls, cloud_adapter
from bot.teams.proactive import Sender, reference_from
from bot.teams.schedules import when_text
from core.access import Principal
from core.askbase import Askbase
from core.conversation.service import Schedule
from core.schedules import tick
from core.schedules.tick import ChatUnavailable, Failure, Result

log = logging.getLogger("askbase.teams.schedules")


@dataclass
class TeamsRunner:
    """Runs schedules made in Teams and posts them there: the `Poster` (bot/schedule_runs.py) and
    the `Chat` of their ticks."""

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
        return explain(
            failure,
            access=f"Its owner may no longer query '{schedule.database}' here.",
            connection=f"I could not reach the database '{schedule.database}'.",
            delivery=f"Teams did not take the post ({failure.detail}).",
        )

    def post(self, schedule: Schedule, result: Result) -> str:
        try:
            content = run_card(self, schedule, result)
            try:  # Details, CSV and votes on it are answered to the presser with this card (private.py)
                self.askbase.keep(cards.KEPT_CARD, result.outcome.trace.id, {"card": content})
            except Exception:
                log.exception("schedule %s: could not keep the card", schedule.id)
            activity_id = _post(self, schedule, content, f"{schedule.question} — {result.outcome.answer}")
        except ChatUnavailable:
            raise
        except Exception as exc:  # the connector refused it (HTTP error), or could not be reached
            log.warning("schedule %s: post failed: %s", schedule.id, exc)
            raise Undelivered(type(exc).__name__) from exc
        return activity_id or "posted"

    def turn_key(self, schedule: Schedule, message_id: str) -> str:
        """The schedule's conversation (a run is not a thread of its own in Teams)."""
        conversation = (schedule.address or {}).get("conversation", {}).get("id") or schedule.channel
        return conversation_key(str(conversation), schedule.database)

    def report_failure(self, schedule: Schedule, notice: tick.Notice) -> None:
        _report_failure(self, schedule, notice)

    def mark_recovered(self, schedule: Schedule, message_id: str) -> None:
        """Nothing to mark: failure notices are not edited from the worker, so none is stored."""


def teams_runner(
    askbase: Askbase, *, worker_id: str = "", clock: Callable[[], dt.datetime] = utcnow
) -> TeamsRunner:
    """The worker's Teams side, from the same settings as `serve --teams`."""
    settings = askbase.settings
    sender = None
    if startup_problem(settings) is None:
        connections = MsalConnectionManager(**sdk_configuration(settings))
        # posts go only to allowed Bot Connector addresses (outbound.py), whatever a stored reference says
        urls = ServiceUrls.from_settings(settings)
        sender = Sender(cloud_adapter(settings, connections), app_id(settings), urls)
    return TeamsRunner(
        askbase=askbase,
        sender=sender,
        link_key=links.signing_key(settings),
        public_url=(settings.teams.public_url or "").rstrip("/") or None,
        worker_id=worker_id,
        clock=clock,
    )


def _post(runner: TeamsRunner, s: Schedule, content: dict[str, Any], summary: str) -> str:
    if runner.sender is None or not s.address:
        raise ChatUnavailable("no Teams conversation to post to")
    return asyncio.run(runner.sender.post(reference_from(s.address), content, summary))


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
        token, _ = links.issue(  # in the card for everyone: it lives as long as the run is kept
            runner.link_key, "png", outcome.trace.id, owner, None, now=runner.clock()
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
        following = next_try(s, notice)
        text = (
            f"⚠️ The scheduled question “{s.question}” failed. {notice.text} I'll try again "
            f"{when_text(following) if following else 'later'} ({s.failures} of {notice.limit} failures in a row; "
            f"at {notice.limit} I pause it)."
        )
    try:
        _post(runner, s, cards.message_card(text), text)
    except Exception as exc:
        log.warning("schedule %s: could not report the failure: %s", s.id, exc)
