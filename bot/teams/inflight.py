"""No lost questions in Teams: every activity is claimed with a lease, as in Slack (core/conversation/claims.py).

An activity is claimed as it arrives (key `teams:<conversation|activity id>`, Incoming.dedupe_key)
with the activity itself, so that whoever takes the claim over can handle it again. A question's
claim is held — its lease renewed — until its answer card is posted (answering.py); anything else
(a command, a button) is finished once handled. A process that dies mid-answer stops renewing:
when the lease runs out, Teams' redelivery of the activity takes the claim over and answers, or
the sweep every process runs at start and every half lease (`recover`) handles the activity again
in a proactive turn of its conversation — or, when it is older than `teams.recover_within_s`,
apologises there. A redelivery while the question is answered, or being answered under a live
lease, is left alone.

The claim is made as the activity arrives, on the claim pool (runtime.py), and the request waits
for it at most `teams.ack_claim_s` (0.05 s): Teams needs its 202 within seconds, and a burst, or a
state database that is locked or slow, must not hold it up (`Arrival`). A claim made in time means
a 202 that survives a crash (the sweep finishes it). One that is late is waited for by the turn,
after the 202, up to `teams.claim_wait_s`; when the state database still has not answered, the
activity is handled unclaimed — answering twice beats never — and a claim landing later still is
marked answered at once, so that no sweep answers it again. What is lost then: an activity whose
process dies between its 202 and a state database that answers again (Teams does not resend an
acknowledged activity). Answering 503 instead would have Teams resend it, but only a few times
within seconds, and a locked database would lose every question instead of a crashed process's.
"""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import contextlib
import datetime as dt
import logging
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from microsoft_agents.activity import Activity
from microsoft_agents.hosting.core import TurnContext

from bot.teams.incoming import Incoming, read
from bot.teams.runtime import TeamsRuntime
from core.conversation import claims
from core.conversation.claims import Claim, StateUnavailable
from core.previews import size_of
from core.request import MAX_QUESTION_CHARS, preview

log = logging.getLogger("askbase.teams")

PREFIXES = ("teams:",)  # Incoming.dedupe_key
INTERRUPTED = (
    "⚠️ Sorry — I was restarted while answering this and could not finish it in time. Please ask it again."
)
OVERSIZE = "askbaseOversize"

# handles an activity this process holds the claim of, with the public address download links use
Handle = Callable[[TeamsRuntime, TurnContext, Incoming, str | None], Awaitable[None]]


def payload_of(runtime: TeamsRuntime, activity: Activity, base_url: str | None) -> dict[str, Any]:
    """What is stored with the claim to handle the activity again after a crash: the activity
    (a question too long to take only as a preview, marked so it is never answered), and where
    download links point. An activity larger than the state keeps of anything is not kept."""
    data = activity.model_dump(mode="json", by_alias=True, exclude_none=True)
    text = data.get("text") or ""
    if len(text) > MAX_QUESTION_CHARS:
        data.update(text=preview(text), **{OVERSIZE: True})
    if size_of(data) > runtime.claims.payload_limit:
        return {"base_url": base_url}
    return {"activity": data, "base_url": base_url}


@dataclass(frozen=True)
class Taken:
    """What became of an activity's claim: handle it or leave it alone, and whether this process
    holds its claim (then it is finished once the activity is handled)."""

    handle: bool
    claimed: bool


LEFT_ALONE = Taken(handle=False, claimed=False)  # answered, or being answered under a live lease
UNCLAIMED = Taken(handle=True, claimed=False)  # no id to claim, or the state database did not answer
CLAIMED = Taken(handle=True, claimed=True)

# The claim the server made as it acknowledged the message activity of this turn (server.py);
# None: the turn was not acknowledged that way, its handler claims for itself (`take`).
ACKED: ContextVar[Taken | None] = ContextVar("askbase_teams_acked", default=None)


def _taken(runtime: TeamsRuntime, claim: Claim | None) -> Taken:
    if claim is None:
        return LEFT_ALONE
    runtime.claims.hold(claim.key)
    if claim.taken_over:
        log.info(
            "taking over activity %s (attempt %d) from a process that stopped", claim.key, claim.attempts
        )
    return CLAIMED


