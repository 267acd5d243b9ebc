"""Leader election and the event broadcaster over real HTTP: the API client against the
test API server (tests/apiserver), which keeps resourceVersions as kube-apiserver does."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator

import pytest

from kubesched.cluster.kube.client import ApiClient
from kubesched.cluster.kube.connection import Connection
from kubesched.cluster.kube.events import ACTION_SCHEDULING, EventBroadcaster, ObjectRef
from kubesched.cluster.kube.leader import LeaderElector
from tests.apiserver import APIServer

FAST = {"lease_duration": 1.0, "renew_deadline": 0.5, "retry_period": 0.1}


@pytest.fixture
def server() -> Iterator[APIServer]:
    with APIServer() as api_server:
        yield api_server


def lease_spec(server: APIServer) -> dict[str, object]:
    lease = server.get("Lease", "kube-system", "kube-scheduler")
    assert lease is not None
    return lease["spec"]  # type: ignore[return-value]


def run(server: APIServer, scenario: Callable[[ApiClient], Awaitable[None]]) -> None:
    async def main() -> None:
        conn = Connection(server=server.url, ssl=None, token=lambda: "t", basic_auth=None, qps=0.0)
        async with ApiClient(conn, timeout=5.0) as client:
            await scenario(client)

    asyncio.run(asyncio.wait_for(main(), 15))


class Candidate:
    def __init__(self, client: ApiClient, identity: str, **options: object) -> None:
        self.elector = LeaderElector(client, identity=identity, **{**FAST, **options})  # type: ignore[arg-type]
        self.started = asyncio.Event()
        self.stopped = asyncio.Event()
        self.task = asyncio.create_task(self.elector.run(self._lead, self.stopped.set))

    async def _lead(self) -> None:
        self.started.set()
        await asyncio.Event().wait()

    async def cancel(self) -> None:
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


async def until(condition: Callable[[], bool]) -> None:
    while not condition():
        await asyncio.sleep(0.01)


def test_two_electors_race_and_exactly_one_leads(server: APIServer) -> None:
    async def scenario(client: ApiClient) -> None:
        a, b = Candidate(client, "a"), Candidate(client, "b")
        await until(lambda: a.started.is_set() or b.started.is_set())
        await asyncio.sleep(0.5)
        assert a.started.is_set() != b.started.is_set()
        leader = "a" if a.started.is_set() else "b"
        assert lease_spec(server)["holderIdentity"] == leader
        await a.cancel()
        await b.cancel()

    run(server, scenario)


def test_the_other_takes_over_after_the_lease_expires(server: APIServer) -> None:
    async def scenario(client: ApiClient) -> None:
        a = Candidate(client, "a", release_on_cancel=False)
        await a.started.wait()
        b = Candidate(client, "b")
        await asyncio.sleep(0.2)
        await a.cancel()
        await b.started.wait()
        spec = lease_spec(server)
        assert (spec["holderIdentity"], spec["leaseTransitions"]) == ("b", 1)
        await b.cancel()

    run(server, scenario)


def test_renewals_failing_past_the_deadline_stop_leading(server: APIServer) -> None:
    async def scenario(client: ApiClient) -> None:
        a = Candidate(client, "a")
        await a.started.wait()
        server.faults.add(path="leases", status=500, times=None)
        await a.stopped.wait()
        await a.task

    run(server, scenario)


def test_release_on_cancel_frees_the_lease(server: APIServer) -> None:
    async def scenario(client: ApiClient) -> None:
        a = Candidate(client, "a")
        await a.started.wait()
        await a.cancel()
        spec = lease_spec(server)
        assert (spec["holderIdentity"], spec["leaseDurationSeconds"]) == ("", 1)

    run(server, scenario)


def test_events_and_their_series_reach_the_api_server(server: APIServer) -> None:
    async def scenario(client: ApiClient) -> None:
        broadcaster = EventBroadcaster(client)
        task = asyncio.create_task(broadcaster.run())
        pod = ObjectRef("Pod", "default", "pod-a", uid="u1")
        for _ in range(2):
            broadcaster.record(pod, None, "Warning", "FailedScheduling", ACTION_SCHEDULING, "0/1 nodes are available")
            await broadcaster.drain()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        listed = await client.request("GET", "/apis/events.k8s.io/v1/namespaces/default/events")
        events: list[dict[str, object]] = listed["items"]  # type: ignore[assignment]
        assert len(events) == 1
        assert events[0]["series"]["count"] == 2  # type: ignore[index]
        assert events[0]["reason"] == "FailedScheduling"
        assert broadcaster.stats.written == 2

    run(server, scenario)
