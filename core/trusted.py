"""Trusted answers, tried before any SQL is written: a repeated question from the answer cache,
a question that matches a verified query from that query's SQL — and verifying itself.

`Askbase.ask` (core/askbase.py) asks `before` for a plan on a fresh question (not a follow-up,
not a clarification): a cached answer to show as it is, or a verified query to answer from, with
the new question's values already put in its SQL; it runs that SQL through its own one entry
(access → guard → execute → one audit row), hands the result to `reused`, and `after` keeps the
final answer in the cache. Near matches come back as few-shot examples for the SQL writer.

A cached answer is shown again only if its SQL still passes the guard under today's rules (a
rule added since, or a stricter guard, drops it). Verified SQL is never trusted blindly: it goes
through the guard every time, and when it no
longer passes or no longer runs (a schema change, a new deny rule) the query is flagged stale —
not reused until an analyst fixes it, and its verifier is told (the adapters read the outbox,
core/state/verified.py) — and the question is answered as if it had never been verified.

Nothing here may stop a question from being answered: a failing state database or value index
only means no shortcut (logged).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal, Protocol

import sqlalchemy as sa
import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from core.access import Principal
from core.answer import ErrorKind, Outcome, Reuse
from core.answer_cache import CacheKey, enabled, keepable, key_for, replay, rules_digest
from core.database import Database
from core.examples import Example
from core.run import check_for
from core.schema_watch import SchemaWatch
from core.settings import Settings
from core.state import answer_cache as cache_store
from core.state import verified as verified_store
from core.trace import Trace
from core.verified.lexicon import DatabaseLexicon, lexicon_for
from core.verified.match import Match, Template, match, template
from core.verified.params import detect
from core.verified.query import VerifiedQuery
from core.verified.substitute import SubstitutionError, substitute

log = logging.getLogger(__name__)

MAX_QUESTION_CHARS = 2000  # longer questions go to the pipeline, which says why it will not answer
# Errors of verified SQL that mean it is broken, not that the database had a bad moment.
STALE_KINDS: frozenset[ErrorKind] = frozenset({"guard", "syntax", "other", "permission", "sql"})
CHECK_PURPOSE: Literal["verified_check"] = "verified_check"
MAX_PROBES = 50  # verified queries probed by one question after a schema change (the rest: next time)


class Rerun(Protocol):
    """Askbase.rerun: stored SQL through access → guard → execute → audit."""

    def __call__(
        self,
        sql: str,
        *,
        database: str,
        principal: Principal,
        purpose: Literal["verified_check"],
        question: str = "",
    ) -> Outcome: ...


@dataclass(frozen=True)
class Plan:
    """What to try before the pipeline, for one question."""

    cached: Outcome | None = None  # answer with this, as it is
    reuse: Match | None = None  # or run `sql`, this verified query with the question's values
    sql: str = ""
    examples: tuple[Example, ...] = ()  # near verified queries, for the SQL writer
    key: CacheKey | None = None  # where the answer goes in the cache (None: not cached)
    signature: str = ""  # Trusted.stamp: the schema and rules a reused verified query ran under
    trace: Trace | None = None


NOTHING = Plan()


@dataclass(frozen=True)
class Verification:
    query: VerifiedQuery
    status: Literal["new", "replaced", "already"]  # replaced: the same question, verified again


@dataclass(frozen=True)
class Check:
    query: VerifiedQuery
    ok: bool
    reason: str  # why it is stale, or why the check could not tell


class Trusted:
    def __init__(
        self,
        settings: Settings,
        state: Callable[[], sa.Engine],
        rerun: Rerun,
        clock: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC),
    ) -> None:
        self.settings = settings
        self._state = state
        self._rerun = rerun
        self._now = clock
        self.watch = SchemaWatch(settings.verified.schema_check_s)

    @property
    def state(self) -> sa.Engine:
        return self._state()

    def stamp(self, db: Database) -> str:
        """What a verified query last ran under: the schema signature and the database's rules;
        when either moves, the query is checked again before it is reused."""
        return f"{self.watch.signature(db)}/{rules_digest(db.config)}"

    # ------------------------------------------------------------------ answering

    def before(
        self, question: str, db: Database, who: Principal, *, refresh: bool = False, meaning: str = ""
    ) -> Plan:
        """The cached answer, or the verified query to answer from; `refresh`: skip the cache.
        `meaning`: the fingerprint of the definitions in force, part of the cache's key (a
        definition changed since is another answer)."""
        if not question.strip() or len(question) > MAX_QUESTION_CHARS:
            return NOTHING
        try:
            signature = self.watch.signature(db)
            stamp = f"{signature}/{rules_digest(db.config)}"
            dialect = db.catalog.dialect
        except (sa.exc.SQLAlchemyError, OSError, ValueError) as exc:  # the pipeline reports it
            log.info("no trusted answers for %s: %s", db.name, exc)
            return NOTHING
        trace = Trace(question=question, database=db.name)
        key = None
        try:
            if enabled(self.settings.cache, db.name):
                key = key_for(self.settings, who, db.name, db.config, question, signature, meaning)
                hit = (
                    None
                    if refresh
                    else cache_store.get(self.state, key, self.settings.cache.window_s, self._now())
                )
                if hit is not None and hit.sql and not check_for(db, hit.sql, self.settings.engine).allowed:
                    log.info("a cached answer on %s no longer passes the guard; answering afresh", db.name)
                    hit = None
                if hit is not None:
                    with trace.stage("cache") as st:
                        st.outputs = {
                            "hit": f"the same question on the same schema, answered at {hit.computed_at:%H:%M:%S} UTC",
                            "repeats": hit.trace_id,
                        }
                    return Plan(cached=replay(hit, question, trace), key=None, signature=stamp)
            if not self.settings.verified.reuse:
                return Plan(key=key, signature=stamp)
            queries = [q for q in verified_store.active(self.state, db.name) if q.dialect == dialect]
            queries = self._still_working(queries, who, stamp)
        except sa.exc.SQLAlchemyError:
            log.exception("the state database failed; answering without the cache or verified queries")
            return NOTHING
        if not queries:
            return Plan(key=key, signature=stamp)
        try:
            return self._verified(question, db, queries, trace, key, stamp)
        except (sa.exc.SQLAlchemyError, OSError) as exc:  # the value index could not be read
            log.warning("verified-query matching failed on %s: %s", db.name, exc)
            return Plan(key=key, signature=stamp)

    def _still_working(
        self, queries: list[VerifiedQuery], who: Principal, signature: str
    ) -> list[VerifiedQuery]:
        """After a schema or rules change, probe the verified queries last run under other ones (the
        guard checks them, the database plans them without reading a row); flag what fails."""
        changed = [q for q in queries if q.signature != signature][:MAX_PROBES]
        if not changed:
            return queries
        broken = {q.id for q in changed if not self.check(q, who, signature=signature, probe=True).ok}
        return [q for q in queries if q.id not in broken]

    def _verified(
        self,
        question: str,
        db: Database,
        queries: list[VerifiedQuery],
        trace: Trace,
        key: CacheKey | None,
        signature: str,
    ) -> Plan:
        lexicon = lexicon_for(db)
        with trace.stage("verified") as st:
            m = match(question, queries, lexicon, templates=_templates(lexicon))
            st.outputs = {
                "considered": m.considered,
                "match": m.why,
                "near": [f"#{q.id} {q.question}" for q in m.near],
            }
            sql = ""
            if m.reuse is not None:
                try:
                    sql = substitute(m.reuse.query.sql, m.reuse.query.dialect, m.reuse.bindings)
                except SubstitutionError as exc:
                    st.outputs["not_reused"] = str(exc)
                else:
                    st.outputs["verified"] = f"#{m.reuse.query.id}"
                    st.outputs["params"] = [f"{b.param.name} = {b.shown!r}" for b in m.reuse.bindings]
                    st.outputs["sql"] = sql
        examples = tuple(Example(q.question, q.sql, db.name, pinned=True) for q in m.near)
        reuse = m.reuse if sql else None
        return Plan(reuse=reuse, sql=sql, examples=examples, key=key, signature=signature, trace=trace)

    def reused(self, plan: Plan, ran: Outcome) -> Outcome | None:
        """The verified SQL's run as the answer, labelled; None when the query turned out stale
        (flagged, and the question is to be answered as if it had never been verified)."""
        assert plan.reuse is not None
        q = plan.reuse.query
        if ran.status == "answer":
            try:
                verified_store.reused(self.state, q.id, plan.signature)
            except sa.exc.SQLAlchemyError:
                log.exception("could not count the reuse of verified query #%s", q.id)
            label = Reuse(
                verified_id=q.id,
                verified_by=q.verified_by,
                verified_at=q.verified_at,
                verifier_name=q.verifier_name,
                match=plan.reuse.describe(),
            )
            return replace(ran, reuse=label)
        if ran.error_kind in STALE_KINDS:
            self._flag(q, ran.error or str(ran.error_kind))
            return None
        return ran  # the database had a bad moment (timeout, connection): say so; it stays verified

    def after(self, plan: Plan, outcome: Outcome) -> None:
        """Keep the answer for the next time the same question comes."""
        if plan.key is None:
            return
        now = self._now()
        kept = keepable(outcome, self.settings.cache, now)
        if kept is None:
            return
        cached, size = kept
        try:
            cache_store.put(
                self.state,
                plan.key,
                cached,
                size,
                window_s=self.settings.cache.window_s,
                max_entries=self.settings.cache.max_entries,
            )
        except sa.exc.SQLAlchemyError:
            log.exception("could not cache the answer of trace %s", outcome.trace.id)

    # ------------------------------------------------------------------ verifying

    def verify(
        self,
        db: Database,
        question: str,
        sql: str,
        verifier: str,
        *,
        verifier_name: str = "",
        team: str = "",
        channel: str = "",
        source_trace: str = "",
    ) -> Verification:
        """Record `question` → `sql` as verified by `verifier`, with its parameters. The same
        question read the same way replaces what was verified before (a fix of a stale query)."""
        lexicon = lexicon_for(db)
        signature = self.stamp(db)
        catalog = db.catalog
        found = detect(question, sql, catalog.dialect, lexicon, [t.name for t in catalog.tables])
        new = VerifiedQuery(
            id=0,
            database=db.name,
            question=question,
            sql=sql,
            dialect=catalog.dialect,
            params=found.params,
            reusable=found.reusable,
            note=found.note,
            verified_by=verifier,
            verified_at=self._now(),
            verifier_name=verifier_name,
            signature=signature,
            team=team,
            channel=channel,
        )
        existing = verified_store.active(self.state, db.name, include_stale=True)
        same, same_sql = _same_question(new, existing, lexicon, self.settings.engine.default_limit)
        if same is not None and same_sql and not same.stale:
            return Verification(same, "already")
        if same is not None:
            result = Verification(
                verified_store.replace_query(self.state, same.id, new, source_trace=source_trace), "replaced"
            )
        else:
            result = Verification(verified_store.add(self.state, new, source_trace=source_trace), "new")
        cache_store.clear(self.state, db.name)  # answers cached before now would miss the ✅
        return result

    def unverify(self, query_id: int, by: str | None) -> VerifiedQuery | None:
        q = verified_store.unverify(self.state, query_id, by)
        if q is not None:
            cache_store.clear(self.state, q.database)
        return q

    def check(
        self,
        q: VerifiedQuery,
        who: Principal,
        db: Database | None = None,
        *,
        signature: str = "",
        probe: bool = False,
    ) -> Check:
        """Run a verified query again (guard included) and flag it, or clear its flag. `probe`:
        only plan it (wrapped in LIMIT 0), which is enough to see that it still runs."""
        sql = _probe(q.sql, q.dialect) if probe else q.sql
        ran = self._rerun(sql, database=q.database, principal=who, purpose=CHECK_PURPOSE, question=q.question)
        if ran.status == "answer":
            if not signature and db is not None:
                try:
                    signature = self.stamp(db)
                except (sa.exc.SQLAlchemyError, OSError, ValueError):
                    signature = ""
            verified_store.checked(self.state, q.id, signature or q.signature)
            return Check(q, True, "")
        if ran.error_kind in STALE_KINDS:
            self._flag(q, ran.error or str(ran.error_kind))
            return Check(q, False, ran.error)
        return Check(q, False, f"could not tell: {ran.error}")

    def _flag(self, q: VerifiedQuery, reason: str) -> None:
        try:
            if verified_store.flag_stale(self.state, q.id, reason):
                log.warning("verified query #%s on %s is stale: %s", q.id, q.database, reason)
                cache_store.clear(self.state, q.database)
        except sa.exc.SQLAlchemyError:
            log.exception("could not flag verified query #%s as stale", q.id)


def _probe(sql: str, dialect: str) -> str:
    """`sql` as a derived table read with LIMIT 0: planned (names checked) but no row read."""
    try:
        inner = sqlglot.parse_one(sql, read=dialect)
    except SqlglotError:
        return sql  # the guard will say what is wrong with it
    if not isinstance(inner, exp.Query):
        return sql
    return sqlglot.select("*").from_(inner.subquery("verified_probe")).limit(0).sql(dialect=dialect)


def _templates(lexicon: DatabaseLexicon) -> Callable[[VerifiedQuery], Template]:
    def get(q: VerifiedQuery) -> Template:
        return lexicon.memo(("template", q), lambda: template(q, lexicon))

    return get


def _same_question(
    new: VerifiedQuery, existing: list[VerifiedQuery], lexicon: DatabaseLexicon, default_limit: int
) -> tuple[VerifiedQuery | None, bool]:
    """The verified query `new` asks again, if any, and whether it already gives `new`'s SQL."""
    from_text = next(
        (q for q in existing if q.question.strip().lower() == new.question.strip().lower()), None
    )
    m = match(new.question, [q for q in existing if q.reusable], lexicon, templates=_templates(lexicon))
    if m.reuse is None:
        return from_text, from_text is not None and _same_sql(
            from_text.sql, new.sql, new.dialect, default_limit
        )
    try:
        theirs = substitute(m.reuse.query.sql, m.reuse.query.dialect, m.reuse.bindings)
    except SubstitutionError:
        return m.reuse.query, False
    return m.reuse.query, _same_sql(theirs, new.sql, new.dialect, default_limit)


def _same_sql(a: str, b: str, dialect: str, default_limit: int) -> bool:
    """The same query, whatever the formatting and the LIMIT the guard adds to every query."""
    return _canonical(a, dialect, default_limit) == _canonical(b, dialect, default_limit)


def _canonical(sql: str, dialect: str, default_limit: int) -> str:
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except SqlglotError:
        return " ".join(sql.split())
    limit = tree.args.get("limit")
    if (
        isinstance(limit, exp.Limit)
        and limit.expression is not None
        and limit.expression.name == str(default_limit)
    ):
        tree.set("limit", None)
    return tree.sql(dialect=dialect)
