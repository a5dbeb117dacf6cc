"""Clarifying questions through the real Slack app, in keyword mode (no LLM) on the demo database.

Signed requests go to the real Bolt app behind its real HTTP server; Slack is the fake Web API.
Everything asserted is what a person in Slack sees: the question with its buttons, the message
updated with who chose what, notes only they see, and the count for the reading they chose —
checked against SQL written by hand.
"""

from __future__ import annotations

import copy
import datetime as dt
import json

import pytest

from core.askbase import Askbase
from core.bench.fakes.slack_api import FakeSlack, Message
from core.llm import LLM
from core.settings import load_settings
from core.state import clarifications as store
from core.state.audit import entries_since
from tests.clarify_fixtures import (
    BY_CUSTOMER,
    BY_SUPPLIER,
    GOLD,
    LOCATED_ANSWER,
    LYON,
    nuclear_db,
    rows,
    script_paper_model,
    script_two_readings,
    shop_db,
)
from tests.clarify_fixtures import QUESTION as PAPER_QUESTION
from tests.slack_harness import RunningBot, hand
from tests.slack_requests import BOT_TOKEN, SIGNING_SECRET

CHANNEL = "C0001"
USER = "U0001"
SINGAPORE = "How many clients are in Singapore?"
CLIENTS_IN = "SELECT COUNT(*) FROM client JOIN location ON client.loc_id = location.id WHERE location.{column} = 'Singapore'"


@pytest.fixture
def bot(make_bot) -> RunningBot:
    """No OPENAI_API_KEY: keyword mode asks back on its own."""
    return make_bot(llm=False)


def clarification_in(slack: FakeSlack, channel: str, thread_ts: str) -> Message:
    """The question with its buttons, as it was first shown (later updates do not change it)."""
    message = slack.wait_for(
        lambda s: next((m for m in s.thread(channel, thread_ts) if "clarify_other" in m.action_ids()), None),
        timeout=20,
    )
    return copy.deepcopy(message)


def table_in(slack: FakeSlack, channel: str, thread_ts: str) -> list[list[str]]:
    """The answer's table, header first (a single value's sentence reads as a one-cell table)."""
    message = slack.wait_for(
        lambda s: next((m for m in s.thread(channel, thread_ts) if m.result()), None), timeout=20
    )
    return message.table() or [["value"], *message.result()]


def labels(message: Message) -> dict[str, str]:
    """Option button text → action_id."""
    out = {}
    for block in message.blocks:
        for e in block.get("elements", []) if block.get("type") == "actions" else []:
            if e["action_id"].startswith("clarify_option_"):
                out[e["text"]["text"]] = e["action_id"]
    return out


def click_option(bot: RunningBot, message: Message, word: str, thread_ts: str, user: str = USER):
    action_id = next(a for label, a in labels(message).items() if word in label)
    return bot.sender.click(
        action_id,
        message.button_value(action_id),
        channel=message.channel,
        message_ts=message.ts,
        thread_ts=thread_ts,
        user=user,
    )


def open_other(bot: RunningBot, slack: FakeSlack, question: Message, thread_ts: str) -> dict:
    """Press "Other…" on the question; the modal Slack was asked to open."""
    bot.sender.click(
        "clarify_other",
        question.button_value("clarify_other"),
        channel=CHANNEL,
        message_ts=question.ts,
        thread_ts=thread_ts,
    )
    return slack.wait_for(lambda s: s.calls_to("views.open"))[0].args["view"]


def submit_other(bot: RunningBot, modal: dict, words: str):
    values = {"answer": {"answer": {"type": "plain_text_input", "value": words}}}
    return bot.sender.view(
        "view_submission", "clarify_other", private_metadata=modal["private_metadata"], values=values
    )


def ephemeral_to(slack: FakeSlack, user: str) -> list[str]:
    return [
        c.args.get("text", "") for c in slack.calls_to("chat.postEphemeral") if c.args.get("user") == user
    ]


def settle(bot: RunningBot) -> None:
    """A sentinel question answered on another channel: whatever was queued before it has run."""
    _, ts = bot.sender.mention("how many clients are there?", channel="C0SENTINEL")
    table_in(bot.slack, "C0SENTINEL", ts)


