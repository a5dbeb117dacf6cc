"""`python -m bot catalog show`: an admin sees the join patterns and can paste them into the catalog YAML.

The first test starts the command as typed in a shell; the others call its entry point in this
process (the `cli` fixture), as tests/integration/test_cli.py does.
"""

from __future__ import annotations

import yaml

from core.insurance_demo import CATALOG_PATH, build_insurance
from tests.integration.test_cli import run_process


def configured(tmp_path) -> dict[str, str]:
    db = build_insurance(tmp_path / "insurance.sqlite")
    config = tmp_path / "askbase.yaml"
    config.write_text(
        yaml.safe_dump({"databases": {"insurance": {"url": f"sqlite:///{db}", "catalog": str(CATALOG_PATH)}}})
    )
    return {"ASKBASE_CONFIG": str(config), "ASKBASE_VAR_DIR": str(tmp_path / "var")}


def test_catalog_show_lists_the_patterns_that_decide_joins(tmp_path):
    proc = run_process(["catalog", "show", "--db", "insurance"], configured(tmp_path))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "agreement → broker_agreement, policy [detected]" in out
    assert "agreement_party_role: party plays a role in agreement; party_role_code: AG = agent" in out
    assert "claim_amount → expense_payment, expense_reserve, loss_payment, loss_reserve [detected]" in out
    assert "policy_amount reaches policy directly and through policy_coverage_detail" in out
    assert "premium_payment.policy_amount_id → policy_amount.policy_amount_id [inferred" in out
    assert "ignore: true" in out and "\npatterns:\n" in out
    # the missing claims_office table is reported, not fatal
    assert "claims_office is not in the database" in proc.stderr


def test_the_yaml_it_prints_is_a_catalog_patterns_block(cli, tmp_path):
    proc = cli(["catalog", "show", "--db", "insurance", "--yaml"], configured(tmp_path))
    assert proc.returncode == 0, proc.stderr
    block = yaml.safe_load(proc.stdout)
    kinds = {(p["kind"], p["root"]) for p in block["patterns"]}
    assert {("role", "claim_party_role"), ("typed_fact", "claim_amount"), ("subtype", "party")} <= kinds
    role = next(p for p in block["patterns"] if p["root"] == "claim_party_role")
    assert role["column"] == "role_code" and role["codes"]["CL"] == "claimant"


def test_an_unknown_database_is_a_usage_error(cli, tmp_path):
    proc = cli(["catalog", "show", "--db", "nope"], configured(tmp_path))
    assert proc.returncode == 2 and "no database named 'nope'" in proc.stderr
