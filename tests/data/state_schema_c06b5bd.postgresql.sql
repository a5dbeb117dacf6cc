-- The state database as main made it right before Alembic migrations landed (core/state/schema.py
-- at c06b5bd, metadata.create_all: v0 plus the Teams adapter's schedules.platform and .address,
-- verified_queries, answer_cache, audit_log.reused_from and question_claims), frozen for
-- tests/test_state_migrations.py. Never edit: it is history.

CREATE TABLE answer_cache (
	key VARCHAR(64) NOT NULL,
	database VARCHAR(200) NOT NULL,
	question TEXT NOT NULL,
	answer JSON NOT NULL,
	bytes INTEGER NOT NULL,
	source_trace VARCHAR(32),
	created_at TIMESTAMP WITH TIME ZONE NOT NULL,
	PRIMARY KEY (key)
);

CREATE INDEX ix_answer_cache_created_at ON answer_cache (created_at);

CREATE INDEX ix_answer_cache_database ON answer_cache (database);

CREATE TABLE audit_log (
	id SERIAL NOT NULL,
	at TIMESTAMP WITH TIME ZONE NOT NULL,
	source VARCHAR(32),
	"user" VARCHAR(64),
	channel VARCHAR(64),
	database VARCHAR(200),
	question TEXT,
	sql TEXT,
	status VARCHAR(16),
	mode VARCHAR(16),
	error_kind VARCHAR(32),
	rows INTEGER,
	ms FLOAT,
	llm_calls INTEGER,
	tokens INTEGER,
	trace_id VARCHAR(32),
	reused_from VARCHAR(64),
	PRIMARY KEY (id)
);

CREATE INDEX ix_audit_log_at ON audit_log (at);

CREATE TABLE channel_settings (
	team VARCHAR(64) NOT NULL,
	channel VARCHAR(64) NOT NULL,
	database VARCHAR(200) NOT NULL,
	set_by VARCHAR(64),
	updated_at TIMESTAMP WITH TIME ZONE NOT NULL,
	PRIMARY KEY (team, channel)
);

CREATE TABLE clarifications (
	id VARCHAR(32) NOT NULL,
	conversation_id VARCHAR(200) NOT NULL,
	database VARCHAR(200) NOT NULL,
	question TEXT NOT NULL,
	kind VARCHAR(32) NOT NULL,
	prompt TEXT NOT NULL,
	options JSON NOT NULL,
	transcript JSON NOT NULL,
	asker VARCHAR(64),
	team VARCHAR(64),
	channel VARCHAR(64),
	thread_ts VARCHAR(32),
	message_ts VARCHAR(32),
	trace_id VARCHAR(32),
	status VARCHAR(16) NOT NULL,
	answer TEXT,
	answer_value TEXT,
	answered_by VARCHAR(64),
	created_at TIMESTAMP WITH TIME ZONE NOT NULL,
	expires_at TIMESTAMP WITH TIME ZONE NOT NULL,
	answered_at TIMESTAMP WITH TIME ZONE,
	PRIMARY KEY (id)
);

CREATE INDEX ix_clarifications_conversation_id ON clarifications (conversation_id);

CREATE TABLE conversations (
	id VARCHAR(200) NOT NULL,
	database VARCHAR(200) NOT NULL,
	channel VARCHAR(64),
	"user" VARCHAR(64),
	created_at TIMESTAMP WITH TIME ZONE NOT NULL,
	updated_at TIMESTAMP WITH TIME ZONE NOT NULL,
	PRIMARY KEY (id)
);

CREATE TABLE examples (
	id SERIAL NOT NULL,
	database VARCHAR(200) NOT NULL,
	question TEXT NOT NULL,
	sql TEXT NOT NULL,
	created_by VARCHAR(64),
	created_at TIMESTAMP WITH TIME ZONE NOT NULL,
	PRIMARY KEY (id),
	CONSTRAINT uq_examples_question UNIQUE (database, question)
);

CREATE INDEX ix_examples_database ON examples (database);

CREATE TABLE feedback (
	id SERIAL NOT NULL,
	trace_id VARCHAR(32),
	"user" VARCHAR(64),
	verdict VARCHAR(8) NOT NULL,
	comment TEXT,
	created_at TIMESTAMP WITH TIME ZONE NOT NULL,
	PRIMARY KEY (id)
);

CREATE INDEX ix_feedback_trace_id ON feedback (trace_id);

CREATE TABLE processed_events (
	id VARCHAR(200) NOT NULL,
	received_at TIMESTAMP WITH TIME ZONE NOT NULL,
	PRIMARY KEY (id)
);

CREATE TABLE question_claims (
	key VARCHAR(200) NOT NULL,
	state VARCHAR(16) NOT NULL,
	holder VARCHAR(200) NOT NULL,
	lease_until TIMESTAMP WITH TIME ZONE NOT NULL,
	attempts INTEGER NOT NULL,
	payload JSON,
	status_ref VARCHAR(64),
	thread_ref VARCHAR(64),
	received_at TIMESTAMP WITH TIME ZONE NOT NULL,
	updated_at TIMESTAMP WITH TIME ZONE NOT NULL,
	PRIMARY KEY (key)
);

