"""Scheduled runs in Slack: who the owner is there, how a failure reads, and the posts themselves.

core/schedules/tick.py runs a tick and says what to show; bot/schedule_runs.py shows it through
the `Runner` here. A result is posted
like an interactive answer — table, CSV, chart, the answer's buttons — at the top of the channel,
headed with the schedule and followed by what changed and by the ticks it stands for; the run is
stored as a turn of its own thread, so Show SQL, CSV, 👍 and follow-ups work on it. A failing
scheduled run posts one message per streak (later failures edit it; the first run that works
again marks it), and when the streak pauses the schedule the owner gets a DM. Whether the result
got out goes back to the core (`delivered` / `undelivered`), which records the run.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.schedule_runs import Undelivered, explain, next_try, schedule_line, utcnow
from bot.slack import render
from bot.slack.ask import conversation_key
from bot.slack.delivery import BLOCK_ERRORS, NOT_EDITABLE
from bot.slack.files import result_files
from bot.slack.private_results import is_private
from bot.slack.usergroups import UsergroupDirectory, slack_principal
from core.access import Principal
from core.askbase import Askbase
from core.conversation.service import Conversations, Schedule
from core.schedules import tick
from core.schedules.missed import Missed
from core.schedules.tick import Failure, Result
from core.schedules.triggers import as_utc

log = logging.getLogger("askbase.schedules")

PRIVATE = "results there are private now; schedule it in a direct message with me"


@dataclass
class Runner:
    """Runs schedules and posts them in Slack: the engine, a Slack client per team, and a clock.

    It is the `Poster` (bot/schedule_runs.py) a run is shown through, and the `Chat` a tick asks
    who the owner is and how a failure reads.
    """

    askbase: Askbase
    client_for: Callable[[str], WebClient]  # team id → client; ChatUnavailable when uninstalled
    worker_id: str = ""
    clock: Callable[[], dt.datetime] = utcnow
    usergroups: UsergroupDirectory = field(default_factory=UsergroupDirectory)

    @cached_property
    def conversations(self) -> Conversations:
        """Where runs are stored as turns and failure messages noted (core/conversation/service.py)."""
        return Conversations(self.askbase)

    def principal(self, schedule: Schedule) -> Principal:
        """The owner, in the schedule's channel, with the user groups access rules may name."""
        return slack_principal(
            self.askbase.settings,
            self.client_for(schedule.team),
            self.usergroups,
            team=schedule.team,
            channel=schedule.channel,
            user=schedule.owner,
        )

    def explain(self, schedule: Schedule, failure: Failure) -> str:
        """One sentence of mrkdwn; what came from the database or the engine is escaped."""
        database = render.escape(schedule.database)
        return explain(
            failure,
            access=f"<@{schedule.owner}> may no longer query `{database}` from <#{schedule.channel}>.",
            connection=f"I could not reach the database `{database}`.",
            delivery=f"I could not post in <#{schedule.channel}> ({render.escape(failure.detail)}).",
            escape=render.escape,
        )

    def post(self, schedule: Schedule, result: Result) -> str:
        if is_private(self.askbase.settings, self.conversations, schedule.team, schedule.channel):
            raise Undelivered(PRIVATE)  # the channel was made private after it was scheduled
        client = self.client_for(schedule.team)
        try:
            return post_result(self, client, schedule, result)
        except SlackApiError as exc:
            raise Undelivered(str(exc.response.get("error") or "error")) from exc

    def turn_key(self, schedule: Schedule, message_id: str) -> str:
        return conversation_key(schedule.team, schedule.channel, message_id)

    def report_failure(self, schedule: Schedule, notice: tick.Notice) -> None:
        _report_failure(self, schedule, notice)

    def mark_recovered(self, schedule: Schedule, message_id: str) -> None:
        _mark_recovered(self, schedule, message_id)


# ---------------------------------------------------------------- failures


def _report_failure(runner: Runner, s: Schedule, notice: tick.Notice) -> None:
    try:
        client = runner.client_for(s.team)
    except Exception:
        log.exception("schedule %s: no Slack client to report the failure", s.id)
        return
    question = render.escape(s.question)
    if s.paused:
        text = (
            f":double_vertical_bar: I paused the scheduled question *{question}* after {s.failures} "
            f"failed runs in a row. Last error: {notice.text} <@{s.owner}> can resume it with "
            "`/ask schedules` once that is fixed."
        )
    else:
        following = next_try(s, notice)
        text = (
            f":warning: The scheduled question *{question}* failed. {notice.text}\n"
            f"I'll try again {slack_time(following) if following else 'later'} "
            f"({s.failures} of {notice.limit} failures in a row; at {notice.limit} I pause it)."
        )
    message = render.Message(text=text, blocks=[render.section(text)])
    ts = _post_or_update(client, s.channel, s.error_ts, message)
    if ts and ts != s.error_ts and not s.paused:
        runner.conversations.note_failure_message(s.id, ts)
    if s.paused:
        dm = (
            f"Your scheduled question *{question}* in <#{s.channel}> failed {s.failures} times in a row, "
            f"so I paused it. Last error: {notice.text} When it is fixed, resume it with `/ask schedules` "
            "in that channel or from my Home tab."
        )
        try:
            client.chat_postMessage(channel=s.owner, text=dm, blocks=[render.section(dm)])
        except SlackApiError as exc:
            log.warning("schedule %s: could not DM the owner: %s", s.id, exc.response.get("error"))


