"""The async API client: one pooled aiohttp session, client-side throttling, client-go's retries.

Every call is a plain Kubernetes REST request (``Authorization``, ``Accept:
application/json``, ``User-Agent``). As client-go's ``rest.Request``:

* each request first takes a token from the QPS/burst bucket (``util/flowcontrol``);
* a 429 or 5xx answer carrying an integer ``Retry-After`` is retried after that many
  seconds, at most ``MAX_RETRIES`` (10) times (``rest/with_retry.go``); any other failure
  is raised at once as an ``ApiError``. One exception: a 504 ``ResourceVersionTooLarge``
  (a watch cache behind the resourceVersion asked for; the real server adds
  ``Retry-After: 1``) goes to the reflector at once, which lists again without the
  version, instead of ten retries of about 4 s each (client-go's, some 40 s);
* a GET whose connection was reset or closed early is retried after one second, as
  client-go retries ``IsConnectionReset``/``IsProbableEOF`` errors of GETs.

Watches are streamed line by line with no read timeout: the server ends them at
``timeoutSeconds`` (a grace period guards against a server that vanished silently).
"""

from __future__ import annotations

import asyncio
import base64
import errno
import logging
import re
import time
from collections.abc import AsyncIterator, Mapping
from types import TracebackType
from typing import Protocol
from urllib.parse import quote, urlencode

import aiohttp
import orjson
from yarl import URL

from .connection import Connection
from .errors import ApiError, api_error_from_response, transport_error
from .ratelimit import TokenBucket
from .transport_errors import describe
from .watch import LineSplitter, WatchEvent, decode_event

__all__ = ["ApiClient", "MAX_CONNECTIONS", "MAX_RETRIES", "RequestObserver"]

log = logging.getLogger(__name__)

MAX_RETRIES = 10  # client-go rest.Request's default maxRetries
WATCH_GRACE = 30.0  # beyond timeoutSeconds before a silent watch is abandoned
_PATH_SAFE = "/:@!$&'()*+,;="  # RFC 3986 pchar: left as is in a path, as yarl leaves them
# A path of unreserved and safe characters only (every path of Kubernetes names) needs no quoting.
_PLAIN_PATH = re.compile(r"[A-Za-z0-9\-._~/:@!$&'()*+,;=]*")
_RESET_ERRNOS = frozenset({errno.ECONNRESET, errno.EPIPE, errno.ECONNABORTED})


class _Retry(Exception):
    """Internal: the attempt failed in a way client-go retries, after ``delay`` seconds."""

    def __init__(self, delay: float, error: ApiError) -> None:
        super().__init__(str(error))
        self.delay = delay
        self.error = error


class RequestObserver(Protocol):
    """What a client reports per request (``rest_client_*`` metrics): time waiting for the
    rate limiter, and each attempt's status code (0: no answer) and latency."""

    def rate_limited(self, verb: str, seconds: float) -> None: ...

    def response(self, verb: str, code: int, seconds: float) -> None: ...


#: Kept-alive connections for requests at most (watches have their own). Each new TLS
#: connection costs about a millisecond of CPU to set up, about as much as eight requests on
#: one already open, so the callers bound their own concurrency and open no more than they
#: need: the binding tasks (32 near the server, up to 256 when its answers take long, see
#: ``concurrency``), the status patchers (16 to 256), the informers' lists. This bound is a backstop
#: (client-go over HTTP/2 opens another connection every 100 streams, with no bound).
MAX_CONNECTIONS = 320


