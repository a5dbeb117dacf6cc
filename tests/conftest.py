"""Shared fixtures: an isolated environment, the fake servers, the demo database, bots, a clock.

Each helper a test file needs exists once, here: `hand` (SQL written by hand on the demo file),
`make_bot`/`bot` (the real Slack app on the demo), `clock` (time the test moves instead of
sleeping, tests/clock.py), `slack`/`fake_llm`/`plan` (the fake Slack Web API and model).
"""

from __future__ import annotations

import gc
import os
import shutil
import sqlite3
import uuid
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from bot.cli import main
from core.askbase import Askbase
from core.bench.fakes.slack_api import FakeSlack
from core.llm import LLM
from core.settings import DatabaseSettings, LLMSettings, load_settings
from core.state import clarifications, open_state
from tests.clock import Clock
from tests.fakes.openai_server import FakeOpenAI
from tests.servers import MYSQL, POSTGRES, admin_engine, content_digest, server_url, shared_copy
from tests.shared_run import run_folder, run_lock
from tests.slack_harness import Plan, RunningBot, script_llm
from tests.slack_requests import BOT_TOKEN, SIGNING_SECRET
from tests.snowflake_emulation import PYTHON as FAKESNOW_PYTHON
from tests.snowflake_emulation import Emulation, loaded, shared_emulation

PLATFORM_VARS = ("OPENAI_", "SLACK_", "ASKBASE_", "PORT", "CONNECTIONS__")
KEEP = ("ASKBASE_TEST_POSTGRES_URL", "ASKBASE_TEST_MYSQL_URL")
# Trusted by every HTTP client a test makes: a certificate nobody signs with. No test talks TLS (the
# fakes are plain HTTP on 127.0.0.1), so a test that reached a real host would fail verification;
# and a client no longer parses the system's ~150 CAs (about 40 ms, once per openai client).
NO_CA = Path(__file__).parent / "data" / "no-ca.pem"


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch, tmp_path_factory):
    """No test sees the developer's keys or config, nor the system's CAs; each gets its own var dir.

    The var dir is named, not made: Askbase creates it on first write, and most tests never write
    (making 2,600 numbered temporary directories cost seconds).
    """
    for name in list(os.environ):
        if name.startswith(PLATFORM_VARS) and name not in KEEP:
            monkeypatch.delenv(name, raising=False)
    own = tmp_path_factory.getbasetemp() / "isolated" / uuid.uuid4().hex
    monkeypatch.setenv("ASKBASE_CONFIG", str(own / "no-config.yaml"))
    monkeypatch.setenv("ASKBASE_VAR_DIR", str(own / "var"))
    monkeypatch.setenv("SSL_CERT_FILE", str(NO_CA))
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)


@pytest.fixture(scope="session")
def demo_var(tmp_path_factory) -> Path:
    """One demo database for the whole run, shared by its workers (tests/shared_run.py): built
    once, read-only afterwards. Askbase's caches of the demo on each engine (catalog, graph, value
    index) live beside it, so they too are built once per run."""
    from core.demo import ensure_demo

    var = run_folder(tmp_path_factory, "demo-var")
    with run_lock(var):
        ensure_demo(var)
    return var


@pytest.fixture(scope="session")
def migrated_state(tmp_path_factory) -> Path:
    """A SQLite state database that open_state made and brought to head, once per session.

    Each test's own state database starts as a copy of it (`state_url`): Alembic running every
    revision on a new file cost some 40 ms of CPU, and a few hundred tests a run paid it. Making
    and upgrading state databases is tested in tests/integration/test_state_migrations.py, and every test that
    starts `python -m bot` still starts it on a new one.
    """
    path = tmp_path_factory.mktemp("migrated-state") / "state.sqlite"
    open_state(f"sqlite:///{path}").dispose()
    return path


@pytest.fixture
def state_url(migrated_state, tmp_path) -> str:
    """This test's own state database at tmp_path/state.sqlite, at head and empty (see migrated_state)."""
    path = tmp_path / "state.sqlite"
    if not path.exists():
        shutil.copyfile(migrated_state, path)
    return f"sqlite:///{path}"


@pytest.fixture
def settings(demo_var, monkeypatch, state_url):
    """The demo database (shared, read-only) with a state database of this test's own: answers
    cached or verified by one test never answer another's questions."""
    monkeypatch.setenv("ASKBASE_VAR_DIR", str(demo_var))
    monkeypatch.setenv("ASKBASE_STATE_URL", state_url)
    return load_settings(var_dir=str(demo_var))


