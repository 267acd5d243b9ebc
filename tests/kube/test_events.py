"""The events.k8s.io/v1 broadcaster: posted bodies, isomorphic events folded into series,
every event written (a queue with back-pressure; lost only when the server refuses one),
retries and rate limiting (client-go tools/events)."""

from __future__ import annotations

import asyncio
import copy
import socket
from collections.abc import Awaitable, Callable, Mapping

import pytest

from kubesched.cluster.kube.client import ApiClient
from kubesched.cluster.kube.connection import Connection
from kubesched.cluster.kube.events import (
    ACTION_BINDING,
    ACTION_SCHEDULING,
    FINISH_TIME,
    EventBroadcaster,
    ObjectRef,
    _TokenBucket,
    truncate_note,
)
from kubesched.cluster.kube.leader import micro_time
from tests.apiserver import APIServer

EVENTS = "/apis/events.k8s.io/v1/namespaces/default/events"
POD_A = ObjectRef("Pod", "default", "pod-a", uid="uid-a")
POD_B = ObjectRef("Pod", "default", "pod-b", uid="uid-b")


class FakeApiError(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(str(status))
        self.status = status


class FakeEventsApi:
    """Events by path; POST creates (409 if present), PATCH merges a series (404 if absent)."""

    def __init__(self) -> None:
        self.objects: dict[str, dict[str, object]] = {}
        self.requests: list[tuple[str, str, dict[str, object], str]] = []
        self.failures: list[int] = []  # statuses the next requests fail with
        self.gate: asyncio.Event | None = None  # when set, requests wait for it
        self.in_flight = 0
        self.most_in_flight = 0

    async def request(self, method: str, path: str, *, params: Mapping[str, str] | None = None,
                      body: object | bytes | None = None, content_type: str = "application/json",
                      timeout: float | None = None) -> dict[str, object]:
        assert isinstance(body, dict)
        self.requests.append((method, path, copy.deepcopy(body), content_type))
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            if self.gate is not None:
                await self.gate.wait()
            await asyncio.sleep(0)
            if self.failures:
                raise FakeApiError(self.failures.pop(0))
            if method == "POST":
                target = f"{path}/{body['metadata']['name']}"
                if target in self.objects:
                    raise FakeApiError(409)
                self.objects[target] = copy.deepcopy(body)
                return copy.deepcopy(body)
            if method == "PATCH":
                if path not in self.objects:
                    raise FakeApiError(404)
                self.objects[path]["series"] = body["series"]
                return copy.deepcopy(self.objects[path])
            raise AssertionError(method)
        finally:
            self.in_flight -= 1

    async def write(self, method: str, path: str, *, body: object | bytes | None = None,
                    content_type: str = "application/json", timeout: float | None = None) -> int:
        await self.request(method, path, body=body, content_type=content_type, timeout=timeout)
        return 201 if method == "POST" else 200

    def methods(self) -> list[str]:
        return [method for method, *_ in self.requests]


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.25

    def __call__(self) -> float:
        return self.now


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(scenario(), 10))  # type: ignore[arg-type]


async def running(broadcaster: EventBroadcaster) -> asyncio.Task[None]:
    task = asyncio.create_task(broadcaster.run())
    await asyncio.sleep(0)
    return task


async def stop(task: asyncio.Task[None]) -> None:
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


def failed(broadcaster: EventBroadcaster, pod: ObjectRef = POD_A, note: str = "0/3 nodes are available") -> None:
    broadcaster.record(pod, None, "Warning", "FailedScheduling", ACTION_SCHEDULING, note)


def test_an_event_is_posted_with_upstreams_fields() -> None:
    async def scenario() -> None:
        api, clock = FakeEventsApi(), Clock()
        broadcaster = EventBroadcaster(api, clock=clock)
        task = await running(broadcaster)
        broadcaster.record(POD_A, None, "Normal", "Scheduled", ACTION_BINDING,
                           "Successfully assigned default/pod-a to node-1")
        await broadcaster.drain()
        await stop(task)
        [(method, path, body, _)] = api.requests
        assert (method, path) == ("POST", EVENTS)
        assert body == {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": f"pod-a.{int(clock.now * 1e9):x}", "namespace": "default"},
            "eventTime": micro_time(clock.now),
            "reportingController": "default-scheduler",
            "reportingInstance": f"default-scheduler-{socket.gethostname()}",
            "action": "Binding",
            "reason": "Scheduled",
            "regarding": {"kind": "Pod", "namespace": "default", "name": "pod-a", "uid": "uid-a",
                          "apiVersion": "v1"},
            "note": "Successfully assigned default/pod-a to node-1",
            "type": "Normal",
        }

    run(scenario)


