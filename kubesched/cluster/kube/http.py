"""A small HTTP/1.1 client for one API server: a pool of keep-alive connections over asyncio streams.

The scheduler's requests are few kinds of plain HTTP/1.1 exchanges (JSON in, JSON out,
and watches streamed in chunks), so this speaks just that: one request line and a header
block built as bytes, the answer framed by ``Content-Length`` or chunked transfer coding,
``gzip`` bodies inflated (``Accept-Encoding: gzip``, as Go's transport asks). A general
client (aiohttp) spent as much CPU per binding request as the scheduler spent deciding
where the pod goes (cookie jars, header multidicts, tracing hooks, redirects, a task per
request) and about 0.2 s of CPU to import.

Connections: at most ``limit`` in use at once (watches included); a request waiting for
one does not start its read timeout. A released connection is kept for the next request
unless the server asked to close it; one idle longer than ``KEEPALIVE`` seconds, or one
the server closed meanwhile, is dropped when next taken. Failures are ``HttpError``s:
``ConnectFailed`` (nothing reached the server: refused, unresolvable, TLS refused),
``ConnectionBroken`` (closed or reset before the whole answer), ``ProtocolError`` (an
answer that is not HTTP/1.1); a read timeout is ``TimeoutError``.
"""

from __future__ import annotations

import asyncio
import ssl
import time
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from urllib.parse import urlsplit

__all__ = ["ConnectFailed", "ConnectionBroken", "HttpError", "HttpPool", "ProtocolError", "Response", "Stream"]

KEEPALIVE = 15.0  # seconds an idle connection is kept (aiohttp's and many servers' default)
_HEAD_LIMIT = 1 << 20  # the longest header block accepted
_PIECE = 1 << 20  # a long body is read in pieces of this size, the read timeout restarting after each


class HttpError(Exception):
    """A transport failure: no complete HTTP answer."""


class ConnectFailed(HttpError):
    """No connection to the server (``cause`` is the socket's or TLS's error)."""

    def __init__(self, cause: BaseException, *, tls: bool = False) -> None:
        super().__init__(str(cause) or type(cause).__name__)
        self.cause = cause
        self.tls = tls


class ConnectionBroken(HttpError):
    """The connection was closed or reset before the whole answer arrived."""


class ProtocolError(HttpError):
    """The answer is not well-formed HTTP/1.1."""


@dataclass(slots=True)
class Response:
    status: int
    headers: dict[str, str]  # lower-case names
    body: bytes


class _Connection:
    __slots__ = ("reader", "writer", "idle_since")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.idle_since = 0.0

    def usable(self, now: float) -> bool:
        return not (self.reader.at_eof() or self.writer.is_closing() or now - self.idle_since > KEEPALIVE)

    def close(self) -> None:
        """Drop the connection at once (its state is unknown or the server is done with it)."""
        self.writer.transport.abort()


