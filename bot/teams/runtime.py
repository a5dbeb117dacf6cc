"""What every Teams handler receives: the engine, the settings, the sender, and the work queue.

Questions are answered off the request (Teams wants an answer to its POST within seconds): the
handler queues a coroutine here and returns. At most `teams.workers` questions run at once (each
on a thread of the executor, since the engine is synchronous); up to eight times as many wait;
beyond that the person is told to try again in a minute instead of queueing without bound.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

import sqlalchemy as sa

from bot.claims import ClaimKeeper
from bot.teams.members import TeamMembers
from bot.teams.proactive import Sender
from core.askbase import Askbase
from core.settings import Settings

log = logging.getLogger("askbase.teams")

T = TypeVar("T")


@dataclass
class TeamsRuntime:
    askbase: Askbase
    settings: Settings
    sender: Sender
    link_key: bytes
    executor: ThreadPoolExecutor
    claims: ClaimKeeper  # this process's claims on the activities it handles (bot/teams/inflight.py)
    tasks: set[asyncio.Task[Any]] = field(default_factory=set)
    waiting: int = 0
    base_url: str | None = None  # the bot's public address, for download links (else the request's)
    members: TeamMembers = field(default_factory=TeamMembers)  # analyst teams' members (verified.py)

    @property
    def state(self) -> sa.Engine:
        return self.askbase.state

    @property
    def workers(self) -> int:
        return max(1, self.settings.teams.workers)

    @property
    def table_rows(self) -> int:
        return max(1, min(self.settings.teams.table_rows, 50))

    @property
    def busy(self) -> bool:
        return self.waiting >= self.workers * 9

    async def run(self, function: Callable[..., T], *args: Any) -> T:
        """`function(*args)` on a worker thread (the engine and the state database block)."""
        return await asyncio.get_running_loop().run_in_executor(self.executor, function, *args)

    def spawn(self, work: Coroutine[Any, Any, Any]) -> bool:
        """Queue background work; False (and nothing queued) when too much is waiting already."""
        if self.busy:
            work.close()
            return False
        self.waiting += 1
        task = asyncio.get_running_loop().create_task(work)
        self.tasks.add(task)

        def done(finished: asyncio.Task[Any]) -> None:
            self.tasks.discard(finished)
            self.waiting -= 1
            if not finished.cancelled() and finished.exception() is not None:
                log.error("background work failed", exc_info=finished.exception())

        task.add_done_callback(done)
        return True

    async def drain(self, timeout_s: float) -> None:
        """Let queued answers finish (on SIGTERM), up to `timeout_s`."""
        if self.tasks:
            await asyncio.wait(list(self.tasks), timeout=timeout_s)
