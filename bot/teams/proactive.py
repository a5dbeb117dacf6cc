"""Posting into a Teams conversation unprompted: answers that took a while, and scheduled runs.

A Teams request must be answered within seconds, and a question can take longer. So the request
is acknowledged at once and the answer goes out through the SDK's proactive path
(`continue_conversation…`), with the conversation reference the request came with — the same way
the worker posts a scheduled run with the reference stored with the schedule. The SDK's connector
client does the sending (POST {serviceUrl}/v3/conversations/{id}/activities), with a token from
MSAL — or none in anonymous mode.

A reference's `serviceUrl` is where that token goes, so the sender refuses one off the allowed Bot
Connector addresses before the SDK is even asked (it would fetch tokens first), and the SDK's
connector-client factory refuses it again (outbound.py).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from microsoft_agents.activity import Activity, ActivityTypes, AIEntity, Attachment, ConversationReference
from microsoft_agents.hosting.core import ChannelServiceAdapter, TurnContext
from microsoft_agents.hosting.core.authorization import AuthenticationConstants, ClaimsIdentity

from bot.teams import cards
from bot.teams.outbound import OutboundRefused, ServiceUrls

Callback = Callable[[TurnContext], Awaitable[Any]]


FEEDBACK_LOOP = {"feedbackLoop": {"type": "default"}, "feedbackLoopEnabled": True}


def card_activity(
    content: dict[str, Any], summary: str = "", *, ai_generated: bool = False, feedback: bool = False
) -> Activity:
    """A message carrying one Adaptive Card; `summary` is what notifications show. `ai_generated`:
    Teams labels it "AI generated" (an answer whose SQL an LLM wrote); `feedback`: Teams shows its
    own 👍 / 👎 under it and sends what was pressed as a `message/submitAction` invoke (private.py)."""
    activity = Activity(
        type=ActivityTypes.message,
        attachments=[Attachment(content_type=cards.CONTENT_TYPE, content=content)],
    )
    if summary:
        activity.summary = cards.clip(summary, 300)
    if ai_generated:  # the SDK's own way: every field set, so the connector sends them
        activity.entities = [AIEntity(id="", additional_type=["AIGeneratedContent"])]
    if feedback:
        activity.channel_data = dict(FEEDBACK_LOOP)
    return activity


def reference_json(reference: ConversationReference) -> dict[str, Any]:
    """A conversation reference as stored (a schedule's `address`)."""
    data: dict[str, Any] = reference.model_dump(mode="json", by_alias=True, exclude_none=True)
    data.pop("activityId", None)  # a scheduled post starts a new message, it replies to nothing
    return data


def reference_from(data: dict[str, Any]) -> ConversationReference:
    return ConversationReference.model_validate(data)


@dataclass
class Sender:
    """Runs a proactive turn in a conversation: `callback` gets a TurnContext to send with."""

    adapter: ChannelServiceAdapter
    app_id: str | None  # None: anonymous mode (no token on outgoing requests)
    service_urls: ServiceUrls  # where a turn may be started (teams.service_url_hosts)

    async def within(
        self,
        reference: ConversationReference,
        callback: Callback,
        identity: ClaimsIdentity | None = None,
    ) -> None:
        """Run `callback` in a turn of `reference`'s conversation; OutboundRefused when its
        serviceUrl is not an allowed Bot Connector address."""
        if not self.service_urls.admits(reference.service_url):
            raise OutboundRefused("the conversation's service URL is not an allowed Bot Connector address")
        continuation = reference.get_continuation_activity()
        if reference.activity_id:  # replies go under the message being answered
            continuation.id = reference.activity_id
        if identity is not None:  # the caller of a request we are still answering
            await self.adapter.continue_conversation_with_claims(identity, continuation, callback)
        elif self.app_id:
            await self.adapter.continue_conversation(self.app_id, continuation, callback)
        else:
            await self.adapter.continue_conversation_with_claims(
                ClaimsIdentity(), continuation, callback, audience=AuthenticationConstants.AGENTS_SDK_SCOPE
            )

    async def post(
        self,
        reference: ConversationReference,
        content: dict[str, Any],
        summary: str = "",
        identity: ClaimsIdentity | None = None,
    ) -> str:
        """Post one card as a new message of the conversation (it replies to nothing); its id."""
        sent: list[str] = []

        async def send(context: TurnContext) -> None:
            activity = card_activity(content, summary)
            activity.apply_conversation_reference(context.activity.get_conversation_reference())
            # POST …/activities, not a reply to the continuation event
            activity.reply_to_id = None  # type: ignore[assignment]  # the SDK types it str, defaults it to None
            responses = await context.adapter.send_activities(context, [activity])
            sent.append((responses[0].id if responses else "") or "")

        await self.within(reference, send, identity)
        return sent[0] if sent else ""
