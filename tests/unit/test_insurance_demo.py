"""The insurance demo database: the same file on every machine, and data that keeps its own rules."""

from __future__ import annotations

import sqlite3

from core.insurance_demo import INSURANCE_VERSION, build_insurance, ensure_insurance, main


def dump(path) -> list[str]:
    con = sqlite3.connect(path)
    try:
        return list(con.iterdump())
    finally:
        con.close()


def test_two_builds_write_the_same_rows(tmp_path):
    a = build_insurance(tmp_path / "a.sqlite")
    b = build_insurance(tmp_path / "b.sqlite")
    assert dump(a) == dump(b)


def test_the_data_keeps_the_rules_the_schema_describes(tmp_path):
    con = sqlite3.connect(build_insurance(tmp_path / "ins.sqlite"))
    one = lambda sql: con.execute(sql).fetchone()[0]  # noqa: E731
    total = sum(
        one(f"SELECT COUNT(*) FROM {t}")
        for (t,) in con.execute("SELECT name FROM sqlite_master WHERE type='table'")
    )
    assert 3000 <= total <= 20000
    # every agreement is exactly one subtype, every party too
    assert one("SELECT COUNT(*) FROM agreement") == one("SELECT COUNT(*) FROM policy") + one(
        "SELECT COUNT(*) FROM broker_agreement"
    )
    assert (
        one("SELECT COUNT(*) FROM policy p JOIN broker_agreement b ON b.broker_agreement_id = p.policy_id")
        == 0
    )
    assert one("SELECT COUNT(*) FROM person p JOIN organization o ON o.party_id = p.party_id") == 0
    # every claim amount is exactly one of the four types
    typed = " UNION ALL ".join(
        f"SELECT claim_amount_id FROM {t}"
        for t in ("loss_payment", "loss_reserve", "expense_payment", "expense_reserve")
    )
    assert one(f"SELECT COUNT(*) FROM ({typed})") == one("SELECT COUNT(*) FROM claim_amount")
    assert one(f"SELECT COUNT(DISTINCT claim_amount_id) FROM ({typed})") == one(
        "SELECT COUNT(*) FROM claim_amount"
    )
    # every policy has a holder and an agent; a claim's coverage belongs to the claim's policy
    assert (
        one(
            "SELECT COUNT(*) FROM policy WHERE policy_id NOT IN (SELECT agreement_id FROM agreement_party_role "
            "WHERE party_role_code = 'PH')"
        )
        == 0
    )
    assert (
        one(
            "SELECT COUNT(*) FROM claim c JOIN policy_coverage_detail d ON d.policy_coverage_detail_id = "
            "c.policy_coverage_detail_id WHERE d.policy_id <> c.policy_id"
        )
        == 0
    )
    # the undeclared keys hold: inference has something true to find
    assert (
        one(
            "SELECT COUNT(*) FROM premium_payment WHERE policy_amount_id NOT IN "
            "(SELECT policy_amount_id FROM policy_amount)"
        )
        == 0
    )
    assert (
        one(
            "SELECT COUNT(*) FROM claim WHERE catastrophe_id IS NOT NULL AND catastrophe_id NOT IN "
            "(SELECT catastrophe_id FROM catastrophe)"
        )
        == 0
    )
    con.close()


def test_ensure_rebuilds_only_when_missing_or_stale(tmp_path):
    path = ensure_insurance(tmp_path)
    stamp = path.stat().st_mtime_ns
    assert ensure_insurance(tmp_path) == path and path.stat().st_mtime_ns == stamp
    con = sqlite3.connect(path)
    con.execute(f"PRAGMA user_version = {INSURANCE_VERSION + 1}")
    con.commit()
    con.close()
    ensure_insurance(tmp_path)
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA user_version").fetchone()[0] == INSURANCE_VERSION
    con.close()


def test_the_command_prints_row_counts(tmp_path, capsys):
    assert main(["--out", str(tmp_path / "x.sqlite")]) == 0
    out = capsys.readouterr().out
    assert "claim_amount" in out and "total" in out and "insurance_catalog.yaml" in out
