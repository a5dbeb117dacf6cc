"""Trusted answers end to end in Teams: ✅ Verify on an answer card (analysts only: Entra ids, or
members of a Teams team the Bot Connector vouches for), the same question and a paraphrase with
another city answered from the verified SQL with a ✅ and no LLM call, `verified` listing them,
and Unverify.

`python -m bot serve --teams` runs as deployed; activities go to its `/api/messages`, its cards
reach the fake Bot Connector, the model is the fake OpenAI server (its request log proves when no
LLM call was made), the data the demo database.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
import sqlalchemy as sa

from bot.teams.cards import escape
from core.bench.fakes.bot_connector import FakeConnector, Posted
from core.state import verified as verified_store
from tests.slack_harness import Plan, hand
from tests.teams_harness import TeamsServed, teams_env

ANA = ("aaaaaaaa-0000-4000-8000-0000000000a1", "Ana")  # the analyst
BOB = ("bbbbbbbb-0000-4000-8000-0000000000b2", "Bob")
CARL = ("cccccccc-0000-4000-8000-0000000000c3", "Carl")
ANALYSTS_TEAM = "19:analysts0123456789@thread.tacv2"
COUNT_IN_CITY = "SELECT COUNT(*) AS clients FROM client JOIN location ON location.id = client.loc_id WHERE location.city = '%s'"
COUNT_IN = "SELECT COUNT(*) FROM client c JOIN location l ON l.id = c.loc_id WHERE l.city = '%s'"  # by hand


def city_plan(plan: Plan, city: str) -> None:
    plan.main_task = f"Count the clients in {city}"
    plan.objects = ["clients", "city"]
    plan.sql = COUNT_IN_CITY % city


@pytest.fixture
def serve(tmp_path, demo_var, fake_llm, plan):
    """`serve --teams` with the fake model; `analysts` are the verified.analysts settings."""
    running: list[TeamsServed] = []

    def start(connector: FakeConnector, analysts: dict) -> TeamsServed:
        env = {
            **teams_env(tmp_path, demo_var),
            "ASKBASE_TEAMS__ALLOW_ANONYMOUS": "true",
            "OPENAI_API_KEY": "test-key",
            "OPENAI_BASE_URL": fake_llm.base_url,
            "ASKBASE_VERIFIED__SCHEMA_CHECK_S": "0",
            **{f"ASKBASE_VERIFIED__ANALYSTS__{k.upper()}": json.dumps(v) for k, v in analysts.items()},
        }
        served = TeamsServed(env, tmp_path, connector)
        running.append(served)
        return served

    yield start
    for served in running:
        served.stop()


def chat(served: TeamsServed, name: str) -> dict:
    return served.client.place("groupChat", conversation=f"19:{name}0123456789@thread.v2")


def ask(served: TeamsServed, connector: FakeConnector, place: dict, question: str, who=BOB) -> Posted:
    """@mention the bot in a group chat; the answer card that comes back."""
    activity = served.client.activity(question, place=place, mention=True, user=who[0], name=who[1])
    before = {m.id for m in connector.in_conversation(place["conversation"]["id"])}
    served.client.post(activity)
    return connector.card_in(
        place["conversation"]["id"], lambda m: m.is_answer and m.id not in before, timeout=30
    )


def press(
    served: TeamsServed, connector: FakeConnector, card: Posted, title: str, who, place: dict
) -> Posted:
    """Press the button `title` of `card` as `who`; the card the bot says something with."""
    action = card.action(title)
    assert action is not None, f"no {title} on the card: {[a.get('title') for a in card.actions()]}"
    before = {m.id for m in connector.in_conversation(place["conversation"]["id"])}
    activity = served.client.activity(
        None, place=place, value=action["data"], reply_to=card.id, user=who[0], name=who[1]
    )
    served.client.post(activity)
    return connector.card_in(place["conversation"]["id"], lambda m: m.id not in before, timeout=20)


def say(served: TeamsServed, connector: FakeConnector, place: dict, text: str, who) -> Posted:
    before = {m.id for m in connector.in_conversation(place["conversation"]["id"])}
    served.client.post(served.client.activity(text, place=place, mention=True, user=who[0], name=who[1]))
    return connector.card_in(place["conversation"]["id"], lambda m: m.id not in before, timeout=20)


def stored(tmp_path: Path) -> list[verified_store.VerifiedQuery]:
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'state.sqlite'}")
    try:
        with engine.connect() as conn:
            ids = conn.execute(sa.text("SELECT id FROM verified_queries ORDER BY id")).scalars().all()
        return [q for q in (verified_store.get(engine, i) for i in ids) if q is not None]
    finally:
        engine.dispose()


def count(demo_var: Path, city: str) -> str:
    ((n,),) = hand(demo_var, COUNT_IN % city)
    return n


def test_an_analyst_verifies_in_teams_and_the_same_question_and_another_city_need_no_llm(
    serve, plan, fake_llm, demo_var, tmp_path
):
    with FakeConnector() as connector:
        served = serve(connector, {"users": [ANA[0]]})
        place = chat(served, "sales")
        city_plan(plan, "Lyon")
        first = ask(served, connector, place, "How many clients are in Lyon?")
        assert first.sentence().endswith(f": {count(demo_var, 'Lyon')}.")
        assert "Verified by" not in first.all_text()
        assert len(fake_llm.requests) >= 1  # the SQL writer wrote that SQL

        refused = press(served, connector, first, "✅ Verify", BOB, place)  # not an analyst
        assert "Only analysts can verify" in refused.all_text() and stored(tmp_path) == []

        note = press(served, connector, first, "✅ Verify", ANA, place)
        assert (
            "✅ Ana verified this answer as #1" in note.all_text()
            and escape("city (Lyon)") in note.all_text()
        )
        (q,) = stored(tmp_path)  # what Slack records, with the verifier's name for the ✅ label
        assert (q.question, q.database) == ("How many clients are in Lyon?", "demo")
        assert q.sql == f"{COUNT_IN_CITY % 'Lyon'} LIMIT 1000"  # the SQL that ran (the guard's LIMIT)
        assert (q.verified_by, q.verifier_name) == ANA and q.verified_at.date() == dt.datetime.now(
            dt.UTC
        ).date()
        again = press(served, connector, first, "✅ Verify", ANA, place)
        assert "is verified query #1 already (by Ana on" in again.all_text()

        before = len(fake_llm.requests)
        city_plan(plan, "Nowhere")  # were the model asked, its SQL would give another answer
        same = ask(served, connector, chat(served, "ops"), "How many clients are in Lyon?", who=CARL)
        paraphrase = ask(served, connector, chat(served, "hr"), "How many customers are based in Paris?")
        assert len(fake_llm.requests) == before, "a verified question went to the LLM"
        assert same.sentence().endswith(f": {count(demo_var, 'Lyon')}.")
        assert paraphrase.sentence().endswith(f": {count(demo_var, 'Paris')}.")
        today = f"{dt.datetime.now(dt.UTC):%Y-%m-%d}"
        for card in (same, paraphrase):
            assert f"✅ Verified by Ana on {today}" in card.all_text()
            assert card.action("✅ Verify") is None  # nothing left to verify

        # `verified` lists it; analysts get Unverify, others do not
        listed = say(served, connector, place, "verified", ANA)
        assert "#1" in listed.all_text() and "verified by Ana" in listed.all_text()
        assert listed.action("Unverify") is not None
        seen_by_bob = say(served, connector, place, "verified", BOB)
        assert "#1" in seen_by_bob.all_text() and seen_by_bob.action("Unverify") is None
        refused = press(served, connector, listed, "Unverify", BOB, place)
        assert "Only analysts" in refused.all_text() and stored(tmp_path)[0].active
        done = press(served, connector, listed, "Unverify", ANA, place)
        assert "Unverified #1" in done.all_text() and not stored(tmp_path)[0].active


def test_members_of_an_analyst_team_may_verify_as_the_bot_connector_says(serve, plan, tmp_path):
    """`verified.analysts.teams_teams`: Teams teams whose members are analysts, as Slack's user
    groups; membership is asked of the Bot Connector, and kept for a while."""
    with FakeConnector(teams={ANALYSTS_TEAM: {ANA[0]}}) as connector:
        served = serve(connector, {"teams_teams": [ANALYSTS_TEAM]})
        place = chat(served, "sales")
        city_plan(plan, "Lyon")
        answer = ask(served, connector, place, "How many clients are in Lyon?")

        refused = press(served, connector, answer, "✅ Verify", BOB, place)
        assert "Only analysts can verify" in refused.all_text() and stored(tmp_path) == []
        note = press(served, connector, answer, "✅ Verify", ANA, place)
        assert "✅ Ana verified this answer as #1" in note.all_text()
        assert stored(tmp_path)[0].verified_by == ANA[0]
        assert sorted(connector.lookups) == sorted([(ANALYSTS_TEAM, BOB[0]), (ANALYSTS_TEAM, ANA[0])])
        press(served, connector, answer, "✅ Verify", ANA, place)  # already verified
        assert len(connector.lookups) == 2  # her membership was kept, not asked again
