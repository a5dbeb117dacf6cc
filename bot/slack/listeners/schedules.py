"""Recurring questions in Slack: the Schedule button and its modal, `/ask schedule …`,
`/ask schedules` with Pause / Resume / Run now / Delete, and the blocks of one's schedules that the
App Home (bot/slack/listeners/home.py) shows.

This side only asks the conversation service to write rows; the worker process picks them up (see
bot/worker.py). A schedule always stores SQL that already answered the question once: the button
takes it from the answer it sits under, and `/ask schedule` answers the question first, in the
channel, and schedules it only when that worked. Before it is stored the SQL runs once more
through the engine (`Askbase.rerun`, as the owner, in the channel it will post in), so a query the
owner may not run there, or that no longer works, is refused now rather than at its first tick.
Only the owner or a channel admin — a workspace admin or owner (users.info), or the channel's
creator (conversations.info) — changes a schedule.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections.abc import Callable
from functools import partial
from typing import Any

from slack_bolt import App
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.progress import stage_in_line
from bot.schedule_runs import run_and_post, schedule_line
from bot.slack import render
from bot.slack.answering import RESTARTING, answer, begin, start
from bot.slack.ask import Ask
from bot.slack.asker import asker_at
from bot.slack.context import BotContext
from bot.slack.delivery import features
from bot.slack.ephemeral import tell
from bot.slack.private_results import refuse_schedule
from bot.slack.progress import Progress, open_progress
from bot.slack.schedule_posts import Runner, slack_time
from bot.slack.text import incoming
from core.access import Principal
from core.answer import ErrorKind
from core.conversation.service import Schedule
from core.schedules import parse, triggers
from core.schedules.conditions import Condition, parse_condition
from core.schedules.create import Wanted
from core.schedules.errors import ScheduleError
from core.schedules.triggers import TriggerSpec

log = logging.getLogger(__name__)

MODAL = "schedule_create"
HOW = {
    "minutes": "Every N minutes",
    "hours": "Every N hours",
    "daily": "Every day at…",
    "weekdays": "Every weekday (Mon–Fri) at…",
    "weekly": "Weekly, on the days below, at…",
    "cron": "Cron expression",
}
WHEN = {
    "always": "Every run",
    "not_empty": "Only when there are rows",
    "changed": "Only when the result changed",
    "condition": "Only when a condition holds (below)",
}
LIST_LIMIT = 15  # schedules in one message (3 blocks each, 50 blocks per message)
HOME_LIMIT = 24  # on the App Home tab (100 blocks, 4 per schedule)


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


# ---------------------------------------------------------------- people and permissions


def user_info(client: WebClient, user: str | None) -> dict[str, Any]:
    if not user:
        return {}
    try:
        return client.users_info(user=user).get("user") or {}
    except SlackApiError as exc:
        log.info("users.info %s failed: %s", user, exc.response.get("error"))
        return {}


def user_timezone(client: WebClient, user: str | None) -> str:
    """The person's Slack timezone, or UTC when Slack does not say."""
    tz = user_info(client, user).get("tz") or "UTC"
    try:
        return triggers.check_timezone(tz)
    except ScheduleError:
        return "UTC"


def may_change(client: WebClient, s: Schedule, user: str | None) -> bool:
    """The owner, a workspace admin or owner, or the channel's creator."""
    if not user:
        return False
    if user == s.owner:
        return True
    info = user_info(client, user)
    if info.get("is_admin") or info.get("is_owner") or info.get("is_primary_owner"):
        return True
    if s.channel.startswith("D"):
        return False
    try:
        channel = client.conversations_info(channel=s.channel).get("channel") or {}
    except SlackApiError as exc:
        log.info("conversations.info %s failed: %s", s.channel, exc.response.get("error"))
        return False
    return channel.get("creator") == user


# ---------------------------------------------------------------- creating


