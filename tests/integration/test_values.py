"""The value index finds the stored spelling of what a user typed, and never what it must not show."""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import uuid
from pathlib import Path

import pytest
import sqlalchemy as sa

from core.database import Database
from core.settings import DatabaseSettings
from core.values import (
    Progress,
    ValueIndex,
    build_index,
    fold,
    fold_many,
    index_path,
    is_numeric,
    iter_index_values,
    plan_columns,
    refresh_index,
    similarity,
)
from core.values import build as values_build
from core.values import columns as values_columns
from core.values import lookup as values_lookup
from core.values.lock import index_lock
from tests.servers import server_url

WAIT_S = 60  # a bound on a thread told at once to go on; never a measured time

CITIES = [
    "Zürich",
    "São Paulo",
    "München",
    "New York",
    "York",
    "Frankfurt am Main",
    "Frankfurt (Oder)",
    "Kraków",
]
PEOPLE = ["John Smith", "Joan Smith", "John Smithers", "Jane Smyth", "Maria Garcia", "Mario Garza"]
PRODUCTS = [
    "Acme UltraSoft Cotton T-Shirt",
    "Acme UltraSoft Merino Hoodie",
    "Acme ProFlex Cotton Shorts",
    "Nordlys Cotton T-Shirt",
    "Acme Cotton Socks",
]
OVERLAY = """
tables:
  ticket:
    columns:
      status:
        description: Ticket status code.
        values: {OPN: open, CLS: closed, WIP: in progress}
"""


def _hostnames() -> list[str]:
    hosts = ["E-176", "E-177", "E-716", "esx-fra1-017", "esx-fra1-018", "esx-ams2-017"]
    hosts += [
        f"{kind}-{site}{n}-{i:03d}"
        for kind in ("web", "db")
        for site in ("lhr", "iad")
        for n in (1, 2)
        for i in range(40)
    ]
    return hosts


