"""Teaching Askbase what words mean, in Slack (issue 32): define, approve, undo, correct, remember.

- `@Askbase define loss ratio as total loss divided by premium` (a mention, a DM, the assistant
  panel, `/ask define …`) drafts a definition (core/teaching.py `Teacher.propose`) and posts what
  was drafted: the definition in words, its SQL and a preview figure, with **Approve** / **Reject**
  that only analysts can use. An analyst's approval makes it active at once; anyone else's
  proposal waits in the analysts' queue (App Home) and is not used until approved. A definition
  that cannot be drafted is answered with why, and a `define …` that works on this database.
- An approved definition's note has **Undo** (analysts): the version before comes back.
- Under an answer, each reading it assumed has **Correct this**: a modal asks what the word should
  mean (prefilled with the word) and proposes that, in the answer's thread.
- After someone picks a reading in a clarifying question: "Always read 'existing' as …?" with
  **For me** / **For this channel** (only they see it), remembered at once for that scope.
- A 👎 whose comment states a rule ("X means Y", "define X as Y") proposes it, queued like any.
- App Home: analysts see the pending proposals with Approve / Reject, and the answers people who
  are not analysts voted on (👍 teaches only when an analyst gives it), with **Use as example**;
  everyone sees the readings they remembered (for themselves or a channel), with when, and Remove.

Only the engine's teaching service changes definitions; this module reads clicks and says what
happened. Everything from data or people (names, descriptions, SQL) is escaped as bot/slack/render.py
escapes it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from functools import partial
from typing import Any

from slack_bolt import App, BoltContext
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.answer_view import choices, short_date
from bot.slack import render
from bot.slack.answering import privately
from bot.slack.ask import Ask
from bot.slack.asker import Asker, asker_at, asker_of
from bot.slack.context import BotContext
from bot.slack.ephemeral import clicking_user, tell, tell_message
from bot.slack.listeners.clarify import parse_conversation
from bot.slack.listeners.schedules import publish_home
from bot.slack.private_results import is_private, post_ephemeral
from bot.slack.text import incoming
from core.answer import Clarification
from core.clarify.transcript import Exchange
from core.definitions.model import Definition
from core.teaching import Proposal, Teacher, Teaching, Where, chat_teaching, stated_rule

log = logging.getLogger(__name__)

APPROVE, REJECT, UNDO, REMOVE = "teach_approve", "teach_reject", "teach_undo", "teach_remove"
EXAMPLE = "teach_example"  # Use as example: an analyst confirms an answer someone else voted 👍
CORRECT = render.CORRECT  # "Correct this" under an assumption (render.teaching_blocks)
REMEMBER = "teach_remember"
MODAL = "teach_correct"
NOTE = "teach_note"  # block id prefix of the note on where a proposal stands (replaced when decided)
HOME_PENDING = 5
HOME_REMEMBERED = 8
HOME_VOTES = 5
NOT_ANALYST = (
    "Only analysts can approve, reject or undo definitions. The bot's admins name them in "
    "`verified.analysts` (Slack user ids or user groups)."
)
USAGE = "Write it as `define <words> as <what they mean>`, e.g. `{example}`."


def teacher(ctx: BotContext) -> Teacher:
    found = ctx.conversations.teacher
    assert isinstance(found, Teacher)
    return found


# ---------------------------------------------------------------- messages


def _name(d: Definition) -> str:
    return f"*{render.escape(d.name)}*"


def definition_blocks(d: Definition, sql: str, preview: str) -> list[dict[str, Any]]:
    """The definition in words, its SQL, its preview figure."""
    words = d.description or d.text
    kind = {"filter": "a condition", "metric": "a metric", "entity": "a business thing"}.get(d.kind, d.kind)
    blocks = [render.section(f"{_name(d)} — {kind}" + (f": {render.escape(words)}" if words else ""))]
    if sql:
        blocks.extend(render.code_blocks(sql, max_blocks=2))
    if preview:
        blocks.append(render.context(f":bar_chart: Preview: {render.escape(preview)}"))
    return blocks


def proposal_message(p: Proposal, user: str | None, example: str, *, lead: str = "") -> render.Message:
    """What was drafted, with Approve / Reject; or why nothing could be, with an example that works."""
    who = f"<@{user}>" if user else "Someone"
    if p.definition is None or not p.stored:
        why = p.problem or "That cannot be defined over this database's data."
        text = f":warning: I could not draft that definition: {render.escape(why)}"
        if example:
            text += f"\n{render.escape(USAGE.format(example=example))}"
        if p.definition is not None and p.sql:
            return render.Message(
                text=render.clip(f"I could not draft that definition: {render.escape(why)}", render.MAX_TEXT),
                blocks=[render.section(text), *render.code_blocks(p.sql, max_blocks=2)],
            )
        return render.Message(
            text=render.clip(f"I could not draft that definition: {render.escape(why)}", render.MAX_TEXT),
            blocks=[render.section(text)],
        )
    d = p.definition
    head = lead or f":memo: {who} proposed a definition on `{render.escape(p.database)}`:"
    blocks = [render.context(head), *definition_blocks(d, p.sql, p.preview)]
    if p.may_approve:
        blocks.append(
            render.context(
                "You are an analyst: *Approve* makes it active at once, for every question after.",
                block_id=f"{NOTE}:{p.id}",
            )
        )
    else:
        blocks.append(
            render.context(
                ":inbox_tray: Sent to the analysts for review: it is not used until one "
                "approves it (here, or in their App Home queue).",
                block_id=f"{NOTE}:{p.id}",
            )
        )
    blocks.append(decision_buttons(p.id or 0))
    return render.Message(
        text=render.clip(f"Proposed definition: {render.escape(d.name)}", render.MAX_TEXT),
        blocks=blocks[: render.MAX_BLOCKS],
    )


def decision_buttons(id_: int) -> dict[str, Any]:
    return render.actions(
        f"teach:{id_}",
        render.button("Approve", APPROVE, str(id_), style="primary"),
        render.button("Reject", REJECT, str(id_), style="danger"),
    )


def approved_note(d: Definition, user: str) -> str:
    return (
        f":white_check_mark: <@{user}> approved {_name(d)}: it is active at once, for every question "
        "after (the answers that use it say so)."
    )


def undo_button(id_: int) -> dict[str, Any]:
    return render.actions(f"teach_undo:{id_}", render.button("Undo", UNDO, str(id_)))


def decided_blocks(blocks: list[dict[str, Any]], note: str, *extra: dict[str, Any]) -> list[dict[str, Any]]:
    """A proposal's message once decided: its words stay, its buttons and the note on where it
    stands go, the decision shows (marked as that note, so a later Undo replaces it in turn)."""
    kept = [
        b
        for b in blocks
        if b.get("type") != "actions" and not str(b.get("block_id", "")).startswith(f"{NOTE}:")
    ]
    return [*kept, render.context(note, block_id=f"{NOTE}:decided"), *extra][: render.MAX_BLOCKS]


def offer_message(word: str, reading: str, clarification_id: str, index: int) -> render.Message:
    text = f":bulb: Always read '{render.escape(word)}' as {render.escape(reading)}?"

    def value(where: Where) -> str:
        return json.dumps({"c": clarification_id, "i": index, "w": where})

    return render.Message(
        text=render.clip(text, render.MAX_TEXT),
        blocks=[
            render.section(text),
            render.actions(
                f"teach_remember:{clarification_id}",
                render.button("For me", REMEMBER, value("me")),
                render.button("For this channel", REMEMBER, value("channel")),
            ),
        ],
    )


def correct_modal(word: str, metadata: dict[str, str]) -> dict[str, Any]:
    """What a word should mean: the define form, prefilled with the word the answer assumed."""
    word_input: dict[str, Any] = {"type": "plain_text_input", "action_id": "word", "max_length": 80}
    if word:
        word_input["initial_value"] = word[:80]
    return {
        "type": "modal",
        "callback_id": MODAL,
        "private_metadata": render.clip(json.dumps(metadata), 3000),
        "title": {"type": "plain_text", "text": "Correct a reading"},
        "submit": {"type": "plain_text", "text": "Propose"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": [
            render.section(
                "Say what the word should mean. I draft it as a definition, show its SQL and a preview, "
                "and an analyst approves it."
            ),
            {
                "type": "input",
                "block_id": "word",
                "label": {"type": "plain_text", "text": "The word"},
                "element": word_input,
            },
            {
                "type": "input",
                "block_id": "meaning",
                "label": {"type": "plain_text", "text": "What it should mean"},
                "element": {
                    "type": "plain_text_input",
                    "action_id": "meaning",
                    "multiline": True,
                    "max_length": 500,
                    "placeholder": {"type": "plain_text", "text": "status = 'Operational'"},
                },
            },
        ],
    }


def home_section(ctx: BotContext, client: WebClient, user: str, team: str) -> list[dict[str, Any]]:
    """App Home: the analysts' queue, and the readings this person remembered (with Remove)."""
    who = asker_at(ctx, client, team, None, user).principal
    t = teacher(ctx)
    blocks: list[dict[str, Any]] = []
    if t.may_decide(who):
        pending = t.pending()
        blocks.append({"type": "divider"})
        blocks.append(render.section(f"*Proposed definitions* ({len(pending)} waiting for an analyst)"))
        if not pending:
            blocks.append(render.context("None waiting. People propose with `@Askbase define X as Y`."))
        for d in pending[:HOME_PENDING]:
            by = render.person(d.provenance.owner) if d.provenance.owner else "someone"
            when = short_date(d.provenance.date)
            words = d.description or d.text
            blocks.append(
                render.section(
                    f"{_name(d)} on `{render.escape(t.database_of(d.id or 0) or '?')}` · proposed by {by}"
                    + (f", {when}" if when else "")
                    + (f"\n{render.escape(render.clip(words, 300))}" if words else "")
                )
            )
            blocks.append(decision_buttons(d.id or 0))
        if len(pending) > HOME_PENDING:
            blocks.append(render.context(f"… and {len(pending) - HOME_PENDING} more."))
        taught = t.taught_active(HOME_PENDING)
        if taught:
            blocks.append(render.section("*Taught in chat, active now* (newest first)"))
        for database, d in taught:
            block = render.section(
                f"{_name(d)} on `{render.escape(database)}` · approved by {render.person(d.provenance.owner)}"
                + (f", {short_date(d.provenance.date)}" if d.provenance.date else "")
            )
            block["accessory"] = render.button("Undo", UNDO, str(d.id or 0))
            blocks.append(block)
    if t.may_decide(who):
        blocks.extend(votes_section(t))
    remembered = t.remembered_by(user)
    if remembered:
        blocks.append({"type": "divider"})
        blocks.append(render.section(f"*Readings you remembered* ({len(remembered)})"))
        for database, d in remembered[:HOME_REMEMBERED]:
            where = (
                "for you" if d.scope.user else f"in <#{d.scope.channel}>" if d.scope.channel else "everywhere"
            )
            when = short_date(d.provenance.date)
            block = render.section(
                f"{_name(d)} — {render.escape(d.description or d.text or d.sql)}\n"
                f"`{render.escape(database)}` · {where} · by {render.person(d.provenance.owner)}"
                + (f", {when}" if when else "")
            )
            block["accessory"] = render.button("Remove", REMOVE, str(d.id or 0), style="danger")
            blocks.append(block)
    return blocks


