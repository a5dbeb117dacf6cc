"""The composition root every adapter (CLI, console, Slack, worker) starts from.

It owns the process-wide pieces — settings, the open databases, the LLM client, the state
database — and is the one way in for everything that runs SQL on a database people ask about:
`ask` for a question (a new one, a clarified one, or one asked back about after a 👎), `rerun`
for SQL written before (a CSV export, a schedule, a verified query's check). Nothing here decides
how a question is answered (core/pipeline.py does; a verified query or the answer cache may answer
first, core/trusted.py); whether the asker may query the database at all is decided
here, before anything runs (core/access.py), and every call leaves an audit row, so no adapter
can forget either. It is also the door secrets typed into a question stop at (core/redact.py
`scrub_question`): what follows — the answer cache, the SQL writer's prompt, the outcome the
adapter stores as a turn — only ever sees the question without them, and the asker is told.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import sqlalchemy as sa

from core import deadline
from core.access import LOCAL_SOURCES, Principal, may_query, refusal
from core.answer import ErrorKind, Outcome
from core.attribution import Asker, asking
from core.clarify.transcript import Transcript
from core.conversation import Turn
from core.database import Database, Databases, UnknownDatabase, not_configured
from core.db_errors import public_error
from core.definitions import Definition, Definitions, in_force, of_database
from core.identity import DatabaseIdentity, NoDatabaseRole, acting_as, identity_for
from core.llm import LLM
from core.pipeline import answer
from core.redact import SECRET_NOTE, know_secrets, scrub_question
from core.request import MAX_QUESTION_CHARS, Request, StageCallback, is_preview, preview
from core.run import outcome_of, run_stored
from core.settings import Settings
from core.state import audit, channel_settings, clarifications, conversations, events, feedback, open_state
from core.state import definitions as definitions_store
from core.trace import Trace
from core.trusted import NOTHING, Plan, Trusted

log = logging.getLogger(__name__)

# Why SQL that was written before runs again; recorded as the audit row's source.
Purpose = Literal["csv", "schedule", "schedule_run", "rerun", "verified_check", "preview"]


class AccessRefused(Exception):
    """`Askbase.operating`: the principal may not use the database; the message says so in a
    person's words (it names no rule)."""


@dataclass
class Operation:
    """One run of `Askbase.operating`: the database to work on, and what the audit row will say."""

    database: Database
    trace: Trace
    rows: int = 0  # what the work counts: values indexed, definitions imported
    error: str = ""
    error_kind: ErrorKind | None = None

    def failed(self, message: str, kind: ErrorKind = "other") -> None:
        """The work failed without raising (a file that does not parse, a check that found problems)."""
        if self.error_kind is None:
            self.error, self.error_kind = message, kind


