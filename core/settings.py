"""Typed configuration: defaults < YAML file < ASKBASE_* env < well-known platform env vars.

The YAML file is `$ASKBASE_CONFIG` (default: the `config/askbase.yaml` shipped in the package).
Every field is documented in `config/README.md`. Secrets are `SecretStr` so they never print by
accident.

Where files live, installed or not: what ships with Askbase (prompts, the default config, the demo
catalog) is package data, read through `importlib.resources`, so a wheel works from any directory.
What Askbase writes (the demo database, the state database, catalog caches, value indexes) goes
to the var dir: `$ASKBASE_VAR_DIR`, else `var/` beside the code when running from a checkout (or
an editable install of one), else the user's data directory (`~/.local/share/askbase` on Linux).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import uuid
from functools import cache, lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import platformdirs
from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)

from core import groups
from core.previews import PREVIEW_BYTES

ROOT = Path(__file__).resolve().parent.parent  # the checkout, or site-packages when installed
DEMO_DB = "demo"
CONFIG_PACKAGE = "config"  # the top-level config/ folder, shipped as a package for its data files

_extracted = contextlib.ExitStack()  # package files copied out of a zip import, removed at exit
atexit.register(_extracted.close)


@cache
def package_file(package: str, name: str) -> Path:
    """A file shipped in `package` as a real path (YAML readers want one), wherever Askbase is installed.

    Installed wheels and checkouts give the file itself; only a zip import needs a temporary copy.
    """
    return _extracted.enter_context(resources.as_file(resources.files(package).joinpath(name)))


def is_checkout(root: Path = ROOT) -> bool:
    """Running from Askbase's own source tree (a clone, or an editable install of one)."""
    pyproject = root / "pyproject.toml"
    return pyproject.is_file() and 'name = "askbase"' in pyproject.read_text(errors="replace")


def default_var_dir(root: Path = ROOT) -> Path:
    """Where Askbase writes: $ASKBASE_VAR_DIR, else ./var of a checkout, else the user's data dir.

    An installed package must not write into site-packages (often read-only, and lost on upgrade),
    nor scatter `var/` folders into whatever directory it is started from.
    """
    if os.environ.get("ASKBASE_VAR_DIR"):
        return Path(os.environ["ASKBASE_VAR_DIR"])
    if is_checkout(root):
        return root / "var"
    return Path(platformdirs.user_data_dir("askbase", appauthor=False))


def default_config_file() -> Path:
    """$ASKBASE_CONFIG, else the config/askbase.yaml shipped with the package."""
    if os.environ.get("ASKBASE_CONFIG"):
        return Path(os.environ["ASKBASE_CONFIG"])
    return package_file(CONFIG_PACKAGE, "askbase.yaml")


class IdentitySettings(BaseModel):
    """Who asks, told to the database (PostgreSQL) so its row-level security decides; core/identity.py."""

    # set_config('askbase.user' | 'askbase.user_email' | 'askbase.channel' | 'askbase.usergroups' | 'askbase.source')
    variables: bool = True
    # Slack/Teams user id, user group (S… id or @handle: core/groups.py), or channel → the database
    # role to SET LOCAL ROLE to
    roles: dict[str, str] = {}
    default_role: str | None = None  # for askers `roles` does not name; none: they are refused

    @field_validator("roles")
    @classmethod
    def _group_keys_are_typed(cls, roles: dict[str, str]) -> dict[str, str]:
        """A key that could be a group id or a handle is refused now, not guessed at per question."""
        for key in roles:
            groups.role_group(key)
        return roles


