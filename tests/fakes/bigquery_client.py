"""A fake google.cloud.bigquery Client: records every job configuration, answers from DuckDB.

BigQuery cannot run here (no network), so tests stop at the client boundary: Askbase's own code,
sqlalchemy-bigquery's dialect and google-cloud-bigquery's DB-API run for real, and only the
object that would send HTTP requests is this fake. It

- records each call (`jobs`: the SQL and the QueryJobConfig as given, dry runs included);
- says how many bytes a query would process (`bytes_for`, 1 MB a query unless a test says more);
- runs queries on an in-memory DuckDB holding the test's tables (SQL transpiled from BigQuery's
  dialect with sqlglot), and answers INFORMATION_SCHEMA and `__TABLES__` from that DuckDB's own
  catalog, as BigQuery would lay them out for one dataset.

Rows come back as real `google.cloud.bigquery.Row`s with real `SchemaField`s.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import duckdb
import sqlglot
from google.cloud.bigquery import QueryJobConfig, Row, SchemaField

_TYPES = {"BIGINT": "INT64", "INTEGER": "INT64", "DOUBLE": "FLOAT64", "VARCHAR": "STRING", "DATE": "DATE"}


@dataclass
class Job:
    sql: str
    config: QueryJobConfig | None
    timeout: float | None = None


class FakeRows:
    """What `QueryJob.result()` and `Client.query_and_wait()` return."""

    def __init__(self, schema: list[SchemaField], rows: list[tuple[Any, ...]]) -> None:
        self.schema = schema
        self._rows = rows
        self.total_rows = len(rows)
        self.num_dml_affected_rows = None
        index = {f.name: i for i, f in enumerate(schema)}
        self._objects = [Row(r, index) for r in rows]

    def __iter__(self) -> Iterator[Row]:
        return iter(self._objects)

    def _should_use_bqstorage(self, *_args: Any, **_kwargs: Any) -> bool:
        return False


class FakeJob:
    def __init__(self, client: FakeClient, sql: str, config: QueryJobConfig | None) -> None:
        self.client = client
        self.sql = sql
        self.config = config
        self.total_bytes_processed = client.bytes_for(sql)
        self.job_id = f"job_{len(client.jobs)}"

    def result(self, page_size: int | None = None, timeout: float | None = None, **_: Any) -> FakeRows:
        return self.client.run(self.sql, self.config)


@dataclass
class FakeClient:
    dataset: str
    project: str = "proj"
    db: duckdb.DuckDBPyConnection = field(default_factory=duckdb.connect)
    jobs: list[Job] = field(default_factory=list)
    bytes_for: Callable[[str], int] = lambda _sql: 1_000_000
    default_query_job_config: QueryJobConfig | None = None

    # ---- the surface google.cloud.bigquery.dbapi and Askbase use
    def query(
        self, sql: str, job_config: QueryJobConfig | None = None, timeout: float | None = None, **_: Any
    ) -> FakeJob:
        config = self._merged(job_config)
        self.jobs.append(Job(sql, config, timeout))
        return FakeJob(self, sql, config)

    def query_and_wait(self, sql: str, job_config: QueryJobConfig | None = None, **_: Any) -> FakeRows:
        config = self._merged(job_config)
        self.jobs.append(Job(sql, config))
        return self.run(sql, config)

    def _merged(self, config: QueryJobConfig | None) -> QueryJobConfig | None:
        """As the real Client does: the job's own settings, the client's default for the rest."""
        if self.default_query_job_config is None:
            return config
        return (config or QueryJobConfig())._fill_from_default(self.default_query_job_config)

    def _ensure_bqstorage_client(self, *_args: Any, **_kwargs: Any) -> None:
        return None

    def close(self) -> None:
        pass

    # ---- answering
    def run(self, sql: str, config: QueryJobConfig | None = None) -> FakeRows:
        """Run on DuckDB; BigQuery's named parameters (@name) become DuckDB's ($name)."""
        local = self._catalog_query(sql)
        if local is None:
            local = sqlglot.transpile(sql, read="bigquery", write="duckdb")[0]
        params = {p.name: p.value for p in (config.query_parameters if config is not None else [])}
        cursor = self.db.execute(local, params) if params else self.db.execute(local)
        names = [d[0] for d in cursor.description or []]
        kinds = [_TYPES.get(str(d[1]).upper(), "STRING") for d in cursor.description or []]
        rows = [tuple(r) for r in cursor.fetchall()]
        return FakeRows([SchemaField(n, k) for n, k in zip(names, kinds, strict=True)], rows)

    def _catalog_query(self, sql: str) -> str | None:
        """BigQuery's per-dataset catalog views, answered from DuckDB's catalog."""
        ds = self.dataset
        if "INFORMATION_SCHEMA.COLUMNS" in sql:
            return (
                f"SELECT '{ds}' AS table_schema, c.table_name, c.column_name, "
                "CASE c.data_type WHEN 'BIGINT' THEN 'INT64' WHEN 'INTEGER' THEN 'INT64' WHEN 'DOUBLE' THEN "
                "'FLOAT64' WHEN 'VARCHAR' THEN 'STRING' ELSE c.data_type END AS data_type, c.is_nullable, "
                "c.ordinal_position, t.table_type FROM information_schema.columns c JOIN information_schema.tables t "
                "ON t.table_name = c.table_name AND t.table_schema = c.table_schema WHERE c.table_schema = 'main'"
            )
        if re.search(r"INFORMATION_SCHEMA\.(VIEWS)", sql):
            return "SELECT 'x', 'x', 'x' WHERE false"
        if "table_constraints" in sql:
            return "SELECT 'x', 'x', 'x', 'x', 'x', 1, 'x', 'x' WHERE false"
        if "__TABLES__" in sql:
            return f"SELECT '{ds}', table_name, estimated_size FROM duckdb_tables()"
        return None

    @property
    def queries(self) -> list[Job]:
        """The jobs that ran (or would have): not the dry runs."""
        return [j for j in self.jobs if not (j.config is not None and j.config.dry_run)]
