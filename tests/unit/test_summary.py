"""How results read to people (core/result_shape.py, core/summary.py, core/units.py,
core/suggestions.py): what columns mean, one rounding everywhere, sentences that say what the rows are."""

from __future__ import annotations

import csv
import datetime as dt
from dataclasses import replace

from core.answer import Outcome
from core.catalog import Column
from core.result_shape import humanize, plain_shape, result_shape
from core.suggestions import example_questions
from core.summary import cell, number_style, present, round_csv_file, summarize
from core.units import unit_of, with_unit

CREDIT_BY_CLIENT = """
WITH v AS (
  SELECT c.name AS client_name, b.credit_amount AS credit
  FROM client c JOIN retention r ON r.client_id = c.id JOIN bonus b ON b.retention_id = r.id
)
SELECT client_name, ROUND(SUM(credit), 2) AS total_credit FROM v GROUP BY client_name ORDER BY total_credit DESC
"""


def test_a_column_is_traced_through_a_cte_to_its_catalog_unit_and_aggregate(demo_db):
    shape = result_shape(CREDIT_BY_CLIENT, ["client_name", "total_credit"], demo_db.catalog)
    name, credit = shape.columns
    # (names in lower case: Snowflake keeps them in capitals)
    assert (name.header, name.table.lower(), name.column.lower(), name.aggregate) == (
        "Client name",
        "client",
        "name",
        "",
    )
    assert (credit.header, credit.unit, credit.aggregate, credit.additive) == (
        "Total credit",
        "€",
        "sum",
        True,
    )
    assert credit.titled == "Total credit (€)"
    assert [(o.index, o.descending) for o in shape.order] == [(1, True)]


def test_counts_ratios_and_ids_are_told_apart(demo_db):
    sql = (
        "SELECT c.id, c.segment, COUNT(*) AS n, SUM(u.cost) / COUNT(*) AS avg_cost, MAX(u.memory_gb_hours) "
        "FROM client c JOIN usage u ON u.client_id = c.id GROUP BY c.id, c.segment"
    )
    shape = result_shape(sql, ["id", "segment", "n", "avg_cost", "MAX(u.memory_gb_hours)"], demo_db.catalog)
    ident, segment, n, ratio, peak = shape.columns
    assert ident.identifier and ident.header == "ID"
    assert segment.codes["smb"] == "small and medium-sized business"  # the catalog's meaning of a code
    assert (n.header, n.aggregate, n.unit) == ("Count", "count", "")
    assert (ratio.aggregate, ratio.unit, ratio.header) == ("", "", "Average cost")  # a ratio: no unit claimed
    assert (peak.aggregate, peak.unit, peak.header) == ("max", "GB·h", "Highest memory GB hours")


def test_same_named_columns_get_distinct_headers_and_odd_sql_still_reads(demo_db):
    sql = "SELECT c.name, d.name FROM client c JOIN location l ON l.id = c.loc_id JOIN datacenter d ON d.loc_id = l.id"
    # two outputs named "name": lineage cannot key them apart, the headers still read
    assert result_shape(sql, ["name", "name"], demo_db.catalog).headers == ("Name", "Name")
    assert result_shape("SELEC nonsense FROM", ["num_clients"], demo_db.catalog).headers == (
        "Number of clients",
    )
    assert result_shape("SELECT a FROM t UNION SELECT b FROM u", ["a"], demo_db.catalog).headers == ("A",)


def test_a_lone_generic_column_is_headed_with_what_it_names(demo_db):
    sql = (
        "SELECT d.name, COUNT(*) AS number_of_clients FROM client c JOIN location l ON l.id = c.loc_id "
        "JOIN datacenter d ON d.loc_id = l.id GROUP BY d.name"
    )
    assert result_shape(sql, ["name", "number_of_clients"], demo_db.catalog).headers == (
        "Datacenter name",  # not 'Name': names of what?
        "Number of clients",
    )
    # an alias chosen by the writer is kept as written
    aliased = sql.replace("d.name,", "d.name AS datacenter,").replace("BY d.name", "BY datacenter")
    assert (
        result_shape(aliased, ["datacenter", "number_of_clients"], demo_db.catalog).headers[0] == "Datacenter"
    )


def test_humanized_names():
    assert [
        humanize(n) for n in ("num_clients", "avg_cpu_mhz", "id", "clientName", "n_pools", "total_amt")
    ] == [
        "Number of clients",
        "Average CPU MHz",
        "ID",
        "Client name",
        "Number of pools",
        "Total amount",
    ]
    # names in capitals, as Snowflake keeps them, read as the same names in lower case; a lone
    # short one is still an acronym
    assert [humanize(n) for n in ("MEMORY_GB_HOURS", "NUM_CLIENTS", "STATUS", "ID", "SKU")] == [
        "Memory GB hours",
        "Number of clients",
        "Status",
        "ID",
        "SKU",
    ]