class WarehouseSettings(BaseModel):
    """Cost and time caps and attribution for warehouses (docs/warehouses.md)."""

    # BigQuery: a query whose dry run would process more is refused before it runs; every job is
    # billed at most this (maximum_bytes_billed). 10 GiB.
    max_bytes_billed: int = 10 * 1024**3
    # the value index reads at most this many rows of a column (TABLESAMPLE / LIMIT) ...
    sample_rows: int = 10_000
    # ... and at most this many columns per build, so one build costs a bounded number of scans
    max_index_columns: int = 200
    role: str | None = None  # Snowflake: the role to use (grant it SELECT only)
    warehouse: str | None = None  # Snowflake: the virtual warehouse to run on
    query_tag: bool = True  # name Askbase, the asker and the trace id on every statement
    # more connect arguments for the driver (a private-link host, a port, an authenticator); the
    # Snowflake dialect takes host/port/protocol only here, not from the URL
    connect: dict[str, str | int | float | bool] = {}


class DatabaseSettings(BaseModel):
    """One database people may ask about."""

    url: str
    catalog: str | None = None  # YAML catalog overlay (descriptions, synonyms, relationships, patterns)
    definitions: list[str] = []  # more files of business definitions (docs/definitions.md)
    description: str = ""
    schema_name: str | None = Field(default=None, alias="schema")  # reflect this schema only
    schemas: list[str] = []  # warehouses: several schemas (datasets) of one database, in this order
    warehouse: WarehouseSettings = WarehouseSettings()  # warehouses: cost, time, attribution
    row_cap: int | None = None  # overrides engine.row_cap
    statement_timeout_s: float | None = None  # overrides engine.statement_timeout_s
    deny_tables: list[str] = []  # never queried, never indexed, never shown to the LLM
    deny_columns: list[str] = []  # "table.column"
    mask_columns: list[str] = []  # "table.column", shown masked (a***@x.com)
    identity: IdentitySettings | None = None  # PostgreSQL: the asker's role / settings for row-level security
    # `python -m bot worker` refreshes the value index on this crontab line (minute hour day month
    # weekday, "0 3 * * *": nightly at 03:00) in `index_refresh_timezone`; None: never (core/index_refresh.py)
    index_refresh: str | None = None
    index_refresh_timezone: str = "UTC"

    model_config = {"populate_by_name": True}

    @field_validator("index_refresh")
    @classmethod
    def _cron_line(cls, value: str | None) -> str | None:
        """A crontab line that cannot be read is refused at load, where the error names the
        database and the setting (`databases.sales.index_refresh`), not at 03:00."""
        value = (value or "").strip() or None
        if value is not None:
            from core.schedules.triggers import cron_spec  # APScheduler, only when a schedule is set

            cron_spec(value)  # ScheduleError, a ValueError, says how to write one
        return value

    @field_validator("index_refresh_timezone")
    @classmethod
    def _timezone(cls, value: str) -> str:
        value = (value or "").strip()
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"'{value}' is not a timezone: use a name like Europe/Berlin or UTC") from None
        return value

    @model_validator(mode="after")
    def _identity_needs_postgres(self) -> DatabaseSettings:
        if self.identity is not None and not self.url.startswith(("postgresql", "postgres:")):
            raise ValueError("identity (row-level security) is supported on PostgreSQL databases only")
        return self


class LLMSettings(BaseModel):
    api_key: SecretStr | None = None  # OPENAI_API_KEY
    base_url: str | None = None  # OPENAI_BASE_URL; any OpenAI-compatible endpoint
    model: str = "gpt-4o-mini"
    models: dict[str, str] = {}  # per task: understand, link, generate, revise, clarify
    timeout_s: float = 60.0
    max_attempts: int = 3  # per call, for 429 / 5xx / timeouts / connection errors
    retry_initial_s: float = 1.0
    retry_max_s: float = 20.0
    temperature: float = 0.0
    max_tokens: int = 2048
    # json_schema: OpenAI structured outputs; json_object: JSON mode; off: prompt only.
    # auto: try json_schema, fall back for the rest of the process if the endpoint rejects it.
    structured_output: Literal["auto", "json_schema", "json_object", "off"] = "auto"

    def model_for(self, task: str) -> str:
        return self.models.get(task, self.model)

    @property
    def configured(self) -> bool:
        return bool(self.api_key and self.api_key.get_secret_value())


