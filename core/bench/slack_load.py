"""`python -m core.bench slack-load`: a burst of signed Slack events against `serve --http`.

Loopback only, bounded in count and time. The app runs exactly as deployed (`python -m bot serve
--http`, its own processes) against the fake Slack Web API (core/bench/fakes/slack_api.py, so this
runs from a checkout) in keyword mode (no LLM). Each server is measured in the same run:

- `threaded`: the standard library's threading WSGI server, one process (the server before
  issue 18, kept as `serve --http --server threaded`) — the baseline;
- `gunicorn`: `serve --http` today, `--processes` × `--threads`.

For each: N signed `app_mention` events sent at the same moment on N fresh connections; what
Slack would see (HTTP status, or a reset / refused / cut-off connection) and how long each ack
took; then whether every question got exactly one answer in its thread (no answer, two answers,
or a "busy" reply are counted apart); and the server's resident memory (all its processes)
before and after the burst.

With `--postgres URL` (or ASKBASE_TEST_POSTGRES_URL set), a second phase runs the Procfile twice
over on one fresh PostgreSQL state database — 2 web processes (gunicorn, 2 worker processes each)
and 2 scheduler workers (`python -m bot worker`) — delivers every event to both web processes at
once, as Slack's retry landing on another instance behind a load balancer, and counts questions
answered exactly once.

The servers run on their default settings: a burst waits in the answering queue, in order, and
is answered (core/conversation/queue.py; "queued — N ahead of you" while a full round waits).
"busy" is said only when the state database cannot take a question's claim; the `busy` column
counts those, and is 0 on a healthy one.
"""

from __future__ import annotations

import argparse
import errno
import hashlib
import hmac
import json
import multiprocessing
import os
import selectors
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import make_url

from core.bench.fakes.slack_api import FakeSlack
from core.demo import ensure_demo

ROOT = Path(__file__).resolve().parents[2]
SECRET = "bench-signing-secret"
TOKEN = "xoxb-bench-token"
QUESTION = "how many clients are there?"
ACK_P95_TARGET_MS = 100.0
SLACK_ACK_S = 3.0
STALL_S = 20.0


