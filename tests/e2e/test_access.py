"""Who may query which database: the rules, the engine's refusal, and Slack end to end.

The engine decides (core/access.py) and refuses before any LLM call or query; Slack only tells it
who asks, where, and in which user groups (resolved through the fake Slack Web API).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError
from slack_sdk import WebClient

from bot.slack.usergroups import FAILURE_TTL_S, TTL_S, UsergroupDirectory
from core.access import Principal, may_query, usable_databases
from core.askbase import Askbase
from core.bench.fakes.slack_api import FakeSlack
from core.identity import NoDatabaseRole, identity_for
from core.llm import LLM
from core.settings import AccessRule, DatabaseSettings, load_settings
from core.state import verified as verified_store
from core.state.audit import entries_since, parse_since
from core.state.channel_settings import may_use
from tests.fakes import model_replies as mr

FINANCE = "C0FINANCE"
GENERAL = "C0001"
ANALYST = "U0ANALYST"
INTERN = "U0INTERN"


def rules_settings(*rules: AccessRule, **overrides: Any):
    return load_settings(
        databases={name: DatabaseSettings(url="sqlite:///unused.sqlite") for name in ("sales", "hr")},
        access={"rules": list(rules)},
        **overrides,
    )


# ---------------------------------------------------------------- the rules


def test_without_rules_everyone_may_query_everything():
    settings = rules_settings()
    assert may_query(settings, Principal.of(INTERN, GENERAL), "sales")
    assert usable_databases(settings, Principal(), ["demo", "sales", "hr"]) == ["demo", "sales", "hr"]


def test_a_database_named_by_rules_is_open_only_to_whom_they_name():
    settings = rules_settings(AccessRule(databases=["hr"], channels=[FINANCE]))
    assert may_query(settings, Principal.of(INTERN, FINANCE), "hr")
    assert not may_query(settings, Principal.of(INTERN, GENERAL), "hr")
    assert not may_query(settings, Principal(), "hr")  # nobody in particular
    assert may_query(settings, Principal.of(INTERN, GENERAL), "sales")  # not named: open


def test_lists_inside_a_rule_all_apply_and_rules_add_up():
    settings = rules_settings(
        AccessRule(databases=["hr"], channels=[FINANCE], users=[ANALYST]),
        AccessRule(databases=["hr"], users=["U0BOSS"]),
    )
    assert may_query(settings, Principal.of(ANALYST, FINANCE), "hr")
    assert not may_query(settings, Principal.of(ANALYST, GENERAL), "hr")  # right user, wrong channel
    assert not may_query(settings, Principal.of(INTERN, FINANCE), "hr")  # right channel, wrong user
    assert may_query(settings, Principal.of("U0BOSS", GENERAL), "hr")  # the second rule


def test_user_groups_match_by_id_or_handle():
    settings = rules_settings(AccessRule(databases=["sales"], usergroups=["S0SALES", "@Data-Team"]))
    assert may_query(settings, Principal.of(INTERN, GENERAL, ["S0SALES"]), "sales")
    assert may_query(settings, Principal.of(INTERN, GENERAL, ["@data-team"]), "sales")
    assert may_query(settings, Principal.of(INTERN, GENERAL, ["data-team"]), "sales")  # a bare word: a handle
    assert not may_query(settings, Principal.of(INTERN, GENERAL, ["S0OTHER"]), "sales")
    assert not may_query(settings, Principal.of(INTERN, GENERAL), "sales")


def test_a_handle_that_spells_a_group_id_is_not_that_group():
    """Issue 31: a member of a group whose handle is `s0sales` passed for a member of S0SALES."""
    settings = rules_settings(AccessRule(databases=["sales"], usergroups=["S0SALES"]))
    impostor = Principal.of(INTERN, GENERAL, ["S0MINE", "@s0sales"])  # their own group's id and handle
    assert not may_query(settings, impostor, "sales")
    assert not may_query(settings, Principal.of(INTERN, GENERAL, ["s0sales"]), "sales")  # a handle too
    assert not may_query(settings, Principal.of(INTERN, GENERAL, ["S0Sales"]), "sales")  # ids are exact
    assert may_query(settings, Principal.of(INTERN, GENERAL, ["S0SALES", "@sales"]), "sales")
    # and the other way round: a rule naming the handle is not met by the group with that id
    by_handle = rules_settings(AccessRule(databases=["sales"], usergroups=["@s0sales"]))
    assert not may_query(by_handle, Principal.of(INTERN, GENERAL, ["S0SALES", "@sales"]), "sales")
    assert may_query(by_handle, Principal.of(INTERN, GENERAL, ["S0MINE", "@s0sales"]), "sales")


def test_settings_say_which_kind_each_group_is_and_refuse_what_could_be_either():
    rule = AccessRule(databases=["sales"], usergroups=["S0123ABCD", "@Data-Team", "finance", "@finance"])
    assert rule.usergroups == ["S0123ABCD", "@data-team", "@finance"]  # typed once, duplicates dropped
    for ambiguous in ("s0123abcd", "S0123abcd", "U0ALICE1"):  # an id in the wrong case, a person's id
        with pytest.raises(ValidationError, match="could be an id or a handle"):
            AccessRule(databases=["sales"], usergroups=[ambiguous])
    with pytest.raises(ValidationError, match="could be an id or a handle"):
        load_settings(verified={"analysts": {"usergroups": ["s0analysts"]}})
    assert load_settings(
        verified={"analysts": {"usergroups": ["S0ANALYSTS", "analysts"]}}
    ).verified.analysts.usergroups == [
        "S0ANALYSTS",
        "@analysts",
    ]


def test_a_star_rule_governs_every_database_and_the_operator_is_not_a_chat_user():
    settings = rules_settings(AccessRule(databases=["*"], channels=[FINANCE]))
    who = Principal.of(ANALYST, GENERAL)
    assert usable_databases(settings, who, ["demo", "sales", "hr"]) == []
    assert usable_databases(settings, Principal.of(ANALYST, FINANCE), ["demo", "sales"]) == ["demo", "sales"]
    assert may_query(settings, Principal.local(), "hr")  # the CLI/console operator holds the config


def test_the_old_channel_settings_helper_gives_the_same_answer():
    settings = rules_settings(AccessRule(databases=["hr"], channels=[FINANCE], usergroups=["S1"]))
    for channel, groups in ((FINANCE, ["S1"]), (FINANCE, []), (GENERAL, ["S1"])):
        assert may_use(settings, "hr", channel=channel, user=INTERN, usergroups=groups) == may_query(
            settings, Principal.of(INTERN, channel, groups), "hr"
        )


# ---------------------------------------------------------------- the engine refuses


@pytest.fixture
def guarded_app(settings, llm_settings, state_url):
    app = Askbase(
        load_settings(
            var_dir=settings.var_dir,
            state_url=state_url,
            access={"rules": [AccessRule(databases=["demo"], channels=[FINANCE])]},
        ),
        llm=LLM(llm_settings),
    )
    yield app
    app.close()


def _script_count(fake_llm) -> None:
    fake_llm.script("understand", mr.json_fenced(mr.understanding("Count the clients", [], ["clients"])))
    fake_llm.respond(
        "generate", mr.writing("SELECT COUNT(*) AS clients FROM client", task="Number of clients")
    )


def test_a_refused_asker_costs_no_llm_call_and_is_audited(guarded_app, fake_llm):
    _script_count(fake_llm)
    outcome = guarded_app.ask(
        "How many clients are there?", source="slack", principal=Principal.of(INTERN, GENERAL)
    )
    assert outcome.status == "error" and outcome.error_kind == "access"
    assert "may not query 'demo'" in outcome.error and not outcome.rows
    assert fake_llm.requests == []
    row = entries_since(guarded_app.state, parse_since("1h"))[-1]
    assert (row["status"], row["error_kind"], row["user"], row["channel"]) == (
        "error",
        "access",
        INTERN,
        GENERAL,
    )


def test_an_allowed_asker_and_the_operator_get_answers(guarded_app, fake_llm):
    _script_count(fake_llm)
    allowed = guarded_app.ask("How many clients?", source="slack", principal=Principal.of(INTERN, FINANCE))
    assert allowed.status == "answer" and allowed.rows == [(300,)]
    _script_count(fake_llm)
    local = guarded_app.ask("How many clients?")  # python -m bot ask: the operator
    assert local.status == "answer"
    # an adapter that says where but not who is subject to the rules (the old keywords still work)
    refused = guarded_app.ask("How many clients?", source="schedule", user=INTERN, channel=GENERAL)
    assert refused.error_kind == "access"


# ---------------------------------------------------------------- Slack end to end


class SlackWithGroups(FakeSlack):
    """The fake Web API plus usergroups.list (include_users), as Slack answers it."""

    groups: list[dict[str, Any]]
    groups_error: str | None = None

    def api_usergroups_list(self, args: dict[str, Any]) -> dict[str, Any]:
        if self.groups_error:
            return {"ok": False, "error": self.groups_error}
        assert str(args.get("include_users")).lower() in ("true", "1")
        return {"ok": True, "usergroups": self.groups}


@pytest.fixture
def slack():
    fake = SlackWithGroups()
    fake.groups = [{"id": "S0DATA", "handle": "data-team", "users": [ANALYST]}]
    with fake:
        yield fake


@pytest.fixture
def slack_bot(make_bot, demo_var, plan):
    return make_bot(
        databases={"copy": DatabaseSettings(url=f"sqlite:///{demo_var / 'demo.sqlite'}")},
        access={"rules": [AccessRule(databases=["demo"], usergroups=["data-team"])]},
    )


def answered(slack: FakeSlack, channel: str, ts: str):
    return slack.wait_for(lambda s: s.answer_in(channel, ts), timeout=15)


def test_only_members_of_the_named_user_group_get_answers(slack_bot, slack):
    _, ts = slack_bot.sender.mention("how many clients are there?", user=ANALYST)
    assert answered(slack, GENERAL, ts).result() == [["300"]]
    _, ts = slack_bot.sender.mention("how many clients are there?", user=INTERN)
    refused = answered(slack, GENERAL, ts)
    assert "may not query 'demo'" in refused.all_text() and refused.table() is None
    _, ts = slack_bot.sender.mention("how many clients now?", user=ANALYST)
    answered(slack, GENERAL, ts)
    assert len(slack.calls_to("usergroups.list")) == 1  # one call serves the workspace for a while
    rows = entries_since(slack_bot.state, parse_since("1h"))
    assert [(r["user"], r["status"], r["source"]) for r in rows] == [
        (ANALYST, "answer", "slack"),
        (INTERN, "error", "slack"),
        (ANALYST, "answer", "slack"),
    ]


def test_groups_are_asked_again_soon_after_a_failure_and_kept_a_while_after_a_success(slack):
    now = [0.0]
    directory = UsergroupDirectory(clock=lambda: now[0])
    client = WebClient(token="xoxb-test", base_url=slack.base_url)
    slack.groups_error = "ratelimited"
    assert directory.groups_of(client, "T1", ANALYST) == frozenset()  # no rights while Slack fails
    slack.groups_error = None
    now[0] += FAILURE_TTL_S / 2
    assert directory.groups_of(client, "T1", ANALYST) == frozenset()  # the failure is kept briefly
    now[0] += FAILURE_TTL_S
    assert directory.groups_of(client, "T1", ANALYST) == {"S0DATA", "@data-team"}  # Slack is asked again
    slack.groups = []
    now[0] += TTL_S / 2
    assert "@data-team" in directory.groups_of(client, "T1", ANALYST)  # a good answer lasts longer
    now[0] += TTL_S
    assert directory.groups_of(client, "T1", ANALYST) == frozenset()  # and a change shows after it
    assert len(slack.calls_to("usergroups.list")) == 3


def test_ask_db_lists_only_what_the_asker_may_use(slack_bot):
    listing = json.dumps(slack_bot.sender.command("db", user=INTERN).json())
    assert "copy" in listing and "`demo`" not in listing
    listing = json.dumps(slack_bot.sender.command("db", user=ANALYST).json())
    assert "copy" in listing and "demo" in listing


def test_without_the_scope_to_read_groups_nobody_gets_group_rights(slack_bot, slack):
    slack.groups_error = "missing_scope"
    _, ts = slack_bot.sender.mention("how many clients are there?", user=ANALYST)
    assert "may not query 'demo'" in answered(slack, GENERAL, ts).all_text()


def test_the_csv_button_checks_whoever_clicks_it(slack_bot, slack):
    _, ts = slack_bot.sender.mention("how many clients are there?", user=ANALYST)
    answer = answered(slack, GENERAL, ts)
    before = len(slack.files_in(GENERAL))
    slack_bot.sender.click(
        "get_csv",
        answer.button_value("show_sql"),
        channel=GENERAL,
        message_ts=answer.ts,
        thread_ts=ts,
        user=INTERN,
    )
    note = slack.wait_for(lambda s: s.calls_to("chat.postEphemeral"))[0].args
    assert note["user"] == INTERN and "may not query 'demo'" in note["text"]
    assert len(slack.files_in(GENERAL)) == before


# ---------------------------------------------------------------- ids are ids, handles are handles


IMPOSTOR = "U0IMPOSTOR"
ANALYST_GROUPS = [
    {"id": "S0ANALYSTS", "handle": "analysts", "users": [ANALYST]},
    # anyone may make a group and pick its handle: this one spells the analysts' group id
    {"id": "S0MINE", "handle": "s0analysts", "users": [IMPOSTOR]},
]


def test_a_group_whose_handle_spells_the_configured_id_opens_nothing_in_slack(make_bot, slack, plan):
    """Issue 31, through the real Bolt app: the rule names the group S0ANALYSTS by its id; a
    member of another group whose handle is `s0analysts` is refused, the real member answered."""
    slack.groups = ANALYST_GROUPS
    bot = make_bot(access={"rules": [AccessRule(databases=["demo"], usergroups=["S0ANALYSTS"])]})
    _, ts = bot.sender.mention("how many clients are there?", user=IMPOSTOR)
    refused = answered(slack, GENERAL, ts)
    assert "may not query 'demo'" in refused.all_text() and refused.table() is None
    _, ts = bot.sender.mention("how many clients are there?", user=ANALYST)
    assert answered(slack, GENERAL, ts).result() == [["300"]]
    listing = json.dumps(bot.sender.command("db", user=IMPOSTOR).json())
    assert "demo" not in listing


def test_a_group_whose_handle_spells_the_analysts_id_cannot_verify(make_bot, slack, plan):
    """The same for analysts (`verified.analysts.usergroups`): the impostor's ✅ Verify is refused
    and nothing is verified; the real analyst's goes through."""
    slack.groups = ANALYST_GROUPS
    bot = make_bot(verified={"analysts": {"usergroups": ["S0ANALYSTS"]}, "schema_check_s": 0})
    _, ts = bot.sender.mention("how many clients are there?", user=IMPOSTOR)
    answer = answered(slack, GENERAL, ts)
    trace_id = answer.button_value("verified_verify")
    assert trace_id, answer.action_ids()

    def press(user: str) -> None:
        response = bot.sender.click(
            "verified_verify", trace_id, channel=GENERAL, message_ts=answer.ts, thread_ts=ts, user=user
        )
        assert response.status == 200

    press(IMPOSTOR)
    note = slack.wait_for(
        lambda s: [c for c in s.calls_to("chat.postEphemeral") if c.args["user"] == IMPOSTOR]
    )
    assert "Only analysts" in note[0].args["text"]
    assert verified_store.active(bot.state) == []
    press(ANALYST)
    slack.wait_for(lambda s: any("verified this answer" in m.text for m in s.thread(GENERAL, ts)))
    assert len(verified_store.active(bot.state)) == 1


