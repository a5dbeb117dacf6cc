"""What every fake service here shares: an HTTP server on 127.0.0.1 and a quiet JSON handler.

The server binds when the fake is made (port 0: the OS picks one, known before anything starts),
serves on a daemon thread from `start` (or `with`), and `stop` shuts it down and closes the port.
Its poll interval is short because `shutdown()` waits for the loop to notice, and tests stop a
server each.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

POLL_S = 0.01  # how often the idle server checks for shutdown (socketserver's default is 0.5 s)


class LocalServer:
    """A fake service's server: `_listen(handler)` in the fake's __post_init__, then start/stop."""

    host: str
    port: int

    def _listen(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self._server = ThreadingHTTPServer((self.host, self.port), handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread: threading.Thread | None = None

    def start(self) -> Self:
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": POLL_S},
            name=type(self).__name__,
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that keeps test output quiet and answers JSON."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def send_json(
        self,
        status: int,
        body: Any,
        headers: Mapping[str, str] | None = None,
        content_type: str = "application/json",
    ) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