def votes_section(t: Teacher) -> list[dict[str, Any]]:
    """For analysts: answers people voted on (not analysts, so nothing was learned), newest first;
    a 👍 has **Use as example**, a 👎 shows what was wrong."""
    reviews = t.votes_to_review(HOME_VOTES)
    if not reviews:
        return []
    blocks: list[dict[str, Any]] = [
        {"type": "divider"},
        render.section(
            "*Votes to review* — answers people voted on; a 👍 teaches me only once an analyst "
            "makes it an example"
        ),
    ]
    for r in reviews:
        when = f", {short_date(r.at.isoformat())}" if r.at else ""
        said = f"\n> {render.escape(render.clip(r.comment, 300))}" if r.comment else ""
        vote = ":thumbsup:" if r.verdict == "up" else ":thumbsdown:"
        block = render.section(
            f"{vote} *{render.escape(render.clip(r.question, 300))}* on `{render.escape(r.database)}` · by "
            f"{render.person(r.user) if r.user else 'someone'}{when}{said}"
        )
        if r.verdict == "up":
            block["accessory"] = render.button("Use as example", EXAMPLE, r.trace_id)
        blocks.append(block)
    return blocks


# ---------------------------------------------------------------- proposing


def _post(ctx: BotContext, client: WebClient, ask: Ask, message: render.Message) -> None:
    """In the thread it was asked in (to the asker alone where results are private)."""
    try:
        if ask.user and (ask.private or is_private(ctx.settings, ctx.conversations, ask.team, ask.channel)):
            post_ephemeral(client, ask.channel, ask.user, message, ask.thread_ts)
            return
        kwargs: dict[str, Any] = {"thread_ts": ask.thread_ts} if ask.thread_ts else {}
        client.chat_postMessage(channel=ask.channel, text=message.text, blocks=message.blocks, **kwargs)
    except SlackApiError as exc:
        log.info("could not post a definition in %s: %s", ask.channel, exc.response.get("error"))
        tell_message(client, ask.channel, ask.user, message.text, message.blocks, thread_ts=ask.thread_ts)


