"""BindingPool's direct binder: DefaultBinder's API call made on the event loop, binds in the
order the pods were scheduled, a bounded number at once (more when answers are slow
only for the network's sake), each completion handed back; no binding starts while the
event writer's queue is past its mark."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from kubesched.cluster.kube.concurrency import ConcurrencyLimit
from kubesched.cluster.kube.binding import BindingPool
from kubesched.cluster.kube.errors import ApiError
from kubesched.framework.status import Status
from kubesched.objects.pod import PodInfo, parse_pod


def _pod(name: str) -> PodInfo:
    return parse_pod({"metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"}, "spec": {"containers": []}})


def test_binds_start_in_scheduling_order_at_most_workers_at_once_and_all_complete() -> None:
    async def scenario() -> tuple[list[str], int, list[tuple[str, Status | None]], int]:
        pool = BindingPool(asyncio.get_running_loop(), 1, lambda: None)
        started: list[str] = []
        in_flight = most = 0
        release = asyncio.Event()

        async def bind(pod: PodInfo, node: str) -> None:
            nonlocal in_flight, most
            started.append(pod.name)
            in_flight += 1
            most = max(most, in_flight)
            await release.wait()
            in_flight -= 1

        done: list[tuple[str, Status | None]] = []
        start = pool.direct(bind, ConcurrencyLimit(least=3, most=3))
        for i in range(10):
            name = f"p{i}"
            start(_pod(name), "n1", lambda status, name=name: done.append((name, status)))
        await asyncio.sleep(0.01)
        release.set()
        assert await pool.drain(5)
        pool.shutdown()
        return started, most, done, pool.in_flight

    started, most, done, in_flight = asyncio.run(scenario())
    assert started == [f"p{i}" for i in range(10)]
    assert most == 3
    assert sorted(done, key=lambda d: int(d[0][1:])) == [(f"p{i}", None) for i in range(10)]
    assert in_flight == 0


def test_a_refused_bind_is_the_default_binders_error_with_the_apis_message() -> None:
    async def scenario() -> Status | None:
        pool = BindingPool(asyncio.get_running_loop(), 1, lambda: None)

        async def bind(pod: PodInfo, node: str) -> None:
            raise ApiError(409, "Conflict", 'pod ns/p is already assigned to node "n2"')

        outcome: list[Status | None] = []
        pool.direct(bind)(_pod("p"), "n1", outcome.append)
        assert await pool.drain(5)
        pool.shutdown()
        return outcome[0]

    status = asyncio.run(scenario())
    assert status is not None and status.plugin == "DefaultBinder"
    assert status.message == 'running Bind plugin "DefaultBinder": pod ns/p is already assigned to node "n2"'


def test_binding_tasks_idle_between_bursts_take_the_next_binds() -> None:
    async def scenario() -> list[str]:
        pool = BindingPool(asyncio.get_running_loop(), 1, lambda: None)
        bound: list[str] = []

        async def bind(pod: PodInfo, node: str) -> None:
            await asyncio.sleep(0)
            bound.append(pod.name)

        start = pool.direct(bind, ConcurrencyLimit(least=2, most=2))
        for burst in range(3):
            for i in range(3):
                start(_pod(f"b{burst}-{i}"), "n1", lambda status: None)
            assert await pool.drain(5)
        pool.shutdown()
        return bound

    assert asyncio.run(scenario()) == [f"b{b}-{i}" for b in range(3) for i in range(3)]


def test_binds_answered_slowly_by_a_distant_server_are_sent_more_at_once() -> None:
    # Every answer takes 50 ms whatever the load (the network's round trip, not the server's
    # queue): the binding tasks grow past their 32 to keep a backlog of 2,000 moving.
    async def scenario() -> int:
        pool = BindingPool(asyncio.get_running_loop(), 1, lambda: None)
        in_flight = most = 0

        async def bind(pod: PodInfo, node: str) -> None:
            nonlocal in_flight, most
            in_flight += 1
            most = max(most, in_flight)
            await asyncio.sleep(0.05)
            in_flight -= 1

        start = pool.direct(bind, ConcurrencyLimit(least=32, most=256, round_seconds=0.05))
        for i in range(2_000):
            start(_pod(f"p{i}"), "n1", lambda status: None)
        assert await pool.drain(20)
        pool.shutdown()
        return most

    assert asyncio.run(scenario()) > 64


def test_binds_answered_slowly_by_a_busy_server_are_not_sent_more_at_once() -> None:
    # The server answers one bind at a time (each 2 ms): twice as many at once wait twice as
    # long, so after one try at 16 the binding tasks go back to 8 and stay there.
    async def scenario() -> tuple[int, int, int]:
        pool = BindingPool(asyncio.get_running_loop(), 1, lambda: None)
        server = asyncio.Lock()
        in_flight = most = 0
        most_after_the_try = 0
        limit = ConcurrencyLimit(least=8, most=256, round_seconds=0.05)
        tried = False

        async def bind(pod: PodInfo, node: str) -> None:
            nonlocal in_flight, most, most_after_the_try, tried
            in_flight += 1
            most = max(most, in_flight)
            tried = tried or limit.limit > 8
            if tried and limit.limit == 8:
                most_after_the_try = max(most_after_the_try, in_flight)
            async with server:
                await asyncio.sleep(0.002)
            in_flight -= 1

        start = pool.direct(bind, limit)
        for i in range(400):
            start(_pod(f"p{i}"), "n1", lambda status: None)
        assert await pool.drain(10)
        pool.shutdown()
        return most, limit.limit, most_after_the_try

    most, limit, most_after_the_try = asyncio.run(scenario())
    assert (most, limit) == (16, 8)
    assert most_after_the_try <= 16  # the tasks of the try leave as their binds come back


class _Room:
    """An event writer's back-pressure, opened and closed by the test."""

    def __init__(self) -> None:
        self.open = asyncio.Event()

    def has_room(self) -> bool:
        return self.open.is_set()

    async def room(self) -> None:
        await self.open.wait()


