"""Who belongs to which Teams team, asked of the Bot Connector and kept for a few minutes.

`GET {serviceUrl}/v3/conversations/{team id}/members/{user}` answers with the member, or 404 when
they are not one: the SDK's connector client on the turn asks it, with the bot's token. The Slack
side asks Slack for user groups the same way (bot/usergroups.py); both only ever say who is in a
group the settings name (`verified.analysts`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import aiohttp
from microsoft_agents.hosting.core import ConnectorClientBase, TurnContext

from bot.expiring import Expiring

log = logging.getLogger("askbase.teams")

MEMBERSHIP_TTL_S = 300.0  # how long an answer is kept (as Slack's user groups)


@dataclass
class TeamMembers:
    """Who belongs to which team, as the Bot Connector said, for a few minutes."""

    ttl_s: float = MEMBERSHIP_TTL_S
    _known: Expiring[tuple[str, str], bool] = field(default_factory=Expiring)

    async def member(self, context: TurnContext, team: str, user: str) -> bool:
        """Is `user` (an Entra ID object id) a member of `team`? Unknown counts as no."""
        known = self._known.get((team, user))
        if known is not None:
            return known[0]
        connector = context.services.get(ConnectorClientBase)  # type: ignore[type-abstract]  # the SDK keys it so
        if connector is None:
            return False
        try:
            await connector.conversations.get_conversation_member(team, user)
        except aiohttp.ClientResponseError as exc:
            if exc.status != 404:  # Teams had a bad moment: not an analyst now, ask again next time
                log.warning("could not look %s up in team %s: HTTP %s", user, team, exc.status)
                return False
            self._known.put((team, user), False, self.ttl_s)
            return False
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            log.warning("could not look %s up in team %s: %s", user, team, exc)
            return False
        self._known.put((team, user), True, self.ttl_s)
        return True