def propose(
    ctx: BotContext,
    client: WebClient,
    ask: Ask,
    teaching: Teaching,
    *,
    database: str | None = None,
    trace_id: str | None = None,
    lead: str = "",
) -> Proposal | None:
    """Worker: draft `teaching`, store it as proposed and say what was drafted. Never raises."""
    try:
        t = teacher(ctx)
        who = asker_at(ctx, client, ask.team, ask.channel, ask.user).principal
        name = database or ctx.conversations.database_for(
            ask.conversation, asked=ask.database, team=ask.team, place=ask.channel
        )
        proposal = t.propose_teaching(name, teaching, who, trace_id=trace_id)
        example = t.example(name) if not proposal.stored else ""
        _post(ctx, client, ask, proposal_message(proposal, ask.user, example, lead=lead))
        log.info("definition of %r proposed by %s on %s: %s", teaching.name, ask.user, name, proposal.id)
        return proposal
    except Exception:
        log.exception("proposing a definition of %r failed", teaching.name)
        _post(ctx, client, ask, render.plain("Something went wrong while drafting that definition."))
        return None
    finally:
        if ask.claim:
            ctx.claims.finished(ask.claim)


def on_ask(ctx: BotContext, client: WebClient, ask: Ask) -> bool:
    """Hook of bot/slack/listeners/questions.py: "define X as Y" is taught, not asked. True when taken
    (the claim is then finished once the proposal is posted)."""
    teaching = chat_teaching(ask.question)
    if teaching is None:
        return False
    job = privately(ctx, ask)
    if not ctx.queue.put(propose, ctx, client, job, teaching) and job.claim:
        ctx.claims.release(job.claim)  # the process is stopping: another one takes it over
    return True


