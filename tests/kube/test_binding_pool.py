"""BindingPool's direct binder: DefaultBinder's API call made on the event loop, binds in the
order the pods were scheduled, a bounded number at once, each completion handed back."""

from __future__ import annotations

import asyncio

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
        start = pool.direct(bind, workers=3)
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

        start = pool.direct(bind, workers=2)
        for burst in range(3):
            for i in range(3):
                start(_pod(f"b{burst}-{i}"), "n1", lambda status: None)
            assert await pool.drain(5)
        pool.shutdown()
        return bound

    assert asyncio.run(scenario()) == [f"b{b}-{i}" for b in range(3) for i in range(3)]
