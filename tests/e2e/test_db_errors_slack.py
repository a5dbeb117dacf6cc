"""Database errors reach people without host, port or account, through the real Slack app, on
real PostgreSQL and MariaDB servers; the log has the full text.

Two ways a database fails a question: it cannot be opened at all (a wrong port, an unknown
account: the reply names the database, nothing of the driver's text), and it goes away after
Askbase read its schema — then the driver's own message ("connection to server at …, port …
failed") is what the person is told, scrubbed (core/db_errors.py). The second is staged with a TCP
forwarder the test cuts. tests/integration/test_execute.py checks the same texts at the executor and the engine.
"""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import threading
import uuid
from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from core.access import Principal
from core.settings import DatabaseSettings
from tests.integration.test_execute import UNREACHABLE
from tests.servers import admin_engine, server_url

CHANNEL = "C0001"
SERVERS = {
    "postgres": pytest.param("ASKBASE_TEST_POSTGRES_URL", marks=pytest.mark.postgres),
    "mariadb": pytest.param("ASKBASE_TEST_MYSQL_URL", marks=pytest.mark.mysql),
}


def mark_of(case: str) -> pytest.MarkDecorator:
    return pytest.mark.postgres if case.startswith("postgres") else pytest.mark.mysql


def shown_to_people(slack, view: dict | None = None, *extra: object) -> list[str]:
    """Everything the fake Slack shows in the channel (messages, notes), the Details view, and more."""
    shown = [json.dumps([m.text, m.blocks]) for m in [*slack.messages.values(), *slack.ephemerals]]
    return shown + [json.dumps(x, default=str) for x in (view, *extra) if x is not None]


def details_button(reply) -> str:
    found = [
        e["value"]
        for b in reply.blocks
        for e in b.get("elements", [])
        if e.get("action_id") == "show_details"
    ]
    assert found, reply.blocks
    return found[0]


@pytest.mark.parametrize("case", [pytest.param(c, marks=mark_of(c)) for c in UNREACHABLE])
def test_a_database_that_cannot_be_opened_is_named_and_nothing_of_where_it_is(
    make_bot, slack, plan, caplog, case
):
    url, details = UNREACHABLE[case]
    bot = make_bot(databases={"far": DatabaseSettings(url=url)}, default_db="far")
    caplog.set_level(logging.INFO)
    _, ts = bot.sender.mention("how many clients are there?")
    reply = slack.wait_for(lambda s: s.answer_in(CHANNEL, ts), timeout=30)
    assert "far" in reply.all_text()
    bot.sender.click(
        "show_details", details_button(reply), channel=CHANNEL, message_ts=reply.ts, thread_ts=ts
    )
    view = slack.wait_for(lambda s: s.calls_to("views.open"))[0].args["view"]
    rerun = bot.askbase.rerun(  # what the CSV button and a scheduled run do
        "SELECT 1", database="far", principal=Principal.of("U0001", CHANNEL), purpose="csv", question="q"
    )
    assert rerun.status == "error" and "far" in rerun.error
    leaked = [(d, s) for d in details for s in shown_to_people(slack, view, rerun.to_json()) if d in s]
    assert not leaked, leaked
    assert all(d in caplog.text for d in details)  # the operator finds them in the log


# ---------------------------------------------------------------- a database that goes away


class Forwarder:
    """127.0.0.1:<port> forwarded to a database server, until `cut()`: then the server is gone."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
                upstream = socket.create_connection(self.target)
            except OSError:
                return
            with self._lock:
                self.sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        """Refuse new connections and drop the open ones (as a server going down does)."""
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accept (close alone would not)
        self.listener.close()
        with self._lock:
            for s in self.sockets:
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
                s.close()


@pytest.fixture
def going_away(request) -> Iterator[tuple[DatabaseSettings, Forwarder]]:
    """A small database of its own on the server `request.param` names (a schema on PostgreSQL, a
    database on MariaDB), reached through a Forwarder: (Askbase's settings for it, the forwarder)."""
    name = f"askbase_gone_{uuid.uuid4().hex[:8]}"
    admin = admin_engine(request.param).execution_options(isolation_level="AUTOCOMMIT")
    server = make_url(server_url(request.param))
    postgres = server.get_backend_name() == "postgresql"
    kind = "SCHEMA" if postgres else "DATABASE"
    with admin.connect() as conn:
        conn.execute(sa.text(f"CREATE {kind} {name}"))
        conn.execute(sa.text(f"CREATE TABLE {name}.client (id INTEGER PRIMARY KEY, name VARCHAR(40))"))
        conn.execute(sa.text(f"INSERT INTO {name}.client VALUES (1, 'Acme'), (2, 'Globex')"))
    forwarder = Forwarder(server.host or "127.0.0.1", server.port or (5432 if postgres else 3306))
    through = server.set(host="127.0.0.1", port=forwarder.port)
    url = (through if postgres else through.set(database=name)).render_as_string(hide_password=False)
    try:
        yield DatabaseSettings(url=url, schema=name if postgres else None), forwarder
    finally:
        forwarder.cut()
        with admin.connect() as conn:
            conn.execute(sa.text(f"DROP {kind} {name}" + (" CASCADE" if postgres else "")))
        admin.dispose()


@pytest.mark.parametrize("going_away", list(SERVERS.values()), indirect=True, ids=list(SERVERS))
def test_a_database_gone_after_its_schema_was_read_is_reported_in_words_without_where_it_was(
    make_bot, slack, plan, caplog, going_away
):
    config, forwarder = going_away
    bot = make_bot(databases={"far": config}, default_db="far", engine={"fallback_to_keyword": False})
    db = bot.askbase.database("far")
    assert db.catalog and db.graph is not None and db.values is not None  # read while it was there
    table = f"{config.schema_name}.client" if config.schema_name else "client"
    plan.main_task, plan.sql = "Count the clients", f"SELECT COUNT(*) AS clients FROM {table}"
    forwarder.cut()
    caplog.set_level(logging.INFO)
    _, ts = bot.sender.mention("how many clients are there?")
    reply = slack.wait_for(lambda s: s.answer_in(CHANNEL, ts), timeout=30)
    assert "retry" in reply.action_ids()  # a connection failure may pass: Retry is offered
    said = reply.all_text()
    assert "connect" in said.lower() or "reached" in said.lower(), said  # what went wrong, in words
    bot.sender.click(
        "show_details", details_button(reply), channel=CHANNEL, message_ts=reply.ts, thread_ts=ts
    )
    view = slack.wait_for(lambda s: s.calls_to("views.open"))[0].args["view"]
    postgres = config.url.startswith("postgresql")
    details = ["127.0.0.1", str(forwarder.port)] if postgres else ["127.0.0.1"]  # MySQL names no port
    leaked = [(d, s) for d in details for s in shown_to_people(slack, view) if d in s]
    assert not leaked, leaked
    assert all(d in caplog.text for d in details)