def test_a_value_stored_in_two_columns_is_asked_back_with_one_button_per_reading(bot, slack, demo_var):
    _, ts = bot.sender.mention(SINGAPORE)
    question = clarification_in(slack, CHANNEL, ts)
    buttons = labels(question)
    assert len(buttons) == 2 and any("city" in b for b in buttons) and any("country" in b for b in buttons)
    assert question.action_ids()[-2:] == ["clarify_other", "clarify_details"]
    assert set(buttons) == {"the city of Singapore", "the country of Singapore"}  # in words, not SQL

    assert click_option(bot, question, "city", ts).status == 200
    assert table_in(slack, CHANNEL, ts)[1:] == [
        [str(n)] for (n,) in hand(demo_var, CLIENTS_IN.format(column="city"))
    ]
    shown = slack.messages[question.ts]
    assert "clarify_other" not in shown.action_ids()  # the buttons are gone
    assert f"<@{USER}> chose" in shown.all_text() and "city" in shown.all_text()


def test_two_date_columns_are_asked_back_and_the_chosen_column_is_counted(bot, slack, demo_var):
    _, ts = bot.sender.mention("How many clients in 2024?")
    question = clarification_in(slack, CHANNEL, ts)
    assert {"birth date", "signup date"} <= set(labels(question))
    click_option(bot, question, "signup", ts)
    want = hand(
        demo_var,
        "SELECT COUNT(*) FROM client WHERE signup_date >= '2024-01-01' AND signup_date < '2025-01-01'",
    )
    assert table_in(slack, CHANNEL, ts)[1:] == [[str(n)] for (n,) in want]


def test_other_opens_a_modal_whose_words_answer_the_question(bot, slack, demo_var):
    _, ts = bot.sender.mention(SINGAPORE)
    question = clarification_in(slack, CHANNEL, ts)
    modal = open_other(bot, slack, question, ts)
    assert modal["callback_id"] == "clarify_other"
    assert "Singapore" in str(modal["blocks"])
    response = submit_other(bot, modal, "I mean the country")
    assert response.status == 200
    assert table_in(slack, CHANNEL, ts)[1:] == [
        [str(n)] for (n,) in hand(demo_var, CLIENTS_IN.format(column="country"))
    ]
    slack.wait_for(lambda s: "I mean the country" in s.messages[question.ts].all_text())


def test_a_reply_in_the_thread_is_taken_as_the_answer(bot, slack, demo_var):
    _, ts = bot.sender.mention(SINGAPORE)
    question = clarification_in(slack, CHANNEL, ts)
    bot.sender.mention("the city, please", thread_ts=ts)  # a mention in the thread answers it
    assert table_in(slack, CHANNEL, ts)[1:] == [
        [str(n)] for (n,) in hand(demo_var, CLIENTS_IN.format(column="city"))
    ]
    slack.wait_for(lambda s: "the city, please" in s.messages[question.ts].all_text())


def test_a_click_after_a_restart_still_answers(make_bot, slack, demo_var):
    first = make_bot(llm=False)
    _, ts = first.sender.mention(SINGAPORE)
    question = clarification_in(slack, CHANNEL, ts)
    first.close()

    second = make_bot(llm=False)  # a new process: nothing but the state database survives
    click_option(second, question, "country", ts)
    assert table_in(slack, CHANNEL, ts)[1:] == [
        [str(n)] for (n,) in hand(demo_var, CLIENTS_IN.format(column="country"))
    ]


def test_only_the_asker_may_answer_and_others_are_told_privately(bot, slack, demo_var):
    _, ts = bot.sender.mention(SINGAPORE)
    question = clarification_in(slack, CHANNEL, ts)
    click_option(bot, question, "city", ts, user="U0OTHER")
    note = slack.wait_for(lambda s: ephemeral_to(s, "U0OTHER"))
    assert f"<@{USER}>" in note[0]
    assert "clarify_other" in slack.messages[question.ts].action_ids()  # still open

    click_option(bot, question, "city", ts)
    assert table_in(slack, CHANNEL, ts)[1:] == [
        [str(n)] for (n,) in hand(demo_var, CLIENTS_IN.format(column="city"))
    ]
    click_option(bot, question, "country", ts)  # a second click does not answer it again
    # waits for that note itself: another private note to the asker may be there before it
    slack.wait_for(lambda s: any("already answered" in n for n in ephemeral_to(s, USER)))
    settle(bot)
    assert sum(1 for m in slack.thread(CHANNEL, ts) if m.result()) == 1


