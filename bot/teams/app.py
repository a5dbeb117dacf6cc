"""The SDK's AgentApplication for Askbase: every activity Teams sends, routed to its handler.

A message is, in order: a press on one of our cards (`value` carries `askbase`), a command
(`help`, `db`, `db NAME`, `verified`, `schedules`, `schedule WHEN … QUESTION`, `definitions`,
`define WORDS as MEANING`: teaching.py), an answer to the open
clarifying question of its conversation (typed by the asker), or a question. A card press may
also come as an `adaptiveCard/action` invoke (Action.Execute); Details, CSV, 👍 and 👎 are
answered in the request with a card only the presser sees (private.py), as are Teams' own
feedback buttons (`message/submitAction`).

With resource-specific consent (the manifest's `ChannelMessage.Read.Group`, `ChatMessage.Read.Chat`)
Teams delivers every message of a channel or group chat Askbase is in, not only those that
mention it. Such a message is handled only when it continues a conversation of its author: a
reply in a channel thread they started by asking, or the typed answer to the clarifying question
waiting for them there or in the group chat. Anything else is left alone — not claimed, stored,
answered or logged (`continues`).

Each activity is answered once and none is lost: its id is claimed in the state database first,
with a lease, the way Slack questions are (core/conversation/claims.py, bot/teams/inflight.py) — a message as
the server acknowledges it (`inflight.ACKED` says how that went), an invoke by its own turn. A
redelivery — Teams retries a request it thinks timed out — and a second web process behind the
load balancer leave it alone while it is answered or being answered; if the process answering it
dies, the redelivery, or any process's recovery sweep, takes it over and answers it once.
"""

from __future__ import annotations

import logging
from contextvars import ContextVar
from typing import Any

from microsoft_agents.activity import Activity, ActivityTypes, InvokeResponse
from microsoft_agents.hosting.core import AgentApplication, Connections, MemoryStorage, TurnContext, TurnState

from bot.teams import actions, cards, private, schedules, teaching, verified
from bot.teams.actions import say
from bot.teams.answering import Question, database_for, start
from bot.teams.incoming import Incoming, read
from bot.teams.inflight import ACKED, CLAIMED, claim_key, in_claim
from bot.teams.proactive import card_activity
from bot.teams.runtime import TeamsRuntime
from core.access import usable_databases
from core.schedules import parse
from core.teaching import chat_teaching

log = logging.getLogger("askbase.teams")

# The public address of the request being handled (server.py sets it): download links point here
# when `teams.public_url` is not set.
REQUEST_BASE: ContextVar[str | None] = ContextVar("askbase_teams_request_base", default=None)

HELP = (
    "**Ask me about your data in plain English.**\n\n"
    "- In a chat with me, just ask; in a channel or group chat, mention me: @Askbase how many clients are there?\n"
    '- Follow up ("and only in Europe?") by replying in the thread you started in a channel, or in our chat; '
    "in a group chat, mention me again. To answer a question I asked back, just reply.\n"
    "- Under each answer: Show SQL, Details (every step I took) and CSV — shown to you alone — "
    "👍 when it is right (an analyst's teaches me the query), 👎 to tell me it is not, Schedule to get "
    "it again on a schedule.\n"
    "- db lists the databases this place may use; db NAME picks one.\n"
    "- schedule every weekday at 9:00 QUESTION posts fresh results on time; schedules lists this place's.\n"
    "- ✅ marks an answer given from a query an analyst verified; verified lists them (analysts: ✅ Verify "
    "on an answer, Unverify in the list).\n"
    "- define active client as status = 'ACT' teaches me what words mean; an analyst approves it "
    "(Correct this under an answer's assumption does the same). definitions lists the proposals "
    "waiting for analysts and the readings you asked me to remember."
)


def base_url(runtime: TeamsRuntime) -> str | None:
    return runtime.base_url or REQUEST_BASE.get()


