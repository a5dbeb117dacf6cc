"""The Teams app package (teams/manifest.json + icons) holds what Teams' v1.22 manifest schema
requires, within its limits, so an admin's upload is not refused; the bot answers the commands
the manifest lists; personal chats get prompt starters (questions to ask); and the app asks for
the resource-specific consent that lets replies in a channel thread (or a group chat) reach it
without an @mention."""

from __future__ import annotations

import json
import re

from PIL import Image

from tests.paths import ROOT

TEAMS = ROOT / "teams"
GUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
SEMVER = re.compile(r"^\d+\.\d+\.\d+$")
# Required top-level properties of the v1.22 schema (MicrosoftTeams.schema.json "required")
REQUIRED = ["manifestVersion", "version", "id", "developer", "name", "description", "icons", "accentColor"]


def manifest() -> dict:
    return json.loads((TEAMS / "manifest.json").read_text())


def test_manifest_has_every_required_field_within_the_schemas_limits():
    m = manifest()
    assert m["$schema"].endswith(f"/v{m['manifestVersion']}/MicrosoftTeams.schema.json")
    assert [k for k in REQUIRED if k not in m] == []
    assert SEMVER.match(m["version"]) and GUID.match(m["id"])
    for key in ("name", "websiteUrl", "privacyUrl", "termsOfUseUrl"):
        assert m["developer"][key], key
    for key in ("websiteUrl", "privacyUrl", "termsOfUseUrl"):
        assert m["developer"][key].startswith("https://")
    assert 0 < len(m["name"]["short"]) <= 30 and len(m["name"]["full"]) <= 100
    assert 0 < len(m["description"]["short"]) <= 80 and len(m["description"]["full"]) <= 4000
    assert re.match(r"^#[0-9a-fA-F]{6}$", m["accentColor"])


COMMANDS = {"help", "db", "verified", "schedules", "schedule", "define", "definitions"}


def test_the_bot_is_in_personal_team_and_group_chats_with_a_placeholder_id_and_its_commands():
    m = manifest()
    assert m["manifestVersion"] == "1.22"
    (bot,) = m["bots"]
    assert GUID.match(bot["botId"])  # the placeholder an admin replaces with the app id (docs/teams.md)
    assert sorted(bot["scopes"]) == ["groupChat", "personal", "team"]
    assert len(bot["commandLists"]) <= 3
    for command_list in bot["commandLists"]:
        assert set(command_list["scopes"]) <= {"team", "personal", "groupChat"}
        assert 0 < len(command_list["commands"]) <= 10
        for command in command_list["commands"]:
            assert 0 < len(command["title"]) <= 32 and 0 < len(command["description"]) <= 128
    titles = {c["title"] for cl in bot["commandLists"] for c in cl["commands"]}
    team_and_group = next(cl for cl in bot["commandLists"] if "team" in cl["scopes"])
    assert {c["title"] for c in team_and_group["commands"]} == COMMANDS <= titles
    app = (ROOT / "bot" / "teams" / "app.py").read_text()
    for title in COMMANDS:  # every listed command is one the adapter handles
        assert f'"{title}"' in app


def test_personal_chats_offer_prompt_starters_and_no_welcome_message():
    """Teams shows a personal command list as prompt starters; a bot with them sends no welcome."""
    (bot,) = manifest()["bots"]
    personal = next(cl for cl in bot["commandLists"] if cl["scopes"] == ["personal"])
    starters = [c["title"] for c in personal["commands"] if c["title"] not in COMMANDS]
    assert len(starters) >= 3 and starters[0].endswith("?")
    app = (ROOT / "bot" / "teams" / "app.py").read_text()
    assert 'place.kind == "personal"' in app  # on_installed: no help card in a personal chat


def test_the_app_asks_for_resource_specific_consent_to_read_its_conversations():
    m = manifest()
    rsc = {(p["name"], p["type"]) for p in m["authorization"]["permissions"]["resourceSpecific"]}
    assert rsc == {("ChannelMessage.Read.Group", "Application"), ("ChatMessage.Read.Chat", "Application")}
    (bot,) = m["bots"]
    assert m["webApplicationInfo"]["id"] == bot["botId"] == m["id"]  # RSC names the app's own id


def test_icons_are_the_sizes_teams_asks_for():
    m = manifest()
    color = Image.open(TEAMS / m["icons"]["color"])
    outline = Image.open(TEAMS / m["icons"]["outline"]).convert("RGBA")
    assert color.size == (192, 192) and outline.size == (32, 32)
    # the outline icon is white on a transparent background
    pixels = [outline.getpixel((x, y)) for x in range(32) for y in range(32)]
    drawn = {px for px in pixels if px[3] > 0}
    assert drawn and all(px[:3] == (255, 255, 255) for px in drawn)
    assert any(px[3] == 0 for px in pixels)
