"""What every Teams handler receives: the conversation service, the settings, the sender, and the
work queues.

Nothing a person asked for runs inside the request: `POST /api/messages` is acknowledged once the
activity is verified and claimed (server.py, inflight.py), and its turn runs after, as a task
(`start_turn`). Four kinds of work, kept apart so that none waits behind another:

- answering (`answer_in_turn`, the `queue`): the engine on a question, and the CSV a link makes.
  At most `teams.workers` run at once; the others wait their turn, in order, however many there
  are (core/conversation/queue.py): each waits with its activity claimed in the state database,
  so a burst is answered, not turned away ("queued — N ahead of you" in a personal chat when a
  full round of answers is ahead of it).
- handling (`run`, the `executor`): the state reads and writes of a handler — a button, a
  command — on threads of their own, so a press is not kept waiting behind a burst of questions.
- claiming (`book`, the `claim_pool`): an activity's claim and its bookkeeping, on a small pool of
  its own, so the ack never waits behind slow answers (with four slow questions in flight, a
  `help` once waited 8.6 s for its 202).
- turns (`start_turn`): the activities acknowledged and being handled, at most MAX_TURNS at once;
  beyond that the request is answered 503 before it is claimed, and the Bot Connector sends it
  again.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from bot.teams.members import TeamMembers
from bot.teams.proactive import Sender
from core.askbase import Askbase
from core.conversation.claims import ClaimKeeper
from core.conversation.queue import AnswerQueue
from core.conversation.service import Conversations
from core.settings import Settings

log = logging.getLogger("askbase.teams")

T = TypeVar("T")

CLAIM_THREADS = 4  # one short write per claim, and the state database takes one writer at a time
HANDLER_THREADS = 8  # handlers' state reads and writes (a button, a command): short, many at once
MAX_TURNS = 1000  # activities acknowledged and not yet handled, per process


@dataclass
class TeamsRuntime:
    askbase: Askbase
    settings: Settings
    conversations: Conversations  # the life of a question, and everything kept about it
    sender: Sender
    link_key: bytes
    queue: AnswerQueue  # questions answered `teams.workers` at a time, in arrival order
    claims: ClaimKeeper  # this process's claims on the activities it handles (bot/teams/inflight.py)
    executor: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(HANDLER_THREADS, thread_name_prefix="askbase-teams")
    )
    claim_pool: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(CLAIM_THREADS, thread_name_prefix="askbase-teams-claim")
    )
    tasks: set[asyncio.Task[Any]] = field(default_factory=set)  # questions queued or being answered
    turns: set[asyncio.Task[Any]] = field(default_factory=set)  # acknowledged activities being handled
    base_url: str | None = None  # the bot's public address, for download links (else the request's)
    members: TeamMembers = field(default_factory=TeamMembers)  # analyst teams' members (verified.py)
    clock: Callable[[], dt.datetime] = field(default=lambda: dt.datetime.now(dt.UTC))  # links' time

    def now(self) -> dt.datetime:
        return self.clock()

    @property
    def workers(self) -> int:
        return max(1, self.settings.teams.workers)

    @property
    def table_rows(self) -> int:
        return max(1, min(self.settings.teams.table_rows, 50))

    async def run(self, function: Callable[..., T], *args: Any) -> T:
        """`function(*args)` on a handler thread (the state database blocks)."""
        return await asyncio.get_running_loop().run_in_executor(self.executor, function, *args)

    async def answer_in_turn(self, function: Callable[..., T], *args: Any) -> T:
        """`function(*args)` — the engine on a question — on the answering queue, in its turn."""
        return await asyncio.get_running_loop().run_in_executor(self.queue, function, *args)

    async def book(self, function: Callable[..., T], *args: Any) -> T:
        """`function(*args)` on the claim pool: claims and their bookkeeping, never behind answers."""
        return await asyncio.get_running_loop().run_in_executor(self.claim_pool, function, *args)

    @property
    def turns_full(self) -> bool:
        return len(self.turns) >= MAX_TURNS

    def start_turn(self, work: Coroutine[Any, Any, Any]) -> None:
        """Handle an acknowledged activity after its request is answered."""
        task = asyncio.get_running_loop().create_task(work)
        self.turns.add(task)

        def done(finished: asyncio.Task[Any]) -> None:
            self.turns.discard(finished)
            if not finished.cancelled() and finished.exception() is not None:
                log.error("handling an activity failed", exc_info=finished.exception())

        task.add_done_callback(done)

    def spawn(self, work: Coroutine[Any, Any, Any]) -> None:
        """Background work (a question's proactive turn): it waits its turn on the queue, never refused."""
        task = asyncio.get_running_loop().create_task(work)
        self.tasks.add(task)

        def done(finished: asyncio.Task[Any]) -> None:
            self.tasks.discard(finished)
            if not finished.cancelled() and finished.exception() is not None:
                log.error("background work failed", exc_info=finished.exception())

        task.add_done_callback(done)

    async def drain(self, timeout_s: float) -> None:
        """Let acknowledged activities and queued answers finish (on SIGTERM), up to `timeout_s`."""
        deadline = asyncio.get_running_loop().time() + timeout_s
        if self.turns:  # a turn may still queue an answer: wait for turns first
            await asyncio.wait(list(self.turns), timeout=timeout_s)
        left = deadline - asyncio.get_running_loop().time()
        if self.tasks and left > 0:
            await asyncio.wait(list(self.tasks), timeout=left)
