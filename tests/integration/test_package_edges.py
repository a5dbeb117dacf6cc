"""The edges of the package (issue 36): what the wheel ships, what a plain install needs, what the
extras add, the lockfile CI installs from, and database work outside questions going through
Askbase's door (access, audit).

.ci/check_wheel does the same with a real wheel in a fresh venv (no extras, then `[slack]`); these
run in a second, without building or installing anything.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version
from setuptools import find_packages

from bot import extras as platform_extras
from core import extras
from core.access import Principal
from core.askbase import AccessRefused, Askbase
from core.settings import AccessRule
from core.state.audit import entries_since, parse_since
from tests.paths import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
LOCK = ROOT / "requirements" / "dev.lock"

# What a plain `pip install askbase` must not pull in (the extras' distributions).
OPTIONAL = {
    "slack-bolt",
    "slack-sdk",
    "gunicorn",
    "matplotlib",
    "psycopg",
    "pymysql",
    "greenlet",
    "aiohttp",
    "pyjwt",
    "microsoft-agents-activity",
    "microsoft-agents-hosting-core",
    "microsoft-agents-hosting-aiohttp",
    "microsoft-agents-authentication-msal",
    "datasketch",
}


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return found


def test_core_and_bot_never_import_tests_and_nothing_that_ships_imports_the_benchmarks():
    """core/bench is left out of the wheel: a shipped module that imported it would fail installed."""
    for path in sorted([*(ROOT / "core").rglob("*.py"), *(ROOT / "bot").rglob("*.py")]):
        names = _imports(path)
        where = path.relative_to(ROOT)
        assert not any(n == "tests" or n.startswith("tests.") for n in names), f"{where} imports tests"
        if "bench" not in where.parts:
            assert not any(n.startswith("core.bench") for n in names), f"{where} imports core.bench"


def test_the_wheel_leaves_out_the_benchmarks_and_the_tests():
    found = PYPROJECT["tool"]["setuptools"]["packages"]["find"]
    packages = find_packages(str(ROOT), include=found["include"], exclude=found["exclude"])
    assert "core" in packages and "bot" in packages and "core.keyword" in packages
    assert not [p for p in packages if p.startswith(("core.bench", "tests"))], packages
    assert PYPROJECT["tool"]["setuptools"]["include-package-data"] is False  # only the listed data ships


def test_the_base_install_requires_no_extra_and_every_extra_named_in_messages_exists():
    base = {canonicalize_name(Requirement(r).name) for r in PYPROJECT["project"]["dependencies"]}
    assert not base & OPTIONAL, base & OPTIONAL
    defined = PYPROJECT["project"]["optional-dependencies"]
    assert platform_extras.installed is extras.installed  # bot/extras.py registered its extras
    assert {"slack", "teams", "charts", "postgres", "mysql"} <= set(extras.WHAT) <= set(defined)
    assert {"slack", "teams", "charts", "postgres", "mysql", "duckdb", "snowflake", "bigquery"} <= set(
        defined
    )
    assert extras.message("slack") == "Slack support is not installed: pip install 'askbase[slack]'"


def _closure(extra_names: set[str]) -> list[Requirement]:
    """Every requirement of the base and of `extra_names`, the askbase[...] self-references followed."""
    optional = PYPROJECT["project"]["optional-dependencies"]
    todo, seen = list(extra_names), set()
    found = [Requirement(r) for r in PYPROJECT["project"]["dependencies"]]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for text in optional[name]:
            req = Requirement(text)
            if canonicalize_name(req.name) == "askbase":
                todo.extend(req.extras)
            else:
                found.append(req)
    return found


def _pins(lock: Path) -> dict[str, list[tuple[Version, str]]]:
    pins: dict[str, list[tuple[Version, str]]] = {}
    for line in lock.read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        req = Requirement(line)
        (spec,) = req.specifier  # name==version ; markers
        pins.setdefault(canonicalize_name(req.name), []).append(
            (Version(spec.version), str(req.marker or ""))
        )
    return pins


def test_the_lock_pins_a_version_of_everything_pyproject_asks_for_that_satisfies_it():
    """A dependency changed in pyproject.toml without `make lock` fails here, not on a fresh machine."""
    pins = _pins(LOCK)
    env = default_environment()
    stale = []
    for req in _closure({"dev"}):
        if req.marker is not None and not req.marker.evaluate(env):
            continue
        versions = [v for v, _ in pins.get(canonicalize_name(req.name), [])]
        if not any(req.specifier.contains(v, prereleases=True) for v in versions):
            stale.append(f"{req} (locked: {', '.join(map(str, versions)) or 'nothing'})")
    assert not stale, f"requirements/dev.lock is stale, run `make lock`: {stale}"
    for name in ("fakesnow", "dbt"):  # the venvs of their own are locked too
        assert (ROOT / "requirements" / f"{name}.lock").is_file()


# A process in which the extras' modules cannot be imported, as after `pip install askbase`.
BLOCKED = textwrap.dedent(
    """
    import json, sys
    import bot.extras
    from core.extras import MODULES
    OPTIONAL = {m for modules in MODULES.values() for m in modules}
    class Uninstalled:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in OPTIONAL:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    sys.meta_path.insert(0, Uninstalled())
    from bot.cli import main
    results = []
    for args in json.loads(sys.argv[1]):
        code = main(args)
        print("\\x00", file=sys.stderr, flush=True)
        results.append(code)
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in OPTIONAL)
    print(json.dumps({"codes": results, "loaded": loaded}))
    """
)


@pytest.mark.slow
def test_without_extras_questions_are_answered_and_what_needs_one_names_it(tmp_path, demo_var):
    commands = [
        ["ask", "How many clients are there?", "--json"],
        ["serve", "--http"],
        ["serve", "--teams"],
        ["worker"],
        ["ask", "How many clients are there?", "--db", "postgresql://askbase@127.0.0.1:9/nowhere"],
        ["ask", "How many clients are there?", "--db", "mysql://askbase@127.0.0.1:9/nowhere"],
        ["index", "build", "--db", "demo"],
    ]
    env = {**os.environ, "ASKBASE_VAR_DIR": str(tmp_path / "var")}
    ran = subprocess.run(
        [sys.executable, "-c", BLOCKED, json.dumps(commands)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    result = json.loads(ran.stdout.strip().splitlines()[-1])
    said = ran.stderr.split("\x00")
    assert result["loaded"] == []
    assert result["codes"] == [0, 2, 2, 2, 1, 1, 0], ran.stderr
    answer = json.loads(ran.stdout.splitlines()[0])
    assert answer["status"] == "answer" and answer["mode"] == "keyword" and answer["rows"] == [[300]]
    assert said[1].strip() == "Slack support is not installed: pip install 'askbase[slack]'"
    assert said[2].strip() == "Microsoft Teams support is not installed: pip install 'askbase[teams]'"
    assert said[3].strip() == "Slack support is not installed: pip install 'askbase[slack]'"
    assert (
        "could not be opened: The PostgreSQL driver is not installed: pip install 'askbase[postgres]'"
        in said[4]
    )
    assert (
        "could not be opened: The MySQL/MariaDB driver is not installed: pip install 'askbase[mysql]'"
        in said[5]
    )
    assert "Traceback" not in ran.stderr


def test_a_state_database_whose_driver_is_missing_names_the_extra(monkeypatch, cli):
    monkeypatch.setitem(extras.MODULES, "postgres", ("askbase_no_such_module",))
    ran = cli(["db", "current"], {"ASKBASE_STATE_URL": "postgresql+psycopg://askbase@127.0.0.1:9/state"})
    assert ran.returncode == 2
    assert ran.stderr.strip() == "The PostgreSQL driver is not installed: pip install 'askbase[postgres]'"


def test_charts_are_left_out_when_matplotlib_is_not_installed(monkeypatch):
    from bot.charts import chart_spec

    columns, rows = ("country", "clients"), [("FR", 10), ("DE", 20), ("IT", 5)]
    assert chart_spec(columns, rows) is not None
    monkeypatch.setattr(extras, "installed", lambda extra: extra != "charts")
    monkeypatch.setattr("bot.charts.installed", extras.installed)
    assert chart_spec(columns, rows) is None


def _audit(settings) -> list[dict]:
    app = Askbase(settings)
    try:
        return entries_since(app.state, parse_since("1h"))
    finally:
        app.close()


def test_index_and_catalog_commands_are_audited_like_any_run(cli, settings, tmp_path):
    env = {"ASKBASE_VAR_DIR": str(tmp_path / "var")}
    assert cli(["index", "build", "--db", "demo"], env).returncode == 0
    assert cli(["catalog", "check", "--db", "demo"], env).returncode == 0
    assert cli(["catalog", "show", "--db", "demo", "--yaml"], env).returncode == 0
    rows = [(e["source"], e["question"], e["database"], e["status"], e["mode"]) for e in _audit(settings)]
    assert rows == [
        ("index", "index build", "demo", "answer", None),
        ("catalog", "catalog check", "demo", "answer", None),
        ("catalog", "catalog show --yaml", "demo", "answer", None),
    ]
    built = _audit(settings)[0]
    assert built["rows"] > 1000 and built["trace_id"] and built["user"] is None and built["sql"] is None


def test_work_outside_questions_goes_through_access_and_is_audited_when_refused_or_failed(settings):
    restricted = settings.model_copy(
        update={
            "access": settings.access.model_copy(
                update={"rules": [AccessRule(databases=["demo"], users=["U0ANALYST"])]}
            )
        }
    )
    app = Askbase(restricted)
    try:
        with (
            pytest.raises(AccessRefused),
            app.operating("index build", db="demo", source="index", principal=Principal.of(user="U0OTHER")),
        ):
            raise AssertionError("refused before the work runs")
        with pytest.raises(RuntimeError), app.operating("catalog check", db="demo", source="catalog") as run:
            raise RuntimeError("boom")
        with app.operating("catalog import osi x.yaml", db="demo", source="catalog") as run:
            run.failed("x.yaml: no such file")
        entries = entries_since(app.state, parse_since("1h"))
    finally:
        app.close()
    assert [(e["user"], e["status"], e["error_kind"]) for e in entries] == [
        ("U0OTHER", "error", "access"),
        (None, "error", "internal"),
        (None, "error", "other"),
    ]
