"""Who belongs to which Teams team, asked of the Bot Connector and kept for a few minutes.

`GET {serviceUrl}/v3/conversations/{team id}/members/{user}` answers with the member, or 404 when
they are not one: the SDK's connector client on the turn asks it, with the bot's token. That
client was made for the turn's activity, whose `serviceUrl` its token vouched for (auth.py), and
only for an allowed Bot Connector address (outbound.py); `member` checks the address once more
before it asks, since a "member" answer makes someone an analyst. The Slack side asks Slack for
user groups the same way (bot/slack/usergroups.py); both only ever say who is in a group the settings
name (`verified.analysts`).

Identifiers are compared as what they are: the person is an Entra object id, a GUID (auth.guid:
any case, the canonical form, nothing else); a team id is used as the settings spell it, and one
that could change the lookup's path (`/`, `?`, `#`, `%`, `\\`, spaces) is never asked about.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import aiohttp
from microsoft_agents.hosting.core import ConnectorClientBase, TurnContext

from bot.expiring import Expiring
from bot.teams.auth import guid
from bot.teams.outbound import ServiceUrls

log = logging.getLogger("askbase.teams")

MEMBERSHIP_TTL_S = 300.0  # how long an answer is kept (as Slack's user groups)
PATH_CHARACTERS = frozenset("/?#%\\ \t\r\n")


def team_id_usable(team: str) -> bool:
    """A team id that stays one path segment of the lookup."""
    return bool(team) and not any(c in PATH_CHARACTERS for c in team) and ".." not in team


@dataclass
class TeamMembers:
    """Who belongs to which team, as the Bot Connector said, for a few minutes."""

    ttl_s: float = MEMBERSHIP_TTL_S
    service_urls: ServiceUrls | None = None  # where lookups may go (None: the factory's check only)
    _known: Expiring[tuple[str, str], bool] = field(default_factory=Expiring)

    async def member(self, context: TurnContext, team: str, user: str) -> bool:
        """Is `user` (an Entra ID object id) a member of `team`? Unknown counts as no."""
        user_id = guid(user)
        if user_id is None or not team_id_usable(team):
            log.info("no membership lookup for a user or team id of the wrong shape")
            return False
        known = self._known.get((team, user_id))
        if known is not None:
            return known[0]
        connector = context.services.get(ConnectorClientBase)  # type: ignore[type-abstract]  # the SDK keys it so
        if connector is None:
            return False
        address = getattr(connector, "base_uri", None)
        if self.service_urls is not None and not self.service_urls.admits(address):
            log.warning("no membership lookup: the turn's connector is not an allowed Bot Connector address")
            return False
        try:
            await connector.conversations.get_conversation_member(team, user_id)
        except aiohttp.ClientResponseError as exc:
            if exc.status != 404:  # Teams had a bad moment: not an analyst now, ask again next time
                log.warning("could not look %s up in team %s: HTTP %s", user_id, team, exc.status)
                return False
            self._known.put((team, user_id), False, self.ttl_s)
            return False
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            log.warning("could not look %s up in team %s: %s", user_id, team, exc)
            return False
        self._known.put((team, user_id), True, self.ttl_s)
        return True
