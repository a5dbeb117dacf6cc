"""Configuration problems go to the people who can fix them, not to the channel that asked.

When a question fails because of the setup — the LLM endpoint rejects the key (or none is set,
and keyword mode declines), a database cannot be opened, the database account lacks a grant —
the asker is told what went wrong in their terms ("answers are limited right now", bot/failures.py);
the advice ("check OPENAI_API_KEY") goes to the log every time, and to the admins: a DM, at most
once a day per problem and workspace across all processes (claimed in the state database), to the
people named in `slack.admins` and whoever installed the app (OAuth installs) — with a single bot
token and nobody named, to the workspace's owners (`users.list`, scope `users:read`) — and on the
App Home of workspace admins (`home_notes`, read from the audit log, so it survives restarts).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections import Counter
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.failures import Failure
from bot.slack.clients import oauth_configured
from bot.slack.context import BotContext
from bot.slack.text import escape

log = logging.getLogger(__name__)

SINCE = dt.timedelta(days=1)
MAX_OWNERS = 3  # with nobody named, the workspace owners told (the primary owner first)
MAX_PAGES = 5  # of users.list, 200 people each, looked through for them
# What the admins should look at, per kind of failure the audit log records.
ADVICE: dict[str, str] = {
    "llm": "the language model endpoint failed or refused the key: check OPENAI_API_KEY, OPENAI_BASE_URL and llm.model",
    "database": "a database could not be opened: check its URL and that the server is reachable",
    "dialect": "a database uses a SQL dialect Askbase cannot check yet, so nothing runs on it",
    "permission": "the database account Askbase uses lacks a grant on data people ask about",
    "keyword_internal": "keyword mode failed on a question (a bug): the log has the details",
    "internal": "answering failed unexpectedly (a bug): the log has the details under the trace id",
}


def installer_of(ctx: BotContext, team: str) -> str | None:
    """Who installed the app in `team` (OAuth installs only; a single bot token names nobody)."""
    if not oauth_configured(ctx.settings):
        return None
    try:
        # Imported here: the store pulls in sqlalchemy.ext.asyncio (needs greenlet) — OAuth mode only.
        from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore

        store = SQLAlchemyInstallationStore(client_id=ctx.settings.slack.client_id or "", engine=ctx.state)
        installation = store.find_installation(enterprise_id=None, team_id=team or None)
    except Exception:
        log.debug("no installation found for %s", team, exc_info=True)
        return None
    return installation.user_id if installation is not None else None


def owners_of(client: WebClient) -> list[str]:
    """The workspace's owners (primary owner first), people only: who runs a single-token install."""
    members: list[Any] = []
    cursor = None
    try:
        for _ in range(MAX_PAGES):
            page = client.users_list(limit=200, cursor=cursor)
            members.extend(page.get("members") or [])
            cursor = (page.get("response_metadata") or {}).get("next_cursor")
            if not cursor:
                break
    except SlackApiError as exc:
        log.info("could not list the workspace's owners: %s", exc.response.get("error"))
    owners = [
        m
        for m in members
        if isinstance(m, dict)
        and (m.get("is_owner") or m.get("is_primary_owner"))
        and not (m.get("is_bot") or m.get("deleted"))
    ]
    owners.sort(key=lambda m: not m.get("is_primary_owner"))
    return [str(m["id"]) for m in owners[:MAX_OWNERS] if m.get("id")]


def admins_to_tell(ctx: BotContext, client: WebClient, team: str) -> list[str]:
    """`slack.admins` and the installer; with neither, the workspace's owners."""
    named = list(dict.fromkeys([*ctx.settings.slack.admins, installer_of(ctx, team) or ""]))
    named = [u for u in named if u]
    return named or owners_of(client)


def tell_admins(ctx: BotContext, client: WebClient, team: str, failure: Failure, trace_id: str) -> None:
    """Log the advice; DM the admins once a day per problem (never the channel that asked)."""
    if not failure.admin_note:
        return
    log.warning("trace %s: for the admins (%s): %s", trace_id, failure.kind, failure.admin_note)
    day = dt.datetime.now(dt.UTC).date().isoformat()
    try:
        first = ctx.askbase.once(f"admin-note:{team}:{failure.kind}:{day}")
    except Exception:
        log.exception("could not claim the admin note for %s", team)
        return
    if not first:
        return
    limited = failure.kind in ("llm", "keyword_abstain")
    what = (
        "answers are limited right now (keyword mode only) because of Askbase's setup"
        if limited
        else "a question in your workspace failed because of Askbase's setup"
    )
    text = (
        f":wrench: {what[:1].upper()}{what[1:]}. What to fix: {escape(failure.admin_note)}\n"
        f"Trace `{trace_id}` in the log has the details; your App Home lists what failed in the last day."
    )
    for admin in admins_to_tell(ctx, client, team):
        try:
            client.chat_postMessage(
                channel=admin,
                text=text,
                blocks=[{"type": "section", "text": {"type": "mrkdwn", "text": text[:3000]}}],
            )
        except SlackApiError as exc:
            log.info("could not DM the admin %s: %s", admin, exc.response.get("error"))


def home_notes(ctx: BotContext) -> list[str]:
    """For admins' App Home (mrkdwn lines): what in the setup made questions fail in the last day."""
    notes = []
    if ctx.askbase.llm is None:
        notes.append(
            "No language model is configured, so questions are answered in keyword mode only. "
            "Set `OPENAI_API_KEY` (and `OPENAI_BASE_URL` for Azure, vLLM or Ollama)."
        )
    try:
        recent = ctx.conversations.audit_since(SINCE)
    except Exception:
        log.exception("could not read the audit log for App Home")
        recent = []
    failed = [e for e in recent if e.get("error_kind") in ADVICE]
    fell_back = [e for e in recent if e.get("mode") == "keyword" and e.get("status") == "answer"]
    if ctx.askbase.llm is not None and fell_back:
        n = len(fell_back)
        notes.append(
            f"{n} question{'s were' if n != 1 else ' was'} answered in keyword mode in the last day although "
            "a language model is configured: it failed or refused the key (the log says which, under "
            f"trace `{fell_back[-1].get('trace_id') or '-'}`)."
        )
    counts = Counter(str(e["error_kind"]) for e in failed)
    latest = {str(e["error_kind"]): e.get("trace_id") for e in sorted(failed, key=lambda e: str(e.get("at")))}
    for kind, n in counts.most_common():
        notes.append(
            f"{n} question{'s' if n != 1 else ''} failed in the last day: {escape(ADVICE[kind])} "
            f"(latest trace `{latest.get(kind) or '-'}`)."
        )
    return notes
