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
- every change is a new version: removing retires, reverting brings the version before back;
- a 👍 on an answer makes its question and SQL a confirmed example only when an analyst gives it;
  anyone else's vote is recorded as feedback, listed for the analysts (`votes_to_review`), who
  make it an example with one click (`use_as_example`) — a wrong answer confirmed by mistake
  must not spread into the prompts and the suggested questions.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from dataclasses import dataclass, replace
from typing import Literal

import sqlalchemy as sa

from core.access import Principal
from core.answer import Clarification
from core.askbase import Askbase
from core.data_rules import rules_policy
from core.definitions import in_force, of_database
from core.definitions.check import check
from core.definitions.expand import expand, shown_sql
from core.definitions.model import Definition, Definitions, Provenance, Scope
from core.definitions.teach import Draft, Teaching, by_keywords, draft, learned_reading, read_teaching
from core.guard import GuardPolicy
from core.keyword.readings import Reading
from core.schema_text import ASKBASE, ddl_text
from core.state import clarifications, conversations, feedback
from core.state import definitions as store
from core.verified.analysts import is_analyst

log = logging.getLogger(__name__)

Where = Literal["me", "channel"]

# "define loss ratio as ..." said to the bot: the words that make a message a teaching, not a
# question (a question that starts so is rare; "let"/"note that" start questions too often)
_DEFINE = re.compile(r"^\s*(?:please\s+)?define\s+\S", re.I)
# a rule stated in a comment after 👎: "'existing' means status = 'Operational'"
_RULE = re.compile(
    r"""^\s*(?:by\s+)?["'“‘]?(?P<name>[A-Za-z%][\w%&/ .-]{0,60}?)["'”’]?\s+
        (?:means|should\s+mean|stands\s+for|is\s+defined\s+as|should\s+be\s+read\s+as)\s+
        (?P<meaning>.+?)\s*[.!]?\s*$""",
    re.I | re.X | re.S,
)
_NOT_A_NAME = frozenset(
    [
        *("it", "this", "that", "these", "those", "which", "what", "there", "here"),
        *("the answer", "the result", "the query", "the sql", "the number", "the count", "the total"),
    ]
)
# the word an assumption line is about: "Read 'existing' as status = 'Operational'"
_QUOTED = re.compile(r"""['"“‘]([^'"”’]{1,60})['"”’]""")
_ASSUMED = re.compile(r"^\s*(?:read\s+|reading\s+it\s+as\s+)?(?P<word>.+?)\s+(?:as|means|=)\s+", re.I)


def chat_teaching(text: str) -> Teaching | None:
    """'define loss ratio as total loss divided by premium' typed to the bot (a mention, a DM,
    `/ask define ...`, a Teams message): the teaching it is; None for anything else (a question)."""
    if not _DEFINE.match(text or ""):
        return None
    found = read_teaching(text)
    return found if found is not None and found.name.lower() not in _NOT_A_NAME else None


def stated_rule(comment: str) -> Teaching | None:
    """A rule stated in a comment on a wrong answer ("'existing' means status = 'Operational'",
    "define X as Y"), sentence by sentence; None when the comment states none."""
    for sentence in re.split(r"(?<=[.!?:;])\s+|\n+", (comment or "").strip()):
        found = read_teaching(sentence)
        if found is not None:
            return found
        match = _RULE.match(sentence)
        if match is None:
            continue
        name = match.group("name").strip().strip(".,:")
        words = name.lower().split()
        if (
            not words
            or len(words) > 5
            or " ".join(words) in _NOT_A_NAME
            or words[0] in ("it", "this", "that")
        ):
            continue
        return Teaching(name=name, meaning=match.group("meaning").strip())
    return None


def assumed_word(line: str) -> str:
    """The word an assumption line is about ("Read 'existing' as status = 'Operational'" →
    existing), for the Correct button's form; "" when the line names none."""
    quoted = _QUOTED.search(line or "")
    if quoted:
        return quoted.group(1).strip()
    match = _ASSUMED.match(line or "")
    word = match.group("word").strip() if match else ""
    return word if 0 < len(word.split()) <= 4 else ""


@dataclass(frozen=True)
class Offer:
    """ "Always read 'existing' as Status = 'Operational'?" — what a clarification's chosen
    option would become if the person remembered it."""

    database: str
    word: str
    reading: str  # the option as people read it
    condition: Definition | None  # a filter when the option pins the word to a stored value

    def question(self) -> str:
        return f"Always read '{self.word}' as {self.reading}?"


