"""The bot's own state: one SQLAlchemy database (ASKBASE_STATE_URL), SQLite by default.

Conversations and turns, stored traces, processed Slack event ids, feedback, confirmed examples,
the audit log, clarifications and schedules. Nothing a restart would lose lives only in memory.
Each concern is a module of plain functions over an Engine; `schema.py` holds every table, the
Alembic revisions in `migrations/` create and upgrade them (`migrate.py`), and `open_state`
hands out an engine whose schema is at head.
"""

from core.state.engine import open_state, state_engine
from core.state.schema import metadata

__all__ = ["metadata", "open_state", "state_engine"]