# ---------------------------------------------------------------- the server under test


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_kb(root_pid: int) -> int:
    """Resident memory of a process and all its descendants (gunicorn's master and workers)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    total, todo = 0, [root_pid]
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total


@dataclass
class Server:
    name: str
    port: int
    proc: subprocess.Popen[bytes]
    log: Path

    @classmethod
    def start(cls, name: str, server: str, env: dict[str, str], workdir: Path) -> Server:
        port = free_port()
        log = workdir / f"{name}.log"
        with log.open("w") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "bot", "serve", "--http", "--server", server, "--port", str(port)],
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        running = cls(name, port, proc, log)
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as r:
                    if r.status == 200:
                        return running
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                running.stop()
                raise RuntimeError(f"{name} did not start; see {log}")
            time.sleep(0.1)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


# ---------------------------------------------------------------- the burst


def event_request(port: int, n: int, channel: str, ts: str, event_id: str, retry: int | None = None) -> bytes:
    body = json.dumps(
        {
            "token": "legacy",
            "team_id": "T0001",
            "api_app_id": "A0001",
            "type": "event_callback",
            "event_id": event_id,
            "event_time": int(time.time()),
            "authorizations": [{"team_id": "T0001", "user_id": "UBOT", "is_bot": True}],
            "event": {
                "type": "app_mention",
                "user": f"U{n:05d}",
                "text": f"<@UBOT> {QUESTION}",
                "ts": ts,
                "channel": channel,
                "event_ts": ts,
                "team": "T0001",
            },
        }
    ).encode()
    stamp = str(int(time.time()))
    sig = "v0=" + hmac.new(SECRET.encode(), f"v0:{stamp}:".encode() + body, hashlib.sha256).hexdigest()
    headers = [
        "POST /slack/events HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Content-Type: application/json",
        f"Content-Length: {len(body)}",
        f"X-Slack-Request-Timestamp: {stamp}",
        f"X-Slack-Signature: {sig}",
        "Connection: close",
    ]
    if retry is not None:
        headers += [f"X-Slack-Retry-Num: {retry}", "X-Slack-Retry-Reason: http_timeout"]
    return ("\r\n".join(headers) + "\r\n\r\n").encode() + body


@dataclass
class Delivery:
    status: int | None = None  # None: reset, refused, cut off or timed out
    error: str = ""
    ms: float = 0.0


@dataclass
class _Conn:
    sock: socket.socket
    request: bytes
    began: float
    sent: int = 0
    response: bytes = b""


def burst(requests: Sequence[tuple[int, bytes]], timeout: float) -> list[Delivery]:
    """Every request on its own new connection, all started together; each timed from its connect
    to its response's status line. One thread of non-blocking sockets keeps the client's own cost
    per request to a few microseconds, so the figures are the server's."""
    selector = selectors.DefaultSelector()
    results: list[Delivery] = [Delivery() for _ in requests]
    for i, (port, request) in enumerate(requests):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        conn = _Conn(sock, request, time.perf_counter())
        err = sock.connect_ex(("127.0.0.1", port))
        if err not in (0, errno.EINPROGRESS):
            results[i] = Delivery(error=errno.errorcode.get(err, str(err)))
            sock.close()
            continue
        selector.register(sock, selectors.EVENT_WRITE, (i, conn))
    deadline = time.perf_counter() + timeout
    while selector.get_map() and time.perf_counter() < deadline:
        for key, mask in selector.select(timeout=0.05):
            i, conn = key.data
            try:
                if mask & selectors.EVENT_WRITE:
                    conn.sent += conn.sock.send(conn.request[conn.sent :])
                    if conn.sent == len(conn.request):
                        selector.modify(conn.sock, selectors.EVENT_READ, (i, conn))
                    continue
                chunk = conn.sock.recv(65536)
                if chunk:
                    conn.response += chunk
                    if b"\r\n" not in conn.response:
                        continue
                    results[i] = Delivery(
                        status=int(conn.response.split(b" ", 2)[1]),
                        ms=(time.perf_counter() - conn.began) * 1000,
                    )
                else:
                    results[i] = Delivery(error="closed without a response")
            except (OSError, ValueError, IndexError) as exc:
                results[i] = Delivery(error=type(exc).__name__)
            selector.unregister(conn.sock)
            conn.sock.close()
    for key in list(selector.get_map().values()):
        i, conn = key.data
        results[i] = Delivery(error="timeout")
        selector.unregister(conn.sock)
        conn.sock.close()
    return results


# ---------------------------------------------------------------- what Slack saw


@dataclass(frozen=True)
class Seen:
    """One message of ours as Slack keeps it: where it is and what it shows."""

    channel: str
    ts: str
    thread_ts: str | None
    text: str
    result: list[list[str]] | None  # the rows an answer shows (its table, or its sentence's value)


def _serve_fake_slack(conn: Connection) -> None:
    """The fake Slack API in its own process, so its work does not slow the clock that measures acks."""
    fake = FakeSlack()
    fake._server.socket.listen(1024)  # the fake API must not be what resets connections
    fake.start()
    conn.send(fake.base_url)
    while conn.recv() == "snapshot":
        with fake._lock:
            seen = [
                Seen(m.channel, m.ts, m.thread_ts, m.all_text(), m.result()) for m in fake.messages.values()
            ]
        conn.send(seen)
    fake.stop()


class SlackProcess:
    def __init__(self) -> None:
        self._conn, child = multiprocessing.Pipe()
        self._proc = multiprocessing.get_context("fork").Process(
            target=_serve_fake_slack, args=(child,), daemon=True
        )
        self._proc.start()
        self.base_url: str = self._conn.recv()

    def messages(self) -> list[Seen]:
        self._conn.send("snapshot")
        return list(self._conn.recv())

    def close(self) -> None:
        self._conn.send("stop")
        self._proc.join(10)


@dataclass
class Tally:
    once: int = 0
    missing: int = 0
    twice: int = 0
    busy: int = 0
    wrong: int = 0


