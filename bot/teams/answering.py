"""A question in Teams, from the first sign of work to the answer card in the same conversation.

`start` runs in the request's turn: it shows "typing…" and queues the work; a burst waits its
turn on the answering queue (core/conversation/queue.py), in order, and is never turned away. The
work runs in a proactive turn of the same conversation (proactive.py) — in a personal chat with
Teams' informative updates naming each step, "queued — N ahead of you" first when a full round of
answers is ahead of it, elsewhere with "typing…" kept going — while the conversation service
(core/conversation/service.py) answers on a worker: the thread's database, else the place's
`db NAME` choice, else the default; the turn, and a clarifying question, stored before they show.
The card and what is kept of it are outcome_cards.py's."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

from microsoft_agents.activity import Activity, ActivityTypes, ConversationReference
from microsoft_agents.hosting.core import TurnContext
from microsoft_agents.hosting.core.app.typing_indicator import TypingIndicator, TypingOptions
from microsoft_agents.hosting.core.authorization import ClaimsIdentity

from bot.failures import INTERNAL, setup_problem
from bot.progress import stage_in_line
from bot.teams import clarify
from bot.teams.incoming import Incoming, Place
from bot.teams.outcome_cards import asker_is_analyst, keep_card, keep_message, message_key, outcome_card
from bot.teams.proactive import card_activity, reference_json
from bot.teams.runtime import TeamsRuntime
from bot.teams.streaming import InformativeUpdates
from core.answer import Outcome
from core.clarify.transcript import Transcript
from core.conversation import service

log = logging.getLogger("askbase.teams")

TYPING = TypingOptions(initial_delay_ms=0, interval_ms=3000)  # Teams shows "typing" for ~3 s


@dataclass(frozen=True)
class Question:
    """A question to answer in a conversation, and what it continues."""

    text: str
    incoming: Incoming
    reference: ConversationReference
    identity: ClaimsIdentity | None  # the request's caller (None: a later, unprompted post)
    base_url: str | None  # where download links point
    transcript: Transcript | None = None  # answers to clarifying questions so far
    conversation: tuple[str, str] | None = None  # (key, database) when continuing a known one
    claim: str | None = None  # the activity's claim (inflight.py), marked answered once the card is out


def database_for(runtime: TeamsRuntime, place: Place) -> str:
    """The thread's database, else the place's `db NAME` choice, else the default."""
    thread = place.conversation_key("") if place.threaded else None
    return runtime.conversations.database_for(thread, team=place.settings_team, place=place.channel)


def asked(runtime: TeamsRuntime, question: Question) -> service.Question:
    """The question as the conversation service takes it (its conversation, who asks, where)."""
    incoming, place = question.incoming, question.incoming.place
    key, name = question.conversation or ("", database_for(runtime, place))
    return service.Question(
        text=question.text,
        conversation=key or place.conversation_key(name),
        source="teams",
        principal=incoming.principal,  # the engine refuses (and audits) what it may not query
        place=service.Place(
            team=place.settings_team, channel=place.channel, address=reference_json(question.reference)
        ),
        user=incoming.user,
        database=name,
        transcript=question.transcript,
    )


async def start(runtime: TeamsRuntime, context: TurnContext, question: Question) -> bool:
    """In the request's turn: "typing…", then the answer later, in its turn (True)."""
    await context.send_activity(Activity(type=ActivityTypes.typing))
    if question.claim:  # typing shows: a process taking the question over answers it anew
        await runtime.book(runtime.claims.answering, question.claim)
    runtime.spawn(answer_later(runtime, question, stage_in_line(runtime.queue.position())))
    return True


async def answer_later(runtime: TeamsRuntime, question: Question, stage: str = "understand") -> None:
    """A proactive turn in the question's conversation: progress while the engine works (Teams'
    informative updates in a personal chat, "typing…" elsewhere), then the card."""

    async def work(context: TurnContext) -> None:
        incoming = question.incoming
        personal = incoming.place.kind == "personal"
        if personal:
            updates = InformativeUpdates(context, asyncio.get_running_loop())
            updates.show(stage)
            outcome, key = await runtime.answer_in_turn(answer, runtime, question, updates.show)
            await updates.settle()
        else:
            async with TypingIndicator(context, typing_options=TYPING):
                outcome, key = await runtime.answer_in_turn(answer, runtime, question, None)
        analyst = outcome.status == "error" and await asker_is_analyst(runtime, context, incoming)
        answered, channel = outcome.status == "answer", incoming.place.kind == "channel"
        content = outcome_card(
            runtime, outcome, question.base_url, incoming.principal, analyst=analyst, votes=channel
        )
        activity = card_activity(
            content,
            outcome.answer or outcome.question,
            ai_generated=answered and outcome.mode == "llm",
            feedback=answered and not channel,  # Teams' own 👍 / 👎 (chats; none in channels)
        )
        if personal:
            activity = updates.final(activity)
        if outcome.status != "clarify":  # kept before it shows: a press may come at once (private.py)
            await runtime.run(keep_card, runtime, outcome.trace.id, content)
        response = await context.send_activity(activity)
        if answered and response is not None and response.id:
            message = message_key(incoming.place.conversation_id, response.id)
            await runtime.run(keep_message, runtime, outcome.trace.id, message)
        if outcome.status == "clarify" and outcome.clarification is not None:
            if response and response.id:
                await clarify.shown(runtime, context, outcome.clarification.id, response.id)
            await clarify.sweep(runtime)  # as in Slack, every new question sweeps the expired ones
        log.info("trace %s: %s posted in %s", outcome.trace.id, outcome.status, key)

    try:
        await runtime.sender.within(question.reference, work, question.identity)
    except Exception:
        log.exception(
            "answering %r in %s failed", question.text[:80], question.incoming.place.conversation_id
        )
    finally:
        if question.claim:  # answered (or failed for good): redeliveries and recovery leave it alone
            await runtime.book(runtime.claims.finished, question.claim)


def answer(
    runtime: TeamsRuntime, question: Question, on_stage: Callable[[str], None] | None = None
) -> tuple[Outcome, str]:
    """Worker thread: the conversation service answers and stores the turn (and a clarifying
    question); (the outcome, its conversation). Never raises. `on_stage`: told each stage."""
    q = asked(runtime, question)
    outcome = runtime.conversations.ask(q, INTERNAL, on_stage=on_stage).outcome
    problem = setup_problem(outcome)
    if problem is not None:  # the admins' part, for the log only: the card never carries it
        log.warning("trace %s: for the bot's admins: %s", outcome.trace.id, problem.admin_note)
    return outcome, q.conversation
