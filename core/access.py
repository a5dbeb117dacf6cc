"""Who may query which database, and what of each database nobody may see.

Two kinds of rule, both from the settings, both enforced by the engine (never by the prompt, never
only by a chat adapter):

- Per person and place (`settings.access.rules`): a rule names databases (or `*`) and the Slack
  channels, users and user groups — and/or the Teams users, teams and channels — allowed to query
  them; inside a rule one platform's lists combine with AND, an empty list means "anyone", and a
  rule that names only one platform's fields matches nobody on the other. A database that no rule
  names is open to everyone; once rules name it, only what one of them matches may query it.
  `Principal` is who asks and where, on which chat platform; the Slack side resolves the asker's
  user groups (bot/slack/usergroups.py), the engine never calls a chat. Every id — users, channels,
  user groups — is compared exactly, as Slack writes it (upper case); a user group named by its
  handle (`@data-team`) matches only a group with that handle, never one whose id is spelled the
  same (core/groups.py).
- Per database (`DatabaseSettings.deny_tables / deny_columns / mask_columns`): denied tables and
  columns are refused by the SQL guard on the parsed query and never enter the value index, the
  view or a prompt; masked columns are shown masked in every result (core/masking.py, applied by
  core/execute.py).

The CLI and the console are run by the operator, who holds the configuration and its credentials
already: `Principal.operator()` is not subject to the per-person rules (the per-database rules
still apply to everyone). Chat and scheduled questions always carry who asked.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import sqlalchemy as sa

from core.groups import held as held_group
from core.settings import AccessRule, DatabaseSettings, Settings

log = logging.getLogger(__name__)

LOCAL_SOURCES = frozenset({"cli", "console"})

Platform = Literal["slack", "teams"]


@dataclass(frozen=True)
class Principal:
    """Who asks, and where, on which chat platform.

    Slack: `user` and `channel` ids, `usergroups` the asker's user groups, each by its id
    (`S0123ABCD`) and by its handle (`@data-team`), two kinds that never match each other
    (core/groups.py).
    Teams: `user` the Entra ID object id, `channel` the Teams channel id (or the chat's id),
    `team` the team id (None outside a team), `usergroups` the teams named as analyst groups
    (`verified.analysts.teams_teams`) the adapter found them a member of.
    """

    user: str | None = None
    channel: str | None = None
    usergroups: frozenset[str] = frozenset()
    operator: bool = False  # the person running the CLI/console: per-person rules do not apply
    email: str | None = None  # only when a database wants it for row-level security (core/identity.py)
    platform: Platform = "slack"
    team: str | None = None

    @classmethod
    def local(cls) -> Principal:
        return cls(operator=True)

    @classmethod
    def of(
        cls,
        user: str | None = None,
        channel: str | None = None,
        usergroups: Iterable[str] = (),
        email: str | None = None,
    ) -> Principal:
        """A Slack asker; `usergroups` as core/groups.py writes them (`S…` ids, `@handles`; any
        other word is taken for a handle, so it can never pass for an id)."""
        groups = frozenset(map(held_group, usergroups))
        return cls(user=user, channel=channel, usergroups=groups, email=email)

    @classmethod
    def teams(
        cls,
        user: str | None = None,
        channel: str | None = None,
        team: str | None = None,
        groups: Iterable[str] = (),
    ) -> Principal:
        """A Teams asker; `groups`: the teams among those the settings name that they belong to."""
        return cls(user=user, channel=channel, team=team, platform="teams", usergroups=frozenset(groups))


def in_usergroups(configured: Iterable[str], who: Principal) -> bool:
    """Is a Slack `who` in one of the `configured` user groups (settings entries, typed when the
    settings loaded: `S…` ids, `@handles`)? Ids match ids exactly and handles match handles: a
    group whose handle spells another group's id is not that group."""
    if who.platform != "slack":
        return False
    return not who.usergroups.isdisjoint(held_group(g) for g in configured)


def _matches(rule: AccessRule, who: Principal) -> bool:
    slack_fields = bool(rule.channels or rule.users or rule.usergroups)
    teams_fields = bool(rule.teams_users or rule.teams_teams or rule.teams_channels)
    if who.platform == "teams":
        if slack_fields and not teams_fields:
            return False
        return (
            (not rule.teams_channels or who.channel in rule.teams_channels)
            and (not rule.teams_users or who.user in rule.teams_users)
            and (not rule.teams_teams or who.team in rule.teams_teams)
        )
    if teams_fields and not slack_fields:
        return False
    return (
        (not rule.channels or who.channel in rule.channels)
        and (not rule.users or who.user in rule.users)
        and (not rule.usergroups or in_usergroups(rule.usergroups, who))
    )


def governing_rules(settings: Settings, database: str) -> list[AccessRule]:
    return [r for r in settings.access.rules if database in r.databases or "*" in r.databases]


def may_query(settings: Settings, who: Principal, database: str) -> bool:
    """The one access decision: may `who` ask questions about `database`?"""
    if who.operator:
        return True
    rules = governing_rules(settings, database)
    return not rules or any(_matches(r, who) for r in rules)


def matching_rules(settings: Settings, who: Principal, database: str) -> tuple[int, ...]:
    """Which of the rules governing `database` match `who` (their places in the settings): two
    principals with the same ones are treated alike by every rule (the answer cache keys on it)."""
    return tuple(
        i
        for i, r in enumerate(settings.access.rules)
        if (database in r.databases or "*" in r.databases) and _matches(r, who)
    )


def usable_databases(settings: Settings, who: Principal, names: Iterable[str]) -> list[str]:
    return [n for n in names if may_query(settings, who, n)]


def refusal(database: str) -> str:
    """What a person is told; it names no rule, user or group (those are the admins' business)."""
    return (
        f"You may not query '{database}' here. Use `/ask db` to see the databases you may use "
        "in this channel, or ask the bot's admins for access."
    )


def needs_usergroups(settings: Settings) -> bool:
    """Resolve the asker's user groups only when some rule, or some database's role map, may name them."""
    return any(r.usergroups for r in settings.access.rules) or any(
        d.identity is not None and d.identity.roles for d in settings.databases.values()
    )


def needs_emails(settings: Settings) -> bool:
    """Look the asker's email up only when a database is told who asks (core/identity.py)."""
    return any(d.identity is not None and d.identity.variables for d in settings.databases.values())


# ------------------------------------------------------------------ per database


@dataclass(frozen=True)
class DataRules:
    """Per-database rules, lower-cased: tables as `table` or `schema.table`, columns as `table.column`."""

    deny_tables: frozenset[str] = frozenset()
    deny_columns: frozenset[str] = frozenset()
    mask_columns: frozenset[str] = frozenset()

    @classmethod
    def of(cls, config: DatabaseSettings) -> DataRules:
        return cls(
            deny_tables=frozenset(t.strip().lower() for t in config.deny_tables),
            deny_columns=frozenset(c.strip().lower() for c in config.deny_columns),
            mask_columns=frozenset(c.strip().lower() for c in config.mask_columns),
        )

    @property
    def any(self) -> bool:
        return bool(self.deny_tables or self.deny_columns or self.mask_columns)

    def table_denied(self, table: str, schema: str | None = None) -> bool:
        low = table.lower()
        return low in self.deny_tables or (
            schema is not None and f"{schema.lower()}.{low}" in self.deny_tables
        )

    def column_denied(self, table: str, column: str, schema: str | None = None) -> bool:
        return self.table_denied(table, schema) or _in(self.deny_columns, table, column, schema)

    def column_masked(self, table: str, column: str, schema: str | None = None) -> bool:
        return _in(self.mask_columns, table, column, schema)


def _in(keys: frozenset[str], table: str, column: str, schema: str | None) -> bool:
    t, c = table.lower(), column.lower()
    return f"{t}.{c}" in keys or (schema is not None and f"{schema.lower()}.{t}.{c}" in keys)


# ------------------------------------------------------------------ the database's own account


def privilege_problems(engine: sa.Engine) -> list[str]:
    """What the configured database account may do beyond reading (docs/security.md says why it
    matters: a read-only transaction does not stop a superuser's file functions).

    Empty when the account looks least-privileged, or when the check itself is not possible.
    """
    backend = engine.dialect.name
    try:
        with engine.connect() as conn:
            if backend == "postgresql":
                return _postgres_problems(conn)
            if backend in ("mysql", "mariadb"):
                return _mysql_problems(conn)
    except sa.exc.SQLAlchemyError as exc:
        log.info("could not check the database account's privileges: %s", exc)
    return []


def _postgres_problems(conn: sa.Connection) -> list[str]:
    row = conn.execute(
        sa.text(
            "SELECT current_user, rolsuper, "
            "pg_has_role(current_user, 'pg_read_server_files', 'MEMBER'), "
            "pg_has_role(current_user, 'pg_write_server_files', 'MEMBER'), "
            "pg_has_role(current_user, 'pg_execute_server_program', 'MEMBER') "
            "FROM pg_roles WHERE rolname = current_user"
        )
    ).one()
    user, superuser, reads, writes, programs = row
    problems = []
    if superuser:
        problems.append(f"connected as the superuser '{user}', which may read server files")
    else:
        for held, what in (
            (reads, "read server files"),
            (writes, "write server files"),
            (programs, "run programs"),
        ):
            if held:
                problems.append(f"the role '{user}' may {what}")
        writable = conn.execute(
            sa.text(
                "SELECT count(*) FROM information_schema.table_privileges "
                "WHERE grantee = current_user AND privilege_type IN ('INSERT','UPDATE','DELETE','TRUNCATE')"
            )
        ).scalar()
        if writable:
            problems.append(f"the role '{user}' may change {writable} table privilege(s) worth of data")
    return problems


def _mysql_problems(conn: sa.Connection) -> list[str]:
    grants = [str(r[0]) for r in conn.execute(sa.text("SHOW GRANTS")).all()]
    text = " ".join(grants).upper()
    problems = []
    if "ALL PRIVILEGES ON *.*" in text:
        problems.append("the account has ALL PRIVILEGES, including FILE (read and write server files)")
    elif "FILE" in {p.strip() for g in grants for p in _privileges(g)}:
        problems.append("the account has the FILE privilege (read and write server files)")
    writes = {"INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "ALTER", "SUPER"}
    held = {p.strip() for g in grants for p in _privileges(g)} & writes
    if held and "ALL PRIVILEGES ON *.*" not in text:
        problems.append(f"the account may write: {', '.join(sorted(held))}")
    return problems


def _privileges(grant: str) -> list[str]:
    """'GRANT SELECT, FILE ON *.* TO ...' → ['SELECT', 'FILE']."""
    head = grant.upper().removeprefix("GRANT ").split(" ON ", 1)[0]
    return [p.split("(")[0].strip() for p in head.split(",")]
