"""The lock of a value index across real processes (core/index_refresh.py): a worker's scheduled
refresh leaves to another process the index it is writing, and `python -m bot index refresh` waits
for the one running. Each side is told when to go through a pipe, never by a timer.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from core.askbase import Askbase
from core.demo import ensure_demo
from core.index_refresh import index_database, index_schedules, refresh_due
from core.settings import load_settings
from core.values import iter_index_values
from core.values.lock import index_lock
from tests.processes import ROOT

pytestmark = pytest.mark.slow  # starts processes

TICK = dt.datetime(2025, 3, 4, 3, tzinfo=dt.UTC)
GRACE = 3600.0
WAIT_S = 120  # a bound on a child that is told at once to go on; never a measured time

HOLD = textwrap.dedent(
    """
    import sys
    from core.askbase import Askbase
    from core.values.lock import index_lock
    from core.settings import load_settings

    app = Askbase(load_settings())
    with index_lock(app.database("ops"), wait=False) as held:
        print("held" if held else "busy", flush=True)
        sys.stdin.readline()
    """
)


@pytest.fixture
def env(tmp_path, demo_var, state_url, monkeypatch):
    ops = tmp_path / "ops.sqlite"
    shutil.copyfile(ensure_demo(demo_var), ops)
    monkeypatch.setenv("ASKBASE_VAR_DIR", str(tmp_path / "var"))
    monkeypatch.setenv("ASKBASE_STATE_URL", state_url)
    monkeypatch.setenv("ASKBASE_DATABASES__OPS__URL", f"sqlite:///{ops}")
    monkeypatch.setenv("ASKBASE_DATABASES__OPS__INDEX_REFRESH", "0 3 * * *")
    with sqlite3.connect(ops) as conn:
        conn.execute("UPDATE location SET city = 'Reykjavík' WHERE id = 1")
    conn.close()
    return {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.fixture
def app(env):
    app = Askbase(load_settings())
    yield app
    app.close()


def cities(app: Askbase) -> set[str]:
    return {v for t, c, v in iter_index_values(app.database("ops")) if (t, c) == ("location", "city")}


def test_a_scheduled_refresh_leaves_to_another_process_the_index_it_holds(env, app):
    schedules = index_schedules(app.settings)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline().strip() == "held"
        busy = refresh_due(app, schedules, TICK + dt.timedelta(seconds=5), grace_s=GRACE)
        assert [r.status for r in busy] == ["busy"]
        assert not cities(app)  # nothing written meanwhile
        holder.stdin.close()
        assert holder.wait(WAIT_S) == 0
    finally:
        if holder.poll() is None:
            holder.kill()
    done = refresh_due(app, schedules, TICK + dt.timedelta(seconds=10), grace_s=GRACE)
    assert [r.status for r in done] == ["refreshed"]
    assert "Reykjavík" in cities(app)


def test_the_index_command_waits_for_the_refresh_running_in_another_process(env, app):
    index_database(app, "ops", "build")
    with sqlite3.connect(os.environ["ASKBASE_DATABASES__OPS__URL"].removeprefix("sqlite:///")) as conn:
        conn.execute("UPDATE location SET city = 'Akureyri' WHERE id = 1")
    conn.close()
    with index_lock(app.database("ops")) as held:
        assert held
        command = subprocess.Popen(
            [sys.executable, "-m", "bot", "index", "refresh", "--db", "ops"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert command.stderr is not None
            said = ""
            while "waiting for it" not in said and (line := command.stderr.readline()):
                said = line
            assert "another build or refresh of 'ops' is running; waiting for it" in said
            assert command.poll() is None
        except BaseException:
            command.kill()
            raise
    out, err = command.communicate(timeout=WAIT_S)
    assert command.returncode == 0, err
    assert json.loads(out.splitlines()[-1])["rewritten"] is True  # it refreshed after the lock
    assert "Akureyri" in cities(app)
