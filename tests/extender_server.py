"""A scheduler extender for tests: an HTTP server on 127.0.0.1 (a free port) in a thread.

Each verb has a handler that receives the decoded request body and returns the JSON
answer, or a ``Reply`` for another status code, a raw body or a delay. Every request is
recorded as ``(verb, body)``.
"""

from __future__ import annotations

import json
import ssl
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

__all__ = ["ExtenderServer", "Reply", "closed_port_url"]


@dataclass
class Reply:
    body: Any = None
    status: int = 200
    delay: float = 0.0
    raw: bytes | None = None  # sent as is instead of ``body``


Handler = Callable[[dict], Any]


class ExtenderServer:
    def __init__(self, handlers: dict[str, Handler] | None = None, tls: ssl.SSLContext | None = None) -> None:
        self.handlers: dict[str, Handler] = dict(handlers or {})
        self.requests: list[tuple[str, dict]] = []
        self.headers: list[dict[str, str]] = []
        server = self

        class _Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"null")
                verb = self.path.lstrip("/")
                server.requests.append((verb, body))
                server.headers.append(dict(self.headers.items()))
                handler = server.handlers.get(verb)
                reply = handler(body) if handler is not None else Reply(status=404)
                if not isinstance(reply, Reply):
                    reply = Reply(reply)
                if reply.delay:
                    time.sleep(reply.delay)
                data = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout tests)
                    pass

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        self.scheme = "https" if tls is not None else "http"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self._server.server_address[1]}"

    def verbs(self) -> list[str]:
        return [verb for verb, _ in self.requests]

    def bodies(self, verb: str) -> list[dict]:
        return [body for v, body in self.requests if v == verb]

    def __enter__(self) -> "ExtenderServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def closed_port_url() -> str:
    """A URL on 127.0.0.1 where nothing listens (connection refused)."""
    probe = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    port = probe.server_address[1]
    probe.server_close()
    return f"http://127.0.0.1:{port}"
