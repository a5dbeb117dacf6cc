"""BigQuery: every query priced before it runs, billed at most the cap, labelled with who asked.

Decisions (docs/warehouses.md#bigquery):
- A dry run first (`dry_run=True`, no cache): BigQuery says how many bytes the query would
  process, for free. Over `warehouse.max_bytes_billed`, the query is refused before it runs, with
  a message that states the estimate and the cap (`OverCap`).
- The job itself carries `maximum_bytes_billed` = the cap as well: if the estimate was wrong (it
  can be, for clustered tables), BigQuery fails the job rather than bill more.
- Every job — the dry run too — carries labels `app=askbase`, the asker, the source and the trace
  id (core/attribution.py), and a job timeout; rows are fetched page by page.
- The client is the one inside the SQLAlchemy dialect's DB-API connection
  (`google.cloud.bigquery.dbapi.Connection._client`), so credentials, project and location come
  from the URL as for reflection; tests hand that connection a fake client that records every
  job configuration (tests/fakes/bigquery_client.py).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any


class OverCap(Exception):
    """The dry run says the query would process more than the cap."""

    def __init__(self, estimate: int, cap: int) -> None:
        super().__init__(estimate, cap)
        self.estimate = estimate
        self.cap = cap

    @property
    def message(self) -> str:
        return (
            f"This query would process about {human_bytes(self.estimate)} on BigQuery, over the "
            f"{human_bytes(self.cap)} this database allows per query (warehouse.max_bytes_billed), "
            "so it was not run. Ask about a shorter period or fewer columns."
        )


def human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("bytes", "KB", "MB", "GB", "TB"):
        if size < 1000 or unit == "TB":
            return f"{size:,.0f} {unit}" if unit == "bytes" else f"{size:,.1f} {unit}"
        size /= 1000
    return f"{n} bytes"  # pragma: no cover


def default_dataset(dialect: Any) -> str | None:
    """`project.dataset` of the URL (`bigquery://project/dataset`): unqualified tables are there."""
    project, dataset = getattr(dialect, "project_id", None), getattr(dialect, "dataset_id", None)
    return f"{project}.{dataset}" if project and dataset else None


def client_of(raw: Any) -> Any:
    """The google.cloud.bigquery Client of a DB-API connection of sqlalchemy-bigquery."""
    return raw._client


def run(
    raw: Any,
    sql: str,
    *,
    cap: int,
    timeout_s: float,
    labels: Mapping[str, str],
    page_size: int,
    default_dataset: str | None = None,
) -> tuple[tuple[str, ...], Iterator[tuple[Any, ...]]]:
    """(columns, rows) of `sql`, after a dry run within `cap`; OverCap when the dry run is over it."""
    from google.cloud import bigquery

    client = client_of(raw)
    dry = client.query(
        sql,
        job_config=bigquery.QueryJobConfig(
            dry_run=True,
            use_query_cache=False,
            labels=dict(labels),
            maximum_bytes_billed=cap,
            default_dataset=default_dataset,
        ),
    )
    estimate = int(dry.total_bytes_processed or 0)
    if estimate > cap:
        raise OverCap(estimate, cap)
    job = client.query(
        sql,
        job_config=bigquery.QueryJobConfig(
            maximum_bytes_billed=cap,
            labels=dict(labels),
            job_timeout_ms=max(1, int(timeout_s * 1000)),
            use_legacy_sql=False,
            default_dataset=default_dataset,
        ),
        timeout=timeout_s,
    )
    rows = job.result(page_size=page_size, timeout=timeout_s)
    columns = tuple(field.name for field in rows.schema)
    return columns, (tuple(row.values()) for row in rows)
