"""Access rules with Teams fields: the Teams user (Entra ID object id), team and channel ids, the
way Slack rules use user, channel and user group ids — and never across platforms."""

from __future__ import annotations

from core.access import Principal, may_query
from core.settings import load_settings

ALICE = "00000000-0000-4000-8000-00000000a11c"
FINANCE = "19:finance@thread.tacv2"
TEAM = "19:team@thread.tacv2"


def settings(*rules):
    return load_settings(access={"rules": list(rules)})


def test_teams_fields_match_teams_askers_with_and_inside_a_rule():
    s = settings({"databases": ["sales"], "teams_channels": [FINANCE], "teams_users": [ALICE]})
    assert may_query(s, Principal.teams(user=ALICE, channel=FINANCE, team=TEAM), "sales")
    assert not may_query(s, Principal.teams(user="bob", channel=FINANCE, team=TEAM), "sales")
    assert not may_query(s, Principal.teams(user=ALICE, channel="19:other@thread.tacv2"), "sales")
    assert may_query(s, Principal.teams(user="anyone"), "demo")  # no rule names demo


def test_a_team_rule_lets_everyone_in_that_team_in():
    s = settings({"databases": ["*"], "teams_teams": [TEAM]})
    assert may_query(s, Principal.teams(user="u", channel="19:x@thread.tacv2", team=TEAM), "sales")
    assert not may_query(s, Principal.teams(user="u", channel="19:x@thread.tacv2", team="19:t2"), "sales")
    assert not may_query(s, Principal.teams(user="u", channel="a:personal"), "sales")  # a chat has no team


def test_rules_of_one_platform_never_open_a_database_to_the_other():
    slack_only = settings({"databases": ["sales"], "channels": ["C123"]})
    assert may_query(slack_only, Principal.of(user="U1", channel="C123"), "sales")
    assert not may_query(slack_only, Principal.teams(user=ALICE, channel="C123"), "sales")
    teams_only = settings({"databases": ["sales"], "teams_users": [ALICE]})
    assert not may_query(teams_only, Principal.of(user="U1", channel="C123"), "sales")  # was "anyone" before
    both = settings({"databases": ["sales"], "channels": ["C123"], "teams_users": [ALICE]})
    assert may_query(both, Principal.of(user="U1", channel="C123"), "sales")
    assert may_query(both, Principal.teams(user=ALICE, channel=FINANCE), "sales")
    assert not may_query(both, Principal.teams(user="bob", channel=FINANCE), "sales")
    everyone = settings({"databases": ["sales"]})
    assert may_query(everyone, Principal.teams(user="x"), "sales") and may_query(
        everyone, Principal.of("U"), "sales"
    )


def test_object_ids_are_compared_as_guids_and_anything_else_is_refused_at_load():
    upper = settings({"databases": ["sales"], "teams_users": [ALICE.upper()]})
    assert may_query(upper, Principal.teams(user=ALICE, channel=FINANCE), "sales")  # not a silent lockout
    try:
        settings({"databases": ["sales"], "teams_users": ["alice@example.com"]})
    except ValueError as exc:
        assert "not an Entra object id" in str(exc)
    else:
        raise AssertionError("a teams_users entry that is no GUID was accepted")


def test_analyst_teams_match_by_exact_team_id_and_users_by_canonical_guid():
    from core.verified.analysts import is_analyst

    s = load_settings(verified={"analysts": {"users": [ALICE.upper()], "teams_teams": [TEAM]}})
    assert is_analyst(s, Principal.teams(user=ALICE, channel=FINANCE))
    member = Principal.teams(user="00000000-0000-4000-8000-000000000b0b", channel=FINANCE, groups=[TEAM])
    assert is_analyst(s, member)
    lowered = Principal.teams(
        user="00000000-0000-4000-8000-000000000b0b", channel=FINANCE, groups=[TEAM.upper()]
    )
    assert not is_analyst(s, lowered)  # a team id is not a handle: no case folding
