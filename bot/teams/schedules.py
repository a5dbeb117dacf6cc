"""Recurring questions made in Teams: `schedule WHEN [only when …] QUESTION`, the Schedule form
under an answer, and `schedules` with Pause / Resume / Delete.

This side only asks the conversation service to write rows, with `platform="teams"` and the conversation
reference to post to (`address`); the worker posts each run there (posts.py). As in Slack, a
schedule stores SQL that already answered once, and before it is stored that SQL runs once more
through the engine as the owner in this place (`Askbase.rerun`, purpose `schedule`), so a query
the owner may not run here, or that no longer works, is refused now rather than at its first run.
Runs are posted in the conversation the schedule was made in (a channel's thread, or the chat).
Only the schedule's owner changes it.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from microsoft_agents.activity import ConversationReference
from microsoft_agents.hosting.core import TurnContext

from bot.schedule_runs import schedule_line, sentence
from bot.teams import cards
from bot.teams.actions import say
from bot.teams.answering import Question, answer
from bot.teams.incoming import Incoming
from bot.teams.outcome_cards import outcome_card
from bot.teams.proactive import card_activity, reference_json
from bot.teams.runtime import TeamsRuntime
from core.answer import Outcome
from core.conversation.service import Schedule
from core.schedules import parse, triggers
from core.schedules.conditions import Condition
from core.schedules.create import Wanted
from core.schedules.errors import ScheduleError
from core.schedules.triggers import TriggerSpec

log = logging.getLogger("askbase.teams.schedules")

LIST_LIMIT = 15


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def timezone_of(incoming: Incoming, typed: str = "") -> str:
    """A timezone typed in the form wins; else the person's Teams client's; else UTC."""
    for candidate in (typed.strip(), incoming.timezone or ""):
        if candidate:
            try:
                return triggers.check_timezone(candidate)
            except ScheduleError:
                if candidate == typed.strip():
                    raise
    return "UTC"


def when_text(moment: dt.datetime | None) -> str:
    return triggers.as_utc(moment).strftime("%a %Y-%m-%d %H:%M UTC") if moment else "not scheduled"


def create_schedule(
    runtime: TeamsRuntime, incoming: Incoming, reference: ConversationReference, wanted: Wanted
) -> Schedule:
    """Worker thread: store a schedule for SQL that answered once, to be posted in the conversation
    of `reference` (core/schedules/create.py); ScheduleError says why not."""

    def refusal(checked: Outcome) -> str:
        if checked.error_kind == "access":
            return f"You may not query '{wanted.database}' here."
        return sentence(checked.error or "the query did not run")

    place = incoming.place
    return runtime.conversations.schedule(
        wanted,
        principal=incoming.principal,
        team=place.team or "",
        channel=place.channel,
        owner=incoming.user,
        refusal=refusal,
        platform="teams",
        address=reference_json(reference),
    )


def confirmation(s: Schedule) -> dict[str, Any]:
    following = triggers.next_fire_time(s.trigger, _now())
    return cards.message_card(
        f"🔁 Scheduled “{s.question}” — {schedule_line(s)}. Next run {when_text(following)}.",
        subtle="Type schedules to pause, resume or delete it.",
    )


async def on_form(
    runtime: TeamsRuntime, context: TurnContext, incoming: Incoming, value: dict[str, Any]
) -> None:
    """The Schedule form under an answer: that answer's SQL, on the timing given."""
    trace_id = str(value.get("trace") or "")
    turn = await runtime.run(runtime.conversations.turn, trace_id)
    if turn is None or not turn.answered:
        await say(context, "There is no answer to schedule on this message.")
        return
    kind = str(value.get("post") or "always")
    try:
        spec = parse.parse_schedule(
            str(value.get("when") or ""), timezone_of(incoming, str(value.get("timezone") or ""))
        )
        triggers.check_frequency(spec, runtime.settings.schedules.min_interval_s, _now())
    except ScheduleError as exc:
        await say(context, f"I didn't schedule it: {exc}")
        return
    condition = Condition(
        kind="not_empty" if kind == "not_empty" else "changed" if kind == "changed" else "always"
    )
    reference = context.activity.get_conversation_reference()
    try:
        created = await runtime.run(
            create_schedule,
            runtime,
            incoming,
            reference,
            Wanted(turn.question, turn.sql, turn.database, spec, condition, trace_id),
        )
    except ScheduleError as exc:
        await say(context, f"I didn't schedule it: {exc}")
        return
    await context.send_activity(card_activity(confirmation(created), f"Scheduled: {created.question}"))


async def on_command(
    runtime: TeamsRuntime, context: TurnContext, incoming: Incoming, rest: str, base_url: str | None
) -> None:
    """`schedule WHEN [only when …] QUESTION`: answer it once now, then schedule that SQL."""
    try:
        spec, condition, question = parse.split_schedule(rest, timezone_of(incoming))
        triggers.check_frequency(spec, runtime.settings.schedules.min_interval_s, _now())
    except ScheduleError as exc:
        await say(context, str(exc))
        return
    reference = context.activity.get_conversation_reference()
    job = Question(
        text=question, incoming=incoming, reference=reference, identity=context.identity, base_url=base_url
    )
    runtime.spawn(_answer_then_schedule(runtime, job, spec, condition))  # in its turn, never refused


