"""A request that got no answer, worded as client-go words it.

kube-scheduler's messages about a failed request (a binding's ``FailedScheduling`` event,
the pod's ``PodScheduled`` condition, the logs) carry Go's ``net/http`` error: a
``*url.Error`` whose text is the method (``Post``), the URL quoted and the cause::

    Post "https://10.0.0.1:6443/api/v1/namespaces/ns/pods/p/binding": dial tcp 10.0.0.1:6443: connect: connection refused

Its causes are Go's own texts: ``dial tcp ADDR: connect: connection refused`` (a
``*net.OpError`` over the syscall's errno, which Go spells in lower case), ``dial tcp:
lookup HOST: no such host``, ``EOF`` (the server closed the connection before answering),
``read tcp ADDR: read: connection reset by peer``, ``context deadline exceeded`` (the
request's deadline), ``tls: failed to verify certificate: x509: ...``. A failure while
reading an answer's body is wrapped by client-go's ``transformResponse`` (``unexpected
error when reading response body. Please retry. Original error: ...``).

Here the failure is an aiohttp exception; ``describe`` gives the text Go would have
written for the same event. Two things Go knows and aiohttp does not tell: the local
address of a broken connection (Go writes ``read tcp LOCAL->REMOTE``; here ``read tcp
REMOTE``, the form Go uses when it has no source address) and, for a server named by a
host name, which of its addresses was dialled (here the name, as written).
"""

from __future__ import annotations

import asyncio
import errno
import os
import re
import socket
import ssl
from typing import NamedTuple

import aiohttp
from yarl import URL

from .errors import REASON_CONNECTION_REFUSED, REASON_TIMEOUT, REASON_TRANSPORT

__all__ = ["Failure", "describe", "url_error"]

#: client-go's wrapping of a failure while reading an answer's body (rest/request.go).
BODY_READ = "unexpected error when reading response body. Please retry. Original error: "

# What OpenSSL's verification codes are in Go's x509 errors.
_UNKNOWN_AUTHORITY = frozenset({18, 19, 20, 21, 2})  # self-signed, untrusted chain, no issuer
_EXPIRED = frozenset({9, 10})  # not yet valid, expired
_HOST_MISMATCH = 62
_CONNECT_CALL = re.compile(r"Connect call failed \('([^']+)', (\d+)")


class Failure(NamedTuple):
    """The error's reason (``ApiError.reason``) and Go's text of it."""

    reason: str
    text: str


def url_error(method: str, url: str, cause: str) -> str:
    """``url.Error.Error()``: the method as Go's ``urlErrorOp`` spells it, the URL quoted."""
    return f'{method[:1].upper()}{method[1:].lower()} "{url}": {cause}'


def describe(exc: BaseException, method: str, url: URL, *, reading_body: bool = False) -> Failure:
    """The failure of ``method url`` as client-go reports it; ``reading_body``: the answer's
    headers had arrived."""
    reason, cause = _cause(exc, url)
    if reading_body:
        cause = BODY_READ + ("unexpected EOF" if cause == "EOF" else cause)
    return Failure(reason, url_error(method, str(url), cause))


def _address(url: URL) -> str:
    host = url.host or ""
    port = url.port or (443 if url.scheme == "https" else 80)
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _errno_text(code: int | None) -> str:
    """A syscall errno as Go's ``syscall.Errno`` prints it (strerror, lower-cased first letter)."""
    if code is None:
        return "unknown error"
    text = os.strerror(code)
    return text[:1].lower() + text[1:]


def _dialled(exc: aiohttp.ClientConnectorError, url: URL) -> str:
    """The address a refused dial went to: the one in the socket's error when it names one."""
    found = _CONNECT_CALL.search(str(exc.os_error))
    if found is not None:
        host, port = found.groups()
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return _address(url)


def _cause(exc: BaseException, url: URL) -> tuple[str, str]:
    if isinstance(exc, aiohttp.ClientConnectorCertificateError):
        return REASON_TRANSPORT, "tls: failed to verify certificate: " + _x509(exc.certificate_error, url)
    if isinstance(exc, aiohttp.ClientConnectorDNSError) or (
            isinstance(exc, aiohttp.ClientConnectorError) and isinstance(exc.os_error, socket.gaierror)):
        return REASON_CONNECTION_REFUSED, f"dial tcp: lookup {url.host}: no such host"
    if isinstance(exc, aiohttp.ClientSSLError):  # the handshake failed (a certificate's is above)
        return REASON_TRANSPORT, _tls(exc)
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return REASON_TIMEOUT, f"dial tcp {_address(url)}: i/o timeout"
    if isinstance(exc, aiohttp.ClientConnectorError):
        return REASON_CONNECTION_REFUSED, f"dial tcp {_dialled(exc, url)}: connect: {_errno_text(exc.os_error.errno)}"
    if isinstance(exc, asyncio.TimeoutError):  # the request's deadline (aiohttp's read timeout)
        return REASON_TIMEOUT, "context deadline exceeded"
    if isinstance(exc, aiohttp.ServerDisconnectedError):  # closed with no answer (or half of one)
        return REASON_TRANSPORT, "EOF"
    if isinstance(exc, aiohttp.ClientPayloadError):
        return REASON_TRANSPORT, "unexpected EOF"
    if isinstance(exc, (aiohttp.ClientOSError, OSError)) and exc.errno is not None:
        if exc.errno == errno.EPIPE:
            return REASON_TRANSPORT, f"write tcp {_address(url)}: write: broken pipe"
        return REASON_TRANSPORT, f"read tcp {_address(url)}: read: {_errno_text(exc.errno)}"
    if isinstance(exc, aiohttp.ClientConnectionResetError):  # "Cannot write to closing transport"
        return REASON_TRANSPORT, f"write tcp {_address(url)}: use of closed network connection"
    text = str(exc)
    return REASON_TRANSPORT, text if text else type(exc).__name__


def _x509(error: BaseException, url: URL) -> str:
    code = getattr(error, "verify_code", None)
    if code in _UNKNOWN_AUTHORITY:
        return "x509: certificate signed by unknown authority"
    if code in _EXPIRED:
        return "x509: certificate has expired or is not yet valid"
    if code == _HOST_MISMATCH:
        return f"x509: certificate is not valid for {url.host}"
    message = getattr(error, "verify_message", "") or str(error)
    return f"x509: {message}"


def _tls(exc: aiohttp.ClientSSLError) -> str:
    os_error = getattr(exc, "os_error", None)
    reason = str(os_error.reason or "") if isinstance(os_error, ssl.SSLError) else ""
    if reason == "WRONG_VERSION_NUMBER":  # not TLS: as a rule a plain HTTP server (Go's ErrSchemeMismatch)
        return "http: server gave HTTP response to HTTPS client"
    if reason:
        return "remote error: tls: " + reason.lower().replace("_", " ")
    return f"tls: {os_error or exc}"