class HttpPool:
    """Connections to ``server`` (``scheme://host[:port][/prefix]``); make and use it in one event loop."""

    def __init__(self, server: str, *, ssl_context: ssl.SSLContext | None, server_name: str | None = None,
                 limit: int = 100, headers: dict[str, str] | None = None) -> None:
        parts = urlsplit(server)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {server!r}")
        self._tls = parts.scheme == "https"
        self._ssl: ssl.SSLContext | None = None
        if self._tls:
            self._ssl = ssl_context if ssl_context is not None else ssl.create_default_context()
        self._host = parts.hostname
        self._port = parts.port or (443 if self._tls else 80)
        self._server_name = server_name or None
        self.prefix = parts.path.rstrip("/")
        host = f"[{self._host}]" if ":" in self._host else self._host
        default_port = 443 if self._tls else 80
        authority = host if self._port == default_port else f"{host}:{self._port}"
        fixed = {"Host": authority, **(headers or {})}
        self._fixed = "".join(f"{name}: {value}\r\n" for name, value in fixed.items()).encode("latin-1")
        self._idle: list[_Connection] = []
        self._limit = limit
        self._slots: asyncio.Semaphore | None = None
        self._closed = False

    def _semaphore(self) -> asyncio.Semaphore:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._limit)
        return self._slots

    async def close(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, []
        for conn in idle:
            conn.writer.close()  # not awaited: a TLS peer that never confirms the close can't hold us

    # -- requests --------------------------------------------------------------------------
    def _head(self, method: str, target: str, headers: str, body: bytes | None) -> bytes:
        length = f"Content-Length: {len(body)}\r\n" if body is not None else ""
        return b"".join((f"{method} {self.prefix}{target} HTTP/1.1\r\n".encode("latin-1"), self._fixed,
                         f"{headers}{length}\r\n".encode("latin-1"), body or b""))

    async def request(self, method: str, target: str, *, headers: str = "", body: bytes | None = None,
                      connect_timeout: float, read_timeout: float | None) -> Response:
        """Send one request (``target``: path and query; ``headers``: ``Name: value\\r\\n`` lines)
        and read the whole answer. The read timeout restarts after each piece of a long body."""
        slots = self._semaphore()
        await slots.acquire()
        conn: _Connection | None = None
        try:
            conn = await self._take(connect_timeout)
            async with asyncio.timeout(read_timeout) as deadline:
                conn.writer.write(self._head(method, target, headers, body))
                status, answer_headers, reusable = await _read_head(conn.reader)
                raw, delimited = await _read_body(conn.reader, method, status, answer_headers, deadline,
                                                  read_timeout)
            self._give_back(conn, reusable and delimited)
            conn = None
            return Response(status, answer_headers, _inflate(raw, answer_headers.get("content-encoding")))
        except (ConnectionError, asyncio.IncompleteReadError) as exc:
            raise ConnectionBroken(f"{type(exc).__name__}: {exc}") from None
        except (asyncio.LimitOverrunError, ValueError) as exc:
            raise ProtocolError(f"malformed answer: {exc}") from None
        finally:
            if conn is not None:
                conn.close()
            slots.release()

    async def stream(self, method: str, target: str, *, headers: str = "", connect_timeout: float,
                     total_timeout: float | None) -> Stream:
        """Send one request and return once the answer's head is in; its body is then read by
        ``Stream.chunks`` (a watch) or ``Stream.read``. The connection is not reused."""
        slots = self._semaphore()
        await slots.acquire()
        conn: _Connection | None = None
        try:
            conn = await self._take(connect_timeout)
            stream = Stream(conn, method, slots, total_timeout)
            conn = None
        except BaseException:
            slots.release()
            raise
        try:
            stream.start(self._head(method, target, headers, None))
            await stream.read_head()
        except BaseException:
            stream.close()
            raise
        return stream

    async def _take(self, connect_timeout: float) -> _Connection:
        now = time.monotonic()
        while self._idle:
            conn = self._idle.pop()
            if conn.usable(now):
                return conn
            conn.close()
        try:
            async with asyncio.timeout(connect_timeout):
                reader, writer = await asyncio.open_connection(
                    self._host, self._port, ssl=self._ssl, limit=_HEAD_LIMIT,
                    server_hostname=(self._server_name or self._host) if self._tls else None)
        except TimeoutError:
            raise
        except ssl.SSLError as exc:
            raise ConnectFailed(exc, tls=True) from None
        except OSError as exc:
            raise ConnectFailed(exc) from None
        return _Connection(reader, writer)

    def _give_back(self, conn: _Connection, reusable: bool) -> None:
        if reusable and not self._closed:
            conn.idle_since = time.monotonic()
            self._idle.append(conn)
        else:
            conn.close()


class Stream:
    """An answer whose body is read as it arrives (a watch); ``close`` ends it."""

    def __init__(self, conn: _Connection, method: str, slots: asyncio.Semaphore, total_timeout: float | None) -> None:
        self._conn: _Connection | None = conn
        self._method = method
        self._slots = slots
        self.status = 0
        self.headers: dict[str, str] = {}
        self.timed_out = False
        self._timer: asyncio.TimerHandle | None = None
        if total_timeout is not None:
            self._timer = asyncio.get_running_loop().call_later(total_timeout, self._expire)

    def _expire(self) -> None:
        self.timed_out = True
        if self._conn is not None:
            self._conn.writer.transport.abort()

    def start(self, head: bytes) -> None:
        assert self._conn is not None
        self._conn.writer.write(head)

    async def read_head(self) -> None:
        assert self._conn is not None
        try:
            self.status, self.headers, _ = await _read_head(self._conn.reader)
        except BaseException as exc:
            raise self._failure(exc) from None

    def _failure(self, exc: BaseException) -> BaseException:
        if self.timed_out:
            return TimeoutError("the answer took longer than its timeout")
        if isinstance(exc, (ConnectionError, asyncio.IncompleteReadError)):
            return ConnectionBroken(f"{type(exc).__name__}: {exc}")
        if isinstance(exc, (asyncio.LimitOverrunError, ValueError)):
            return ProtocolError(f"malformed answer: {exc}")
        return exc

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body's bytes as they arrive (inflated when compressed); ends with the body."""
        conn = self._conn
        assert conn is not None
        reader = conn.reader
        encoding = self.headers.get("content-encoding")
        inflater = _inflater(encoding)
        try:
            if "chunked" in self.headers.get("transfer-encoding", "").lower():
                while True:
                    size = _chunk_size(await reader.readuntil(b"\r\n"))
                    if size == 0:
                        break
                    data = await reader.readexactly(size + 2)
                    yield inflater.decompress(data[:-2]) if inflater is not None else data[:-2]
            else:
                length = self.headers.get("content-length")
                remaining = int(length) if length is not None else -1
                while remaining != 0:
                    data = await reader.read(_PIECE if remaining < 0 else min(remaining, _PIECE))
                    if not data:
                        if remaining > 0:
                            raise asyncio.IncompleteReadError(b"", remaining)
                        break
                    if remaining > 0:
                        remaining -= len(data)
                    yield inflater.decompress(data) if inflater is not None else data
            if inflater is not None:
                tail = inflater.flush()
                if tail:
                    yield tail
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError,
                zlib.error) as exc:
            raise self._failure(exc) from None

    async def read(self) -> bytes:
        """The whole body (an error answer's)."""
        return b"".join([piece async for piece in self.chunks()])

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
            self._slots.release()


