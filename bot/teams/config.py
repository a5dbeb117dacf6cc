"""From Askbase settings to the Microsoft 365 Agents SDK's configuration, and whether to start.

The SDK reads its connection from `CONNECTIONS__SERVICE_CONNECTION__SETTINGS__*` (CLIENTID,
CLIENTSECRET, TENANTID, AUTHTYPE, CERTPFXFILE, …); core/settings.py maps the same names into
`settings.teams`, so the YAML (`teams:`) and `ASKBASE_TEAMS__*` work too. Anything else the SDK
documents under those prefixes (CONNECTIONSMAP, AUTHORITY, SCOPES…) is passed through untouched.

Without an app id the SDK runs anonymously: it accepts unsigned requests and sends replies without
a token — fine on a laptop with a test client, never on the internet. So Askbase refuses to start
that way unless `teams.allow_anonymous` says so, and then warns.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

from microsoft_agents.activity import load_configuration_from_env

from bot.teams.auth import tenant_problem
from bot.teams.outbound import ServiceUrls
from core.settings import Settings

log = logging.getLogger("askbase.teams")

SERVICE_CONNECTION = "SERVICE_CONNECTION"

MISSING_APP_ID = (
    "The Teams adapter needs the bot's Entra ID app registration: set "
    "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__CLIENTID (the app id) and "
    "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__CLIENTSECRET (or teams.app_id / teams.app_password "
    "in the config). To try it locally without one, set ASKBASE_TEAMS__ALLOW_ANONYMOUS=true "
    "(requests are then not authenticated). See docs/teams.md."
)

ANONYMOUS_WARNING = (
    "Teams adapter in ANONYMOUS mode (teams.allow_anonymous): incoming requests are not "
    "authenticated and replies carry no token. For local development only — never expose it."
)


def secret(value: Any) -> str | None:
    return value.get_secret_value() if value is not None else None


def app_id(settings: Settings) -> str | None:
    return (settings.teams.app_id or "").strip() or None


def startup_problem(settings: Settings) -> str | None:
    """Why the adapter must not start (None: it may): no app id, a tenant it could not compare
    activities with, or an allow list of Bot Connector addresses it cannot read (auth.py)."""
    if app_id(settings) is None and not settings.teams.allow_anonymous:
        return MISSING_APP_ID
    try:
        urls = ServiceUrls.from_settings(settings)
    except ValueError as exc:
        return f"teams.service_url_hosts: {exc}. See docs/teams.md."
    if not urls.origins:
        return (
            "teams.service_url_hosts is empty: no Bot Connector address could be answered. See docs/teams.md."
        )
    return tenant_problem(settings)


def anonymous(settings: Settings) -> bool:
    return app_id(settings) is None


def sdk_configuration(settings: Settings, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The dict the SDK's MsalConnectionManager and AgentApplication take (`**config`)."""
    config = load_configuration_from_env(dict(os.environ if environ is None else environ))
    connections: dict[str, Any] = config.setdefault("CONNECTIONS", {})
    service = connections.setdefault(SERVICE_CONNECTION, {}).setdefault("SETTINGS", {})
    teams = settings.teams
    values = {
        "CLIENTID": app_id(settings),
        "CLIENTSECRET": secret(teams.app_password),
        "TENANTID": teams.tenant_id,
        "AUTHTYPE": teams.auth_type,
        "CERTPFXFILE": teams.cert_pfx_file,
    }
    for key, value in values.items():
        if value:
            service[key] = value
    if app_id(settings) is None:
        for key in ("CLIENTID", "CLIENTSECRET"):
            service.pop(key, None)
        service["ANONYMOUS_ALLOWED"] = True
    return config
