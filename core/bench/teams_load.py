"""`python -m core.bench teams-load`: how fast `serve --teams` acknowledges activities (issue 31).

Teams waits about 15 s for the answer to its POST and resends what it thinks timed out; Askbase
aims at 200 ms. Loopback only, bounded in count and time. The adapter runs as deployed
(`python -m bot serve --teams`, anonymous local mode, keyword mode: no LLM) against the fake Bot
Connector (core/bench/fakes/bot_connector.py, in a process of its own so that its work does not slow
the clock that measures acks). Each request is timed from its connect to its response's status
line, all sent at the same moment on fresh connections by one thread of non-blocking sockets (the
Slack benchmark's `burst`). Phases, in one run:

- `floor` (the baseline): the same number of requests with a body the server refuses at once (not
  JSON, 400): what the transport and aiohttp cost on this machine, nothing of Askbase's;
- `burst`: N questions at once, each in a chat of its own: every ack, then whether each question
  got exactly one answer (none, two, or a "busy" card are counted apart);
- `locked`: the state database held under an exclusive lock by another connection (`BEGIN
  EXCLUSIVE`): M `help` messages at once and `/healthz`; each ack, the health status, and whether
  every `help` was still answered (claimed later, or handled unclaimed after
  `teams.claim_wait_s`).

The server runs on the default `teams.workers` unless `--workers` says otherwise: a burst waits
in the answering queue, in order, and is answered (core/conversation/queue.py); "busy" is said
only when the state database cannot take a question's claim.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from core.bench.slack_load import Delivery, burst, free_port
from core.demo import ensure_demo
from core.settings import TeamsSettings

ROOT = Path(__file__).resolve().parents[2]
QUESTION = "how many clients are there?"
ACK_TARGET_MS = 200.0
BUSY = "answering a lot of questions"


def activity(service_url: str, text: str, conversation: str) -> dict[str, Any]:
    """A personal-chat message as the Bot Connector posts it (core/bench/fakes/bot_connector.py's shape)."""
    tenant = "72f988bf-0000-4000-8000-000000000001"
    return {
        "type": "message",
        "id": uuid.uuid4().hex,
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
        "serviceUrl": service_url,
        "channelId": "msteams",
        "from": {"id": "29:bench", "aadObjectId": "00000000-0000-4000-8000-00000000be9c", "name": "Bench"},
        "recipient": {"id": "28:askbase-bot", "name": "Askbase"},
        "conversation": {"id": conversation, "conversationType": "personal", "tenantId": tenant},
        "channelData": {"tenant": {"id": tenant}},
        "text": text,
    }


def post_request(port: int, body: bytes, path: str = "/api/messages") -> bytes:
    head = [
        f"POST {path} HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Content-Type: application/json",
        f"Content-Length: {len(body)}",
        "Connection: close",
    ]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def activity_request(port: int, data: dict[str, Any]) -> bytes:
    return post_request(port, json.dumps(data).encode())


def ms(deliveries: Sequence[Delivery], q: float, status: int) -> float:
    ok = sorted(d.ms for d in deliveries if d.status == status)
    if not ok:
        return float("nan")
    return ok[min(len(ok) - 1, round(q * (len(ok) - 1)))]


# ---------------------------------------------------------------- the fake Bot Connector's process


def _serve_connector(conn: Connection) -> None:
    from core.bench.fakes.bot_connector import FakeConnector

    fake = FakeConnector()
    fake._server.socket.listen(1024)
    fake.start()
    conn.send(fake.service_url)
    while conn.recv() == "snapshot":
        with fake._lock:
            seen = [
                (m.conversation, m.is_answer, BUSY in m.all_text(), bool(m.card))
                for m in fake.messages.values()
            ]
        conn.send(seen)
    fake.stop()


class ConnectorProcess:
    def __init__(self) -> None:
        self._conn, child = multiprocessing.Pipe()
        self._proc = multiprocessing.get_context("fork").Process(
            target=_serve_connector, args=(child,), daemon=True
        )
        self._proc.start()
        self.service_url: str = self._conn.recv()

    def messages(self) -> list[tuple[str, bool, bool, bool]]:
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


def tally(connector: ConnectorProcess, conversations: Sequence[str], *, answer: bool) -> Tally:
    """Per conversation: one reply (an answer card when `answer`, else any card), or what else."""
    by: dict[str, list[tuple[bool, bool, bool]]] = {}
    for conversation, is_answer, busy, card in connector.messages():
        by.setdefault(conversation, []).append((is_answer, busy, card))
    t = Tally()
    for c in conversations:
        got = by.get(c, [])
        replies = [m for m in got if (m[0] if answer else m[2])]
        if any(m[1] for m in got):
            t.busy += 1
        elif len(got) > 1:
            t.twice += 1
        elif not replies:
            t.missing += 1
        else:
            t.once += 1
    return t


def wait_replied(
    connector: ConnectorProcess, conversations: Sequence[str], *, answer: bool, timeout: float
) -> float:
    began = time.monotonic()
    while time.monotonic() - began < timeout:
        if tally(connector, conversations, answer=answer).missing == 0:
            return time.monotonic() - began
        time.sleep(0.25)
    return time.monotonic() - began


# ---------------------------------------------------------------- the server under test


@dataclass
class Server:
    port: int
    proc: subprocess.Popen[bytes]
    log: Path

    @classmethod
    def start(cls, env: dict[str, str], workdir: Path) -> Server:
        port = free_port()
        log = workdir / "teams.log"
        with log.open("w") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "bot", "serve", "--teams", "--port", str(port)],
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        server = cls(port, proc, log)
        deadline = time.monotonic() + 120
        while health(port)[0] != 200:
            if proc.poll() is not None or time.monotonic() > deadline:
                server.stop()
                raise RuntimeError(f"serve --teams did not start; see {log}")
            time.sleep(0.1)
        return server

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def health(port: int) -> tuple[int, float]:
    """`/healthz`'s status (0: no answer) and how long it took, in ms."""
    began = time.perf_counter()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as r:
            status = r.status
    except urllib.error.HTTPError as exc:
        status = exc.code
    except OSError:
        status = 0
    return status, (time.perf_counter() - began) * 1000


