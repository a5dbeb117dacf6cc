"""Slack user groups as the settings name them and as people belong to them: an id, or a handle.

Slack gives every user group an id (`S0123ABCD`: upper case, fixed, unique in the workspace) and a
handle (`data-team`, what people type after `@`; Slack keeps handles lower case, and any member
may make a group and pick its handle). They are two namespaces, and a handle may spell another
group's id. Compared in one lower-cased namespace, a member of a self-made group with the handle
`s0analysts` passed for a member of the group whose id is `S0ANALYSTS` — an analyst, admitted to
the databases restricted to that group (issue 31). So a name is typed once, when it is read, and
the two kinds never meet:

- `@data-team` is a handle, compared without case (as Slack treats handles);
- `S0123ABCD` — `S`, then upper-case letters and digits — is an id, compared exactly;
- any other word is a handle too, as configurations have always written them (`data-team`: in
  YAML a value cannot start with an unquoted `@`, so the bare form stays the convenient one); but
  a word that could be an id typed in lower case, or the id of a person or a channel
  (`s0123abcd`, `U0123ABCD`: letters and digits with a digit, starting like a Slack id) is
  refused when the settings load, because which it means cannot be known and either guess is a
  hole or a lockout (the message says how to write each: `S0123ABCD`, or `"@s0123abcd"`).

Both kinds travel as plain strings in one set — `S0123ABCD` and `@data-team` — in the settings'
lists (after validation) and in `Principal.usergroups`: the `@` keeps them apart, so the
comparison is string equality. No Slack import: the engine reads these, the Slack adapter
(bot/slack/usergroups.py) only reports memberships through `membership`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable

log = logging.getLogger(__name__)

HANDLE = "@"
GROUP_ID = re.compile(r"S[A-Z0-9]+")  # a Slack user group id, as Slack writes it
# Any Slack id as Slack writes it (users U/W, channels C/G/D, teams T, enterprises E, groups S)
SLACK_ID = re.compile(r"[A-Z][A-Z0-9]+")
# A bare word that could be an id of one of those, typed in any case: letters and digits only,
# with a digit, starting with one of their letters. Read as neither a handle nor an id: refused.
ID_LIKE = re.compile(r"[uwcgdtes](?=[a-z0-9]*[0-9])[a-z0-9]+", re.IGNORECASE)
# Teams ids (Entra object ids, 19:…@thread ids) that `identity.roles` may name beside Slack's
TEAMS_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|.*:.*", re.IGNORECASE)


def configured(entry: str) -> str:
    """The group a settings entry names, as `S…` (an id) or `@handle`; ValueError when it cannot
    be told which (an id typed in lower case, or another kind of id) or names nothing."""
    name = entry.strip()
    if name.startswith(HANDLE):
        handle = name[len(HANDLE) :].strip().lower()
        if not handle or handle.startswith(HANDLE):
            raise ValueError(f"user group {entry!r}: a handle is one @ and a name, e.g. @data-team")
        return HANDLE + handle
    if GROUP_ID.fullmatch(name):
        return name
    if not name:
        raise ValueError("an empty user group name")
    if ID_LIKE.fullmatch(name):
        raise ValueError(
            f"user group {entry!r} could be an id or a handle: write a user group's id as Slack "
            f'shows it (S0123ABCD, upper case), or "@{name.lower()}" for the group with that handle'
        )
    return HANDLE + name.lower()


def configured_all(entries: Iterable[str]) -> list[str]:
    """Every entry of a settings list, typed (see `configured`); duplicates dropped, order kept."""
    return list(dict.fromkeys(configured(e) for e in entries))


def role_group(key: str) -> str | None:
    """The group an `identity.roles` key names, or None when it names a person or a channel.

    Keys there are Slack user and channel ids, Teams ids, or groups: `S…` ids and `@handles`, and
    for older configurations bare handles. A key shaped like any other kind of id is never read as
    a handle (a group's handle must not pick up a person's role); an ambiguous one raises ValueError.
    """
    name = key.strip()
    if GROUP_ID.fullmatch(name) or name.startswith(HANDLE):
        return configured(name)
    if SLACK_ID.fullmatch(name) or TEAMS_ID.fullmatch(name):
        return None
    return configured(name)


def membership(group_id: str | None, handle: str | None) -> frozenset[str]:
    """A group a person belongs to, as Slack lists it (`usergroups.list`): its id and its handle,
    each in its own form. An id that is not shaped like a group id is left out (it could otherwise
    be read as a handle)."""
    held = set()
    if group_id and GROUP_ID.fullmatch(group_id):
        held.add(group_id)
    elif group_id:
        log.warning("ignored a user group id of an unknown shape: %r", group_id)
    if handle and handle.strip().lstrip(HANDLE):
        held.add(HANDLE + handle.strip().lstrip(HANDLE).lower())
    return frozenset(held)


def held(name: str) -> str:
    """A group given to `Principal.of` by a caller that did not type it (tests, older adapters):
    an `S…` id stays an id, anything else is a handle. Never raises: it grants nothing by itself,
    it is only compared with typed settings."""
    name = name.strip()
    if GROUP_ID.fullmatch(name):
        return name
    return HANDLE + name.lstrip(HANDLE).lower()
