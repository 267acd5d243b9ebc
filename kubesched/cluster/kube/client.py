"""The async API client: a pool of HTTP/1.1 connections (``http.py``), client-side throttling,
client-go's retries.

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
import logging
import time
from collections.abc import AsyncIterator, Mapping
from types import TracebackType
from typing import Protocol
from urllib.parse import urlencode

import orjson

from .connection import Connection
from .errors import ApiError, api_error_from_response, transport_error
from .http import ConnectFailed, ConnectionBroken, HttpError, HttpPool, Stream
from .ratelimit import TokenBucket
from .watch import WatchEvent, decode_event, iter_lines

__all__ = ["ApiClient", "MAX_RETRIES", "RequestObserver"]

log = logging.getLogger(__name__)

MAX_RETRIES = 10  # client-go rest.Request's default maxRetries
WATCH_GRACE = 30.0  # beyond timeoutSeconds before a silent watch is abandoned


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


class ApiClient:
    """Requests to one API server over a pool of at most ``max_connections`` connections;
    use it inside one event loop (it may be made outside one)."""

    def __init__(self, conn: Connection, *, timeout: float = 30.0, max_connections: int = 100) -> None:
        self.conn = conn
        self.timeout = timeout
        self._bucket = TokenBucket(conn.qps, conn.burst)
        self._pool = HttpPool(conn.server, ssl_context=conn.ssl, server_name=conn.tls_server_name,
                              limit=max_connections,
                              headers={"Accept": "application/json", "User-Agent": conn.user_agent,
                                       "Accept-Encoding": "gzip"})
        self._basic = ""
        if conn.basic_auth:
            user, password = conn.basic_auth
            encoded = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
            self._basic = f"Authorization: Basic {encoded}\r\n"
        self.observer: RequestObserver | None = None

    async def close(self) -> None:
        await self._pool.close()

    async def __aenter__(self) -> ApiClient:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.close()

    def _headers(self, content_type: str | None) -> str:
        """The per-request header lines: the current credential and the body's type."""
        token = self.conn.token()
        auth = f"Authorization: Bearer {token}\r\n" if token else self._basic
        return f"{auth}Content-Type: {content_type}\r\n" if content_type else auth

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
        wait = timeout if timeout is not None else self.timeout
        target = f"{path}?{urlencode(params)}" if params else path
        retries = 0
        observer = self.observer
        while True:
            if observer is None:
                await self._bucket.acquire()
            else:
                waited = time.perf_counter()
                await self._bucket.acquire()
                observer.rate_limited(method, time.perf_counter() - waited)
            try:
                return await self._attempt(method, target, data, content_type if data is not None else None, wait)
            except _Retry as retry:
                retries += 1
                if retries > MAX_RETRIES:
                    raise retry.error from None
                log.info("%s %s: %s; retry %d after %.0fs", method, path, retry.error.reason, retries, retry.delay)
                await asyncio.sleep(retry.delay)

    async def _attempt(self, method: str, target: str, data: bytes | None, content_type: str | None,
                       wait: float) -> dict[str, object]:
        if self.observer is None:
            return (await self._answer(method, target, data, content_type, wait))[0]
        started = time.perf_counter()
        status = 0
        try:
            answer, status = await self._answer(method, target, data, content_type, wait)
            return answer
        except ApiError as err:
            status = err.status
            raise
        except _Retry as retry:
            status = retry.error.status
            raise
        finally:
            self.observer.response(method, status, time.perf_counter() - started)

    async def _answer(self, method: str, target: str, data: bytes | None, content_type: str | None,
                      wait: float) -> tuple[dict[str, object], int]:
        try:
            response = await self._pool.request(method, target, headers=self._headers(content_type), body=data,
                                                connect_timeout=self.timeout, read_timeout=wait)
        except ConnectFailed as exc:
            raise transport_error(exc.cause, refused=not exc.tls) from None
        except TimeoutError as exc:
            raise transport_error(exc, timeout=True) from None
        except HttpError as exc:
            error = transport_error(exc)
            if method == "GET" and isinstance(exc, ConnectionBroken):
                raise _Retry(1.0, error) from None
            raise error from None
        status, payload = response.status, response.body
        if 200 <= status < 300:
            if not payload:
                return {}, status
            try:
                decoded = orjson.loads(payload)
            except orjson.JSONDecodeError as exc:
                raise ApiError(status, "BadResponse", f"undecodable response: {exc}") from None
            if not isinstance(decoded, dict):
                raise ApiError(status, "BadResponse", "response is not a JSON object")
            return decoded, status
        retry_after = _retry_after(response.headers.get("retry-after"))
        error = api_error_from_response(status, payload, retry_after)
        if retry_after is not None and (status == 429 or status >= 500) and not error.is_too_large_resource_version():
            raise _Retry(retry_after, error)
        raise error

    async def watch(self, path: str, params: Mapping[str, str]) -> AsyncIterator[WatchEvent]:
        """Stream the watch of ``path`` with ``params``; ends when the server closes the stream.

        Opening the watch is throttled and retried like any request; once the stream is
        open, a broken connection is raised as a transport ``ApiError`` (status 0).
        """
        query = dict(params)
        query["watch"] = "true"
        seconds = query.get("timeoutSeconds")
        total = float(seconds) + WATCH_GRACE if seconds else None
        target = f"{path}?{urlencode(query)}"
        retries = 0
        while True:
            await self._bucket.acquire()
            try:
                stream = await self._open_watch(target, total)
                break
            except _Retry as retry:
                retries += 1
                if retries > MAX_RETRIES:
                    raise retry.error from None
                await asyncio.sleep(retry.delay)
        try:
            async for line in iter_lines(stream.chunks()):
                yield decode_event(line)
        except TimeoutError as exc:
            raise transport_error(exc, timeout=True) from None
        except HttpError as exc:
            raise transport_error(exc) from None
        finally:
            stream.close()

    async def _open_watch(self, target: str, total: float | None) -> Stream:
        try:
            stream = await self._pool.stream("GET", target, headers=self._headers(None), connect_timeout=self.timeout,
                                             total_timeout=total)
        except ConnectFailed as exc:
            raise transport_error(exc.cause, refused=not exc.tls) from None
        except TimeoutError as exc:
            raise transport_error(exc, timeout=True) from None
        except HttpError as exc:
            if isinstance(exc, ConnectionBroken):
                raise _Retry(1.0, transport_error(exc)) from None
            raise transport_error(exc) from None
        if stream.status == 200:
            return stream
        try:
            try:
                payload = await stream.read()
            except (HttpError, TimeoutError):
                payload = b""
        finally:
            stream.close()
        retry_after = _retry_after(stream.headers.get("retry-after"))
        error = api_error_from_response(stream.status, payload, retry_after)
        if retry_after is not None and (stream.status == 429 or stream.status >= 500) \
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