@pytest.fixture
def fake_llm():
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture
def llm_settings(fake_llm) -> LLMSettings:
    """Fast retries and a short timeout so fault tests run in milliseconds."""
    return LLMSettings(
        api_key="test-key",
        base_url=fake_llm.base_url,
        timeout_s=1.0,
        max_attempts=3,
        retry_initial_s=0.01,
        retry_max_s=0.05,
    )


# The engines the engine suite runs on: the demo on SQLite and, with the same data, its DuckDB copy
# (core/demo.py ensure_demo_duckdb) in every run; PostgreSQL and MariaDB when their servers are
# configured (ASKBASE_TEST_POSTGRES_URL, ASKBASE_TEST_MYSQL_URL: a shared read-only copy, tests/servers.py
# shared_copy); Snowflake emulated by fakesnow when .venv-fakesnow exists (one server per run,
# the demo loaded once; the engine tests of ON_FAKESNOW).
FAKESNOW = pytest.mark.skipif(
    not FAKESNOW_PYTHON.exists(), reason="needs .venv-fakesnow (make fakesnow, or .ci/run, creates it)"
)
ENGINES = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("duckdb", id="duckdb"),
    pytest.param("postgres", marks=pytest.mark.postgres, id="postgres"),
    pytest.param("mysql", marks=pytest.mark.mysql, id="mysql"),
    pytest.param("snowflake", marks=FAKESNOW, id="snowflake"),
]
SERVER_ENVS = {"postgres": POSTGRES, "mysql": MYSQL}
# fakesnow answers a question some five times slower than the other engines (every statement goes
# through its SQL translation and over HTTP; an LLM-mode question reads example rows of every
# table), so on it run the engine tests whose outcome depends on the engine's SQL and names: the
# SQL keyword mode writes, the pipeline's (generated, guarded, run, revised on the engine's own
# errors), stored SQL run again, the executor, and result headers read from the catalog's names.
ON_FAKESNOW = frozenset(
    {
        "tests/unit/test_keyword.py",
        "tests/integration/test_pipeline.py",
        "tests/unit/test_rerun.py",
        "tests/integration/test_execute.py",
        "tests/unit/test_summary.py",
    }
)


@pytest.fixture(params=ENGINES)
def engine(request) -> str:
    """The engine a test runs on; tests that take `demo_db` or `engine_settings` run once per engine."""
    return str(request.param)


@pytest.fixture(scope="session")
def demo_duckdb(demo_var) -> Path:
    """The DuckDB copy of the run's demo, made by the first worker that needs it (under the run's
    lock: two processes must not write it at once)."""
    from core.demo import ensure_demo_duckdb

    with run_lock(demo_var):
        return ensure_demo_duckdb(demo_var)


@pytest.fixture(scope="session")
def fakesnow_folder(tmp_path_factory) -> Path:
    return run_folder(tmp_path_factory, "fakesnow")


@pytest.fixture(scope="session")
def fakesnow(fakesnow_folder) -> Emulation:
    """The Snowflake emulation (tests/snowflake_emulation.py): one server for the whole run,
    started by the first worker that needs it, ending with the run."""
    return shared_emulation(fakesnow_folder)


@pytest.fixture(scope="session")
def demo_snowflake(fakesnow, fakesnow_folder, demo_var) -> DatabaseSettings:
    """The demo on the emulation, loaded once per run (database ASKBASE_DEMO, schema PUBLIC)."""
    from core.demo import CATALOG_PATH, DEMO_DESCRIPTION

    loaded(fakesnow_folder, demo_var / "demo.sqlite", "ASKBASE_DEMO", fakesnow)
    return DatabaseSettings(
        url=fakesnow.url("ASKBASE_DEMO", "PUBLIC"),
        warehouse={"connect": fakesnow.connect_args},
        catalog=str(CATALOG_PATH),
        description=DEMO_DESCRIPTION,
    )


def demo_on(engine: str, request) -> DatabaseSettings:
    """The demo database's settings on `engine` (the same data, the same catalog, everywhere)."""
    from core.demo import CATALOG_PATH, DEMO_DESCRIPTION, demo_duckdb_settings, demo_settings

    var = request.getfixturevalue("demo_var")
    if engine == "sqlite":
        return demo_settings(var)
    if engine == "duckdb":
        request.getfixturevalue("demo_duckdb")
        return demo_duckdb_settings(var)
    if engine == "snowflake":
        return request.getfixturevalue("demo_snowflake")
    return DatabaseSettings(
        url=shared_copy(SERVER_ENVS[engine], var / "demo.sqlite"),
        catalog=str(CATALOG_PATH),
        description=DEMO_DESCRIPTION,
    )