def tally(slack: SlackProcess, threads: Sequence[tuple[str, str]]) -> Tally:
    t = Tally()
    by_thread: dict[tuple[str, str], list[Seen]] = {}
    for m in slack.messages():
        by_thread.setdefault((m.channel, m.thread_ts or m.ts), []).append(m)
    for channel, ts in threads:
        ours = by_thread.get((channel, ts), [])
        answers = [m for m in ours if m.result]
        if any("answering a lot of questions" in m.text for m in ours):
            t.busy += 1
        elif len(ours) > 1 or len(answers) > 1:
            t.twice += 1
        elif not answers:
            t.missing += 1
        elif answers[0].result != [["300"]]:
            t.wrong += 1
        else:
            t.once += 1
    return t


def wait_answered(slack: SlackProcess, threads: Sequence[tuple[str, str]], timeout: float) -> float:
    """Seconds until every thread has an answer (or a busy reply); gives up at `timeout`, or when
    nothing new has been answered for STALL_S (requests that were reset are never answered)."""
    began = progress = time.monotonic()
    last = len(threads) + 1
    while (now := time.monotonic()) - began < timeout and now - progress < STALL_S:
        missing = tally(slack, threads).missing
        if missing == 0:
            return now - began
        if missing < last:
            last, progress = missing, now
        time.sleep(0.5)
    return progress - began


@dataclass
class Result:
    name: str
    events: int
    deliveries: list[Delivery] = field(default_factory=list)
    tally: Tally = field(default_factory=Tally)
    answered_s: float = 0.0
    rss_before_mb: float = 0.0
    rss_after_mb: float = 0.0

    @property
    def resets(self) -> int:
        return sum(1 for d in self.deliveries if d.status is None)

    @property
    def late(self) -> int:
        """Acks Slack would not have waited for (3 s): it retries those events."""
        return sum(1 for d in self.deliveries if d.status is not None and d.ms > SLACK_ACK_S * 1000)

    @property
    def non_200(self) -> int:
        return sum(1 for d in self.deliveries if d.status not in (None, 200))

    def ack_ms(self, q: float) -> float:
        ok = sorted(d.ms for d in self.deliveries if d.status == 200)
        if not ok:
            return float("nan")
        return ok[min(len(ok) - 1, round(q * (len(ok) - 1)))]

    def to_json(self) -> dict[str, Any]:
        return {
            "server": self.name,
            "events": self.events,
            "resets": self.resets,
            "late_over_3s": self.late,
            "non_200": self.non_200,
            "errors": sorted({d.error for d in self.deliveries if d.error}),
            "ack_ms": {"p50": self.ack_ms(0.5), "p95": self.ack_ms(0.95), "max": self.ack_ms(1.0)},
            "answered_once": self.tally.once,
            "missing": self.tally.missing,
            "twice": self.tally.twice,
            "busy": self.tally.busy,
            "wrong": self.tally.wrong,
            "all_answered_s": round(self.answered_s, 1),
            "rss_mb": {
                "before": self.rss_before_mb,
                "after": self.rss_after_mb,
                "growth": round(self.rss_after_mb - self.rss_before_mb, 1),
            },
        }


def run_burst(
    name: str,
    servers: Sequence[Server],
    slack: SlackProcess,
    events: int,
    *,
    tag: str,
    duplicate: bool,
    timeout: float,
) -> Result:
    """`events` questions at once; with `duplicate`, each also to the next server as a retry."""
    threads: list[tuple[str, str]] = []
    requests: list[tuple[int, bytes]] = []
    for n in range(events):
        channel, ts, event_id = f"C{tag}{n:04d}", f"{1800000000 + n}.{n:06d}", f"Ev{tag}{n:06d}"
        threads.append((channel, ts))
        first = servers[n % len(servers)]
        requests.append((first.port, event_request(first.port, n, channel, ts, event_id)))
        if duplicate:
            other = servers[(n + 1) % len(servers)]
            requests.append((other.port, event_request(other.port, n, channel, ts, event_id, retry=1)))
    result = Result(name, events)
    result.rss_before_mb = round(sum(rss_kb(s.proc.pid) for s in servers) / 1024, 1)
    result.deliveries = burst(requests, timeout=10.0)
    result.answered_s = wait_answered(slack, threads, timeout)
    time.sleep(1.0)  # a duplicate answer, had one been started, lands by now
    result.tally = tally(slack, threads)
    result.rss_after_mb = round(sum(rss_kb(s.proc.pid) for s in servers) / 1024, 1)
    return result


