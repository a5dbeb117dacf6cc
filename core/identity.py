"""Who is asking, told to the database, so that its own row-level security decides what they see.

Askbase connects with one least-privileged account, so without this every person sees what that
account sees. With `databases.<name>.identity` set, every query run for a person — a question, a
CSV export, a scheduled run — first does, inside its read-only transaction:

- `SET LOCAL ROLE <role>` when `roles` maps the person (Slack/Teams user id), one of their user
  groups, or the channel to a database role (first match in that order, else `default_role`);
  the login account must be a member of those roles (`GRANT sales_eu TO askbase_ro`);
- `set_config('askbase.user', …, true)`, and likewise `askbase.user_email` (lower case; the
  Slack side looks it up with the `users:read.email` scope), `askbase.channel`,
  `askbase.usergroups` (comma-separated, ids as `S0123ABCD` and handles as `@data-team`) and
  `askbase.source`, when `variables` is on — for policies such as
  `USING (owner_email = current_setting('askbase.user_email', true))`.

Both are transaction-local: the executor rolls every query back, so nothing outlives the query or
leaks to the next user of the pooled connection. A person no rule maps, when `roles` is set and
there is no `default_role`, is refused before anything runs (`Askbase.ask`). PostgreSQL only:
other backends refuse the configuration at start rather than run unfiltered.

The identity travels in a context variable, set by `Askbase.ask`/`rerun` around the pipeline and
read by the executor (core/execute.py) — like the question's deadline — so no stage in between
carries it. Work done outside a person's question (the value index, catalog sampling at start)
runs with no identity: a policy keyed on these settings shows it nothing (fail closed).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

import sqlalchemy as sa

from core.access import Principal
from core.groups import role_group
from core.settings import DatabaseSettings

PREFIX = "askbase."


@dataclass(frozen=True)
class DatabaseIdentity:
    role: str | None = None
    variables: Mapping[str, str] = field(default_factory=dict)


class NoDatabaseRole(Exception):
    """`roles` is configured and names neither this person, their groups nor the channel."""


_current: ContextVar[DatabaseIdentity | None] = ContextVar("askbase_identity", default=None)


def identity_for(config: DatabaseSettings, who: Principal, source: str) -> DatabaseIdentity | None:
    """The identity to give the database for `who`, or None when the database wants none (or the
    operator asks: the CLI runs with the configured account). Raises NoDatabaseRole."""
    rules = config.identity
    if rules is None or who.operator:
        return None
    role = None
    if rules.roles:
        # user groups by id (`S…`) or `@handle`, each matching only its own kind (core/groups.py)
        by_group = {g: v for k, v in rules.roles.items() if (g := role_group(k)) is not None}
        role = (
            rules.roles.get(who.user or "")
            or next((by_group[g] for g in sorted(who.usergroups) if g in by_group), None)
            or rules.roles.get(who.channel or "")
            or rules.default_role
        )
        if role is None:
            raise NoDatabaseRole(who.user or "")
    variables: dict[str, str] = {}
    if rules.variables:
        variables = {
            f"{PREFIX}user": who.user or "",
            f"{PREFIX}user_email": (who.email or "").lower(),
            f"{PREFIX}channel": who.channel or "",
            f"{PREFIX}usergroups": ",".join(sorted(who.usergroups)),
            f"{PREFIX}source": source,
        }
    return DatabaseIdentity(role=role, variables=variables)


@contextmanager
def acting_as(identity: DatabaseIdentity | None) -> Iterator[None]:
    token = _current.set(identity)
    try:
        yield
    finally:
        _current.reset(token)


def apply_postgres(conn: sa.Connection) -> None:
    """Inside the read-only transaction, before the query: the role, then the session settings."""
    identity = _current.get()
    if identity is None:
        return
    if identity.role:
        conn.exec_driver_sql(f"SET LOCAL ROLE {conn.dialect.identifier_preparer.quote(identity.role)}")
    for name, value in identity.variables.items():
        conn.execute(sa.text("SELECT set_config(:name, :value, true)"), {"name": name, "value": value})