# ---------------------------------------------------------------- main


@dataclass
class Phase:
    name: str
    deliveries: list[Delivery] = field(default_factory=list)
    status: int = 202
    tally: Tally | None = None
    replied_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        other = [
            d.status if d.status is not None else d.error for d in self.deliveries if d.status != self.status
        ]
        return {
            "phase": self.name,
            "requests": len(self.deliveries),
            f"status_{self.status}": sum(1 for d in self.deliveries if d.status == self.status),
            "other": sorted({str(o) for o in other}),
            "ack_ms": {
                q: round(ms(self.deliveries, v, self.status), 1)
                for q, v in (("p50", 0.5), ("p95", 0.95), ("max", 1.0))
            },
            "over_target": sum(
                1 for d in self.deliveries if d.status == self.status and d.ms > ACK_TARGET_MS
            ),
            **(
                {"replies": self.tally.__dict__, "all_replied_s": round(self.replied_s, 1)}
                if self.tally
                else {}
            ),
            **self.extra,
        }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m core.bench teams-load", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--events", type=int, default=120, help="simultaneous activities in the burst (max 1000)"
    )
    parser.add_argument(
        "--locked", type=int, default=20, help="activities sent while the state database is locked"
    )
    parser.add_argument("--workers", type=int, default=0, help="teams.workers (0: the setting's default)")
    parser.add_argument(
        "--ack-claim-s", type=float, default=None, help="teams.ack_claim_s (default: the setting's)"
    )
    parser.add_argument("--timeout", type=float, default=240, help="longest wait for the replies of a phase")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    parser.add_argument("--keep", action="store_true", help="keep the server's log (printed path)")
    args = parser.parse_args(argv)
    events = max(1, min(args.events, 1000))
    workers = args.workers or TeamsSettings().workers

    workdir = Path(tempfile.mkdtemp(prefix="askbase-teams-load-"))
    var = workdir / "var"
    ensure_demo(var)
    state_path = workdir / "state.sqlite"
    connector = ConnectorProcess()
    phases: list[Phase] = []
    try:
        keep = {
            k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ASKBASE_", "CONNECTIONS__"))
        }
        env = {
            **keep,
            "ASKBASE_VAR_DIR": str(var),
            "ASKBASE_STATE_URL": f"sqlite:///{state_path}",
            "ASKBASE_CONFIG": str(var / "no-config.yaml"),
            "ASKBASE_LOG_LEVEL": os.environ.get("ASKBASE_BENCH_LOG_LEVEL", "WARNING"),
            "ASKBASE_TEAMS__ALLOW_ANONYMOUS": "true",
            "ASKBASE_TEAMS__WORKERS": str(workers),
            "ASKBASE_TEAMS__CLAIM_WAIT_S": "2",
            "ASKBASE_TEAMS__SERVICE_URL_HOSTS": json.dumps([connector.service_url]),
            **({"ASKBASE_TEAMS__ACK_CLAIM_S": str(args.ack_claim_s)} if args.ack_claim_s is not None else {}),
        }
        server = Server.start(env, workdir)
        try:
            port, url = server.port, connector.service_url
            warm = activity(url, QUESTION, "a:warm")
            burst([(port, activity_request(port, warm))], 10.0)
            wait_replied(connector, ["a:warm"], answer=True, timeout=60)

            floor = Phase("floor (400: not JSON)", status=400)
            floor.deliveries = burst([(port, post_request(port, b"not json")) for _ in range(events)], 10.0)
            phases.append(floor)

            print(f"teams-load: {events} simultaneous questions…", file=sys.stderr, flush=True)
            chats = [f"a:burst{n:04d}" for n in range(events)]
            questions = Phase(f"burst ({events} questions)")
            questions.deliveries = burst(
                [(port, activity_request(port, activity(url, QUESTION, c))) for c in chats], 10.0
            )
            questions.replied_s = wait_replied(connector, chats, answer=True, timeout=args.timeout)
            time.sleep(1.0)  # a second answer, had one been started, lands by now
            questions.tally = tally(connector, chats, answer=True)
            phases.append(questions)

            print(
                f"teams-load: {args.locked} help messages, state database locked…",
                file=sys.stderr,
                flush=True,
            )
            lock = sqlite3.connect(state_path, timeout=10, isolation_level=None)
            lock.execute("BEGIN EXCLUSIVE")
            try:
                helps = [f"a:locked{n:04d}" for n in range(args.locked)]
                locked = Phase(f"locked state DB ({args.locked} help)")
                locked.deliveries = burst(
                    [(port, activity_request(port, activity(url, "help", c))) for c in helps], 10.0
                )
                status, took = health(port)
                locked.extra["healthz_while_locked"] = {"status": status, "ms": round(took, 1)}
                locked.replied_s = wait_replied(connector, helps, answer=False, timeout=args.timeout)
                locked.tally = tally(connector, helps, answer=False)
            finally:
                lock.execute("ROLLBACK")
                lock.close()
            time.sleep(1.1)  # the health probe's result is kept a second
            status, took = health(port)
            locked.extra["healthz_after"] = {"status": status, "ms": round(took, 1)}
            phases.append(locked)
        finally:
            server.stop()
    finally:
        connector.close()
    if args.keep:
        print(f"log kept in {workdir}", file=sys.stderr)
    else:
        shutil.rmtree(workdir, ignore_errors=True)

    report = [p.to_json() for p in phases]
    if args.json:
        print(json.dumps({"events": events, "workers": workers, "phases": report}))
        return 0
    print(f"teams-load: serve --teams, anonymous, keyword mode, fake Bot Connector; teams.workers={workers}")
    print(f"{'phase':34} {'ok':>5} {'other':>12} {'p50 ms':>7} {'p95 ms':>7} {'max ms':>7} {'>200ms':>6} {'once':>5} {'miss':>5} {'twice':>5} {'busy':>5} {'all in s':>8}")  # fmt: skip
    for p, j in zip(phases, report, strict=True):
        t = j.get("replies") or {}
        ok = j[f"status_{p.status}"]
        print(
            f"{p.name[:34]:34} {ok:>5} {','.join(j['other']) or '-':>12} {j['ack_ms']['p50']:>7.1f} {j['ack_ms']['p95']:>7.1f} "
            f"{j['ack_ms']['max']:>7.1f} {j['over_target']:>6} {t.get('once', '-'):>5} {t.get('missing', '-'):>5} "
            f"{t.get('twice', '-'):>5} {t.get('busy', '-'):>5} {j.get('all_replied_s', '-'):>8}"
        )
    for j in report:
        for key in ("healthz_while_locked", "healthz_after"):
            if key in j:
                print(
                    f"  /healthz {key.removeprefix('healthz_').replace('_', ' ')}: {j[key]['status']} in {j[key]['ms']} ms"
                )
    met = all(j["over_target"] == 0 and not j["other"] for j in report[1:]) and all(
        (j.get("replies") or {}).get("once") == j["requests"] for j in report[1:]
    )
    print(
        f"target: every 202 within {ACK_TARGET_MS:.0f} ms, every activity answered once: {'met' if met else 'NOT met'}"
    )
    return 0
