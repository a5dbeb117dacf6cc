"""The composition root every adapter (CLI, console, Slack, worker) starts from.

It owns the process-wide pieces — settings, the open databases, the LLM client, the state
database — and answers a question by handing them to the pipeline, then writes the audit log.
Nothing here decides how a question is answered; whether the asker may query the database at
all is decided here, before anything runs (core/access.py), so no adapter can forget it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import cached_property

import sqlalchemy as sa

from core.access import LOCAL_SOURCES, Principal, may_query, refusal
from core.answer import Outcome
from core.clarify.transcript import Transcript
from core.conversation import Turn
from core.database import Database, Databases
from core.llm import LLM
from core.pipeline import Request, StageCallback, answer
from core.settings import Settings
from core.state import audit, feedback, open_state
from core.trace import Trace

log = logging.getLogger(__name__)


class Askbase:
    def __init__(self, settings: Settings, llm: LLM | None = None) -> None:
        self.settings = settings
        self.databases = Databases(settings)
        if llm is not None:
            self.__dict__["llm"] = llm

    @cached_property
    def llm(self) -> LLM | None:
        """The configured LLM, or None when no key is set (keyword mode answers then)."""
        return LLM(self.settings.llm) if self.settings.llm.configured else None

    @cached_property
    def state(self) -> sa.Engine:
        return open_state(self.settings.state_database_url)

    def database(self, name_or_url: str | None = None) -> Database:
        return self.databases.get(name_or_url)

    def ask(
        self,
        question: str,
        *,
        db: str | Database | None = None,
        history: Sequence[Turn] = (),
        on_stage: StageCallback | None = None,
        source: str = "cli",
        user: str | None = None,
        channel: str | None = None,
        principal: Principal | None = None,
        transcript: Transcript | None = None,
    ) -> Outcome:
        """Answer `question` for `principal` (who asks, where); every call leaves an audit row.

        Without a principal: `user`/`channel` make one; with neither, the CLI and the console
        ask as the operator, any other source as nobody in particular (rules still apply).
        `transcript`: the person's answers to clarifying questions about this question so far.
        """
        who = principal or _principal(source, user, channel)
        database = db if isinstance(db, Database) else self.database(db)
        if not may_query(self.settings, who, database.name):
            outcome = Outcome(
                status="error",
                question=question,
                database=database.name,
                error=refusal(database.name),
                error_kind="access",
                trace=Trace(question=question, database=database.name),
            )
        else:
            request = Request(
                question=question,
                history=history,
                examples=feedback.examples_for(self.state, database.name),
                on_stage=on_stage,
                choices=transcript.choices if transcript else (),
                clarifications=transcript.exchanges if transcript else (),
                rejected_sql=transcript.rejected_sql if transcript else (),
            )
            outcome = answer(database, request, self.settings.engine, self.llm)
        self.audit(outcome, source=source, principal=who)
        return outcome

    def may_query(self, principal: Principal, database: str) -> bool:
        return may_query(self.settings, principal, database)

    def audit(self, outcome: Outcome, *, source: str, principal: Principal) -> None:
        """Record an outcome an adapter produced itself (a refusal, a crash) like any answer."""
        try:
            audit.record(
                self.state,
                outcome,
                source=source,
                user=principal.user,
                channel=principal.channel,
                secrets=self.secrets,
            )
        except sa.exc.SQLAlchemyError:  # the answer matters more than its audit row; the log line stays
            log.exception("could not write the audit row for trace %s", outcome.trace.id)

    @cached_property
    def secrets(self) -> frozenset[str]:
        """Configured secret values; never written to the audit log (core/state/audit.py)."""
        return audit.secrets_of(self.settings)

    def close(self) -> None:
        self.databases.close()
        if "state" in self.__dict__:
            self.state.dispose()


def _principal(source: str, user: str | None, channel: str | None) -> Principal:
    if user is None and channel is None and source in LOCAL_SOURCES:
        return Principal.local()
    return Principal.of(user=user, channel=channel)