def engine_var(settings, engine: str) -> Path:
    """Where Askbase keeps the demo's caches (catalog, graph, value index) on `engine`: one folder
    per engine, so the engines' catalogs of the one name "demo" never take each other's place."""
    var = Path(settings.var_dir)
    return var if engine == "sqlite" else var / "engines" / engine


def settings_on(settings, engine: str, request):
    """`settings` with the demo on `engine` ("sqlite": as they are; else its copy on that engine)."""
    if engine == "sqlite":
        return settings
    databases = {**settings.databases, "demo": demo_on(engine, request)}
    return settings.model_copy(
        update={"databases": databases, "default_db": "demo", "var_dir": str(engine_var(settings, engine))}
    )


def copy_on(engine: str, source: Path, request, prefix: str) -> dict[str, Any]:
    """A test's own SQLite file `source` on `engine`, as the fields of its DatabaseSettings: the file
    itself, a DuckDB copy beside it, a shared read-only copy on the server (`<prefix>_<digest>`,
    tests/servers.py shared_copy), or a copy on the run's emulation, loaded once per run."""
    if engine == "sqlite":
        return {"url": f"sqlite:///{source}"}
    if engine == "duckdb":
        from core.warehouse.duckdb import copy_sqlite

        return {"url": f"duckdb:///{copy_sqlite(source, source.with_suffix('.duckdb'))}"}
    if engine in SERVER_ENVS:
        return {"url": shared_copy(SERVER_ENVS[engine], source, prefix)}
    emu: Emulation = request.getfixturevalue("fakesnow")
    folder: Path = request.getfixturevalue("fakesnow_folder")
    database = f"{prefix}_{content_digest(source)}".upper()
    loaded(folder, source, database, emu)
    return {"url": emu.url(database, "PUBLIC"), "warehouse": {"connect": emu.connect_args}}


@pytest.fixture
def engine_settings(settings, engine, request):
    """The settings with the demo on each engine of ENGINES: what an Askbase built from them
    answers from (the scripted-model LLM tests run on every one)."""
    return settings_on(settings, engine, request)


@pytest.fixture
def demo_db(settings, engine, request):
    """The demo database, on each engine of ENGINES (each engine's caches kept apart)."""
    from core.database import Database

    db = Database(name="demo", config=demo_on(engine, request), var_dir=engine_var(settings, engine))
    yield db
    db.dispose()