def owner_principal(ctx: BotContext, client: WebClient, team: str, channel: str, user: str) -> Principal:
    return asker_at(ctx, client, team, channel, user).principal


def create_schedule(
    ctx: BotContext, client: WebClient, wanted: Wanted, *, team: str, channel: str, owner: str
) -> Schedule:
    """Store a schedule for SQL that answered once, as the owner in `channel` (core/schedules/
    create.py); ScheduleError says why not, in mrkdwn."""
    refused = refuse_schedule(ctx.settings, ctx.conversations, team, channel)
    if refused:
        raise ScheduleError(refused)
    return ctx.conversations.schedule(
        wanted,
        principal=owner_principal(ctx, client, team, channel, owner),
        team=team,
        channel=channel,
        owner=owner,
        refusal=lambda checked: _refusal(checked.error_kind, checked.error, wanted.database, channel),
    )


def _refusal(kind: ErrorKind | None, error: str, database: str, channel: str) -> str:
    """Why a schedule was not made, in mrkdwn: who may not, or the engine's words (escaped)."""
    if kind == "access":
        return f"You may not query `{render.escape(database)}` in <#{channel}>."
    text = render.escape(error.strip()) or "the query did not run."
    return text if text.endswith((".", "!", "?")) else text + "."


def confirmation(s: Schedule) -> render.Message:
    following = triggers.next_fire_time(s.trigger, _now())
    when = f" Next run {slack_time(following)}." if following else ""
    text = (
        f":repeat: <@{s.owner}> scheduled *{render.escape(s.question)}* — "
        f"{render.escape(schedule_line(s))}.{when} Manage it with `/ask schedules`."
    )
    return render.Message(text=f"Scheduled: {render.escape(s.question)}", blocks=[render.section(text)])


def schedule_command(
    ctx: BotContext,
    *,
    ack: Any,
    command: dict[str, Any],
    rest: str,
    client: WebClient,
    respond: Any,
    **_: Any,
) -> None:
    """`/ask schedule WHEN [only when …] QUESTION`: answer it once now, then schedule that SQL."""
    team, channel, user = command.get("team_id", ""), command["channel_id"], command.get("user_id") or ""
    if rest.strip() and not parse.looks_like_schedule(rest):  # "/ask schedule of deliveries next week?"
        ack()
        question = incoming(command.get("text") or "")
        if not start(ctx, client, Ask(question, team, channel, user, thread_ts=None, announce=True)):
            respond(
                response_type="ephemeral",
                text="I can't post in this channel. Invite me with `/invite @Askbase`.",
            )
        return
    refused = refuse_schedule(ctx.settings, ctx.conversations, team, channel)
    if refused:  # before anything is posted: the first answer would go to the whole channel
        ack(response_type="ephemeral", text=refused)
        return
    try:
        spec, condition, question = parse.split_schedule(rest)
        triggers.check_frequency(spec, ctx.settings.schedules.min_interval_s, _now())
    except ScheduleError as exc:
        ack(response_type="ephemeral", text=render.escape(str(exc)))  # it may quote what was typed
        return
    ack()
    if spec.kind == "cron":  # read again in the person's timezone (a timezone in the text still wins)
        spec, condition, question = parse.split_schedule(rest, user_timezone(client, user))
    ask = Ask(question=question, team=team, channel=channel, user=user, thread_ts=None, announce=True)
    job = begin(ctx, client, ask)  # the thread starts with who asked what
    if job is None:
        respond(
            response_type="ephemeral",
            text="I can't post in this channel. Invite me with `/invite @Askbase` and schedule it again.",
        )
        return
    progress = open_progress(client, job.place, features(ctx), stage_in_line(ctx.queue.position()))
    if not ctx.queue.put(answer_then_schedule, ctx, client, job, spec, condition, progress):
        progress.done(ok=False)  # this process is stopping
        note = render.plain(RESTARTING)
        client.chat_postMessage(
            channel=job.channel, thread_ts=job.thread_ts, text=note.text, blocks=note.blocks
        )