def make_sqlite(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE city (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
        CREATE TABLE person (id INTEGER PRIMARY KEY, full_name TEXT, email TEXT, homepage TEXT,
                             api_key TEXT, bio TEXT, city_id INTEGER REFERENCES city (id), born TEXT);
        CREATE TABLE host (id INTEGER PRIMARY KEY, hostname VARCHAR(40), asset_tag TEXT);
        CREATE TABLE product (id INTEGER PRIMARY KEY, title TEXT, sku CHAR(12));
        CREATE TABLE ticket (id INTEGER PRIMARY KEY, status CHAR(3), code TEXT);
        CREATE TABLE secret_notes (id INTEGER PRIMARY KEY, note TEXT);
        """
    )
    conn.executemany("INSERT INTO city (name) VALUES (?)", [(c,) for c in CITIES])
    bio = "Joined the company after many years in consulting, and now leads the platform team in Berlin."
    conn.executemany(
        "INSERT INTO person (full_name, email, homepage, api_key, bio, city_id, born) VALUES (?, ?, ?, ?, ?, 1, ?)",
        [
            (
                p,
                f"{p.split()[0].lower()}@example.com",
                f"https://example.com/{i}",
                uuid.uuid4().hex,
                f"{bio} #{i}",
                f"19{70 + i}-01-0{1 + i % 9}",
            )
            for i, p in enumerate(PEOPLE)
        ],
    )
    conn.executemany(
        "INSERT INTO host (hostname, asset_tag) VALUES (?, ?)",
        [(h, str(uuid.uuid4())) for h in _hostnames()],
    )
    conn.executemany(
        "INSERT INTO product (title, sku) VALUES (?, ?)",
        [(t, s) for t, s in zip(PRODUCTS, ["2024", "2042", "12.5", "1.25", "AB-176"], strict=True)],
    )
    conn.executemany(
        "INSERT INTO ticket (status, code) VALUES (?, ?)",
        [(s, f"T-{i}") for i, s in enumerate(["OPN", "CLS", "WIP"] * 10)],
    )
    conn.executemany(
        "INSERT INTO secret_notes (note) VALUES (?)", [("Project Falcon",), ("Merger with Acme",)]
    )
    conn.commit()
    conn.close()
    return path


def make_db(tmp_path: Path, **config) -> Database:
    sqlite_path = tmp_path / "ops.sqlite"
    if not sqlite_path.exists():
        make_sqlite(sqlite_path)
    overlay = tmp_path / "ops.yaml"
    overlay.write_text(OVERLAY)
    settings = DatabaseSettings(url=f"sqlite:///{sqlite_path}", catalog=str(overlay), **config)
    return Database(name="ops", config=settings, var_dir=tmp_path / "var")


@pytest.fixture
def db(tmp_path) -> Database:
    database = make_db(tmp_path)
    build_index(database)
    return database


def top(db: Database, text: str, k: int = 5) -> list[tuple[str, str, str]]:
    return [(m.table, m.column, m.value) for m in db.values.lookup(text, k=k)]


def first(db: Database, text: str) -> str | None:
    found = db.values.lookup(text, k=1)
    return found[0].value if found else None


# --- folding ------------------------------------------------------------------------------------


def test_fold_ignores_case_accents_and_punctuation():
    assert fold("Zürich-Süd") == "zurich sud"
    assert fold("  E-176 ") == "e 176"
    assert fold("São  PAULO!") == "sao paulo"
    assert fold("Straße") == "strasse"
    texts = ["Zürich", "E-176", "", "a\x00b", "Łódź (PL)"]
    assert fold_many(texts) == [fold(t) for t in texts]


def test_similarity_prefers_the_closer_value():
    assert similarity("e176", "e 176") == 1.0
    assert similarity("smith john", "john smith") > similarity("smith john", "john smithers")
    assert similarity("acme cotton t shirt", "acme ultrasoft cotton t shirt") > 0.85
    assert similarity("frankfrut", "frankfurt") > similarity("frankfrut", "frankfort oder")


# --- tolerance --------------------------------------------------------------------------------------


def test_case_and_accents(db):
    assert first(db, "zurich") == "Zürich"
    assert first(db, "SAO PAULO") == "São Paulo"
    assert first(db, "munchen") == "München"
    assert first(db, "krakow") == "Kraków"


def test_punctuation_is_ignored(db):
    match = db.values.lookup("E176", k=1)[0]
    assert (match.table, match.column, match.value, match.score) == ("host", "hostname", "E-176", 1.0)
    assert first(db, "esx fra1 017") == "esx-fra1-017"
    assert first(db, "frankfurt oder") == "Frankfurt (Oder)"


def test_word_order(db):
    assert first(db, "Smith John") == "John Smith"
    assert first(db, "main frankfurt am") == "Frankfurt am Main"


def test_one_or_two_typos(db):
    assert first(db, "Frankfrut am Main") == "Frankfurt am Main"
    assert first(db, "Jhon Smith") == "John Smith"
    assert first(db, "Acme UltraSfot Coton T-Shirt") == "Acme UltraSoft Cotton T-Shirt"
    assert first(db, "Maria Gracia") == "Maria Garcia"


def test_multi_word_values_and_a_missing_word(db):
    assert first(db, "new york") == "New York"
    assert first(db, "york") == "York"
    assert first(db, "Acme Cotton T-Shirt") == "Acme UltraSoft Cotton T-Shirt"
    assert first(db, "ultrasoft merino hoodie") == "Acme UltraSoft Merino Hoodie"


def test_numeric_keywords_match_exactly(db):
    assert top(db, "2024") == [("product", "sku", "2024")]
    assert top(db, "12.5") == [("product", "sku", "12.5")]
    assert top(db, "176") == []  # never 'E-176' or 'AB-176'
    assert top(db, "2023") == []
    assert is_numeric("42") and is_numeric("-3.5") and not is_numeric("E176") and not is_numeric("2024-01")


def test_value_meanings_from_the_catalog(db):
    match = db.values.lookup("open", k=1)[0]
    assert (match.table, match.column, match.value, match.via, match.meaning) == (
        "ticket",
        "status",
        "OPN",
        "meaning",
        "open",
    )
    assert first(db, "in progres") == "WIP"
    assert first(db, "opn") == "OPN"  # the stored code itself is indexed too


def test_scores_are_ordered_and_bounded(db):
    found = db.values.lookup("John Smith", k=5)
    assert found[0].value == "John Smith" and found[0].score == 1.0
    assert all(0 <= m.score <= 1 for m in found)
    assert [m.score for m in found] == sorted((m.score for m in found), reverse=True)
    assert all(m.score < 1.0 for m in found[1:])


# --- which columns ---------------------------------------------------------------------------------


def test_chooses_text_columns_and_skips_ids_emails_urls_dates_and_prose(tmp_path):
    database = make_db(tmp_path)
    choices = {c.key: c for c in plan_columns(database)}
    assert choices["person.full_name"].index
    assert choices["host.hostname"].index
    assert choices["ticket.status"].index and choices["ticket.status"].reason == "enum-like"
    assert choices["person.email"].reason == "e-mail"
    assert choices["person.homepage"].reason == "url"
    assert choices["person.api_key"].reason == "id"
    assert choices["host.asset_tag"].reason == "id"
    assert choices["person.bio"].reason == "long text"
    assert choices["person.born"].reason == "date"
    assert "person.city_id" not in choices  # not text at all
    stats = build_index(database)
    indexed = {(t, c) for t, c, _ in iter_index_values(database)}
    assert ("person", "email") not in indexed and ("host", "asset_tag") not in indexed
    assert stats.skipped["person.email"] == "e-mail"
    assert first(database, "john") != "john@example.com"  # no fuzzy suggestions of e-mails
    # ... but an e-mail the user pastes is found exactly.
    match = database.values.lookup("Maria@Example.com", k=1)[0]
    assert (match.table, match.column, match.value, match.score) == (
        "person",
        "email",
        "maria@example.com",
        1.0,
    )
    assert database.values.lookup("nobody@example.com") == []


def test_denied_tables_and_columns_never_enter_the_index(tmp_path):
    database = make_db(
        tmp_path, deny_tables=["secret_notes"], deny_columns=["product.title"], mask_columns=["city.name"]
    )
    build_index(database)
    indexed = {(t, c) for t, c, _ in iter_index_values(database)}
    assert not {t for t, _ in indexed} & {"secret_notes"}
    assert ("product", "title") not in indexed and ("city", "name") not in indexed
    for text in ("Project Falcon", "Acme UltraSoft Cotton T-Shirt", "Zürich"):
        assert all(
            m.table != "secret_notes" and (m.table, m.column) not in {("product", "title"), ("city", "name")}
            for m in database.values.lookup(text)
        )


def test_columns_denied_after_the_build_are_hidden_at_lookup(tmp_path):
    open_db = make_db(tmp_path)
    build_index(open_db)
    assert first(open_db, "Project Falcon") == "Project Falcon"
    strict = make_db(tmp_path, deny_tables=["secret_notes"])  # same database, same index on disk
    assert index_path(strict) == index_path(open_db)
    assert all(m.table != "secret_notes" for m in ValueIndex(strict).lookup("Project Falcon"))


# --- storage, refresh, first use ------------------------------------------------------------------


def test_build_reports_progress_and_size(tmp_path):
    database = make_db(tmp_path)
    events: list[Progress] = []
    stats = build_index(database, progress=events.append)
    phases = [e.phase for e in events]
    assert {"plan", "read", "index", "write", "done"} <= set(phases)
    assert phases[-1] == "done"
    assert stats.values == sum(1 for _ in iter_index_values(database))
    assert stats.rewritten and stats.bytes > 0
    assert Path(stats.path).is_dir() and Path(stats.path).parent.parent == tmp_path / "var"
    assert stats.to_dict()["bytes_per_value"] > 0


def test_refresh_rereads_only_changed_tables(tmp_path, monkeypatch):
    monkeypatch.setattr(values_build, "REREAD_MAX_ROWS", 0)  # trust statistics even for small tables
    database = make_db(tmp_path)
    build_index(database)
    unchanged = refresh_index(database)
    assert not unchanged.rewritten and unchanged.read_columns == []
    conn = sqlite3.connect(tmp_path / "ops.sqlite")
    conn.execute("INSERT INTO city (name) VALUES ('Reykjavík')")
    conn.commit()
    conn.close()
    stats = refresh_index(database)
    assert stats.rewritten
    assert stats.read_columns == ["city.name"]
    assert "host.hostname" in stats.kept_columns
    assert first(database, "reykjavik") == "Reykjavík"
    assert first(database, "E176") == "E-176"  # kept columns still found


def test_refresh_of_small_tables_notices_updates(tmp_path):
    database = make_db(tmp_path)
    build_index(database)
    conn = sqlite3.connect(tmp_path / "ops.sqlite")
    conn.execute("UPDATE city SET name = 'Zurich (ZH)' WHERE name = 'Zürich'")  # same row count
    conn.commit()
    conn.close()
    stats = refresh_index(database)
    assert stats.rewritten
    assert ("city", "name", "Zurich (ZH)") in set(iter_index_values(database))
    assert first(database, "zurich zh") == "Zurich (ZH)"


def test_small_database_is_indexed_on_first_use(tmp_path):
    database = make_db(tmp_path)
    assert not index_path(database).exists()
    assert first(database, "E176") == "E-176"
    assert (index_path(database) / "meta.json").is_file()
    assert database.values.mode == "index"


def test_a_first_lookup_waits_for_the_build_running_elsewhere(tmp_path):
    """Another process (here a thread) holds the index's lock while it builds: the first lookup
    waits and reads the index it wrote, rather than search directly and miss 'E176' → 'E-176'."""
    database = make_db(tmp_path)
    other = make_db(tmp_path)  # a second handle on the same database and index folder
    holding, go = threading.Event(), threading.Event()

    def elsewhere() -> None:
        with index_lock(other):
            holding.set()
            go.wait(WAIT_S)
            build_index(other)

    builder = threading.Thread(target=elsewhere)
    builder.start()
    assert holding.wait(WAIT_S)
    found: list[str | None] = []
    asker = threading.Thread(target=lambda: found.append(first(database, "E176")))
    asker.start()
    asker.join(0.5)  # it waits for the build (a lookup that does not wait has answered by now)
    go.set()
    asker.join(WAIT_S)
    builder.join(WAIT_S)
    assert found == ["E-176"] and database.values.mode == "index"


def test_large_database_without_index_is_searched_directly(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(values_lookup, "AUTO_BUILD_MAX_ROWS", 0)
    database = make_db(tmp_path)
    with caplog.at_level(logging.WARNING, logger="core.values"):
        assert first(database, "Frankfurt am Main") == "Frankfurt am Main"
        assert first(database, "2024") == "2024"
    assert database.values.mode == "direct"
    assert not index_path(database).exists()
    assert any("python -m bot index build" in r.getMessage() for r in caplog.records)


def test_huge_tables_are_sampled(tmp_path, monkeypatch):
    monkeypatch.setattr(values_columns, "FULL_READ_MAX_ROWS", 50)
    monkeypatch.setattr(values_build, "SAMPLE_READ_ROWS", 20)
    database = make_db(tmp_path)
    stats = build_index(database)
    assert "host.hostname" in stats.sampled_columns
    hosts = [v for t, c, v in iter_index_values(database) if (t, c) == ("host", "hostname")]
    assert 0 < len(hosts) <= 20


def test_a_rebuilt_index_is_picked_up_by_an_open_one(tmp_path, monkeypatch):
    database = make_db(tmp_path)
    build_index(database)
    index = database.values
    assert [m.value for m in index.lookup("Oslo", k=1, min_score=0.9)] == []
    conn = sqlite3.connect(tmp_path / "ops.sqlite")
    conn.execute("INSERT INTO city (name) VALUES ('Oslo')")
    conn.commit()
    conn.close()
    build_index(database)
    monkeypatch.setattr(index, "_checked", 0.0)  # skip the two-second recheck delay
    assert [m.value for m in index.lookup("Oslo", k=1)] == ["Oslo"]


# --- real servers -----------------------------------------------------------------------------------


def _server_roundtrip(url: str, tmp_path: Path, schema: str | None, create_url: str) -> None:
    admin = sa.create_engine(create_url)
    table = f"askbase_values_{uuid.uuid4().hex[:8]}"
    qualified = f"{schema}.{table}" if schema else table
    with admin.begin() as conn:
        conn.execute(sa.text(f"CREATE TABLE {qualified} (id INTEGER PRIMARY KEY, hostname VARCHAR(40))"))
        conn.execute(
            sa.text(f"INSERT INTO {qualified} (id, hostname) VALUES (1, 'E-176'), (2, 'esx-fra1-017')")
        )
    try:
        settings = DatabaseSettings(url=url, schema=schema)
        database = Database(name=f"srv-{table}", config=settings, var_dir=tmp_path / "var")
        stats = build_index(database)
        assert f"{table}.hostname" in [c.lower() for c in stats.read_columns]
        match = database.values.lookup("e176", k=1)[0]
        assert (match.table.lower(), match.value) == (table, "E-176")
        assert refresh_index(database).values == stats.values
    finally:
        with admin.begin() as conn:
            conn.execute(sa.text(f"DROP TABLE {qualified}"))
        admin.dispose()


@pytest.mark.postgres
def test_postgres(tmp_path):
    url = server_url("ASKBASE_TEST_POSTGRES_URL")
    schema = f"askbase_v_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(url)
    with admin.begin() as conn:
        conn.execute(sa.text(f"CREATE SCHEMA {schema}"))
    try:
        _server_roundtrip(url, tmp_path, schema, str(admin.url.render_as_string(hide_password=False)))
    finally:
        with admin.begin() as conn:
            conn.execute(sa.text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


@pytest.mark.mysql
def test_mysql(tmp_path):
    url = server_url("ASKBASE_TEST_MYSQL_URL")
    _server_roundtrip(url, tmp_path, None, url)


# --- the benchmark's contract ---------------------------------------------------------------------


@pytest.mark.slow
def test_benchmark_prints_recall_latency_size_and_the_lsh_baseline(tmp_path, capsys):
    pytest.importorskip(
        "datasketch", reason="the LSH baseline needs the bench extra: pip install -e '.[bench]'"
    )
    from core.bench import values as bench

    args = ["--synthetic", "600", "--count", "60", "--baseline-sample", "300", "--baseline-queries", "20"]
    code = bench.main([*args, "--json", "--work", str(tmp_path / "bench")])
    assert code == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    keys = "recall_at_1 recall_at_5 p50_ms p95_ms build_s bytes_per_value baseline_recall_at_5 baseline_p95_ms baseline_build_s"
    assert set(keys.split()) <= set(result)
    assert result["values"] == 600 and result["baseline_values"] == 300
    assert result["recall_at_5"] >= 0.9
    assert result["bytes_per_value"] < result["baseline_bytes_per_value"]


def test_perturbations_change_what_people_get_wrong_but_keep_digits():
    import random

    from core.bench.values import perturb

    rng = random.Random(1)
    for value in ["INV-2024-00123", "Acme UltraSoft Cotton T-Shirt, Navy, XL", "John K. Smith"]:
        for _ in range(20):
            typed, kind = perturb(rng, value)
            assert sorted(ch for ch in typed if ch.isdigit()) == sorted(ch for ch in value if ch.isdigit())
            assert kind
