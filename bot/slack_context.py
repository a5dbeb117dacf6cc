"""What every Slack listener module receives in `register(app, ctx)`: the engine, the worker pool, the claims.

Feature modules plug in without touching the others: a listener module adds its Bolt listeners
in `register`, and may add `/ask WORD ...` subcommands to `ctx.subcommands` (e.g. the schedules
feature adds "schedule" and "schedules").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from bot.claims import ClaimKeeper
from bot.worker_pool import WorkerPool
from core.askbase import Askbase
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
    pool: WorkerPool
    claims: ClaimKeeper  # this process's claims on the questions it answers (bot/claims.py)
    subcommands: dict[str, Subcommand] = field(default_factory=dict)
    reply_hooks: list[ReplyHook] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)  # room for feature modules' own objects

    @property
    def state(self) -> sa.Engine:
        return self.askbase.state

    @property
    def table_rows(self) -> int:
        return max(1, min(self.settings.slack.table_rows, 99))
