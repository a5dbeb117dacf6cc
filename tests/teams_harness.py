"""The Teams adapter against a fake Bot Connector (and Entra): `python -m bot serve --teams` as a
deployment runs it (`TeamsServed`), or the same web application in this process (`TeamsRunning`),
where a test can move its clock and give it the fake model."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from aiohttp import web

from bot.teams.server import AccessLogger, create_server
from core.askbase import Askbase
from core.bench.fakes.bot_connector import TENANT, FakeConnector, TeamsClient
from core.llm import LLM
from core.settings import Settings
from tests.fakes.entra_id import FakeEntra
from tests.processes import ServedProcess, free_port

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


def fetch(url: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


class TeamsRunning:
    """`bot.teams.server.create_server` — the web application `serve --teams` runs — on a free
    port of 127.0.0.1 in this process, on an event loop of its own, in anonymous local mode, its
    answers allowed only to `connector`. `settings_for(public_url)` makes its settings; `clock`
    is what its download links take for now; `llm`, the model (None: keyword mode)."""

    def __init__(
        self,
        settings_for: Callable[[str], Settings],
        connector: FakeConnector,
        *,
        llm: LLM | None = None,
        clock: Callable[[], dt.datetime] | None = None,
    ) -> None:
        port = free_port()
        self.base = f"http://127.0.0.1:{port}"
        settings = settings_for(self.base)
        self.askbase = Askbase(settings, llm=llm)
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="teams-running", daemon=True)
        self._thread.start()

        async def start() -> web.AppRunner:
            server = create_server(self.askbase, settings, clock=clock)
            runner = web.AppRunner(server.app, access_log_class=AccessLogger)
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", port).start()
            return runner

        self.runner = asyncio.run_coroutine_threadsafe(start(), self.loop).result(60)
        self.client = TeamsClient(f"{self.base}/api/messages", connector.service_url)
        self._closed = False

    @property
    def state(self):  # type: ignore[no-untyped-def]
        return self.askbase.state

    def get(self, url: str) -> tuple[int, dict[str, str], bytes]:
        return fetch(url)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(60)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.askbase.close()
