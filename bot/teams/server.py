"""`python -m bot serve --teams [--port N]`: the Teams adapter's web process (aiohttp).

Routes:
  POST /api/messages   the Bot Connector's activities: a body over MAX_BODY is refused with 413
                       (by its Content-Length, before the token is looked at; a chunked one
                       as it is read); the token and what the activity claims are
                       checked (auth.py; 401 otherwise, with no outbound request), a message is
                       claimed (inflight.py, waited for at most `teams.ack_claim_s`), and the
                       request is answered — 202, or an invoke's fixed response — before anything
                       is handled. The SDK's adapter then runs the AgentApplication (app.py) on the
                       activity as a task of its own; answers follow through the Bot Connector.
                       Two kinds of invoke are answered with what their turn says instead (within
                       PRIVATE_S): a Details, CSV, 👍 or 👎 press, whose response is the card only
                       the presser sees, and Teams' own feedback buttons (private.py). A channel or
                       group chat message that does not mention the bot is not claimed as it
                       arrives: its turn first asks whether it continues a conversation (app.py).
  GET  /files/<token>  an answer's CSV or chart behind a signed link (files.py; a CSV's expires, a
                       chart's lives as long as its answer); the access log writes its path as
                       `/files/…`: the token is the link's whole secret
  GET  /healthz        for load balancers: 200 when the state database can be written, else 503
                       (core/state/health.py, as the Slack app's)

The default database is opened, its catalog loaded and its value index read before the port
opens, so the first question is answered as fast as the tenth. On SIGTERM the answers already
queued get SHUTDOWN_S to go out.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import logging
import re
import sys
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger
from microsoft_agents.activity import Activity, ActivityTypes
from microsoft_agents.authentication.msal import MsalConnectionManager
from microsoft_agents.hosting.core import TurnContext
from microsoft_agents.hosting.core.authorization import ClaimsIdentity
from pydantic import ValidationError

from bot.teams import clarify, files, links
from bot.teams.app import (
    INVOKE_ACK,
    REQUEST_BASE,
    answered_in_request,
    create_agent,
    handle_again,
    unaddressed,
)
from bot.teams.auth import TokenValidator, Trust, Unauthorized, authorize
from bot.teams.config import ANONYMOUS_WARNING, anonymous, app_id, sdk_configuration, startup_problem
from bot.teams.incoming import read
from bot.teams.inflight import ACKED, Arrival, let_go, recovery
from bot.teams.members import TeamMembers
from bot.teams.outbound import cloud_adapter
from bot.teams.proactive import Sender
from bot.teams.runtime import TeamsRuntime
from core.askbase import Askbase
from core.conversation.claims import ClaimKeeper, Recovery
from core.conversation.queue import AnswerQueue
from core.conversation.service import Conversations
from core.conversation.upkeep import StateProbe
from core.settings import Settings
from core.warm import warm_up

log = logging.getLogger("askbase.teams")

MESSAGES_PATH = "/api/messages"
WARM_UP_S = 45.0
SHUTDOWN_S = 20.0
SLOW_INVOKE = {
    "statusCode": 200,
    "type": "application/vnd.microsoft.activity.message",
    "value": "That took too long. Please press it again.",
}
MAX_BODY = 4 * 1024 * 1024  # an activity is a few KB; a card's submitted inputs at most a few more
SIGNED_PATH = re.compile(r"/files/[^/?#\s\"]+")  # a download link's path: its token is its secret
PRIVATE_S = 10.0  # longest a press answered for the presser alone is worked on before its response


class AccessLogger(AbstractAccessLogger):
    """aiohttp's access log, minus the secrets a URL can carry: a download link's token is logged
    as `/files/…`, the query string not at all (no route takes one), the Referer not at all (it
    may be a page under a signed link)."""

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        self.logger.info(
            '%s "%s %s HTTP/%d.%d" %d %d %.3fs "%s"',
            request.remote or "-",
            request.method,
            redact_path(request.path),
            request.version.major,
            request.version.minor,
            response.status,
            response.body_length,
            time,
            request.headers.get("User-Agent", "-"),
        )


def redact_path(path: str) -> str:
    return SIGNED_PATH.sub("/files/…", path)


class BadActivity(Exception):
    """The body is not an activity Askbase can handle (400)."""


async def activity_of(request: web.Request) -> Activity:
    """The request's activity, with what every handler needs (a type and a conversation id)."""
    try:
        activity = Activity.model_validate(await request.json())
    except (ValueError, ValidationError, UnicodeDecodeError) as exc:
        raise BadActivity(type(exc).__name__) from None
    if not activity.type or not activity.conversation or not activity.conversation.id:
        raise BadActivity("an activity needs a type and a conversation id")
    activity.request_id = str(uuid.uuid4())  # as the SDK's own request handling sets it
    return activity