def answer_then_schedule(
    ctx: BotContext,
    client: WebClient,
    ask: Ask,
    spec: TriggerSpec,
    condition: Condition,
    progress: Progress | None = None,
) -> Schedule | None:
    """Worker thread: the answer goes out as usual; its SQL becomes the schedule."""
    outcome = answer(ctx, client, ask, progress)
    note: render.Message
    created: Schedule | None = None
    if outcome.status == "clarify":
        note = render.plain(
            "I didn't schedule it yet: pick one of the readings above, then press Schedule under the answer."
        )
    elif outcome.status != "answer" or not outcome.sql:
        note = render.plain(
            "I didn't schedule it: there is no answer to repeat. Press Retry, then Schedule under the answer."
        )
    else:
        try:
            wanted = Wanted(ask.question, outcome.sql, outcome.database, spec, condition, outcome.trace.id)
            created = create_schedule(
                ctx, client, wanted, team=ask.team, channel=ask.channel, owner=ask.user or ""
            )
            note = confirmation(created)
        except ScheduleError as exc:
            note = render.plain(f"I didn't schedule it: {exc}")
    try:
        client.chat_postMessage(
            channel=ask.channel, thread_ts=ask.thread_ts, text=note.text, blocks=note.blocks
        )
    except SlackApiError as exc:
        log.warning("could not confirm the schedule in %s: %s", ask.channel, exc.response.get("error"))
    return created


# ---------------------------------------------------------------- the modal


def _option(value: str, text: str) -> dict[str, Any]:
    return {"text": {"type": "plain_text", "text": text}, "value": value}


def _input(
    block_id: str, label: str, element: dict[str, Any], *, optional: bool = False, hint: str = ""
) -> dict[str, Any]:
    block: dict[str, Any] = {
        "type": "input",
        "block_id": block_id,
        "optional": optional,
        "label": {"type": "plain_text", "text": label},
        "element": {"action_id": block_id, **element},
    }
    if hint:
        block["hint"] = {"type": "plain_text", "text": hint}
    return block