def test_the_related_object_is_posted_and_cluster_scoped_objects_report_in_default() -> None:
    async def scenario() -> None:
        api = FakeEventsApi()
        broadcaster = EventBroadcaster(api)
        task = await running(broadcaster)
        node = ObjectRef("Node", "", "node-1")
        broadcaster.record(node, POD_B, "Normal", "Preempted", "Preempting", "note")
        await broadcaster.drain()
        await stop(task)
        [(_, path, body, _)] = api.requests
        assert path == EVENTS
        assert body["related"] == {"kind": "Pod", "namespace": "default", "name": "pod-b", "uid": "uid-b",
                                   "apiVersion": "v1"}

    run(scenario)


def test_a_second_isomorphic_event_patches_a_series_of_two_onto_the_first() -> None:
    async def scenario() -> None:
        api, clock = FakeEventsApi(), Clock()
        broadcaster = EventBroadcaster(api, clock=clock)
        task = await running(broadcaster)
        failed(broadcaster)
        await broadcaster.drain()
        first = api.requests[0][2]["metadata"]["name"]  # type: ignore[index]
        clock.now += 5
        failed(broadcaster)
        await broadcaster.drain()
        await stop(task)
        assert api.methods() == ["POST", "PATCH"]
        _, path, body, content_type = api.requests[1]
        assert path == f"{EVENTS}/{first}"
        assert body == {"series": {"count": 2, "lastObservedTime": micro_time(clock.now)}}
        assert content_type == "application/strategic-merge-patch+json"

    run(scenario)


def test_further_isomorphic_events_only_count_until_the_series_finishes() -> None:
    async def scenario() -> None:
        api, clock = FakeEventsApi(), Clock()
        broadcaster = EventBroadcaster(api, clock=clock)
        task = await running(broadcaster)
        for _ in range(5):
            failed(broadcaster)
            await broadcaster.drain()
        assert api.methods() == ["POST", "PATCH"]
        assert broadcaster.stats.aggregated == 3
        clock.now += FINISH_TIME - 1
        await broadcaster.finish_series()
        assert api.methods() == ["POST", "PATCH"]  # not idle long enough
        clock.now += 2
        await broadcaster.finish_series()
        assert api.methods() == ["POST", "PATCH", "PATCH"]
        assert api.requests[-1][2]["series"]["count"] == 5  # type: ignore[index]
        failed(broadcaster)  # the series is over: a new event
        await broadcaster.drain()
        await stop(task)
        assert api.methods() == ["POST", "PATCH", "PATCH", "POST"]

    run(scenario)


def test_refresh_writes_every_live_series_again() -> None:
    async def scenario() -> None:
        api = FakeEventsApi()
        broadcaster = EventBroadcaster(api)
        task = await running(broadcaster)
        for pod in (POD_A, POD_A, POD_A, POD_B):
            failed(broadcaster, pod)
            await broadcaster.drain()
        await broadcaster.refresh_series()
        await stop(task)
        assert api.methods() == ["POST", "PATCH", "POST", "PATCH"]  # pod-b's single event is not written
        _, path, body, _ = api.requests[-1]
        assert path == api.requests[1][1]  # pod-a's series
        assert body["series"]["count"] == 3  # type: ignore[index]

    run(scenario)


def test_events_about_different_objects_or_reasons_are_not_aggregated() -> None:
    async def scenario() -> None:
        api = FakeEventsApi()
        broadcaster = EventBroadcaster(api)
        task = await running(broadcaster)
        failed(broadcaster, POD_A)
        failed(broadcaster, POD_B)
        broadcaster.record(POD_A, None, "Normal", "Scheduled", ACTION_BINDING, "assigned")
        await broadcaster.drain()
        await stop(task)
        assert api.methods() == ["POST", "POST", "POST"]

    run(scenario)


def test_single_events_leave_the_cache_after_the_finish_time() -> None:
    async def scenario() -> None:
        api, clock = FakeEventsApi(), Clock()
        broadcaster = EventBroadcaster(api, clock=clock)
        task = await running(broadcaster)
        failed(broadcaster)
        await broadcaster.drain()
        clock.now += FINISH_TIME + 1
        await broadcaster.finish_series()
        failed(broadcaster)
        await broadcaster.drain()
        await stop(task)
        assert api.methods() == ["POST", "POST"]

    run(scenario)


