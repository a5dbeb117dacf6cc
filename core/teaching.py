"""Teaching Askbase what words mean: proposals, approval by analysts, remembered readings, undo.

The one place chat adapters go to change definitions (core/definitions), so Slack, Teams and the
CLI follow the same rules:

- anyone may propose ("define loss ratio as ...", a 👎 whose comment states a rule, a Correct
  button): the draft is checked against the schema and the guard, shown with its SQL and a
  preview figure computed through the engine's one door for SQL (access → guard → execute →
  audit), and stored as *proposed*;
- only an analyst (`verified.analysts`) approves; approved definitions are active at once for
  every question after; an analyst's own proposal still waits for their approving click, so
  nothing goes live unseen;
- a reading picked in a clarifying question can be remembered for the person or the channel: a
  learned filter (or rule) scoped there, active at once — it changes only that person's or that
  channel's answers, and it is listed (App Home) with who and when, removable by them or an analyst;
- every change is a new version: removing retires, reverting brings the version before back.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Literal

import sqlalchemy as sa

from core.access import Principal
from core.askbase import Askbase
from core.data_rules import rules_for, schema_of
from core.definitions import in_force, of_database
from core.definitions.check import check
from core.definitions.expand import definition_sql, expand
from core.definitions.model import Definition, Definitions, Provenance, Scope
from core.definitions.teach import Draft, Teaching, described, draft, read_teaching
from core.guard import GuardPolicy
from core.schema_text import ASKBASE, ddl_text
from core.state import definitions as store
from core.verified.analysts import is_analyst

log = logging.getLogger(__name__)

Where = Literal["me", "channel"]


@dataclass(frozen=True)
class Proposal:
    """A drafted definition as a person sees it before it is approved (or why there is none)."""

    id: int | None  # its row once stored; None when nothing was stored
    definition: Definition | None
    sql: str = ""  # what it stands for, in SQL
    preview: str = ""  # "over all the data: 41.3 %" — or why it could not be computed
    problem: str = ""  # why it was not stored (does not fit, could not be read)
    may_approve: bool = False  # the proposer is an analyst: their click makes it active

    @property
    def stored(self) -> bool:
        return self.id is not None


class Teacher:
    def __init__(self, askbase: Askbase) -> None:
        self.askbase = askbase

    @property
    def state(self) -> sa.Engine:
        return self.askbase.state

    # ------------------------------------------------------------------ proposing

    def propose(
        self,
        database: str,
        text: str,
        who: Principal,
        *,
        trace_id: str | None = None,
        scope: Scope | None = None,
    ) -> Proposal:
        """Draft a definition from "define X as Y" (or X and Y from a form) and keep it proposed."""
        teaching = read_teaching(text)
        if teaching is None:
            return Proposal(None, None, problem="Write it as `define <words> as <what they mean>`.")
        return self.propose_teaching(database, teaching, who, trace_id=trace_id, scope=scope)

    def propose_teaching(
        self,
        database: str,
        teaching: Teaching,
        who: Principal,
        *,
        trace_id: str | None = None,
        scope: Scope | None = None,
        source: Literal["taught", "learned"] = "taught",
    ) -> Proposal:
        if not self.askbase.may_query(who, database):
            return Proposal(None, None, problem="You may not ask about that database.")
        db = self.askbase.database(database)
        definitions = in_force(db, self.state, who)
        drafted: Draft = draft(
            teaching,
            db.catalog,
            definitions,
            self.askbase.llm,
            schema_text=ddl_text(db, ASKBASE),
            source=source,
            scope=scope,
        )
        if drafted.definition is None:
            return Proposal(None, None, problem=drafted.problem)
        d = replace(
            drafted.definition, provenance=replace(drafted.definition.provenance, owner=who.user or "")
        )
        problems = check(definitions.plus([d]), db.catalog, self._policy(database))
        mine = [p for p in problems if f"{d.kind} '{d.name}'" in p]
        if mine:
            return Proposal(None, d, sql=_shown_sql(d), problem=mine[0].split(": ", 2)[-1])
        id_ = store.propose(
            self.state, database, d, by=who.user or "operator", trace_id=trace_id, note=teaching.meaning
        )
        return Proposal(
            id_,
            d,
            sql=_shown_sql(d),
            preview=self.preview(database, d, definitions, who),
            may_approve=is_analyst(self.askbase.settings, who),
        )

    def preview(self, database: str, d: Definition, definitions: Definitions, who: Principal) -> str:
        """The figure the definition gives over all the data, run like any stored SQL."""
        sql = _preview_sql(d, definitions)
        if not sql:
            return ""
        db = self.askbase.database(database)
        real = {t.name.lower() for t in db.catalog.tables}
        expanded, _ = expand(sql, definitions.plus([d]), real, db.catalog.dialect)
        outcome = self.askbase.rerun(expanded, database=database, principal=who, purpose="preview")
        if outcome.status != "answer" or not outcome.rows:
            return f"(no preview: {outcome.error or 'no rows'})"
        row = outcome.rows[0]
        if d.kind == "filter":
            return f"{row[0]:,} of {row[1]:,} {d.table} rows"
        if d.kind == "entity":
            return f"{row[0]:,} rows"
        value = row[0]
        if isinstance(value, float):
            return f"over all the data: {value:,.4g}" + (f" {d.unit}" if d.unit else "")
        return f"over all the data: {value}" + (f" {d.unit}" if d.unit else "")

    def _policy(self, database: str) -> GuardPolicy:
        db = self.askbase.database(database)
        rules = rules_for(db)
        return GuardPolicy(
            deny_tables=rules.deny_tables,
            deny_columns=rules.deny_columns,
            mask_columns=rules.mask_columns,
            table_columns=schema_of(db.catalog),
        )

    # ------------------------------------------------------------------ deciding

    def approve(self, id_: int, who: Principal) -> Definition | None:
        """Make a proposal active (analysts only); None when it is not pending or they may not."""
        if not is_analyst(self.askbase.settings, who):
            return None
        return store.approve(self.state, id_, by=who.user or "operator")

    def reject(self, id_: int, who: Principal, note: str = "") -> bool:
        if not is_analyst(self.askbase.settings, who):
            return False
        return store.reject(self.state, id_, by=who.user or "operator", note=note)

    def remove(self, id_: int, who: Principal) -> bool:
        """Retire an active definition: an analyst, or whoever it was learned for (their own scope)."""
        d = store.get(self.state, id_)
        if d is None:
            return False
        own = bool(who.user) and d.scope.user == who.user
        if not (own or is_analyst(self.askbase.settings, who)):
            return False
        return store.retire(self.state, id_, by=who.user or "operator")

    def revert(self, id_: int, who: Principal) -> Definition | None:
        if not is_analyst(self.askbase.settings, who):
            return None
        return store.revert(self.state, id_, by=who.user or "operator")

    # ------------------------------------------------------------------ remembering a reading

    def remember(
        self,
        database: str,
        word: str,
        reading: str,
        condition: Definition | None,
        who: Principal,
        where: Where,
        *,
        trace_id: str | None = None,
    ) -> Definition | None:
        """Keep a clarification's chosen reading for this person or this channel, active at once.

        `condition`: the reading as a filter when the clarification was about one (a value on a
        column); otherwise it is kept as a rule in words ("'existing' means ...").
        """
        scope = (
            Scope(user=who.user or "")
            if where == "me"
            else Scope(channel=who.channel or "", team=who.team or "")
        )
        if where == "channel" and not who.channel:
            return None
        base = condition or Definition(kind="instruction", name=word, text=f"'{word}' means {reading}.")
        d = replace(
            base,
            name=word,
            description=base.description or f"'{word}' read as {reading}",
            scope=scope,
            provenance=Provenance(source="learned", owner=who.user or ""),
        )
        db = self.askbase.database(database)
        problems = (
            check(Definitions((d,)), db.catalog, self._policy(database)) if d.kind != "instruction" else []
        )
        if problems:
            log.info("a remembered reading does not fit %s: %s", database, problems[0])
            return None
        id_ = store.propose(
            self.state, database, d, by=who.user or "operator", status="active", trace_id=trace_id
        )
        return store.get(self.state, id_)

    # ------------------------------------------------------------------ listing

    def pending(self, database: str | None = None) -> list[Definition]:
        return store.pending(self.state, database)

    def remembered_for(self, who: Principal) -> list[tuple[str, Definition]]:
        """(database, definition) of what was learned for this person or in their channel."""
        out = []
        for name in self.askbase.settings.databases:
            try:
                for d in store.active(self.state, name):
                    if d.provenance.source == "learned" and (
                        (who.user and d.scope.user == who.user)
                        or (who.channel and d.scope.channel == who.channel)
                    ):
                        out.append((name, d))
            except sa.exc.SQLAlchemyError:
                log.exception("could not list remembered readings")
        return out

    def all_of(self, database: str) -> Definitions:
        return of_database(self.askbase.database(database), self.state)


def _shown_sql(d: Definition) -> str:
    if d.named_like_table:
        return definition_sql(d)
    return described(d)


def _preview_sql(d: Definition, definitions: Definitions) -> str:
    """One row: the metric over everything; matching rows and all rows for a filter; an entity's size."""
    if d.kind == "metric" and d.ratio:
        a, b = definitions.by_ref(d.numerator), definitions.by_ref(d.denominator)
        if a is None or b is None or a.ratio or b.ratio:
            return ""
        return f"SELECT CAST(({_total(a)}) AS REAL) / NULLIF(({_total(b)}), 0) AS {d.ref}"
    if d.kind == "metric":
        return _total(d)
    if d.kind == "filter":
        return f"SELECT (SELECT COUNT(*) FROM {d.table} WHERE {d.sql}) AS matching, (SELECT COUNT(*) FROM {d.table}) AS total"
    if d.kind == "entity":
        return f"SELECT COUNT(*) AS n FROM {d.ref}"
    return ""


def _total(d: Definition) -> str:
    where = f" WHERE {d.filter}" if d.filter else ""
    return f"SELECT {d.sql} AS {d.ref} FROM {d.table}{where}"


__all__ = ["Proposal", "Teacher", "read_teaching"]
