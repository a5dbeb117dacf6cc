"""`python -m bot serve --teams [--port N]`: the Teams adapter's web process (aiohttp).

Routes:
  POST /api/messages   the Bot Connector's activities: JWT checked (auth.py), then the SDK's
                       CloudAdapter runs the AgentApplication (app.py); 202 at once, answers follow
  GET  /files/<token>  an answer's CSV or chart behind a signed, expiring link (files.py)
  GET  /healthz        for load balancers

The default database is opened, its catalog loaded and its value index read before the port
opens, so the first question is answered as fast as the tenth. On SIGTERM the answers already
queued get SHUTDOWN_S to go out.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from aiohttp import web
from microsoft_agents.activity import Activity
from microsoft_agents.authentication.msal import MsalConnectionManager
from microsoft_agents.hosting.aiohttp import CloudAdapter
from microsoft_agents.hosting.core import TurnContext

from bot.claims import ClaimKeeper, Recovery
from bot.teams import clarify, files, links
from bot.teams.app import REQUEST_BASE, create_agent, handle_again
from bot.teams.auth import TokenValidator, Unauthorized, authorize
from bot.teams.config import ANONYMOUS_WARNING, anonymous, app_id, sdk_configuration, startup_problem
from bot.teams.inflight import recovery
from bot.teams.proactive import Sender
from bot.teams.runtime import TeamsRuntime
from core.askbase import Askbase
from core.settings import Settings
from core.state import events

log = logging.getLogger("askbase.teams")

MESSAGES_PATH = "/api/messages"
WARM_UP_S = 45.0
SHUTDOWN_S = 20.0
MAX_BODY = 4 * 1024 * 1024  # an activity is a few KB; a card's submitted inputs at most a few more


@dataclass
class TeamsServer:
    app: web.Application
    runtime: TeamsRuntime


def request_base(request: web.Request) -> str:
    """The address the caller used (behind a proxy: X-Forwarded-Proto / -Host)."""
    scheme = request.headers.get("X-Forwarded-Proto", request.scheme).split(",")[0].strip()
    host = request.headers.get("X-Forwarded-Host", request.host).split(",")[0].strip()
    return f"{scheme}://{host}"


def create_server(askbase: Askbase, settings: Settings) -> TeamsServer:
    config = sdk_configuration(settings)
    connections = MsalConnectionManager(**config)
    adapter = CloudAdapter(connection_manager=connections)
    auth_config = connections.get_default_connection_configuration()
    validator = TokenValidator(auth_config, settings.teams.openid_metadata_url)

    async def on_turn_error(context: TurnContext, error: Exception) -> None:
        """Log it; tell the person something went wrong, never what (the SDK's default says)."""
        log.error("turn failed: %s", error, exc_info=error)
        try:
            await context.send_activity(
                Activity(type="message", text="Something went wrong on my side. Please try again.")
            )
        except Exception:
            log.debug("could not report the failed turn", exc_info=True)

    adapter.on_turn_error = on_turn_error
    runtime = TeamsRuntime(
        askbase=askbase,
        settings=settings,
        sender=Sender(adapter, app_id(settings)),
        link_key=links.signing_key(settings),
        executor=ThreadPoolExecutor(max(1, settings.teams.workers), thread_name_prefix="askbase-teams"),
        claims=ClaimKeeper(
            askbase.state, lease_s=settings.teams.claim_lease_s, wait_s=settings.teams.claim_wait_s
        ),
        base_url=(settings.teams.public_url or "").rstrip("/") or None,
    )
    agent = create_agent(runtime, connections)

    async def messages(request: web.Request) -> web.StreamResponse:
        try:
            identity = await authorize(request.headers.get("Authorization"), auth_config, validator)
        except Unauthorized:
            return web.json_response({"error": "Unauthorized"}, status=401)
        request["claims_identity"] = identity
        token = REQUEST_BASE.set(request_base(request))
        try:
            response = await adapter.process(request, agent)
        finally:
            REQUEST_BASE.reset(token)
        return response or web.Response(status=202)

    async def healthz(_request: web.Request) -> web.Response:
        return web.Response(text="ok")

    app = web.Application(client_max_size=MAX_BODY)
    app.router.add_post(MESSAGES_PATH, messages)
    app.router.add_get("/files/{token}", files.handler(askbase, runtime.link_key, runtime.executor))
    app.router.add_get("/healthz", healthz)

    sweeps: list[Recovery] = []

    async def recover(_app: web.Application) -> None:
        """Questions a stopped process left in flight: finished or apologised for (inflight.py);
        clarifying questions whose time is up: expired, their cards updated (clarify.py)."""
        loop = asyncio.get_running_loop()
        sweeps.append(recovery(runtime, loop, handle_again).start())
        sweeps.append(clarify.sweeper(runtime, loop).start())

    async def finish(_app: web.Application) -> None:
        for sweep in sweeps:
            sweep.stop()
        await runtime.drain(SHUTDOWN_S)
        runtime.claims.close()
        runtime.executor.shutdown(wait=False, cancel_futures=True)

    app.on_startup.append(recover)
    app.on_shutdown.append(finish)
    return TeamsServer(app=app, runtime=runtime)


def warm_up(askbase: Askbase, settings: Settings) -> None:
    """Open the state DB and the default database; load its catalog, join graph and value index."""
    start = time.perf_counter()
    try:
        events.prune(askbase.state)
        db = askbase.database(settings.default_db)
        db.catalog  # noqa: B018
        db.graph  # noqa: B018
        db.values  # noqa: B018
        log.info("warm: %s ready in %.1f s", db.name, time.perf_counter() - start)
    except Exception:  # the first question will report what is wrong, in the chat
        log.exception("warm-up of '%s' failed", settings.default_db)


def serve(args: argparse.Namespace, settings: Settings) -> int:
    problem = startup_problem(settings)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    if anonymous(settings):
        log.warning(ANONYMOUS_WARNING)
    askbase = Askbase(settings)
    warmer = threading.Thread(target=warm_up, args=(askbase, settings), name="askbase-warm-up", daemon=True)
    warmer.start()
    warmer.join(WARM_UP_S)
    try:
        server = create_server(askbase, settings)
    except Exception as exc:  # the SDK refuses its configuration (e.g. certificate auth without a file)
        print(f"Could not start the Teams adapter: {exc}", file=sys.stderr)
        askbase.close()
        return 2
    port = getattr(args, "port", None) or settings.teams.port
    log.info("Askbase on Teams: http://0.0.0.0:%d%s", port, MESSAGES_PATH)
    try:
        web.run_app(server.app, host="0.0.0.0", port=port, print=None, shutdown_timeout=SHUTDOWN_S + 5)
    except (KeyboardInterrupt, asyncio.CancelledError):
        pass
    finally:
        askbase.close()
    return 0