def test_anyone_may_answer_when_the_setting_allows(make_bot, slack, demo_var):
    bot = make_bot(llm=False, slack_settings={"only_asker_answers": False})
    _, ts = bot.sender.mention(SINGAPORE)
    question = clarification_in(slack, CHANNEL, ts)
    click_option(bot, question, "city", ts, user="U0OTHER")
    assert table_in(slack, CHANNEL, ts)[1:] == [
        [str(n)] for (n,) in hand(demo_var, CLIENTS_IN.format(column="city"))
    ]
    assert "<@U0OTHER> chose" in slack.messages[question.ts].all_text()


def test_an_expired_question_says_so_and_answers_nothing(make_bot, slack, clock):
    bot = make_bot(llm=False, slack_settings={"clarification_ttl_s": 60})
    _, ts = bot.sender.mention(SINGAPORE)
    question = clarification_in(slack, CHANNEL, ts)
    clock.advance(61)
    click_option(bot, question, "city", ts)
    note = slack.wait_for(lambda s: ephemeral_to(s, USER))
    assert "expired" in note[0]
    shown = slack.messages[question.ts]
    assert "expired after 60 seconds" in shown.all_text() and "clarify_other" not in shown.action_ids()
    settle(bot)
    assert not any(m.result() for m in slack.thread(CHANNEL, ts))
    assert store.asked_in(bot.state, f"slack:T0001:{CHANNEL}:{ts}")[0].status == store.EXPIRED


@pytest.mark.parametrize(
    ("ttl_s", "words"),
    [(1, "1 second"), (60, "60 seconds"), (119, "119 seconds"), (120, "2 minutes"), (3600, "60 minutes")],
)
def test_the_expiry_note_says_how_long_the_question_stayed_open_in_plain_words(ttl_s, words):
    assert store.open_for(ttl_s) == words


def test_a_new_question_sweeps_expired_ones_from_other_threads(make_bot, slack, clock):
    bot = make_bot(llm=False, slack_settings={"clarification_ttl_s": 60})
    _, first = bot.sender.mention(SINGAPORE)
    old = clarification_in(slack, CHANNEL, first)
    clock.advance(61)
    _, second = bot.sender.mention("How many clients in 2024?", channel="C0002")
    clarification_in(slack, "C0002", second)
    assert (
        "expired"
        in slack.wait_for(
            lambda s: "expired" in s.messages[old.ts].all_text() and s.messages[old.ts]
        ).all_text()
    )


def asks_back(args: dict) -> bool:
    """A post of a clarifying question (its "Other…" button)."""
    return "clarify_other" in json.dumps(args.get("blocks") or [])


@pytest.mark.parametrize("closer", ["reply", "other", "expiry"])
def test_a_question_closed_before_the_bot_knows_its_message_still_shows_how_it_closed(
    make_bot, slack, clock, demo_var, closer
):
    """The race: Slack shows the question as soon as it is posted, but the bot learns the message's
    ts only from the post's response. An answer typed in the thread, the "Other…" modal or the
    expiry sweep in that gap closed the question with no message to mark, and its buttons stayed.
    The fake Slack holds the post's response back until the question is closed, every time."""
    bot = make_bot(llm=False, slack_settings={"clarification_ttl_s": 60})
    held = slack.hold("chat.postMessage", asks_back)
    _, ts = bot.sender.mention(SINGAPORE)
    assert held.arrived.wait(20), "the question was never posted"
    question = clarification_in(slack, CHANNEL, ts)  # people see it and its buttons
    (pending,) = store.asked_in(bot.state, f"slack:T0001:{CHANNEL}:{ts}")
    assert pending.message_ts is None  # the bot does not know it yet

    if closer == "reply":
        bot.sender.mention("the city, please", thread_ts=ts)
        want, shown = CLIENTS_IN.format(column="city"), "the city, please"
    elif closer == "other":
        submit_other(bot, open_other(bot, slack, question, ts), "I mean the country")
        want, shown = CLIENTS_IN.format(column="country"), "I mean the country"
    else:
        clock.advance(61)
        _, second = bot.sender.mention("How many clients in 2024?", channel="C0002")
        clarification_in(slack, "C0002", second)  # asked after sweeping the expired ones
        want, shown = None, "expired"
    if want is not None:  # answered: the count for the reading chosen comes
        assert table_in(slack, CHANNEL, ts)[1:] == [[str(n)] for (n,) in hand(demo_var, want)]
    assert store.get(bot.state, pending.id).status != store.OPEN
    assert "clarify_other" in slack.messages[question.ts].action_ids()  # nobody could mark it yet

    held.release()  # the bot learns where its question is
    slack.wait_for(lambda s: shown in s.messages[question.ts].all_text())
    assert "clarify_other" not in slack.messages[question.ts].action_ids()


