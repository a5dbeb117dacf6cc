"""The state database's own upkeep, as the adapters and commands need it — not what is kept in it.

What a conversation keeps (turns, clarifying questions, votes, schedules, claims) is read and
written through the conversation service (service.py) and the claims (claims.py). What is left is
about the database itself, and it is offered here, once, so that nothing in bot/ imports
core.state: whether it can be written (`/healthz` of the Slack and Teams web processes), its
schema (`db upgrade`, and `serve` / `worker` at start), opening it (the scheduler's job store) and
reading the audit log (`audit`).
"""

from __future__ import annotations

from core.state import open_state, state_engine
from core.state.audit import entries_since, parse_since
from core.state.health import StateHealth, StateProbe
from core.state.migrate import current, head, upgrade

__all__ = [
    "StateHealth",
    "StateProbe",
    "current",
    "entries_since",
    "head",
    "open_state",
    "parse_since",
    "state_engine",
    "upgrade",
]
