"""Who is asking, as the access rules see it: Slack user, channel and the user's user groups.

Rules may name Slack user groups (`usergroups: [S0123ABCD, "@data-team"]`, ids or handles); the
engine never calls Slack, so the Slack side resolves the asker's groups here, each as its id and
as its `@handle` — two kinds the engine never confuses (core/groups.py), so a group whose handle
spells another group's id is not that group. One
`usergroups.list?include_users=true` call answers for the whole workspace; the map is kept for
`ttl_s` (a change in Slack takes effect within that time, and a busy channel costs one call every
few minutes). A missing `usergroups:read` scope or any API failure gives no groups — fewer
rights, never more — and is logged.

When a database is told who asks (row-level security, core/identity.py), the asker's email is
looked up too (`users.info`, scope `users:read.email`), cached per user for `ttl_s`; without it
the database is told no email, which a policy keyed on it answers with no rows.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Callable

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.expiring import Expiring
from core.access import Principal, needs_emails, needs_usergroups
from core.groups import membership
from core.settings import Settings
from core.verified.analysts import needs_groups

log = logging.getLogger(__name__)

TTL_S = 300.0
FAILURE_TTL_S = 30.0  # after a failure, try again this soon


class UsergroupDirectory:
    """user id → the user groups they belong to (`S…` ids and `@handles`), per team, cached."""

    def __init__(self, ttl_s: float = TTL_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s = ttl_s
        self._teams: Expiring[str, dict[str, frozenset[str]]] = Expiring(clock)
        self._emails: Expiring[tuple[str, str], str | None] = Expiring(clock)

    def email_of(self, client: WebClient, team: str, user: str | None) -> str | None:
        if not user:
            return None
        cached = self._emails.get((team, user))
        if cached is not None:
            return cached[0]
        try:
            profile = (client.users_info(user=user).get("user") or {}).get("profile") or {}
            email, ok = profile.get("email") or None, True
        except Exception as exc:  # SlackApiError, or the network after the client's own retries
            error = exc.response.get("error") if isinstance(exc, SlackApiError) else type(exc).__name__
            log.warning("could not read the email of %s: %s (needs the users:read.email scope)", user, error)
            email, ok = None, False
        return self._emails.put((team, user), email, self.ttl_s if ok else FAILURE_TTL_S)

    def groups_of(self, client: WebClient, team: str, user: str | None) -> frozenset[str]:
        if not user:
            return frozenset()
        return self._members(client, team).get(user, frozenset())

    def clear(self) -> None:
        self._teams.clear()

    def _members(self, client: WebClient, team: str) -> dict[str, frozenset[str]]:
        cached = self._teams.get(team)
        if cached is not None:
            return cached[0]
        members, ok = _fetch(client)
        return self._teams.put(team, members, self.ttl_s if ok else FAILURE_TTL_S)


def _fetch(client: WebClient) -> tuple[dict[str, frozenset[str]], bool]:
    try:
        response = client.usergroups_list(include_users=True, include_disabled=False)
    except Exception as exc:  # SlackApiError, or the network after the client's own retries
        error = exc.response.get("error") if isinstance(exc, SlackApiError) else type(exc).__name__
        hint = " (add the usergroups:read scope)" if error == "missing_scope" else ""
        log.warning("could not read Slack user groups: %s%s; rules naming groups match nobody", error, hint)
        return {}, False
    members: dict[str, set[str]] = defaultdict(set)
    for group in response.get("usergroups") or []:
        keys = membership(group.get("id"), group.get("handle"))
        for user in group.get("users") or []:
            members[user] |= keys
    return {user: frozenset(keys) for user, keys in members.items()}, True


def slack_principal(
    settings: Settings,
    client: WebClient,
    directory: UsergroupDirectory,
    *,
    team: str,
    channel: str | None,
    user: str | None,
) -> Principal:
    """The Principal of a Slack user in a channel; user groups are looked up only when access
    rules or the analyst list name them, the email only when a database is told who asks."""
    wants_groups = needs_usergroups(settings) or needs_groups(settings)
    groups = directory.groups_of(client, team, user) if wants_groups else frozenset()
    email = directory.email_of(client, team, user) if needs_emails(settings) else None
    return Principal.of(user=user, channel=channel, usergroups=groups, email=email)
