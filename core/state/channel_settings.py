"""Which database a chat channel asks about (`/ask db NAME`), and which databases it may choose.

The choice is stored per (team, channel) so every web process and every restart agrees on it.
`usable_databases` reads `settings.access.rules` only to offer and check a channel's choice; the
engine enforces the same rules again at query time (it never relies on the chat adapter).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

import sqlalchemy as sa

from core.settings import AccessRule, Settings
from core.state.schema import channel_settings


def channel_database(engine: sa.Engine, team: str, channel: str) -> str | None:
    with engine.connect() as conn:
        return conn.execute(
            sa.select(channel_settings.c.database).where(
                channel_settings.c.team == team, channel_settings.c.channel == channel
            )
        ).scalar()


def set_channel_database(
    engine: sa.Engine, team: str, channel: str, database: str, user: str | None = None
) -> None:
    now = dt.datetime.now(dt.UTC)
    key = (channel_settings.c.team == team) & (channel_settings.c.channel == channel)
    with engine.begin() as conn:
        updated = conn.execute(
            channel_settings.update().where(key).values(database=database, set_by=user, updated_at=now)
        ).rowcount
        if not updated:
            try:
                with conn.begin_nested():
                    conn.execute(
                        channel_settings.insert().values(
                            team=team, channel=channel, database=database, set_by=user, updated_at=now
                        )
                    )
            except sa.exc.IntegrityError:  # set by a concurrent request: the later write wins
                conn.execute(
                    channel_settings.update()
                    .where(key)
                    .values(database=database, set_by=user, updated_at=now)
                )


def _matches(rule: AccessRule, channel: str | None, user: str | None, usergroups: frozenset[str]) -> bool:
    return (
        (not rule.channels or channel in rule.channels)
        and (not rule.users or user in rule.users)
        and (not rule.usergroups or bool(usergroups & set(rule.usergroups)))
    )


def may_use(
    settings: Settings,
    database: str,
    *,
    channel: str | None,
    user: str | None,
    usergroups: Iterable[str] = (),
) -> bool:
    """A database named by some access rule is open only to who those rules name; others are open."""
    groups = frozenset(usergroups)
    governing = [r for r in settings.access.rules if database in r.databases or "*" in r.databases]
    return not governing or any(_matches(r, channel, user, groups) for r in governing)


def usable_databases(
    settings: Settings,
    names: Iterable[str],
    *,
    channel: str | None,
    user: str | None,
    usergroups: Iterable[str] = (),
) -> list[str]:
    groups = tuple(usergroups)
    return [n for n in names if may_use(settings, n, channel=channel, user=user, usergroups=groups)]
