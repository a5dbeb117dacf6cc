"""Slack Web API clients: one on SLACK_API_BASE_URL that waits out rate limits, and one per team.

The Slack app (bot/slack/app.py) and the scheduler worker (bot/worker.py) both talk to Slack, and
the worker has no Bolt app to lend it a client; both build theirs here. One workspace uses
SLACK_BOT_TOKEN; many use the OAuth installations kept in the state database.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from slack_sdk import WebClient
from slack_sdk.http_retry.builtin_handlers import ConnectionErrorRetryHandler, RateLimitErrorRetryHandler

from core.schedules.tick import ChatUnavailable
from core.settings import Settings

DEFAULT_API = "https://slack.com/api/"


def secret(value: Any) -> str | None:
    """The value of a SecretStr setting (None when unset)."""
    return value.get_secret_value() if value is not None else None


def api_base_url(settings: Settings) -> str:
    base = settings.slack.api_base_url or DEFAULT_API
    return base if base.endswith("/") else base + "/"


def web_client(settings: Settings, token: str | None = None) -> WebClient:
    """A WebClient on SLACK_API_BASE_URL that waits out rate limits and retries dropped connections."""
    return WebClient(
        token=token,
        base_url=api_base_url(settings),
        timeout=30,
        retry_handlers=[
            ConnectionErrorRetryHandler(max_retry_count=2),
            RateLimitErrorRetryHandler(max_retry_count=3),
        ],
    )


def oauth_configured(settings: Settings) -> bool:
    return bool(settings.slack.client_id and secret(settings.slack.client_secret))


def team_clients(settings: Settings, state: sa.Engine) -> Callable[[str], WebClient]:
    """A Slack client per team: the bot token, or each workspace's OAuth installation.

    A team whose installation is gone raises ChatUnavailable (a scheduled run records it).
    ValueError when neither a bot token nor OAuth is configured.
    """
    token = secret(settings.slack.bot_token)
    if token:
        client = web_client(settings, token)
        return lambda _team: client
    if not oauth_configured(settings):
        raise ValueError("Set SLACK_BOT_TOKEN (one workspace) or SLACK_CLIENT_ID and SLACK_CLIENT_SECRET.")
    # Imported here: the store pulls in sqlalchemy.ext.asyncio (needs greenlet) — OAuth mode only.
    from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore

    installations = SQLAlchemyInstallationStore(client_id=settings.slack.client_id or "", engine=state)
    clients: dict[str, WebClient] = {}

    def client_for(team: str) -> WebClient:
        bot = installations.find_bot(enterprise_id=None, team_id=team or None)
        if bot is None or not bot.bot_token:
            raise ChatUnavailable("Askbase is not installed in this workspace any more")
        if team not in clients or clients[team].token != bot.bot_token:
            clients[team] = web_client(settings, bot.bot_token)
        return clients[team]

    return client_for
