"""Who may verify an answer: the analysts named in the settings (`verified.analysts`)."""

from __future__ import annotations

from core.access import Principal
from core.settings import Settings


def _key(group: str) -> str:
    return group.strip().lstrip("@").lower()


def configured(settings: Settings) -> bool:
    """Are there analysts at all? Without any, no Verify button is offered."""
    a = settings.verified.analysts
    return bool(a.users or a.usergroups)


def needs_groups(settings: Settings) -> bool:
    """Must the adapter resolve the person's groups to decide?"""
    return bool(settings.verified.analysts.usergroups)


def is_analyst(settings: Settings, who: Principal) -> bool:
    """A listed user, or a member of a listed group (ids or handles, as the adapter resolved them).
    The operator at the CLI is one too: they hold the configuration already."""
    if who.operator:
        return True
    a = settings.verified.analysts
    if who.user and who.user in a.users:
        return True
    return bool({_key(g) for g in a.usergroups} & {_key(g) for g in who.usergroups})