class EngineSettings(BaseModel):
    max_revisions: int = 3  # revise rounds on error or empty result
    revise_on_empty: bool = True
    row_cap: int = 5000  # rows fetched from the database per question
    byte_cap: int = 20_000_000  # bytes of result kept per question
    default_limit: int = 1000  # LIMIT added by the guard when the SQL has none
    statement_timeout_s: float = 30.0
    sample_rows: int = 3  # example rows per table shown to the LLM
    link_llm_min_tables: int = 25  # ask the LLM to link tables only for schemas at least this large
    # LLM mode: the writer sees the whole schema when it fits this many tokens (estimated at 4
    # characters a token); above it the schema is pruned for recall, with an LLM linking call.
    # A plain prompt sends every table whatever the size, so pruning a schema a current model
    # reads whole can only lose to it: the default prunes only past about 60 tables of 15 columns.
    schema_token_budget: int = 16000
    understand: Literal["folded", "separate"] = "folded"  # separate: an LLM call before retrieval
    recipe_max_tables: int = 4  # join recipes with more table copies are not shown (0: never)
    few_shot_examples: int = 3  # confirmed examples shown to the generator
    fallback_to_keyword: bool = True  # answer in keyword mode when the LLM fails
    clarify: Literal["off", "auto", "always"] = "auto"
    clarify_max_rounds: int = 4
    # one deadline per question across every LLM call and retry; then keyword mode (or a clear
    # error) answers. 0: no deadline (each call still has llm.timeout_s and llm.max_attempts)
    question_deadline_s: float = 45.0
    # keyword mode answers only readings at least this sure (core/keyword/confidence.py); the
    # trade-off measured on the benchmarks is in config/README.md
    keyword_min_confidence: float = 0.5


class SlackSettings(BaseModel):
    bot_token: SecretStr | None = None  # SLACK_BOT_TOKEN
    signing_secret: SecretStr | None = None  # SLACK_SIGNING_SECRET
    app_token: SecretStr | None = None  # SLACK_APP_TOKEN (Socket Mode)
    api_base_url: str | None = None  # SLACK_API_BASE_URL
    client_id: str | None = None  # SLACK_CLIENT_ID (multi-workspace OAuth)
    client_secret: SecretStr | None = None  # SLACK_CLIENT_SECRET
    state_secret: SecretStr | None = None  # SLACK_STATE_SECRET
    port: int = 3000  # PORT
    workers: int = 4  # questions answered at once per process; the rest wait their turn, in order
    http_processes: int = 2  # `serve --http`: gunicorn worker processes (WEB_CONCURRENCY)
    http_threads: int = 8  # request threads per process (acks are quick; answers run on `workers`)
    max_body_bytes: int = 1_000_000  # larger requests are refused (413) before the signature is read
    state_wait_s: float = 1.5  # longest a request waits on the state DB before the ack says it is down
    claim_wait_s: float = (
        10.0  # after the ack: longest a question's claim waits (a busy SQLite queues writes)
    )
    claim_lease_s: float = 30.0  # a question's process renews its claim; a dead one's expires after this
    recover_within_s: float = (
        600.0  # questions left in flight younger than this are finished, older apologised for
    )
    table_rows: int = 20  # rows shown in the table block
    clarification_ttl_s: int = 3600
    only_asker_answers: bool = True
    # Channels whose results only the asker sees (ephemeral answers, files by DM; docs/slack.md).
    # Admins can make more private with `/ask private on`; these stay private whatever they say.
    private_channels: list[str] = []
    # Replies in the bot's channel threads without a mention are follow-ups (needs the message.channels /
    # message.groups events and the history scopes; off: mention the bot, DM it, or use the assistant panel)
    thread_followups: bool = False
    # The app's messaging experience (docs/slack.md): "agent_view" — what Slack gives new apps: a
    # DM opened is app_home_opened with tab "messages", app_context_changed says what the person
    # views, each DM message starts a thread — or "assistant_view", for apps installed earlier with
    # the assistant panel (assistant_thread_started / assistant_thread_context_changed)
    experience: Literal["agent_view", "assistant_view"] = "agent_view"
    # Slack user ids told by DM, at most once a day per problem, when the setup makes questions fail
    # (a rejected or missing LLM key, a database account without a grant); an OAuth install's
    # installer is told too. None named and no installer known: the workspace's owners
    admins: list[str] = []