@dataclass
class TeamsServer:
    app: web.Application
    runtime: TeamsRuntime


def request_base(request: web.Request) -> str:
    """The address the caller used (behind a proxy: X-Forwarded-Proto / -Host)."""
    scheme = request.headers.get("X-Forwarded-Proto", request.scheme).split(",")[0].strip()
    host = request.headers.get("X-Forwarded-Host", request.host).split(",")[0].strip()
    return f"{scheme}://{host}"


def create_server(
    askbase: Askbase, settings: Settings, clock: Callable[[], dt.datetime] | None = None
) -> TeamsServer:
    """The web application; `clock`: now, for download links (tests move it)."""
    config = sdk_configuration(settings)
    connections = MsalConnectionManager(**config)
    adapter = cloud_adapter(settings, connections)  # connectors only to allowed addresses (outbound.py)
    auth_config = connections.get_default_connection_configuration()
    validator = TokenValidator(auth_config, settings.teams.openid_metadata_url)
    trust = Trust.from_settings(settings)
    probe = StateProbe(askbase.state)

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
        conversations=Conversations(askbase),
        sender=Sender(adapter, app_id(settings), trust.service_urls),
        link_key=links.signing_key(settings),
        queue=AnswerQueue(settings.teams.workers, name="askbase-teams-answer"),
        claims=ClaimKeeper(
            askbase.state, lease_s=settings.teams.claim_lease_s, wait_s=settings.teams.claim_wait_s
        ),
        base_url=(settings.teams.public_url or "").rstrip("/") or None,
        members=TeamMembers(service_urls=trust.service_urls),
    )
    if clock is not None:
        runtime.clock = clock
    agent = create_agent(runtime, connections)

    async def messages(request: web.Request) -> web.StreamResponse:
        """Verify, claim (briefly), answer the request; handle the activity after (module doc)."""
        if (request.content_length or 0) > MAX_BODY:  # before the token: refusing it costs nothing
            log.info("refused a request to %s over %d bytes", MESSAGES_PATH, MAX_BODY)
            return web.json_response({"error": "request body too large"}, status=413)
        try:
            identity = await authorize(request.headers.get("Authorization"), auth_config, validator, trust)
            activity = await activity_of(request)
            trust.check_activity(identity, activity)
        except Unauthorized as exc:
            log.warning("refused a request to %s: %s", MESSAGES_PATH, exc)
            return web.json_response({"error": "Unauthorized"}, status=401)
        except BadActivity as exc:
            return web.json_response({"error": f"Bad request: {exc}"}, status=400)
        if runtime.turns_full:  # before the claim: the Bot Connector's resend is then taken afresh
            log.warning(
                "%d activities in hand; asking the Bot Connector to send one again", len(runtime.turns)
            )
            return web.json_response({"error": "busy"}, status=503, headers={"Retry-After": "1"})
        base = request_base(request)
        if answered_in_request(activity):
            return await answer_now(identity, activity, base)
        arrival: Arrival | None = None
        if activity.type == ActivityTypes.message and not unaddressed(read(activity)):
            arrival = Arrival.of(runtime, read(activity), activity, base)
            taken = await arrival.wait(settings.teams.ack_claim_s)
            if taken is not None and not taken.handle:
                log.info("activity %s is handled, or being handled; left alone", activity.id)
                return web.Response(status=202)
        runtime.start_turn(turn(identity, activity, arrival, base))
        if activity.type == ActivityTypes.invoke:
            return web.json_response(INVOKE_ACK, status=200)
        return web.Response(status=202)

    async def answer_now(identity: ClaimsIdentity, activity: Activity, base: str) -> web.StreamResponse:
        """Run the invoke's turn now and answer the request with its response (the card only the
        presser sees); too slow or failed: a short note instead, the turn left to finish."""
        REQUEST_BASE.set(base)
        work = asyncio.ensure_future(adapter.process_activity(identity, activity, agent.on_turn))
        try:
            response = await asyncio.wait_for(asyncio.shield(work), PRIVATE_S)
        except TimeoutError:
            log.warning("invoke %s took longer than %g s; answered with a note", activity.id, PRIVATE_S)
            runtime.turns.add(work)  # it finishes on its own; shutdown waits for it
            work.add_done_callback(runtime.turns.discard)
            return web.json_response(SLOW_INVOKE, status=200)
        except Exception:
            log.exception("invoke %s failed", activity.id)
            return web.json_response(SLOW_INVOKE, status=200)
        if response is None:
            return web.Response(status=200)
        return web.json_response(
            response.body if response.body is not None else {}, status=response.status or 200
        )

    async def turn(identity: ClaimsIdentity, activity: Activity, arrival: Arrival | None, base: str) -> None:
        """The activity's turn, after its request was answered: the claim settled, then the SDK's
        adapter runs the agent, as it would inside the request."""
        claimed: str | None = None
        if arrival is not None:
            taken = await arrival.settle()
            if not taken.handle:
                log.info("activity %s is handled, or being handled; left alone", activity.id)
                return
            ACKED.set(taken)
            claimed = arrival.key if taken.claimed else None
        REQUEST_BASE.set(base)
        try:
            await adapter.process_activity(identity, activity, agent.on_turn)
        except Exception:  # before the agent ran (no outbound token, no connector): it retries
            log.exception("activity %s could not be handled", activity.id)
            if claimed is not None:
                released: bool = await runtime.book(let_go, runtime, claimed)
                if released:
                    log.info("activity %s is left to the recovery sweep", activity.id)

    async def healthz(_request: web.Request) -> web.Response:
        """200 when the state database can be written now, else 503 (core/state/health.py)."""
        state = await asyncio.get_running_loop().run_in_executor(None, probe.check)
        body: dict[str, Any] = {"status": "ok" if state.ok else "unhealthy", "state_db": state.to_json()}
        return web.Response(
            status=200 if state.ok else 503, text=json.dumps(body), content_type="application/json"
        )

    app = web.Application(client_max_size=MAX_BODY)
    app.router.add_post(MESSAGES_PATH, messages)
    app.router.add_get(
        "/files/{token}", files.handler(runtime.conversations, runtime.link_key, runtime.queue, runtime.now)
    )
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
        runtime.queue.shutdown(wait=False, cancel_futures=True)
        runtime.claim_pool.shutdown(wait=False, cancel_futures=True)

    app.on_startup.append(recover)
    app.on_shutdown.append(finish)
    return TeamsServer(app=app, runtime=runtime)


def serve(args: argparse.Namespace, settings: Settings) -> int:
    problem = startup_problem(settings)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    if anonymous(settings):
        log.warning(ANONYMOUS_WARNING)
    askbase = Askbase(settings)
    warmer = threading.Thread(
        target=warm_up, args=(askbase, settings.default_db), name="askbase-warm-up", daemon=True
    )
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
        web.run_app(
            server.app,
            host="0.0.0.0",
            port=port,
            print=None,
            shutdown_timeout=SHUTDOWN_S + 5,
            access_log_class=AccessLogger,
        )
    except (KeyboardInterrupt, asyncio.CancelledError):
        pass
    finally:
        askbase.close()
    return 0
