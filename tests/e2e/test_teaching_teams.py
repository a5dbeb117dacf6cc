"""Teaching Askbase what words mean, end to end in Teams (issue 32), as in Slack: define → approve
(an analyst) → used in the next answer; a non-analyst's proposal waits, not used, until an analyst
approves it from its card or the `definitions` list; a clarification choice remembered for one chat
applies there and not in another; an assumption's Correct this form; a 👎 comment that states a rule.

`python -m bot serve --teams` runs as deployed; activities go to its `/api/messages`, its cards
reach the fake Bot Connector, the model is the fake OpenAI server (its request log shows what the
SQL writer was told), the data the demo database.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from core.bench.fakes.bot_connector import FakeConnector, Posted
from core.definitions.model import Definition
from core.state import definitions as definitions_store
from tests.fakes import model_replies as mr
from tests.fakes.openai_server import Reply
from tests.slack_harness import Plan, hand
from tests.teams_harness import TeamsServed, teams_env

ANA = ("aaaaaaaa-0000-4000-8000-0000000000a1", "Ana")  # the analyst
BOB = ("bbbbbbbb-0000-4000-8000-0000000000b2", "Bob")
CARL = ("cccccccc-0000-4000-8000-0000000000c3", "Carl")
ACTIVE = "SELECT COUNT(*) AS clients FROM client WHERE status = 'ACT'"
DEFINE = "define active client as a client whose account status is ACT"
DRAFT = {
    "kind": "filter",
    "name": "active client",
    "description": "Clients whose account is active (status code ACT).",
    "synonyms": ["active clients", "active customers"],
    "table": "client",
    "sql": "status = 'ACT'",
}
SINGAPORE = "How many clients are in Singapore?"
IN_CITY = (
    "SELECT COUNT(*) AS clients FROM client JOIN location ON location.id = client.loc_id "
    "WHERE location.city = 'Singapore'"
)


@pytest.fixture
def serve(tmp_path, demo_var, fake_llm, plan):
    """`serve --teams` with the fake model and Ana an analyst; `extra` more settings."""
    running: list[TeamsServed] = []

    def start(connector: FakeConnector, **extra: str) -> TeamsServed:
        env = {
            **teams_env(tmp_path, demo_var),
            "ASKBASE_TEAMS__ALLOW_ANONYMOUS": "true",
            "OPENAI_API_KEY": "test-key",
            "OPENAI_BASE_URL": fake_llm.base_url,
            "ASKBASE_VERIFIED__SCHEMA_CHECK_S": "0",
            "ASKBASE_VERIFIED__ANALYSTS__USERS": json.dumps([ANA[0]]),
            **extra,
        }
        served = TeamsServed(env, tmp_path, connector)
        running.append(served)
        return served

    yield start
    for served in running:
        served.stop()


@pytest.fixture
def drafting(fake_llm) -> None:
    fake_llm.respond(
        "define",
        lambda body: Reply(content="The status code ACT marks active accounts.\n" + mr.json_fenced(DRAFT)),
    )


def chat(served: TeamsServed, name: str) -> dict:
    return served.client.place("groupChat", conversation=f"19:{name}0123456789@thread.v2")


def say(
    served: TeamsServed, connector: FakeConnector, place: dict, text: str, who, answer: bool = False
) -> Posted:
    """@mention the bot; the first card it posts back (`answer`: the answer card)."""
    before = {m.id for m in connector.in_conversation(place["conversation"]["id"])}
    served.client.post(served.client.activity(text, place=place, mention=True, user=who[0], name=who[1]))
    return connector.card_in(
        place["conversation"]["id"], lambda m: m.id not in before and (m.is_answer or not answer), timeout=30
    )


def press(
    served: TeamsServed,
    connector: FakeConnector,
    card: Posted,
    title: str,
    who,
    place: dict,
    inputs: dict[str, Any] | None = None,
    answer: bool = False,
) -> Posted:
    """Press the button `title` of `card` as `who` (with the card's `inputs` filled in); the next card."""
    action = card.action(title)
    assert action is not None, f"no {title} on the card: {[a.get('title') for a in card.actions()]}"
    before = {m.id for m in connector.in_conversation(place["conversation"]["id"])}
    activity = served.client.activity(
        None,
        place=place,
        value={**action["data"], **(inputs or {})},
        reply_to=card.id,
        user=who[0],
        name=who[1],
    )
    served.client.post(activity)
    return connector.card_in(
        place["conversation"]["id"], lambda m: m.id not in before and (m.is_answer or not answer), timeout=30
    )


def writer_definitions(fake_llm) -> str:
    prompt = fake_llm.calls("generate")[-1].messages[0]["content"]
    return prompt.partition("### Business definitions")[2].partition("\n### ")[0]


def stored(tmp_path: Path, status: str) -> list[Definition]:
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'state.sqlite'}")
    try:
        if status == "proposed":
            return definitions_store.pending(engine)
        return definitions_store.active(engine, "demo")
    finally:
        engine.dispose()