# Where Teams and the Bot Framework channels send activities from (their serviceUrl hosts): the
# public cloud, then Teams GCC, GCC High and DoD, then the US Government Bot Framework channels.
TEAMS_SERVICE_URL_HOSTS = (
    "smba.trafficmanager.net",
    "*.botframework.com",
    "smba.infra.gcc.teams.microsoft.com",
    "smba.infra.gov.teams.microsoft.us",
    "smba.infra.dod.teams.microsoft.us",
    "*.botframework.azure.us",
)


class TeamsSettings(BaseModel):
    """The Microsoft Teams adapter (bot/teams/, `python -m bot serve --teams`).

    The Entra ID app registration is read the way the Microsoft 365 Agents SDK documents it
    (CONNECTIONS__SERVICE_CONNECTION__SETTINGS__CLIENTID / CLIENTSECRET / TENANTID / AUTHTYPE /
    CERTPFXFILE, see PLATFORM_ENV), or from `teams:` in the YAML / ASKBASE_TEAMS__*.
    """

    app_id: str | None = None  # the bot's Entra ID application (client) id
    app_password: SecretStr | None = None  # its client secret (auth_type ClientSecret)
    tenant_id: str | None = None  # the tenant of a single-tenant bot
    auth_type: str | None = None  # SDK AuthTypes: ClientSecret (default), certificate, SystemManagedIdentity…
    cert_pfx_file: str | None = None  # auth_type certificate
    allow_anonymous: bool = False  # no app id: accept unsigned requests (local development only)
    openid_metadata_url: str | None = None  # where the keys of incoming JWTs are published (sovereign clouds)
    public_url: str | None = (
        None  # https://host the bot is reached at (download links); else the request's host
    )
    link_secret: SecretStr | None = None  # signs download links; else derived from app_password / var/
    link_ttl_s: int = 3600  # a CSV link works this long (a chart's lives as long as its answer)
    port: int = 3978  # ASKBASE_TEAMS__PORT, or --port
    workers: int = 4  # questions answered at once per process
    table_rows: int = 10  # rows shown in the card's table (the CSV has the rest)
    clarification_ttl_s: int = 3600
    only_asker_answers: bool = True
    claim_wait_s: float = (
        5.0  # longest an activity waits on the state DB for its claim (then handled unclaimed)
    )
    claim_lease_s: float = 30.0  # a question's process renews its claim; a dead one's expires after this
    recover_within_s: float = (
        600.0  # questions left in flight younger than this are finished, older apologised for
    )
    # The only addresses replies (and the bot's outbound token) may go to: an activity whose
    # serviceUrl is elsewhere is refused with 401 (bot/teams/outbound.py). `host` or `*.domain`
    # (https, port 443, any path), or a URL prefix `scheme://host[:port][/path]`. Replaces the
    # defaults when set: list them again to add one.
    service_url_hosts: list[str] = Field(default_factory=lambda: list(TEAMS_SERVICE_URL_HOSTS))
    ack_claim_s: float = 0.05  # longest the 202 waits for the activity's claim (then it is claimed after)


