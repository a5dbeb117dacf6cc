"""A scheduled run shown in a chat: the part every chat shares.

core/schedules/tick.py runs a tick and says what to show; `run_and_post` shows it through a
`Poster` — the chat's side (bot/slack/schedule_posts.py for Slack, bot/teams/posts.py for Teams) — in
one order for every chat: post the result, store it as a turn so the buttons under it find it,
tell the core whether it got out (`delivered` / `undelivered`: a result nobody saw must not count
as seen), then report a failure or mark an earlier one as recovered. How a post, a failure or a
recovery looks is the chat's own.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from typing import Protocol

from core.answer import Outcome
from core.askbase import Askbase
from core.conversation.service import Conversations, Schedule
from core.schedules import tick
from core.schedules.tick import Chat, ChatUnavailable, Failure, Notice, Result, Tick
from core.schedules.triggers import as_utc, next_fire_time

log = logging.getLogger("askbase.schedules")

INTERNAL_WORDS = "Something went wrong on my side (the log has the details)."


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class Undelivered(Exception):
    """Raised by `Poster.post` when the chat refused the post; the message is the chat's error."""


class Poster(Chat, Protocol):
    """What showing a run needs from the chat it is shown in."""

    @property
    def askbase(self) -> Askbase: ...

    @property
    def worker_id(self) -> str: ...

    @property
    def clock(self) -> Callable[[], dt.datetime]: ...

    def post(self, schedule: Schedule, result: Result) -> str:
        """Post the result; the message's id. ChatUnavailable when the chat cannot be reached for
        this schedule, Undelivered when it refused the post."""
        ...

    def turn_key(self, schedule: Schedule, message_id: str) -> str:
        """The conversation the posted run continues (its buttons and follow-ups find it there)."""
        ...

    def report_failure(self, schedule: Schedule, notice: Notice) -> None:
        """Say in the chat that a scheduled run failed (and, once paused, tell the owner)."""
        ...

    def mark_recovered(self, schedule: Schedule, message_id: str) -> None:
        """Mark the failure message `message_id` as working again."""
        ...


def run_and_post(poster: Poster, schedule_id: int, *, manual_by: str | None = None) -> Tick:
    """Run a schedule once (for the tick due now, or — `manual_by` someone — right now) and show it."""
    done = tick.run_tick(
        poster.askbase,
        schedule_id,
        poster,
        now=as_utc(poster.clock()),
        manual_by=manual_by,
        worker=poster.worker_id,
    )
    if done.status == "ready":
        done = _deliver(poster, done)
    if done.notice is not None and done.schedule is not None:
        poster.report_failure(done.schedule, done.notice)
    if done.recovered_ts and done.schedule is not None:
        poster.mark_recovered(done.schedule, done.recovered_ts)
    return done


def _deliver(poster: Poster, ready: Tick) -> Tick:
    s, result = ready.schedule, ready.result
    assert s is not None and result is not None
    try:
        message_id = poster.post(s, result)
    except ChatUnavailable as exc:
        return tick.undelivered(poster.askbase, poster, ready, Failure(tick.UNREACHABLE, str(exc)))
    except Undelivered as exc:
        return tick.undelivered(poster.askbase, poster, ready, Failure(tick.DELIVERY, str(exc)))
    _remember_turn(poster, s, result.outcome, poster.turn_key(s, message_id))
    return tick.delivered(poster.askbase, ready, message_id)


def _remember_turn(poster: Poster, s: Schedule, outcome: Outcome, key: str) -> None:
    """Store the run as a turn of its conversation: Show SQL, CSV, 👍 and follow-ups work on it."""
    try:
        Conversations(poster.askbase).record(key, s.database, outcome, channel=s.channel, user=s.owner)
    except Exception:
        log.exception("schedule %s: could not store the turn", s.id)


def schedule_line(s: Schedule) -> str:
    """ "every weekday at 09:00 (Europe/Berlin) · only when the result changed"."""
    parts = [s.trigger.describe()]
    if s.condition.kind != "always":
        parts.append(s.condition.describe())
    return " · ".join(parts)


def next_try(s: Schedule, notice: Notice) -> dt.datetime | None:
    """When a failed schedule runs again: its first tick at or after the back-off (None: paused)."""
    if notice.retry_at is None:
        return None
    return next_fire_time(s.trigger, notice.retry_at - dt.timedelta(microseconds=1))


def sentence(text: str) -> str:
    """The engine's words as a sentence of a notice (they may lack the full stop)."""
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else text + "."


def explain(
    failure: Failure, *, access: str, connection: str, delivery: str, escape: Callable[[str], str] = str
) -> str:
    """A run's failure in one sentence: the chat's words for the failures it words itself (no
    access, no database, a refused post), else the engine's own words (guard refusals, a database
    gone, timeouts, SQL errors, conditions) through the chat's `escape`; a bug never shows detail."""
    if failure.kind == "access":
        return access
    if failure.kind == "connection":
        return connection
    if failure.kind == tick.DELIVERY:
        return delivery
    if failure.kind == tick.INTERNAL or not failure.detail.strip():
        return INTERNAL_WORDS
    return sentence(escape(failure.detail))
