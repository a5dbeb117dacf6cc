"""Charts: drawn for a time series or a category → number breakdown, and only then."""

from __future__ import annotations

import datetime as dt
import struct

from bot.charts import alt_text, category_labels, chart_for, chart_png, chart_spec
from core.result_shape import result_shape


def test_a_time_series_is_a_line_over_time_with_labelled_axes():
    rows = [("2024-01", 10.5), ("2024-02", 12.0), ("2024-03", 9.25)]
    spec = chart_spec(["month", "revenue"], rows, "Revenue per month in 2024?")
    assert spec is not None and spec.kind == "line"
    assert (spec.xlabel, spec.ylabel, spec.title) == ("Month", "Revenue", "Revenue per month in 2024?")
    png = chart_png(["month", "revenue"], rows, "Revenue per month in 2024?")
    assert png and png.startswith(b"\x89PNG")


def test_real_dates_and_year_numbers_are_time_too():
    days = [(dt.date(2024, 1, d), d * 2) for d in range(1, 6)]
    assert chart_spec(["paid_on", "payments"], days).kind == "line"
    assert chart_spec(["year", "clients"], [(2022, 5), (2023, 7), (2024, 9)]).kind == "line"


def test_a_category_breakdown_is_a_bar_chart():
    rows = [("enterprise", 80), ("smb", 120), ("startup", 70), ("public sector", 30)]
    spec = chart_spec(["segment", "clients"], rows, "Clients per segment")
    assert spec is not None and spec.kind == "bar" and (spec.x, spec.y) == (0, 1)
    assert chart_png(["segment", "clients"], rows).startswith(b"\x89PNG")
    many = [(f"a fairly long category name {i}", i) for i in range(20)]  # horizontal bars
    assert chart_png(["name", "n"], many).startswith(b"\x89PNG")


def test_no_chart_where_a_chart_would_mislead():
    assert chart_spec(["name", "email"], [("a", "a@x"), ("b", "b@x")]) is None  # no number
    assert chart_spec(["name", "id"], [("a", 1), ("b", 2)]) is None  # ids are not measures
    assert chart_spec(["clients"], [(300,)]) is None  # one value
    assert chart_spec(["segment", "n"], [("smb", 1)]) is None  # one row
    two_series = [("2024-01", "smb", 1), ("2024-01", "startup", 2), ("2024-02", "smb", 3)]
    assert chart_spec(["month", "segment", "n"], two_series) is None  # several rows per x
    assert chart_spec(["name", "n"], [(f"c{i}", i) for i in range(100)]) is None  # too many bars


# ---------------------------------------------------------------- charts worth looking at


def png_size(png: bytes) -> tuple[int, int]:
    return struct.unpack(">II", png[16:24])


def demo_shape(demo_db, sql: str, columns: list[str]):
    return result_shape(sql, columns, demo_db.catalog)


def test_counts_and_sums_start_at_zero_and_averages_need_not(demo_db):
    counts = "SELECT strftime('%Y-%m', paid_on) AS month, COUNT(*) AS payments FROM payment GROUP BY 1"
    rows = [("2024-01", 56), ("2024-02", 61), ("2026-06", 113)]
    spec = chart_spec(
        ["month", "payments"], rows, "Payments per month", demo_shape(demo_db, counts, ["month", "payments"])
    )
    assert spec.kind == "line" and spec.zero_baseline
    average = "SELECT strftime('%Y', opened_on) AS year, AVG(cpu_cores) AS cores FROM compute JOIN datacenter ON datacenter.id = compute.dc_id GROUP BY 1"
    rows = [("2019", 48.5), ("2020", 52.0), ("2021", 50.25)]
    spec = chart_spec(["year", "cores"], rows, "", demo_shape(demo_db, average, ["year", "cores"]))
    assert spec.kind == "line" and not spec.zero_baseline  # an average's scale is its own


def test_units_from_the_catalog_and_thousands_separators_reach_labels_and_alt_text(demo_db):
    sql = (
        "SELECT c.segment, SUM(b.credit_amount) AS credit FROM client c JOIN retention r ON r.client_id = c.id "
        "JOIN bonus b ON b.retention_id = r.id GROUP BY c.segment"
    )
    rows = [("smb", 67650.0), ("startup", 46000.0), ("enterprise", 45050.0), ("public sector", 25150.0)]
    chart = chart_for(
        ["segment", "credit"],
        rows,
        "Bonus credit per segment",
        demo_shape(demo_db, sql, ["segment", "credit"]),
    )
    assert chart.spec.ylabel == "Credit (€)" and chart.spec.zero_baseline  # "Credit granted, in euros."
    assert "highest smb (67,650 €)" in chart.alt and "lowest public sector (25,150 €)" in chart.alt
    assert png_size(chart.png) == (1600, 900)  # twice the usual 800 × 450


def test_codes_are_spelled_out_as_the_catalog_decodes_them(demo_db):
    sql = "SELECT status, COUNT(*) AS clients FROM client GROUP BY status"
    rows = [("ACT", 236), ("CHN", 48), ("SUS", 16)]
    spec = chart_spec(["status", "clients"], rows, "", demo_shape(demo_db, sql, ["status", "clients"]))
    assert category_labels(spec, [r[0] for r in rows]) == ["active", "churned", "suspended"]
    assert "highest active (236), lowest suspended (16)" in alt_text(spec, rows)
    # meanings too long for a label keep the codes, all of them (never a mix)
    sql = "SELECT segment, COUNT(*) AS n FROM client GROUP BY segment"
    rows = [("enterprise", 80), ("smb", 120), ("public sector", 30)]
    spec = chart_spec(["segment", "n"], rows, "", demo_shape(demo_db, sql, ["segment", "n"]))
    assert category_labels(spec, [r[0] for r in rows]) == ["enterprise", "smb", "public sector"]


def test_the_alt_text_of_a_time_series_says_the_trend():
    rows = [("2024-01", 56), ("2025-03", 130), ("2026-06", 113)]
    spec = chart_spec(["month", "payments"], rows, "Payments per month")
    assert alt_text(spec, rows) == (
        "Line chart: Payments per month. Payments rose from 56 in Jan 2024 to 113 in Jun 2026, highest 130 in Mar 2025."
    )
