"""Warehouse sessions: how Askbase connects to Snowflake, BigQuery, Databricks SQL, Trino and
Redshift, and what it sends before every query.

Decisions (docs/warehouses.md has one section per engine):
- Connect arguments name Askbase as the application (Snowflake `application`, Trino `source`,
  Databricks `user_agent_entry`) and allow one statement per call (Snowflake
  `MULTI_STATEMENT_COUNT=1`), so a second statement is an error of the warehouse's own.
- Before every query the executor sends `before_query(...)`: the statement timeout of this query
  and who it runs for (core/attribution.py) —
  Snowflake `ALTER SESSION SET QUERY_TAG = '{json}', STATEMENT_TIMEOUT_IN_SECONDS = n`;
  Redshift `SET statement_timeout`, `SET query_group` (its WLM label), in a transaction that is
  read-only; Databricks `SET STATEMENT_TIMEOUT = n`; Trino `SET SESSION query_max_execution_time`
  and the connection's client tags. BigQuery has no session: its job configuration carries the
  same (core/warehouse/bigquery.py).
- BigQuery: every job of the engine's connections (reflection, sample rows, the value index) is
  billed at most `warehouse.max_bytes_billed` and labelled `app=askbase` (the client's default
  job configuration); questions' queries get a dry run first (core/warehouse/bigquery.py).
- Read-only on a warehouse is the account's grants (only Redshift has a read-only transaction):
  the docs give the least privileges per engine, the guard refuses anything but one SELECT, and
  the executor, behind it, sends nothing sqlglot does not read as one query (`only_a_query`);
  every query also runs in a transaction that is rolled back.
- Values written into these statements are ours (ids, numbers), quoted as string literals with
  quotes doubled; the question's text is never sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from core.attribution import Attribution
from core.settings import WarehouseSettings
from core.warehouse import require

SESSION_BACKENDS = frozenset({"snowflake", "redshift", "databricks", "trino"})
POOL_SIZE = 5
MAX_OVERFLOW = 5
DEFAULT_TIMEOUT_S = 60  # the session's own timeout until the first query sets its own


def warehouse_engine(
    url: sa.URL, settings: WarehouseSettings, extra_connect_args: Mapping[str, Any] | None = None
) -> sa.Engine:
    """An engine for a warehouse URL, with the connect arguments of `connect_args`.

    `extra_connect_args` are objects the settings cannot hold, e.g. a BigQuery client built by
    the caller (`bigquery://project/dataset?user_supplied_client=true` and `{"client": client}`).
    """
    backend = url.get_backend_name()
    require(backend)
    if backend == "snowflake":
        query = dict(url.query)
        for key, value in (("role", settings.role), ("warehouse", settings.warehouse)):
            if value and key not in query:
                query[key] = value
        url = url.set(query=query)
    if backend == "redshift" and url.drivername == "redshift":
        url = url.set(drivername="redshift+redshift_connector")
    engine = sa.create_engine(
        url,
        pool_size=POOL_SIZE,
        max_overflow=MAX_OVERFLOW,
        pool_pre_ping=True,
        pool_recycle=1800,
        connect_args={**connect_args(backend), **settings.connect, **(extra_connect_args or {})},
    )
    if backend == "bigquery":
        cap = settings.max_bytes_billed

        @sa.event.listens_for(engine, "connect")
        def _capped(dbapi_conn: Any, _record: object) -> None:
            """Every job of this connection — reflection, samples, the value index — is billed at
            most the cap and labelled; the executor's own jobs add the asker and the trace."""
            from google.cloud import bigquery

            dbapi_conn._client.default_query_job_config = bigquery.QueryJobConfig(
                maximum_bytes_billed=cap, labels={"app": "askbase", "purpose": "catalog"}
            )

    return engine


def connect_args(backend: str) -> dict[str, Any]:
    """What each new connection is opened with."""
    if backend == "snowflake":
        return {
            "application": "Askbase",
            "platform_detection_timeout_seconds": 0,  # no probing of cloud metadata endpoints
            "session_parameters": {
                "QUERY_TAG": Attribution("", "", "").tag(),
                "STATEMENT_TIMEOUT_IN_SECONDS": DEFAULT_TIMEOUT_S,
                "MULTI_STATEMENT_COUNT": 1,
            },
        }
    if backend == "trino":
        return {
            "source": "askbase",
            "client_tags": ["askbase"],
            "session_properties": {"query_max_execution_time": f"{DEFAULT_TIMEOUT_S}s"},
        }
    if backend == "databricks":
        return {
            "user_agent_entry": "askbase",
            "session_configuration": {"STATEMENT_TIMEOUT": str(DEFAULT_TIMEOUT_S), "ANSI_MODE": "true"},
        }
    if backend == "redshift":
        return {"application_name": "askbase", "timeout": 10}
    return {}


def before_query(backend: str, timeout_s: float, who: Attribution, database: str) -> list[str]:
    """The statements the executor sends, inside the query's transaction, before the query."""
    seconds = max(1, round(timeout_s))
    if backend == "snowflake":
        return [
            f"ALTER SESSION SET QUERY_TAG = {_literal(who.tag(database))}, "
            f"STATEMENT_TIMEOUT_IN_SECONDS = {seconds}"
        ]
    if backend == "redshift":
        label = ";".join(who.words())[:320]
        return [
            "SET TRANSACTION READ ONLY",
            f"SET statement_timeout TO {max(1, int(timeout_s * 1000))}",
            f"SET query_group TO {_literal(label)}",
        ]
    if backend == "databricks":
        return [f"SET STATEMENT_TIMEOUT = {seconds}"]
    if backend == "trino":
        return [f"SET SESSION query_max_execution_time = '{seconds}s'"]
    return []


def tag_connection(backend: str, raw: Any, who: Attribution) -> None:
    """Trino sends its client tags with every request from the connection's session: set them."""
    if backend == "trino":
        session = getattr(raw, "_client_session", None)
        if session is not None:
            session.client_tags = who.words()


def only_a_query(sql: str, dialect: str) -> str | None:
    """Why `sql` is not one query in `dialect`, or None. Warehouses have no read-only session:
    behind the guard, the executor refuses anything else before it reaches them."""
    import sqlglot
    from sqlglot import exp

    try:
        statements = [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    except sqlglot.errors.SqlglotError:
        return "it could not be read as one query"
    if len(statements) != 1:
        return f"{len(statements)} statements; only one query can run"
    root = statements[0]
    while isinstance(root, exp.Subquery):
        root = root.this
    if not isinstance(root, exp.Select | exp.SetOperation) or root.find(
        exp.Insert, exp.Update, exp.Delete, exp.Merge
    ):
        return f"only a query can run, not {type(root).__name__.upper()}"
    return None


def _literal(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"