def _post_or_update(client: WebClient, channel: str, ts: str | None, message: render.Message) -> str | None:
    """Edit our earlier message when there is one; else post. The ts, or None when Slack refused."""
    try:
        if ts:
            try:
                client.chat_update(channel=channel, ts=ts, text=message.text, blocks=message.blocks)
                return ts
            except SlackApiError as exc:
                if exc.response.get("error") not in NOT_EDITABLE:
                    raise
        posted = client.chat_postMessage(channel=channel, text=message.text, blocks=message.blocks)
        return posted.get("ts")
    except SlackApiError as exc:
        log.warning("could not post in %s: %s", channel, exc.response.get("error"))
        return None


def _mark_recovered(runner: Runner, s: Schedule, error_ts: str) -> None:
    try:
        client = runner.client_for(s.team)
    except Exception:
        log.exception("schedule %s: no Slack client to say it works again", s.id)
        return
    text = f":white_check_mark: The scheduled question *{render.escape(s.question)}* works again."
    _post_or_update(client, s.channel, error_ts, render.Message(text=text, blocks=[render.section(text)]))


# ---------------------------------------------------------------- the message


def slack_time(when: dt.datetime) -> str:
    """A time every reader sees in their own timezone (Slack's date formatting)."""
    stamp = int(as_utc(when).timestamp())
    fallback = as_utc(when).strftime("%Y-%m-%d %H:%M UTC")
    return f"<!date^{stamp}^{{date_short_pretty}} at {{time}}|{fallback}>"


def run_blocks(
    s: Schedule,
    message: render.Message,
    changes: tuple[str, ...],
    missed: Missed,
    manual_by: str | None = None,
) -> list[dict[str, Any]]:
    """An answer message framed as a scheduled run: what it is, the result, what changed, controls."""
    head = f":repeat: *{render.escape(s.question)}* — {render.escape(schedule_line(s))} · <@{s.owner}>'s schedule"
    if manual_by:
        head += f" · run now by <@{manual_by}>"
    extra = []
    if changes:
        extra.append(render.context("*Since the last run:* " + render.escape("\n".join(changes))))
    if missed.count:
        extra.append(render.context(f":hourglass: {missed.note()}"))
    controls = render.actions(
        f"schedule_run:{s.id}",
        render.button("Pause schedule", "schedule_pause", str(s.id)),
        render.button("Run now", "schedule_run", str(s.id)),
    )
    body, buttons = message.blocks[:-1], message.blocks[-1:]
    room = render.MAX_BLOCKS - 1 - len(extra) - len(buttons) - 1
    return [render.context(head), *body[:room], *extra, *buttons, controls]


def post_result(runner: Runner, client: WebClient, s: Schedule, result: Result) -> str:
    """Post the run at the top of the channel, its CSV and chart in the thread under it; the ts."""
    outcome = result.outcome
    table_rows = max(1, min(runner.askbase.settings.slack.table_rows, 99))
    message = render.answer_message(outcome, table_rows=table_rows)
    text = render.clip(f"{render.escape(s.question)} — {message.text}", render.MAX_TEXT)  # both escaped

    def blocks(message: render.Message) -> list[dict[str, Any]]:
        return run_blocks(s, message, result.changes, result.missed, result.manual_by)

    try:
        posted = client.chat_postMessage(channel=s.channel, text=text, blocks=blocks(message))
    except SlackApiError as exc:
        if exc.response.get("error") not in BLOCK_ERRORS:
            raise
        message = render.answer_message(outcome, table_rows=table_rows, use_table=False)
        posted = client.chat_postMessage(channel=s.channel, text=text, blocks=blocks(message))
    ts = str(posted["ts"])
    files = result_files(outcome, with_csv=message.wants_csv) if outcome.rows else []
    if files:
        try:
            client.files_upload_v2(channel=s.channel, thread_ts=ts, file_uploads=files)
        except Exception as exc:  # the result is out; a missing file is noted in the log only
            log.warning("schedule %s: file upload failed: %s", s.id, exc)
    return ts