class AccessRule(BaseModel):
    """Who may query which databases. Empty lists mean everyone.

    Slack fields (channels, users, usergroups) match Slack askers, Teams fields (teams_users,
    teams_teams, teams_channels) match Teams askers; inside a platform the lists combine with AND.
    A rule that names only one platform's fields never matches the other platform's askers.
    """

    databases: list[str]
    channels: list[str] = []  # Slack channel ids
    users: list[str] = []  # Slack user ids
    usergroups: list[str] = []  # Slack user group ids (S0123ABCD, exact) or @handles (core/groups.py)
    teams_users: list[str] = []  # Entra ID (AAD) object ids of Teams users
    teams_teams: list[str] = []  # Teams team ids (the team's General channel id, 19:…@thread.tacv2)
    teams_channels: list[str] = []  # Teams channel ids, or group chat ids (19:…@thread.v2)

    @field_validator("usergroups")
    @classmethod
    def _typed_usergroups(cls, entries: list[str]) -> list[str]:
        """Each entry read once, here, as an `S…` id or an `@handle` (core/groups.py)."""
        return groups.configured_all(entries)

    @field_validator("teams_users")
    @classmethod
    def _object_ids(cls, entries: list[str]) -> list[str]:
        """Entra object ids, in the one form the Teams adapter reports them (lower-case GUIDs):
        an upper-case entry would otherwise never match anyone, a silent lockout."""
        return [_guid(e, "access.rules[].teams_users") for e in entries]


def _guid(text: str, where: str) -> str:
    try:
        return str(uuid.UUID(text.strip()))
    except ValueError:
        raise ValueError(f"{where}: {text!r} is not an Entra object id (a GUID such as 3f2b…-…)") from None


class AccessSettings(BaseModel):
    rules: list[AccessRule] = []  # no rules: everyone may query every database


class ScheduleSettings(BaseModel):
    min_interval_s: int = 60  # no schedule fires more often (ASKBASE_SCHEDULES__MIN_INTERVAL_S)
    max_consecutive_failures: int = 3  # then the schedule pauses and its owner is told
    misfire_grace_s: int = 3600  # a run missed by more than this (worker down) is skipped, not run late
    poll_s: float = 5.0  # how often the worker picks up new, changed, paused and deleted schedules
    lease_s: float = 30.0  # a dead worker's scheduler lease expires after this; another takes over


class AnalystSettings(BaseModel):
    """Who may verify answers (and unverify them). Empty: nobody, and no Verify button is shown."""

    users: list[str] = []  # Slack user ids (U…), Teams users' Entra ID object ids
    usergroups: list[str] = []  # Slack user-group ids (S0123ABCD) or @handles (the adapter resolves them)
    # Teams teams whose members are analysts: team ids (19:…@thread.tacv2, as access.rules'
    # teams_teams); the Teams adapter asks the Bot Connector whether the person is a member
    teams_teams: list[str] = []

    @field_validator("usergroups")
    @classmethod
    def _typed_usergroups(cls, entries: list[str]) -> list[str]:
        """Each entry read once, here, as an `S…` id or an `@handle` (core/groups.py)."""
        return groups.configured_all(entries)

    @field_validator("users")
    @classmethod
    def _user_ids(cls, entries: list[str]) -> list[str]:
        """Slack ids as written; Teams object ids as lower-case GUIDs, the form the adapter reports."""
        out = []
        for entry in entries:
            try:
                out.append(str(uuid.UUID(entry.strip())))
            except ValueError:
                out.append(entry.strip())
        return out


class VerifiedSettings(BaseModel):
    analysts: AnalystSettings = AnalystSettings()
    reuse: bool = True  # answer a question that matches a verified one from its SQL (no LLM)
    schema_check_s: float = 60.0  # how often a running process re-reads each schema's signature


class CacheSettings(BaseModel):
    window_s: int = 600  # a repeated question within this many seconds gets the cached answer; 0: off
    max_entries: int = 1000  # across all databases; the oldest go first
    max_rows: int = 5000  # larger results are not cached
    max_bytes: int = 2_000_000  # per cached answer (rows as JSON)
    off: list[str] = []  # databases whose answers are never cached