def define_command(
    ctx: BotContext, *, ack: Any, command: dict[str, Any], rest: str, client: WebClient, **_: Any
) -> None:
    """`/ask define loss ratio as total loss divided by premium`: posted in the channel."""
    text = f"define {incoming(rest)}"
    teaching = chat_teaching(text)
    team, channel, user = command.get("team_id", ""), command["channel_id"], command.get("user_id")
    if teaching is None:
        name = channel_database_name(ctx, team, channel, user)
        ack(
            response_type="ephemeral",
            text=render.escape(USAGE.format(example=teacher(ctx).example(name))),
        )
        return
    ack()
    ask = Ask(question=text, team=team, channel=channel, user=user, thread_ts=None)
    ctx.queue.put(propose, ctx, client, privately(ctx, ask), teaching)


def channel_database_name(ctx: BotContext, team: str, channel: str, user: str | None) -> str:
    return ctx.conversations.database_for(None, team=team, place=channel)


# ---------------------------------------------------------------- deciding


def _clicked(body: dict[str, Any]) -> tuple[str, str, str, str | None, str | None, bool, bool]:
    """(user, team, channel, message ts, thread ts, in an ephemeral message, on the Home tab)."""
    container = body.get("container") or {}
    message = body.get("message") or {}
    user = clicking_user(body) or ""
    team = (body.get("team") or {}).get("id") or (body.get("user") or {}).get("team_id") or ""
    channel = (body.get("channel") or {}).get("id") or container.get("channel_id") or ""
    message_ts = container.get("message_ts") or message.get("ts")
    thread_ts = container.get("thread_ts") or message.get("thread_ts")
    home = container.get("type") == "view" or (body.get("view") or {}).get("type") == "home"
    return user, team, channel, message_ts, thread_ts, bool(container.get("is_ephemeral")), home


