"""Which database a chat channel asks about (`/ask db NAME`).

The choice is stored per (team, channel) so every web process and every restart agrees on it.
Who may query what is decided in core/access.py; `may_use` and `usable_databases` remain here
only as thin wrappers for older callers.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

import sqlalchemy as sa

from core import access
from core.settings import Settings
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


def may_use(
    settings: Settings,
    database: str,
    *,
    channel: str | None,
    user: str | None,
    usergroups: Iterable[str] = (),
) -> bool:
    """Deprecated: call `core.access.may_query(settings, Principal.of(user, channel, groups), db)`."""
    return access.may_query(settings, access.Principal.of(user, channel, usergroups), database)


def usable_databases(
    settings: Settings,
    names: Iterable[str],
    *,
    channel: str | None,
    user: str | None,
    usergroups: Iterable[str] = (),
) -> list[str]:
    """Deprecated: call `core.access.usable_databases(settings, principal, names)`."""
    return access.usable_databases(settings, access.Principal.of(user, channel, usergroups), names)
