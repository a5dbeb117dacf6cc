"""`python -m bot serve --teams` as a deployment runs it, against a fake Bot Connector (and Entra)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.fakes.bot_connector import FakeConnector, TeamsClient
from tests.test_slack_serve import free_port

ROOT = Path(__file__).resolve().parent.parent


class TeamsServed:
    def __init__(
        self, env: dict[str, str], tmp_path: Path, connector: FakeConnector, wait: bool = True
    ) -> None:
        self.port = free_port()
        self.log = (tmp_path / "teams.log").open("w+")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bot", "serve", "--teams", "--port", str(self.port)],
            cwd=ROOT,
            env={**os.environ, **env},
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        self.base = f"http://127.0.0.1:{self.port}"
        self.client = TeamsClient(f"{self.base}/api/messages", connector.service_url)
        if not wait:
            return
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{self.base}/healthz", timeout=1) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"serve --teams did not start:\n{self.output()}")
            time.sleep(0.1)

    def get(self, url: str) -> tuple[int, dict[str, str], bytes]:
        try:
            with urllib.request.urlopen(url, timeout=30) as r:
                return r.status, dict(r.headers), r.read()
        except urllib.error.HTTPError as exc:
            return exc.code, dict(exc.headers), exc.read()

    def output(self) -> str:
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


def teams_env(tmp_path: Path, var: Path, **extra: str) -> dict[str, str]:
    return {
        "ASKBASE_VAR_DIR": str(var),
        "ASKBASE_STATE_URL": f"sqlite:///{tmp_path / 'state.sqlite'}",
        **extra,
    }
