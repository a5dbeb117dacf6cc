"""Clarifying questions in Teams, as `python -m bot serve --teams` runs them: a card whose question
closed before the adapter knew the card's id still shows how it closed, and an open question
expires like Slack's — the sweep updates its card — while each chat sweeps only its own.

Activities go to the real `/api/messages`; the fake Bot Connector records (and can hold back) the
cards the adapter posts. Keyword mode, on a small shop database where "Lyon" is both a customer's
and a supplier's city.
"""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from core.answer import Clarification, Option
from core.bench.fakes.bot_connector import Call, FakeConnector, Posted
from core.state import clarifications as store
from core.state import open_state
from tests.clarify_fixtures import shop_db
from tests.teams_harness import TeamsServed, teams_env

QUESTION = "How many orders from Lyon?"


def shop_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    db = shop_db(tmp_path / "shop.sqlite")
    config = tmp_path / "askbase.yaml"
    config.write_text(f"databases:\n  shop:\n    url: sqlite:///{db}\n")
    return {
        **teams_env(tmp_path, tmp_path / "var"),
        "ASKBASE_TEAMS__ALLOW_ANONYMOUS": "true",
        "ASKBASE_CONFIG": str(config),
        "ASKBASE_DEFAULT_DB": "shop",
        **extra,
    }


def asks_back(call: Call) -> bool:
    """The post of a clarifying question's card (it has "Other…")."""
    return call.method == "POST" and Posted("", call.conversation, call.body).action("Other…") is not None


def pending_in(tmp_path: Path) -> list[store.Pending]:
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'state.sqlite'}")
    try:
        with engine.connect() as conn:
            ids = conn.execute(sa.text("SELECT id FROM clarifications ORDER BY created_at")).scalars().all()
        return [p for p in (store.get(engine, i) for i in ids) if p is not None]
    finally:
        engine.dispose()


def test_a_question_answered_before_its_card_was_taken_still_shows_the_answer_on_the_card(tmp_path):
    """The race Slack had: the card's id comes back from Teams only after the card is posted, and
    the asker may answer (typing it) before that. The answer closes the question with no card to
    mark; the poster, noting the id, reads the question's status in the same transaction and
    marks the card itself. The fake connector holds the card's post until the answer is out."""
    with FakeConnector() as connector:
        connector.hold = asks_back
        served = TeamsServed(shop_env(tmp_path), tmp_path, connector)
        try:
            place = served.client.place("groupChat")
            asked = served.client.activity(QUESTION, place=place, mention=True)
            chat = asked["conversation"]["id"]
            served.client.post(asked)
            connector.wait_for(lambda c: c.held, timeout=30)  # Teams has the card, the bot no id yet
            (pending,) = pending_in(tmp_path)
            assert pending.status == store.OPEN and pending.message_ts is None
            supplier = next(o.label for o in pending.clarification.options if "supplier" in o.label)

            served.client.post(served.client.activity(supplier, place=place, mention=True))
            answer = connector.card_in(chat, lambda m: m.is_answer, timeout=30)
            assert answer.sentence()  # the reading chosen was answered
            assert pending_in(tmp_path)[0].status == store.ANSWERED

            connector.release()  # the card's post returns: now the bot knows its id
            card = connector.card_in(chat, lambda m: m.action("Other…") is not None or m.updates, timeout=30)
            shown = connector.wait_for(
                lambda c: c.messages[card.id].updates and c.messages[card.id], timeout=15
            )
            assert "✅ Answered: **suppliers in Lyon**" in shown.all_text()  # the reading in words
            assert shown.submits() == [] and shown.action("Other…") is None  # no buttons left
        finally:
            served.stop()


def test_an_open_question_expires_and_its_card_says_so_without_anyone_coming_back(tmp_path):
    """Like Slack's, an open question expires after `teams.clarification_ttl_s`; the sweep (every
    half lease, and after every new question) marks it expired and updates its card through the
    conversation reference stored with it. A press afterwards answers nothing."""
    env = shop_env(tmp_path, ASKBASE_TEAMS__CLARIFICATION_TTL_S="1", ASKBASE_TEAMS__CLAIM_LEASE_S="1")
    with FakeConnector() as connector:
        served = TeamsServed(env, tmp_path, connector)
        try:
            place = served.client.place("groupChat")
            asked = served.client.activity(QUESTION, place=place, mention=True)
            chat = asked["conversation"]["id"]
            served.client.post(asked)
            card = connector.card_in(chat, lambda m: m.action("Other…") is not None, timeout=30)
            option = next(a for a in card.submits() if a["data"].get("askbase") == "clarify")

            shown = connector.wait_for(
                lambda c: "expired" in c.messages[card.id].all_text() and c.messages[card.id], timeout=20
            )
            assert "⏰ This question expired after 1 second without" in shown.all_text()
            assert shown.submits() == [] and shown.updates == 1
            assert pending_in(tmp_path)[0].status == store.EXPIRED

            press = served.client.activity(None, place=place, value=option["data"], reply_to=card.id)
            served.client.post(press)
            connector.card_in(chat, lambda m: "expired after" in m.all_text() and m.id != card.id, timeout=15)
            assert not [m for m in connector.in_conversation(chat) if m.is_answer]
        finally:
            served.stop()


def test_each_chat_sweeps_only_its_own_questions(tmp_path, clock):
    """A Slack process cannot update a Teams card (nor the other way round): the sweep of one
    chat expires only the questions of its conversations, and each question once."""
    engine = open_state(f"sqlite:///{tmp_path / 'state.sqlite'}")
    try:
        for key in ("slack:T1:C1:1700000000.000100", "teams:19:chat@thread.v2#shop"):
            store.record(
                engine,
                Clarification("Which city?", (Option("customers", "a"), Option("suppliers", "b"))),
                question=QUESTION,
                database="shop",
                conversation_id=key,
                ttl_s=60,
            )
        clock.advance(61)
        slack = store.expire_due(engine, "slack:")
        assert [p.conversation_id for p in slack] == ["slack:T1:C1:1700000000.000100"]
        assert slack[0].status == store.EXPIRED
        assert [p.conversation_id for p in store.due(engine)] == ["teams:19:chat@thread.v2#shop"]
        assert store.expire_due(engine, "slack:") == []  # once
        (teams,) = store.expire_due(engine, "teams:")
        assert teams.conversation_id.startswith("teams:") and store.due(engine) == []
    finally:
        engine.dispose()
