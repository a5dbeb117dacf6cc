"""The HTTP side of the Slack app: request hygiene in front of Bolt, `/healthz`, and the servers.

What reaches Bolt has been checked here first, in this order, so nothing unauthenticated costs
more than a header read and nothing unauthenticated is ever logged:

1. size: a body over `max_body_bytes` is refused with 413 before it is read (Content-Length) or
   as soon as it grows past the limit (chunked); the rest of it is then read and dropped (at
   most DRAIN_BYTES, for DRAIN_S), since a client that sends its whole body before it reads the
   answer — most do — would otherwise have the connection reset under it and never see the 413;
2. signature: no `X-Slack-Signature`/`X-Slack-Request-Timestamp`, or a wrong or stale one, is
   401 — Slack's v0 HMAC, checked with slack_sdk's `SignatureVerifier` on the raw bytes;
3. shape: a signed body that is not UTF-8, JSON or a form (only a holder of the secret can send
   one) is 400.

A signed Events API callback is then acknowledged at once (200, empty — all Slack ever reads
from an event's response) and handed to Bolt on `events` threads: Bolt's middleware and listener
matching cost about a millisecond per event, which a burst of 200 would otherwise queue in front
of the last ack. Everything else (slash commands, interactions, whose ack carries a reply; URL
verification) is dispatched on the request thread. Bolt verifies the signature again (cheap).
Event work waits for a lull in the requests (`Lull`), so a burst's acks do not share the CPU with
the answers they start. An exception anywhere becomes a plain 500 with the traceback in our log
only. `/healthz` reports whether the state database can be written (core/state/health.py): 200
with `"state_db": {"ok": true}`, else 503 saying what failed.

Request lines are logged (at DEBUG) by method, path and status only, and the path only as far
as its first segment when it is not one of ours (`loggable_path`): never a query string, nor the
rest of a path — a signed link (`/files/<token>`) sent to the wrong server, an OAuth `?code=`, a
token someone pasted into a URL stay out of the log. Bodies are never logged.

Servers: `gunicorn_server` (production: gunicorn with gthread workers, a listen backlog of 2048,
`processes` × `threads`, each worker process building its own app after the fork) and
`threaded_server` (the standard library's threading WSGI server: tests in one process, and the
baseline `core.bench slack-load` measures against).
"""

from __future__ import annotations

import io
import json
import logging
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor
from socketserver import ThreadingMixIn
from typing import Any
from urllib.parse import parse_qs
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from gunicorn.app.base import BaseApplication
from slack_bolt import App
from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_sdk.signature import SignatureVerifier

from core.conversation.upkeep import StateHealth

log = logging.getLogger("askbase.http")

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
EVENTS_PATH = "/slack/events"
HEALTH_PATH = "/healthz"
OAUTH_PATHS = ("/slack/install", "/slack/oauth_redirect")  # bot/slack/app.py, when OAuth is configured
CHUNK = 64 * 1024
DRAIN_BYTES = 64 * 1024 * 1024  # a refused body up to this size is read and dropped after its 413
DRAIN_S = 10.0  # and for no longer than this


def loggable_path(path: str | None, known: Iterable[str] = (EVENTS_PATH, HEALTH_PATH, *OAUTH_PATHS)) -> str:
    """What of a request's path may be logged: our own routes whole; any other path only up to its
    first segment (`/files/…`), since the rest may be a signed link's token; never the query."""
    bare = (path or "").split("?", 1)[0].split("#", 1)[0] or "/"
    if bare in known:
        return bare
    head, _, rest = bare.lstrip("/").partition("/")
    return f"/{head[:40]}/…" if rest else f"/{head[:40]}"


def _respond(
    start_response: Callable[..., Any], status: str, body: str | bytes, content_type: str = "text/plain"
) -> list[bytes]:
    data = body.encode() if isinstance(body, str) else body
    start_response(
        status, [("Content-Type", f"{content_type}; charset=utf-8"), ("Content-Length", str(len(data)))]
    )
    return [data]


def _read_body(environ: dict[str, Any], limit: int) -> bytes | None:
    """The request body, or None when it is larger than `limit` (read no further than limit + 1)."""
    stream = environ.get("wsgi.input")
    declared = environ.get("CONTENT_LENGTH") or ""
    if declared.strip():
        try:
            length = int(declared)
        except ValueError:
            return b""
        if length > limit:
            return None
        return stream.read(length) if stream is not None and length > 0 else b""
    if stream is None or "chunked" not in (environ.get("HTTP_TRANSFER_ENCODING") or "").lower():
        return b""
    parts: list[bytes] = []
    size = 0
    while size <= limit:
        chunk = stream.read(min(CHUNK, limit + 1 - size))
        if not chunk:
            break
        parts.append(chunk)
        size += len(chunk)
    return None if size > limit else b"".join(parts)