def count_active(plan: Plan) -> None:
    plan.main_task = "Count the active clients"
    plan.objects = ["clients"]
    plan.sql = ACTIVE


def today() -> str:
    now = dt.datetime.now(dt.UTC)
    return f"{now.day} {now:%b}"


# ---------------------------------------------------------------- define → approve → used


def test_an_analyst_defines_approves_and_the_next_answer_uses_it(
    serve, plan, fake_llm, drafting, demo_var, tmp_path
):
    with FakeConnector() as connector:
        served = serve(connector)
        place = chat(served, "sales")
        drafted = say(served, connector, place, DEFINE, ANA)
        text = drafted.all_text()
        ((active, total),) = hand(demo_var, "SELECT SUM(status = 'ACT'), COUNT(*) FROM client")
        assert "**active client**" in text and "Clients whose account is active" in text
        assert "SELECT * FROM client WHERE status = 'ACT'" in text  # its SQL (one * makes no Markdown)
        assert f"{int(active):,} of {int(total):,} client rows" in text  # the preview figure
        assert "Approve makes it active at once" in text
        assert drafted.action("Approve") is not None and drafted.action("Reject") is not None

        approved = press(served, connector, drafted, "Approve", ANA, place)
        assert "✅ Ana approved **active client**: it is active at once" in approved.all_text()
        assert approved.action("Undo") is not None
        assert [d.name for d in stored(tmp_path, "active")] == ["active client"]

        count_active(plan)
        answer = say(served, connector, place, "How many active clients are there?", BOB, answer=True)
        assert answer.sentence().endswith(f": {active}.")
        assert f"📖 Using: **active client** (taught in chat, {today()})" in answer.all_text()
        section = writer_definitions(fake_llm)
        assert '"active client"' in section and "status = 'ACT'" in section

        refused = press(served, connector, approved, "Undo", BOB, place)  # Undo is the analysts'
        assert "Only analysts can" in refused.all_text()
        undone = press(served, connector, approved, "Undo", ANA, place)
        assert "↩️ Ana undid **active client**: it is no longer defined" in undone.all_text()
        assert stored(tmp_path, "active") == []


# ---------------------------------------------------------------- a non-analyst's proposal waits


def test_a_non_analysts_proposal_is_queued_not_used_and_an_analyst_approves_it_from_the_list(
    serve, plan, fake_llm, drafting, tmp_path
):
    with FakeConnector() as connector:
        served = serve(connector)
        place = chat(served, "ops")
        drafted = say(served, connector, place, DEFINE, BOB)
        assert "Sent to the analysts for review" in drafted.all_text()
        refused = press(served, connector, drafted, "Approve", BOB, place)
        assert "Only analysts can approve" in refused.all_text()
        (waiting,) = stored(tmp_path, "proposed")
        assert (waiting.name, waiting.provenance.owner) == ("active client", BOB[0])

        count_active(plan)
        answer = say(served, connector, place, "How many active clients are there?", BOB, answer=True)
        assert "Using:" not in answer.all_text() and "active client" not in writer_definitions(fake_llm)

        bobs = say(served, connector, place, "definitions", BOB)
        assert bobs.action("Approve") is None and "1 proposed definition(s) wait" in bobs.all_text()
        listed = say(served, connector, place, "definitions", ANA)
        assert (
            "Proposed definitions** (1 waiting" in listed.all_text() and "active client" in listed.all_text()
        )
        approved = press(served, connector, listed, "Approve", ANA, place)
        assert "✅ Ana approved **active client**" in approved.all_text()

        used = say(served, connector, place, "How many active clients are there now?", CARL, answer=True)
        assert "📖 Using: **active client**" in used.all_text()
        assert "status = 'ACT'" in writer_definitions(fake_llm)


# ---------------------------------------------------------------- learned from a clarification


def script_singapore(fake_llm) -> None:
    def clarify(body):
        prompt = body["messages"][-1]["content"]
        ids = {label.strip(): cid for cid, label in re.findall(r"(C\d[ab]) ([^\[]+)\[", prompt)}
        city = next((c for label, c in ids.items() if "city" in label), None)
        country = next((c for label, c in ids.items() if "country" in label), None)
        if "answered:" in prompt or not (city and country):
            return Reply(content=mr.json_fenced({"summary": "Count clients.", "ask": False}))
        return Reply(
            content=mr.json_fenced(
                {
                    "summary": "Count the clients in Singapore.",
                    "review": {"AmbValue": "Singapore is both a city and a country"},
                    "ask": True,
                    "kind": "AmbValue",
                    "question": "Which 'Singapore' do you mean?",
                    "options": [
                        {"text": "the city of Singapore", "candidate": city},
                        {"text": "the country Singapore", "candidate": country},
                    ],
                }
            )
        )

    fake_llm.respond("clarify", clarify)
    fake_llm.respond(
        "generate", lambda body: Reply(content=mr.candidates(IN_CITY, task="Clients in Singapore"))
    )