class ApiClient:
    """Requests to one API server; create inside the event loop that will use it.

    Requests share a pool of ``max_connections`` kept-alive connections; each watch holds a
    connection of its own for as long as it streams, outside that pool, so that long-lived
    watches never take the requests' connections (nor the other way round).

    ``share_with``: send requests over that client's pool (same server and credentials),
    with a rate limiter and observer of this client's own, as client-go's clients made
    from one configuration share one transport (the scheduler's and the events' clients).
    Closing this client then leaves the pool open to its owner."""

    def __init__(self, conn: Connection, *, timeout: float = 30.0, max_connections: int = MAX_CONNECTIONS,
                 share_with: ApiClient | None = None) -> None:
        self.conn = conn
        self.timeout = timeout
        self._bucket = TokenBucket(conn.qps, conn.burst)
        self._owns_session = share_with is None
        self._session: aiohttp.ClientSession = (self._new_session(max_connections) if share_with is None
                                                else share_with._session)
        # The pool's turns, first come first served (see ``_exchange``); shared with the pool.
        self._turns: asyncio.Semaphore = (asyncio.Semaphore(max(1, max_connections)) if share_with is None
                                          else share_with._turns)
        self._watch_session: aiohttp.ClientSession | None = None  # made by the first watch
        server = URL(conn.server)
        self._server_url = server if server.path in ("", "/") and not server.query_string else None
        self._basic = ""
        if conn.basic_auth:  # the header aiohttp's BasicAuth would write, encoded once
            user, password = conn.basic_auth
            self._basic = "Basic " + base64.b64encode(f"{user}:{password}".encode("latin-1")).decode("ascii")
        self._timeouts: dict[float, aiohttp.ClientTimeout] = {}
        self._headers_token: str | None = None
        self._headers_by_type: dict[str | None, dict[str, str]] = {}
        self.observer: RequestObserver | None = None

    def _new_session(self, limit: int) -> aiohttp.ClientSession:
        conn = self.conn
        # No cookie jar: the API server sets no cookies, and the default jar filters and
        # updates cookies on every request and answer.
        return aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=limit, ssl=conn.ssl if conn.ssl is not None else True),
            headers={"Accept": "application/json", "User-Agent": conn.user_agent},
            auto_decompress=True,
            cookie_jar=aiohttp.DummyCookieJar(),
        )

    async def close(self) -> None:
        if self._owns_session:
            await self._session.close()
        if self._watch_session is not None:
            await self._watch_session.close()

    async def __aenter__(self) -> ApiClient:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.close()

    def _headers(self, content_type: str | None) -> dict[str, str]:
        """The request's own headers (the session adds Accept and User-Agent). One dict per
        content type, rebuilt only when the token changes (aiohttp copies, never changes it)."""
        token = self.conn.token()
        if token != self._headers_token:
            self._headers_token = token
            self._headers_by_type.clear()
        headers = self._headers_by_type.get(content_type)
        if headers is None:
            headers = {}
            if token:
                headers["Authorization"] = f"Bearer {token}"
            elif self._basic:
                headers["Authorization"] = self._basic
            if content_type:
                headers["Content-Type"] = content_type
            self._headers_by_type[content_type] = headers
        return headers

    def _url(self, path: str, params: Mapping[str, str] | None) -> URL:
        """The request's URL, its query encoded once here (``encoded=True`` spares aiohttp
        parsing and quoting it again). A plain path on a server URL without a path of its
        own (the usual case: a bind, an event) is set on the parsed server URL."""
        if _PLAIN_PATH.fullmatch(path) is None:
            path = quote(path, safe=_PATH_SAFE)
        elif not params and self._server_url is not None:
            return self._server_url.with_path(path, encoded=True)
        query = f"?{urlencode(params)}" if params else ""
        return URL(f"{self.conn.server}{path}{query}", encoded=True)

    def _timeout(self, wait: float) -> aiohttp.ClientTimeout:
        """The timeout of a request answered within ``wait`` seconds (one object per value)."""
        client_timeout = self._timeouts.get(wait)
        if client_timeout is None:
            client_timeout = self._timeouts[wait] = aiohttp.ClientTimeout(total=None, sock_connect=self.timeout,
                                                                          sock_read=wait)
        return client_timeout

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: object | bytes | None = None,
        content_type: str = "application/json",
        timeout: float | None = None,
    ) -> dict[str, object]:
        """The decoded JSON answer; ``ApiError`` for a failure status or a transport failure."""
        status, payload = await self._exchange(method, path, params, body, content_type, timeout)
        if not payload:
            return {}
        try:
            decoded = orjson.loads(payload)
        except orjson.JSONDecodeError as exc:
            raise ApiError(status, "BadResponse", f"undecodable response: {exc}") from None
        if not isinstance(decoded, dict):
            raise ApiError(status, "BadResponse", "response is not a JSON object")
        return decoded

    async def write(
        self,
        method: str,
        path: str,
        *,
        body: object | bytes | None = None,
        content_type: str = "application/json",
        timeout: float | None = None,
    ) -> int:
        """A request whose answer nobody reads (a binding, an event): throttled, retried and
        failing as ``request``, but a success's body is not decoded. The status code."""
        return (await self._exchange(method, path, None, body, content_type, timeout))[0]

    async def _exchange(self, method: str, path: str, params: Mapping[str, str] | None, body: object | bytes | None,
                        content_type: str, timeout: float | None) -> tuple[int, bytes]:
        """One request through throttling and client-go's retries: a success's status and body."""
        method = method.upper()
        data: bytes | None
        if body is None:
            data = None
        elif isinstance(body, (bytes, bytearray)):
            data = bytes(body)
        else:
            data = orjson.dumps(body)
        # The timeout runs from the request's sending: time waiting for one of the pool's
        # connections (a burst of binds queues there) does not count, as client-go's requests
        # queue without a deadline. Reaching the server at all is bounded on its own.
        client_timeout = self._timeout(timeout if timeout is not None else self.timeout)
        url = self._url(path, params)
        retries = 0
        while True:
            observer = self.observer
            delay = self._bucket.reserve()  # the token, taken at once; a wait only when none is banked
            if delay > 0.0:
                waited = time.perf_counter()
                await asyncio.sleep(delay)
                if observer is not None:
                    observer.rate_limited(method, time.perf_counter() - waited)
            elif observer is not None:
                observer.rate_limited(method, 0.0)
            started = time.perf_counter() if observer is not None else 0.0
            status = 0
            answered = False  # the answer's headers arrived (a failure is then the body's)
            try:
                try:
                    # One turn of the pool per attempt, in the order asked. aiohttp's pool hands a
                    # connection just released to whoever asks next, ahead of those already waiting:
                    # a task that asks again at once (a binding task taking its next pod) would keep
                    # every connection and starve the rest (the event writers, issue 26).
                    async with self._turns, self._session.request(
                        method, url, data=data, headers=self._headers(content_type if data is not None else None),
                        timeout=client_timeout, server_hostname=self.conn.tls_server_name,
                    ) as resp:
                        answered = True
                        payload = await resp.read()
                        status = resp.status
                        retry_after = None if status < 300 else _retry_after(resp.headers.get("Retry-After"))
                except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
                    error = transport_error(*describe(exc, method, url, reading_body=answered))
                    if method == "GET" and isinstance(exc, aiohttp.ClientError) and _is_reset(exc):
                        raise _Retry(1.0, error) from None
                    raise error from None
                if status >= 300 or status < 200:
                    error = api_error_from_response(status, payload, retry_after)
                    if retry_after is not None and (status == 429 or status >= 500) \
                            and not error.is_too_large_resource_version():
                        raise _Retry(retry_after, error)
                    raise error
            except _Retry as retry:
                if observer is not None:
                    observer.response(method, retry.error.status, time.perf_counter() - started)
                retries += 1
                if retries > MAX_RETRIES:
                    raise retry.error from None
                log.info("%s %s: %s; retry %d after %.0fs", method, path, retry.error.reason, retries, retry.delay)
                await asyncio.sleep(retry.delay)
                continue
            except BaseException as err:  # an ApiError's status; 0 for no answer (cancelled)
                if observer is not None:
                    observer.response(method, err.status if isinstance(err, ApiError) else 0,
                                      time.perf_counter() - started)
                raise
            if observer is not None:
                observer.response(method, status, time.perf_counter() - started)
            return status, payload

    async def watch(self, path: str, params: Mapping[str, str]) -> AsyncIterator[WatchEvent]:
        """Stream the watch of ``path`` with ``params``; ends when the server closes the stream.

        Opening the watch is throttled and retried like any request; once the stream is
        open, a broken connection is raised as a transport ``ApiError`` (status 0).
        """
        query = dict(params)
        query["watch"] = "true"
        seconds = query.get("timeoutSeconds")
        total = float(seconds) + WATCH_GRACE if seconds else None
        client_timeout = aiohttp.ClientTimeout(total=total, connect=self.timeout, sock_connect=self.timeout)
        retries = 0
        while True:
            await self._bucket.acquire()
            try:
                resp = await self._open_watch(path, query, client_timeout)
                break
            except _Retry as retry:
                retries += 1
                if retries > MAX_RETRIES:
                    raise retry.error from None
                await asyncio.sleep(retry.delay)
        async with resp:
            try:
                splitter = LineSplitter()
                async for chunk in resp.content.iter_any():
                    for line in splitter.feed(chunk):
                        yield decode_event(line)
                tail = splitter.tail()
                if tail is not None:
                    yield decode_event(tail)
            except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
                raise transport_error(*describe(exc, "GET", resp.url, reading_body=True)) from None

    async def _open_watch(self, path: str, query: Mapping[str, str],
                          client_timeout: aiohttp.ClientTimeout) -> aiohttp.ClientResponse:
        if self._watch_session is None:
            self._watch_session = self._new_session(0)  # no limit: one connection per watch
        url = self._url(path, query)
        try:
            resp = await self._watch_session.get(url, headers=self._headers(None), timeout=client_timeout,
                                                 server_hostname=self.conn.tls_server_name)
        except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
            error = transport_error(*describe(exc, "GET", url))
            if isinstance(exc, aiohttp.ClientError) and _is_reset(exc):
                raise _Retry(1.0, error) from None
            raise error from None
        if resp.status == 200:
            return resp
        async with resp:
            try:
                payload = await resp.read()
            except aiohttp.ClientError:
                payload = b""
            retry_after = _retry_after(resp.headers.get("Retry-After"))
        error = api_error_from_response(resp.status, payload, retry_after)
        if retry_after is not None and (resp.status == 429 or resp.status >= 500) \
                and not error.is_too_large_resource_version():
            raise _Retry(retry_after, error)
        raise error


def _retry_after(header: str | None) -> float | None:
    """Integer seconds, as client-go's ``retryAfterSeconds`` (HTTP dates are ignored)."""
    if not header:
        return None
    try:
        return float(int(header.strip()))
    except ValueError:
        return None


def _is_reset(exc: aiohttp.ClientError) -> bool:
    """The connection was reset or closed before the answer: client-go retries such GETs."""
    if isinstance(exc, (aiohttp.ServerDisconnectedError, aiohttp.ClientPayloadError)):
        return True
    return isinstance(exc, aiohttp.ClientOSError) and exc.errno in _RESET_ERRNOS