def _too_large(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterator[bytes]:
    """413, then what is left of the body read and dropped, so the connection is closed with
    nothing unread and the client gets the 413 rather than a reset."""
    yield from _respond(start_response, "413 Payload Too Large", "request body too large")
    stream = environ.get("wsgi.input")
    if stream is None:
        return
    try:
        declared = int(environ.get("CONTENT_LENGTH") or -1)
    except ValueError:
        return
    # without a length, only a server that ends the input at the body's end (gunicorn's chunked
    # bodies: wsgi.input_terminated) may be read to its end; the standard library's would block
    # (a declared body over the limit was not read at all; a chunked one, up to the limit)
    left = declared if declared >= 0 else DRAIN_BYTES if environ.get("wsgi.input_terminated") else 0
    if left > DRAIN_BYTES:
        return
    deadline = time.monotonic() + DRAIN_S
    try:
        while left > 0 and time.monotonic() < deadline:
            chunk = stream.read(min(CHUNK, left))
            if not chunk:
                return
            left -= len(chunk)
    except Exception:  # the client went away: nothing left to spare it
        return


def _discard(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable[[bytes], object]:
    """start_response for a request already answered: Bolt's reply to an acknowledged event goes nowhere."""
    return lambda _data: None


def _payload_type(body: bytes, content_type: str) -> str | None:
    """The payload's `type` when the body parses the way Bolt will parse it (JSON, or a form whose
    `payload` is JSON; "" for a slash command's plain form), None when it does not."""
    try:
        text = body.decode("utf-8")
        if "application/json" in content_type:
            data = json.loads(text)
        else:
            form = parse_qs(text, strict_parsing=bool(text), keep_blank_values=True)
            if "payload" not in form:
                return "" if form else None
            data = json.loads(form["payload"][0])
    except (UnicodeDecodeError, ValueError):
        return None
    return str(data.get("type") or "") if isinstance(data, dict) else None


class Lull:
    """Acks before work: events acknowledged in a burst start their work once the burst has passed.

    Every request `touch`es it; an event's dispatch `wait`s until no request has arrived for
    `quiet_s`, or `most_s` at the longest — so under a burst the acks do not share the CPU with
    the work they started, and under steady traffic an answer starts at most `most_s` later.
    """

    def __init__(self, quiet_s: float = 0.02, most_s: float = 0.25) -> None:
        self.quiet_s = quiet_s
        self.most_s = most_s
        self._last = 0.0

    def touch(self) -> None:
        self._last = time.monotonic()

    def wait(self) -> None:
        until = time.monotonic() + self.most_s
        while (now := time.monotonic()) < until and now - self._last < self.quiet_s:
            time.sleep(self.quiet_s / 2)


def guarded(
    app: App,
    *,
    signing_secret: str,
    max_body_bytes: int,
    health: Callable[[], StateHealth] | None = None,
    events: Executor | None = None,
    path: str = EVENTS_PATH,
) -> WSGIApp:
    """Bolt's WSGI handler behind the size, signature and shape checks, plus `/healthz`; events
    acknowledged before Bolt runs when `events` is given."""
    bolt = SlackRequestHandler(app, path=path)
    verifier = SignatureVerifier(signing_secret)
    lull = Lull()

    def dispatch_later(environ: dict[str, Any]) -> None:
        lull.wait()
        try:
            bolt(environ, _discard)
        except Exception:
            log.exception("event dispatch failed")

    def signed(body: bytes, timestamp: str, signature: str) -> bool:
        return timestamp.isdigit() and bool(signature) and verifier.is_valid(body, timestamp, signature)

    def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        try:
            return checked(environ, start_response)
        except Exception:  # a bug here or in Bolt: a plain 500, the traceback in our log only
            log.exception("request to %s failed", loggable_path(environ.get("PATH_INFO")))
            return _respond(start_response, "500 Internal Server Error", "internal error")

    def checked(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        where = environ.get("PATH_INFO") or ""
        method = environ.get("REQUEST_METHOD") or "GET"
        if where == HEALTH_PATH:
            return _health(start_response, health)
        if method == "POST" and where == path:
            lull.touch()
            peer = environ.get("REMOTE_ADDR", "?")
            body = _read_body(environ, max_body_bytes)
            if body is None:
                log.info("refused a request over %d bytes from %s", max_body_bytes, peer)
                return _too_large(environ, start_response)
            timestamp = environ.get("HTTP_X_SLACK_REQUEST_TIMESTAMP") or ""
            signature = environ.get("HTTP_X_SLACK_SIGNATURE") or ""
            if not signed(body, timestamp, signature):
                # never the body: whoever sent it is not Slack, and it may be large or hostile
                log.info("refused an unsigned or wrongly signed request (%d bytes) from %s", len(body), peer)
                return _respond(start_response, "401 Unauthorized", "invalid signature")
            kind = _payload_type(body, environ.get("CONTENT_TYPE") or "")
            if kind is None:
                log.warning("refused a signed request whose body does not parse (%d bytes)", len(body))
                return _respond(start_response, "400 Bad Request", "malformed body")
            environ = {**environ, "wsgi.input": io.BytesIO(body), "CONTENT_LENGTH": str(len(body))}
            if events is not None and kind == "event_callback":
                try:
                    events.submit(
                        dispatch_later, {k: v for k, v in environ.items() if not k.startswith("gunicorn.")}
                    )
                except RuntimeError:  # shutting down: no 200, so Slack retries it elsewhere
                    return _respond(start_response, "503 Service Unavailable", "shutting down")
                return _respond(start_response, "200 OK", "")
        return list(bolt(environ, start_response))

    return application


def _health(start_response: Callable[..., Any], health: Callable[[], StateHealth] | None) -> list[bytes]:
    state = health() if health is not None else None
    ok = state is None or state.ok
    body = json.dumps({"status": "ok" if ok else "unhealthy", "state_db": state.to_json() if state else None})
    return _respond(start_response, "200 OK" if ok else "503 Service Unavailable", body, "application/json")


# ---------------------------------------------------------------- servers


class _ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True


class _QuietHandler(WSGIRequestHandler):
    """The standard library logs the whole request line (query string included) and echoes a bad
    one in its error message; here a request is its method, `loggable_path` and status."""

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        log.debug("%s %s %s %s", self.address_string(), self.command, loggable_path(self.path), code)

    def log_message(self, format: str, *args: Any) -> None:
        # only log_error calls this now ("code %d, message %s"): the code, never the line it quotes
        log.debug("%s refused a request: %s", self.address_string(), args[0] if args else "?")


def threaded_server(application: WSGIApp, port: int, host: str = "0.0.0.0") -> WSGIServer:
    """The standard library's server: a thread per request, listen backlog 5. Tests and baselines."""
    return make_server(
        host, port, application, server_class=_ThreadingWSGIServer, handler_class=_QuietHandler
    )


class GunicornServer(BaseApplication):
    """gunicorn run from our own CLI: `build` runs in every worker process after the fork and
    returns the WSGI app and what to call when that worker stops (finish answers, close pools)."""

    def __init__(self, build: Callable[[], tuple[WSGIApp, Callable[[], None]]], options: dict[str, Any]):
        self.build = build
        self.options = options
        self._close: Callable[[], None] | None = None
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            if key in self.cfg.settings:  # settings newer gunicorns added are skipped on older ones
                self.cfg.set(key, value)
        self.cfg.set("worker_exit", self._worker_exit)

    def load(self) -> WSGIApp:  # type: ignore[override]  # gunicorn's stubs: environ a MutableMapping, not a dict
        application, self._close = self.build()
        return application

    def _worker_exit(self, _server: Any, _worker: Any) -> None:
        if self._close is not None:
            self._close()


def gunicorn_options(
    *, host: str, port: int, processes: int, threads: int, boot_s: float, shutdown_s: float
) -> dict[str, Any]:
    return {
        "bind": f"{host}:{port}",
        "workers": max(1, processes),
        "worker_class": "gthread",
        "threads": max(1, threads),
        "backlog": 2048,  # a burst of Slack events waits in the kernel's queue instead of being reset
        "timeout": int(boot_s + 30),  # gthread workers heartbeat from their loop; this bounds a stuck boot
        "graceful_timeout": int(shutdown_s + 5),  # SIGTERM: in-flight answers get shutdown_s to finish
        "keepalive": 5,
        "accesslog": None,  # request lines only at DEBUG through our own logger; never bodies
        "proc_name": "askbase-web",
        "control_socket_disable": True,  # gunicorn 24+: one fixed socket path would be shared by every instance
    }


def gunicorn_server(
    build: Callable[[], tuple[WSGIApp, Callable[[], None]]], options: dict[str, Any]
) -> GunicornServer:
    return GunicornServer(build, options)
