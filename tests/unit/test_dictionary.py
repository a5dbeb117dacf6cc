"""The keyword dictionary finds tables and columns by the words people use for them."""

from __future__ import annotations

from core.catalog import Catalog, Column, Relationship, Table
from core.dictionary import KeywordDictionary, keyword_dictionary, split_identifier, stem
from core.values import Access


def catalog() -> Catalog:
    client = Table(
        "CLIENT",
        (
            Column("id", "INTEGER", "integer", primary_key=True),
            Column("name", "TEXT", "text", synonyms=("company name",)),
            Column("status", "CHAR(3)", "text", values={"ACT": "active"}),
        ),
        synonyms=("customer", "tenant"),
        description="Companies that buy cloud resources.",
    )
    payment = Table(
        "payment",
        (
            Column("id", "INTEGER", "integer", primary_key=True),
            Column("invoice_no", "TEXT", "text"),
            Column("client_id", "INTEGER", "integer", synonyms=("customer",)),
            Column("amt", "NUMERIC", "number", description="Amount invoiced; the revenue of the payment."),
            Column("paid_on", "DATE", "date"),
        ),
    )
    orders = Table(
        "CustomerOrders", (Column("OrderDate", "DATE", "date"), Column("qty", "INTEGER", "integer"))
    )
    location = Table("location", (Column("city", "TEXT", "text"),), synonyms=("city", "place"))
    secrets = Table(
        "salary", (Column("amount", "NUMERIC", "number"),), description="Salary of every employee."
    )
    return Catalog(
        database="ops",
        dialect="sqlite",
        tables=(client, payment, orders, location, secrets),
        relationships=(Relationship("payment", ("client_id",), "CLIENT", ("id",)),),
        signature="test",
    )


def best(dictionary: KeywordDictionary, keyword: str) -> tuple[str, str | None, str]:
    m = dictionary.match(keyword)[0]
    return m.table, m.column, m.via


def test_names_are_split_into_words():
    assert split_identifier("CustomerOrders") == ["customer", "orders"]
    assert split_identifier("invoice_no") == ["invoice", "no"]
    assert split_identifier("HTTPStatusCode") == ["http", "status", "code"]
    assert [stem(w) for w in ("cities", "addresses", "status", "orders", "people", "boxes")] == [
        "city",
        "address",
        "status",
        "order",
        "person",
        "box",
    ]


def test_table_by_name_synonym_plural_and_typo():
    d = KeywordDictionary(catalog())
    assert best(d, "client") == ("CLIENT", None, "name")
    assert best(d, "customers") == ("CLIENT", None, "synonym")
    assert best(d, "tenants") == ("CLIENT", None, "synonym")
    assert best(d, "custmer") == ("CLIENT", None, "synonym")
    assert best(d, "customer orders") == ("CustomerOrders", None, "name")
    assert best(d, "cities")[:2] == ("location", "city")  # the column named city, in the table also called so
    assert best(d, "places") == ("location", None, "synonym")
    assert d.match("customers")[0].score >= 0.9


def test_columns_by_name_abbreviation_and_table_context():
    d = KeywordDictionary(catalog())
    assert best(d, "invoice number") == ("payment", "invoice_no", "name")
    assert best(d, "quantity") == ("CustomerOrders", "qty", "name")
    assert best(d, "order date") == ("CustomerOrders", "OrderDate", "name")
    assert best(d, "client name") == ("CLIENT", "name", "name")
    assert best(d, "customer name")[:2] == ("CLIENT", "name")
    assert best(d, "company name")[:2] == ("CLIENT", "name")


def test_a_foreign_key_column_does_not_rival_its_table():
    matches = KeywordDictionary(catalog()).match("customer")
    scores = {(m.table, m.column): m.score for m in matches}
    assert scores[("CLIENT", None)] - scores[("payment", "client_id")] > 0.05


def test_description_words_match_below_names():
    d = KeywordDictionary(catalog())
    m = d.match("revenue")[0]
    assert (m.table, m.column, m.via) == ("payment", "amt", "description")
    assert m.score < 0.8  # linking never trusts a description mention alone
    amounts = {(m.table, m.column): m.score for m in d.match("amount")}
    assert amounts[("payment", "amt")] == amounts[("salary", "amount")] == 1.0  # 'amt' read as 'amount'