def test_two_open_questions_in_two_threads_never_mix(bot, slack, demo_var):
    _, place = bot.sender.mention(SINGAPORE)
    _, year = bot.sender.mention("How many clients in 2024?", channel="C0002")
    place_q = clarification_in(slack, CHANNEL, place)
    year_q = clarification_in(slack, "C0002", year)
    assert place_q.button_value("clarify_option_0") != year_q.button_value("clarify_option_0")

    click_option(bot, year_q, "signup", year)
    bot.sender.mention("country", thread_ts=place)
    signups = hand(
        demo_var,
        "SELECT COUNT(*) FROM client WHERE signup_date >= '2024-01-01' AND signup_date < '2025-01-01'",
    )
    assert table_in(slack, "C0002", year)[1:] == [[str(n)] for (n,) in signups]
    assert table_in(slack, CHANNEL, place)[1:] == [
        [str(n)] for (n,) in hand(demo_var, CLIENTS_IN.format(column="country"))
    ]
    # a button clicked with another channel's id is refused, not applied there
    _, again = bot.sender.mention(SINGAPORE)
    other = clarification_in(slack, CHANNEL, again)
    action_id = next(iter(labels(other).values()))
    bot.sender.click(
        action_id, other.button_value(action_id), channel="C0002", message_ts=other.ts, thread_ts=again
    )
    slack.wait_for(lambda s: any("no longer" in n for n in ephemeral_to(s, USER)))
    assert "clarify_other" in slack.messages[other.ts].action_ids()


# ---------------------------------------------------------------- Example 6.1 through Slack, with 👎


def test_the_papers_running_example_in_slack_two_thumbs_down_two_questions(
    tmp_path, state_url, slack, fake_llm, llm_settings
):
    script_paper_model(fake_llm)
    path = nuclear_db(tmp_path / "nuclear.sqlite")
    settings = load_settings(
        var_dir=str(tmp_path / "var"),
        state_url=state_url,
        default_db="nuclear",
        databases={"nuclear": {"url": f"sqlite:///{path}"}},
        slack={"bot_token": BOT_TOKEN, "signing_secret": SIGNING_SECRET, "api_base_url": slack.base_url},
        engine={"fallback_to_keyword": False},
    )
    bot = RunningBot(Askbase(settings, llm=LLM(llm_settings)), slack)
    try:
        _, ts = bot.sender.mention(PAPER_QUESTION)
        assert answers_in(slack, ts, 1)[-1].table()[1:] == [["United States", "Vallecitos"]]

        first = thumbs_down_then_question(bot, slack, ts, 1)
        assert "located" in first.all_text()
        click_option(bot, first, "Latitude", ts)
        coordinates = [
            [str(v) for v in row]
            for row in rows(path, GOLD.replace("ConstructionStartAt", "OperationalFrom"))
        ]
        assert answers_in(slack, ts, 2)[-1].table()[1:] == coordinates

        second = thumbs_down_then_question(bot, slack, ts, 2)
        assert "first" in second.all_text() and "located" not in second.all_text()
        click_option(bot, second, "construction", ts)
        assert answers_in(slack, ts, 3)[-1].table()[1:] == [[str(v) for v in row] for row in rows(path, GOLD)]

        prompt = fake_llm.calls("clarify")[-1].user  # round 2 saw both rejected queries and answer 1
        assert prompt.count("ORDER BY") >= 2 and f"answered: {LOCATED_ANSWER}" in prompt
        asked = store.asked_in(bot.state, f"slack:T0001:{CHANNEL}:{ts}")
        assert [p.status for p in asked] == [store.ANSWERED, store.ANSWERED]
        # each 👎 round went through the engine: audited as the asker, in the thread's channel
        rounds = [
            (e["source"], e["user"], e["channel"], e["trace_id"])
            for e in entries_since(bot.state, dt.timedelta(hours=1))
            if e["status"] == "clarify"
        ]
        assert rounds == [("slack", USER, CHANNEL, p.trace_id) for p in asked]
    finally:
        bot.close()