def test_database_roles_name_groups_by_id_or_handle_and_never_confuse_them_with_people():
    """`identity.roles` (row-level security) maps people, groups and channels to database roles:
    a group's handle spelling a group id, a person's id or a channel's id gets none of their roles."""
    config = DatabaseSettings(
        url="postgresql+psycopg://askbase@db.invalid/sales",
        identity={
            "variables": True,
            "roles": {"S0USTEAM": "sales_us", "@eu-team": "sales_eu", "U0ALICE": "alice", "C0FINANCE": "fin"},
        },
    )

    def role(*groups: str, user: str = INTERN, channel: str = GENERAL) -> str | None:
        try:
            identity = identity_for(config, Principal.of(user, channel, groups), "slack")
        except NoDatabaseRole:
            return None
        return identity.role if identity is not None else None

    assert role("S0USTEAM") == "sales_us" and role("@eu-team") == "sales_eu"
    assert role("eu-team") == "sales_eu"  # a bare word given by a caller is a handle
    assert role("@s0usteam") is None  # a handle spelling the id
    assert role("@u0alice", "@c0finance") is None  # handles spelling a person's and a channel's ids
    assert role(user="U0ALICE") == "alice" and role(channel="C0FINANCE") == "fin"
    told = identity_for(config, Principal.of("U0ALICE", GENERAL, ["S0USTEAM", "@eu-team"]), "slack")
    assert told is not None and told.variables["askbase.usergroups"] == "@eu-team,S0USTEAM"
    with pytest.raises(ValidationError, match="could be an id or a handle"):
        DatabaseSettings(url=config.url, identity={"roles": {"s0usteam": "sales_us"}})
