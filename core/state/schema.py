"""Tables of the state database, as the code reads and writes them.

The database itself is created and upgraded by the Alembic revisions in core/state/migrations/
(core/state/migrate.py), never by `create_all`: a change here needs a revision there, and
tests/integration/test_state_migrations.py fails until the two agree.
"""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

now = sa.func.current_timestamp

conversations = sa.Table(
    "conversations",
    metadata,
    sa.Column("id", sa.String(200), primary_key=True),  # e.g. slack:T123:C456:1700000000.000100
    sa.Column("database", sa.String(200), nullable=False),
    sa.Column("channel", sa.String(64)),
    sa.Column("user", sa.String(64)),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
)

turns = sa.Table(
    "turns",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column(
        "conversation_id", sa.String(200), sa.ForeignKey("conversations.id"), nullable=False, index=True
    ),
    sa.Column("trace_id", sa.String(32), index=True),
    sa.Column("user", sa.String(64)),
    sa.Column("question", sa.Text, nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("mode", sa.String(16)),
    sa.Column("answer", sa.Text),
    sa.Column("sql", sa.Text),
    sa.Column("columns", sa.JSON),
    sa.Column("row_count", sa.Integer),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)

traces = sa.Table(
    "traces",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("data", sa.JSON, nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)

events = sa.Table(
    "processed_events",
    metadata,
    sa.Column("id", sa.String(200), primary_key=True),  # Slack event_id, or a derived key
    sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
)

# Questions in flight (core/state/events.py), created by revision 0002. A question is claimed
# when it arrives (received), where its progress shows is recorded once posted (answering), and it
# is marked answered at the end. The process answering it renews a lease; when the lease runs out (the process died) a Slack retry, or any process's recovery
# sweep, takes the claim over, closes the stale progress and answers once.
question_claims = sa.Table(
    "question_claims",
    metadata,
    # Slack: msg:TEAM:CHANNEL:TS or cmd:TEAM:TRIGGER; Teams: teams:<conversation|activity>
    sa.Column("key", sa.String(200), primary_key=True),
    sa.Column("state", sa.String(16), nullable=False),  # received | answering | answered
    sa.Column("holder", sa.String(200), nullable=False),  # the process answering it (host:pid:nonce)
    sa.Column("lease_until", sa.DateTime(timezone=True), nullable=False, index=True),
    sa.Column("attempts", sa.Integer, nullable=False, default=1),  # 1 + takeovers
    sa.Column("payload", sa.JSON),  # the adapter's record of the question, to finish it after a crash
    sa.Column("status_ref", sa.String(64)),  # the progress message left showing ("message:TS", "stream:TS")
    sa.Column("thread_ref", sa.String(64)),  # the thread the answer goes to
    sa.Column("received_at", sa.DateTime(timezone=True), nullable=False, index=True),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
)

feedback = sa.Table(
    "feedback",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("trace_id", sa.String(32), index=True),
    sa.Column("user", sa.String(64)),
    sa.Column("verdict", sa.String(8), nullable=False),  # up | down
    sa.Column("comment", sa.Text),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)

examples = sa.Table(
    "examples",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("database", sa.String(200), nullable=False, index=True),
    sa.Column("question", sa.Text, nullable=False),
    sa.Column("sql", sa.Text, nullable=False),
    sa.Column("created_by", sa.String(64)),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.UniqueConstraint("database", "question", name="uq_examples_question"),
)

channel_settings = sa.Table(
    "channel_settings",
    metadata,
    sa.Column("team", sa.String(64), primary_key=True),  # Slack team id ("" when unknown)
    sa.Column("channel", sa.String(64), primary_key=True),
    sa.Column("database", sa.String(200)),  # chosen with `/ask db NAME`; NULL: the default (0003)
    sa.Column("set_by", sa.String(64)),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    # answers go only to the asker (`/ask private on`, docs/slack.md); added by revision 0003
    sa.Column("private_results", sa.Boolean, nullable=False, default=False, server_default=sa.false()),
)

audit = sa.Table(
    "audit_log",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("at", sa.DateTime(timezone=True), nullable=False, index=True),
    sa.Column("source", sa.String(32)),  # cli | console | slack | schedule
    sa.Column("user", sa.String(64)),
    sa.Column("channel", sa.String(64)),
    sa.Column("database", sa.String(200)),
    sa.Column("question", sa.Text),
    sa.Column("sql", sa.Text),
    sa.Column("status", sa.String(16)),
    sa.Column("mode", sa.String(16)),
    sa.Column("error_kind", sa.String(32)),
    sa.Column("rows", sa.Integer),
    sa.Column("ms", sa.Float),
    sa.Column("llm_calls", sa.Integer),
    sa.Column("tokens", sa.Integer),
    sa.Column("trace_id", sa.String(32)),
    # How an answer was reused instead of written: "verified #3", "cache <trace id>" or both
    # (core.answer.Reuse.audit_text). Added by revision 0002.
    sa.Column("reused_from", sa.String(64)),
)


# Recurring questions (core/state/schedules.py). The APScheduler job store keeps its own table
# (apscheduler_jobs) in the same database; these rows are what people created.
schedules = sa.Table(
    "schedules",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("team", sa.String(64), nullable=False, index=True),  # Slack team id ("" when unknown)
    sa.Column("channel", sa.String(64), nullable=False, index=True),
    sa.Column("owner", sa.String(64), nullable=False, index=True),
    sa.Column("question", sa.Text, nullable=False),
    sa.Column("sql", sa.Text, nullable=False),  # validated SQL; guarded again before every run
    sa.Column("database", sa.String(200), nullable=False),
    sa.Column("trigger", sa.JSON, nullable=False),  # core.schedules.TriggerSpec
    sa.Column("condition", sa.JSON, nullable=False),  # core.schedules.Condition
    sa.Column("paused", sa.Boolean, nullable=False, default=False),
    sa.Column("paused_reason", sa.Text),
    sa.Column("revision", sa.Integer, nullable=False, default=1),  # bumped when `trigger` changes
    sa.Column("failures", sa.Integer, nullable=False, default=0),  # consecutive failed runs
    sa.Column("retry_at", sa.DateTime(timezone=True)),  # backing off: ticks before this are skipped
    sa.Column("error_ts", sa.String(32)),  # the channel message that reports the current failures
    sa.Column("last_tick", sa.DateTime(timezone=True)),  # the last tick accounted for (ran, or resumed)
    sa.Column("last_run_at", sa.DateTime(timezone=True)),
    sa.Column("last_status", sa.String(16)),
    sa.Column("last_rows", sa.Integer),
    sa.Column("last_fingerprint", sa.String(64)),
    sa.Column("last_result", sa.JSON),  # core.schedules.Snapshot of the last successful run
    sa.Column("source_trace", sa.String(32)),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    # Which chat the schedule posts in, and, for chats that need one to post unprompted, the stored
    # address (Teams: the SDK's ConversationReference as JSON). Slack rows: "slack" and NULL. Added
    # by revision 0002, which gives the rows of earlier releases "slack".
    sa.Column("platform", sa.String(16), nullable=False, default="slack", server_default="slack"),
    sa.Column("address", sa.JSON),
)

schedule_runs = sa.Table(
    "schedule_runs",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("schedule_id", sa.Integer, nullable=False, index=True),
    sa.Column("scheduled_for", sa.DateTime(timezone=True), nullable=False),  # the tick (or the click)
    sa.Column("manual", sa.Boolean, nullable=False, default=False),
    sa.Column("worker", sa.String(200)),
    sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("finished_at", sa.DateTime(timezone=True)),
    sa.Column("ms", sa.Float),
    sa.Column("status", sa.String(16), nullable=False),  # running | posted | quiet | failed
    sa.Column("rows", sa.Integer),
    sa.Column("error", sa.Text),
    sa.Column("note", sa.Text),
    sa.Column("trace_id", sa.String(32)),
    sa.Column("message_ts", sa.String(32)),
    # one run per tick, however many workers think they own the scheduler
    sa.UniqueConstraint("schedule_id", "scheduled_for", name="uq_schedule_runs_tick"),
)

scheduler_lease = sa.Table(
    "scheduler_lease",
    metadata,
    sa.Column("name", sa.String(64), primary_key=True),
    sa.Column("holder", sa.String(200), nullable=False),
    sa.Column("acquired_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
)

# Clarifying questions asked back (core/state/clarifications.py): what was asked, the options and
# their values, the transcript so far, who may answer, and the answer once given. A click after a
# restart, or on another web process, finds everything here.
clarifications = sa.Table(
    "clarifications",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),  # Clarification.id, carried by the buttons
    sa.Column("conversation_id", sa.String(200), nullable=False, index=True),
    sa.Column("database", sa.String(200), nullable=False),
    sa.Column("question", sa.Text, nullable=False),  # the person's question being clarified
    sa.Column("kind", sa.String(32), nullable=False),
    sa.Column("prompt", sa.Text, nullable=False),  # the clarifying question shown
    sa.Column("options", sa.JSON, nullable=False),  # [{"label", "value"}]
    sa.Column("transcript", sa.JSON, nullable=False),  # core.clarify.Transcript before this question
    sa.Column("asker", sa.String(64)),  # who may answer (when only the asker may)
    sa.Column("team", sa.String(64)),
    sa.Column("channel", sa.String(64)),
    sa.Column("thread_ts", sa.String(32)),
    sa.Column("message_ts", sa.String(32)),  # the message with the buttons
    sa.Column("trace_id", sa.String(32)),
    sa.Column("status", sa.String(16), nullable=False),  # open | answered | expired | replaced
    sa.Column("answer", sa.Text),  # the chosen label, or the person's own words
    sa.Column("answer_value", sa.Text),  # the chosen option's value ("" for own words)
    sa.Column("answered_by", sa.String(64)),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("answered_at", sa.DateTime(timezone=True)),
    # Teams: the conversation reference of the question's card (revision 0004); NULL for Slack
    sa.Column("address", sa.JSON),
)


# ---- Trusted answers (issue 19): verified queries and the answer cache --------------------------
# Created by revision 0002, like audit_log.reused_from above.

# Question → SQL pairs an analyst verified (core/state/verified.py, core/verified/). Rows are never
# deleted: Unverify sets `active` false, so an audit row's "verified #N" always finds its query.
verified_queries = sa.Table(
    "verified_queries",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("database", sa.String(200), nullable=False, index=True),
    sa.Column("question", sa.Text, nullable=False),
    sa.Column("sql", sa.Text, nullable=False),
    sa.Column("dialect", sa.String(32), nullable=False),
    sa.Column("params", sa.JSON, nullable=False),  # [core.verified.query.Param.to_json()]
    sa.Column("reusable", sa.Boolean, nullable=False, default=True),
    sa.Column("note", sa.Text),  # why it is not reusable
    sa.Column("verified_by", sa.String(64), nullable=False),
    sa.Column("verified_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("team", sa.String(64)),
    sa.Column("channel", sa.String(64)),
    sa.Column("source_trace", sa.String(32)),  # the answer that was verified
    sa.Column("signature", sa.String(64)),  # catalog signature it last ran against
    sa.Column("stale_reason", sa.Text),  # set: no longer passes the guard or runs; not reused
    sa.Column("stale_at", sa.DateTime(timezone=True)),
    sa.Column("stale_notified_at", sa.DateTime(timezone=True)),  # the verifier was told
    sa.Column("active", sa.Boolean, nullable=False, default=True),
    sa.Column("unverified_by", sa.String(64)),
    sa.Column("unverified_at", sa.DateTime(timezone=True)),
    sa.Column("reuse_count", sa.Integer, nullable=False, default=0),
    sa.Column("last_reused_at", sa.DateTime(timezone=True)),
    # the verifier's display name, for chats that cannot show a user id as a name (Teams; 0004)
    sa.Column("verifier_name", sa.String(200)),
)

# Business definitions taught in chat, learned from clarifications, or imported from dbt / OSI
# (core/state/definitions.py; the YAML ones live in the catalog file). Every change is a new row:
# a new version `replaces` the one it follows, which is retired, so each change can be undone (0005).
definitions = sa.Table(
    "definitions",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("database", sa.String(200), nullable=False, index=True),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("ref", sa.String(200), nullable=False, index=True),
    sa.Column("body", sa.JSON, nullable=False),  # core.definitions.model.Definition.to_json()
    sa.Column("scope_channel", sa.String(64)),
    sa.Column("scope_team", sa.String(64)),
    sa.Column("scope_user", sa.String(64)),
    sa.Column("source", sa.String(16), nullable=False),  # yaml | dbt | osi | taught | learned
    sa.Column("status", sa.String(16), nullable=False),  # proposed | active | retired | rejected
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("replaces", sa.Integer),  # the row this version follows
    sa.Column("proposed_by", sa.String(64)),
    sa.Column("proposed_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("decided_by", sa.String(64)),
    sa.Column("decided_at", sa.DateTime(timezone=True)),
    sa.Column("trace_id", sa.String(32)),  # the answer it was taught or learned from
    sa.Column("note", sa.Text),  # the words it was taught with, or why it was rejected
)

# Answers to repeated questions (core/state/answer_cache.py, core/answer_cache.py): keyed by the
# database, the normalized question, the schema signature and who may see what; bounded in rows,
# bytes and entries, and read only within the configured window.
answer_cache = sa.Table(
    "answer_cache",
    metadata,
    sa.Column("key", sa.String(64), primary_key=True),  # core.answer_cache.CacheKey.digest
    sa.Column("database", sa.String(200), nullable=False, index=True),
    sa.Column("question", sa.Text, nullable=False),  # normalized
    sa.Column("answer", sa.JSON, nullable=False),  # core.answer_cache.CachedAnswer.to_json()
    sa.Column("bytes", sa.Integer, nullable=False),
    sa.Column("source_trace", sa.String(32)),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, index=True),
)