def answers_in(slack: FakeSlack, thread_ts: str, count: int) -> list[Message]:
    return slack.wait_for(
        lambda s: len(found := [m for m in s.thread(CHANNEL, thread_ts) if m.table()]) >= count and found,
        timeout=20,
    )


def thumbs_down_then_question(bot: RunningBot, slack: FakeSlack, thread_ts: str, n: int) -> Message:
    """👎 on the newest answer, close the 'what was wrong' form, and wait for question n."""
    answer = answers_in(slack, thread_ts, n)[-1]
    bot.sender.click(
        "feedback",
        answer.feedback_values()["negative"],
        channel=CHANNEL,
        message_ts=answer.ts,
        thread_ts=thread_ts,
        action_type="feedback_buttons",
    )
    form = slack.wait_for(lambda s: len(s.calls_to("views.open")) >= n and s.calls_to("views.open"))[-1]
    bot.sender.view("view_closed", "feedback_down", private_metadata=form.args["view"]["private_metadata"])
    question = slack.wait_for(
        lambda s: (
            len(found := [m for m in s.thread(CHANNEL, thread_ts) if "clarify_other" in m.action_ids()]) >= 1
            and found
        )
    )
    return copy.deepcopy(question[-1])


def test_a_question_with_two_ambiguities_asks_twice_in_its_thread_then_answers(bot, slack, demo_var):
    _, ts = bot.sender.mention("How many clients in Hong Kong in 2024?")
    first = clarification_in(slack, CHANNEL, ts)
    assert "2024" in first.all_text()
    click_option(bot, first, "signup", ts)
    second = slack.wait_for(
        lambda s: next(
            (m for m in s.thread(CHANNEL, ts) if m.ts != first.ts and "clarify_other" in m.action_ids()), None
        ),
        timeout=20,
    )
    assert "Hong Kong" in second.all_text() and "2024" not in second.all_text()
    click_option(bot, copy.deepcopy(second), "city", ts)
    want = hand(
        demo_var,
        "SELECT COUNT(*) FROM client JOIN location ON client.loc_id = location.id "
        "WHERE location.city = 'Hong Kong' AND signup_date >= '2024-01-01' AND signup_date < '2025-01-01'",
    )
    assert table_in(slack, CHANNEL, ts)[1:] == [[str(n)] for (n,) in want]
    assert [p.status for p in store.asked_in(bot.state, f"slack:T0001:{CHANNEL}:{ts}")] == ["answered"] * 2


# ---------------------------------------------------------------- LLM mode: two readings, asked after writing


def test_two_readings_that_return_different_rows_become_buttons_and_a_click_runs_that_reading(
    tmp_path, make_bot, slack, fake_llm
):
    """The writer's two candidates disagree and the judge calls it a real ambiguity: the person
    gets one button per reading with what it returns; clicking one answers with that reading's
    query, and no new SQL is written."""
    script_two_readings(fake_llm)
    path = shop_db(tmp_path / "shop.sqlite")
    bot = make_bot(default_db="shop", databases={"shop": {"url": f"sqlite:///{path}"}})
    try:
        _, ts = bot.sender.mention(LYON)
        question = clarification_in(slack, CHANNEL, ts)
        suppliers = rows(path, BY_SUPPLIER)[0][0]
        customers = rows(path, BY_CUSTOMER)[0][0]
        assert "whose city should be Lyon" in question.all_text()
        assert set(labels(question)) == {
            f"the customer's city → {customers}",
            f"the supplier's city → {suppliers}",
        }
        calls = len(fake_llm.requests)
        click_option(bot, question, "supplier", ts)
        assert table_in(slack, CHANNEL, ts)[1:] == [[str(suppliers)]]
        assert len(fake_llm.requests) == calls  # the chosen reading's query ran: nothing new was written
        assert f"<@{USER}> chose" in slack.messages[question.ts].all_text()
    finally:
        bot.close()
