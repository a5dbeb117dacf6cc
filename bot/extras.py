"""The extras of the adapters: the chat platforms and charts, registered with core/extras.py.

Bot code that asks about an extra imports these names from here, so the registration has happened
by then: `pip install askbase` runs `ask`, `console`, `index`, `catalog`, `audit` and `db`; `serve`
needs `slack` (Bolt, slack_sdk, gunicorn for `--http`, greenlet for slack_sdk's SQLAlchemy stores)
or, with `--teams`, `teams` (the Microsoft 365 Agents SDK, aiohttp, PyJWT); `worker` both, as it
posts schedules to either; `charts` (matplotlib) draws the charts under answers, which are left out
without it.
"""

from __future__ import annotations

from core.extras import MissingExtra, installed, message, missing_extra, register, require

register("slack", "Slack support", ("slack_bolt", "slack_sdk", "gunicorn", "greenlet"))
register("teams", "Microsoft Teams support", ("microsoft_agents", "aiohttp", "jwt", "msal"))
register("charts", "Charts", ("matplotlib",))

__all__ = ["MissingExtra", "installed", "message", "missing_extra", "require"]