def warm(server: Server, slack: SlackProcess, tag: str) -> None:
    """One question first, so both servers start the burst with caches and the value index loaded."""
    channel, ts = f"C{tag}WARM", "1799999999.000001"
    burst([(server.port, event_request(server.port, 0, channel, ts, f"Ev{tag}WARM"))], 10.0)
    wait_answered(slack, [(channel, ts)], 60)


# ---------------------------------------------------------------- main


def base_env(slack: SlackProcess, var: Path, state_url: str, **settings: str) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SLACK_", "ASKBASE_"))}
    return {
        **keep,
        "SLACK_API_BASE_URL": slack.base_url,
        "SLACK_BOT_TOKEN": TOKEN,
        "SLACK_SIGNING_SECRET": SECRET,
        "ASKBASE_VAR_DIR": str(var),
        "ASKBASE_STATE_URL": state_url,
        "ASKBASE_CONFIG": str(var / "no-config.yaml"),
        "ASKBASE_LOG_LEVEL": "WARNING",
        **settings,
    }


def postgres_database(url: str) -> tuple[str, sa.Engine, str]:
    """A fresh database on the server at `url` for the state; (its URL, an admin engine, its name)."""
    parsed = make_url(url)
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    admin = sa.create_engine(parsed).execution_options(isolation_level="AUTOCOMMIT")
    name = f"askbase_load_{uuid.uuid4().hex[:8]}"
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    return parsed.set(database=name).render_as_string(hide_password=False), admin, name


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m core.bench slack-load", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--events", type=int, default=200, help="simultaneous events per burst (max 1000)")
    parser.add_argument("--processes", type=int, default=2, help="gunicorn worker processes")
    parser.add_argument("--threads", type=int, default=8, help="request threads per gunicorn process")
    parser.add_argument("--no-baseline", action="store_true", help="skip the threaded-server baseline")
    parser.add_argument(
        "--postgres", default=os.environ.get("ASKBASE_TEST_POSTGRES_URL"), help="state server for phase 2"
    )
    parser.add_argument("--pg-events", type=int, default=100, help="events in the PostgreSQL phase")
    parser.add_argument("--timeout", type=float, default=240, help="longest wait for the answers of a burst")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    parser.add_argument("--keep", action="store_true", help="keep the servers' logs (printed path)")
    args = parser.parse_args(argv)
    events = max(1, min(args.events, 1000))

    workdir = Path(tempfile.mkdtemp(prefix="askbase-load-"))
    var = workdir / "var"
    ensure_demo(var)
    results: list[Result] = []
    phase2: Result | None = None
    slack = SlackProcess()
    try:
        plans: list[tuple[str, str, dict[str, str]]] = (
            [] if args.no_baseline else [("threaded", "threaded", {})]
        )
        plans.append(
            (
                f"gunicorn {args.processes}×{args.threads}",
                "gunicorn",
                {"WEB_CONCURRENCY": str(args.processes), "ASKBASE_SLACK__HTTP_THREADS": str(args.threads)},
            )
        )
        for i, (name, kind, extra) in enumerate(plans):
            state = f"sqlite:///{workdir / f'state-{i}.sqlite'}"
            server = Server.start(f"server-{i}", kind, base_env(slack, var, state, **extra), workdir)
            try:
                warm(server, slack, f"W{i}")
                print(f"{name}: {events} simultaneous events…", file=sys.stderr, flush=True)
                results.append(
                    run_burst(
                        name, [server], slack, events, tag=f"L{i}", duplicate=False, timeout=args.timeout
                    )
                )
            finally:
                server.stop()
        if args.postgres:
            state, admin, dbname = postgres_database(args.postgres)
            servers: list[Server] = []
            schedulers: list[subprocess.Popen[bytes]] = []
            try:
                env = base_env(slack, var, state, WEB_CONCURRENCY="2")
                servers = [Server.start(f"pg-web-{k}", "gunicorn", env, workdir) for k in range(2)]
                for k in range(2):  # the Procfile's `worker:` twice, on the same state, as deployed
                    with (workdir / f"pg-worker-{k}.log").open("w") as out:
                        schedulers.append(
                            subprocess.Popen(
                                [sys.executable, "-m", "bot", "worker"],
                                cwd=ROOT,
                                env=env,
                                stdout=out,
                                stderr=subprocess.STDOUT,
                                start_new_session=True,
                            )
                        )
                for k, s in enumerate(servers):
                    warm(s, slack, f"P{k}")
                n = max(1, min(args.pg_events, 500))
                print(
                    f"PostgreSQL state, 2 web processes × 2 gunicorn workers + 2 scheduler workers: {n} events, each to both…",
                    file=sys.stderr,
                    flush=True,
                )
                phase2 = run_burst(
                    "PostgreSQL: 2 web × 2, 2 schedulers",
                    servers,
                    slack,
                    n,
                    tag="PG",
                    duplicate=True,
                    timeout=args.timeout,
                )
            finally:
                for s in servers:
                    s.stop()
                for proc in schedulers:
                    os.killpg(proc.pid, signal.SIGTERM)
                    proc.wait(timeout=60)
                with admin.connect() as conn:
                    conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)'))
                admin.dispose()
    finally:
        slack.close()
    if args.keep:
        print(f"logs kept in {workdir}", file=sys.stderr)
    else:
        shutil.rmtree(workdir, ignore_errors=True)

    report = {
        "events": events,
        "results": [r.to_json() for r in results],
        "postgres": phase2.to_json() if phase2 else None,
    }
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"slack-load: {events} simultaneous signed app_mention events, keyword mode, fake Slack API")
    print(f"{'server':34} {'failed':>6} {'>3 s':>5} {'non200':>6} {'p50 ms':>7} {'p95 ms':>7} {'max ms':>7} "
          f"{'once':>5} {'miss':>5} {'twice':>5} {'busy':>5} {'all in s':>8} {'RSS MB before→after (growth)':>30}")  # fmt: skip
    for r in [*results, *([phase2] if phase2 else [])]:
        j = r.to_json()
        rss = j["rss_mb"]
        print(
            f"{r.name[:34]:34} {j['resets']:>6} {j['late_over_3s']:>5} {j['non_200']:>6} {j['ack_ms']['p50']:>7.1f} "
            f"{j['ack_ms']['p95']:>7.1f} {j['ack_ms']['max']:>7.1f} {j['answered_once']:>5} {j['missing']:>5} "
            f"{j['twice']:>5} {j['busy']:>5} {j['all_answered_s']:>8.1f} "
            f"{rss['before']:>12.1f} → {rss['after']:.1f} ({rss['growth']:+.1f})"
        )
    for r in [*results, *([phase2] if phase2 else [])]:
        kinds: dict[str, int] = {}
        for d in r.deliveries:
            if d.error:
                kinds[d.error] = kinds.get(d.error, 0) + 1
        if kinds:
            print(f"  {r.name}: connections without a response: {kinds} (Slack would retry these)")
    today = results[-1]
    ok = (
        today.resets == 0
        and today.late == 0
        and today.ack_ms(0.95) <= ACK_P95_TARGET_MS
        and today.tally.once == events
        and (phase2 is None or phase2.tally.once == phase2.events)
    )
    print(
        f"target (gunicorn): 0 failed connections, ack p95 ≤ {ACK_P95_TARGET_MS:.0f} ms, every question answered once"
        + (
            ", and once with 2 web processes on PostgreSQL"
            if phase2
            else " (PostgreSQL phase skipped: no --postgres)"
        )
        + f": {'met' if ok else 'NOT met'}"
    )
    if today.deliveries:
        print(f"ack ms over all {events}: mean {statistics.mean(d.ms for d in today.deliveries):.1f}")
    return 0
