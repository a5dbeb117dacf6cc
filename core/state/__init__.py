"""The bot's own state: one SQLAlchemy database (ASKBASE_STATE_URL), SQLite by default.

Conversations and turns, stored traces, processed Slack event ids, feedback, confirmed examples,
the audit log (and, added by their features, clarifications and schedules). Nothing a restart
would lose lives only in memory. Each concern is a module of plain functions over an Engine;
`schema.py` holds every table so one `create_all` sets a database up.
"""

from core.state.schema import metadata, open_state

__all__ = ["metadata", "open_state"]