async def _read_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bool]:
    """The status, the headers and whether the connection may be reused (HTTP/1.1 keep-alive)."""
    while True:
        block = await reader.readuntil(b"\r\n\r\n")
        lines = block[:-4].decode("latin-1").split("\r\n")
        version, _, rest = lines[0].partition(" ")
        if not version.startswith("HTTP/1."):
            raise ProtocolError(f"not an HTTP/1.x status line: {lines[0][:80]!r}")
        status = int(rest[:3])
        if 100 <= status < 200 and status != 101:
            continue  # an interim answer (100 Continue): the real one follows
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep:
                raise ProtocolError(f"malformed header line: {line[:80]!r}")
            headers[name.strip().lower()] = value.strip()
        connection = headers.get("connection", "").lower()
        reusable = connection != "close" if version == "HTTP/1.1" else connection == "keep-alive"
        return status, headers, reusable


async def _read_body(reader: asyncio.StreamReader, method: str, status: int, headers: dict[str, str],
                     deadline: asyncio.Timeout, read_timeout: float | None) -> tuple[bytes, bool]:
    """The body as sent, and whether it was delimited (one that ran to the connection's end
    leaves nothing to reuse)."""
    if method == "HEAD" or status in (204, 304):
        return b"", True
    if "chunked" in headers.get("transfer-encoding", "").lower():
        parts: list[bytes] = []
        while True:
            size = _chunk_size(await reader.readuntil(b"\r\n"))
            if size == 0:
                while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers, ignored
                    pass
                return b"".join(parts), True
            parts.append((await reader.readexactly(size + 2))[:-2])
            if len(parts) % 64 == 0:
                _restart(deadline, read_timeout)
    length = headers.get("content-length")
    if length is not None:
        remaining = int(length)
        if remaining <= _PIECE:
            return await reader.readexactly(remaining), True
        pieces = []
        while remaining > 0:
            pieces.append(await reader.readexactly(min(remaining, _PIECE)))
            remaining -= len(pieces[-1])
            _restart(deadline, read_timeout)
        return b"".join(pieces), True
    pieces = []
    while True:
        data = await reader.read(_PIECE)
        if not data:
            break
        pieces.append(data)
        _restart(deadline, read_timeout)
    return b"".join(pieces), False


def _restart(deadline: asyncio.Timeout, read_timeout: float | None) -> None:
    if read_timeout is not None:
        deadline.reschedule(asyncio.get_running_loop().time() + read_timeout)


def _chunk_size(line: bytes) -> int:
    size = line.split(b";", 1)[0].strip()
    if not size:
        raise ProtocolError("empty chunk size")
    return int(size, 16)


def _inflater(encoding: str | None) -> zlib._Decompress | None:
    if not encoding or encoding == "identity":
        return None
    if encoding == "gzip":
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return zlib.decompressobj()
    raise ProtocolError(f"unsupported content encoding {encoding!r}")


def _inflate(body: bytes, encoding: str | None) -> bytes:
    inflater = _inflater(encoding)
    if inflater is None or not body:
        return body
    try:
        return inflater.decompress(body) + inflater.flush()
    except zlib.error as exc:
        raise ProtocolError(f"undecodable {encoding} body: {exc}") from None
