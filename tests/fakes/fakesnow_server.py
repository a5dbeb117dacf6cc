"""fakesnow's Snowflake emulation as a server the current Snowflake connector can log in to.

Runs in its own virtualenv (`.venv-fakesnow`, made by .ci/run and tests/snowflake_emulation.py):
fakesnow pins sqlglot and snowflake-connector-python versions Askbase does not use, so it cannot
share Askbase's environment; over HTTP on 127.0.0.1 it does not have to. The connector 5.x that
snowflake-sqlalchemy 2.1 needs (the one that supports SQLAlchemy 2.1) reads a master token and a
session id from the login response, which fakesnow 0.12 does not send: this adds them.

What fakesnow cannot emulate is answered here, at the connector boundary, and every statement the
connector sends is recorded (`--log FILE`, one JSON line each: the SQL, and the session parameters
sent at login), so tests can read exactly what Askbase sent:
- `ALTER SESSION SET ...` (QUERY_TAG, STATEMENT_TIMEOUT_IN_SECONDS): fakesnow refuses it as not
  implemented; here it succeeds and is recorded.

    .venv-fakesnow/bin/python tests/fakes/fakesnow_server.py --port N [--db-path DIR] [--log FILE]
        [--exit-with PID]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import secrets
import sys
import threading
import time
from typing import Any

import fakesnow.server
import uvicorn
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class LoginFields:
    """Adds `masterToken`, `sessionId` and token lifetimes to fakesnow's login response; records
    every statement; answers ALTER SESSION."""

    def __init__(self, app: ASGIApp, log: str | None) -> None:
        self.app = app
        self.log = log

    def record(self, entry: dict[str, Any]) -> None:
        if self.log:
            with open(self.log, "a", encoding="utf-8") as f:
                f.write(json.dumps(entry, default=str) + "\n")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"] if scope["type"] == "http" else ""
        if path.startswith(("/queries/v1/query-request", "/session/v1/login-request")):
            receive = await self.read_body(scope, receive, send, path)
            if receive is None:
                return
        if not path.startswith("/session/v1/login-request"):
            await self.app(scope, receive, send)
            return
        start: dict[str, Any] = {}
        body = bytearray()

        async def capture(message: Message) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
                return
            body.extend(message.get("body", b""))
            if message.get("more_body"):
                return
            data = json.loads(body)
            if data.get("success"):
                data["data"].setdefault("masterToken", secrets.token_urlsafe(32))
                data["data"].setdefault("sessionId", secrets.randbelow(10**12))
                data["data"].setdefault("validityInSeconds", 3600)
                data["data"].setdefault("masterValidityInSeconds", 14400)
                data["data"].setdefault("idToken", None)
            out = json.dumps(data).encode()
            headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
            headers.append((b"content-length", str(len(out)).encode()))
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": out})

        await self.app(scope, receive, capture)

    async def read_body(self, scope: Scope, receive: Receive, send: Send, path: str) -> Receive | None:
        """Record the request; answer ALTER SESSION here (None); else hand the body on unchanged."""
        chunks = bytearray()
        while True:
            message = await receive()
            chunks.extend(message.get("body", b""))
            if not message.get("more_body"):
                break
        raw = bytes(chunks)
        headers = dict(scope.get("headers") or [])
        text = gzip.decompress(raw) if headers.get(b"content-encoding") == b"gzip" else raw
        body = json.loads(text or b"{}")
        if path.startswith("/session/v1/login-request"):
            self.record({"login": body.get("data", {}).get("SESSION_PARAMETERS", {})})
        else:
            sql = str(body.get("sqlText", ""))
            self.record({"sql": sql})
            if sql.strip().upper().startswith("ALTER SESSION SET"):
                out = json.dumps(
                    {
                        "data": {
                            "rowtype": [{"name": "status", "type": "text", "nullable": True}],
                            "rowset": [["Statement executed successfully."]],
                            "total": 1,
                            "queryResultFormat": "json",
                            "queryId": secrets.token_hex(8),
                            "statementTypeId": 0x3000,
                        },
                        "success": True,
                    }
                ).encode()
                await send(
                    {
                        "type": "http.response.start",
                        "status": 200,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"content-length", str(len(out)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": out})
                return None
        sent = False

        async def again() -> Message:
            nonlocal sent
            if sent:
                return {"type": "http.disconnect"}
            sent = True
            return {"type": "http.request", "body": raw, "more_body": False}

        return again


def exit_with(pid: int) -> None:
    """End this server once `pid` (the test run that shares it) has ended, however that ended."""
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            os._exit(0)
        except PermissionError:
            pass
        time.sleep(0.5)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--db-path", help="keep databases in this folder (default: in memory)")
    parser.add_argument("--log", help="append one JSON line per request here")
    parser.add_argument("--exit-with", type=int, help="stop once the process with this pid has ended")
    args = parser.parse_args(argv)
    if args.exit_with:
        threading.Thread(target=exit_with, args=(args.exit_with,), daemon=True).start()
    if args.db_path:
        fakesnow.server.shared_fs = fakesnow.server.FakeSnow(db_path=args.db_path)
    config = uvicorn.Config(
        LoginFields(fakesnow.server.app, args.log), host="127.0.0.1", port=args.port, log_level="warning"
    )
    uvicorn.Server(config).run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
