"""Slack text in and out: one function reads what people typed, one escapes what we write.

Slack sends message text (events, `/ask`, assistant threads) with `&`, `<` and `>` as `&amp;`,
`&lt;` and `&gt;`, and with links, channels and broadcasts in angle brackets (`<https://x|x>`,
`<#C1|general>`, `<!here>`). `incoming` turns that back into what the person typed — "R&D", "> 5"
— so the question asked is the question typed, less any secret in it (a password, an API key,
a token: core/redact.py `scrub_question`), removed here, before the question is claimed, posted
back, stored or asked; the engine tells the asker it was. Modal inputs arrive as typed (`escaped=False`).
`escape` is the other direction: every piece of text we put into mrkdwn (answers, help, empty
states, names from the database) and into a message's top-level `text` (what notifications show)
goes through it, so a `<question>` in help or a value like "Bolt & Co <x>" shows as written
instead of as markup, and a value `<!channel>` pings nobody.
"""

from __future__ import annotations

import re

from core.redact import scrub_question

LINK = re.compile(r"<((?:https?|mailto):[^|>]*)(?:\|([^>]*))?>")
CHANNEL = re.compile(r"<#([CGD][A-Z0-9]+)(?:\|([^>]*))?>")
BROADCAST = re.compile(r"<!(here|channel|everyone)(?:\|[^>]*)?>")
SUBTEAM = re.compile(r"<!subteam\^([A-Z0-9]+)(?:\|([^>]*))?>")
USER = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>")


def escape(text: str) -> str:
    """Slack mrkdwn treats &, < and > as control characters everywhere, code blocks included."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def unescape(text: str) -> str:
    """Slack's three entities back to characters (`&amp;` last, so `&amp;lt;` stays `&lt;`)."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def incoming(
    text: str, *, bot_user_id: str | None = None, addressed: bool = False, escaped: bool = True
) -> str:
    """What the person typed, on one line: the bot's own mention removed, links and channel names as
    their labels, Slack's entities decoded. Mentions of other people stay (`<@U42>`): they are part
    of the question ("payments approved by <@U42>").

    `addressed`: the message is an app_mention; when it does not mention the id auth.test gave us,
    the mention it starts with is the bot's own. `escaped=False` for modal inputs (sent as typed).
    Secrets are replaced by `[secret-removed]` (see the module's docstring).
    """
    if bot_user_id:
        own = re.compile(rf"<@{re.escape(bot_user_id)}(?:\|[^>]*)?>")
        if own.search(text):
            text = own.sub(" ", text)
            addressed = False
    if addressed:
        text = re.sub(r"^\s*<@[UW][A-Z0-9]+(?:\|[^>]*)?>", " ", text)
    if escaped:
        text = LINK.sub(lambda m: m.group(2) or m.group(1), text)
        text = CHANNEL.sub(lambda m: f"#{m.group(2)}" if m.group(2) else f"<#{m.group(1)}>", text)
        text = BROADCAST.sub(lambda m: f"@{m.group(1)}", text)
        text = SUBTEAM.sub(lambda m: m.group(2) or f"<!subteam^{m.group(1)}>", text)
        text = unescape(text)
    return scrub_question(" ".join(text.split()))[0]


def mentions(text: str, user_id: str | None) -> bool:
    """True when `text` (as Slack sent it) mentions `user_id`."""
    return bool(user_id) and any(m == user_id for m in USER.findall(text or ""))
