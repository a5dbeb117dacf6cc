"""The interactive console: follow-up questions reuse the conversation, like a Slack thread."""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from typing import TextIO

from bot.terminal import render, trace_text
from core.answer import Clarification, Outcome
from core.askbase import Askbase
from core.clarify.policy import exchange_for
from core.clarify.transcript import Exchange, Transcript
from core.conversation import Turn

HELP = """Ask a question in plain English. Follow-ups ("and only for 2024?") continue the conversation.
When I ask back, answer with an option's number or in your own words (:skip drops the question).
Commands: :new (start over)  :sql (last SQL)  :trace (last trace)  :db NAME (switch database)  :quit"""


@dataclass(frozen=True)
class Asking:
    """A clarifying question waiting for the person's answer."""

    question: str  # the person's question it is about
    transcript: Transcript  # before this clarifying question
    clarification: Clarification
    own_words: bool = False  # they picked "Other…": the next line is their answer


def console_answer(line: str, asking: Asking, keyword_mode: bool) -> Exchange | None:
    """An option's number picks it; the number after the options asks for own words (None)."""
    options = asking.clarification.options
    if not asking.own_words and line.isdigit() and 1 <= int(line) <= len(options) + 1:
        if int(line) == len(options) + 1:
            return None
        return exchange_for(asking.clarification, option=int(line) - 1)
    return exchange_for(asking.clarification, own_words=line, match_options=keyword_mode)


def run_console(
    app: Askbase, db: str | None = None, stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout
) -> int:
    database = app.database(db)
    history: list[Turn] = []
    last: Outcome | None = None
    asking: Asking | None = None

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
            asking = None
            say("New conversation.")
        elif text == ":skip" and asking is not None:
            asking = None
            say("Dropped the question. Ask another one.")
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
            question, transcript = text, Transcript()
            if asking is not None:
                exchange = console_answer(text, asking, app.llm is None)
                if exchange is None:
                    asking = replace(asking, own_words=True)
                    say("Type your answer:")
                    continue
                question, transcript = asking.question, asking.transcript.plus(exchange)
                asking = None
            last = app.ask(question, db=database, history=history, source="console", transcript=transcript)
            say(render(last, show_sql=False))
            if last.status == "clarify" and last.clarification is not None:
                asking = Asking(question, transcript, last.clarification)
                say("(answer with a number, or type your own answer; :skip drops the question)")
            if last.status == "answer":
                history.append(Turn(question, last.sql, last.columns, last.row_count, last.answer))
