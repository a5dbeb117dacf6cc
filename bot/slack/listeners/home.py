"""The App Home tab: how to ask, what to ask about, what you asked, your schedules.

A first-time visitor gets a short "how to ask" and example questions; everyone sees the databases
they may ask about (core/access.py decides, as for questions) with real example questions from
each catalog (core/suggestions.py), each a button that asks it; their recent questions with "Ask
again"; their scheduled questions with Pause / Resume / Run now / Delete (bot/slack/listeners/schedules.py);
below them the sections other features add through `ctx.extras["home_sections"]` (verified queries
with Unverify / Recheck: bot/slack/listeners/verified.py).
Workspace admins (and the installer) also see what in the setup made questions fail in the last day
(bot/slack/admin_notes.py). A question asked from Home is answered in the person's DM with the app, in a
thread that starts with the question.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from slack_bolt import App
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.answer_view import catalog_of
from bot.slack import render
from bot.slack.admin_notes import home_notes, installer_of
from bot.slack.answering import start
from bot.slack.ask import Ask
from bot.slack.asker import asker_at
from bot.slack.context import BotContext
from bot.slack.ephemeral import clicking_user
from bot.slack.listeners.schedules import home_blocks, user_info
from bot.slack.schedule_posts import slack_time
from core.suggestions import example_questions

log = logging.getLogger(__name__)

ASK = "home_ask"
MAX_HOME_BLOCKS = 100
MAX_DATABASES = 5
EXAMPLES = 3
RECENT = 5
STATUS_WORDS = {"answer": "answered", "clarify": "asked back", "error": "failed"}


def ask_button(question: str, database: str, text: str = "Ask", *, trace_id: str = "") -> dict[str, Any]:
    """A button that asks `question` again. An asked question is named by its answer's trace id
    (read back when pressed); an example question is carried whole when it fits the button's value
    (Slack's limit is in characters: non-ASCII stays as it is, not \\u-escaped)."""
    if trace_id:
        return render.button(text, ASK, json.dumps({"t": trace_id, "db": database}))
    value = json.dumps({"q": question, "db": database}, ensure_ascii=False)
    while len(value) > render.MAX_VALUE and question:
        question = question[: len(question) - max(1, len(value) - render.MAX_VALUE)]
        value = json.dumps({"q": question, "db": database}, ensure_ascii=False)
    return render.button(text, ASK, value)


def _is_admin(ctx: BotContext, client: WebClient, user: str, team: str) -> bool:
    info = user_info(client, user)
    if info.get("is_admin") or info.get("is_owner") or info.get("is_primary_owner"):
        return True
    return installer_of(ctx, team) == user


def _databases(ctx: BotContext, client: WebClient, user: str, team: str, channel: str | None) -> list[str]:
    return asker_at(ctx, client, team, channel, user).usable


def _database_blocks(ctx: BotContext, name: str) -> list[dict[str, Any]]:
    catalog = catalog_of(ctx.askbase, name)
    config = ctx.settings.databases.get(name)
    about = (config.description if config is not None else "") or (catalog.description if catalog else "")
    head = f"*`{render.escape(name)}`*" + (f" — {render.escape(render.clip(about, 300))}" if about else "")
    blocks: list[dict[str, Any]] = [render.section(head)]
    if catalog is None:
        return blocks
    confirmed = ctx.conversations.examples(name)
    questions = example_questions(catalog, confirmed, limit=EXAMPLES)
    if questions:
        blocks.append(
            render.actions(
                f"home_examples:{name}", *(ask_button(q, name, render.clip(q, 75)) for q in questions)
            )
        )
    return blocks


def _recent_blocks(ctx: BotContext, user: str, team: str) -> list[dict[str, Any]]:
    asked = ctx.conversations.recent_questions(user, prefix=f"slack:{team}:" if team else "", limit=RECENT)
    if not asked:
        return []
    blocks: list[dict[str, Any]] = [render.section("*Your recent questions*")]
    for q in asked:
        blocks.append(
            {
                "type": "section",
                "text": {
                    "type": "mrkdwn",
                    "text": render.clip(
                        f"{render.escape(q.question)}\n`{render.escape(q.database)}` · "
                        f"{STATUS_WORDS.get(q.status, q.status)} · {slack_time(q.asked_at)}",
                        3000,
                    ),
                },
                "accessory": ask_button(q.question, q.database, "Ask again", trace_id=q.trace_id),
            }
        )
    return blocks


def onboarding_blocks() -> list[dict[str, Any]]:
    example = render.escape("<question>")
    return [
        render.section(
            "*Welcome to Askbase* :wave: Ask your databases questions in plain English; every answer "
            "comes with the SQL it ran, a CSV and a chart where one helps.\n"
            "• *DM me* (Messages tab) and just ask: each message gets its own thread with the answer.\n"
            "• In a channel, *mention me*: `@Askbase how many clients signed up in 2024?`\n"
            f"• Or type `/ask {example}` anywhere I am invited.\n"
            "Try one of the questions below — each button asks it for you."
        )
    ]


def home_view(
    ctx: BotContext, client: WebClient, user: str, team: str, channel: str | None, note: str = ""
) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = []
    if note:
        blocks.append(render.context(note))
    recent = _recent_blocks(ctx, user, team)
    if not recent:
        blocks.extend(onboarding_blocks())
    if _is_admin(ctx, client, user, team):
        notes = home_notes(ctx)
        if notes:
            blocks.append(
                render.section(
                    ":wrench: *Setup* (only admins see this)\n" + "\n".join(f"• {n}" for n in notes)
                )
            )
    names = _databases(ctx, client, user, team, channel)
    blocks.append(
        render.section(
            "*Databases you can ask about*"
            if names
            else "*No database is open to you yet.* Ask the bot's admins for access."
        )
    )
    for name in names[:MAX_DATABASES]:
        blocks.extend(_database_blocks(ctx, name))
    if len(names) > MAX_DATABASES:
        blocks.append(
            render.context(f"… and {len(names) - MAX_DATABASES} more; `/ask db` in a channel lists them.")
        )
    if recent:
        blocks.append({"type": "divider"})
        blocks.extend(recent)
    blocks.append({"type": "divider"})
    extra = [b for section in ctx.extras.get("home_sections", ()) for b in section(ctx, client, user, team)]
    room = (MAX_HOME_BLOCKS - len(blocks) - len(extra) - 3) // 4  # four blocks per schedule
    items = ctx.conversations.schedules_of(user, team or None)
    blocks.extend(home_blocks(items, limit=max(1, room)))
    blocks.extend(extra)  # the schedules left room for them
    return {"type": "home", "blocks": blocks[:MAX_HOME_BLOCKS]}


def publish(
    ctx: BotContext, client: WebClient, user: str, team: str, note: str = "", channel: str | None = None
) -> None:
    try:
        client.views_publish(user_id=user, view=home_view(ctx, client, user, team, channel, note))
    except SlackApiError as exc:
        log.info("views.publish for %s failed: %s", user, exc.response.get("error"))


def ask_from_home(ctx: BotContext, client: WebClient, body: dict[str, Any], action: dict[str, Any]) -> None:
    """A question button on Home: answered in the person's DM with the app, in its own thread."""
    user = clicking_user(body) or ""
    team = (body.get("team") or {}).get("id") or (body.get("user") or {}).get("team_id") or ""
    try:
        data = json.loads(action.get("value") or "{}")
        database = str(data.get("db") or "") or None
        if data.get("t"):  # a question asked before: read back whole, whatever its length
            turn = ctx.conversations.turn(str(data["t"]))
            if turn is None:
                publish(ctx, client, user, team, note=":warning: I no longer have that question.")
                return
            question, database = turn.question, database or turn.database
        else:
            question = str(data["q"])
    except (ValueError, KeyError, TypeError):
        return
    ask = Ask(
        question=question,
        team=team,
        channel=user,
        user=user,
        thread_ts=None,
        announce=True,
        database=database,
    )
    if not start(ctx, client, ask):
        publish(
            ctx,
            client,
            user,
            team,
            note=":warning: I couldn't open our DM to answer there. Try messaging me first.",
        )


def register(app: App, ctx: BotContext) -> None:
    ctx.extras.setdefault("home_hooks", []).append(
        lambda c, client, user, team, note: publish(c, client, user, team, note)
    )

    def home_tab(event: dict[str, Any]) -> bool:  # the Messages tab is the agent view's (assistant.py)
        return bool(event.get("tab", "home") == "home")

    @app.event("app_home_opened", matchers=[home_tab])
    def home_opened(event: dict[str, Any], body: dict[str, Any], client: WebClient) -> None:
        if not event.get("user"):
            return
        publish(ctx, client, event["user"], body.get("team_id") or "")

    @app.action(ASK)
    def home_ask(ack: Any, body: dict[str, Any], action: dict[str, Any], client: WebClient) -> None:
        ack()
        ask_from_home(ctx, client, body, action)
