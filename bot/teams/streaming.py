"""Teams' streaming updates in a personal chat, while a question is answered.

Teams streams bot messages in one-on-one chats only: *informative updates* — a progress bar at
the bottom of the chat naming what the bot is doing ("Writing SQL…") — then the final message,
which closes the stream. On the wire (the Microsoft 365 Agents SDK's `StreamingResponse` sends
the same): each update is a `typing` activity with a `streaminfo` entity (`streamType:
informative`, `streamSequence` 1, 2, …); the first one's id, as Teams answers it, is the
stream's id, which every later update and the final message (`streamType: final`) carry.

Askbase's final message is the answer card, so nothing is streamed as text: the steps a person
sees (bot/progress.py) come as informative updates, reported by the engine on a worker thread
(`show`) and sent, in order, on the event loop. Group chats and channels get "typing…" instead.
A refused update (an older client, a tenant policy) ends the updates; the answer still goes out.
"""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import logging

from microsoft_agents.activity import Activity, ActivityTypes, StreamInfo
from microsoft_agents.hosting.core import TurnContext

from bot.progress import StepTracker

log = logging.getLogger("askbase.teams")


class InformativeUpdates:
    """The steps of one answer as Teams informative updates; `final` marks the answer's activity
    as the stream's end."""

    def __init__(self, context: TurnContext, loop: asyncio.AbstractEventLoop) -> None:
        self.context = context
        self.loop = loop
        self.steps = StepTracker()
        self.sequence = 0
        self.stream_id: str | None = None
        self.failed = False
        self._lock = asyncio.Lock()
        self._sent: list[cf.Future[None]] = []

    def show(self, stage: str) -> None:
        """The engine reached `stage` (called on a worker thread): say the step, if it is new."""
        step = self.steps.advance(stage)
        if step is not None and not self.failed:
            self._sent.append(asyncio.run_coroutine_threadsafe(self.send(f"{step.doing}…"), self.loop))

    async def send(self, text: str) -> None:
        async with self._lock:  # updates go out in order, each knowing the stream's id
            if self.failed:
                return
            self.sequence += 1
            info = StreamInfo(stream_type="informative", stream_sequence=self.sequence)
            if self.stream_id:
                info.stream_id = self.stream_id
            try:
                response = await self.context.send_activity(
                    Activity(type=ActivityTypes.typing, text=text, entities=[info])
                )
            except Exception as exc:  # the answer matters, not its progress bar
                log.info("informative update refused: %s", exc)
                self.failed = True
                return
            if not self.stream_id and response is not None and response.id:
                self.stream_id = response.id

    async def settle(self) -> None:
        """Wait for the updates under way (the final message must come after them)."""
        for sent in self._sent:
            try:
                await asyncio.wrap_future(sent)
            except Exception:  # noted by `send`
                log.debug("an informative update failed", exc_info=True)

    def final(self, activity: Activity) -> Activity:
        """`activity` (the answer) as the stream's final message, when a stream was started."""
        if self.stream_id and not self.failed:
            info = StreamInfo(stream_type="final", stream_id=self.stream_id)
            if isinstance(activity.channel_data, dict) and activity.channel_data.get("feedbackLoop"):
                info.feedback_loop_enabled = True  # the entity's default (false) must not turn it off
                info.feedback_loop = dict(activity.channel_data["feedbackLoop"])
            activity.entities = [*(activity.entities or []), info]
        return activity
