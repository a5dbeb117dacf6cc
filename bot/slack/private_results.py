"""Private results: in a channel where data must not be shared, only the asker sees the answer.

A channel is private when the operator lists it (`slack.private_channels`) or a workspace admin
or owner turned it on there (`/ask private on`, stored in the channel's settings, so every
process agrees). There every reply to a question — the answer, a clarifying question, an error —
is an ephemeral message to the person who asked (`chat.postEphemeral`, "Only visible to you"), in
the thread they asked in; `/ask` posts no "X asked" root. Files cannot be ephemeral, so the CSV and
the chart go to the asker's direct message with the bot, under a note naming the channel and the
question; the CSV button does the same for whoever presses it. No progress is shown in the
channel but the 👀 reaction. A schedule posts for everyone, so none is made in a private channel,
and one made before the channel went private stops posting there (its run fails, saying why).
Slack keeps ephemeral messages only for the session: the asker's DM keeps the files.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.slack import render
from bot.slack.context import BotContext
from core.conversation.service import Conversations
from core.settings import Settings

log = logging.getLogger(__name__)

FILES_NOTE = "Only you can see this answer. The CSV and chart are in your direct messages with me."
SCHEDULE_REFUSED = (
    "Results in this channel are private (only the person who asks sees them), and a scheduled "
    "question posts for everyone. Schedule it in a direct message with me instead."
)
STATUS = {
    True: "Results in this channel are *private*: only the person who asks sees the answer, and the "
    "CSV and chart go to their direct messages.",
    False: "Results in this channel are shared: everyone in it sees the answers.",
}


def is_private(settings: Settings, conversations: Conversations, team: str, channel: str | None) -> bool:
    """Whether answers in `channel` go only to the asker. Unknown (the state database does not
    answer) counts as private: a reply seen by one person too few beats data seen by too many."""
    if not channel or channel.startswith("D"):
        return False  # a direct message is private already
    if channel in settings.slack.private_channels:
        return True
    try:
        return conversations.is_private(team, channel)
    except Exception:
        log.warning("could not read whether %s is private; treating it as private", channel, exc_info=True)
        return True


def post_ephemeral(
    client: WebClient, channel: str, user: str, message: render.Message, thread_ts: str | None
) -> str | None:
    """`message` to `user` alone; its ts. Raises SlackApiError, so a refused block style falls back."""
    kwargs: dict[str, Any] = {"thread_ts": thread_ts} if thread_ts else {}
    posted = client.chat_postEphemeral(
        channel=channel, user=user, text=message.text, blocks=message.blocks, **kwargs
    )
    return posted.get("message_ts")


def direct_thread(client: WebClient, user: str, channel: str, question: str) -> tuple[str, str | None]:
    """A note in `user`'s direct message with the bot saying what follows (posting to a user id
    lands there); the DM channel and the note's ts, for files to go under it."""
    text = f"Files for your question in <#{channel}>: *{render.escape(question[:300])}*"
    posted = client.chat_postMessage(channel=user, text=text, blocks=[render.section(text)])
    return str(posted.get("channel") or user), posted.get("ts")


def upload_to_asker(
    client: WebClient, user: str, channel: str, question: str, file_uploads: list[dict[str, Any]]
) -> None:
    dm, ts = direct_thread(client, user, channel, question)
    client.files_upload_v2(channel=dm, thread_ts=ts, file_uploads=file_uploads)


# ---------------------------------------------------------------- /ask private


def may_set(client: WebClient, user: str | None) -> bool:
    """Workspace admins and owners: turning privacy off shares data with the whole channel."""
    if not user:
        return False
    try:
        info = client.users_info(user=user).get("user") or {}
    except SlackApiError as exc:
        log.info("users.info %s failed: %s", user, exc.response.get("error"))
        return False
    return bool(info.get("is_admin") or info.get("is_owner") or info.get("is_primary_owner"))


def private_command(
    ctx: BotContext, *, ack: Any, command: dict[str, Any], rest: str, client: WebClient, **_: Any
) -> None:
    """`/ask private` says whether results here are private; `/ask private on|off` (admins) sets it."""
    team, channel, user = command.get("team_id", ""), command["channel_id"], command.get("user_id")
    word = rest.strip().lower()
    if word not in ("", "on", "off"):
        ack(response_type="ephemeral", text="Use `/ask private on`, `/ask private off`, or `/ask private`.")
        return
    if not word:
        ack(
            response_type="ephemeral", text=STATUS[is_private(ctx.settings, ctx.conversations, team, channel)]
        )
        return
    if channel.startswith("D"):
        ack(response_type="ephemeral", text="A direct message is private already.")
        return
    if not may_set(client, user):
        ack(response_type="ephemeral", text="Only workspace admins and owners can change this.")
        return
    if word == "off" and channel in ctx.settings.slack.private_channels:
        ack(
            response_type="ephemeral",
            text="This channel is private in Askbase's configuration (`slack.private_channels`); "
            "ask whoever runs Askbase to change it.",
        )
        return
    ctx.conversations.set_private(team, channel, word == "on", user)
    ack(response_type="in_channel", text=f"<@{user}> changed this: {STATUS[word == 'on']}")


def register(ctx: BotContext) -> None:
    ctx.subcommands["private"] = lambda **kwargs: private_command(ctx, **kwargs)


def refuse_schedule(settings: Settings, conversations: Conversations, team: str, channel: str) -> str | None:
    """Why no schedule may post in this channel (None: it may)."""
    return SCHEDULE_REFUSED if is_private(settings, conversations, team, channel) else None


def direct_files_note(client: WebClient, channel: str, user: str, thread_ts: str | None) -> None:
    """After files went to the DM: say so to the asker where they asked (best effort)."""
    try:
        post_ephemeral(client, channel, user, render.plain(FILES_NOTE), thread_ts)
    except SlackApiError as exc:
        log.info("could not say where the files went: %s", exc.response.get("error"))