def test_a_reading_remembered_for_a_chat_applies_there_and_not_in_another(
    serve, fake_llm, demo_var, tmp_path
):
    script_singapore(fake_llm)
    with FakeConnector() as connector:
        served = serve(connector, ASKBASE_ENGINE__CLARIFY="always")
        place = chat(served, "apac")
        question = say(served, connector, place, SINGAPORE, BOB)
        assert "Which 'Singapore' do you mean?" in question.all_text()
        offer = press(served, connector, question, "the city of Singapore", BOB, place)
        assert "💡 Always read 'Singapore' as the city of Singapore?" in offer.all_text()
        ((in_city,),) = hand(
            demo_var,
            "SELECT COUNT(*) FROM client c JOIN location l ON l.id = c.loc_id WHERE l.city = 'Singapore'",
        )
        connector.card_in(place["conversation"]["id"], lambda m: m.is_answer, timeout=30)

        refused = press(served, connector, offer, "For this channel", CARL, place)
        assert "Only the person who chose that reading can remember it" in refused.all_text()
        remembered = press(served, connector, offer, "For this channel", BOB, place)
        assert (
            "🧠 Remembered for this place: 'Singapore' is read as the city of Singapore"
            in remembered.all_text()
        )

        here = say(served, connector, place, SINGAPORE, CARL)  # the same chat: not asked again
        assert here.is_answer and here.sentence().endswith(f": {in_city}.")
        assert "📖 Using: **Singapore** (remembered in chat" in here.all_text()
        section = writer_definitions(fake_llm)
        assert '"Singapore"' in section and "city = 'Singapore'" in section

        elsewhere = say(served, connector, chat(served, "emea"), SINGAPORE, CARL)  # another chat: asked
        assert not elsewhere.is_answer and "Which 'Singapore' do you mean?" in elsewhere.all_text()

        listed = say(served, connector, place, "definitions", BOB)
        assert "Readings you remembered** (1)" in listed.all_text() and listed.action("Remove") is not None
        removed = press(served, connector, listed, "Remove", BOB, place)
        assert "Removed **Singapore**" in removed.all_text()
        assert stored(tmp_path, "active") == []


# ---------------------------------------------------------------- an assumption, and its Correct form


def test_an_assumption_line_has_a_correct_form_that_leads_to_a_proposal(serve, fake_llm, tmp_path):
    fake_llm.respond(
        "generate",
        lambda body: Reply(
            content="Task: Count the active clients\nPlan: client, filter on status\n"
            "Assumed: 'active' as status = 'ACT'\n\n" + f"```sql\n-- primary\n{ACTIVE}\n```"
        ),
    )
    with FakeConnector() as connector:
        served = serve(connector)
        place = chat(served, "fin")
        answer = say(served, connector, place, "How many active clients are there?", BOB, answer=True)
        assert "💭 Assumed: Read 'active' as status = 'ACT'" in answer.all_text()
        correct = answer.action("Correct this")
        assert correct is not None and correct["type"] == "Action.ShowCard"
        word = next(e for e in correct["card"]["body"] if e.get("id") == "word_0")
        assert word["value"] == "active"

        proposal = press(
            served,
            connector,
            answer,
            "Propose",
            BOB,
            place,
            inputs={"word_0": "active client", "meaning_0": "client.status = 'ACT'"},
        )
        assert "Bob proposed a definition on demo" in proposal.all_text()
        assert (
            "**active client**" in proposal.all_text()
            and "Sent to the analysts for review" in proposal.all_text()
        )
        (waiting,) = stored(tmp_path, "proposed")
        assert waiting.name == "active client"


# ---------------------------------------------------------------- a 👎 comment that states a rule


def test_a_thumbs_down_comment_that_states_a_rule_queues_a_proposal(serve, plan, tmp_path):
    with FakeConnector() as connector:
        served = serve(connector, ASKBASE_ENGINE__CLARIFY="off")
        place = chat(served, "hr")
        answer = say(served, connector, place, "How many clients are there?", BOB, answer=True)
        before = {m.id for m in connector.in_conversation(place["conversation"]["id"])}
        comment = "Wrong: 'active client' means client.status = 'ACT'"
        served.client.post(  # Teams' own 👎 under the answer, with what was wrong
            served.client.feedback(answer.id, "dislike", comment, place=place, user=BOB[0], name=BOB[1])
        )
        proposal = connector.card_in(
            place["conversation"]["id"],
            lambda m: m.id not in before and "comment states" in m.all_text(),
            timeout=30,
        )
        assert "Bob's comment states a rule" in proposal.all_text()
        assert (
            "**active client**" in proposal.all_text()
            and "Sent to the analysts for review" in proposal.all_text()
        )
        (waiting,) = stored(tmp_path, "proposed")
        assert (waiting.name, waiting.status) == ("active client", "proposed")