CREATE INDEX ix_question_claims_lease_until ON question_claims (lease_until);

CREATE INDEX ix_question_claims_received_at ON question_claims (received_at);

CREATE TABLE schedule_runs (
	id SERIAL NOT NULL,
	schedule_id INTEGER NOT NULL,
	scheduled_for TIMESTAMP WITH TIME ZONE NOT NULL,
	manual BOOLEAN NOT NULL,
	worker VARCHAR(200),
	started_at TIMESTAMP WITH TIME ZONE NOT NULL,
	finished_at TIMESTAMP WITH TIME ZONE,
	ms FLOAT,
	status VARCHAR(16) NOT NULL,
	rows INTEGER,
	error TEXT,
	note TEXT,
	trace_id VARCHAR(32),
	message_ts VARCHAR(32),
	PRIMARY KEY (id),
	CONSTRAINT uq_schedule_runs_tick UNIQUE (schedule_id, scheduled_for)
);

CREATE INDEX ix_schedule_runs_schedule_id ON schedule_runs (schedule_id);

CREATE TABLE scheduler_lease (
	name VARCHAR(64) NOT NULL,
	holder VARCHAR(200) NOT NULL,
	acquired_at TIMESTAMP WITH TIME ZONE NOT NULL,
	expires_at TIMESTAMP WITH TIME ZONE NOT NULL,
	PRIMARY KEY (name)
);

CREATE TABLE schedules (
	id SERIAL NOT NULL,
	team VARCHAR(64) NOT NULL,
	channel VARCHAR(64) NOT NULL,
	owner VARCHAR(64) NOT NULL,
	question TEXT NOT NULL,
	sql TEXT NOT NULL,
	database VARCHAR(200) NOT NULL,
	trigger JSON NOT NULL,
	condition JSON NOT NULL,
	paused BOOLEAN NOT NULL,
	paused_reason TEXT,
	revision INTEGER NOT NULL,
	failures INTEGER NOT NULL,
	retry_at TIMESTAMP WITH TIME ZONE,
	error_ts VARCHAR(32),
	last_tick TIMESTAMP WITH TIME ZONE,
	last_run_at TIMESTAMP WITH TIME ZONE,
	last_status VARCHAR(16),
	last_rows INTEGER,
	last_fingerprint VARCHAR(64),
	last_result JSON,
	source_trace VARCHAR(32),
	created_at TIMESTAMP WITH TIME ZONE NOT NULL,
	updated_at TIMESTAMP WITH TIME ZONE NOT NULL,
	platform VARCHAR(16) DEFAULT 'slack' NOT NULL,
	address JSON,
	PRIMARY KEY (id)
);

CREATE INDEX ix_schedules_channel ON schedules (channel);

CREATE INDEX ix_schedules_owner ON schedules (owner);

CREATE INDEX ix_schedules_team ON schedules (team);

CREATE TABLE traces (
	id VARCHAR(32) NOT NULL,
	data JSON NOT NULL,
	created_at TIMESTAMP WITH TIME ZONE NOT NULL,
	PRIMARY KEY (id)
);

CREATE TABLE turns (
	id SERIAL NOT NULL,
	conversation_id VARCHAR(200) NOT NULL,
	trace_id VARCHAR(32),
	"user" VARCHAR(64),
	question TEXT NOT NULL,
	status VARCHAR(16) NOT NULL,
	mode VARCHAR(16),
	answer TEXT,
	sql TEXT,
	columns JSON,
	row_count INTEGER,
	created_at TIMESTAMP WITH TIME ZONE NOT NULL,
	PRIMARY KEY (id),
	FOREIGN KEY(conversation_id) REFERENCES conversations (id)
);

CREATE INDEX ix_turns_conversation_id ON turns (conversation_id);

CREATE INDEX ix_turns_trace_id ON turns (trace_id);

CREATE TABLE verified_queries (
	id SERIAL NOT NULL,
	database VARCHAR(200) NOT NULL,
	question TEXT NOT NULL,
	sql TEXT NOT NULL,
	dialect VARCHAR(32) NOT NULL,
	params JSON NOT NULL,
	reusable BOOLEAN NOT NULL,
	note TEXT,
	verified_by VARCHAR(64) NOT NULL,
	verified_at TIMESTAMP WITH TIME ZONE NOT NULL,
	team VARCHAR(64),
	channel VARCHAR(64),
	source_trace VARCHAR(32),
	signature VARCHAR(64),
	stale_reason TEXT,
	stale_at TIMESTAMP WITH TIME ZONE,
	stale_notified_at TIMESTAMP WITH TIME ZONE,
	active BOOLEAN NOT NULL,
	unverified_by VARCHAR(64),
	unverified_at TIMESTAMP WITH TIME ZONE,
	reuse_count INTEGER NOT NULL,
	last_reused_at TIMESTAMP WITH TIME ZONE,
	PRIMARY KEY (id)
);

CREATE INDEX ix_verified_queries_database ON verified_queries (database);