def test_units_come_from_the_catalog_or_its_words():
    assert unit_of(Column("credit", "REAL", description="Credit granted, in euros.")) == "€"
    assert (
        unit_of(
            Column(
                "limit_mhz", "INT", description="Maximum CPU the pool may use, in MHz; empty means unlimited."
            )
        )
        == "MHz"
    )
    assert unit_of(Column("country", "TEXT", description="Country name in English.")) == ""  # not a unit
    assert unit_of(Column("cost", "REAL", description="Cost in euros", unit="CHF")) == "CHF"  # stated wins
    assert [with_unit("12,300", u) for u in ("€", "$", "%", "")] == [
        "12,300 €",
        "$12,300",
        "12,300%",
        "12,300",
    ]
    assert with_unit("-5", "$") == "-$5"


def test_one_rounding_per_column_stored_precision_kept_computed_values_two_decimals():
    assert number_style([13092.369999999997, 500.5]).decimals == 2
    assert number_style([0.1 + 0.2, 2.5]).decimals == 1
    assert number_style([0.012345, 0.5]).decimals == 3  # two significant digits of the smallest
    assert number_style([1, 2, 3]).decimals == 0 and number_style(["a", 1]).decimals is None
    latitude = result_shape("SELECT latitude FROM location", ["latitude"]).columns[0]
    stored = replace(latitude, column="latitude")  # read from a stored column: its precision stays
    assert number_style([48.137154, 52.52], stored).decimals == 6
    assert cell(None) == "—" and cell(1234567, number_style([1234567])) == "1,234,567"
    year = result_shape("SELECT year, n FROM t", ["year", "n"]).columns[0]
    assert cell(2024, number_style([2024, 2025], year)) == "2024"  # no separators in a year


def test_a_single_value_is_a_sentence_of_its_own():
    assert summarize("Count the clients", ["clients"], [(300,)], False) == "Number of clients: 300."
    assert summarize("", ["total_credit"], [(12300.5,)], False) == "Total credit: 12,300.5."
    assert summarize("Sum the payment amounts", ["total"], [(None,)], False) == "Total payment amounts: —."
    assert summarize("", ["n"], [], False) == "No rows match the question."


def test_a_sentence_says_what_the_rows_are_and_their_order(demo_db):
    shape = result_shape(CREDIT_BY_CLIENT, ["client_name", "total_credit"], demo_db.catalog)
    rows = [("Acme", 12300.0), ("Bolt & Co", 11900.5), ("Core", 9000.25), ("Delta", 10.0)]
    assert summarize("List the top 10 clients by total credit", shape.headers, rows, False, shape) == (
        "Top 10 clients by total credit (4 rows), highest total credit first: "
        "Acme (12,300.00 €), Bolt & Co (11,900.50 €), Core (9,000.25 €) and 1 more."
    )


def test_a_time_series_sentence_says_where_it_went():
    rows = [(dt.date(2024, 1, 1), 56), (dt.date(2025, 3, 1), 130), (dt.date(2026, 6, 1), 113)]
    text = summarize("Count the payments per month", ["month", "payments"], rows, False)
    assert text == (
        "Number of payments per month (3 rows): payments rose from 56 in Jan 2024 to 113 in Jun 2026, "
        "highest 130 in Mar 2025."
    )


def test_the_same_rounding_in_the_csv_file_written_by_an_export(tmp_path):
    path = tmp_path / "export.csv"
    path.write_text("client,total,id\nAcme,13092.369999999997,1\nBolt,500.5,2\nNone,,3\n")
    round_csv_file(path, plain_shape(["client", "total", "id"]))
    with path.open(newline="") as f:
        assert list(csv.reader(f)) == [
            ["client", "total", "id"],
            ["Acme", "13092.37", "1"],
            ["Bolt", "500.5", "2"],
            ["None", "", "3"],
        ]
    outcome = Outcome(
        status="answer", question="q", columns=("client", "total"), rows=[("Acme", 13092.369999999997)]
    )
    presentation = present(outcome)
    assert presentation.cells(outcome.rows[0]) == ["Acme", "13,092.37"]
    assert presentation.csv_row(outcome.rows[0]) == ["Acme", 13092.37]


def test_suggested_questions_are_the_catalogs_then_confirmed_then_built(demo_db):
    catalog = demo_db.catalog
    assert example_questions(catalog) == list(catalog.examples[:4])
    bare = replace(catalog, examples=())
    asked = example_questions(bare, ["How many pools are there?", "how many pools are there"])
    assert asked[0] == "How many pools are there?" and len(asked) == 3  # duplicates dropped, topped up to 3
    assert all(q.startswith("How many ") and q.endswith("?") for q in asked)
    built = example_questions(bare)
    tables = {t.name.replace("_", " ").lower() for t in catalog.tables}
    assert len(built) == 3 and all(any(t in q for t in tables) for q in built)  # real tables, not generic
