"""No lost questions in Teams: every activity is claimed with a lease, as in Slack (bot/claims.py).

An activity is claimed as it arrives (key `teams:<conversation|activity id>`, Incoming.dedupe_key)
with the activity itself, so that whoever takes the claim over can handle it again. A question's
claim is held — its lease renewed — until its answer card is posted (answering.py); anything else
(a command, a button) is finished once handled. A process that dies mid-answer stops renewing:
when the lease runs out, Teams' redelivery of the activity takes the claim over and answers, or
the sweep every process runs at start and every half lease (`recover`) handles the activity again
in a proactive turn of its conversation — or, when it is older than `teams.recover_within_s`,
apologises there. A redelivery while the question is answered, or being answered under a live
lease, is left alone. When the state database does not answer in time the activity is handled
unclaimed: answering twice beats never.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from microsoft_agents.activity import Activity
from microsoft_agents.hosting.core import TurnContext

from bot import claims
from bot.teams.incoming import Incoming, read
from bot.teams.runtime import TeamsRuntime
from core.previews import size_of
from core.request import MAX_QUESTION_CHARS, preview
from core.state.bounded import StateUnavailable
from core.state.engine import preview_bytes
from core.state.events import Claim

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
    if size_of(data) > preview_bytes(runtime.state):
        return {"base_url": base_url}
    return {"activity": data, "base_url": base_url}


def take(runtime: TeamsRuntime, incoming: Incoming, activity: Activity, base_url: str | None) -> bool:
    """Claim the activity for this process; False when it is handled, or being handled elsewhere."""
    if not incoming.activity_id:
        return True
    try:
        claim = runtime.claims.take(incoming.dedupe_key, payload=payload_of(runtime, activity, base_url))
    except StateUnavailable as exc:
        log.warning("activity %s handled unclaimed: %s", incoming.activity_id, exc)
        return True
    if claim is not None and claim.taken_over:
        log.info(
            "taking over activity %s (attempt %d) from a process that stopped", claim.key, claim.attempts
        )
    return claim is not None


def claim_key(incoming: Incoming) -> str | None:
    """The claim an activity holds while it is handled (none without an activity id)."""
    return incoming.dedupe_key if incoming.activity_id else None


def finished(runtime: TeamsRuntime, key: str | None) -> None:
    if key:
        runtime.claims.finished(key)


# ---------------------------------------------------------------- recovery


def recover(
    runtime: TeamsRuntime,
    loop: asyncio.AbstractEventLoop,
    handle: Handle,
    *,
    now: dt.datetime | None = None,
) -> int:
    """Handle again, in proactive turns on `loop`, the activities whose process stopped (bot/claims.py)."""

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
        await runtime.run(finished, runtime, claim_key(incoming))


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
