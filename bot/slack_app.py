"""The Slack app: `python -m bot serve [--socket | --http --port N]`.

HTTP mode serves Bolt through its WSGI adapter on a threaded server at `/slack/events` (also the
OAuth install pages when SLACK_CLIENT_ID/SECRET are set, and `/healthz`); Socket Mode is used when
asked for, or when SLACK_APP_TOKEN is set and HTTP is not asked for. One workspace with
SLACK_BOT_TOKEN, or many with OAuth installs kept in the state database. Every Web API call goes
to SLACK_API_BASE_URL (GovSlack, tests) and waits out 429s with slack_sdk's retry handler.

The database is opened, its catalog loaded and its value index read before the port opens
(bounded by WARM_UP_S), so the first question is answered as fast as the tenth.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from slack_bolt import App, BoltResponse
from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_bolt.oauth.oauth_settings import OAuthSettings
from slack_sdk import WebClient

from bot.listeners import actions, assistant, clarify, home, questions, schedules, verified
from bot.slack_clients import api_base_url, oauth_configured, web_client
from bot.slack_clients import secret as _secret
from bot.slack_context import BotContext
from bot.worker_pool import WorkerPool
from core.askbase import Askbase
from core.settings import Settings
from core.state import events

log = logging.getLogger("askbase.slack")

EVENTS_PATH = "/slack/events"
WARM_UP_S = 45.0  # longest wait for the warm-up before the port opens anyway
SHUTDOWN_S = 20.0  # in-flight answers get this long to finish on SIGTERM
BOT_SCOPES = [
    "app_mentions:read",
    "im:history",  # DMs and the assistant panel
    "chat:write",
    "commands",
    "reactions:write",
    "files:write",
    "assistant:write",  # the assistant panel: suggested prompts, thread titles, status
    "users:read",  # schedules: the person's timezone, and whether they are a workspace admin
    "channels:read",  # schedules: a channel's creator may change its schedules
    "groups:read",  # the same in private channels
    "usergroups:read",  # access rules may name user groups
]
# With `slack.thread_followups`: replies in our channel threads without a mention (message.channels/groups).
FOLLOWUP_SCOPES = ["channels:history", "groups:history"]


def bot_scopes(settings: Settings) -> list[str]:
    return BOT_SCOPES + (FOLLOWUP_SCOPES if settings.slack.thread_followups else [])


def oauth_settings(settings: Settings, askbase: Askbase) -> OAuthSettings:
    """Multi-workspace installs, stored in the state database next to everything else."""
    # Imported here: these stores pull in sqlalchemy.ext.asyncio (needs greenlet) — OAuth mode only.
    from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore
    from slack_sdk.oauth.state_store.sqlalchemy import SQLAlchemyOAuthStateStore

    client_id = settings.slack.client_id or ""
    installations = SQLAlchemyInstallationStore(client_id=client_id, engine=askbase.state)
    installations.create_tables()
    states = SQLAlchemyOAuthStateStore(expiration_seconds=600, engine=askbase.state)
    states.create_tables()
    site = api_base_url(settings).removesuffix("api/")
    return OAuthSettings(
        client_id=client_id,
        client_secret=_secret(settings.slack.client_secret),
        scopes=bot_scopes(settings),
        installation_store=installations,
        state_store=states,
        authorization_url=f"{site}oauth/v2/authorize",
        install_path="/slack/install",
        redirect_uri_path="/slack/oauth_redirect",
    )


def skip_redeliveries(ctx: BotContext) -> Callable[..., BoltResponse | None]:
    """Answer each Events API event once: retries (X-Slack-Retry-Num) and repeated ids are acked only."""

    def middleware(body: dict[str, Any], next: Callable[[], None], request: Any) -> BoltResponse | None:
        event_id = body.get("event_id") if body.get("type") == "event_callback" else None
        if event_id:
            try:
                first = events.first_delivery(ctx.state, event_id)
            except Exception:  # the state database is down: answering twice beats not answering
                log.exception("could not record event %s", event_id)
                first = True
            if not first:
                retry = (request.headers.get("x-slack-retry-num") or [""])[0]
                log.info("event %s already handled (retry %s); acknowledged only", event_id, retry or "-")
                return BoltResponse(status=200, body="")
        next()
        return None

    return middleware


@dataclass
class SlackBot:
    app: App
    ctx: BotContext

    def close(self, wait: bool = True) -> None:
        self.ctx.pool.shutdown(wait=wait)


# A feature with listeners adds its module here (one line).
LISTENERS = (questions, assistant, actions, schedules, home, clarify, verified)


def create_bot(
    askbase: Askbase, settings: Settings, client: WebClient | None = None, *, socket_mode: bool = False
) -> SlackBot:
    ctx = BotContext(askbase=askbase, settings=settings, pool=WorkerPool(settings.slack.workers))
    signing_secret = _secret(settings.slack.signing_secret) or ""
    common: dict[str, Any] = {
        "name": "askbase",
        "signing_secret": signing_secret,
        "request_verification_enabled": not socket_mode,
        "process_before_response": False,
        "logger": logging.getLogger("askbase.bolt"),
    }
    if oauth_configured(settings) and client is None:
        app = App(client=web_client(settings), oauth_settings=oauth_settings(settings, askbase), **common)
    else:
        client = client or web_client(settings, _secret(settings.slack.bot_token))
        app = App(client=client, token_verification_enabled=True, **common)
    app.use(skip_redeliveries(ctx))
    for module in LISTENERS:
        module.register(app, ctx)
    return SlackBot(app=app, ctx=ctx)


def create_app(askbase: Askbase, settings: Settings, client: WebClient | None = None) -> App:
    return create_bot(askbase, settings, client).app


# ---------------------------------------------------------------- HTTP


class _ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.address_string(), *args)


def wsgi_app(app: App, path: str = EVENTS_PATH) -> Callable[..., Iterable[bytes]]:
    """Bolt's WSGI handler plus `/healthz` for load balancers (gunicorn can serve this too)."""
    bolt = SlackRequestHandler(app, path=path)

    def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("PATH_INFO") == "/healthz":
            start_response("200 OK", [("Content-Type", "text/plain")])
            return [b"ok"]
        return bolt(environ, start_response)

    return application