async def on_press(
    runtime: TeamsRuntime, context: TurnContext, incoming: Incoming, value: dict[str, Any]
) -> None:
    """A button of one of our cards (its data, plus the card's inputs)."""
    verb = str(value.get(cards.ACTION) or "")
    trace_id = str(value.get("trace") or "")
    url = base_url(runtime)
    if verb == "details":
        await actions.on_details(runtime, context, trace_id)
    elif verb == "csv":
        await actions.on_csv(runtime, context, incoming, trace_id, url)
    elif verb == "up":  # an older card's Action.Submit (new cards answer it privately: private.py)
        who = await verified.principal_for(runtime, context, incoming)
        _, note = await runtime.run(runtime.conversations.vote_up, trace_id, who)
        await say(context, note)
    elif verb == "down":
        await actions.on_thumbs_down(
            runtime, context, incoming, trace_id, str(value.get("comment") or ""), url
        )
    elif verb == "clarify":
        await actions.on_clarification(runtime, context, incoming, value, url)
    elif verb == "clarify_other":
        await actions.on_clarification(
            runtime, context, incoming, value, url, own_words=str(value.get("answer") or "")
        )
    elif verb == "verify":
        await verified.on_verify(runtime, context, incoming, trace_id)
    elif verb == "unverify":
        await verified.on_unverify(runtime, context, incoming, _number(value.get("q")))
    elif verb.startswith("teach_"):
        await teaching.on_press(runtime, context, incoming, verb, value)
    elif verb == "retry":
        await retry(runtime, context, incoming, trace_id)
    elif verb == "schedule":
        await schedules.on_form(runtime, context, incoming, value)
    elif verb in ("schedule_pause", "schedule_resume", "schedule_delete"):
        await schedules.on_change(runtime, context, incoming, verb, value)
    else:
        log.info("unknown card action %r", verb)


def _number(value: Any) -> int | None:
    try:
        return int(str(value))
    except ValueError:
        return None


async def retry(runtime: TeamsRuntime, context: TurnContext, incoming: Incoming, trace_id: str) -> None:
    turn = await runtime.run(runtime.conversations.turn, trace_id)
    if turn is None:
        await say(context, "I no longer have this question. Please ask it again.")
        return
    await start(runtime, context, question_of(runtime, context, incoming, turn.question))


def question_of(
    runtime: TeamsRuntime, context: TurnContext, incoming: Incoming, text: str, *, claimed: bool = False
) -> Question:
    """The question to answer; `claimed`: it holds the activity's claim until its answer is out."""
    return Question(
        text=text,
        incoming=incoming,
        reference=context.activity.get_conversation_reference(),
        identity=context.identity,
        base_url=base_url(runtime),
        claim=claim_key(incoming) if claimed else None,
    )


async def on_db(runtime: TeamsRuntime, context: TurnContext, incoming: Incoming, name: str) -> None:
    """`db` lists the databases this place may use; `db NAME` picks one for it."""
    place = incoming.place
    names = runtime.askbase.databases.names()
    usable = usable_databases(runtime.settings, incoming.principal, names)
    current = await runtime.run(database_for, runtime, place)
    name = name.strip().strip("`")
    if not name:
        listed = (
            "\n".join(f"- {cards.escape(d)}{'  ← here' if d == current else ''}" for d in usable) or "none"
        )
        await context.send_activity(
            card_activity(
                cards.card(
                    [
                        cards.text_block(f"**Databases this place may use:**\n\n{listed}"),
                        cards.note("Choose one with db NAME."),
                    ]
                ),
                "Databases",
            )
        )
    elif name not in names:
        await say(context, f"There is no database named '{name}'. Known here: {', '.join(usable) or 'none'}.")
    elif name not in usable:
        await say(context, f"This place may not use '{name}'. It may use: {', '.join(usable) or 'none'}.")
    else:
        await runtime.run(
            runtime.conversations.point_place, place.settings_team, place.channel, name, incoming.user
        )
        await say(context, f"{incoming.user_name or 'Someone'} set this place to ask about {name}.")


