"""Only the catalog descriptions that matter to the question reach the prompt."""

from __future__ import annotations

from core.catalog import Catalog, Column, Table
from core.descriptions import DescriptionIndex, description_index
from core.values import Access


def catalog() -> Catalog:
    client = Table(
        "client",
        (
            Column("name", "TEXT", "text", description="Legal or trading name of the client."),
            Column(
                "status",
                "CHAR(3)",
                "text",
                description="Account status code.",
                values={"ACT": "active", "SUS": "suspended", "CHN": "churned"},
            ),
            Column(
                "zip", "TEXT", "text", description="Postal code of the head office.", synonyms=("postcode",)
            ),
            Column("ssn", "TEXT", "text", description="Social security number of the contact person."),
        ),
        description="Companies that buy cloud resources.",
        synonyms=("customer",),
    )
    payment = Table(
        "payment",
        (
            Column("amount", "NUMERIC", "number", description="Amount paid, in euros, taxes included."),
            Column(
                "method", "TEXT", "text", description="How the client paid.", values={"cc": "credit card"}
            ),
        ),
        description="Invoices paid by clients.",
    )
    host = Table("host", (Column("hostname", "TEXT", "text"),))  # nothing described: nothing to rank
    return Catalog("ops", "sqlite", (client, payment, host), signature="t")


def texts(hits) -> list[str]:
    return [h.text for h in hits]


def test_value_meanings_are_found_by_what_they_mean():
    hits = DescriptionIndex(catalog()).rank("How many customers churned last year?")
    assert hits[0].table == "client" and hits[0].column == "status" and hits[0].value == "CHN"
    assert "churned" in hits[0].text and "CHN" in hits[0].text


def test_column_descriptions_by_words_and_synonyms():
    index = DescriptionIndex(catalog())
    top = index.rank("payments by credit card in euros")
    assert {(h.table, h.column) for h in top[:2]} == {("payment", "amount"), ("payment", "method")}
    assert index.rank("clients per postcode")[0].column == "zip"


def test_rarer_words_weigh_more():
    hits = DescriptionIndex(catalog()).rank("suspended clients")
    assert hits[0].value == "SUS"
    assert all(0 < h.score <= 1 for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_nothing_relevant_gives_nothing():
    index = DescriptionIndex(catalog())
    assert index.rank("what is the weather on mars") == []
    assert index.rank("") == []
    assert len(index.rank("client payment status amount name", k=3)) == 3


def test_denied_descriptions_never_reach_the_prompt():
    access = Access(tables=frozenset({"payment"}), columns=frozenset({"client.ssn"}))
    hits = DescriptionIndex(catalog(), access).rank("social security number of the contact; amount paid")
    assert all(h.table != "payment" and h.column != "ssn" for h in hits)


def test_built_once_per_catalog():
    cat = catalog()
    assert description_index(cat) is description_index(cat)
