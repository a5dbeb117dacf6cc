"""Who may verify an answer: the analysts named in the settings (`verified.analysts`)."""

from __future__ import annotations

from core.access import Principal, in_usergroups
from core.settings import Settings


def configured(settings: Settings) -> bool:
    """Are there analysts at all? Without any, no Verify button is offered."""
    a = settings.verified.analysts
    return bool(a.users or a.usergroups or a.teams_teams)


def needs_groups(settings: Settings) -> bool:
    """Must the Slack adapter resolve the person's user groups to decide?"""
    return bool(settings.verified.analysts.usergroups)


def groups_for(settings: Settings, who: Principal) -> list[str]:
    """The analyst groups of `who`'s chat: Slack user groups, or Teams teams."""
    a = settings.verified.analysts
    return a.teams_teams if who.platform == "teams" else a.usergroups


def is_analyst(settings: Settings, who: Principal) -> bool:
    """A listed user, or a member of a listed group of their chat (Slack user groups by id or
    handle; Teams teams by id), as the adapter resolved their membership into `usergroups`.
    The operator at the CLI is one too: they hold the configuration already."""
    if who.operator:
        return True
    if who.user and who.user in settings.verified.analysts.users:
        return True
    if who.platform == "slack":  # ids match ids, handles handles (core/groups.py)
        return in_usergroups(settings.verified.analysts.usergroups, who)
    return bool({g.strip() for g in groups_for(settings, who)} & set(who.usergroups))  # team ids, exactly
