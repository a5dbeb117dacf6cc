"""The Slack app: `python -m bot serve [--socket | --http --port N [--server gunicorn|threaded]]`.

HTTP mode serves Bolt through its WSGI adapter under gunicorn (gthread workers, `slack.http_processes`
× `slack.http_threads`) at `/slack/events` (also the OAuth install pages when SLACK_CLIENT_ID/SECRET
are set, and `/healthz`), behind the request checks of bot/slack/http_server.py; Socket Mode is used
when asked for, or when SLACK_APP_TOKEN is set and HTTP is not asked for. One workspace with
SLACK_BOT_TOKEN, or many with OAuth installs kept in the state database. Every Web API call goes
to SLACK_API_BASE_URL (GovSlack, tests) and waits out 429s with slack_sdk's retry handler.

Every request goes through bot/slack/middleware.py once: replays skipped, who is asking, and a
question claimed in the state database (after the ack over HTTP) before a listener sees it. The
listeners only translate: what is kept about a conversation is the conversation service's
(core/conversation/service.py), and questions wait their turn in the answering queue
(core/conversation/queue.py) rather than being turned away.

Each process opens the database, loads its catalog and reads its value index before it takes
requests (bounded by WARM_UP_S), so the first question is answered as fast as the tenth, and then
finishes or apologises for questions a dead process left in flight (bot/slack/inflight.py).
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from wsgiref.simple_server import WSGIServer

from slack_bolt import App
from slack_bolt.oauth.oauth_settings import OAuthSettings
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.extras import installed
from bot.slack import http_server as web
from bot.slack import private_results
from bot.slack.clients import api_base_url, oauth_configured, web_client
from bot.slack.clients import secret as _secret
from bot.slack.context import BotContext
from bot.slack.inflight import recovery
from bot.slack.listeners import actions, assistant, clarify, home, questions, schedules, teaching, verified
from bot.slack.middleware import install as install_middleware
from core.access import needs_emails, needs_usergroups
from core.askbase import Askbase
from core.conversation.claims import ClaimKeeper, Recovery
from core.conversation.queue import AnswerQueue
from core.conversation.service import Conversations
from core.conversation.upkeep import StateProbe
from core.settings import Settings
from core.verified.analysts import needs_groups
from core.warm import warm_up as warm_database

log = logging.getLogger("askbase.slack")

EVENTS_PATH = web.EVENTS_PATH
LISTENER_THREADS = 16  # Bolt's listener threads: claims and status posts after the ack, slash commands
EVENT_THREADS = 4  # Bolt's dispatch of events acknowledged before it (about 1 ms each)
WARM_UP_S = 45.0  # longest wait for the warm-up before the port opens anyway
SHUTDOWN_S = 20.0  # in-flight answers get this long to finish on SIGTERM
BOT_SCOPES = [
    "app_mentions:read",
    "im:history",  # DMs (each message a thread in the agent view) and the assistant panel
    "chat:write",
    "commands",
    "reactions:write",
    "files:write",
    "assistant:write",  # the agent view and the assistant panel: suggested prompts, thread titles, status
    "users:read",  # schedules: the person's timezone, and whether they are a workspace admin
    "channels:read",  # schedules: a channel's creator may change its schedules
    "groups:read",  # the same in private channels
]
# With `slack.thread_followups`: replies in our channel threads without a mention (message.channels/groups).
FOLLOWUP_SCOPES = ["channels:history", "groups:history"]
USERGROUP_SCOPES = ["usergroups:read"]  # access rules, role maps or analysts name user groups
EMAIL_SCOPES = ["users:read.email"]  # a database is told who asks, by email (core/identity.py)


def bot_scopes(settings: Settings) -> list[str]:
    """What the app asks for: BOT_SCOPES, and the scopes of the features the settings turn on."""
    groups = needs_usergroups(settings) or needs_groups(settings)
    return (
        BOT_SCOPES
        + (FOLLOWUP_SCOPES if settings.slack.thread_followups else [])
        + (USERGROUP_SCOPES if groups else [])
        + (EMAIL_SCOPES if needs_emails(settings) else [])
    )


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


@dataclass
class SlackBot:
    app: App
    ctx: BotContext
    recovery: Recovery | None = field(default=None)
    # Events acknowledged over HTTP before Bolt runs are dispatched here (bot/slack/http_server.py).
    events: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(EVENT_THREADS, thread_name_prefix="askbase-events")
    )

    def client_for(self, team: str) -> WebClient | None:
        """The Web API client of a workspace (OAuth: its stored installation), for work no request brought."""
        store = self.app.installation_store
        if store is None:
            return self.app.client
        installation = store.find_installation(enterprise_id=None, team_id=team or None)
        token = installation.bot_token if installation is not None else None
        return web_client(self.ctx.settings, token) if token else None

    def start_recovery(self) -> None:
        """Finish or apologise for questions a dead process left, now and then once per lease."""
        if self.recovery is None:
            self.recovery = recovery(self.ctx, self.client_for).start()

    def close(self, wait: bool = True) -> None:
        if self.recovery is not None:
            self.recovery.stop()
        self.events.shutdown(wait=wait)  # events already acknowledged reach their listeners first
        self.ctx.queue.shutdown(wait=wait, cancel_futures=not wait)
        self.ctx.claims.close()


# A feature with listeners adds its module here (one line).
LISTENERS = (questions, assistant, actions, schedules, home, clarify, verified, teaching)


def create_bot(
    askbase: Askbase, settings: Settings, client: WebClient | None = None, *, socket_mode: bool = False
) -> SlackBot:
    slack = settings.slack
    ctx = BotContext(
        askbase=askbase,
        settings=settings,
        conversations=Conversations(askbase),
        queue=AnswerQueue(slack.workers),
        claims=ClaimKeeper(askbase.state, lease_s=slack.claim_lease_s, wait_s=slack.claim_wait_s),
    )
    signing_secret = _secret(slack.signing_secret) or ""
    common: dict[str, Any] = {
        "name": "askbase",
        "signing_secret": signing_secret,
        "request_verification_enabled": not socket_mode,
        "process_before_response": False,
        "logger": logging.getLogger("askbase.bolt"),
        "listener_executor": ThreadPoolExecutor(LISTENER_THREADS, thread_name_prefix="askbase-listener"),
    }
    if oauth_configured(settings) and client is None:
        app = App(client=web_client(settings), oauth_settings=oauth_settings(settings, askbase), **common)
    else:
        client = client or web_client(settings, _secret(settings.slack.bot_token))
        app = App(client=client, token_verification_enabled=True, **common)
    install_middleware(app, ctx)  # replays, who is asking, questions claimed: once per request
    for module in LISTENERS:
        module.register(app, ctx)
    private_results.register(ctx)  # `/ask private [on|off]`
    return SlackBot(app=app, ctx=ctx)


def create_app(askbase: Askbase, settings: Settings, client: WebClient | None = None) -> App:
    return create_bot(askbase, settings, client).app


# ---------------------------------------------------------------- HTTP


def wsgi_app(bot: SlackBot) -> web.WSGIApp:
    """Bolt behind the request checks of bot/slack/http_server.py, with `/healthz` on the state database."""
    settings = bot.ctx.settings
    probe = StateProbe(bot.ctx.state, timeout_s=settings.slack.state_wait_s)
    return web.guarded(
        bot.app,
        signing_secret=_secret(settings.slack.signing_secret) or "",
        max_body_bytes=settings.slack.max_body_bytes,
        health=probe.check,
        events=bot.events,
    )


def http_server(bot: SlackBot, port: int, host: str = "0.0.0.0") -> WSGIServer:
    """The standard library's threaded server around `wsgi_app` (tests, and the bench's baseline)."""
    return web.threaded_server(wsgi_app(bot), port, host)


# ---------------------------------------------------------------- serve


def warm_up(askbase: Askbase, settings: Settings) -> None:
    """The default database warmed up (core/warm.py), and the charting library loaded when the
    `charts` extra is there: the first chart is drawn without that wait."""
    if warm_database(askbase, settings.default_db) and installed("charts"):
        import matplotlib.figure  # noqa: F401


def start_bot(settings: Settings, *, socket_mode: bool = False) -> tuple[Askbase, SlackBot]:
    """One process's app: warmed up, then finishing what dead processes left. Raises when Slack
    refuses the token (BoltError)."""
    askbase = Askbase(settings)
    warmer = threading.Thread(target=warm_up, args=(askbase, settings), name="askbase-warm-up", daemon=True)
    warmer.start()
    warmer.join(WARM_UP_S)
    try:
        bot = create_bot(askbase, settings, socket_mode=socket_mode)
    except Exception:
        askbase.close()
        raise
    bot.start_recovery()
    return askbase, bot


def stop_bot(askbase: Askbase, bot: SlackBot) -> None:
    """In-flight answers get SHUTDOWN_S to finish; a question cut off later is taken over elsewhere."""
    done = threading.Thread(target=bot.close, daemon=True)
    done.start()
    done.join(SHUTDOWN_S)
    askbase.close()


def preflight(settings: Settings) -> str | None:
    """Why the app cannot start (a refused token), checked once before any worker process forks."""
    token = _secret(settings.slack.bot_token)
    if not token or oauth_configured(settings):
        return None
    try:
        web_client(settings, token).auth_test()
    except SlackApiError as exc:
        return f"Slack refused the bot token ({exc.response.get('error')})."
    except Exception as exc:  # unreachable API base URL, DNS
        return f"Slack could not be reached: {type(exc).__name__}."
    return None


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
    port = args.port or slack.port
    if not socket_mode and (getattr(args, "server", None) or "gunicorn") == "gunicorn":
        problem = preflight(settings)
        if problem:
            print(f"Could not start the Slack app: {problem}", file=sys.stderr)
            return 2
        return _serve_gunicorn(settings, port)
    try:
        askbase, bot = start_bot(settings, socket_mode=socket_mode)
    except Exception as exc:  # BoltError: auth.test refused the token, etc. — say so without a trace
        print(f"Could not start the Slack app: {exc}", file=sys.stderr)
        return 2
    try:
        if socket_mode:
            from slack_bolt.adapter.socket_mode import SocketModeHandler

            log.info("Askbase on Slack (Socket Mode)")
            SocketModeHandler(bot.app, _secret(slack.app_token)).start()
        else:
            _serve_threaded(bot, port)
    except KeyboardInterrupt:
        pass
    finally:
        stop_bot(askbase, bot)
    return 0


def _serve_threaded(bot: SlackBot, port: int) -> None:
    """`--server threaded`: one process on the standard library's server (development, baselines)."""
    server = http_server(bot, port)

    def stop(_signum: int, _frame: Any) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    log.info("Askbase on Slack (threaded server): http://0.0.0.0:%d%s", port, EVENTS_PATH)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()


def _serve_gunicorn(settings: Settings, port: int) -> int:
    """gunicorn: `slack.http_processes` worker processes, each with its own warmed app."""
    slack = settings.slack

    def build() -> tuple[web.WSGIApp, Callable[[], None]]:
        askbase, bot = start_bot(settings)
        return wsgi_app(bot), lambda: stop_bot(askbase, bot)

    prepared = Askbase(settings)  # files every worker reads (the demo database, catalog caches) are
    warmer = threading.Thread(target=warm_up, args=(prepared, settings), name="askbase-warm-up", daemon=True)
    warmer.start()  # written once, here, before the fork, instead of by each worker at once
    warmer.join(WARM_UP_S)
    prepared.close()
    options = web.gunicorn_options(
        host="0.0.0.0",
        port=port,
        processes=slack.http_processes,
        threads=slack.http_threads,
        boot_s=WARM_UP_S,
        shutdown_s=SHUTDOWN_S,
    )
    log.info(
        "Askbase on Slack: http://0.0.0.0:%d%s (gunicorn, %d processes × %d threads)",
        port,
        EVENTS_PATH,
        options["workers"],
        options["threads"],
    )
    try:
        web.gunicorn_server(build, options).run()
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return 0
