"""The manifest asks for exactly what the app uses, and points Slack where the app listens."""

from __future__ import annotations

from pathlib import Path

import yaml

from bot.listeners.questions import COMMAND
from bot.slack_app import BOT_SCOPES, EVENTS_PATH

MANIFEST = Path(__file__).resolve().parent.parent / "slack" / "manifest.yaml"


def test_manifest_scopes_events_command_and_urls_match_the_app():
    manifest = yaml.safe_load(MANIFEST.read_text())
    settings, features = manifest["settings"], manifest["features"]
    assert sorted(manifest["oauth_config"]["scopes"]["bot"]) == sorted(BOT_SCOPES)
    assert sorted(settings["event_subscriptions"]["bot_events"]) == [
        "app_home_opened",  # the Home tab's list of schedules
        "app_mention",
        "message.channels",
        "message.groups",
        "message.im",
    ]
    assert [c["command"] for c in features["slash_commands"]] == [COMMAND]
    assert settings["interactivity"]["is_enabled"] is True
    urls = [settings["event_subscriptions"]["request_url"], settings["interactivity"]["request_url"]]
    urls += [c["url"] for c in features["slash_commands"]]
    assert all(u.startswith("https://") and u.endswith(EVENTS_PATH) for u in urls)
    assert manifest["oauth_config"]["redirect_urls"][0].endswith("/slack/oauth_redirect")
    assert features["app_home"]["messages_tab_enabled"] is True  # DMs reach the bot