def offer_for(clarification: Clarification, index: int, database: str) -> Offer | None:
    """What choosing option `index` would be remembered as; None when it names no word to read
    (a choice between two whole queries whose question quotes none)."""
    if not 0 <= index < len(clarification.options):
        return None
    option = clarification.options[index]
    reading = Reading.decode(option.value)
    label = _label(option.label)
    if reading is not None:
        word = reading.words.strip()
        condition = None
        if reading.column and reading.value is not None:
            value = reading.value.replace("'", "''")
            sql = (
                f"{reading.column} = '{value}'" if reading.op == "=" else f"{reading.column} LIKE '%{value}%'"
            )
            condition = Definition(
                kind="filter",
                name=word,
                table=reading.table,
                sql=sql,
                description=f"'{word}' read as {label}",
            )
        return Offer(database, word, label, condition) if word else None
    quoted = _QUOTED.search(clarification.question)
    word = quoted.group(1).strip() if quoted else ""
    if not word or not label:
        return None
    return Offer(database, word, label, None)


def _label(text: str) -> str:
    """An option's words without the figure shown on its button ("customers in Lyon → 12")."""
    return text.split(" → ")[0].strip()


@dataclass(frozen=True)
class Remembered:
    """What became of "For me" / "For this channel" under a clarification."""

    status: Literal["remembered", "gone", "not yours", "no word", "no channel", "does not fit"]
    definition: Definition | None = None
    offer: Offer | None = None


@dataclass(frozen=True)
class Proposal:
    """A drafted definition as a person sees it before it is approved (or why there is none)."""

    id: int | None  # its row once stored; None when nothing was stored
    definition: Definition | None
    sql: str = ""  # what it stands for, in SQL
    preview: str = ""  # "over all the data: 41.3 %" — or why it could not be computed
    problem: str = ""  # why it was not stored (does not fit, could not be read)
    may_approve: bool = False  # the proposer is an analyst: their click makes it active
    database: str = ""

    @property
    def stored(self) -> bool:
        return self.id is not None


@dataclass(frozen=True)
class Vote:
    """What a 👍 or 👎 did: "example" (an analyst's 👍: the question and SQL are an example now),
    "noted" (recorded as feedback; an analyst decides), or "nothing" (no answer to vote on)."""

    status: Literal["example", "noted", "nothing"]
    question: str = ""
    database: str = ""


