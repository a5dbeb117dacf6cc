"""Configuration: YAML < ASKBASE_* env < platform env names; secrets never print."""

from pathlib import Path

from core.settings import ROOT, Settings, load_settings


def test_shipped_yaml_spells_out_the_code_defaults(monkeypatch):
    monkeypatch.setenv("ASKBASE_CONFIG", str(ROOT / "config" / "askbase.yaml"))
    from_yaml = load_settings()
    monkeypatch.setenv("ASKBASE_CONFIG", "/nonexistent.yaml")
    defaults = load_settings()
    assert from_yaml.model_dump(exclude={"var_dir"}) == defaults.model_dump(exclude={"var_dir"})


def test_yaml_then_env_then_platform_env(tmp_path: Path, monkeypatch):
    config = tmp_path / "askbase.yaml"
    config.write_text(
        "default_db: sales\n"
        "databases:\n  sales: {url: 'sqlite:///x.db', deny_tables: [payroll]}\n"
        "llm: {model: from-yaml, timeout_s: 5}\nengine: {row_cap: 10}\n"
    )
    monkeypatch.setenv("ASKBASE_CONFIG", str(config))
    monkeypatch.setenv("ASKBASE_ENGINE__ROW_CAP", "20")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-secret")
    monkeypatch.setenv("PORT", "8080")
    s = load_settings()
    assert s.default_db == "sales"
    assert s.databases["sales"].deny_tables == ["payroll"]
    assert s.llm.model == "from-yaml" and s.llm.timeout_s == 5  # YAML kept where env is silent
    assert s.engine.row_cap == 20  # env beats YAML
    assert s.llm.configured and s.llm.base_url == "http://127.0.0.1:1/v1"
    assert s.slack.port == 8080
    dumped = repr(s) + str(s.model_dump())
    assert "sk-secret" not in dumped and "xoxb-secret" not in dumped


def test_state_url_defaults_to_a_file_under_var(tmp_path):
    s = Settings(var_dir=str(tmp_path))
    assert s.state_database_url == f"sqlite:///{tmp_path / 'state.sqlite'}"


def test_model_per_task_falls_back_to_default():
    s = Settings(llm={"model": "big", "models": {"understand": "small"}})
    assert s.llm.model_for("understand") == "small"
    assert s.llm.model_for("generate") == "big"
