"""Shared fixtures: an isolated environment, the fake OpenAI server, the demo database."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.settings import LLMSettings, load_settings
from tests.fakes.openai_server import FakeOpenAI

PLATFORM_VARS = ("OPENAI_", "SLACK_", "ASKBASE_", "PORT", "CONNECTIONS__")
KEEP = ("ASKBASE_TEST_POSTGRES_URL", "ASKBASE_TEST_MYSQL_URL")


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch, tmp_path):
    """No test sees the developer's keys or config; each gets its own var dir."""
    for name in list(os.environ):
        if name.startswith(PLATFORM_VARS) and name not in KEEP:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ASKBASE_CONFIG", str(tmp_path / "no-config.yaml"))
    monkeypatch.setenv("ASKBASE_VAR_DIR", str(tmp_path / "var"))


@pytest.fixture(scope="session")
def demo_var(tmp_path_factory) -> Path:
    """One demo database for the whole session (built once, read-only afterwards)."""
    from core.demo import ensure_demo

    var = tmp_path_factory.mktemp("demo-var")
    ensure_demo(var)
    return var


@pytest.fixture
def settings(demo_var, monkeypatch, tmp_path):
    """The demo database (shared, read-only) with a state database of this test's own: answers
    cached or verified by one test never answer another's questions."""
    monkeypatch.setenv("ASKBASE_VAR_DIR", str(demo_var))
    monkeypatch.setenv("ASKBASE_STATE_URL", f"sqlite:///{tmp_path / 'state.sqlite'}")
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


@pytest.fixture
def demo_db(settings):
    from core.database import Databases

    dbs = Databases(settings)
    db = dbs.get("demo")
    yield db
    dbs.close()


@pytest.fixture
def slack():
    """A fake Slack Web API on 127.0.0.1 that records every call (tests/fakes/slack_api.py)."""
    from tests.fakes.slack_api import FakeSlack

    with FakeSlack() as fake:
        yield fake


@pytest.fixture
def plan(fake_llm):
    """What the scripted model answers to every question; tests change it between questions."""
    from tests.slack_harness import Plan, script_llm

    p = Plan()
    script_llm(fake_llm, p)
    return p


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "postgres" in item.keywords and not os.environ.get("ASKBASE_TEST_POSTGRES_URL"):
            item.add_marker(pytest.mark.skip(reason="ASKBASE_TEST_POSTGRES_URL is not set"))
        if "mysql" in item.keywords and not os.environ.get("ASKBASE_TEST_MYSQL_URL"):
            item.add_marker(pytest.mark.skip(reason="ASKBASE_TEST_MYSQL_URL is not set"))
