"""A fake DB-API 2.0 connection that records everything sent to it, for warehouses that cannot run
here (Databricks SQL, Trino, Redshift).

Tests put `FakeDriver.connect` where the real driver's `connect` is (`databricks.sql.connect`,
`trino.dbapi.connect`, `redshift_connector.connect`): SQLAlchemy, the vendor's dialect and
Askbase's code run for real, and the recorder sees the connect arguments, every statement in
order, commits and rollbacks. It answers the catalog queries from `tables` and every other
query with `rows` (one row `(1,)` unless a test says otherwise).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ClientSession:
    """Trino's: its client tags go with every request of the connection."""

    client_tags: list[str] = field(default_factory=list)


@dataclass
class FakeDriver:
    tables: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # table → (column, type)
    schema: str = "main"
    rows: list[tuple[Any, ...]] = field(default_factory=lambda: [(1,)])
    columns: tuple[str, ...] = ("n",)
    connects: list[dict[str, Any]] = field(default_factory=list)
    sent: list[str] = field(default_factory=list)  # statements, and "<rollback>" / "<commit>"
    tags: list[list[str]] = field(default_factory=list)  # Trino client tags at each statement

    def connect(self, *args: Any, **kwargs: Any) -> FakeConnection:
        self.connects.append(kwargs)
        return FakeConnection(self)

    def answer(self, sql: str) -> tuple[tuple[str, ...], list[tuple[Any, ...]]]:
        low = " ".join(sql.lower().split())
        if "information_schema.columns" in low:
            rows = [
                (self.schema, table, column, type_, "YES", i + 1, "BASE TABLE", None, None)
                for table, cols in self.tables.items()
                for i, (column, type_) in enumerate(cols)
            ]
            return (
                "table_schema",
                "table_name",
                "column_name",
                "data_type",
                "is_nullable",
                "p",
                "t",
                "np",
                "ns",
            ), rows
        if "table_constraints" in low or "information_schema.views" in low:
            return ("a", "b", "c", "d", "e", "f", "g", "h"), []
        if low.startswith(("select version()", "select pg_catalog.version()")):
            return ("version",), [("PostgreSQL 8.0.2 on Redshift 1.0.0",)]
        if "current_schema" in low or "current_database" in low:
            return ("name",), [(self.schema,)]
        if low.startswith("show "):
            return ("setting",), [("on",)]
        if low.startswith(("set ", "begin", "start")):
            return (), []
        return self.columns, list(self.rows)


class FakeConnection:
    def __init__(self, driver: FakeDriver) -> None:
        self.driver = driver
        self._client_session = ClientSession()
        self.autocommit = False
        self.notices: list[str] = []
        self.py_types: dict[Any, Any] = {str: "str"}  # redshift_connector's type map, read by its dialect
        self.transaction: object | None = None  # Trino's: its dialect rolls back an open one
        self.schema = driver.schema  # Trino's dialect reads the connection's schema and catalog
        self.catalog = "hive"

    def cursor(self, *args: Any, **kwargs: Any) -> FakeCursor:
        return FakeCursor(self)

    def commit(self) -> None:
        self.driver.sent.append("<commit>")

    def rollback(self) -> None:
        self.driver.sent.append("<rollback>")

    def close(self) -> None:
        pass


class FakeCursor:
    arraysize = 1

    def __init__(self, conn: FakeConnection) -> None:
        self.conn = conn
        self.description: Sequence[tuple[Any, ...]] | None = None
        self._rows: list[tuple[Any, ...]] = []
        self.rowcount = -1

    def execute(self, sql: str, params: Any = None, *args: Any, **kwargs: Any) -> FakeCursor:
        driver = self.conn.driver
        driver.sent.append(sql)
        driver.tags.append(list(self.conn._client_session.client_tags))
        names, rows = driver.answer(sql)
        self.description = [(n, None, None, None, None, None, True) for n in names] if names else None
        self._rows = list(rows)
        self.rowcount = len(self._rows)
        return self

    def fetchone(self) -> tuple[Any, ...] | None:
        return self._rows.pop(0) if self._rows else None

    def fetchmany(self, size: int | None = None) -> list[tuple[Any, ...]]:
        size = size or self.arraysize
        out, self._rows = self._rows[:size], self._rows[size:]
        return out

    def fetchall(self) -> list[tuple[Any, ...]]:
        out, self._rows = self._rows, []
        return out

    def close(self) -> None:
        pass

    def __iter__(self) -> Any:
        return iter(self.fetchall())
