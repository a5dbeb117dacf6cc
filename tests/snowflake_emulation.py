"""fakesnow, Snowflake's emulation on DuckDB, as a server on 127.0.0.1 the real connector talks to.

fakesnow lives in its own virtualenv, `.venv-fakesnow` (it pins sqlglot and connector versions
Askbase does not use; `make fakesnow` and .ci/run create it): tests start
tests/fakes/fakesnow_server.py there, one server per test session, and connect with the
project's own snowflake-connector-python and snowflake-sqlalchemy. Without the virtualenv the
Snowflake tests skip, saying so; in CI it is always there.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from tests.shared_run import run_lock, run_owner

ROOT = Path(__file__).resolve().parents[1]
# The connector's Rust core looks for an AWS region in the EC2 metadata service at 169.254.169.254;
# tests reach 127.0.0.1 only.
os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")
PYTHON = ROOT / ".venv-fakesnow" / "bin" / "python"
SERVER = ROOT / "tests" / "fakes" / "fakesnow_server.py"


@dataclass(frozen=True)
class Emulation:
    port: int
    log: Path

    def url(self, database: str, schema: str) -> str:
        return f"snowflake://fake:snow@fakesnow/{database}/{schema}"

    @property
    def connect_args(self) -> dict[str, str | int | float | bool]:
        """What `warehouse.connect` holds for a database on the emulation."""
        return {"host": "127.0.0.1", "port": self.port, "protocol": "http", "request_timeout": 10}

    def connect(self, **kwargs: Any) -> Any:
        """A plain connector connection (for setting tests up)."""
        import snowflake.connector

        return snowflake.connector.connect(
            user="fake",
            password="snow",
            account="fakesnow",
            host="127.0.0.1",
            port=self.port,
            protocol="http",
            request_timeout=10,
            platform_detection_timeout_seconds=0,
            **kwargs,
        )

    def engine(self, database: str, schema: str) -> Any:
        """A writable SQLAlchemy engine on `database`.`schema` (for setting tests up)."""
        import sqlalchemy as sa

        return sa.create_engine(
            self.url(database, schema),
            poolclass=sa.pool.NullPool,
            connect_args={**self.connect_args, "platform_detection_timeout_seconds": 0},
        )

    def load_sqlite(self, source: Path, database: str, schema: str = "PUBLIC") -> None:
        """The tables of the SQLite file `source` in `database`.`schema` (core/warehouse/sqlite_copy.py)."""
        from core.warehouse.sqlite_copy import copy_sqlite_into

        folder = Path(tempfile.mkdtemp(prefix="askbase-fakesnow-load-"))
        conn = self.connect()
        try:
            cur = conn.cursor()
            cur.execute(f"CREATE DATABASE IF NOT EXISTS {database}")
            cur.execute(f"CREATE SCHEMA IF NOT EXISTS {database}.{schema}")
        finally:
            conn.close()
        engine = self.engine(database, schema)
        try:
            copy_sqlite_into(source, engine, load=partial(_parquet_rows, folder))
        finally:
            engine.dispose()
            shutil.rmtree(folder, ignore_errors=True)

    def sent(self) -> list[dict[str, Any]]:
        """Everything the connector sent so far: {"sql": ...} or {"login": {session parameters}}."""
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.strip()]


def _parquet_rows(folder: Path, conn: Any, table: Any, rows: list[tuple[Any, ...]]) -> None:
    """A table's rows as one Parquet file that the emulation's DuckDB reads (`read_parquet`): fakesnow
    translates every statement with sqlglot, and the demo's rows as INSERT statements took it over a
    minute; this takes a second. Only the emulation reads files of this machine so."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not rows:
        return
    path = folder / f"{table.name}.parquet"
    columns = list(zip(*rows, strict=True))
    pq.write_table(pa.table({f"c{i}": pa.array(values) for i, values in enumerate(columns)}), path)
    name = conn.dialect.identifier_preparer.format_table(table)
    conn.exec_driver_sql(f"INSERT INTO {name} SELECT * FROM read_parquet('{path}')")


def _free_port() -> int:
    with closing(socket.socket()) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start(folder: Path, port: int, exit_with: int | None = None) -> subprocess.Popen[bytes]:
    """The server on `port`, answering once this returns; its log and stderr in `folder`. With
    `exit_with`, a process of its own that ends when that one has."""
    process = subprocess.Popen(
        [
            str(PYTHON),
            str(SERVER),
            *("--port", str(port), "--log", str(folder / "sent.jsonl")),
            *(("--exit-with", str(exit_with)) if exit_with is not None else ()),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=(folder / "server.log").open("w"),
        start_new_session=exit_with is not None,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"fakesnow server stopped: {(folder / 'server.log').read_text()[-2000:]}")
        with closing(socket.socket()) as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return process
        time.sleep(0.1)
    process.kill()
    raise RuntimeError("fakesnow server did not start within 60 s")


@contextmanager
def emulation(folder: Path) -> Iterator[Emulation]:
    """A server of the caller's own, stopped on leaving: what it was sent is the caller's alone."""
    port = _free_port()
    process = _start(folder, port)
    try:
        yield Emulation(port=port, log=folder / "sent.jsonl")
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def shared_emulation(folder: Path) -> Emulation:
    """The one server of a test run (`folder` is the run's, tests/shared_run.py), started by the
    first process that asks and ended by the server itself once the run is over: the workers that
    use it come and go, the run outlives them. Databases loaded into it are marked in `folder`
    (`loaded`), so each is loaded once per run."""
    info = folder / "server.json"
    with run_lock(folder):
        if not info.is_file():
            port = _free_port()
            _start(folder, port, exit_with=run_owner())
            info.write_text(json.dumps({"port": port}))
    return Emulation(port=int(json.loads(info.read_text())["port"]), log=folder / "sent.jsonl")


def loaded(folder: Path, source: Path, database: str, emu: Emulation) -> None:
    """`database` on the run's shared emulation holds the tables of `source`, loaded once per run."""
    mark = folder / f"loaded-{database}"
    with run_lock(folder):
        if not mark.exists():
            emu.load_sqlite(source, database)
            mark.touch()