class StateSettings(BaseModel):
    """What the state database (`state_url`) keeps of an answer (core/previews.py)."""

    # bytes of one answer's data kept in each place that stores it (the turn's sentence, its trace,
    # a schedule's last result for "what changed"); more is kept as a preview, cut visibly
    preview_bytes: int = Field(default=PREVIEW_BYTES, ge=1024)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="ASKBASE_", env_nested_delimiter="__", extra="ignore", populate_by_name=True
    )

    default_db: str = DEMO_DB  # ASKBASE_DEFAULT_DB
    state_url: str = ""  # ASKBASE_STATE_URL; empty → sqlite file under the var dir
    var_dir: str = Field(default_factory=lambda: str(default_var_dir()))  # ASKBASE_VAR_DIR
    log_level: str = "INFO"
    databases: dict[str, DatabaseSettings] = {}
    llm: LLMSettings = LLMSettings()
    engine: EngineSettings = EngineSettings()
    slack: SlackSettings = SlackSettings()
    teams: TeamsSettings = TeamsSettings()
    access: AccessSettings = AccessSettings()
    schedules: ScheduleSettings = ScheduleSettings()
    verified: VerifiedSettings = VerifiedSettings()
    cache: CacheSettings = CacheSettings()
    state: StateSettings = StateSettings()

    @property
    def state_database_url(self) -> str:
        return self.state_url or f"sqlite:///{Path(self.var_dir) / 'state.sqlite'}"

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        yaml_path = default_config_file()
        sources: list[PydanticBaseSettingsSource] = [
            init_settings,
            PlatformEnvSource(settings_cls),
            env_settings,
        ]
        if yaml_path.is_file():
            sources.append(YamlConfigSettingsSource(settings_cls, yaml_file=yaml_path))
        return tuple(sources)


# Env vars whose names are fixed by the platforms (OpenAI SDK, Slack, Heroku-style PORT).
PLATFORM_ENV: dict[str, tuple[str, str]] = {
    "OPENAI_API_KEY": ("llm", "api_key"),
    "OPENAI_BASE_URL": ("llm", "base_url"),
    "ASKBASE_LLM_MODEL": ("llm", "model"),
    "SLACK_BOT_TOKEN": ("slack", "bot_token"),
    "SLACK_SIGNING_SECRET": ("slack", "signing_secret"),
    "SLACK_APP_TOKEN": ("slack", "app_token"),
    "SLACK_API_BASE_URL": ("slack", "api_base_url"),
    "SLACK_CLIENT_ID": ("slack", "client_id"),
    "SLACK_CLIENT_SECRET": ("slack", "client_secret"),
    "SLACK_STATE_SECRET": ("slack", "state_secret"),
    "PORT": ("slack", "port"),
    "WEB_CONCURRENCY": ("slack", "http_processes"),  # Heroku's and gunicorn's name for it
    # The Microsoft 365 Agents SDK's own names for the bot's Entra ID app registration
    "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__CLIENTID": ("teams", "app_id"),
    "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__CLIENTSECRET": ("teams", "app_password"),
    "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__TENANTID": ("teams", "tenant_id"),
    "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__AUTHTYPE": ("teams", "auth_type"),
    "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__CERTPFXFILE": ("teams", "cert_pfx_file"),
}


class PlatformEnvSource(PydanticBaseSettingsSource):
    """Maps the well-known env names above into the nested sections."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        data: dict[str, dict[str, str]] = {}
        for env_name, (section, key) in PLATFORM_ENV.items():
            value = os.environ.get(env_name)
            if value:
                data.setdefault(section, {})[key] = value
        return data


def load_settings(**overrides: Any) -> Settings:
    """Fresh settings (tests call this after changing the environment)."""
    return Settings(**overrides)


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return load_settings()