@pytest.fixture
def postgres_state() -> Iterator[str]:
    """The URL of a new, empty PostgreSQL database (dropped afterwards): a state database of its own."""
    name = f"askbase_state_{uuid.uuid4().hex[:8]}"
    admin = admin_engine("ASKBASE_TEST_POSTGRES_URL").execution_options(isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(server_url("ASKBASE_TEST_POSTGRES_URL")).set(database=name).render_as_string(False)
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture
def hand(demo_var) -> Callable[..., list[tuple[Any, ...]]]:
    """SQL written by hand on the demo database (or the SQLite file `path`): what an answer must equal."""

    def run(sql: str, path: Path | None = None) -> list[tuple[Any, ...]]:
        with closing(sqlite3.connect(path or demo_var / "demo.sqlite")) as conn:
            return [tuple(row) for row in conn.execute(sql)]

    return run


@dataclass(frozen=True)
class Ran:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def cli(monkeypatch, capsys) -> Callable[[list[str], dict[str, str]], Ran]:
    """`python -m bot ARGS` with `env` exported, in this process (bot.cli.main, what python -m bot and
    askbase run): exit code and what it printed. A test that needs the process itself starts one."""

    def run(args: list[str], env: dict[str, str]) -> Ran:
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        capsys.readouterr()
        code = main(args)
        out = capsys.readouterr()
        return Ran(code, out.out, out.err)

    return run


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    """A fake Slack Web API on 127.0.0.1 that records every call (core/bench/fakes/slack_api.py)."""
    with FakeSlack() as fake:
        yield fake


@pytest.fixture
def plan(fake_llm) -> Plan:
    """What the scripted model answers to every question; tests change it between questions."""
    p = Plan()
    script_llm(fake_llm, p)
    return p


@pytest.fixture
def make_bot(slack, demo_var, state_url, llm_settings) -> Iterator[Callable[..., RunningBot]]:
    """Start the real Slack app (tests/slack_harness.py) on the demo database; closed after the test.

    `llm=True` (default): the fake model answers and keyword fallback is off, so a test sees the
    LLM path; `llm=False`: no key, keyword mode. `other_slack=` another fake Slack than the
    `slack` fixture (close the bot before it stops); `slack_settings=` merges into the slack
    section; other keywords are Settings fields. Bots made in one test share its state database,
    as processes of one deployment do. They close before the fake Slack stops, so nothing still
    answering retries against a closed port.
    """
    running: list[RunningBot] = []

    def make(
        *,
        llm: bool = True,
        other_slack: FakeSlack | None = None,
        slack_settings: dict[str, Any] | None = None,
        **overrides: Any,
    ) -> RunningBot:
        fake = other_slack or slack
        engine = {**({"fallback_to_keyword": False} if llm else {}), **overrides.pop("engine", {})}
        settings = load_settings(
            var_dir=str(demo_var),
            state_url=state_url,
            slack={
                "bot_token": BOT_TOKEN,
                "signing_secret": SIGNING_SECRET,
                "api_base_url": fake.base_url,
                **(slack_settings or {}),
            },
            engine=engine,
            **overrides,
        )
        bot = RunningBot(Askbase(settings, llm=LLM(llm_settings) if llm else None), fake)
        running.append(bot)
        return bot

    yield make
    for bot in running:
        bot.close()


@pytest.fixture
def bot(make_bot) -> RunningBot:
    """The Slack app with the fake model answering (see make_bot)."""
    return make_bot()


@pytest.fixture
def clock(monkeypatch) -> Clock:
    """Now, moved by the test (tests/clock.py): pass it to workers and runners; clarifications
    (asked, expires, swept) read it too. `clock.advance(61)` instead of `time.sleep(61)`."""
    c = Clock()
    monkeypatch.setattr(clarifications, "_now", c)
    return c


def pytest_collection_finish(session):
    """What is alive once the tests are collected (the app's modules, the libraries, the tests
    themselves) stays alive until the end: frozen, the garbage collector stops walking it again on
    every full collection, and full collections come ten times less often. They ran every dozen
    tests or so and walked 300,000 objects each time: a sixth of the CPU the tests spent. Only
    cycles are affected (reference counting frees everything else at once), and each test's own
    garbage is still collected."""
    gc.collect()
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, 100)


def _keyword_pending() -> frozenset[str]:
    """Keyword-mode tests the grammar does not pass yet (tests/data/keyword_pending.txt)."""
    path = Path(__file__).parent / "data" / "keyword_pending.txt"
    lines = path.read_text().splitlines() if path.is_file() else []
    return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))


FAKESNOW_SUBSET = (
    "on fakesnow only the engine tests whose outcome depends on the SQL dialect run "
    "(tests/conftest.py ON_FAKESNOW): the others read the catalog or ask again what those ask"
)


def _engine_of(item) -> str | None:
    """The engine of ENGINES an engine test runs on (its `engine` parameter, or test_keyword's `app`)."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    value = params.get("engine", params.get("app"))
    return value if isinstance(value, str) else None


def pytest_collection_modifyitems(config, items):
    """Tests marked slow go first (long jobs first, as a scheduler packs them): the quick ones then fill
    the gaps between them on every worker, instead of a long one starting last and holding up the end
    of the run. The order is the same in every worker, as xdist requires; each test still runs alone."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
    pending = _keyword_pending()
    for item in items:
        if item.nodeid in pending:
            item.add_marker(pytest.mark.xfail(strict=True, reason="not yet read by keyword mode's grammar"))
        if _engine_of(item) == "snowflake" and item.nodeid.split("::")[0] not in ON_FAKESNOW:
            item.add_marker(pytest.mark.skip(reason=FAKESNOW_SUBSET))
        if "postgres" in item.keywords and not os.environ.get("ASKBASE_TEST_POSTGRES_URL"):
            item.add_marker(pytest.mark.skip(reason="ASKBASE_TEST_POSTGRES_URL is not set"))
        if "mysql" in item.keywords and not os.environ.get("ASKBASE_TEST_MYSQL_URL"):
            item.add_marker(pytest.mark.skip(reason="ASKBASE_TEST_MYSQL_URL is not set"))
