"""`python -m bot serve --teams` as a deployment runs it, against a fake Bot Connector (and Entra)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

from tests.fakes.bot_connector import TENANT, FakeConnector, TeamsClient
from tests.fakes.entra_id import FakeEntra
from tests.processes import ServedProcess

APP_ID = "6f0a3c8e-1111-4222-8333-944455556666"  # the bot's registration in the tests


class TeamsServed(ServedProcess):
    """`serve --teams`, with a client that posts activities to its /api/messages as Teams does.

    The fake Bot Connector's address is added to the allowed ones (`teams.service_url_hosts`, as
    a deployment would name a local emulator) unless `env` names them itself; `env` is what the
    process got, for an in-process worker on the same settings."""

    def __init__(
        self, env: dict[str, str], tmp_path: Path, connector: FakeConnector, wait: bool = True
    ) -> None:
        self.env = {**connector_env(connector), **env}
        super().__init__(["serve", "--teams"], self.env, tmp_path / "teams.log", wait=wait)
        self.client = TeamsClient(f"{self.base}/api/messages", connector.service_url)

    def get(self, url: str) -> tuple[int, dict[str, str], bytes]:
        try:
            with urllib.request.urlopen(url, timeout=30) as r:
                return r.status, dict(r.headers), r.read()
        except urllib.error.HTTPError as exc:
            return exc.code, dict(exc.headers), exc.read()


def connector_env(*connectors: FakeConnector) -> dict[str, str]:
    """Settings that allow the fake Bot Connectors' addresses as serviceUrls (and nothing else)."""
    return {"ASKBASE_TEAMS__SERVICE_URL_HOSTS": json.dumps([c.service_url for c in connectors])}


def teams_env(tmp_path: Path, var: Path, **extra: str) -> dict[str, str]:
    return {
        "ASKBASE_VAR_DIR": str(var),
        "ASKBASE_STATE_URL": f"sqlite:///{tmp_path / 'state.sqlite'}",
        **extra,
    }


def identity_env(entra: FakeEntra) -> dict[str, str]:
    """The bot's registration: app id, tenant, keys from the fake, its token from the fake's MSI."""
    return {
        "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__CLIENTID": APP_ID,
        "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__TENANTID": TENANT,
        "CONNECTIONS__SERVICE_CONNECTION__SETTINGS__AUTHTYPE": "SystemManagedIdentity",
        "ASKBASE_TEAMS__OPENID_METADATA_URL": entra.metadata_url,
        "IDENTITY_ENDPOINT": entra.msi_endpoint,
        "IDENTITY_HEADER": entra.identity_header,
    }