def test_events_recorded_before_the_writer_starts_are_all_written() -> None:
    async def scenario() -> None:
        api = FakeEventsApi()
        broadcaster = EventBroadcaster(api, high_water=3)
        for i in range(5):
            failed(broadcaster, ObjectRef("Pod", "default", f"pod-{i}"))
        assert broadcaster.backlog == 5 and broadcaster.dropped == 0
        task = await running(broadcaster)
        await broadcaster.drain()
        await stop(task)
        assert [body["regarding"]["name"] for _, _, body, _ in api.requests] == [  # type: ignore[index]
            f"pod-{i}" for i in range(5)]

    run(scenario)


def test_a_slow_server_makes_events_wait_not_vanish() -> None:
    async def scenario() -> None:
        api = FakeEventsApi()
        api.gate = asyncio.Event()
        broadcaster = EventBroadcaster(api, high_water=2, max_in_flight=2)
        task = await running(broadcaster)
        for i in range(10):
            failed(broadcaster, ObjectRef("Pod", "default", f"pod-{i}"))
            await asyncio.sleep(0.01)
        assert api.most_in_flight == 2
        assert broadcaster.backlog == 8
        api.gate.set()
        await broadcaster.drain()
        await stop(task)
        assert len(api.requests) == 10
        assert (broadcaster.stats.written, broadcaster.dropped) == (10, 0)

    run(scenario)


def test_past_the_high_water_mark_the_scheduling_loop_waits_for_room() -> None:
    async def scenario() -> None:
        api = FakeEventsApi()
        api.gate = asyncio.Event()
        broadcaster = EventBroadcaster(api, high_water=3, max_in_flight=1)
        task = await running(broadcaster)
        for i in range(5):
            failed(broadcaster, ObjectRef("Pod", "default", f"pod-{i}"))
        await asyncio.sleep(0.01)
        assert not broadcaster.has_room()
        waiting = asyncio.create_task(broadcaster.room())
        await asyncio.sleep(0.01)
        assert not waiting.done()
        api.gate.set()
        await asyncio.wait_for(waiting, 1)
        assert broadcaster.stats.waits == 1
        await broadcaster.drain()
        await stop(task)
        assert len(api.requests) == 5

    run(scenario)


def test_on_shutdown_queued_events_are_written_within_the_grace_period() -> None:
    async def scenario() -> None:
        api = FakeEventsApi()
        api.gate = asyncio.Event()
        broadcaster = EventBroadcaster(api, max_in_flight=2)
        task = await running(broadcaster)
        for i in range(6):
            failed(broadcaster, ObjectRef("Pod", "default", f"pod-{i}"))
        asyncio.get_running_loop().call_later(0.05, api.gate.set)  # the server answers a little later
        assert await broadcaster.shutdown(grace=5.0)
        await stop(task)
        assert (broadcaster.stats.written, broadcaster.dropped, broadcaster.stats.lost_at_exit) == (6, 0, 0)

    run(scenario)


def test_what_the_grace_period_leaves_unwritten_is_counted_as_dropped() -> None:
    async def scenario() -> None:
        api = FakeEventsApi()
        api.gate = asyncio.Event()  # never set: no write is ever answered
        broadcaster = EventBroadcaster(api, max_in_flight=2)
        task = await running(broadcaster)
        for i in range(6):
            failed(broadcaster, ObjectRef("Pod", "default", f"pod-{i}"))
        assert not await broadcaster.shutdown(grace=0.05)
        await stop(task)
        # four queued and two cut off in flight
        assert (broadcaster.stats.written, broadcaster.dropped, broadcaster.stats.lost_at_exit) == (0, 6, 6)
        assert broadcaster.backlog == 0 and broadcaster.has_room()

    run(scenario)


def test_on_shutdown_a_write_waiting_to_be_retried_is_retried_at_once() -> None:
    async def scenario() -> None:
        api = FakeEventsApi()
        api.failures = [0]  # one transport failure: the next try is 60 s away
        broadcaster = EventBroadcaster(api, retry_sleep=60.0)
        task = await running(broadcaster)
        failed(broadcaster)
        await asyncio.sleep(0.02)
        assert await broadcaster.shutdown(grace=2.0)
        await stop(task)
        assert (broadcaster.stats.written, broadcaster.dropped) == (1, 0)

    run(scenario)


def test_an_event_recorded_after_the_writer_stopped_is_counted_as_dropped() -> None:
    async def scenario() -> None:
        broadcaster = EventBroadcaster(FakeEventsApi())
        await stop(await running(broadcaster))
        failed(broadcaster)
        assert (broadcaster.dropped, broadcaster.stats.lost_at_exit, broadcaster.backlog) == (1, 1, 0)

    run(scenario)