async def on_text(
    runtime: TeamsRuntime, context: TurnContext, incoming: Incoming, *, claimed: bool = True
) -> bool:
    """A command, an answer to the open clarifying question, or a question; True when a question
    is being answered that holds the activity's claim (it marks it answered once the card is out).
    `claimed`: this process holds the activity's claim (False: it is handled unclaimed)."""
    text = incoming.text
    word, _, rest = text.partition(" ")
    word = word.lower().rstrip(":")
    if word in ("help", "?") and not rest:
        await context.send_activity(card_activity(cards.card([cards.text_block(HELP)]), "How to use Askbase"))
        return False
    if word == "db" and len(rest.split()) <= 1:  # "db sizes by month?" is a question
        await on_db(runtime, context, incoming, rest)
        return False
    if word == "verified" and not rest:
        await verified.on_list(runtime, context, incoming)
        return False
    if word == "schedules" and not rest:
        await schedules.on_list(runtime, context, incoming)
        return False
    if word == "definitions" and not rest:
        await teaching.on_list(runtime, context, incoming)
        return False
    taught = chat_teaching(text) if word in ("define", "please") else None
    if taught is not None:  # "define X as Y" is taught, not asked
        await teaching.on_define(runtime, context, incoming, taught)
        return False
    if word == "schedule" and parse.looks_like_schedule(rest):
        await schedules.on_command(runtime, context, incoming, rest, base_url(runtime))
        return False
    key = incoming.place.conversation_key(await runtime.run(database_for, runtime, incoming.place))
    if await actions.on_typed_reply(runtime, context, incoming, key, base_url(runtime)):
        return False
    question = question_of(runtime, context, incoming, text, claimed=claimed)
    return await start(runtime, context, question) and claimed


def unaddressed(incoming: Incoming) -> bool:
    """A channel or group chat message that does not mention the bot (delivered thanks to
    resource-specific consent): it is handled only when it `continues`."""
    return incoming.place.kind != "personal" and not incoming.mentioned and incoming.value is None


def continues(runtime: TeamsRuntime, incoming: Incoming) -> bool:
    """Whether an unaddressed message continues a conversation of its author: a reply in a
    channel thread they started, or an answer to the question waiting for them in the chat."""
    if not incoming.text or not incoming.user or incoming.text.strip(" !.").lower() in THANKS:
        return False
    place = incoming.place
    if place.threaded:
        return runtime.conversations.follows_up(place.conversation_key(""), incoming.user)
    key = place.conversation_key(database_for(runtime, place))
    return runtime.conversations.follows_up(key, incoming.user, started=False)


async def on_message(runtime: TeamsRuntime, context: TurnContext) -> None:
    incoming = read(context.activity)
    if unaddressed(incoming) and not await runtime.book(continues, runtime, incoming):
        return  # someone talking in the channel, not to Askbase: nothing kept of it

    async def work(claimed: bool) -> bool:
        return await handle(runtime, context, incoming, claimed=claimed)

    # the server claimed it as it acknowledged it (ACKED), else the wrapper claims it now
    await in_claim(runtime, incoming, context.activity, base_url(runtime), work, acked=ACKED.get())


async def handle(
    runtime: TeamsRuntime, context: TurnContext, incoming: Incoming, *, claimed: bool = True
) -> bool:
    """A message activity to handle; True when a question now holds its claim (`claimed`: this
    process holds it) until its answer is out."""
    if incoming.value is not None and cards.ACTION in incoming.value:
        await on_press(runtime, context, incoming, incoming.value)
        return False
    return bool(incoming.text) and await on_text(runtime, context, incoming, claimed=claimed)


async def handle_again(
    runtime: TeamsRuntime, context: TurnContext, incoming: Incoming, base: str | None
) -> None:
    """`handle` for the recovery sweep (inflight.py), in a proactive turn: links point at `base`."""
    token = REQUEST_BASE.set(base)

    async def work(claimed: bool) -> bool:
        return await handle(runtime, context, incoming, claimed=claimed)

    try:
        await in_claim(runtime, incoming, context.activity, base, work, acked=CLAIMED)  # the sweep's
    finally:
        REQUEST_BASE.reset(token)


# What an Action.Execute press is answered with, at once (server.py): the press is handled after.
INVOKE_ACK = {
    "statusCode": 200,
    "type": "application/vnd.microsoft.activity.message",
    "value": "Working on it…",
}


# Replies in a thread that close it rather than ask something: never answered (as in Slack).
THANKS = {"thanks", "thank you", "thx", "ty", "ok", "okay", "great", "cool", "nice", "perfect", "got it"}
FEEDBACK_INVOKE = "message/submitAction"  # Teams' own 👍 / 👎 under an answer (the feedback loop)


