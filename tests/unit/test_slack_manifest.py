"""The manifest asks for exactly what the app uses, and points Slack where the app listens."""

from __future__ import annotations

import yaml

from bot.slack.app import BOT_SCOPES, EVENTS_PATH
from bot.slack.listeners.questions import COMMAND
from tests.paths import ROOT

MANIFEST = ROOT / "slack" / "manifest.yaml"


def test_manifest_scopes_events_command_and_urls_match_the_app():
    manifest = yaml.safe_load(MANIFEST.read_text())
    settings, features = manifest["settings"], manifest["features"]
    assert sorted(manifest["oauth_config"]["scopes"]["bot"]) == sorted(BOT_SCOPES)
    assert sorted(settings["event_subscriptions"]["bot_events"]) == [
        "app_context_changed",  # the DM follows the channel in view (agent view)
        "app_home_opened",  # the Home tab, and a DM opened (agent view: greeting, suggested prompts)
        "app_mention",
        "message.im",  # DMs; channel messages only with thread_followups
    ]
    # new Slack apps get the agent messaging experience only (assistant_view is for older installs)
    assert "assistant_view" not in features and features["agent_view"]["agent_description"]
    assert len(features["agent_view"]["agent_description"]) <= 300
    assert not {"channels:history", "groups:history"} & set(BOT_SCOPES)  # no reading of whole channels
    assert not {"usergroups:read", "users:read.email"} & set(BOT_SCOPES)  # only when settings need them
    assert [c["command"] for c in features["slash_commands"]] == [COMMAND]
    assert settings["interactivity"]["is_enabled"] is True
    urls = [settings["event_subscriptions"]["request_url"], settings["interactivity"]["request_url"]]
    urls += [c["url"] for c in features["slash_commands"]]
    assert all(u.startswith("https://") and u.endswith(EVENTS_PATH) for u in urls)
    assert manifest["oauth_config"]["redirect_urls"][0].endswith("/slack/oauth_redirect")
    assert features["app_home"]["messages_tab_enabled"] is True  # DMs reach the bot


def test_thread_followups_ask_for_the_history_scopes_only_when_on():
    from bot.slack.app import FOLLOWUP_SCOPES, bot_scopes
    from core.settings import load_settings

    assert bot_scopes(load_settings()) == BOT_SCOPES
    on = bot_scopes(load_settings(slack={"thread_followups": True}))
    assert set(on) - set(BOT_SCOPES) == set(FOLLOWUP_SCOPES) == {"channels:history", "groups:history"}


def test_user_groups_and_emails_are_asked_for_only_when_a_setting_uses_them():
    from bot.slack.app import bot_scopes
    from core.settings import AccessRule, DatabaseSettings, load_settings

    plain = set(bot_scopes(load_settings()))
    assert not {"usergroups:read", "users:read.email"} & plain
    rules = load_settings(access={"rules": [AccessRule(databases=["*"], usergroups=["S0123ABCD"])]})
    assert set(bot_scopes(rules)) - plain == {"usergroups:read"}
    analysts = load_settings(verified={"analysts": {"usergroups": ["@data-team"]}})
    assert set(bot_scopes(analysts)) - plain == {"usergroups:read"}
    told = DatabaseSettings(url="postgresql://db/x", identity={"variables": True})
    assert set(bot_scopes(load_settings(databases={"x": told}))) - plain == {"users:read.email"}
