"""Installed anywhere: package data, the var dir, the console script (.ci/check_wheel installs the wheel)."""

from __future__ import annotations

import fnmatch
import tomllib
from importlib import metadata, resources
from pathlib import Path

from bot.cli import main, run
from core import demo, insurance_demo
from core.prompts import render
from core.settings import ROOT, default_config_file, default_var_dir, is_checkout, load_settings


def test_every_file_in_prompts_and_config_ships_in_the_wheel():
    """A new prompt or config file that no package-data pattern covers would be missing once installed."""
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    for package in ("prompts", "config"):
        files = [p.name for p in (ROOT / package).iterdir() if p.is_file() and p.suffix != ".py"]
        assert files
        missing = [f for f in files if not any(fnmatch.fnmatch(f, pat) for pat in package_data[package])]
        assert not missing, f"{package}/{missing} would not be installed"


def test_prompts_and_the_default_config_are_read_as_package_data(monkeypatch):
    system = resources.files("prompts").joinpath("repair_json.md").read_text().split("[user]")[0]
    assert render("repair_json", schema="{}", reply="{", problem="x")[0]["content"] in system
    monkeypatch.delenv("ASKBASE_CONFIG")
    assert default_config_file() == Path(str(resources.files("config").joinpath("askbase.yaml")))
    assert load_settings().llm.model == "gpt-4o-mini"  # read from the shipped YAML
    for catalog, name in (
        (demo.CATALOG_PATH, "demo_catalog.yaml"),
        (insurance_demo.CATALOG_PATH, "insurance_catalog.yaml"),
    ):
        assert catalog == Path(str(resources.files("config").joinpath(name))) and catalog.is_file()


def test_the_var_dir_is_the_env_else_the_checkouts_var_else_the_users_data_dir(tmp_path, monkeypatch):
    monkeypatch.delenv("ASKBASE_VAR_DIR")
    assert is_checkout() and default_var_dir() == ROOT / "var"  # running from this clone
    site_packages = tmp_path / "site-packages"  # what ROOT is in an installed wheel
    site_packages.mkdir()
    (site_packages / "pyproject.toml").write_text('[project]\nname = "someone-else"\n')
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_var_dir(site_packages) == tmp_path / "data" / "askbase"
    monkeypatch.setenv("ASKBASE_VAR_DIR", str(tmp_path / "mine"))
    assert default_var_dir(site_packages) == tmp_path / "mine"
    assert load_settings().state_database_url == f"sqlite:///{tmp_path / 'mine' / 'state.sqlite'}"


def test_the_askbase_console_script_runs_the_same_cli_as_python_m_bot(settings, capsys):
    (script,) = metadata.entry_points(group="console_scripts", name="askbase")
    assert script.load() is run  # as bot/__main__.py: main() in a process of its own
    assert main(["ask", "How many clients are there?"]) == 0
    assert "300" in capsys.readouterr().out
