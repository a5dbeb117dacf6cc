"""Answers in Teams at Slack's level, through the Teams web application (tests/teams_harness.py
`TeamsRunning`: `create_server`, its real `/api/messages` and `/files/…`, in this process so the
test moves its clock), the fake Bot Connector and the fake model.

- An answer carries Teams' "AI generated" label (its SQL was written by the LLM) and Teams' own
  feedback buttons; in a personal chat the steps stream as informative updates first.
- A chart stays visible: a small one inside the card, a larger one behind a link that still
  loads when the message is a day old (a CSV link, handed to one person, expires).
- Details, CSV and 👍 / 👎 are answered with a card for the presser alone: nothing is posted
  to the channel for them.
- Teams' feedback buttons are votes like the card's: only an analyst's 👍 makes an example.
- With resource-specific consent, replies in a channel thread reach Askbase: the asker's are
  follow-ups, anyone else's and unrelated channel talk are left alone.
- Sentences read the same on every client: no Markdown backslashes in them.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from core.bench.fakes.bot_connector import FakeConnector, Posted
from core.llm import LLM
from core.settings import load_settings
from core.state import feedback
from core.state.conversations import turn_by_trace
from tests.clock import Clock
from tests.slack_harness import hand
from tests.teams_harness import TeamsRunning, fetch

ALICE = "00000000-0000-4000-8000-00000000a11c"
BOB = ("bbbbbbbb-0000-4000-8000-0000000000b2", "Bob")
ANA = ("aaaaaaaa-0000-4000-8000-0000000000a1", "Ana")  # an analyst in the tests that name one
PER_SEGMENT = "SELECT segment, COUNT(*) AS clients FROM client GROUP BY segment ORDER BY clients DESC"
PER_MONTH = (
    "SELECT strftime('%Y-%m-01', paid_on) AS month, COUNT(*) AS payments FROM payment "
    "GROUP BY month ORDER BY month"
)
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def teams(demo_var, state_url, llm_settings, plan):
    """Start the Teams application on the demo database against `connector`, the fake model
    answering (keyword mode with llm=False); `extra` are settings."""
    running: list[TeamsRunning] = []

    def start(
        connector: FakeConnector, *, llm: bool = True, clock: Clock | None = None, **extra: Any
    ) -> TeamsRunning:
        def settings_for(base: str):
            return load_settings(
                var_dir=str(demo_var),
                state_url=state_url,
                teams={
                    "allow_anonymous": True,
                    "service_url_hosts": [connector.service_url],
                    "public_url": base,
                },
                engine={"fallback_to_keyword": False} if llm else {},
                **extra,
            )

        app = TeamsRunning(settings_for, connector, llm=LLM(llm_settings) if llm else None, clock=clock)
        running.append(app)
        return app

    yield start
    for app in running:
        app.close()


def ask(app: TeamsRunning, connector: FakeConnector, text: str, place: dict, **kw: Any) -> Posted:
    before = {m.id for m in connector.in_conversation(place["conversation"]["id"])}
    status, _ = app.client.post(app.client.activity(text, place=place, **kw))
    assert status == 202
    return connector.card_in(
        place["conversation"]["id"], lambda m: m.id not in before and m.is_answer, timeout=20
    )


def press(app: TeamsRunning, card: Posted, title: str, place: dict, **kw: Any) -> dict[str, Any]:
    """Press an Action.Execute button: the card Teams would show the presser (the invoke's response)."""
    action = card.action(title)
    assert action is not None and action["type"] == "Action.Execute", card.actions()
    inputs = kw.pop("inputs", None)
    status, body = app.client.post(app.client.execute(action, inputs, place=place, reply_to=card.id, **kw))
    assert status == 200
    response = json.loads(body)
    assert response["type"] == "application/vnd.microsoft.card.adaptive", response
    return response["value"]


def texts(content: dict[str, Any]) -> str:
    return Posted("", "", {"attachments": [{"contentType": "application/vnd.microsoft.card.adaptive",
                                           "content": content}]}).all_text()  # fmt: skip


def open_url(content: dict[str, Any]) -> str:
    """The link of the card's Action.OpenUrl (a download)."""
    card = Posted("", "", {"attachments": [{"contentType": "application/vnd.microsoft.card.adaptive",
                                           "content": content}]})  # fmt: skip
    return next(a["url"] for a in card.actions() if a.get("type") == "Action.OpenUrl")


def image_of(card: Posted) -> str:
    return next(
        node["url"]
        for content in card.cards
        for node in json.loads(json.dumps(content), object_hook=lambda d: d).get("body", [])
        if isinstance(node, dict) and node.get("type") == "Image"
    )


def test_an_answer_carries_the_ai_label_and_the_feedback_loop_and_streams_its_steps(teams, plan, demo_var):
    with FakeConnector() as connector:
        app = teams(connector)
        plan.sql = PER_SEGMENT
        place = app.client.place()  # a personal chat
        answer = ask(app, connector, "How many clients are there per segment?", place)
        assert answer.ai_generated and answer.feedback_loop
        assert answer.table()[1:] == [list(r) for r in hand(demo_var, PER_SEGMENT)]
        # in a chat Teams shows its own 👍 / 👎: the card has none; Details and CSV are private
        assert [a["title"] for a in answer.card["actions"]] == ["Show SQL", "Details", "CSV", "Schedule"]
        # the steps came as informative updates of one stream, which the answer closes
        updates = [c.body for c in connector.typing_in(place["conversation"]["id"]) if c.body.get("entities")]
        infos = [next(e for e in u["entities"] if e["type"] == "streaminfo") for u in updates]
        assert [i["streamType"] for i in infos] == ["informative"] * len(infos) and len(infos) >= 3
        assert [i["streamSequence"] for i in infos] == list(range(1, len(infos) + 1))
        assert any("Writing SQL" in u["text"] for u in updates)
        final = answer.stream()
        assert final is not None and final["streamType"] == "final" and final["streamId"]
        # a small chart sits in the card itself: it shows for as long as the message does
        url = image_of(answer)
        assert url.startswith("data:image/png;base64,")
        assert base64.b64decode(url.split(",", 1)[1]).startswith(PNG)


def test_a_keyword_answer_is_not_labelled_ai_generated(teams):
    with FakeConnector() as connector:
        app = teams(connector, llm=False)
        answer = ask(app, connector, "How many clients are there?", app.client.place())
        assert not answer.ai_generated and answer.feedback_loop


def test_a_chart_link_still_loads_when_its_message_is_a_day_old_and_a_csv_link_expires(teams, plan):
    clock = Clock()
    with FakeConnector() as connector:
        app = teams(connector, clock=clock)
        plan.sql = PER_MONTH  # a long time series: its chart is too large for the card
        place = app.client.place()
        answer = ask(app, connector, "How many payments per month?", place)
        chart = image_of(answer)
        assert chart.startswith(app.base + "/files/")
        link = open_url(press(app, answer, "CSV", place))
        clock.advance(86_400 + 60)  # a day later
        status, headers, body = fetch(chart)
        assert status == 200 and headers["Content-Type"] == "image/png" and body.startswith(PNG)
        status, _, said = fetch(link)
        assert status == 410 and b"expired" in said


def test_details_csv_and_votes_in_a_channel_go_to_the_presser_alone(teams, plan):
    with FakeConnector() as connector:
        app = teams(connector)
        plan.sql = PER_SEGMENT
        place = app.client.place("channel")
        conversation = place["conversation"]["id"]
        answer = ask(app, connector, "How many clients per segment?", place, mention=True)
        assert answer.feedback_loop is False  # no Teams feedback buttons in channels: the card's own
        assert {a["title"] for a in answer.executes()} >= {"Details", "CSV", "👍", "Send"}
        posted = {m.id for m in connector.in_conversation(conversation)}

        details = press(app, answer, "Details", place, user=BOB[0], name=BOB[1])
        said = texts(details)
        assert "Only you see this part." in said and "generate" in said and "execute" in said
        assert answer.sentence() in said  # the answer, as posted, stays above their part

        csv_card = press(app, answer, "CSV", place, user=BOB[0], name=BOB[1])
        link = open_url(csv_card)
        status, _, body = fetch(link)
        assert status == 200 and body.decode().splitlines()[0] == "segment,clients"

        voted = press(app, answer, "👍", place, user=BOB[0], name=BOB[1])
        assert "An analyst decides" in texts(voted)
        down = press(app, answer, "Send", place, user=BOB[0], name=BOB[1], inputs={"comment": "wrong"})
        assert "noted that this answer is wrong" in texts(down)
        # nothing of it reached the channel
        assert {m.id for m in connector.in_conversation(conversation)} == posted
        assert [p for p in connector.calls if p.conversation == conversation and p.method == "POST"
                and p.body.get("type") == "message"][-1].body == answer.activity  # fmt: skip


def test_teams_feedback_buttons_are_votes_and_only_an_analysts_like_teaches(teams, plan):
    with FakeConnector() as connector:
        app = teams(connector, verified={"analysts": {"users": [ANA[0]]}})
        place = app.client.place("groupChat")
        answer = ask(app, connector, "How many clients are there?", place, mention=True)
        trace_id = next(a["data"]["trace"] for a in answer.executes() if a["title"] == "Details")
        for who, reaction, text in ((BOB, "like", ""), (BOB, "dislike", "only active ones")):
            status, _ = app.client.post(
                app.client.feedback(answer.id, reaction, text, place=place, user=who[0], name=who[1])
            )
            assert status == 200
        votes = [(v["verdict"], v["user"], v["comment"]) for v in feedback.feedback_for(app.state, trace_id)]
        assert votes == [("up", BOB[0], ""), ("down", BOB[0], "only active ones")]
        assert feedback.examples_for(app.state, "demo") == []  # Bob is no analyst

        # the analysts see the vote (`definitions`) and may make it an example; Bob may not
        before = {m.id for m in connector.in_conversation(place["conversation"]["id"])}
        app.client.post(
            app.client.activity("definitions", place=place, mention=True, user=ANA[0], name=ANA[1])
        )
        listed = connector.card_in(place["conversation"]["id"], lambda m: m.id not in before, timeout=20)
        assert "Votes to review" in listed.all_text() and listed.action("Use as example") is not None
        app.client.post(
            app.client.activity("definitions", place=place, mention=True, user=BOB[0], name=BOB[1])
        )
        theirs = connector.card_in(
            place["conversation"]["id"], lambda m: m.id not in before and m.id != listed.id, timeout=20
        )
        assert "Votes to review" not in theirs.all_text()

        app.client.post(app.client.feedback(answer.id, "like", place=place, user=ANA[0], name=ANA[1]))
        turn = turn_by_trace(app.state, trace_id)
        assert turn is not None
        assert [(e.question, e.sql) for e in feedback.examples_for(app.state, "demo")] == [
            ("How many clients are there?", turn.sql)
        ]


def test_replies_in_a_channel_thread_reach_askbase_and_only_the_askers_are_answered(teams, plan):
    """Resource-specific consent: Teams delivers the thread's replies without a mention."""
    with FakeConnector() as connector:
        app = teams(connector)
        place = app.client.place("channel")
        conversation = place["conversation"]["id"]
        ask(app, connector, "How many clients are there?", place, mention=True)

        plan.sql = PER_SEGMENT
        follow_up = ask(app, connector, "and per segment?", place)  # the asker, no mention
        assert len(follow_up.table()) > 1

        before = len(connector.in_conversation(conversation))
        calls = len(connector.calls)
        app.client.post(app.client.activity("I think that's wrong", place=place, user=BOB[0], name=BOB[1]))
        other = app.client.place("channel")  # a new post in the channel, no mention: not for Askbase
        app.client.post(app.client.activity("lunch anyone?", place=other))
        sentinel = app.client.place("channel")
        ask(app, connector, "How many clients are there?", sentinel, mention=True)  # handled after them
        assert len(connector.in_conversation(conversation)) == before
        assert not [
            c
            for c in connector.calls[calls:]
            if c.conversation in (conversation, other["conversation"]["id"])
        ]


def test_sentences_read_the_same_on_every_client_without_backslashes(teams, plan):
    with FakeConnector() as connector:
        app = teams(connector)
        plan.sql = PER_SEGMENT
        answer = ask(app, connector, "How many clients per segment?", app.client.place())
        assert "(" in answer.sentence() and "\\" not in answer.sentence()
        assert not [t for t in answer.texts() if "\\(" in t or "\\_" in t]
