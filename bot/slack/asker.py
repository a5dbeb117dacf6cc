"""Who is asking, where: resolved once per request (bot/slack/middleware.py `who_is_asking`), or
once for the place a question is answered in, instead of in every handler.

The access rules and the analyst list may name Slack user groups, and a database may be told the
asker's email (row-level security): both cost Slack calls, so they are read on first use only,
and cached per workspace (bot/slack/usergroups.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from slack_bolt import BoltContext
from slack_sdk import WebClient

from bot.slack.context import BotContext
from bot.slack.usergroups import slack_principal
from core.access import Principal, usable_databases
from core.verified.analysts import configured as analysts_configured
from core.verified.analysts import is_analyst


@dataclass
class Asker:
    """Who asks, where: the person's Principal (with the user groups rules or the analyst list
    name, and the email a database is told), and what follows from it. Resolved on first use."""

    ctx: BotContext
    client: WebClient
    team: str
    channel: str | None
    user: str | None

    @cached_property
    def principal(self) -> Principal:
        return slack_principal(
            self.ctx.settings,
            self.client,
            self.ctx.usergroups,
            team=self.team,
            channel=self.channel,
            user=self.user,
        )

    @property
    def analyst(self) -> bool:
        """One of `verified.analysts` (they may verify, approve, and read the schema's names)."""
        return (
            bool(self.user)
            and analysts_configured(self.ctx.settings)
            and is_analyst(self.ctx.settings, self.principal)
        )

    @property
    def usable(self) -> list[str]:
        """The databases this person may query here (core/access.py decides)."""
        return usable_databases(self.ctx.settings, self.principal, self.ctx.askbase.databases.names())


def asker_at(ctx: BotContext, client: WebClient, team: str, channel: str | None, user: str | None) -> Asker:
    """The asker in a place the request did not come from (a question answered in a DM, a CSV
    for a thread): the same resolution, for that place."""
    return Asker(ctx, client, team or "", channel or None, user or None)


def asker_of(context: BoltContext) -> Asker:
    """The request's asker (`who_is_asking`)."""
    found = context["asker"]
    assert isinstance(found, Asker)
    return found
