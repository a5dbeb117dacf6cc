"""The bundled demo database: same rows everywhere, the design patterns hold, Lucy's questions work.

Lucy's §2.2 / appendix C.1 questions are checked against an answer computed in Python from the
raw tables, and the wrong SQL the paper shows GPT-4 writing is checked to give a different answer
here too, so the demo keeps showing what join reasoning buys.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
import yaml

import core.demo as demo
from core.catalog import Catalog, overlay, reflect, schema_signature
from core.connect import readonly_engine
from core.settings import ROOT

TABLES = {
    "location", "client", "datacenter", "compute", "resource_pool", "pool_client", "pool_config",
    "config_cpu", "config_memory", "pool_runtime", "runtime_cpu", "runtime_memory", "payment",
    "payment_amount", "tax", "supercharge", "income", "retention", "gift", "bonus", "usage",
}  # fmt: skip


def rows_digest(path: Path) -> str:
    """A hash of every row of every table, in id order: equal digests mean identical data."""
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        digest = hashlib.sha256()
        names = conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )
        for (table,) in names.fetchall():
            digest.update(table.encode())
            for row in conn.execute(f'SELECT * FROM "{table}" ORDER BY rowid'):
                digest.update(repr(row).encode())
        return digest.hexdigest()
    finally:
        conn.close()


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name != demo.DEMO_PATH_NAME)


@pytest.fixture(scope="module")
def demo_path(demo_var: Path) -> Path:
    """The session's demo file (tests/conftest.py builds it once with ensure_demo)."""
    return demo.ensure_demo(demo_var)


@pytest.fixture(scope="module")
def db(demo_path: Path) -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(f"{demo_path.as_uri()}?mode=ro", uri=True, check_same_thread=False)
    yield conn
    conn.close()


def scalar(db: sqlite3.Connection, sql: str) -> object:
    return db.execute(sql).fetchone()[0]


# ---------------------------------------------------------------------------------------------
# building


def test_two_builds_hold_identical_rows(tmp_path: Path) -> None:
    demo.build_demo(tmp_path / "a" / "demo.sqlite")
    demo.build_demo(tmp_path / "b" / "demo.sqlite")
    assert rows_digest(tmp_path / "a" / "demo.sqlite") == rows_digest(tmp_path / "b" / "demo.sqlite")


@pytest.mark.slow
def test_rows_do_not_depend_on_the_interpreter_hash_seed(tmp_path: Path, demo_path: Path) -> None:
    # Another machine is another process with another string-hash seed: set iteration must not leak in.
    out = tmp_path / "other.sqlite"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    code = f"from pathlib import Path; from core.demo import build_demo; build_demo(Path({str(out)!r}))"
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True, timeout=60)
    assert rows_digest(out) == rows_digest(demo_path)