@dataclass(frozen=True)
class Review:
    """A vote by someone who is not an analyst, on an answer that is not an example: for the
    analysts to look at (and, for a 👍, to make an example of)."""

    trace_id: str
    question: str
    database: str
    sql: str
    verdict: str  # up | down
    user: str
    comment: str
    at: dt.datetime | None


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
            return Proposal(None, None, problem="You may not ask about that database.", database=database)
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
        if drafted.definition is None:  # the adapters add an example that works on this database
            problem = re.sub(r"\s*Try e\.g\. `define [^`]*`\.?", "", drafted.problem).strip()
            return Proposal(None, None, problem=problem, database=database)
        d = replace(
            drafted.definition, provenance=replace(drafted.definition.provenance, owner=who.user or "")
        )
        problems = check(definitions.plus([d]), db.catalog, self._policy(database))
        mine = [p for p in problems if f"{d.kind} '{d.name}'" in p]
        if mine:
            return Proposal(
                None, d, sql=_shown_sql(d, definitions), problem=mine[0].split(": ", 2)[-1], database=database
            )
        id_ = store.propose(
            self.state, database, d, by=who.user or "operator", trace_id=trace_id, note=teaching.meaning
        )
        stored = store.get(self.state, id_) or d
        return Proposal(
            id_,
            stored,
            sql=_shown_sql(d, definitions),
            preview=self.preview(database, d, definitions, who),
            may_approve=is_analyst(self.askbase.settings, who),
            database=database,
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

    def example(self, database: str) -> str:
        """A `define …` sentence that drafts without the LLM on this database's own columns (what
        a person is shown when their words could not be drafted)."""
        fallback = "define operational as status = 'Operational'"
        try:
            catalog = self.askbase.database(database).catalog
        except Exception:  # the example is a courtesy; the database's own problem is said elsewhere
            return fallback
        tried: list[str] = []
        for t in catalog.tables:
            for c in t.columns:
                for value, meaning in list(c.values.items())[:1]:
                    if "'" not in value and re.fullmatch(r"[\w ]{1,30}", meaning or ""):
                        tried.append(f"define {meaning.lower()} {t.name} as {t.name}.{c.name} = '{value}'")
        for t in catalog.tables:
            numeric = [
                c
                for c in t.columns
                if c.kind in ("number", "integer") and not c.primary_key and not c.name.lower().endswith("id")
            ]
            if numeric:
                c = numeric[0]
                tried.append(f"define total {c.name.replace('_', ' ')} as SUM({t.name}.{c.name})")
        for text in tried:
            teaching = read_teaching(text)
            if teaching is not None and by_keywords(teaching, catalog, Definitions()) is not None:
                return text
        return fallback

    def _policy(self, database: str) -> GuardPolicy:
        return rules_policy(self.askbase.database(database))

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
        if not (self.may_remove(d, who) or is_analyst(self.askbase.settings, who)):
            return False
        return store.retire(self.state, id_, by=who.user or "operator")

    @staticmethod
    def may_remove(d: Definition, who: Principal) -> bool:
        """Their own: learned for them, or a reading they remembered for a channel."""
        if not who.user:
            return False
        return d.scope.user == who.user or (
            d.provenance.source == "learned" and d.provenance.owner == who.user
        )

    def revert(self, id_: int, who: Principal) -> Definition | None:
        if not is_analyst(self.askbase.settings, who):
            return None
        return store.revert(self.state, id_, by=who.user or "operator")

    def undo(self, id_: int, who: Principal) -> tuple[bool, Definition | None]:
        """Undo an approval (analysts): (done, the version now active in its place, if any)."""
        if not is_analyst(self.askbase.settings, who):
            return False, None
        d = store.get(self.state, id_)
        if d is None or d.status != "active":
            return False, None
        return True, store.revert(self.state, id_, by=who.user or "operator")

    def may_decide(self, who: Principal) -> bool:
        """Analysts approve, reject and undo."""
        return is_analyst(self.askbase.settings, who)

    def get(self, id_: int) -> Definition | None:
        """A stored definition, whatever its status (what a button under it reads back)."""
        return store.get(self.state, id_)

    def database_of(self, id_: int) -> str | None:
        return store.database_of(self.state, id_)

    def answer_database(self, trace_id: str) -> str | None:
        """The database of the answer `trace_id` (a Correct button, a 👎 comment)."""
        turn = conversations.turn_by_trace(self.state, trace_id)
        return turn.database if turn is not None else None

    def answer_conversation(self, trace_id: str) -> str | None:
        """The conversation (the chat's key) the answer `trace_id` was given in."""
        turn = conversations.turn_by_trace(self.state, trace_id)
        return turn.conversation_id if turn is not None else None

    def answered_by(self, trace_id: str) -> str | None:
        """Who asked the question the answer `trace_id` answers."""
        turn = conversations.turn_by_trace(self.state, trace_id)
        return turn.user if turn is not None else None

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

    def offer(self, clarification: Clarification, index: int, database: str) -> Offer | None:
        return offer_for(clarification, index, database)

    def remember_choice(self, clarification_id: str, index: int, who: Principal, where: Where) -> Remembered:
        """ "For me" / "For this channel" pressed under an answered clarifying question: remember
        the option chosen there (only the person who chose it may)."""
        pending = clarifications.get(self.state, clarification_id)
        if pending is None or pending.answer_value is None:
            return Remembered("gone")
        if pending.answered_by and who.user != pending.answered_by:
            return Remembered("not yours")
        options = pending.clarification.options
        if not 0 <= index < len(options) or options[index].value != pending.answer_value:
            return Remembered("gone")
        offer = offer_for(pending.clarification, index, pending.database)
        if offer is None:
            return Remembered("no word")
        if where == "channel" and not who.channel:
            return Remembered("no channel", offer=offer)
        d = self.remember(
            offer.database, offer.word, offer.reading, offer.condition, who, where, trace_id=pending.trace_id
        )
        return (
            Remembered("remembered", d, offer) if d is not None else Remembered("does not fit", offer=offer)
        )

    # ------------------------------------------------------------------ listing

    def pending(self, database: str | None = None) -> list[Definition]:
        return store.pending(self.state, database)

    def remembered_for(self, who: Principal) -> list[tuple[str, Definition]]:
        """(database, definition) of what was learned for this person or in their channel."""
        out = []
        for name in self.askbase.databases.names():
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

    def remembered_by(self, user: str) -> list[tuple[str, Definition]]:
        """(database, definition) of the readings `user` remembered, for themselves or a channel
        (what App Home lists with who, when and Remove)."""
        out = []
        for name in self.askbase.databases.names():
            try:
                for d in store.active(self.state, name):
                    if (
                        d.provenance.source == "learned"
                        and user
                        and (d.scope.user == user or d.provenance.owner == user)
                    ):
                        out.append((name, d))
            except sa.exc.SQLAlchemyError:
                log.exception("could not list remembered readings")
        return out

    def taught_active(self, limit: int = 5) -> list[tuple[str, Definition]]:
        """(database, definition) of the definitions taught in chat and active now, newest first:
        what an analyst may undo from App Home."""
        out: list[tuple[str, Definition]] = []
        for name in self.askbase.databases.names():
            try:
                out.extend(
                    (name, d) for d in store.active(self.state, name) if d.provenance.source == "taught"
                )
            except sa.exc.SQLAlchemyError:
                log.exception("could not list taught definitions")
        return sorted(out, key=lambda pair: -(pair[1].id or 0))[:limit]

    # ------------------------------------------------------------------ votes

    def vote(self, trace_id: str, who: Principal, verdict: Literal["up", "down"], comment: str = "") -> Vote:
        """Record a 👍 / 👎 on the answer `trace_id`; an analyst's 👍 also makes it an example."""
        turn = conversations.turn_by_trace(self.state, trace_id)
        if turn is None or not turn.answered:
            if verdict == "down":
                feedback.record_feedback(self.state, trace_id, who.user, "down", comment)
            return Vote("nothing")
        feedback.record_feedback(self.state, trace_id, who.user, verdict, comment)
        question = self.standalone_question(trace_id, turn.question)
        if verdict == "up" and self.may_decide(who):
            feedback.confirm_example(self.state, turn.database, question, turn.sql, who.user)
            return Vote("example", question, turn.database)
        return Vote("noted", question, turn.database)

    def use_as_example(self, trace_id: str, who: Principal) -> Vote:
        """An analyst makes an answer someone voted 👍 an example (from the list to review)."""
        if not self.may_decide(who):
            return Vote("noted")
        turn = conversations.turn_by_trace(self.state, trace_id)
        if turn is None or not turn.answered:
            return Vote("nothing")
        question = self.standalone_question(trace_id, turn.question)
        feedback.confirm_example(self.state, turn.database, question, turn.sql, who.user)
        return Vote("example", question, turn.database)

    def votes_to_review(self, limit: int = 5) -> list[Review]:
        """Recent votes by people who are not analysts, on answers that are not examples yet,
        newest first, one 👍 and one 👎 per answer."""
        analysts = set(self.askbase.settings.verified.analysts.users)
        out: list[Review] = []
        seen: set[tuple[str, str]] = set()
        for v in feedback.recent_votes(self.state, limit * 10):
            trace_id, user = str(v["trace_id"] or ""), str(v["user"] or "")
            if not trace_id or (trace_id, str(v["verdict"])) in seen or user in analysts:
                continue
            seen.add((trace_id, str(v["verdict"])))
            turn = conversations.turn_by_trace(self.state, trace_id)
            if turn is None or not turn.answered:
                continue
            question = self.standalone_question(trace_id, turn.question)
            if feedback.is_example(self.state, turn.database, question, turn.sql):
                continue
            at = v["created_at"] if isinstance(v["created_at"], dt.datetime) else None
            verdict, comment = str(v["verdict"]), str(v["comment"] or "")
            out.append(Review(trace_id, question, turn.database, turn.sql, verdict, user, comment, at))
            if len(out) == limit:
                break
        return out

    def standalone_question(self, trace_id: str, asked: str) -> str:
        """The question as understood on its own ("…in 2024?" after "How many clients?" becomes
        whole): what an example is stored under, since it is reused outside its thread."""
        trace = conversations.load_trace(self.state, trace_id) or {}
        for stage in trace.get("stages", []):
            if stage.get("name") == "understand":
                text = (stage.get("outputs") or {}).get("question")
                if text:
                    return str(text)
        return asked

    def all_of(self, database: str) -> Definitions:
        return of_database(self.askbase.database(database), self.state)


def _shown_sql(d: Definition, definitions: Definitions | None = None) -> str:
    """What a definition stands for, as plain SQL a person can read; a ratio as its whole figure."""
    whole = _preview_sql(d, definitions or Definitions()) if d.ratio else ""
    return whole or shown_sql(d)


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
    """A metric over all the data, one figure (not per its grain): the preview."""
    where = f" WHERE {d.filter}" if d.filter else ""
    return f"SELECT {d.sql} AS {d.ref} FROM {d.table}{where}"


__all__ = [
    "Offer",
    "Proposal",
    "Remembered",
    "Teacher",
    "Teaching",
    "assumed_word",
    "chat_teaching",
    "learned_reading",
    "offer_for",
    "read_teaching",
    "stated_rule",
]
