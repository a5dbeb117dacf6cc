"""`python -m bot …` in a process of its own, as a deployment runs it: for the tests that need the
real entry points (serve --http, serve --teams, worker), a crash, or two processes at once.

Output goes to a log file the test can read (and print when something fails); a process is
stopped with SIGTERM, as a platform stops one, and killed when it has not exited 30 s later. A
served process listens on a free port and counts as started once its /healthz answers.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
START_S = 90  # a first start builds the demo database and imports everything


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def refusing_port() -> Iterator[int]:
    """A port nothing listens on for as long as it is held: bound, never listening, so a
    connection is refused — and no other test's server can take it meanwhile (a port merely
    found free can be, under load, and then something answers)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield int(s.getsockname()[1])


class BotProcess:
    """`python -m bot ARGS` with `env` on top of this environment, its output in `log`.

    `append`: a restarted process writes on after the earlier one's output; `own_group`: in a
    process group of its own, so a signal reaches every process it started (gunicorn's workers).
    """

    def __init__(
        self,
        args: Sequence[str],
        env: Mapping[str, str],
        log: Path,
        *,
        append: bool = False,
        own_group: bool = False,
    ) -> None:
        self.own_group = own_group
        self.log = log.open("a+" if append else "w+")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bot", *args],
            cwd=ROOT,
            env={**os.environ, **env},
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=own_group,
        )

    def output(self) -> str:
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def signal(self, signum: signal.Signals) -> None:
        if self.own_group:
            os.killpg(self.proc.pid, signum)
        else:
            self.proc.send_signal(signum)

    def stop(self) -> int:
        """SIGTERM, as a platform stops a process; the exit code (the log stays readable)."""
        if self.proc.poll() is None:
            self.signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()
            return self.proc.wait()

    def kill(self) -> None:
        """SIGKILL, as a container runtime or the OOM killer does: nothing gets to clean up."""
        self.signal(signal.SIGKILL)
        self.proc.wait(timeout=10)


class ServedProcess(BotProcess):
    """A `serve …` process on a free port of 127.0.0.1; with `wait`, made once /healthz answers."""

    def __init__(
        self,
        args: Sequence[str],
        env: Mapping[str, str],
        log: Path,
        *,
        wait: bool = True,
        append: bool = False,
        own_group: bool = False,
    ) -> None:
        self.port = free_port()
        super().__init__([*args, "--port", str(self.port)], env, log, append=append, own_group=own_group)
        self.base = f"http://127.0.0.1:{self.port}"
        if wait:
            self.wait_started(" ".join(args))

    def wait_started(self, what: str) -> None:
        deadline = time.monotonic() + START_S
        while True:
            try:
                with urllib.request.urlopen(f"{self.base}/healthz", timeout=1) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"{what} did not start:\n{self.output()}")
            time.sleep(0.1)