def test_no_bind_starts_while_the_event_writer_is_past_its_mark() -> None:
    async def scenario() -> tuple[list[str], list[str]]:
        pool = BindingPool(asyncio.get_running_loop(), 1, lambda: None)
        pool.room = room = _Room()
        bound: list[str] = []

        async def bind(pod: PodInfo, node: str) -> None:
            bound.append(pod.name)

        start = pool.direct(bind)
        for i in range(3):
            start(_pod(f"p{i}"), "n1", lambda status: None)
        await asyncio.sleep(0.02)
        before = list(bound)
        room.open.set()
        assert await pool.drain(5)
        pool.shutdown()
        return before, bound

    before, after = asyncio.run(scenario())
    assert (before, after) == ([], ["p0", "p1", "p2"])


def test_no_binding_cycle_starts_on_a_worker_while_the_event_writer_is_past_its_mark() -> None:
    async def scenario() -> tuple[list[str], list[str]]:
        pool = BindingPool(asyncio.get_running_loop(), 2, lambda: None)
        pool.room = room = _Room()
        ran: list[str] = []

        def work(name: str) -> Callable[[], Status | None]:
            def run() -> Status | None:
                ran.append(name)
                return None
            return run

        for i in range(3):
            pool(work(f"p{i}"), lambda status: None)
        await asyncio.sleep(0.05)
        before = list(ran)
        room.open.set()
        assert await pool.drain(5)
        pool.shutdown()
        return before, ran

    before, after = asyncio.run(scenario())
    assert before == [] and sorted(after) == ["p0", "p1", "p2"]


def test_on_shutdown_binds_not_sent_are_dropped_and_those_under_way_finish() -> None:
    async def scenario() -> tuple[bool, list[str], list[str], int]:
        pool = BindingPool(asyncio.get_running_loop(), 1, lambda: None)
        release = asyncio.Event()
        sent: list[str] = []
        completed: list[str] = []

        async def bind(pod: PodInfo, node: str) -> None:
            sent.append(pod.name)
            await release.wait()

        start = pool.direct(bind, ConcurrencyLimit(least=2, most=2))
        for i in range(5):
            start(_pod(f"p{i}"), "n1", lambda status, name=f"p{i}": completed.append(name))
        await asyncio.sleep(0.01)
        asyncio.get_running_loop().call_later(0.05, release.set)
        assert pool.drop_unsent() == 3
        drained = await pool.drain(5)
        pool.shutdown()
        return drained, sent, completed, pool.in_flight

    drained, sent, completed, in_flight = asyncio.run(scenario())
    assert (drained, sent, completed, in_flight) == (True, ["p0", "p1"], ["p0", "p1"], 0)