def take(runtime: TeamsRuntime, incoming: Incoming, activity: Activity, base_url: str | None) -> Taken:
    """Claim the activity for this process, waiting at most `teams.claim_wait_s` (a turn's own
    claim, off the request: a card press delivered as an invoke)."""
    if not incoming.activity_id:
        return UNCLAIMED
    try:
        claim = runtime.claims.take(incoming.dedupe_key, payload=payload_of(runtime, activity, base_url))
    except StateUnavailable as exc:
        log.warning("activity %s handled unclaimed: %s", incoming.activity_id, exc)
        return UNCLAIMED
    return _taken(runtime, claim)


class Arrival:
    """A message activity's claim as it is acknowledged (see the module doc): made on the claim
    pool at once, waited for briefly by the request (`wait`), settled by the turn (`settle`)."""

    def __init__(
        self, runtime: TeamsRuntime, key: str | None, future: cf.Future[Claim | None] | None
    ) -> None:
        self.runtime = runtime
        self.key = key
        self.taken: Taken | None = None if future is not None else UNCLAIMED
        self._future = future
        self._began = asyncio.get_running_loop().time()
        self._waiting: asyncio.Future[Claim | None] | None = None
        if future is not None:
            self._waiting = asyncio.wrap_future(future)
            self._waiting.add_done_callback(_retrieved)

    @classmethod
    def of(
        cls, runtime: TeamsRuntime, incoming: Incoming, activity: Activity, base_url: str | None
    ) -> Arrival:
        """Start claiming `activity` (nothing to claim without an id: handled unclaimed)."""
        if not incoming.activity_id:
            return cls(runtime, None, None)
        future = runtime.claim_pool.submit(
            runtime.claims.claim_now, incoming.dedupe_key, payload=payload_of(runtime, activity, base_url)
        )
        return cls(runtime, incoming.dedupe_key, future)

    async def wait(self, seconds: float) -> Taken | None:
        """The claim's outcome, or None when it is not made within `seconds`."""
        if self.taken is not None or self._waiting is None:
            return self.taken
        try:
            claim = await asyncio.wait_for(asyncio.shield(self._waiting), max(0.0, seconds))
        except TimeoutError:
            return None
        except Exception as exc:  # locked past its busy timeout, read-only, down
            log.warning(
                "activity %s handled unclaimed: the state database failed: %s", self.key, type(exc).__name__
            )
            self.taken = UNCLAIMED
            return self.taken
        self.taken = _taken(self.runtime, claim)
        return self.taken

    async def settle(self) -> Taken:
        """The claim's outcome, waiting up to `teams.claim_wait_s` from arrival; then unclaimed."""
        wait_s = self.runtime.settings.teams.claim_wait_s
        elapsed = asyncio.get_running_loop().time() - self._began
        taken = await self.wait(wait_s - elapsed)
        if taken is None:
            taken = self.taken = self._give_up(wait_s)
        return taken

    def _give_up(self, wait_s: float) -> Taken:
        future = self._future
        assert future is not None
        if future.done() and not future.cancelled() and future.exception() is None:
            return _taken(self.runtime, future.result())  # it landed just now
        log.warning(
            "activity %s handled unclaimed: the state database did not answer within %g s", self.key, wait_s
        )
        if not future.cancel():  # under way: if it lands, it answers nothing more
            keeper, key, pool = self.runtime.claims, self.key or "", self.runtime.claim_pool

            def late(done: cf.Future[Claim | None]) -> None:
                if done.cancelled() or done.exception() is not None or done.result() is None:
                    return
                with contextlib.suppress(RuntimeError):  # shutting down: the sweep sees to it
                    pool.submit(keeper.finished, key)

            future.add_done_callback(late)
        return UNCLAIMED


def _retrieved(waiting: asyncio.Future[Any]) -> None:
    """A claim nobody waits for any more may still fail: its error is logged where it is met."""
    if not waiting.cancelled():
        waiting.exception()


