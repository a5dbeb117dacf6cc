"""Local stand-ins for the chat platforms, on 127.0.0.1: what the load benchmarks drive and the tests use.

- slack_api.py: the Slack Web API (FakeSlack), reached through the real slack_sdk client;
- bot_connector.py: the Bot Connector service Teams replies go to (FakeConnector), and Teams'
  side of the other direction (TeamsClient);
- local_server.py: the threaded HTTP server both run on.

They live here, not under tests/, because `python -m core.bench slack-load|teams-load` drives them
too, and `core` never imports `tests`. Like the rest of core/bench they stay in the source tree and
are left out of the wheel (pyproject.toml `packages.find`): a clone runs them, an install has no
use for them.
"""
