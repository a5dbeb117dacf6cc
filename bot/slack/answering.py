"""Answering one question in a Slack thread, from the 👀 reaction to the table, CSV and chart.

`start` runs on the listener thread right after the ack: it reacts, starts a thread when the
question has none (a root message saying who asked what, for `/ask` and "Ask again"), shows
progress (bot/slack/progress.py) and queues the work (core/conversation/queue.py): a burst waits
its turn, in order — showing "queued — N ahead of you" when a full round of answers is ahead of
it — and is never turned away. `answer` runs on a worker: the conversation service
(core/conversation/service.py) picks the database, reads the thread's earlier turns, asks the
engine while progress names the current step and stores the turn; the outcome is posted as a NEW
message in the thread (bot/slack/delivery.py). Failures are logged in full under the trace id;
the person sees what went wrong in their terms (bot/failures.py), with Retry only when trying
again can help; configuration advice goes to the admins (bot/slack/admin_notes.py).
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import replace

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.failures import INTERNAL, setup_problem
from bot.progress import stage_in_line
from bot.slack import render
from bot.slack.admin_notes import tell_admins
from bot.slack.ask import Ask, conversation_key
from bot.slack.asker import asker_at
from bot.slack.context import BotContext
from bot.slack.delivery import deliver, features, post_quietly
from bot.slack.private_results import is_private
from bot.slack.progress import NoProgress, Progress, open_progress, progress_ref
from core.answer import Outcome
from core.conversation.service import Place, Question

log = logging.getLogger(__name__)

THINKING = "eyes"
RESTARTING = "I'm restarting and could not take this question. Please ask it again in a minute."


def _react(client: WebClient, add: bool, channel: str, ts: str | None) -> None:
    if not ts:
        return
    try:
        if add:
            client.reactions_add(channel=channel, timestamp=ts, name=THINKING)
        else:
            client.reactions_remove(channel=channel, timestamp=ts, name=THINKING)
    except SlackApiError as exc:  # already_reacted, no_reaction, missing scope: cosmetic only
        log.debug("reaction %s on %s failed: %s", THINKING, ts, exc.response.get("error"))


def privately(ctx: BotContext, ask: Ask) -> Ask:
    """The ask as its channel wants it answered: in a private channel only the asker sees the
    replies; `/ask` there gets no root, and its conversation is its own (never another person's)."""
    if ask.private or not ask.user or not is_private(ctx.settings, ctx.conversations, ask.team, ask.channel):
        return ask
    own = (
        None
        if ask.thread_ts
        else f"{conversation_key(ask.team, ask.channel, '')}private:{uuid.uuid4().hex[:12]}"
    )
    return replace(ask, private=True, announce=False, conversation_id=ask.conversation_id or own)


def begin(ctx: BotContext, client: WebClient, ask: Ask) -> Ask | None:
    """React, and give the question a thread (a root saying who asked what, when it has none);
    the ask with its thread, or None when nothing could be posted there."""
    _react(client, True, ask.channel, ask.message_ts)
    if ask.thread_ts or ask.private:
        return ask
    root = render.announcement(ask.question, ask.user)
    try:
        posted = client.chat_postMessage(channel=ask.channel, text=root.text, blocks=root.blocks)
    except SlackApiError as exc:
        log.warning("could not post in %s: %s", ask.channel, exc.response.get("error"))
        _react(client, False, ask.channel, ask.message_ts)
        return None
    # posting to a user id lands in the app's DM with them: the thread lives in that D-channel
    return replace(ask, thread_ts=posted["ts"], channel=posted.get("channel") or ask.channel)


def start(ctx: BotContext, client: WebClient, ask: Ask) -> bool:
    """Start answering `ask` in its turn; False when nothing could be posted."""
    job = begin(ctx, client, privately(ctx, ask))
    if job is None:
        return False
    progress: Progress = NoProgress()  # in a private channel the 👀 alone says it is working
    if not job.private:
        stage = stage_in_line(ctx.queue.position())
        progress = open_progress(client, job.place, features(ctx), stage, job.asked_by)
    if job.claim:  # a process that takes it over after a crash closes this progress first
        thread = f"{job.channel}:{job.thread_ts}" if job.thread_ts else None
        ctx.claims.answering(job.claim, status_ref=progress_ref(progress), thread_ref=thread)
    if not ctx.queue.put(answer, ctx, client, job, progress):  # this process is stopping
        progress.done(ok=False)
        _react(client, False, job.channel, job.message_ts)
        if job.claim:  # its lease runs out and another process answers it
            ctx.claims.release(job.claim)
        else:
            post_quietly(client, job, render.plain(RESTARTING))
    return True


def question_of(ctx: BotContext, client: WebClient, ask: Ask) -> Question:
    """The ask as the conversation service takes it: who asks, where, in which conversation."""
    return Question(
        text=ask.question,
        conversation=ask.conversation,
        source="slack",
        principal=asker_at(ctx, client, ask.team, ask.channel, ask.user).principal,
        place=Place(team=ask.team, channel=ask.channel, thread=ask.thread_ts),
        user=ask.user,
        database=ask.database,
        transcript=ask.transcript,
        refresh=ask.refresh,
    )


def answer(ctx: BotContext, client: WebClient, ask: Ask, progress: Progress | None = None) -> Outcome:
    """Worker thread: answer `ask` as a new message in its thread. Never raises."""
    progress = progress or NoProgress()
    question = question_of(ctx, client, ask)
    try:
        asked = ctx.conversations.ask(question, INTERNAL, on_stage=progress.show)
        outcome = asked.outcome
        for hook in ctx.extras.get("clarify_hooks", ()):  # the questions it replaced say so
            hook(ctx, client, ask, asked)
        deliver(ctx, client, ask, outcome, progress=progress)
        problem = setup_problem(outcome)
        if problem is not None:
            tell_admins(ctx, client, ask.team, problem, outcome.trace.id)
        for after in ctx.extras.get("answer_hooks", ()):  # e.g. tell verifiers of stale queries
            after(ctx, client, ask, outcome)
    except Exception:
        outcome = ctx.conversations.crashed(question, INTERNAL, audited=True)
        post_quietly(client, ask, render.outcome_message(outcome, asked_by=ask.asked_by))
        progress.done(ok=False)
    finally:
        progress.done(ok=True)  # already closed after the post; this only covers the unexpected
        _react(client, False, ask.channel, ask.message_ts)
        if ask.claim:
            ctx.claims.finished(ask.claim)
    return outcome
