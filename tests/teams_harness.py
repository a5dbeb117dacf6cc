"""`python -m bot serve --teams` as a deployment runs it, against a fake Bot Connector (and Entra)."""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

from tests.fakes.bot_connector import FakeConnector, TeamsClient
from tests.processes import ServedProcess


class TeamsServed(ServedProcess):
    """`serve --teams`, with a client that posts activities to its /api/messages as Teams does."""

    def __init__(
        self, env: dict[str, str], tmp_path: Path, connector: FakeConnector, wait: bool = True
    ) -> None:
        super().__init__(["serve", "--teams"], env, tmp_path / "teams.log", wait=wait)
        self.client = TeamsClient(f"{self.base}/api/messages", connector.service_url)

    def get(self, url: str) -> tuple[int, dict[str, str], bytes]:
        try:
            with urllib.request.urlopen(url, timeout=30) as r:
                return r.status, dict(r.headers), r.read()
        except urllib.error.HTTPError as exc:
            return exc.code, dict(exc.headers), exc.read()


def teams_env(tmp_path: Path, var: Path, **extra: str) -> dict[str, str]:
    return {
        "ASKBASE_VAR_DIR": str(var),
        "ASKBASE_STATE_URL": f"sqlite:///{tmp_path / 'state.sqlite'}",
        **extra,
    }