class Askbase:
    def __init__(self, settings: Settings, llm: LLM | None = None) -> None:
        self.settings = settings
        self.databases = Databases(settings)
        know_secrets(self.secrets)  # scrubbed from every trace shown or stored (core/redact.py)
        if llm is not None:
            self.__dict__["llm"] = llm

    @cached_property
    def llm(self) -> LLM | None:
        """The configured LLM, or None when no key is set (keyword mode answers then)."""
        return LLM(self.settings.llm) if self.settings.llm.configured else None

    @cached_property
    def state(self) -> sa.Engine:
        return open_state(self.settings.state_database_url, preview_bytes=self.settings.state.preview_bytes)

    def database(self, name_or_url: str | None = None) -> Database:
        return self.databases.get(name_or_url)

    @cached_property
    def trusted(self) -> Trusted:
        """Verified queries and the answer cache (core/trusted.py)."""
        return Trusted(self.settings, lambda: self.state, self.rerun)

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
        after_rejection: bool = False,
        refresh: bool = False,
    ) -> Outcome:
        """Answer `question` for `principal` (who asks, where); every call leaves an audit row.

        Without a principal: `user`/`channel` make one; with neither, the CLI and the console
        ask as the operator, any other source as nobody in particular (rules still apply).
        `transcript`: the person's answers to clarifying questions about this question so far.
        `after_rejection`: the person rejected the answer whose SQL ends `transcript.rejected_sql`;
        the outcome is a clarifying question about it, or an error that nothing is left to ask.
        A fresh question (no history, no clarification) is first tried against the answer cache
        (unless `refresh`) and the verified queries (core/trusted.py).
        Secrets in the question (and in the person's own words in `transcript`) are removed before
        anything else happens; the outcome then carries a note saying so.
        """
        question, scrubbed = scrub_question(question)
        if transcript is not None:
            transcript, scrubbed_too = transcript.without_secrets()
            scrubbed = scrubbed or scrubbed_too
        who = principal or _principal(source, user, channel)
        database = db if isinstance(db, Database) else self.database(db)
        as_who = _identity(database, who, source)  # told to the database for row-level security
        if len(question) > MAX_QUESTION_CHARS or is_preview(question):
            # refused and dropped at the door: the audit row, the stored turn and trace, and every
            # log line keep only a preview (a preview shown back, e.g. by Retry, is refused again)
            kept = preview(question)
            outcome = Outcome.failed(
                kept,
                "question",
                f"The question is {len(question):,} characters long; keep it under {MAX_QUESTION_CHARS:,}."
                if not is_preview(question)
                else f"That question was too long to keep; ask it again in under {MAX_QUESTION_CHARS:,} characters.",
                database=database.name,
                trace=Trace(question=kept, database=database.name),
            )
        elif not may_query(self.settings, who, database.name) or as_who is False:
            outcome = Outcome.failed(
                question,
                "access",
                refusal(database.name),
                database=database.name,
                trace=Trace(question=question, database=database.name),
            )
        else:
            clarified = transcript is not None and bool(transcript.exchanges or transcript.rejected_sql)
            fresh = not history and not clarified and not after_rejection
            defined = self._definitions(database, who)
            plan = (
                self.trusted.before(question, database, who, refresh=refresh, meaning=defined.fingerprint())
                if fresh
                else NOTHING
            )
            trusted = plan.cached or self._reuse(plan, database.name, who, question)
            if trusted is not None:
                outcome = trusted
            else:
                request = Request(
                    question=question,
                    history=history,
                    examples=[*plan.examples, *feedback.examples_for(self.state, database.name)],
                    on_stage=on_stage,
                    transcript=transcript or Transcript(),
                    after_rejection=after_rejection,
                    definitions=defined,
                )
                with (
                    deadline.within(self.settings.engine.question_deadline_s),
                    acting_as(as_who),
                    asking(Asker(user=who.user or "", source=source)),  # named on warehouse statements
                ):
                    outcome = answer(database, request, self.settings.engine, self.llm)
            self.trusted.after(plan, outcome)
        if scrubbed:  # after the cache took the outcome: a note to this asker, not part of the answer
            outcome = replace(outcome, notes=(*outcome.notes, SECRET_NOTE))
        self.audit(outcome, source=source, principal=who)
        return outcome

    def _definitions(self, db: Database, who: Principal) -> Definitions:
        """The business definitions in force for `who` on `db` (none when the database is down:
        the pipeline says so itself)."""
        try:
            return in_force(db, self.state, who)
        except (sa.exc.SQLAlchemyError, OSError, ValueError) as exc:
            log.info("no definitions for %s: %s", db.name, exc)
            return Definitions()

    def _reuse(self, plan: Plan, database: str, who: Principal, question: str) -> Outcome | None:
        """Answer from a verified query (its SQL with the question's values) like stored SQL:
        access → guard → execute, same rules and masking; None when it turned out stale."""
        if plan.reuse is None or plan.trace is None:
            return None
        ran = self._rerun(plan.sql, database, who, question, None, plan.trace)
        return self.trusted.reused(plan, ran)

    def rerun(
        self,
        sql: str,
        *,
        database: str,
        principal: Principal,
        purpose: Purpose,
        question: str = "",
        csv_path: Path | None = None,
    ) -> Outcome:
        """Run SQL that was written before (a stored answer, a schedule) for `principal`.

        The one door for SQL that did not come from `ask`: access → guard → execute → audit, with
        the same rules, limits and masking as a fresh question, and an audit row whatever happens.
        The stored SQL is never trusted: the guard checks it again, so a rule added since applies.
        With `csv_path` the result streams to that file instead of memory (`exported_rows`).
        """
        trace = Trace(question=question, database=database)
        outcome = self._rerun(sql, database, principal, question, csv_path, trace)
        self.audit(outcome, source=purpose, principal=principal)
        return outcome

    def _rerun(
        self,
        sql: str,
        database: str,
        principal: Principal,
        question: str,
        csv_path: Path | None,
        trace: Trace,
    ) -> Outcome:
        def failed(kind: ErrorKind, message: str) -> Outcome:
            return Outcome.failed(question, kind, message, database=database, sql=sql, trace=trace)

        if not may_query(self.settings, principal, database):
            return failed("access", refusal(database))
        try:
            db = self.database(database)
            db.catalog  # noqa: B018 — opens the database; a down server surfaces here
        except UnknownDatabase:
            return failed("unknown_database", not_configured(database))
        except (sa.exc.SQLAlchemyError, OSError, ValueError) as exc:
            log.warning("database %s could not be opened for a rerun: %s", database, exc)
            return failed("database", f"The database '{database}' could not be opened.")
        as_who = _identity(db, principal, "rerun")
        if as_who is False:
            return failed("access", refusal(database))
        # the stored SQL sees what this person may see, as a fresh question would
        with acting_as(as_who), asking(Asker(user=principal.user or "", source="rerun")):
            run = run_stored(db, sql, self.settings.engine, trace, csv_path)
        return outcome_of(run, question=question, database=db.name, trace=trace, stored=True)

    @contextmanager
    def operating(
        self, action: str, *, db: str | None = None, source: str, principal: Principal | None = None
    ) -> Iterator[Operation]:
        """Work on a database that is not a question — `index build`, `catalog import ...` — through
        the same door as `ask` and `rerun`: access (and the database identity) decided first, the
        statements sent attributed to `source` and traced, and one audit row whatever happens.

        `action` is what the audit row shows in place of a question. Without a principal the
        operator runs it (the CLI). Raises AccessRefused (audited) when `principal` may not use the
        database; UnknownDatabase before anything is audited, as `ask` does. The work sets
        `rows` (what it counts) and calls `failed` when it fails without raising; an exception
        from it is audited as an error and raised again.
        """
        who = principal or Principal.local()
        database = self.database(db)
        trace = Trace(question=action, database=database.name)
        operation = Operation(database, trace)
        as_who = _identity(database, who, source)
        if not may_query(self.settings, who, database.name) or as_who is False:
            operation.failed(refusal(database.name), "access")
            self._audit_operation(operation, action, source, who)
            raise AccessRefused(operation.error)
        try:
            with trace.stage(source), acting_as(as_who), asking(Asker(user=who.user or "", source=source)):
                yield operation
        except UnknownDatabase as exc:
            operation.failed(str(exc), "unknown_database")
            raise
        except (sa.exc.SQLAlchemyError, OSError, ValueError) as exc:  # could not open or read the database
            operation.failed(public_error(exc), "database")
            raise
        except BaseException as exc:
            operation.failed(f"{type(exc).__name__}: {exc}", "internal")
            raise
        finally:
            self._audit_operation(operation, action, source, who)

    def _audit_operation(self, operation: Operation, action: str, source: str, who: Principal) -> None:
        try:
            audit.record_operation(
                self.state,
                source=source,
                action=action,
                database=operation.database.name,
                error_kind=operation.error_kind,
                rows=operation.rows,
                ms=operation.trace.ms,
                trace_id=operation.trace.id,
                user=who.user,
                channel=who.channel,
                secrets=self.secrets,
            )
        except sa.exc.SQLAlchemyError:  # the work matters more than its audit row; the log line stays
            log.exception("could not write the audit row for trace %s", operation.trace.id)

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

    # ------------------------------------------------------------------ definitions kept
    # What `askbase catalog import|export|check` reads and writes of the definitions in the state
    # database (imported from dbt or OSI, taught in chat); the command itself keeps no engine.

    def definitions_of(self, db: Database) -> Definitions:
        """Every definition of `db` that fits its schema today — its files' and the state
        database's — whatever its scope (core/definitions `of_database`)."""
        return of_database(db, self.state)

    def stored_definitions(self, database: str) -> list[Definition]:
        """The definitions in force on `database` that the state database keeps, as stored
        (not checked against the schema)."""
        return definitions_store.active(self.state, database)

    def import_definitions(
        self, database: str, source: str, definitions: list[Definition], *, by: str
    ) -> int:
        """Store what an import from `source` (dbt, osi) brought, replacing the previous import
        from that source (versioned, so it can be reverted); returns how many were stored."""
        return definitions_store.replace_imported(self.state, database, source, definitions, by=by)

    # ------------------------------------------------------------------ what chats keep
    # The chat adapters keep no state of their own: what they must remember about a place, a
    # message or a conversation is asked of these (the state database behind them).

    def once(self, key: str) -> bool:
        """True the first time `key` is seen (keys are kept two days): a greeting, a setup note
        to the admins, sent once across every process."""
        return events.first_delivery(self.state, key)

    def place_database(self, team: str, place: str) -> str | None:
        """The database a place was pointed at (a channel's `/ask db`, what a person's DM follows)."""
        return channel_settings.channel_database(self.state, team, place) or None

    def point_place(self, team: str, place: str, database: str | None, user: str | None) -> None:
        """Point a place at `database`; None: back to the default."""
        channel_settings.set_channel_database(self.state, team, place, database or "", user)

    def follows_up(self, conversation_id: str, user: str, *, started: bool = True) -> bool:
        """Whether a message by `user` in this conversation continues it: a clarifying question
        asked there waits for their answer, or (`started`) they started it."""
        info = conversations.conversation_info(self.state, conversation_id) if started else None
        if info is not None and info.user == user:
            return True
        pending = clarifications.open_in(self.state, conversation_id)
        return pending is not None and not pending.expired() and pending.asker == user

    def keep(self, kind: str, key: str, data: dict[str, Any]) -> None:
        """Keep a small JSON document under (`kind`, `key`) — which answer a chat message is, the
        card an answer was posted as — next to the answers' traces (never under a trace's id)."""
        with self.state.begin() as conn:
            conversations.save_trace(conn, _kept_id(kind, key), {"kept": kind, **data})

    def kept(self, kind: str, key: str) -> dict[str, Any] | None:
        """What `keep` stored under (`kind`, `key`); None when nothing was, or it was cut."""
        data = conversations.load_trace(self.state, _kept_id(kind, key))
        if data is None or data.get("kept") != kind or data.get("preview"):
            return None
        return data

    @cached_property
    def secrets(self) -> frozenset[str]:
        """Configured secret values; never written to the audit log (core/state/audit.py)."""
        return audit.secrets_of(self.settings)

    def close(self) -> None:
        self.databases.close()
        if "state" in self.__dict__:
            self.state.dispose()


def _kept_id(kind: str, key: str) -> str:
    """A traces-table id no trace takes (trace ids are hex): '~' and a digest of kind and key."""
    return "~" + hashlib.sha256(f"{kind}\0{key}".encode()).hexdigest()[:31]


def _identity(db: Database, who: Principal, source: str) -> DatabaseIdentity | Literal[False] | None:
    """Who the database is told is asking (core/identity.py); False when it must refuse them."""
    try:
        return identity_for(db.config, who, source)
    except NoDatabaseRole:
        log.info("no database role on %s for %s; refused", db.name, who.user)
        return False


def _principal(source: str, user: str | None, channel: str | None) -> Principal:
    if user is None and channel is None and source in LOCAL_SOURCES:
        return Principal.local()
    return Principal.of(user=user, channel=channel)