def let_go(runtime: TeamsRuntime, key: str) -> bool:
    """After a turn failed (say MSAL could not give the outbound token): when nothing began
    handling the activity — its claim is neither answered nor showing progress — stop renewing
    the claim, so that it lapses and is taken over as after a crash (recovery, below). True when
    it was let go. A claim a question holds is left to that question, which finishes it."""
    if not runtime.claims.untouched(key):
        return False
    runtime.claims.release(key)
    return True


def claim_key(incoming: Incoming) -> str | None:
    """The claim an activity holds while it is handled (none without an activity id)."""
    return incoming.dedupe_key if incoming.activity_id else None


def finished(runtime: TeamsRuntime, key: str | None) -> None:
    if key:
        runtime.claims.finished(key)


# A turn's handler, told whether this process holds the activity's claim; True when a question
# now holds the claim until its answer is out (it finishes it then).
Work = Callable[[bool], Awaitable[bool]]


async def in_claim(
    runtime: TeamsRuntime,
    incoming: Incoming,
    activity: Activity,
    base_url: str | None,
    work: Work,
    *,
    acked: Taken | None = None,
) -> None:
    """The one wrapper every handled activity goes through (app.py), as Bolt's middleware is for
    Slack: its claim — made as it was acknowledged (`acked`, server.py), else here — then the
    handler, when the activity is this process's to handle, then the claim finished, unless a
    question holds it until its answer is out. A redelivery of an activity handled, or being
    handled under a live lease, is left alone."""
    taken = acked if acked is not None else await runtime.book(take, runtime, incoming, activity, base_url)
    if not taken.handle:
        log.info("activity %s is handled, or being handled; left alone", incoming.activity_id)
        return
    held = False
    try:
        held = await work(taken.claimed)
    finally:
        if taken.claimed and not held:
            await runtime.book(finished, runtime, claim_key(incoming))


# ---------------------------------------------------------------- recovery


def recover(
    runtime: TeamsRuntime,
    loop: asyncio.AbstractEventLoop,
    handle: Handle,
    *,
    now: dt.datetime | None = None,
) -> int:
    """Handle again, in proactive turns on `loop`, the activities whose process stopped (core/conversation/claims.py)."""

    def resume(claim: Claim, apologise: bool) -> bool:
        data = (claim.payload or {}).get("activity")
        if not data or data.get(OVERSIZE):
            log.warning("activity %s cannot be handled again (nothing to handle); dropped", claim.key)
            return False
        activity = Activity.model_validate(data)
        base = (claim.payload or {}).get("base_url")
        work = _apologise(runtime, activity) if apologise else _again(runtime, activity, base, handle)
        asyncio.run_coroutine_threadsafe(work, loop)
        return not apologise

    return claims.recover(runtime.claims, PREFIXES, runtime.settings.teams.recover_within_s, resume, now=now)


async def _again(runtime: TeamsRuntime, activity: Activity, base_url: str | None, handle: Handle) -> None:
    """The activity handled once more, in a proactive turn of its conversation (replies under it)."""
    incoming = read(activity)

    async def work(context: TurnContext) -> None:
        await handle(runtime, context, incoming, base_url)

    try:
        await runtime.sender.within(activity.get_conversation_reference(), work)
    except Exception:
        log.exception("could not handle activity %s again", incoming.dedupe_key)
        await runtime.book(finished, runtime, claim_key(incoming))


async def _apologise(runtime: TeamsRuntime, activity: Activity) -> None:
    async def work(context: TurnContext) -> None:
        await context.send_activity(Activity(type="message", text=INTERRUPTED))

    try:
        await runtime.sender.within(activity.get_conversation_reference(), work)
    except Exception:
        log.exception("could not apologise in %s", activity.conversation.id if activity.conversation else "?")


def recovery(runtime: TeamsRuntime, loop: asyncio.AbstractEventLoop, handle: Handle) -> claims.Recovery:
    """The sweep at start and then every half lease, on a daemon thread."""
    return claims.Recovery(
        lambda: recover(runtime, loop, handle), runtime.claims.lease_s, name="askbase-teams-recovery"
    )