def http_server(app: App, port: int, host: str = "0.0.0.0") -> WSGIServer:
    return make_server(
        host, port, wsgi_app(app), server_class=_ThreadingWSGIServer, handler_class=_QuietHandler
    )


# ---------------------------------------------------------------- serve


def warm_up(askbase: Askbase, settings: Settings) -> None:
    """Open the state DB and the default database; load its catalog, join graph and value index."""
    start = time.perf_counter()
    try:
        events.prune(askbase.state)  # processed event ids older than Slack's retry window
        db = askbase.database(settings.default_db)
        db.catalog  # noqa: B018
        askbase.trusted.watch.signature(db)  # notes the schema's fingerprint (core/schema_watch.py)
        db.graph  # noqa: B018
        db.values  # noqa: B018
        import matplotlib.figure  # noqa: F401 — the first chart is drawn without this wait

        log.info("warm: %s ready in %.1f s", db.name, time.perf_counter() - start)
    except Exception:  # the first question will report what is wrong, in the thread
        log.exception("warm-up of '%s' failed", settings.default_db)


def serve(args: argparse.Namespace, settings: Settings) -> int:
    slack = settings.slack
    socket_mode = bool(args.socket or (not args.http and slack.app_token))
    if socket_mode and not _secret(slack.app_token):
        print("Socket Mode needs SLACK_APP_TOKEN (an app-level token, xapp-…).", file=sys.stderr)
        return 2
    if not socket_mode and not _secret(slack.signing_secret):
        print("HTTP mode needs SLACK_SIGNING_SECRET (Basic Information → App Credentials).", file=sys.stderr)
        return 2
    if not _secret(slack.bot_token) and not oauth_configured(settings):
        print(
            "Set SLACK_BOT_TOKEN (one workspace) or SLACK_CLIENT_ID and SLACK_CLIENT_SECRET (OAuth).",
            file=sys.stderr,
        )
        return 2
    askbase = Askbase(settings)
    warmer = threading.Thread(target=warm_up, args=(askbase, settings), name="askbase-warm-up", daemon=True)
    warmer.start()
    warmer.join(WARM_UP_S)
    try:
        bot = create_bot(askbase, settings, socket_mode=socket_mode)
    except Exception as exc:  # BoltError: auth.test refused the token, etc. — say so without a trace
        print(f"Could not start the Slack app: {exc}", file=sys.stderr)
        askbase.close()
        return 2
    try:
        if socket_mode:
            from slack_bolt.adapter.socket_mode import SocketModeHandler

            log.info("Askbase on Slack (Socket Mode)")
            SocketModeHandler(bot.app, _secret(slack.app_token)).start()
        else:
            port = args.port or slack.port
            server = http_server(bot.app, port)

            def stop(_signum: int, _frame: Any) -> None:
                threading.Thread(target=server.shutdown, daemon=True).start()

            signal.signal(signal.SIGTERM, stop)
            log.info("Askbase on Slack: http://0.0.0.0:%d%s", port, EVENTS_PATH)
            try:
                server.serve_forever(poll_interval=0.2)
            finally:
                server.server_close()
    except KeyboardInterrupt:
        pass
    finally:
        done = threading.Thread(target=bot.close, daemon=True)
        done.start()
        done.join(SHUTDOWN_S)
        askbase.close()
    return 0