def execute_data(activity: Activity) -> dict[str, Any] | None:
    """The data (and inputs) of an Action.Execute press."""
    value = activity.value if isinstance(activity.value, dict) else {}
    action = value.get("action")
    data = action.get("data") if isinstance(action, dict) else None
    return data if isinstance(data, dict) else None


def answered_in_request(activity: Activity) -> bool:
    """An invoke whose response is what the person sees (server.py waits for it): a press shown
    to the presser alone, or Teams' feedback buttons."""
    if activity.type != ActivityTypes.invoke:
        return False
    if activity.name == FEEDBACK_INVOKE:
        return True
    data = execute_data(activity) if activity.name == "adaptiveCard/action" else None
    return data is not None and data.get(cards.ACTION) in cards.PRIVATE_VERBS


async def invoke_response(context: TurnContext, body: Any) -> None:
    await context.send_activity(
        Activity(type=ActivityTypes.invoke_response, value=InvokeResponse(status=200, body=body))
    )


async def on_invoke(runtime: TeamsRuntime, context: TurnContext) -> None:
    """Action.Execute (`adaptiveCard/action`): Details, CSV, 👍 and 👎 answered with a card for the
    presser alone (in the request: server.py returns this turn's invoke response); any other press
    the same as an Action.Submit one, its request answered with INVOKE_ACK already. Teams' own
    feedback buttons (`message/submitAction`) are votes like the card's."""
    activity = context.activity
    incoming = read(activity)
    if activity.name == FEEDBACK_INVOKE:
        value = activity.value if isinstance(activity.value, dict) else {}
        try:
            await private.on_feedback(runtime, context, incoming, value, base_url(runtime))
        finally:
            await invoke_response(context, {})
        return
    if activity.name != "adaptiveCard/action":
        return
    data = execute_data(activity)
    verb = str(data.get(cards.ACTION) or "") if data is not None else ""
    if data is not None and verb in cards.PRIVATE_VERBS:
        content = await private.view(runtime, context, incoming, verb, data, base_url(runtime))
        await invoke_response(context, private.card_response(content))
        return
    if isinstance(data, dict) and cards.ACTION in data:

        async def press(_claimed: bool) -> bool:
            await on_press(runtime, context, incoming, data)
            return False

        await in_claim(runtime, incoming, activity, base_url(runtime), press)
    await context.send_activity(
        Activity(type=ActivityTypes.invoke_response, value=InvokeResponse(status=200, body=INVOKE_ACK))
    )


async def on_installed(runtime: TeamsRuntime, context: TurnContext) -> None:
    """The bot was added to a team or group chat: say what it does. A personal chat shows the
    manifest's prompt starters instead (Teams asks bots with them to send no welcome there)."""
    activity = context.activity
    bot_id = activity.recipient.id if activity.recipient else None
    if read(activity).place.kind == "personal":
        return
    if any(m.id == bot_id for m in activity.members_added or []):
        await context.send_activity(card_activity(cards.card([cards.text_block(HELP)]), "Askbase is here"))


def create_agent(runtime: TeamsRuntime, connections: Connections) -> AgentApplication[TurnState]:
    agent = AgentApplication[TurnState](
        storage=MemoryStorage(),
        connection_manager=connections,
        remove_recipient_mention=False,  # incoming.py removes it, and keeps the original text intact
        start_typing_timer=False,  # the answer's own turn keeps "typing…" going (answering.py)
    )

    @agent.activity(ActivityTypes.message)
    async def message(context: TurnContext, _state: TurnState) -> None:
        await on_message(runtime, context)

    @agent.activity(ActivityTypes.invoke)
    async def invoke(context: TurnContext, _state: TurnState) -> None:
        await on_invoke(runtime, context)

    @agent.activity(ActivityTypes.conversation_update)
    async def conversation_update(context: TurnContext, _state: TurnState) -> None:
        await on_installed(runtime, context)

    @agent.error
    async def on_error(context: TurnContext, error: Exception) -> None:
        log.error("turn failed: %s", error, exc_info=error)

    return agent
