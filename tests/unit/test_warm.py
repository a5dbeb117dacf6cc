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
