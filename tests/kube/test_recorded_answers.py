"""kubesched's API client against answers a real kube-apiserver v1.36.2 gave (replayed
byte for byte from tests/apiserver/transcript): the plain-text 429s are retried after
their Retry-After, the 504 for a too-new resourceVersion is handed over at once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from aiohttp import web

from kubesched.cluster.kube.client import ApiClient
from kubesched.cluster.kube.connection import Connection
from kubesched.cluster.kube.errors import ApiError
from tests.apiserver.transcript import Exchange, exchange


def _replay(recorded: Exchange) -> web.Response:
    headers = {k: v for k, v in recorded.response_headers.items()
               if k not in ("content-length", "transfer-encoding", "date", "content-type")}
    response = web.Response(status=recorded.status, body=recorded.body + b"\n", headers=headers)
    response.headers["Content-Type"] = recorded.response_headers["content-type"]
    return response


@asynccontextmanager
async def _server(answers: list[web.Response], seen: list[str]) -> AsyncIterator[ApiClient]:
    async def handler(request: web.Request) -> web.Response:
        seen.append(request.path_qs)
        return answers.pop(0) if answers else web.json_response({"kind": "PodList", "metadata": {}, "items": []})

    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    client = ApiClient(Connection(server=f"http://127.0.0.1:{port}", ssl=None, token=lambda: "t", basic_auth=None))
    try:
        yield client
    finally:
        await client.close()
        await runner.cleanup()


def test_a_recorded_max_in_flight_429_is_retried_after_its_retry_after() -> None:
    recorded = exchange(42)
    seen: list[str] = []

    async def scenario() -> tuple[dict[str, object], float]:
        async with _server([_replay(recorded)], seen) as client:
            started = asyncio.get_running_loop().time()
            answer = await client.request("GET", recorded.path, params=recorded.query)
            return answer, asyncio.get_running_loop().time() - started

    answer, waited = asyncio.run(asyncio.wait_for(scenario(), 20))
    assert answer["kind"] == "PodList" and len(seen) == 2
    assert waited >= float(recorded.response_headers["retry-after"]) * 0.9


def test_a_recorded_504_for_a_too_new_resource_version_is_raised_at_once_for_the_reflector() -> None:
    recorded = exchange(31)
    seen: list[str] = []

    async def scenario() -> ApiError:
        async with _server([_replay(recorded)], seen) as client:
            try:
                await client.request("GET", recorded.path, params=recorded.query)
            except ApiError as err:
                return err
            raise AssertionError("no error")

    error = asyncio.run(asyncio.wait_for(scenario(), 20))
    assert len(seen) == 1  # not retried ten times, as client-go would (some 40 s against a real server)
    assert error.status == 504 and error.is_too_large_resource_version()
    assert error.message == recorded.json()["message"]
