"""What every Slack listener module receives in `register(app, ctx)`: the conversation service,
the answering queue, the claims.

Feature modules plug in without touching the others: a listener module adds its Bolt listeners
in `register`, and may add `/ask WORD ...` subcommands to `ctx.subcommands` (e.g. the schedules
feature adds "schedule" and "schedules"). What a listener needs of the state database it asks
of `ctx.conversations` (core/conversation/service.py), never of the database itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from bot.slack.usergroups import UsergroupDirectory
from core.askbase import Askbase
from core.conversation.claims import ClaimKeeper
from core.conversation.queue import AnswerQueue
from core.conversation.service import Conversations
from core.settings import Settings

# A `/ask WORD rest` handler, called with keyword arguments ack, command (the payload), rest (the
# text after WORD), client and respond. It must call `ack` itself (within 3 s), like any listener.
Subcommand = Callable[..., None]
# A thread-reply hook, called with (ctx, client, ask) for a reply in one of our threads before it
# is answered as a follow-up question; True means the hook consumed it (e.g. the free-text answer
# to a pending clarification).
ReplyHook = Callable[..., bool]


@dataclass
class BotContext:
    askbase: Askbase
    settings: Settings
    conversations: Conversations  # the life of a question, and everything kept about it
    queue: AnswerQueue  # questions answered a few at a time, in arrival order
    claims: ClaimKeeper  # this process's claims on the questions it answers (core/conversation/claims.py)
    usergroups: UsergroupDirectory = field(default_factory=UsergroupDirectory)  # who is in which group
    subcommands: dict[str, Subcommand] = field(default_factory=dict)
    reply_hooks: list[ReplyHook] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)  # room for feature modules' own objects

    @property
    def state(self) -> sa.Engine:
        """The state database's engine, for Slack's own OAuth installation store only."""
        return self.askbase.state

    @property
    def table_rows(self) -> int:
        return max(1, min(self.settings.slack.table_rows, 99))
