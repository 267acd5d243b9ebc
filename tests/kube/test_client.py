"""ApiClient: standard requests, client-go's Retry-After retries, Status errors, throttling and
watch stream decoding, against minimal aiohttp handlers."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import pytest
from aiohttp import web

from kubesched.cluster.kube.client import MAX_RETRIES, ApiClient
from kubesched.cluster.kube.connection import Connection
from kubesched.cluster.kube.errors import ApiError
from kubesched.cluster.kube.ratelimit import TokenBucket
from kubesched.cluster.kube.watch import WatchEvent, iter_lines

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _token() -> str:
    return "tok-1"


@asynccontextmanager
async def serve(routes: dict[tuple[str, str], Handler], **conn: object) -> AsyncIterator[ApiClient]:
    app = web.Application()
    for (method, path), handler in routes.items():
        app.router.add_route(method, path, handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    client = ApiClient(Connection(server=f"http://127.0.0.1:{port}", ssl=None, token=_token, basic_auth=None,
                                  **conn))  # type: ignore[arg-type]
    try:
        yield client
    finally:
        await client.close()
        await runner.cleanup()


def status(code: int, reason: str, message: str = "", **headers: str) -> web.Response:
    body = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code, "reason": reason,
            "message": message}
    return web.json_response(body, status=code, headers=headers)


def run(coro: Awaitable[object]) -> object:
    return asyncio.run(asyncio.wait_for(coro, 20))  # type: ignore[arg-type]


def test_request_sends_standard_headers_and_decodes_json() -> None:
    seen: dict[str, str] = {}

    async def handler(request: web.Request) -> web.Response:
        seen.update(request.headers)
        seen["query"] = request.query_string
        return web.json_response({"kind": "PodList", "items": [{"metadata": {"name": "a"}}]})

    async def scenario() -> dict[str, object]:
        async with serve({("GET", "/api/v1/pods"): handler}, user_agent="kubesched/test") as client:
            return await client.request("GET", "/api/v1/pods", params={"limit": "5"})

    answer = run(scenario())
    assert answer == {"kind": "PodList", "items": [{"metadata": {"name": "a"}}]}
    assert seen["Authorization"] == "Bearer tok-1"
    assert seen["Accept"] == "application/json"
    assert seen["User-Agent"] == "kubesched/test"
    assert seen["query"] == "limit=5"


def test_request_body_is_json_with_its_content_type() -> None:
    received: list[tuple[str, object]] = []

    async def handler(request: web.Request) -> web.Response:
        received.append((request.content_type, json.loads(await request.read())))
        return web.json_response({"kind": "Binding"}, status=201)

    async def patch(request: web.Request) -> web.Response:
        received.append((request.content_type, json.loads(await request.read())))
        return web.json_response({})

    async def both() -> None:
        async with serve({("POST", "/api/v1/namespaces/ns/pods/p/binding"): handler,
                          ("PATCH", "/api/v1/namespaces/ns/pods/p/binding"): patch}) as client:
            await client.request("POST", "/api/v1/namespaces/ns/pods/p/binding", body={"target": {"name": "n1"}})
            await client.request("PATCH", "/api/v1/namespaces/ns/pods/p/binding", body=b'{"a":1}',
                                 content_type="application/merge-patch+json")

    run(both())
    assert received == [("application/json", {"target": {"name": "n1"}}),
                        ("application/merge-patch+json", {"a": 1})]


def test_status_failure_becomes_api_error_with_reason() -> None:
    async def handler(request: web.Request) -> web.Response:
        return status(404, "NotFound", 'pods "p" not found')

    async def scenario() -> ApiError:
        async with serve({("GET", "/api/v1/namespaces/ns/pods/p"): handler}) as client:
            with pytest.raises(ApiError) as info:
                await client.request("GET", "/api/v1/namespaces/ns/pods/p")
            return info.value

    error = run(scenario())
    assert isinstance(error, ApiError)
    assert (error.status, error.reason, error.message) == (404, "NotFound", 'pods "p" not found')
    assert error.is_not_found() and not error.is_conflict()


@pytest.mark.parametrize(("server_path", "path", "sent"), [
    ("", "/api/v1/namespaces/ns/pods/p-1.a/binding", "/api/v1/namespaces/ns/pods/p-1.a/binding"),
    ("", "/api/v1/namespaces/ns/configmaps/a b%", "/api/v1/namespaces/ns/configmaps/a%20b%25"),
    ("/k8s/clusters/c-1", "/api/v1/namespaces/ns/pods/p/binding", "/k8s/clusters/c-1/api/v1/namespaces/ns/pods/p/binding"),
])
def test_the_request_path_is_quoted_once_after_the_servers_own_path(server_path: str, path: str, sent: str) -> None:
    seen: list[str] = []

    async def handler(request: web.Request) -> web.Response:
        seen.append(request.raw_path)
        return web.json_response({})

    async def scenario() -> None:
        async with serve({("POST", "/{tail:.*}"): handler}) as served:
            conn = Connection(server=served.conn.server + server_path, ssl=None, token=_token, basic_auth=None)
            async with ApiClient(conn) as client:
                await client.request("POST", path, body={})

    run(scenario())
    assert seen == [sent]


def test_a_write_returns_the_status_without_decoding_the_answer() -> None:
    received: list[object] = []

    async def handler(request: web.Request) -> web.Response:
        received.append(json.loads(await request.read()))
        return web.Response(status=201, body=b"not json: nobody reads it", content_type="text/plain")

    async def scenario() -> int:
        async with serve({("POST", "/api/v1/namespaces/ns/pods/p/binding"): handler}) as client:
            return await client.write("POST", "/api/v1/namespaces/ns/pods/p/binding", body={"kind": "Binding"})

    assert run(scenario()) == 201
    assert received == [{"kind": "Binding"}]


def test_a_refused_write_is_an_api_error_as_a_refused_request() -> None:
    async def handler(request: web.Request) -> web.Response:
        return status(409, "Conflict", 'pods "p" is already assigned to node "n1"')

    async def scenario() -> ApiError:
        async with serve({("POST", "/api/v1/namespaces/ns/pods/p/binding"): handler}) as client:
            with pytest.raises(ApiError) as info:
                await client.write("POST", "/api/v1/namespaces/ns/pods/p/binding", body={"kind": "Binding"})
            return info.value

    error = run(scenario())
    assert isinstance(error, ApiError)
    assert (error.status, error.reason) == (409, "Conflict") and error.is_conflict()


def test_a_rotated_token_is_sent_from_the_next_request_on() -> None:
    tokens = iter(["tok-1", "tok-1", "tok-2"])
    seen: list[str] = []

    async def handler(request: web.Request) -> web.Response:
        seen.append(request.headers["Authorization"])
        return web.json_response({})

    async def scenario() -> None:
        async with serve({("POST", "/api/v1/pods"): handler}) as client:
            client.conn = Connection(server=client.conn.server, ssl=None, token=lambda: next(tokens),
                                     basic_auth=None)
            for _ in range(3):
                await client.request("POST", "/api/v1/pods", body={})

    run(scenario())
    assert seen == ["Bearer tok-1", "Bearer tok-1", "Bearer tok-2"]


def test_too_many_requests_with_retry_after_is_retried_until_success() -> None:
    calls = []

    async def handler(request: web.Request) -> web.Response:
        calls.append(1)
        if len(calls) < 3:
            return status(429, "TooManyRequests", "slow down", **{"Retry-After": "0"})
        return web.json_response({"kind": "Pod"})

    async def scenario() -> dict[str, object]:
        async with serve({("GET", "/api/v1/pods"): handler}) as client:
            return await client.request("GET", "/api/v1/pods")

    assert run(scenario()) == {"kind": "Pod"}
    assert len(calls) == 3


def test_server_error_with_retry_after_gives_up_after_max_retries() -> None:
    calls = []

    async def handler(request: web.Request) -> web.Response:
        calls.append(1)
        return status(503, "ServiceUnavailable", "down", **{"Retry-After": "0"})

    async def scenario() -> ApiError:
        async with serve({("POST", "/api/v1/namespaces/ns/events"): handler}) as client:
            with pytest.raises(ApiError) as info:
                await client.request("POST", "/api/v1/namespaces/ns/events", body={})
            return info.value

    error = run(scenario())
    assert isinstance(error, ApiError) and error.status == 503 and error.retry_after == 0.0
    assert len(calls) == MAX_RETRIES + 1


def test_server_error_without_retry_after_raises_at_once() -> None:
    calls = []

    async def handler(request: web.Request) -> web.Response:
        calls.append(1)
        return status(500, "InternalError", "boom")

    async def scenario() -> None:
        async with serve({("GET", "/api/v1/pods"): handler}) as client:
            with pytest.raises(ApiError, match="boom"):
                await client.request("GET", "/api/v1/pods")

    run(scenario())
    assert len(calls) == 1


def test_conflict_is_not_retried() -> None:
    calls = []

    async def handler(request: web.Request) -> web.Response:
        calls.append(1)
        return status(409, "Conflict", "the object has been modified", **{"Retry-After": "0"})

    async def scenario() -> None:
        async with serve({("PUT", "/api/v1/nodes/n"): handler}) as client:
            with pytest.raises(ApiError) as info:
                await client.request("PUT", "/api/v1/nodes/n", body={})
            assert info.value.is_conflict()

    run(scenario())
    assert len(calls) == 1


def test_non_status_error_body_is_classified_by_code() -> None:
    async def handler(request: web.Request) -> web.Response:
        return web.Response(status=403, text="no way")

    async def scenario() -> None:
        async with serve({("GET", "/api/v1/pods"): handler}) as client:
            with pytest.raises(ApiError) as info:
                await client.request("GET", "/api/v1/pods")
            assert info.value.is_forbidden() and info.value.message == "no way"

    run(scenario())


def test_refused_connection_is_a_transport_error() -> None:
    async def scenario() -> None:
        async with serve({}) as client:
            pass
        # The server is gone: its port refuses connections.
        client = ApiClient(Connection(server=client.conn.server, ssl=None, token=_token, basic_auth=None))
        try:
            with pytest.raises(ApiError) as info:
                await client.request("GET", "/api/v1/pods")
            assert info.value.status == 0 and info.value.is_connection_refused()
        finally:
            await client.close()

    run(scenario())


def test_watch_streams_one_event_per_line_with_the_watch_parameters() -> None:
    big = "x" * 300_000  # larger than aiohttp's readline buffer
    events = [
        {"type": "ADDED", "object": {"metadata": {"name": "a", "resourceVersion": "2"}}},
        {"type": "MODIFIED", "object": {"metadata": {"name": "b", "resourceVersion": "3"}, "data": big}},
        {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "4"}}},
    ]
    queries: list[dict[str, str]] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        queries.append(dict(request.query))
        response = web.StreamResponse()
        response.content_type = "application/json"
        await response.prepare(request)
        encoded = b"".join(json.dumps(e).encode() + b"\n" for e in events)
        for start in range(0, len(encoded), 7001):  # chunks that cut lines anywhere
            await response.write(encoded[start:start + 7001])
        await response.write_eof()
        return response

    async def scenario() -> list[WatchEvent]:
        async with serve({("GET", "/api/v1/pods"): handler}) as client:
            return [e async for e in client.watch("/api/v1/pods", {"resourceVersion": "1", "timeoutSeconds": "9"})]

    received = run(scenario())
    assert isinstance(received, list)
    assert [(e.type, e.object) for e in received] == [(e["type"], e["object"]) for e in events]
    assert received[1].raw_size > 300_000
    assert queries == [{"resourceVersion": "1", "timeoutSeconds": "9", "watch": "true"}]


def test_watch_refusal_is_raised_as_api_error() -> None:
    async def handler(request: web.Request) -> web.Response:
        return status(410, "Expired", "too old resource version: 1 (5)")

    async def scenario() -> None:
        async with serve({("GET", "/api/v1/pods"): handler}) as client:
            with pytest.raises(ApiError) as info:
                async for _ in client.watch("/api/v1/pods", {"resourceVersion": "1"}):
                    pass
            assert info.value.is_gone()

    run(scenario())


def test_iter_lines_splits_across_chunks_and_keeps_a_final_unterminated_line() -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for piece in (b'{"a"', b':1}\n{"b":2}\n\n{"c"', b"", b":3}"):
            yield piece

    async def collect() -> list[bytes]:
        return [line async for line in iter_lines(chunks())]

    assert asyncio.run(collect()) == [b'{"a":1}', b'{"b":2}', b'{"c":3}']


# --- throttling --------------------------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_token_bucket_allows_a_burst_then_spaces_requests_at_qps() -> None:
    clock = FakeClock()
    bucket = TokenBucket(qps=10.0, burst=3, now=clock)
    assert [bucket.reserve() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.reserve() == pytest.approx(0.1)
    assert bucket.reserve() == pytest.approx(0.2)  # queued behind the previous reservation


def test_token_bucket_refills_over_time_up_to_burst() -> None:
    clock = FakeClock()
    bucket = TokenBucket(qps=2.0, burst=2, now=clock)
    bucket.reserve()
    bucket.reserve()
    clock.now = 100.0  # long idle: the bucket holds at most ``burst`` tokens
    assert [bucket.reserve() for _ in range(2)] == [0.0, 0.0]
    assert bucket.reserve() == pytest.approx(0.5)


def test_token_bucket_with_zero_qps_does_not_throttle() -> None:
    bucket = TokenBucket(qps=0.0, burst=1, now=FakeClock())
    assert {bucket.reserve() for _ in range(100)} == {0.0}


def test_client_requests_take_tokens_from_the_bucket() -> None:
    async def handler(request: web.Request) -> web.Response:
        return web.json_response({})

    async def scenario() -> float:
        async with serve({("GET", "/api/v1/pods"): handler}, qps=1.0, burst=2) as client:
            await client.request("GET", "/api/v1/pods")
            await client.request("GET", "/api/v1/pods")
            return client._bucket.reserve()  # the third request would wait for a refill

    assert run(scenario()) > 0.5


def test_time_spent_waiting_for_a_pooled_connection_is_not_the_requests_timeout() -> None:
    # One connection, four requests of 0.3 s each: the last waits 0.9 s for the connection,
    # longer than its 0.5 s timeout, and still succeeds (client-go's requests queue too).
    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(0.3)
        return web.json_response({"kind": "Status"})

    async def scenario() -> list[dict[str, object]]:
        async with serve({("GET", "/slow"): slow}) as served:
            async with ApiClient(served.conn, max_connections=1) as client:  # a pool of one
                return await asyncio.gather(*(client.request("GET", "/slow", timeout=0.5) for _ in range(4)))

    assert [answer["kind"] for answer in run(scenario())] == ["Status"] * 4  # type: ignore[index]


def test_a_request_waiting_for_the_pool_goes_before_one_asked_for_later() -> None:
    # Two connections, two tasks that ask again the moment an answer arrives (as binding tasks
    # do), and a third request (an event) asked meanwhile: it gets the next free connection
    # instead of waiting until the busy tasks stop.
    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(0.02)
        return web.json_response({})

    async def scenario() -> int:
        async with serve({("POST", "/bind"): slow, ("POST", "/event"): slow}) as served:
            async with ApiClient(served.conn, max_connections=2) as client:
                binds = 0

                async def binder() -> None:
                    nonlocal binds
                    while binds < 200:
                        await client.write("POST", "/bind")
                        binds += 1

                tasks = [asyncio.create_task(binder()) for _ in range(2)]
                await asyncio.sleep(0.05)
                await client.write("POST", "/event")
                written_after = binds
                await asyncio.gather(*tasks)
                return written_after

    assert run(scenario()) < 20  # two rounds of binds at most, not all 200


def test_open_watches_do_not_take_the_requests_connections() -> None:
    # A pool of one connection for requests, and two watches streaming meanwhile.
    stop = asyncio.Event()

    async def stream(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        await response.prepare(request)
        await response.write(b'{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"1"}}}\n')
        await stop.wait()
        await response.write_eof()
        return response

    async def answer(request: web.Request) -> web.Response:
        return web.json_response({"kind": "PodList"})

    async def scenario() -> dict[str, object]:
        async with serve({("GET", "/api/v1/nodes"): stream, ("GET", "/api/v1/pods"): answer}) as served:
            async with ApiClient(served.conn, max_connections=1) as client:
                watches = [client.watch("/api/v1/nodes", {"timeoutSeconds": "9"}) for _ in range(2)]
                for watch in watches:
                    await watch.__anext__()  # each watch is open and streaming
                listed = await asyncio.wait_for(client.request("GET", "/api/v1/pods"), 5)
                stop.set()
                for watch in watches:
                    await watch.aclose()
                return listed

    assert run(scenario()) == {"kind": "PodList"}


def test_a_server_that_does_not_answer_within_the_timeout_fails_the_request() -> None:
    async def stalled(request: web.Request) -> web.Response:
        await asyncio.sleep(2)
        return web.json_response({})

    async def scenario() -> ApiError:
        async with serve({("GET", "/stalled"): stalled}) as client:
            try:
                await client.request("GET", "/stalled", timeout=0.3)
            except ApiError as err:
                return err
            raise AssertionError("no timeout")

    error = run(scenario())
    assert isinstance(error, ApiError) and error.status == 0


def test_a_gzip_answer_is_inflated() -> None:
    seen: list[str] = []

    async def handler(request: web.Request) -> web.Response:
        seen.append(request.headers.get("Accept-Encoding", ""))
        response = web.json_response({"kind": "PodList", "items": [{"metadata": {"name": "a" * 5000}}]})
        response.enable_compression(web.ContentCoding.gzip)
        return response

    async def scenario() -> dict[str, object]:
        async with serve({("GET", "/api/v1/pods"): handler}) as client:
            return await client.request("GET", "/api/v1/pods")

    assert run(scenario()) == {"kind": "PodList", "items": [{"metadata": {"name": "a" * 5000}}]}
    assert "gzip" in seen[0]


def test_a_chunked_answer_is_read_whole() -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        response.content_type = "application/json"
        await response.prepare(request)
        encoded = json.dumps({"kind": "PodList", "items": [{"n": i} for i in range(2000)]}).encode()
        for start in range(0, len(encoded), 4096):
            await response.write(encoded[start:start + 4096])
        await response.write_eof()
        return response

    async def scenario() -> dict[str, object]:
        async with serve({("GET", "/api/v1/pods"): handler}) as client:
            return await client.request("GET", "/api/v1/pods")

    assert run(scenario()) == {"kind": "PodList", "items": [{"n": i} for i in range(2000)]}


def test_requests_one_after_another_share_one_kept_alive_connection() -> None:
    peers: set[object] = set()

    async def handler(request: web.Request) -> web.Response:
        assert request.transport is not None
        peers.add(request.transport.get_extra_info("peername"))
        return web.json_response({})

    async def scenario() -> None:
        async with serve({("POST", "/x"): handler}) as client:
            for _ in range(5):
                await client.request("POST", "/x", body={})

    run(scenario())
    assert len(peers) == 1


def test_a_client_sharing_anothers_connections_uses_them_and_leaves_them_open_when_closed() -> None:
    peers: list[object] = []

    async def handler(request: web.Request) -> web.Response:
        assert request.transport is not None
        peers.append(request.transport.get_extra_info("peername"))
        return web.json_response({})

    async def scenario() -> None:
        async with serve({("POST", "/x"): handler}) as client:
            await client.request("POST", "/x", body={})
            async with ApiClient(client.conn, share_with=client) as events:
                await events.request("POST", "/x", body={})
            await client.request("POST", "/x", body={})  # the owner's pool is still open

    run(scenario())
    assert len(peers) == 3 and len(set(peers)) == 1


def test_a_connection_the_server_asked_to_close_is_not_reused() -> None:
    peers: list[object] = []

    async def handler(request: web.Request) -> web.Response:
        assert request.transport is not None
        peers.append(request.transport.get_extra_info("peername"))
        return web.json_response({}, headers={"Connection": "close"})

    async def scenario() -> None:
        async with serve({("GET", "/x"): handler}) as client:
            for _ in range(3):
                await client.request("GET", "/x")

    run(scenario())
    assert len(set(peers)) == 3
