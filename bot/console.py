"""The interactive console: follow-up questions reuse the conversation, like a Slack thread."""

from __future__ import annotations

import sys
from typing import TextIO

from bot.terminal import render, trace_text
from core.answer import Outcome
from core.askbase import Askbase
from core.conversation import Turn

HELP = """Ask a question in plain English. Follow-ups ("and only for 2024?") continue the conversation.
Commands: :new (start over)  :sql (last SQL)  :trace (last trace)  :db NAME (switch database)  :quit"""


def run_console(
    app: Askbase, db: str | None = None, stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout
) -> int:
    database = app.database(db)
    history: list[Turn] = []
    last: Outcome | None = None

    def say(text: str = "") -> None:
        print(text, file=stdout, flush=True)

    say(f"Askbase console on '{database.name}'. {HELP}")
    while True:
        stdout.write("\nask> ")
        stdout.flush()
        line = stdin.readline()
        if not line:
            say()
            return 0
        text = line.strip()
        if not text:
            continue
        if text in (":quit", ":q", ":exit"):
            return 0
        if text == ":help":
            say(HELP)
        elif text == ":new":
            history.clear()
            say("New conversation.")
        elif text == ":sql":
            say(last.sql if last and last.sql else "No SQL yet.")
        elif text == ":trace":
            say(trace_text(last) if last else "No question yet.")
        elif text.startswith(":db"):
            name = text[3:].strip()
            try:
                database = app.database(name) if name else database
                history.clear()
                say(f"Using '{database.name}'. Known: {', '.join(app.databases.names())}")
            except LookupError as exc:
                say(str(exc))
        else:
            last = app.ask(text, db=database, history=history, source="console")
            say(render(last, show_sql=False))
            if last.status == "answer":
                history.append(Turn(text, last.sql, last.columns, last.row_count, last.answer))