def _id(action: dict[str, Any]) -> int:
    try:
        return int(action.get("value") or "")
    except ValueError:
        return 0


def _show(
    ctx: BotContext,
    client: WebClient,
    body: dict[str, Any],
    note: str,
    *extra: dict[str, Any],
    refusal: bool = False,
) -> None:
    """Say what a click did: on the message clicked (its buttons go), on App Home, or to the clicker."""
    user, team, channel, message_ts, thread_ts, ephemeral, home = _clicked(body)
    if home:
        publish_home(ctx, client, user, team, note)
        return
    blocks = (body.get("message") or {}).get("blocks")
    if not refusal and channel and message_ts and blocks and not ephemeral:
        try:
            client.chat_update(
                channel=channel,
                ts=message_ts,
                text=render.clip(note, render.MAX_TEXT),
                blocks=decided_blocks(blocks, note, *extra),
            )
            return
        except SlackApiError as exc:
            log.info("could not update %s: %s", message_ts, exc.response.get("error"))
    if extra and not refusal:
        tell_message(client, channel, user, note, [render.section(note), *extra], thread_ts=thread_ts)
    else:
        tell(client, channel, user, note, thread_ts=thread_ts)


def on_approve(
    ctx: BotContext, client: WebClient, body: dict[str, Any], action: dict[str, Any], asker: Asker
) -> str:
    who = asker.principal
    t = teacher(ctx)
    if not t.may_decide(who):
        _show(ctx, client, body, NOT_ANALYST, refusal=True)
        return "not an analyst"
    d = t.approve(_id(action), who)
    if d is None:
        _show(ctx, client, body, "That proposal is no longer waiting: it was approved or rejected already.")
        return "gone"
    _show(ctx, client, body, approved_note(d, who.user or ""), undo_button(d.id or 0))
    return "approved"


def on_reject(
    ctx: BotContext, client: WebClient, body: dict[str, Any], action: dict[str, Any], asker: Asker
) -> str:
    who = asker.principal
    t = teacher(ctx)
    if not t.may_decide(who):
        _show(ctx, client, body, NOT_ANALYST, refusal=True)
        return "not an analyst"
    id_ = _id(action)
    d = t.get(id_)
    if not t.reject(id_, who) or d is None:
        _show(ctx, client, body, "That proposal is no longer waiting: it was approved or rejected already.")
        return "gone"
    _show(ctx, client, body, f":x: <@{who.user}> rejected {_name(d)}: it is not used.")
    return "rejected"


def on_undo(
    ctx: BotContext, client: WebClient, body: dict[str, Any], action: dict[str, Any], asker: Asker
) -> str:
    who = asker.principal
    t = teacher(ctx)
    if not t.may_decide(who):
        _show(ctx, client, body, NOT_ANALYST, refusal=True)
        return "not an analyst"
    id_ = _id(action)
    d = t.get(id_)
    done, restored = t.undo(id_, who)
    if not done or d is None:
        _show(ctx, client, body, "There is nothing to undo: that definition is not active any more.")
        return "gone"
    back = (
        f"the version before is active again ({render.escape(restored.description or restored.sql)})"
        if restored is not None
        else "it is no longer defined"
    )
    _show(ctx, client, body, f":leftwards_arrow_with_hook: <@{who.user}> undid {_name(d)}: {back}.")
    return "undone"


def on_remove(
    ctx: BotContext, client: WebClient, body: dict[str, Any], action: dict[str, Any], asker: Asker
) -> str:
    who = asker.principal
    t = teacher(ctx)
    id_ = _id(action)
    d = t.get(id_)
    if d is None or not t.remove(id_, who):
        _show(ctx, client, body, "You can remove only the readings you remembered.", refusal=True)
        return "refused"
    _show(ctx, client, body, f"Removed {_name(d)}: it is read as before.")
    return "removed"


