"""Notes only one person sees (chat.postEphemeral): refusals, expiries, "only the asker may answer"."""

from __future__ import annotations

import logging
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.slack.render import section

log = logging.getLogger(__name__)


def tell(
    client: WebClient, channel: str | None, user: str | None, text: str, thread_ts: str | None = None
) -> None:
    """Post `text` (mrkdwn) to `user` alone; a failure is logged, never raised — it is only a note."""
    tell_message(client, channel, user, text, [section(text)], thread_ts=thread_ts)


def tell_message(
    client: WebClient,
    channel: str | None,
    user: str | None,
    text: str,
    blocks: list[dict[str, Any]],
    thread_ts: str | None = None,
) -> None:
    """Post a whole message (help, a list) to `user` alone, in the thread they asked in."""
    if not channel or not user:
        return
    try:
        client.chat_postEphemeral(
            channel=channel, user=user, text=text, blocks=blocks, thread_ts=thread_ts or None
        )
    except SlackApiError as exc:
        log.info("ephemeral note failed: %s", exc.response.get("error"))


def clicking_user(body: dict[str, Any]) -> str | None:
    """Who pressed the button or submitted the form."""
    return (body.get("user") or {}).get("id")
