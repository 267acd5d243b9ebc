"""A small HTTP/1.1 server for the health, metrics and z-page endpoints.

Those endpoints answer short GETs from kubelet probes, Prometheus and people: a request
line, headers, and an answer of known length. Serving them with a web framework cost
``kubesched run`` the framework's import (aiohttp's, about 0.2 s of CPU at start, for
which the scheduler's API client has no use either). This reads a request head, hands
``Request`` to one synchronous handler and writes its ``Reply`` with ``Content-Length``;
connections are kept alive as HTTP/1.1 allows (closed after ``IDLE`` idle seconds), HEAD
gets the head only, and a request with a body it can't frame is answered 400 and closed.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable
from dataclasses import dataclass, field
import time
from http import HTTPStatus
from urllib.parse import parse_qs, unquote

__all__ = ["HttpServer", "Reply", "Request"]

IDLE = 60.0  # seconds a kept-alive connection may wait for its next request
_HEAD_LIMIT = 64 * 1024


@dataclass(frozen=True, slots=True)
class Request:
    method: str
    path: str  # decoded, without the query
    query: dict[str, list[str]]  # every value of every parameter (``?verbose`` is ``{"verbose": [""]}``)


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    body: bytes
    content_type: str
    headers: tuple[tuple[str, str], ...] = field(default=())


Handler = Callable[[Request], Reply]


class HttpServer:
    """Serves ``handler`` on one address; ``start`` then ``stop`` in one event loop."""

    def __init__(self, handler: Handler) -> None:
        self._handler = handler
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    async def start(self, host: str, port: int, ssl_context: ssl.SSLContext | None = None) -> int:
        """Listen on host:port (0 picks a free port); the port listened on."""
        self._server = await asyncio.start_server(self._serve, host, port, ssl=ssl_context, limit=_HEAD_LIMIT)
        sockets = self._server.sockets
        return int(sockets[0].getsockname()[1]) if sockets else port

    async def stop(self) -> None:
        if self._server is None:
            return
        self._server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        await self._server.wait_closed()
        self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            while await self._one(reader, writer):
                pass
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError):
            pass  # the client went away, idled out or sent an oversized head
        finally:
            self._writers.discard(writer)
            writer.close()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Answer one request; whether the connection stays open for another."""
        async with asyncio.timeout(IDLE):
            head = await reader.readuntil(b"\r\n\r\n")
        lines = head[:-4].decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            writer.write(_encode(_plain(400, "400 Bad Request\n"), "GET", keep_alive=False))
            return False
        method, target, version = parts
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        connection = headers.get("connection", "").lower()
        keep_alive = connection != "close" if version == "HTTP/1.1" else connection == "keep-alive"
        if "chunked" in headers.get("transfer-encoding", "").lower():
            writer.write(_encode(_plain(400, "400 Bad Request\n"), method, keep_alive=False))
            return False
        length = int(headers.get("content-length") or 0)
        if length:
            await reader.readexactly(length)  # no endpoint reads a body
        path, _, query = target.partition("?")
        request = Request(method, unquote(path), parse_qs(query, keep_blank_values=True))
        writer.write(_encode(self._handler(request), method, keep_alive=keep_alive))
        await writer.drain()
        return keep_alive


_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def _http_date() -> str:
    """RFC 9110's IMF-fixdate of now, in English whatever the locale."""
    t = time.gmtime()
    return (f"{_DAYS[t.tm_wday]}, {t.tm_mday:02d} {_MONTHS[t.tm_mon - 1]} {t.tm_year} "
            f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d} GMT")


def _plain(status: int, text: str) -> Reply:
    return Reply(status, text.encode(), "text/plain; charset=utf-8")


def _encode(reply: Reply, method: str, *, keep_alive: bool) -> bytes:
    try:
        phrase = HTTPStatus(reply.status).phrase
    except ValueError:
        phrase = ""
    lines = [f"HTTP/1.1 {reply.status} {phrase}", f"Content-Type: {reply.content_type}",
             f"Content-Length: {len(reply.body)}", f"Date: {_http_date()}"]
    lines.extend(f"{name}: {value}" for name, value in reply.headers)
    if not keep_alive:
        lines.append("Connection: close")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return head if method == "HEAD" else head + reply.body