def on_use_example(
    ctx: BotContext, client: WebClient, body: dict[str, Any], action: dict[str, Any], asker: Asker
) -> str:
    """Use as example (App Home): an analyst makes an answer someone voted 👍 an example."""
    who = asker.principal
    t = teacher(ctx)
    if not t.may_decide(who):
        _show(ctx, client, body, NOT_ANALYST, refusal=True)
        return "not an analyst"
    vote = t.use_as_example(str(action.get("value") or ""), who)
    if vote.status != "example":
        _show(ctx, client, body, "I no longer have that answer.", refusal=True)
        return "gone"
    _show(
        ctx,
        client,
        body,
        f":white_check_mark: *{render.escape(render.clip(vote.question, 300))}* is an example now: I learn "
        f"from its SQL on `{render.escape(vote.database)}`.",
    )
    return "example"


# ---------------------------------------------------------------- Correct this


def on_correct(
    ctx: BotContext, client: WebClient, body: dict[str, Any], action: dict[str, Any], asker: Asker
) -> None:
    user, _team, channel, message_ts, thread_ts, _, _ = _clicked(body)
    try:
        data = json.loads(action.get("value") or "{}")
        trace_id, word = str(data["t"]), str(data.get("w") or "")
    except (ValueError, KeyError, TypeError):
        return
    metadata = {"t": trace_id, "c": channel, "th": thread_ts or message_ts or ""}
    trigger = body.get("trigger_id")
    try:
        if not trigger:
            raise ValueError("no trigger_id")
        client.views_open(trigger_id=trigger, view=correct_modal(word, metadata))
    except (SlackApiError, ValueError) as exc:
        log.info("could not open the define form: %s", exc)
        tell(
            client,
            channel,
            user,
            f"Mention me with `define {render.escape(word or '<words>')} as <what it should mean>` instead.",
            thread_ts=thread_ts,
        )


def form_values(view: dict[str, Any]) -> tuple[str, str]:
    values = (view.get("state") or {}).get("values") or {}

    def read(block: str) -> str:
        return incoming(((values.get(block) or {}).get(block) or {}).get("value") or "", escaped=False)

    return read("word").strip(" '\"“”‘’"), read("meaning")


def on_correct_submitted(
    ctx: BotContext, client: WebClient, body: dict[str, Any], view: dict[str, Any]
) -> None:
    """The form (already acknowledged): propose it in the answer's thread."""
    user = clicking_user(body)
    try:
        meta = json.loads(view.get("private_metadata") or "{}")
    except ValueError:
        return
    word, meaning = form_values(view)
    trace_id = str(meta.get("t") or "")
    team = (body.get("team") or {}).get("id") or (body.get("user") or {}).get("team_id") or ""
    ask = Ask(
        question=f"define {word} as {meaning}",
        team=team,
        channel=str(meta.get("c") or ""),
        user=user,
        thread_ts=str(meta.get("th") or "") or None,
    )
    database = teacher(ctx).answer_database(trace_id) if trace_id else None
    job = privately(ctx, ask)
    ctx.queue.put(
        propose, ctx, client, job, Teaching(word, meaning), database=database, trace_id=trace_id or None
    )


# ---------------------------------------------------------------- learned from clarifications and 👎


def after_clarified(
    ctx: BotContext,
    client: WebClient,
    *,
    clarification: Clarification,
    database: str,
    channel: str | None,
    thread_ts: str | None,
    user: str | None,
    exchange: Exchange,
) -> None:
    """Hook of bot/slack/listeners/clarify.py: a reading was picked; offer to remember it (to the
    person who picked it, alone)."""
    if exchange.own_words or not user or not channel:
        return
    options = clarification.options
    index = next((i for i, o in enumerate(options) if o.value == exchange.value), -1)
    offer = teacher(ctx).offer(clarification, index, database)
    if offer is None:
        return
    reading = offer.reading
    if 0 <= index < len(options):  # in words, as it was offered (less the figure on its button)
        reading = choices(clarification)[index].label.split(" → ")[0].strip()
    message = offer_message(offer.word, reading, clarification.id, index)
    tell_message(client, channel, user, message.text, message.blocks, thread_ts=thread_ts)