def schedule_modal(
    question: str, database: str, timezone: str, channel: str, metadata: dict[str, str], min_interval_s: int
) -> dict[str, Any]:
    """How often, timezone, channel, when to post. One form; fields the choice does not use are ignored."""
    how = [_option(k, v) for k, v in HOW.items()]
    when = [_option(k, v) for k, v in WHEN.items()]
    days = [_option(str(i), name) for i, name in enumerate(triggers.DAY_LABELS)]
    smallest = max(1, -(-min_interval_s // 60))
    blocks = [
        render.section(
            f"*{render.escape(question)}*\n`{render.escape(database)}` · the SQL of this answer runs each time"
        ),
        _input("how", "How often", {"type": "static_select", "options": how, "initial_option": how[3]}),
        _input(
            "every",
            "N (for every N minutes / hours)",
            {"type": "number_input", "is_decimal_allowed": False, "min_value": "1", "initial_value": "1"},
            optional=True,
            hint=f"At least every {smallest} minute{'s' if smallest != 1 else ''}.",
        ),
        _input(
            "at",
            "At (for daily, weekdays, weekly)",
            {"type": "timepicker", "initial_time": "09:00"},
            optional=True,
        ),
        _input("days", "On (for weekly)", {"type": "checkboxes", "options": days}, optional=True),
        _input(
            "cron",
            "Cron expression",
            {"type": "plain_text_input", "placeholder": {"type": "plain_text", "text": "0 9 * * 1-5"}},
            optional=True,
            hint="minute hour day-of-month month day-of-week (0 or 7 = Sunday)",
        ),
        _input("tz", "Timezone", {"type": "plain_text_input", "initial_value": timezone}),
        _input(
            "channel",
            "Post in",
            {
                "type": "conversations_select",
                "initial_conversation": channel,
                "default_to_current_conversation": True,
                "filter": {"include": ["public", "private", "im"], "exclude_bot_users": True},
            },
        ),
        _input("when", "Post", {"type": "radio_buttons", "options": when, "initial_option": when[0]}),
        _input(
            "condition",
            "Condition",
            {"type": "plain_text_input", "placeholder": {"type": "plain_text", "text": "count > 0"}},
            optional=True,
            hint="A column of the result, a comparison and a value: count > 0, status = 'late'",
        ),
    ]
    return {
        "type": "modal",
        "callback_id": MODAL,
        "title": {"type": "plain_text", "text": "Schedule"},
        "submit": {"type": "plain_text", "text": "Schedule"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "private_metadata": json.dumps(metadata),
        "blocks": blocks,
    }


class FormErrors(Exception):
    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__("; ".join(errors.values()))
        self.errors = errors


def _value(values: dict[str, Any], block: str) -> Any:
    return (values.get(block) or {}).get(block) or {}


def read_form(
    values: dict[str, Any], *, min_interval_s: int, now: dt.datetime
) -> tuple[TriggerSpec, Condition, str]:
    """The modal's state → (when, condition, channel); FormErrors keyed by block id."""
    errors: dict[str, str] = {}
    how = (_value(values, "how").get("selected_option") or {}).get("value", "weekdays")
    tz = (_value(values, "tz").get("value") or "UTC").strip()
    try:
        triggers.check_timezone(tz)
    except ScheduleError as exc:
        errors["tz"] = str(exc)
        tz = "UTC"
    spec: TriggerSpec | None = None
    try:
        if how in ("minutes", "hours"):
            raw = str(_value(values, "every").get("value") or "").strip()
            if not raw.isdigit() or int(raw) < 1:
                raise FormErrors({"every": "Enter how many minutes or hours, e.g. 15."})
            spec = triggers.interval_spec(int(raw) * (60 if how == "minutes" else 3600), tz)
        elif how == "cron":
            spec = triggers.cron_spec(_value(values, "cron").get("value") or "", tz)
        else:
            at = _value(values, "at").get("selected_time") or ""
            hour, _, minute = at.partition(":")
            if not (hour.isdigit() and minute.isdigit()):
                raise FormErrors({"at": "Pick a time of day."})
            if how == "daily":
                spec = triggers.daily_spec(int(hour), int(minute), tz)
            elif how == "weekdays":
                spec = triggers.weekly_spec(range(5), int(hour), int(minute), tz)
            else:
                chosen = [int(o["value"]) for o in _value(values, "days").get("selected_options") or []]
                if not chosen:
                    raise FormErrors({"days": "Choose at least one day."})
                spec = triggers.weekly_spec(chosen, int(hour), int(minute), tz)
        triggers.check_frequency(spec, min_interval_s, now)
    except FormErrors as exc:
        errors.update(exc.errors)
    except ScheduleError as exc:
        errors[{"minutes": "every", "hours": "every", "cron": "cron"}.get(how, "at")] = str(exc)
    when = (_value(values, "when").get("selected_option") or {}).get("value", "always")
    condition = Condition()
    if when == "condition":
        try:
            condition = parse_condition(_value(values, "condition").get("value") or "")
        except ScheduleError as exc:
            errors["condition"] = str(exc)
    elif when in ("not_empty", "changed"):
        condition = Condition(when)
    channel = _value(values, "channel").get("selected_conversation") or ""
    if not channel:
        errors["channel"] = "Choose where to post."
    if errors or spec is None:
        raise FormErrors(errors)
    return spec, condition, channel


# ---------------------------------------------------------------- lists: /ask schedules and App Home


def _status_line(s: Schedule, now: dt.datetime) -> str:
    parts = []
    if s.paused:
        parts.append(
            f":double_vertical_bar: Paused{' — ' + s.paused_reason if s.paused_reason else ''}"  # our mrkdwn
        )
    else:
        following = triggers.next_fire_time(s.trigger, now)
        parts.append(f"Next run {slack_time(following)}" if following else "No further runs")
        if s.failures:
            parts.append(f":warning: {s.failures} failed run{'s' if s.failures != 1 else ''} in a row")
    if s.last_run_at:
        what = {"posted": "posted", "quiet": "nothing to post", "failed": "failed"}.get(
            s.last_status or "", ""
        )
        rows = f", {s.last_rows:,} rows" if s.last_rows is not None and s.last_status != "failed" else ""
        parts.append(f"last run {slack_time(s.last_run_at)}{': ' + what if what else ''}{rows}")
    return " · ".join(parts)


def schedule_blocks(s: Schedule, now: dt.datetime, *, show_channel: bool = False) -> list[dict[str, Any]]:
    where = f" · in <#{s.channel}>" if show_channel else ""
    head = (
        f"*{render.escape(s.question)}*\n{render.escape(schedule_line(s))} · `{render.escape(s.database)}`"
        f" · <@{s.owner}>{where}"
    )
    toggle = (
        render.button("Resume", "schedule_resume", str(s.id), style="primary")
        if s.paused
        else render.button("Pause", "schedule_pause", str(s.id))
    )
    delete = render.button("Delete", "schedule_delete", str(s.id), style="danger")
    delete["confirm"] = {
        "title": {"type": "plain_text", "text": "Delete this schedule?"},
        "text": {
            "type": "mrkdwn",
            "text": render.clip(f"*{render.escape(s.question)}* will not be asked again.", 300),
        },
        "confirm": {"type": "plain_text", "text": "Delete"},
        "deny": {"type": "plain_text", "text": "Keep it"},
        "style": "danger",
    }
    return [
        render.section(head),
        render.context(_status_line(s, now)),
        render.actions(
            f"schedule:{s.id}", toggle, render.button("Run now", "schedule_run", str(s.id)), delete
        ),
    ]


def list_message(items: list[Schedule], note: str = "") -> render.Message:
    now = _now()
    blocks: list[dict[str, Any]] = []
    if note:
        blocks.append(render.context(note))
    if not items:
        blocks.append(
            render.section(
                "No scheduled questions in this channel. Press *Schedule* under an answer, or "
                f"`/ask schedule every weekday at 9:00 {render.escape('<question>')}`."
            )
        )
    else:
        blocks.append(render.section(f"*Scheduled questions in this channel* ({len(items)})"))
        for s in items[:LIST_LIMIT]:
            blocks.extend(schedule_blocks(s, now))
        if len(items) > LIST_LIMIT:
            blocks.append(render.context(f"… and {len(items) - LIST_LIMIT} more."))
    return render.Message(text=f"{len(items)} scheduled question(s)", blocks=blocks[: render.MAX_BLOCKS])


def home_blocks(items: list[Schedule], limit: int = HOME_LIMIT) -> list[dict[str, Any]]:
    """The person's schedules for their App Home (bot/slack/listeners/home.py lays out the page)."""
    now = _now()
    blocks: list[dict[str, Any]] = [render.section("*Your scheduled questions*")]
    if not items:
        blocks.append(
            render.context(
                "None yet. Press *Schedule* under one of my answers, or type "
                f"`/ask schedule every weekday at 9:00 {render.escape('<question>')}` in a channel."
            )
        )
    for s in items[:limit]:
        blocks.append({"type": "divider"})
        blocks.extend(schedule_blocks(s, now, show_channel=True))
    if len(items) > limit:
        blocks.append(
            render.context(f"… and {len(items) - limit} more; `/ask schedules` in a channel lists its own.")
        )
    return blocks


def publish_home(ctx: BotContext, client: WebClient, user: str, team: str, note: str = "") -> None:
    """Refresh the person's App Home after a schedule button there (bot/slack/listeners/home.py draws it)."""
    for hook in ctx.extras.get("home_hooks", ()):
        hook(ctx, client, user, team, note)


def list_command(ctx: BotContext, *, ack: Any, command: dict[str, Any], **_: Any) -> None:
    items = ctx.conversations.schedules_in(command.get("team_id", ""), command["channel_id"])
    message = list_message(items)
    ack(response_type="ephemeral", text=message.text, blocks=message.blocks)


# ---------------------------------------------------------------- buttons


def _clicked(body: dict[str, Any]) -> tuple[str, str, str, bool, bool]:
    """(user, team, channel, in an ephemeral message, on the App Home) of a click."""
    container = body.get("container") or {}
    user = (body.get("user") or {}).get("id") or ""
    team = (body.get("team") or {}).get("id") or (body.get("user") or {}).get("team_id") or ""
    channel = (body.get("channel") or {}).get("id") or container.get("channel_id") or ""
    home = container.get("type") == "view" or (body.get("view") or {}).get("type") == "home"
    return user, team, channel, bool(container.get("is_ephemeral")), home


def run_now(ctx: BotContext, client: WebClient, schedule_id: int, user: str, channel: str) -> None:
    """Worker thread: run a schedule once in this process; failures go to whoever clicked."""
    runner = Runner(ctx.askbase, lambda _team: client, worker_id="web", usergroups=ctx.usergroups)
    done = run_and_post(runner, schedule_id, manual_by=user)
    if done.status == "failed":
        tell(client, channel, user, f":warning: The run failed. {done.detail}")  # mrkdwn already


def on_schedule_button(
    ctx: BotContext, op: str, body: dict[str, Any], action: dict[str, Any], client: WebClient, respond: Any
) -> str:
    """Pause / resume / run / delete for the owner or a channel admin; returns the note shown."""
    user, team, channel, ephemeral, home = _clicked(body)
    try:
        s = ctx.conversations.scheduled(int(action.get("value") or 0))
    except ValueError:
        s = None
    if s is None:
        note = "That schedule no longer exists."
    elif not may_change(client, s, user):
        note = f"Only <@{s.owner}> (who made it) or a channel admin can change this schedule."
    elif op == "pause":
        ctx.conversations.pause(s.id, reason=f"by <@{user}>")
        note = f"Paused *{render.escape(s.question)}*. It won't post until it is resumed."
    elif op == "resume":
        resumed = ctx.conversations.resume(s.id)
        following = triggers.next_fire_time(resumed.trigger, _now()) if resumed else None
        when = f" Next run {slack_time(following)}." if following else ""
        note = f"Resumed *{render.escape(s.question)}*.{when}"
    elif op == "delete":
        ctx.conversations.delete(s.id)
        note = f"Deleted *{render.escape(s.question)}*."
    elif ctx.queue.put(run_now, ctx, client, s.id, user, s.channel):
        note = f"Running *{render.escape(s.question)}* now; the result goes to <#{s.channel}>."
    else:
        note = RESTARTING
    if home:
        publish_home(ctx, client, user, team, note)
    elif ephemeral:
        listed = ctx.conversations.schedules_in(team, channel)
        message = list_message(listed, note)
        try:
            respond(
                replace_original=True, response_type="ephemeral", text=message.text, blocks=message.blocks
            )
        except Exception:  # the response_url expired (30 min): say it in a fresh note instead
            log.info("could not refresh the schedule list", exc_info=True)
            tell(client, channel, user, note)
    else:
        tell(client, channel, user, note)
    return note


def on_schedule_open(
    ctx: BotContext, body: dict[str, Any], action: dict[str, Any], client: WebClient
) -> None:
    user, _team, channel, _, _ = _clicked(body)
    container = body.get("container") or {}
    trace_id = action.get("value") or ""
    turn = ctx.conversations.turn(trace_id)
    if turn is None or not turn.answered:
        tell(client, channel, user, "There is no query to schedule on this message; ask the question again.")
        return
    metadata = {
        "t": trace_id,
        "c": channel,
        "th": container.get("thread_ts") or container.get("message_ts") or "",
    }
    view = schedule_modal(
        ctx.conversations.standalone_question(turn),
        turn.database,
        user_timezone(client, user),
        channel,
        metadata,
        ctx.settings.schedules.min_interval_s,
    )
    try:
        client.views_open(trigger_id=body.get("trigger_id"), view=view)
    except SlackApiError as exc:
        log.info("views.open failed: %s", exc.response.get("error"))
        tell(
            client,
            channel,
            user,
            "I couldn't open the schedule form. Try `/ask schedule every weekday at 9:00 …`.",
        )


def on_modal_submitted(
    ctx: BotContext, ack: Any, body: dict[str, Any], view: dict[str, Any], client: WebClient
) -> None:
    user = (body.get("user") or {}).get("id") or ""
    team = (body.get("team") or {}).get("id") or (body.get("user") or {}).get("team_id") or ""
    meta = json.loads(view.get("private_metadata") or "{}")
    values = (view.get("state") or {}).get("values") or {}
    try:
        spec, condition, channel = read_form(
            values, min_interval_s=ctx.settings.schedules.min_interval_s, now=_now()
        )
    except FormErrors as exc:
        ack(response_action="errors", errors=exc.errors)
        return
    turn = ctx.conversations.turn(meta.get("t", ""))
    if turn is None or not turn.sql:
        ack(response_action="errors", errors={"how": "I no longer have this answer. Ask the question again."})
        return
    if not ctx.askbase.may_query(owner_principal(ctx, client, team, channel, user), turn.database):
        ack(response_action="errors", errors={"channel": f"You may not query `{turn.database}` there."})
        return
    ack()
    question = ctx.conversations.standalone_question(turn)
    try:
        wanted = Wanted(question, turn.sql, turn.database, spec, condition, meta.get("t"))
        created = create_schedule(ctx, client, wanted, team=team, channel=channel, owner=user)
    except ScheduleError as exc:
        tell(client, meta.get("c") or channel, user, render.escape(f"I didn't schedule it: {exc}"))
        return
    note = confirmation(created)
    thread = meta.get("th") if channel == meta.get("c") and meta.get("th") else None
    try:
        kwargs = {"thread_ts": thread} if thread else {}
        client.chat_postMessage(channel=channel, text=note.text, blocks=note.blocks, **kwargs)
    except SlackApiError as exc:
        log.info("could not confirm in %s: %s", channel, exc.response.get("error"))
        tell(
            client,
            meta.get("c") or channel,
            user,
            f"Scheduled, but I can't post in <#{channel}>: invite me there.",
        )


def register(app: App, ctx: BotContext) -> None:
    ctx.subcommands["schedule"] = partial(schedule_command, ctx)
    ctx.subcommands["schedules"] = partial(list_command, ctx)

    @app.action("schedule_open")
    def schedule_open(ack: Any, body: dict[str, Any], action: dict[str, Any], client: WebClient) -> None:
        ack()
        on_schedule_open(ctx, body, action, client)

    @app.view(MODAL)
    def schedule_submitted(ack: Any, body: dict[str, Any], view: dict[str, Any], client: WebClient) -> None:
        on_modal_submitted(ctx, ack, body, view, client)

    def button(op: str) -> Callable[[Any, dict[str, Any], dict[str, Any], WebClient, Any], None]:
        def handler(
            ack: Any, body: dict[str, Any], action: dict[str, Any], client: WebClient, respond: Any
        ) -> None:
            ack()
            on_schedule_button(ctx, op, body, action, client, respond)

        return handler

    for op in ("pause", "resume", "run", "delete"):
        app.action(f"schedule_{op}")(button(op))
