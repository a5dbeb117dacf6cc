"""Warming a database up at start (core/warm.py): the first question finds built what every
question reads, and a database that cannot be read does not stop the server starting."""

from __future__ import annotations

import logging

import core.dictionary
from core.askbase import Askbase
from core.settings import DatabaseSettings
from core.warm import warm_up


def test_the_first_question_finds_the_dictionary_its_word_index_and_the_table_sizes_built(
    settings, monkeypatch
):
    monkeypatch.setattr(core.dictionary, "LARGE_DICTIONARY", 10)  # the demo read as a warehouse is
    built: list[str] = []

    class Recording(core.dictionary.WordIndex):
        def __init__(self, texts):
            built.append("word index")
            super().__init__(texts)

    monkeypatch.setattr(core.dictionary, "WordIndex", Recording)
    app = Askbase(settings)
    assert warm_up(app, "demo")
    assert built == ["word index"]
    catalog = app.database("demo").catalog
    warmed = dict(catalog.__dict__["_memo"])
    assert any(isinstance(k, tuple) and k[0] == "table_tokens" for k in warmed)

    outcome = app.ask("how many clients are there?")

    assert outcome.status == "answer", outcome.error
    assert built == ["word index"]  # the question built no other
    assert all(catalog.__dict__["_memo"][k] is v for k, v in warmed.items())  # nor anew
    app.close()


def test_a_database_that_cannot_be_read_is_logged_and_the_start_goes_on(settings, tmp_path, caplog):
    broken = settings.model_copy(
        update={"databases": {"gone": DatabaseSettings(url=f"sqlite:///{tmp_path / 'missing' / 'x.db'}")}}
    )
    app = Askbase(broken)
    with caplog.at_level(logging.ERROR, logger="core.warm"):
        assert warm_up(app, "gone") is False
    assert "warm-up of 'gone' failed" in caplog.text
    app.close()


def test_a_catalog_read_before_the_warm_up_is_read_again_only_if_the_schema_moved(
    settings, tmp_path, demo_var
):
    import shutil
    import sqlite3

    source = tmp_path / "ops.sqlite"
    shutil.copyfile(demo_var / "demo.sqlite", source)
    ops = settings.model_copy(update={"databases": {"ops": DatabaseSettings(url=f"sqlite:///{source}")}})
    app = Askbase(ops)
    db = app.database("ops")
    first = db.catalog
    assert warm_up(app, "ops")
    assert db.catalog is first  # the fingerprint it was read with is still the schema's

    other = Askbase(ops)
    moved = other.database("ops")
    before = moved.catalog
    with sqlite3.connect(source) as conn:
        conn.execute("ALTER TABLE client ADD COLUMN referrer TEXT")
    assert warm_up(other, "ops")
    assert moved.catalog is not before
    assert "referrer" in [c.name for c in moved.catalog.table("client").columns]
    app.close()
    other.close()