def test_unrelated_words_match_nothing():
    d = KeywordDictionary(catalog())
    assert d.match("spaceship") == []
    assert d.match("") == []


def test_denied_tables_and_columns_are_not_in_the_dictionary():
    access = Access(tables=frozenset({"salary"}), columns=frozenset({"payment.invoice_no"}))
    d = KeywordDictionary(catalog(), access)
    assert all(m.table != "salary" for m in d.match("salary"))
    assert all(m.column != "invoice_no" for m in d.match("invoice number"))


def test_built_once_per_catalog_and_access():
    cat = catalog()
    assert keyword_dictionary(cat) is keyword_dictionary(cat)
    assert keyword_dictionary(cat, Access(tables=frozenset({"salary"}))) is not keyword_dictionary(cat)


def warehouse(tables: int) -> Catalog:
    """The small catalog above among `tables` generated ones of 20 columns (python -m core.bench
    linking's: business words, `*_id` keys, names, amounts, statuses)."""
    from core.bench.linking import filler_table

    generated = []
    for i in range(tables):
        name, cols = filler_table(i, 20)
        generated.append(Table(name, tuple(Column(c, t, "text", primary_key=c == "id") for c, t in cols)))
    small = catalog()
    return Catalog(
        database="wide",
        dialect="duckdb",
        tables=(*small.tables, *generated),
        relationships=small.relationships,
        signature="wide",
    )


def test_a_warehouse_sized_dictionary_matches_as_a_full_scan_would(monkeypatch):
    """Above LARGE_DICTIONARY texts only the word index's candidates are scored: the best
    matches, and the score of every match returned, are those of scoring every text."""
    import core.dictionary

    wide = KeywordDictionary(warehouse(1_500))
    assert len(wide._texts) > core.dictionary.LARGE_DICTIONARY
    keywords = ["clients", "customer", "paymnets", "invoice no", "host status", "budget amount", "zzz"]
    indexed = {k: wide.match(k) for k in keywords}
    monkeypatch.setattr(core.dictionary, "LARGE_DICTIONARY", 10**9)
    for keyword, got in indexed.items():
        full = wide.match(keyword)
        assert [m.score for m in got] == [m.score for m in full], keyword
        scored = {(m.table, m.column): m.score for m in wide.match(keyword, limit=10**6)}
        assert all(scored[(m.table, m.column)] == m.score for m in got), keyword
    assert best(wide, "clients")[:2] == ("CLIENT", None)
    assert indexed["zzz"] == []


def test_a_text_repeated_in_many_tables_is_cut_to_ties_only():
    """A column name repeated in hundreds of tables is scored for the first `limit` terms of each
    kind only (KeywordDictionary._kept): what is cut could at best tie with what is kept, so the
    scores returned are those of an uncapped match, for any limit."""
    wide = KeywordDictionary(warehouse(1_500))
    for keyword in ["client id", "status", "amount", "payment amount", "host"]:
        everything = wide.match(keyword, limit=10**6)
        for limit in (1, 4, 8, 12):
            got = wide.match(keyword, limit=limit)
            assert [m.score for m in got] == [m.score for m in everything[:limit]], (keyword, limit)
            assert wide.match(keyword, limit=limit) == got  # remembered per text and limit: the same


def test_tied_description_matches_come_in_catalog_order():
    """Which of several equally good description matches make the cut must not change from one
    process to the next (a set of (table, None) keys iterated in an order hash(None) picks did)."""
    names = [f"ledger_{i:02d}" for i in range(12)]
    tables = tuple(
        Table(
            name,
            (Column("id", "INTEGER", "integer", primary_key=True),),
            description="Monthly revenue figures.",
        )
        for name in names
    )
    dictionary = KeywordDictionary(Catalog(database="d", dialect="sqlite", tables=tables, signature="t"))
    found = [m.table for m in dictionary.match("revenue", limit=5) if m.via == "description"]
    assert found == names[:5]
