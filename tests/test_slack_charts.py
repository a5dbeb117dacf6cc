"""Charts: drawn for a time series or a category → number breakdown, and only then."""

from __future__ import annotations

import datetime as dt

from bot.charts import chart_png, chart_spec


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
