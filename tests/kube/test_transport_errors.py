"""A request that got no answer reads as client-go's error for it: Go's ``url.Error``
(``Post "URL": cause``) over Go's own text of the cause, each case made happen for real
against a loopback server that misbehaves that way."""

from __future__ import annotations

import asyncio
import socket
import ssl
import struct
from collections.abc import Awaitable, Callable

import aiohttp
import pytest
from yarl import URL

from kubesched.cluster.kube.client import ApiClient
from kubesched.cluster.kube.connection import Connection
from kubesched.cluster.kube.errors import ApiError
from kubesched.cluster.kube.transport_errors import describe, url_error
from tests.apiserver.tls import CA_FILE, server_context

BINDING = "/api/v1/namespaces/ns/pods/p/binding"
Behaviour = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def _read_request(reader: asyncio.StreamReader) -> None:
    await reader.readuntil(b"\r\n\r\n")


async def _close_without_answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await _read_request(reader)
    writer.close()


async def _reset(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await _read_request(reader)
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close sends RST
    writer.transport.abort()


async def _never_answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        await _read_request(reader)
        await asyncio.sleep(5)
    except (asyncio.CancelledError, ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
        pass


async def _plain_http(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    # What a plain HTTP server answers the bytes of a TLS handshake.
    writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
                 b"400 Bad Request")
    await writer.drain()
    writer.close()


async def _half_a_body(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await _read_request(reader)
    writer.write(b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"kind\"")
    await writer.drain()
    writer.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _failure(behaviour: Behaviour | None, *, tls_server: bool = False, trust: bool = True,
                   https: bool | None = None) -> tuple[str, str]:
    """POST a binding to a server behaving so (None: nothing listens); the error's text with
    the server's address written as ADDR, and its reason."""
    server = None
    if behaviour is None:
        port = _free_port()
    else:
        server = await asyncio.start_server(behaviour, "127.0.0.1", 0, ssl=server_context() if tls_server else None)
        port = server.sockets[0].getsockname()[1]
    secure = tls_server if https is None else https
    context = ssl.create_default_context(cafile=str(CA_FILE) if trust else None) if secure else None
    conn = Connection(server=f"{'https' if secure else 'http'}://127.0.0.1:{port}", ssl=context,
                      token=lambda: None, basic_auth=None, qps=0)
    try:
        async with ApiClient(conn, timeout=0.5) as client:
            with pytest.raises(ApiError) as caught:
                await client.write("POST", BINDING, body={"kind": "Binding"})
    finally:
        if server is not None:
            server.close()
    error = caught.value
    assert error.status == 0 and str(error) == error.message
    return error.message.replace(f"127.0.0.1:{port}", "ADDR"), error.reason


CASES = [
    pytest.param(None, {}, 'Post "http://ADDR/api/v1/namespaces/ns/pods/p/binding": dial tcp ADDR: connect: '
                 "connection refused", "ConnectionRefused", id="nothing listens"),
    pytest.param(_close_without_answer, {}, 'Post "http://ADDR/api/v1/namespaces/ns/pods/p/binding": EOF',
                 "TransportError", id="closed before answering"),
    pytest.param(_reset, {}, 'Post "http://ADDR/api/v1/namespaces/ns/pods/p/binding": read tcp ADDR: read: '
                 "connection reset by peer", "TransportError", id="reset"),
    pytest.param(_never_answer, {}, 'Post "http://ADDR/api/v1/namespaces/ns/pods/p/binding": context deadline '
                 "exceeded", "Timeout", id="no answer in time"),
    pytest.param(_half_a_body, {}, 'Post "http://ADDR/api/v1/namespaces/ns/pods/p/binding": unexpected error when '
                 "reading response body. Please retry. Original error: unexpected EOF", "TransportError",
                 id="answer cut short"),
    pytest.param(_never_answer, {"tls_server": True, "trust": False},
                 'Post "https://ADDR/api/v1/namespaces/ns/pods/p/binding": tls: failed to verify certificate: '
                 "x509: certificate signed by unknown authority", "TransportError", id="untrusted certificate"),
    pytest.param(_plain_http, {"https": True},
                 'Post "https://ADDR/api/v1/namespaces/ns/pods/p/binding": http: server gave HTTP response to '
                 "HTTPS client", "TransportError", id="https to a plain server"),
]


@pytest.mark.parametrize(("behaviour", "setup", "text", "reason"), CASES)
def test_a_failed_request_reads_as_client_gos_error(behaviour: Behaviour | None, setup: dict[str, bool], text: str,
                                                   reason: str) -> None:
    message, got_reason = asyncio.run(_failure(behaviour, **setup))
    assert (message, got_reason) == (text, reason)


@pytest.mark.parametrize(("method", "op"), [("POST", "Post"), ("GET", "Get"), ("PATCH", "Patch"),
                                            ("DELETE", "Delete"), ("PUT", "Put")])
def test_the_method_is_spelled_as_gos_url_error_spells_it(method: str, op: str) -> None:
    assert url_error(method, "https://h:6443/x", "EOF") == f'{op} "https://h:6443/x": EOF'


def test_a_name_that_does_not_resolve_is_a_failed_lookup() -> None:
    key = aiohttp.client_reqrep.ConnectionKey("nohost.invalid", 6443, True, True, None, None, None)
    error = aiohttp.ClientConnectorDNSError(key, socket.gaierror(socket.EAI_NONAME, "Name or service not known"))
    failure = describe(error, "POST", URL("https://nohost.invalid:6443/api/v1/namespaces/ns/pods/p/binding"))
    assert failure.text == ('Post "https://nohost.invalid:6443/api/v1/namespaces/ns/pods/p/binding": dial tcp: '
                            "lookup nohost.invalid: no such host")


def test_an_ipv6_server_is_written_in_brackets() -> None:
    failure = describe(aiohttp.ClientOSError(104, "Connection reset by peer"), "GET", URL("https://[::1]:6443/api"))
    assert failure.text == 'Get "https://[::1]:6443/api": read tcp [::1]:6443: read: connection reset by peer'