def test_ensure_demo_builds_once_and_then_reuses_the_file(tmp_path: Path) -> None:
    path = demo.ensure_demo(tmp_path)
    assert path == (tmp_path / demo.DEMO_PATH_NAME).resolve()
    assert demo.stored_version(path) == demo.DEMO_VERSION
    before = path.stat()
    assert demo.ensure_demo(tmp_path) == path
    after = path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_version_bump_rebuilds_and_changes_the_schema_signature(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = demo.ensure_demo(tmp_path)
    old_signature = schema_signature(readonly_engine(f"sqlite:///{path}"))
    monkeypatch.setattr(demo, "DEMO_VERSION", demo.DEMO_VERSION + 1)
    assert demo.stored_version(path) == demo.DEMO_VERSION - 1
    demo.ensure_demo(tmp_path)
    assert demo.stored_version(path) == demo.DEMO_VERSION
    # Cached catalogs are keyed by the schema signature; a new demo version must not reuse them.
    assert schema_signature(readonly_engine(f"sqlite:///{path}")) != old_signature
    assert leftovers(tmp_path) == []


def test_older_file_on_disk_is_rebuilt(tmp_path: Path) -> None:
    path = demo.ensure_demo(tmp_path)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 0")
    conn.execute("DELETE FROM payment_amount")
    conn.commit()
    conn.close()
    demo.ensure_demo(tmp_path)
    assert demo.stored_version(path) == demo.DEMO_VERSION
    assert scalar(sqlite3.connect(path), "SELECT COUNT(*) FROM payment_amount") > 0


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty"])
def test_damaged_file_is_rebuilt(tmp_path: Path, demo_path: Path, damage: str) -> None:
    path = tmp_path / demo.DEMO_PATH_NAME
    data = demo_path.read_bytes()
    path.write_bytes(
        {"truncate": data[: len(data) // 2], "garbage": b"not a database" * 100, "empty": b""}[damage]
    )
    assert demo.stored_version(path) is None
    demo.ensure_demo(tmp_path)
    assert rows_digest(path) == rows_digest(demo_path)


def test_failed_build_leaves_the_previous_file_and_no_temp_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = demo.ensure_demo(tmp_path)
    good = rows_digest(path)
    real_write = demo._write

    def crash(conn: sqlite3.Connection, rows: demo.Rows) -> None:
        real_write(conn, rows)
        raise KeyboardInterrupt  # e.g. Ctrl-C just before the rename

    monkeypatch.setattr(demo, "_write", crash)
    with pytest.raises(KeyboardInterrupt):
        demo.build_demo(path)
    assert rows_digest(path) == good
    assert leftovers(tmp_path) == []


def test_threads_asking_for_the_demo_at_once_get_one_complete_file(tmp_path: Path, demo_path: Path) -> None:
    barrier = threading.Barrier(4)
    results: list[Path] = []
    errors: list[BaseException] = []

    def ask() -> None:
        barrier.wait()
        try:
            results.append(demo.ensure_demo(tmp_path))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(set(results)) == 1
    assert rows_digest(results[0]) == rows_digest(demo_path)
    assert leftovers(tmp_path) == []


@pytest.mark.slow
def test_processes_building_at_once_leave_one_complete_file(tmp_path: Path, demo_path: Path) -> None:
    code = (
        f"from pathlib import Path; from core.demo import ensure_demo; ensure_demo(Path({str(tmp_path)!r}))"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code], cwd=ROOT) for _ in range(2)]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    path = tmp_path / demo.DEMO_PATH_NAME
    assert scalar(sqlite3.connect(path), "PRAGMA integrity_check") == "ok"
    assert rows_digest(path) == rows_digest(demo_path)
    assert leftovers(tmp_path) == []


def test_cli_builds_and_prints_row_counts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "x" / "mydemo.sqlite"
    assert demo.main(["--out", str(out)]) == 0
    printed = capsys.readouterr().out
    counts = dict(re.findall(r"^(\w+)\s+(\d+)$", printed, flags=re.M))
    assert set(counts) == TABLES | {"total"}
    assert int(counts["client"]) == scalar(sqlite3.connect(out), "SELECT COUNT(*) FROM client")
    assert str(out.resolve()) in printed


def test_demo_settings_point_at_the_file_and_the_catalog(tmp_path: Path) -> None:
    settings = demo.demo_settings(tmp_path)
    path = (tmp_path / demo.DEMO_PATH_NAME).resolve()
    assert settings.url == f"sqlite:///{path}"
    assert path.is_file()
    assert settings.catalog is not None
    assert Path(settings.catalog).is_absolute() and Path(settings.catalog).is_file()
    assert settings.description == "Cloud operations demo (clients, datacenters, resource pools, payments)"


def test_demo_database_is_what_the_registry_opens_by_default(tmp_path: Path) -> None:
    from core.database import Databases
    from core.settings import load_settings

    databases = Databases(load_settings(var_dir=str(tmp_path), default_db="demo"))
    try:
        db = databases.get()
        assert db.name == "demo"
        assert db.catalog.table("client") is not None
        assert {p.kind for p in db.catalog.patterns} >= {"many_to_many", "lookup", "star", "snowflake"}
    finally:
        databases.close()


def test_readonly_engine_reads_the_demo_but_cannot_change_it(demo_path: Path) -> None:
    before = rows_digest(demo_path)
    engine = readonly_engine(f"sqlite:///{demo_path}")
    try:
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT COUNT(*) FROM client")).scalar() == 300
        for statement in (
            "DELETE FROM client",
            "CREATE TABLE x (a INTEGER)",
            "UPDATE payment SET status = 'x'",
        ):
            with pytest.raises(sa.exc.OperationalError, match="readonly"), engine.begin() as conn:
                conn.execute(sa.text(statement))
    finally:
        engine.dispose()
    assert rows_digest(demo_path) == before


# ---------------------------------------------------------------------------------------------
# the schema and the patterns in the data


def test_every_table_has_an_integer_id_key_and_declared_foreign_keys_hold(db: sqlite3.Connection) -> None:
    names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert names - {"sqlite_stat1"} == TABLES
    for table in TABLES:
        pk = [(r[1], r[2]) for r in db.execute(f"PRAGMA table_info({table})") if r[5]]
        assert pk == [("id", "INTEGER")], table
    fks = {(t, r[3], r[2], r[4]) for t in TABLES for r in db.execute(f"PRAGMA foreign_key_list({t})")}
    assert ("client", "loc_id", "location", "id") in fks
    assert ("datacenter", "loc_id", "location", "id") in fks
    assert ("pool_client", "pool_id", "resource_pool", "id") in fks
    assert ("pool_client", "client_id", "client", "id") in fks
    assert ("runtime_cpu", "runtime_id", "pool_runtime", "id") in fks
    assert ("tax", "amount_id", "payment_amount", "id") in fks
    assert ("usage", "client_id", "client", "id") in fks
    assert len(fks) == 22
    assert db.execute("PRAGMA foreign_key_check").fetchall() == []


def test_each_payment_amount_is_exactly_one_of_tax_supercharge_income(db: sqlite3.Connection) -> None:
    kinds = db.execute(
        """SELECT pa.id,
                  (SELECT COUNT(*) FROM tax WHERE amount_id = pa.id)
                + (SELECT COUNT(*) FROM supercharge WHERE amount_id = pa.id)
                + (SELECT COUNT(*) FROM income WHERE amount_id = pa.id)
           FROM payment_amount pa"""
    ).fetchall()
    assert kinds and all(n == 1 for _, n in kinds)
    for subtype in ("tax", "supercharge", "income"):
        assert scalar(db, f"SELECT COUNT(*) FROM {subtype}") > 100


def test_payments_have_one_to_three_amounts_within_the_data_period(db: sqlite3.Connection) -> None:
    per_payment = db.execute(
        "SELECT MIN(n), MAX(n) FROM (SELECT COUNT(pa.id) n FROM payment p "
        "LEFT JOIN payment_amount pa ON pa.payment_id = p.id GROUP BY p.id)"
    ).fetchone()
    assert per_payment == (1, 3)
    first, last = db.execute("SELECT MIN(paid_on), MAX(paid_on) FROM payment").fetchone()
    assert "2024-01-01" <= first < "2024-01-15" and "2026-06-15" < last <= "2026-06-30"
    assert 2000 <= scalar(db, "SELECT COUNT(*) FROM payment") <= 3000


def test_payments_grow_year_on_year_and_peak_in_december(db: sqlite3.Connection) -> None:
    by_month = dict(db.execute("SELECT substr(paid_on, 1, 7), COUNT(*) FROM payment GROUP BY 1").fetchall())
    assert sum(v for k, v in by_month.items() if k.startswith("2025")) > sum(
        v for k, v in by_month.items() if k.startswith("2024")
    )
    for year in ("2024", "2025"):
        assert by_month[f"{year}-12"] > by_month[f"{year}-08"]


def test_bridge_pairs_are_unique_and_usage_only_for_bridged_pairs(db: sqlite3.Connection) -> None:
    assert scalar(db, "SELECT COUNT(*) FROM pool_client") == scalar(
        db, "SELECT COUNT(*) FROM (SELECT DISTINCT pool_id, client_id FROM pool_client)"
    )
    orphans = scalar(
        db,
        "SELECT COUNT(*) FROM usage u LEFT JOIN pool_client pc "
        "ON pc.pool_id = u.pool_id AND pc.client_id = u.client_id WHERE pc.id IS NULL",
    )
    assert orphans == 0
    assert scalar(db, "SELECT COUNT(*) FROM usage WHERE month NOT LIKE '____-__-01'") == 0
    assert 2000 <= scalar(db, "SELECT COUNT(*) FROM usage") <= 20000
    # many-to-many in both directions
    assert scalar(db, "SELECT MAX(n) FROM (SELECT COUNT(*) n FROM pool_client GROUP BY client_id)") > 1
    assert scalar(db, "SELECT MAX(n) FROM (SELECT COUNT(*) n FROM pool_client GROUP BY pool_id)") > 1


def test_location_is_a_lookup_shared_by_clients_and_datacenters(db: sqlite3.Connection) -> None:
    assert scalar(db, "SELECT COUNT(*) FROM location") >= 50
    shared = scalar(
        db,
        "SELECT COUNT(DISTINCT d.loc_id) FROM datacenter d JOIN client c ON c.loc_id = d.loc_id",
    )
    assert shared >= 3
    cities = {r[0] for r in db.execute("SELECT city FROM location")}
    assert {"München", "São Paulo", "Zürich", "Berlin", "New York", "Lyon"} <= cities


def test_snowflake_has_pools_without_config_or_runtime(db: sqlite3.Connection) -> None:
    no_config = scalar(
        db,
        "SELECT COUNT(*) FROM resource_pool rp WHERE NOT EXISTS (SELECT 1 FROM pool_config WHERE pool_id = rp.id)",
    )
    no_runtime = scalar(
        db,
        "SELECT COUNT(*) FROM resource_pool rp WHERE NOT EXISTS (SELECT 1 FROM pool_runtime WHERE pool_id = rp.id)",
    )
    pools = scalar(db, "SELECT COUNT(*) FROM resource_pool")
    assert 0 < no_config < pools / 4
    assert 0 < no_runtime < pools / 4


def test_retention_actions_have_gift_bonus_both_or_neither(db: sqlite3.Connection) -> None:
    combos = dict(
        db.execute(
            """SELECT (EXISTS (SELECT 1 FROM gift g WHERE g.retention_id = r.id))
                    || (EXISTS (SELECT 1 FROM bonus b WHERE b.retention_id = r.id)), COUNT(*)
               FROM retention r GROUP BY 1"""
        ).fetchall()
    )
    assert set(combos) == {"00", "01", "10", "11"}
    assert all(n >= 5 for n in combos.values())


def test_values_look_like_real_operations_data(db: sqlite3.Connection) -> None:
    assert scalar(db, "SELECT COUNT(*) FROM datacenter WHERE code NOT GLOB 'DC-[0-9][0-9]'") == 0
    assert scalar(db, "SELECT COUNT(*) FROM datacenter WHERE name LIKE 'dev%'") >= 2
    assert scalar(db, "SELECT COUNT(*) FROM datacenter WHERE name LIKE 'prod-%'") >= 2
    assert scalar(db, "SELECT COUNT(*) FROM datacenter WHERE name LIKE 'edge-%'") >= 1
    bad_invoice = "invoice_no NOT GLOB 'INV-20[0-9][0-9]-[0-9][0-9][0-9][0-9][0-9]'"
    assert scalar(db, f"SELECT COUNT(*) FROM payment WHERE {bad_invoice}") == 0
    assert (
        scalar(db, "SELECT COUNT(*) FROM payment WHERE substr(invoice_no, 5, 4) != substr(paid_on, 1, 4)")
        == 0
    )
    assert (
        scalar(
            db,
            "SELECT COUNT(*) FROM compute WHERE hostname NOT GLOB 'esx-[a-z][a-z][a-z][0-9]-[0-9][0-9][0-9]'",
        )
        == 0
    )
    assert scalar(db, "SELECT COUNT(*) FROM resource_pool WHERE name NOT GLOB 'rp-*-[0-9][0-9]'") == 0
    assert (
        scalar(db, "SELECT COUNT(DISTINCT name) FROM client")
        == scalar(db, "SELECT COUNT(*) FROM client")
        == 300
    )
    assert scalar(db, "SELECT COUNT(*) FROM client WHERE name = 'Acme Logistics GmbH'") == 1
    assert {r[0] for r in db.execute("SELECT DISTINCT status FROM client")} == {"ACT", "SUS", "CHN"}
    assert {r[0] for r in db.execute("SELECT DISTINCT segment FROM client")} == {
        "enterprise", "smb", "startup", "public sector",
    }  # fmt: skip
    assert {r[0] for r in db.execute("SELECT DISTINCT method FROM payment")} == {"card", "wire", "sepa"}
    assert {r[0] for r in db.execute("SELECT DISTINCT status FROM payment")} == {
        "settled",
        "pending",
        "failed",
    }
    # a few realistic gaps
    assert 0 < scalar(db, "SELECT COUNT(*) FROM client WHERE email IS NULL") < 30
    assert scalar(db, "SELECT COUNT(*) FROM location WHERE zip_code IS NULL") > 0
    assert scalar(db, "SELECT COUNT(*) FROM config_cpu WHERE limit_mhz IS NULL") > 0
    total = sum(scalar(db, f'SELECT COUNT(*) FROM "{t}"') for t in TABLES)
    assert 5000 <= total <= 25000


def test_tax_amounts_follow_their_rate(db: sqlite3.Connection) -> None:
    # tax = income x rate (to the cent) on the same payment: "tax as a share of revenue" makes sense
    off = db.execute(
        """SELECT COUNT(*) FROM tax t
           JOIN payment_amount ta ON ta.id = t.amount_id
           JOIN payment_amount ia ON ia.payment_id = ta.payment_id
           JOIN income i ON i.amount_id = ia.id
           WHERE abs(ta.amount - ia.amount * t.rate) > 0.0051"""
    ).fetchone()[0]
    assert off == 0


# ---------------------------------------------------------------------------------------------
# Lucy's motivating questions (§2.2, appendix C.1), adapted to the demo's table names

Q1_CORRECT = """
SELECT DISTINCT client.name, datacenter.name
FROM datacenter
JOIN resource_pool ON datacenter.id = resource_pool.dc_id
JOIN pool_client ON resource_pool.id = pool_client.pool_id
JOIN client ON client.id = pool_client.client_id
WHERE datacenter.name LIKE 'dev%'
"""
Q1_GPT4 = """
SELECT client.name, datacenter.name
FROM client
JOIN location ON location.id = client.loc_id
JOIN datacenter ON location.id = datacenter.loc_id
WHERE datacenter.name LIKE 'dev%'
"""


def test_q1_clients_of_dev_datacenters_go_through_the_bridge(db: sqlite3.Connection) -> None:
    dc_name = dict(db.execute("SELECT id, name FROM datacenter").fetchall())
    client_name = dict(db.execute("SELECT id, name FROM client").fetchall())
    pool_dc = dict(db.execute("SELECT id, dc_id FROM resource_pool").fetchall())
    expected = {
        (client_name[c], dc_name[pool_dc[p]])
        for p, c in db.execute("SELECT pool_id, client_id FROM pool_client")
        if dc_name[pool_dc[p]].startswith("dev")
    }
    correct = set(db.execute(Q1_CORRECT).fetchall())
    assert correct == expected
    assert len(correct) >= 10
    assert {dc for _, dc in correct} == {n for n in dc_name.values() if n.startswith("dev")}

    # Joining through the shared location pairs clients with datacenters in their city instead.
    wrong = set(db.execute(Q1_GPT4).fetchall())
    assert wrong - correct, "the lookup trap should invent pairs"
    assert correct - wrong, "the lookup trap should miss real users"


Q2_CORRECT = """
SELECT DISTINCT resource_pool.name
FROM resource_pool
LEFT JOIN pool_config ON resource_pool.id = pool_config.pool_id
LEFT JOIN config_cpu ON pool_config.id = config_cpu.config_id
LEFT JOIN pool_runtime ON resource_pool.id = pool_runtime.pool_id
LEFT JOIN runtime_cpu ON pool_runtime.id = runtime_cpu.runtime_id
WHERE config_cpu.overhead_limit > runtime_cpu.overall_usage + 100
"""
Q2_GPT4 = """
SELECT resource_pool.name
FROM resource_pool
JOIN runtime_cpu ON resource_pool.runtime_id = runtime_cpu.runtime_id
JOIN config_cpu ON resource_pool.config_id = config_cpu.config_id
WHERE config_cpu.overhead_limit > runtime_cpu.overall_usage + 100
"""


def test_q2_overhead_limit_above_usage_splits_the_pools(db: sqlite3.Connection) -> None:
    overhead = dict(
        db.execute(
            "SELECT pc.pool_id, cc.overhead_limit FROM pool_config pc JOIN config_cpu cc ON cc.config_id = pc.id"
        )
    )
    usage = dict(
        db.execute(
            "SELECT pr.pool_id, rc.overall_usage FROM pool_runtime pr JOIN runtime_cpu rc ON rc.runtime_id = pr.id"
        )
    )
    names = dict(db.execute("SELECT id, name FROM resource_pool").fetchall())
    expected = {
        names[p] for p in names if overhead.get(p) is not None and p in usage and overhead[p] > usage[p] + 100
    }
    correct = {r[0] for r in db.execute(Q2_CORRECT)}
    assert correct == expected
    assert 5 <= len(correct) <= len(names) - 5
    # GPT-4 invented resource_pool.config_id / runtime_id: the query does not even run.
    with pytest.raises(sqlite3.OperationalError, match="no such column"):
        db.execute(Q2_GPT4)


Q3_CORRECT = """
SELECT SUM(payment_amount.amount)
FROM payment_amount
LEFT JOIN tax ON tax.amount_id = payment_amount.id
LEFT JOIN supercharge ON supercharge.amount_id = payment_amount.id
WHERE tax.id IS NOT NULL OR supercharge.id IS NOT NULL
"""
Q3_GPT4_ADAPTED = """
SELECT SUM(payment_amount.amount)
FROM tax
JOIN payment_amount ON payment_amount.id = tax.amount_id
JOIN supercharge ON payment_amount.id = supercharge.amount_id
"""
Q3_GPT4 = """
SELECT SUM(tax.amount + supercharge.amount)
FROM tax
JOIN payment_amount ON payment_amount.id = tax.amount_id
JOIN supercharge ON payment_amount.id = supercharge.amount_id
"""


def test_q3_total_tax_is_the_sum_of_tax_and_supercharge_amounts(db: sqlite3.Connection) -> None:
    amount = dict(db.execute("SELECT id, amount FROM payment_amount").fetchall())
    taxed = {r[0] for r in db.execute("SELECT amount_id FROM tax")}
    surcharged = {r[0] for r in db.execute("SELECT amount_id FROM supercharge")}
    expected = sum(amount[i] for i in taxed | surcharged)
    total = scalar(db, Q3_CORRECT)
    assert total == pytest.approx(expected)
    assert 0 < total < sum(amount.values())
    # An amount is never both a tax and a surcharge: joining both on one amount finds nothing.
    assert scalar(db, Q3_GPT4_ADAPTED) is None
    # GPT-4's original also read amount columns that tax and supercharge do not have.
    with pytest.raises(sqlite3.OperationalError, match="no such column"):
        db.execute(Q3_GPT4)


# ---------------------------------------------------------------------------------------------
# the bundled catalog overlay


@pytest.fixture(scope="module")
def demo_catalog(demo_path: Path) -> Iterator[Catalog]:
    engine = readonly_engine(f"sqlite:///{demo_path}")
    try:
        yield overlay(reflect(engine, "demo"), yaml.safe_load(demo.CATALOG_PATH.read_text()))
    finally:
        engine.dispose()


def test_catalog_overlay_matches_the_demo_schema(demo_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    engine = readonly_engine(f"sqlite:///{demo_path}")
    try:
        with caplog.at_level(logging.WARNING, logger="core.catalog"):
            overlay(reflect(engine, "demo"), yaml.safe_load(demo.CATALOG_PATH.read_text()))
    finally:
        engine.dispose()
    assert caplog.records == []


def test_every_table_and_column_is_described_briefly(demo_catalog: Catalog) -> None:
    assert demo_catalog.description
    for table in demo_catalog.tables:
        assert table.description and len(table.description.split()) <= 15, table.name
        assert table.synonyms, table.name
        for column in table.columns:
            assert column.description and len(column.description.split()) <= 15, f"{table.name}.{column.name}"


def test_catalog_knows_the_words_people_use(demo_catalog: Catalog) -> None:
    synonyms = {t.name: {s.lower() for s in t.synonyms} for t in demo_catalog.tables}
    assert {"customer", "customers", "tenant", "account"} <= synonyms["client"]
    assert {"data center", "dc", "site"} <= synonyms["datacenter"]
    assert {"pool", "resource pool"} <= synonyms["resource_pool"]
    assert {"amount", "charge"} <= synonyms["payment_amount"]
    assert {"consumption", "utilisation"} <= synonyms["usage"]
    assert "surcharge" in synonyms["supercharge"]


def test_coded_columns_explain_every_stored_value(demo_catalog: Catalog, db: sqlite3.Connection) -> None:
    coded = [
        ("client", "status"), ("client", "segment"), ("client", "gender"), ("payment", "method"),
        ("payment", "status"), ("compute", "status"), ("resource_pool", "status"), ("datacenter", "tier"),
        ("payment_amount", "currency"), ("location", "region"), ("retention", "channel"), ("config_cpu", "shares"),
    ]  # fmt: skip
    for table, column in coded:
        meanings = demo_catalog.table(table).column(column).values
        stored = {
            str(r[0]) for r in db.execute(f"SELECT DISTINCT {column} FROM {table} WHERE {column} IS NOT NULL")
        }
        assert stored <= set(meanings), f"{table}.{column}: {stored - set(meanings)} unexplained"
    assert demo_catalog.table("client").column("status").values["ACT"] == "active"


def test_catalog_declares_the_design_patterns(demo_catalog: Catalog) -> None:
    patterns = {(p.kind, p.root): set(p.tables) for p in demo_catalog.patterns}
    assert patterns[("many_to_many", "pool_client")] == {"client", "resource_pool"}
    assert ("lookup", "location") in patterns
    assert patterns[("star", "payment")] >= {"payment_amount", "tax", "supercharge", "income"}
    assert patterns[("subtype", "payment_amount")] == {"tax", "supercharge", "income"}
    assert patterns[("star", "retention")] == {"gift", "bonus"}
    assert patterns[("snowflake", "resource_pool")] == {
        "pool_config", "config_cpu", "config_memory", "pool_runtime", "runtime_cpu", "runtime_memory",
    }  # fmt: skip
