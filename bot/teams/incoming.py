"""An incoming Teams activity, read once into what Askbase needs: who asks, where, and what.

Teams has three places: a personal chat with the bot, a group chat, and a team's channel, where a
post that @mentions the bot starts a thread (its conversation id ends `;messageid=<post>`) and the
replies in it share that id. With resource-specific consent (the manifest's `ChannelMessage.Read.Group`
and `ChatMessage.Read.Chat`) Teams delivers the messages of channels and group chats that do not
mention the bot too; `mentioned` tells them apart (app.py answers those only when they continue
a conversation of the same person). A channel thread is one conversation, like a Slack thread: its
follow-ups stay on the database it started with. A chat has no threads, so a chat is one running
conversation per database: `db NAME` there moves the chat on to a fresh conversation.

Ids go into state columns of 64 characters (audit, conversations, schedules); a personal chat's id
is longer than that and is never named in an access rule, so long ids are kept as a short hash.

The asker is their Entra object id (`from.aadObjectId`), a GUID, kept in its canonical form
(lower case; auth.guid) so that access rules and analyst lists compare it as a GUID. When Teams
sends none, or something that is not a GUID, the asker is the Teams user id (`29:…`) instead —
which can never equal an object id named in the settings.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any, Literal

from microsoft_agents.activity import Activity

from bot.teams.auth import guid
from core.access import Principal

Kind = Literal["personal", "groupChat", "channel"]
MAX_ID = 64
MAX_KEY = 200
THREAD = ";messageid="
CONVERSATION_PREFIX = "teams:"  # every Teams conversation key starts so (a chat's clarifications sweep)
_MENTION = re.compile(r"<at>[^<]*</at>", re.I)


def short_id(value: str, limit: int = MAX_ID) -> str:
    """`value` when it fits a state column, else a stable hash of it."""
    if len(value) <= limit:
        return value
    return "h:" + hashlib.sha256(value.encode("utf-8")).hexdigest()[: min(40, limit - 2)]


@dataclass(frozen=True)
class Place:
    """Where a message was written."""

    conversation_id: str  # the Bot Connector's id (a channel thread's ends with ;messageid=…)
    kind: Kind
    tenant: str
    team: str | None  # the team's id, in a channel
    channel: str  # the channel's id in a team, else the chat's (short_id)

    @property
    def threaded(self) -> bool:
        return self.kind == "channel" and THREAD in self.conversation_id

    @property
    def settings_team(self) -> str:
        """The `team` of channel_settings rows (`db NAME`): a Teams tenant, apart from Slack teams."""
        return short_id(f"teams:{self.tenant}")

    def conversation_key(self, database: str) -> str:
        """The conversations-table id: the thread, or the chat on this database."""
        return conversation_key(self.conversation_id, database)


def conversation_key(conversation_id: str, database: str) -> str:
    """A channel thread is one conversation; a chat is one per database (see the module doc)."""
    p = CONVERSATION_PREFIX
    key = f"{p}{conversation_id}" if THREAD in conversation_id else f"{p}{conversation_id}#{database}"
    return key if len(key) <= MAX_KEY else p + short_id(key, 64)


@dataclass(frozen=True)
class Incoming:
    """A message (typed, or a card's button) from a person."""

    activity_id: str
    place: Place
    user: str  # the Entra ID object id (the Teams user id when Teams gives none)
    user_name: str
    text: str  # without the bot's @mention
    value: dict[str, Any] | None  # a card's Action.Submit data
    reply_to: str | None  # the activity a card button sits on
    timezone: str | None  # the person's Teams client timezone, when it says
    mentioned: bool = True  # the message @mentions the bot (always so without RSC, in channels and chats)

    @property
    def principal(self) -> Principal:
        return Principal.teams(user=self.user, channel=self.place.channel, team=self.place.team)

    @property
    def dedupe_key(self) -> str:
        """The processed_events id: an activity id is unique within its conversation."""
        return "teams:" + short_id(f"{self.place.conversation_id}|{self.activity_id}", 190)


def _get(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def place_of(activity: Activity) -> Place:
    conversation = activity.conversation
    conversation_id = (conversation.id if conversation else "") or ""
    data = activity.channel_data if isinstance(activity.channel_data, dict) else {}
    raw_kind = (getattr(conversation, "conversation_type", None) or "").strip()
    team = _get(data, "team", "id")
    channel = _get(data, "channel", "id")
    kind: Kind
    if raw_kind == "channel" or (raw_kind == "" and channel):
        kind = "channel"
    elif raw_kind == "groupChat" or (raw_kind == "" and getattr(conversation, "is_group", False)):
        kind = "groupChat"
    else:
        kind = "personal"
    tenant = getattr(conversation, "tenant_id", None) or _get(data, "tenant", "id") or ""
    where = channel if kind == "channel" and channel else conversation_id.split(THREAD)[0]
    return Place(
        conversation_id=conversation_id,
        kind=kind,
        tenant=str(tenant),
        team=str(team) if team else None,
        channel=short_id(str(where)),
    )


def strip_mentions(activity: Activity) -> str:
    """The text without the bot's @mention (the SDK removes it) or any leftover <at> tags."""
    text = activity.remove_recipient_mention() if activity.text else ""
    return " ".join(_MENTION.sub(" ", text or "").split())


def timezone_of(activity: Activity) -> str | None:
    """Teams sends the client's IANA timezone in a `clientInfo` entity (and in localTimezone)."""
    if activity.local_timezone:
        return str(activity.local_timezone)
    for entity in activity.entities or []:
        data = entity.model_dump(mode="json", by_alias=True) if hasattr(entity, "model_dump") else entity
        if isinstance(data, dict) and data.get("type") == "clientInfo" and data.get("timezone"):
            return str(data["timezone"])
    return None


def user_of(activity: Activity) -> str:
    """The Entra object id of the sender (canonical), else their Teams user id (module doc)."""
    sender = activity.from_property
    object_id = guid(getattr(sender, "aad_object_id", None))
    return object_id or ((sender.id if sender else "") or "").strip()


def mentions_bot(activity: Activity) -> bool:
    """Whether the message @mentions the bot (with resource-specific consent Teams also delivers
    the messages of a channel or group chat that do not)."""
    bot_id = activity.recipient.id if activity.recipient else None
    for entity in activity.entities or []:
        data = entity.model_dump(mode="json", by_alias=True) if hasattr(entity, "model_dump") else entity
        if isinstance(data, dict) and data.get("type") == "mention":
            mentioned = data.get("mentioned") or {}
            if isinstance(mentioned, dict) and bot_id and mentioned.get("id") == bot_id:
                return True
    return False


def read(activity: Activity) -> Incoming:
    sender = activity.from_property
    user = user_of(activity)
    value = activity.value if isinstance(activity.value, dict) else None
    return Incoming(
        activity_id=activity.id or "",
        place=place_of(activity),
        user=short_id(user),
        user_name=(sender.name if sender and sender.name else "") or "",
        text=strip_mentions(activity),
        value=value,
        reply_to=activity.reply_to_id,
        timezone=timezone_of(activity),
        mentioned=mentions_bot(activity),
    )