def test_a_rejected_event_counts_as_dropped() -> None:
    async def scenario() -> None:
        api = FakeEventsApi()
        api.failures = [422]
        broadcaster = EventBroadcaster(api)
        task = await running(broadcaster)
        failed(broadcaster)
        await broadcaster.drain()
        await stop(task)
        assert broadcaster.dropped == 1 and broadcaster.stats.written == 0

    run(scenario)


def test_transport_failures_are_retried_a_bounded_number_of_times() -> None:
    async def scenario() -> None:
        api = FakeEventsApi()
        api.failures = [0] * 10
        broadcaster = EventBroadcaster(api, max_tries=3, retry_sleep=0.001)
        task = await running(broadcaster)
        failed(broadcaster)
        await broadcaster.drain()
        await stop(task)
        assert api.methods() == ["POST"] * 3
        assert broadcaster.stats.abandoned == 1

    run(scenario)


def test_a_transport_failure_then_success_writes_the_event_once() -> None:
    async def scenario() -> None:
        api = FakeEventsApi()
        api.failures = [0, 0]
        broadcaster = EventBroadcaster(api, retry_sleep=0.001)
        task = await running(broadcaster)
        failed(broadcaster)
        await broadcaster.drain()
        await stop(task)
        assert api.methods() == ["POST"] * 3
        assert len(api.objects) == 1 and broadcaster.stats.written == 1

    run(scenario)


def test_a_rejected_event_is_not_retried() -> None:
    async def scenario() -> None:
        api = FakeEventsApi()
        api.failures = [422]
        broadcaster = EventBroadcaster(api, retry_sleep=0.001)
        task = await running(broadcaster)
        failed(broadcaster)
        await broadcaster.drain()
        await stop(task)
        assert api.methods() == ["POST"]
        assert broadcaster.stats.abandoned == 1

    run(scenario)


def test_a_series_whose_event_vanished_is_created_with_its_series() -> None:
    async def scenario() -> None:
        api = FakeEventsApi()
        broadcaster = EventBroadcaster(api)
        task = await running(broadcaster)
        failed(broadcaster)
        await broadcaster.drain()
        api.objects.clear()  # the event expired on the server
        failed(broadcaster)
        await broadcaster.drain()
        await stop(task)
        assert api.methods() == ["POST", "PATCH", "POST"]
        assert api.requests[-1][2]["series"]["count"] == 2  # type: ignore[index]

    run(scenario)


def test_the_token_bucket_allows_a_burst_then_waits_for_tokens() -> None:
    async def scenario() -> None:
        clock = Clock()
        bucket = _TokenBucket(qps=1, burst=2, clock=clock)
        await bucket.take()
        await bucket.take()
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(bucket.take(), 0.05)
        clock.now += 1
        await asyncio.wait_for(bucket.take(), 5)

    run(scenario)


def test_notes_are_truncated_to_the_api_limit_in_bytes() -> None:
    assert truncate_note("short") == "short"
    long = truncate_note("x" * 2000)
    assert len(long.encode()) == 1024 and long.endswith("x ...")
    wide = truncate_note("é" * 1000)  # two bytes each: never split one
    assert len(wide.encode()) <= 1024 and wide.endswith("é ...")


def test_an_unsupported_event_type_is_not_recorded() -> None:
    broadcaster = EventBroadcaster(FakeEventsApi())
    broadcaster.record(POD_A, None, "Error", "X", "Y", "z")
    assert broadcaster.stats.recorded == 0


def test_a_profile_reports_under_its_own_scheduler_name() -> None:
    async def scenario() -> None:
        api = FakeEventsApi()
        broadcaster = EventBroadcaster(api)
        task = await running(broadcaster)
        broadcaster.record(POD_A, None, "Warning", "FailedScheduling", ACTION_SCHEDULING, "n",
                           reporting_controller="my-scheduler")
        await broadcaster.drain()
        await stop(task)
        body = api.requests[0][2]
        assert body["reportingController"] == "my-scheduler"
        assert body["reportingInstance"] == f"my-scheduler-{socket.gethostname()}"

    run(scenario)


async def over_http(server: APIServer, scenario: Callable[[ApiClient], Awaitable[None]]) -> None:
    conn = Connection(server=server.url, ssl=None, token=lambda: "t", basic_auth=None, qps=0.0)
    async with ApiClient(conn, timeout=5.0) as client:
        await scenario(client)


def test_over_http_events_and_their_series_reach_the_test_api_server() -> None:
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

    with APIServer() as server:
        run(lambda: over_http(server, scenario))