def on_remember(
    ctx: BotContext, client: WebClient, body: dict[str, Any], action: dict[str, Any], asker: Asker
) -> str:
    user, _, channel, _, thread_ts, _, _ = _clicked(body)
    try:
        data = json.loads(action.get("value") or "{}")
        clarification_id, index = str(data["c"]), int(data["i"])
        where: Where = "channel" if data.get("w") == "channel" else "me"
    except (ValueError, KeyError, TypeError):
        return "gone"
    done = teacher(ctx).remember_choice(clarification_id, index, asker.principal, where)
    if done.status == "remembered" and done.offer is not None:
        scope = "for you" if where == "me" else f"in <#{channel}>"
        note = (
            f":brain: Remembered {scope}: '{render.escape(done.offer.word)}' is read as "
            f"{render.escape(done.offer.reading)}. It is listed in my App Home, where you can remove it."
        )
    else:
        note = {
            "gone": "I no longer have that question.",
            "not yours": "Only the person who chose that reading can remember it.",
            "no word": "That choice names no word I could remember.",
            "no channel": "There is no channel to remember it for here.",
            "does not fit": "That reading no longer fits the data, so I did not remember it.",
        }.get(done.status, "I could not remember that.")
    tell(client, channel, user, note, thread_ts=thread_ts)
    return done.status


def after_thumbs_down(
    ctx: BotContext, client: WebClient, trace_id: str, user: str | None, comment: str
) -> None:
    """Hook of bot/slack/listeners/actions.py: a comment that states a rule proposes it (queued)."""
    rule = stated_rule(comment)
    if rule is None or not user:
        return
    t = teacher(ctx)
    conversation = t.answer_conversation(trace_id)
    place = parse_conversation(conversation or "")
    database = t.answer_database(trace_id)
    if place is None or database is None:
        return
    team, channel, thread_ts = place
    ask = Ask(question=comment, team=team, channel=channel, user=user, thread_ts=thread_ts)
    lead = f":memo: <@{user}>'s comment states a rule, so I drafted it as a definition on `{render.escape(database)}`:"
    ctx.queue.put(
        propose, ctx, client, privately(ctx, ask), rule, database=database, trace_id=trace_id, lead=lead
    )


# ---------------------------------------------------------------- wiring


def _listener(ctx: BotContext, handler: Callable[..., Any]) -> Callable[..., None]:
    """A Bolt listener that acknowledges the click, then hands it to `handler`."""

    def listener(
        ack: Any, body: dict[str, Any], action: dict[str, Any], client: WebClient, context: BoltContext
    ) -> None:
        ack()
        handler(ctx, client, body, action, asker_of(context))

    return listener


def register(app: App, ctx: BotContext) -> None:
    ctx.subcommands["define"] = partial(define_command, ctx)
    ctx.extras.setdefault("ask_hooks", []).append(on_ask)
    ctx.extras.setdefault("clarified_hooks", []).append(after_clarified)
    ctx.extras.setdefault("thumbs_down_hooks", []).append(after_thumbs_down)
    ctx.extras.setdefault("home_sections", []).append(home_section)

    for action_id, handler in (
        (APPROVE, on_approve),
        (REJECT, on_reject),
        (UNDO, on_undo),
        (REMOVE, on_remove),
        (REMEMBER, on_remember),
        (CORRECT, on_correct),
        (EXAMPLE, on_use_example),
    ):
        app.action(action_id)(_listener(ctx, handler))

    @app.view(MODAL)
    def correct_submitted(ack: Any, body: dict[str, Any], view: dict[str, Any], client: WebClient) -> None:
        word, meaning = form_values(view)
        errors = {}
        if not word:
            errors["word"] = "Say which word."
        if not meaning:
            errors["meaning"] = "Say what it should mean."
        if errors:
            ack(response_action="errors", errors=errors)
            return
        ack()
        on_correct_submitted(ctx, client, body, view)
