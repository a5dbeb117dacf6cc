"""Progress while a question is answered — somewhere that is not the answer.

An edited message does not notify, so the answer is always a new message (bot/slack/answering.py) and
progress goes elsewhere, best first:

1. the assistant status (`assistant.threads.setStatus`, the step as its loading message): Slack's
   own "is thinking…" line under the thread, in the assistant panel and, with `chat:write`, in
   channel threads; cleared when the answer is posted;
2. a streamed plan (`chat.startStream` / `appendStream` / `stopStream` with `task_display_mode=
   plan`): one task per step, each marked done as the next starts — it stays as the record of
   the steps taken, never as an empty message;
3. a status message naming the step, edited as steps pass and deleted once the answer is out.

A workspace that refuses a kind (an older plan, GovSlack, a missing scope) is remembered per team
in `Features`, so the next question starts at the kind that works. Progress is a courtesy: a
failure after the start is logged and the answer still goes out.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Any, Protocol

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.models.messages.chunk import PlanUpdateChunk, TaskUpdateChunk
from slack_sdk.web.chat_stream import ChatStream

from bot.progress import Step, StepTracker, step_for
from bot.slack import render

log = logging.getLogger(__name__)

ASSISTANT_STATUS = "assistant_status"
STREAMED_PLAN = "streamed_plan"
# Errors that say "this workspace / token cannot do that", as opposed to "not now".
TRANSIENT_ERRORS = {"ratelimited", "rate_limited", "internal_error", "fatal_error", "service_unavailable"}


@dataclass
class Features:
    """What each workspace refused, so the next message starts with what works there."""

    refused: dict[str, set[str]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def works(self, team: str, feature: str) -> bool:
        with self.lock:
            return feature not in self.refused.get(team, set())

    def refuse(self, team: str, feature: str, error: str | None) -> None:
        if error in TRANSIENT_ERRORS:
            return
        with self.lock:
            self.refused.setdefault(team, set()).add(feature)
        log.info("team %s: %s refused (%s); using the next best", team or "-", feature, error)


def slack_error(exc: Exception) -> str | None:
    return exc.response.get("error") if isinstance(exc, SlackApiError) else type(exc).__name__


@dataclass(frozen=True)
class Place:
    """Where the answer goes: a thread, who asked, and what."""

    team: str
    channel: str
    thread_ts: str
    user: str | None
    question: str


class Progress(Protocol):
    def show(self, stage: str) -> None: ...

    def done(self, ok: bool = True) -> None: ...


class NoProgress:
    def show(self, stage: str) -> None:
        pass

    def done(self, ok: bool = True) -> None:
        pass


def _status_text(step: Step) -> str:
    return f"is {step.doing[:1].lower()}{step.doing[1:]}…"


class AssistantStatus:
    """`assistant.threads.setStatus` with the step as status and loading message."""

    def __init__(self, client: WebClient, place: Place) -> None:
        self.client, self.place = client, place
        self.steps = StepTracker()
        self.closed = False

    def _set(self, status: str, loading: list[str] | None = None) -> None:
        self.client.assistant_threads_setStatus(
            channel_id=self.place.channel,
            thread_ts=self.place.thread_ts,
            status=status,
            loading_messages=loading,
        )

    def start(self, stage: str) -> None:
        step = self.steps.advance(stage) or step_for("understand")
        assert step is not None
        self._set(_status_text(step), [f"{step.doing}…"])  # raises: the caller tries the next kind

    def show(self, stage: str) -> None:
        step = self.steps.advance(stage)
        if step is None:
            return
        try:
            self._set(_status_text(step), [f"{step.doing}…"])
        except Exception as exc:  # progress is a courtesy
            log.info("status update failed: %s", slack_error(exc))

    def done(self, ok: bool = True) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            self._set("")  # an empty status clears it (posting a reply clears it too)
        except Exception as exc:
            log.info("clearing the status failed: %s", slack_error(exc))


class StreamedPlan:
    """A message streamed as a plan: one task per step, in progress then complete."""

    def __init__(self, client: WebClient, place: Place) -> None:
        self.client, self.place = client, place
        self.steps = StepTracker()
        self.stream: ChatStream | None = None

    def _task(self, step: Step, status: str) -> TaskUpdateChunk:
        return TaskUpdateChunk(id=step.key, title=step.task, status=status)

    def start(self, stage: str) -> None:
        step = self.steps.advance(stage) or step_for("understand")
        assert step is not None
        stream = self.client.chat_stream(
            channel=self.place.channel,
            thread_ts=self.place.thread_ts,
            recipient_team_id=self.place.team or None,
            recipient_user_id=self.place.user,
            task_display_mode="plan",
        )
        title = render.clip(f"Answering: {self.place.question}", 150)
        stream.append(chunks=[PlanUpdateChunk(title=title), self._task(step, "in_progress")])  # raises
        self.stream = stream

    def show(self, stage: str) -> None:
        before = self.steps.current
        step = self.steps.advance(stage)
        if step is None or self.stream is None:
            return
        chunks: list[Any] = [self._task(step, "in_progress")]
        if before is not None:
            chunks.insert(0, self._task(before, "complete"))
        try:
            self.stream.append(chunks=chunks)
        except Exception as exc:
            log.info("plan update failed: %s", slack_error(exc))

    def done(self, ok: bool = True) -> None:
        if self.stream is None:
            return
        current = self.steps.current
        chunks = [self._task(current, "complete" if ok else "error")] if current else []
        try:
            self.stream.stop(chunks=chunks)
        except Exception as exc:
            log.info("closing the plan failed: %s", slack_error(exc))
        self.stream = None


class StatusMessage:
    """The last resort: a message naming the step, deleted once the answer is posted."""

    def __init__(self, client: WebClient, place: Place, asked_by: str | None = None) -> None:
        self.client, self.place, self.asked_by = client, place, asked_by
        self.steps = StepTracker()
        self.ts: str | None = None

    def start(self, stage: str) -> None:
        self.steps.advance(stage)
        message = render.status_message(self.place.question, stage, self.asked_by)
        posted = self.client.chat_postMessage(
            channel=self.place.channel,
            thread_ts=self.place.thread_ts,
            text=message.text,
            blocks=message.blocks,
        )
        self.ts = posted.get("ts")

    def show(self, stage: str) -> None:
        if self.steps.advance(stage) is None or not self.ts:
            return
        message = render.status_message(self.place.question, stage, self.asked_by)
        try:
            self.client.chat_update(
                channel=self.place.channel, ts=self.ts, text=message.text, blocks=message.blocks
            )
        except Exception as exc:
            log.info("status update failed: %s", slack_error(exc))

    def done(self, ok: bool = True) -> None:
        if not self.ts:
            return
        try:
            self.client.chat_delete(channel=self.place.channel, ts=self.ts)
        except Exception as exc:  # cannot delete: leave the steps taken, never a "working…" line
            log.info("could not delete status message %s: %s", self.ts, slack_error(exc))
            steps = " → ".join(s.doing for s in self.steps.seen) or "Done"
            try:
                self.client.chat_update(
                    channel=self.place.channel,
                    ts=self.ts,
                    text=steps,
                    blocks=[render.context(f":white_check_mark: {render.escape(steps)}")],
                )
            except Exception:
                log.info("could not close status message %s", self.ts)
        self.ts = None


def progress_ref(progress: object) -> str | None:
    """The message a question's progress left in Slack, as `kind:ts` — a status message to delete
    or a streamed plan to stop; None for the assistant status (the answer clears it) or nothing.
    Recorded with the question's claim (core/conversation/claims.py), so a process taking it over closes it."""
    if isinstance(progress, StatusMessage) and progress.ts:
        return f"message:{progress.ts}"
    if isinstance(progress, StreamedPlan) and progress.stream is not None:
        ts = getattr(progress.stream, "_stream_ts", None)  # slack_sdk's ChatStream keeps it private
        return f"stream:{ts}" if ts else None
    return None


def open_progress(
    client: WebClient, place: Place, features: Features, stage: str, asked_by: str | None = None
) -> Progress:
    """The best kind of progress this workspace takes, started at `stage`."""
    if features.works(place.team, ASSISTANT_STATUS):
        status = AssistantStatus(client, place)
        try:
            status.start(stage)
            return status
        except Exception as exc:
            features.refuse(place.team, ASSISTANT_STATUS, slack_error(exc))
    if features.works(place.team, STREAMED_PLAN):
        plan = StreamedPlan(client, place)
        try:
            plan.start(stage)
            return plan
        except Exception as exc:
            features.refuse(place.team, STREAMED_PLAN, slack_error(exc))
    message = StatusMessage(client, place, asked_by)
    try:
        message.start(stage)
        return message
    except Exception as exc:
        log.info("no progress shown in %s: %s", place.channel, slack_error(exc))
        return NoProgress()