async def _answer_then_schedule(
    runtime: TeamsRuntime, job: Question, spec: TriggerSpec, condition: Condition
) -> None:
    async def work(context: TurnContext) -> None:
        outcome, _ = await runtime.answer_in_turn(answer, runtime, job)
        await context.send_activity(
            card_activity(
                outcome_card(runtime, outcome, job.base_url, job.incoming.principal), outcome.answer
            )
        )
        if outcome.status == "clarify":
            await say(
                context, "I didn't schedule it yet: pick a reading above, then use Schedule under the answer."
            )
            return
        if outcome.status != "answer" or not outcome.sql:
            await say(context, "I didn't schedule it: there is no answer to repeat.")
            return
        try:
            created = await runtime.run(
                create_schedule,
                runtime,
                job.incoming,
                job.reference,
                Wanted(job.text, outcome.sql, outcome.database, spec, condition, outcome.trace.id),
            )
        except ScheduleError as exc:
            await say(context, f"I didn't schedule it: {exc}")
            return
        await context.send_activity(card_activity(confirmation(created), f"Scheduled: {created.question}"))

    try:
        await runtime.sender.within(job.reference, work, job.identity)
    except Exception:
        log.exception("scheduling %r failed", job.text[:80])


# ---------------------------------------------------------------- listing and changing


def schedule_items(s: Schedule, now: dt.datetime) -> list[dict[str, Any]]:
    if s.paused:
        status = f"⏸ paused{': ' + s.paused_reason if s.paused_reason else ''}"
    else:
        status = f"next run {when_text(triggers.next_fire_time(s.trigger, now))}"
    toggle = (
        cards.submit("Resume", "schedule_resume", s=s.id)
        if s.paused
        else cards.submit("Pause", "schedule_pause", s=s.id)
    )
    return [
        {
            "type": "Container",
            "separator": True,
            "items": [
                cards.text_block(f"**{cards.escape(s.question)}**"),
                cards.note(cards.escape(f"{schedule_line(s)} · {status} · {s.database} · #{s.id}")),
                {"type": "ActionSet", "actions": [toggle, cards.submit("Delete", "schedule_delete", s=s.id)]},
            ],
        }
    ]


def list_card(items: list[Schedule], note: str = "") -> dict[str, Any]:
    now = _now()
    body: list[dict[str, Any]] = []
    if note:
        body.append(cards.text_block(cards.escape(note)))
    if not items:
        body.append(
            cards.text_block(
                "No schedules here yet. Press Schedule under an answer, or type "
                "schedule every weekday at 9:00 followed by your question."
            )
        )
    else:
        body.append(cards.text_block(f"**Schedules here** ({len(items)})"))
        for s in items[:LIST_LIMIT]:
            body.extend(schedule_items(s, now))
        if len(items) > LIST_LIMIT:
            body.append(cards.note(f"… and {len(items) - LIST_LIMIT} more."))
    return cards.card(body)


def here(runtime: TeamsRuntime, incoming: Incoming) -> list[Schedule]:
    place = incoming.place
    return runtime.conversations.schedules_in(place.team or "", place.channel, platform="teams")


async def on_list(runtime: TeamsRuntime, context: TurnContext, incoming: Incoming, note: str = "") -> None:
    items = await runtime.run(here, runtime, incoming)
    await context.send_activity(card_activity(list_card(items, note), "Schedules"))


async def on_change(
    runtime: TeamsRuntime, context: TurnContext, incoming: Incoming, verb: str, value: dict[str, Any]
) -> None:
    """Pause, resume or delete a schedule of this place — only its owner may."""
    try:
        schedule_id = int(value.get("s") or 0)
    except (TypeError, ValueError):
        schedule_id = 0
    s = await runtime.run(runtime.conversations.scheduled, schedule_id)
    if s is None or s.platform != "teams" or s.channel != incoming.place.channel:
        await say(context, "That schedule is gone.")
        return
    if s.owner != incoming.user:
        await say(context, "Only the person who made this schedule can change it.")
        return
    if verb == "schedule_pause":
        await runtime.run(
            lambda: runtime.conversations.pause(s.id, reason=f"by {incoming.user_name or 'its owner'}")
        )
        note = f"Paused “{s.question}”."
    elif verb == "schedule_resume":
        await runtime.run(runtime.conversations.resume, s.id)
        note = f"Resumed “{s.question}”."
    else:
        await runtime.run(runtime.conversations.delete, s.id)
        note = f"Deleted “{s.question}”."
    items = await runtime.run(here, runtime, incoming)
    content = list_card(items, note)
    if incoming.reply_to:  # the list the button sat on shows the change
        activity = card_activity(content, note)
        activity.id = incoming.reply_to
        try:
            await context.update_activity(activity)
            return
        except Exception as exc:
            log.info("could not update the schedule list: %s", exc)
    await context.send_activity(card_activity(content, note))
