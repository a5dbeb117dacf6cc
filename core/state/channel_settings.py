"""A chat channel's settings: which database it asks about (`/ask db NAME`), and whether its
results are private — answered only to the person who asked (`/ask private on`, docs/slack.md).

They are stored per (team, channel) so every web process and every restart agrees on them.
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
    _set(engine, team, channel, {"database": database}, user)


def private_results(engine: sa.Engine, team: str, channel: str) -> bool:
    """Whether answers in this channel go only to the person who asked (`/ask private on`)."""
    with engine.connect() as conn:
        return bool(
            conn.execute(
                sa.select(channel_settings.c.private_results).where(
                    channel_settings.c.team == team, channel_settings.c.channel == channel
                )
            ).scalar()
        )


def set_private_results(engine: sa.Engine, team: str, channel: str, private: bool, user: str | None) -> None:
    _set(engine, team, channel, {"private_results": private}, user)


def _set(engine: sa.Engine, team: str, channel: str, values: dict[str, object], user: str | None) -> None:
    """Change some of a channel's settings (creating its row: the others keep their defaults)."""
    now = dt.datetime.now(dt.UTC)
    values = {**values, "set_by": user, "updated_at": now}
    key = (channel_settings.c.team == team) & (channel_settings.c.channel == channel)
    with engine.begin() as conn:
        updated = conn.execute(channel_settings.update().where(key).values(**values)).rowcount
        if not updated:
            try:
                with conn.begin_nested():
                    conn.execute(channel_settings.insert().values(team=team, channel=channel, **values))
            except sa.exc.IntegrityError:  # set by a concurrent request: the later write wins
                conn.execute(channel_settings.update().where(key).values(**values))


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
