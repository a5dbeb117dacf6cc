"""The real Bolt app behind its real HTTP server, wired to the fake Slack API and the fake LLM.

`RunningBot` starts the app's threaded WSGI server on a free port in this process; tests then
talk to it only through signed HTTP requests (`SlackSender`) and look only at what the fake Slack
API received — what a person in Slack would see.
"""

from __future__ import annotations

import csv
import io
import sqlite3
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.slack.app import SlackBot, create_bot, http_server
from core.askbase import Askbase
from core.bench.fakes.local_server import POLL_S
from core.bench.fakes.slack_api import FakeSlack
from tests.fakes import model_replies as mr
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.slack_requests import SlackSender


@dataclass
class Plan:
    """What the scripted model answers next: the task and the SQL it writes (one candidate)."""

    main_task: str = "Count the clients"
    sql: str = "SELECT COUNT(*) AS clients FROM client"
    objects: list[str] = field(default_factory=lambda: ["clients"])


def script_llm(fake_llm: FakeOpenAI, plan: Plan) -> None:
    """Generate (and understand, for `engine.understand: separate`) replies follow `plan`
    (mutable, so a test can change it between asks)."""
    fake_llm.respond(
        "understand",
        lambda body: Reply(content=mr.json_fenced(mr.understanding(plan.main_task, [], plan.objects))),
    )

    def generate(body: dict[str, Any]) -> Reply:
        return Reply(content=mr.candidates(plan.sql, task=plan.main_task))

    fake_llm.respond("generate", generate)
    fake_llm.respond("revise", lambda body: Reply(content=mr.sql_fenced(plan.sql)))


def hand(demo_var: Path, sql: str) -> list[list[str]]:
    """Hand-written SQL on the demo file, as the text a table cell shows."""
    with sqlite3.connect(demo_var / "demo.sqlite") as conn:
        return [["—" if v is None else str(v) for v in row] for row in conn.execute(sql).fetchall()]


def read_csv(content: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(content.decode("utf-8"))))


class RunningBot:
    def __init__(self, askbase: Askbase, slack: FakeSlack) -> None:
        self.askbase = askbase
        self.slack = slack
        self.bot: SlackBot = create_bot(askbase, askbase.settings)
        self.server = http_server(self.bot, 0, host="127.0.0.1")
        self.port = self.server.server_port
        self.sender = SlackSender(f"http://127.0.0.1:{self.port}/slack/events")
        self._thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": POLL_S}, daemon=True
        )
        self._thread.start()
        self._closed = False

    @property
    def state(self):  # type: ignore[no-untyped-def]
        return self.askbase.state

    def close(self) -> None:
        """Stop serving, let answers under way finish, close the engine; a second call does nothing."""
        if self._closed:
            return
        self._closed = True
        self.server.shutdown()
        self.server.server_close()
        self.bot.close(wait=True)
        self.askbase.close()
