"""The PodGroupScheduled condition written as upstream's util.PatchPodGroupStatus writes it:
the two-way strategic merge patch of the status, PATCH podgroups/status, retried with
retry.DefaultBackoff on schedutil.Retriable errors, never raising; written in the
background, in order and coalesced per group, the transition time stamped when asked."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest

from kubesched.cluster.kube.client import ApiClient
from kubesched.cluster.kube.cluster_client import KubeClusterClient
from kubesched.cluster.kube.connection import Connection
from kubesched.cluster.kube.pod_group_status import PodGroupStatusPatcher, conditions_patch
from kubesched.framework.handle import PodGroupStatusWriter
from kubesched.objects.pod import PodInfo
from kubesched.objects.podgroup import PodGroup, PodGroupCondition, parse_pod_group
from tests.apiserver import APIServer

T = TypeVar("T")
NOW = 1_780_000_000.0  # 2026-05-28T20:26:40Z
STAMP = "2026-05-28T20:26:40Z"
EARLIER = "2026-05-01T00:00:00Z"
STATUS = "/apis/scheduling.k8s.io/v1alpha2/namespaces/default/podgroups/train/status"
FAST = (4, 0.001, 5.0, 0.1)  # retry.DefaultBackoff's shape with shorter waits


def cond(status: str = "False", reason: str = "Unschedulable", message: str = "m", generation: int = 0,
         at: str | None = None) -> PodGroupCondition:
    return PodGroupCondition("PodGroupScheduled", status, reason, message, generation, at)


def other(at: str = EARLIER) -> PodGroupCondition:
    return PodGroupCondition("DisruptionTarget", "False", "NotDisrupted", "", 0, at)


def as_json(c: PodGroupCondition, at: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": c.type, "status": c.status}
    if c.observed_generation:
        out["observedGeneration"] = c.observed_generation
    out.update({"lastTransitionTime": at or c.last_transition_time, "reason": c.reason, "message": c.message})
    return out


# -- the patch: CreateTwoWayMergePatch of the status ------------------------------------------------
@pytest.mark.parametrize(("old", "new", "patch"), [
    pytest.param((), (cond(at=STAMP),), {"status": {"conditions": [as_json(cond(at=STAMP))]}},
                 id="first condition: the whole list, no order directive"),
    pytest.param((cond(at=EARLIER),), (cond(message="other", at=EARLIER),),
                 {"status": {"$setElementOrder/conditions": [{"type": "PodGroupScheduled"}],
                             "conditions": [{"type": "PodGroupScheduled", "message": "other"}]}},
                 id="changed message: only that field, with the merge key"),
    pytest.param((cond(at=EARLIER),), (cond("True", "Scheduled", "", 2, STAMP),),
                 {"status": {"$setElementOrder/conditions": [{"type": "PodGroupScheduled"}],
                             "conditions": [{"type": "PodGroupScheduled", "status": "True", "reason": "Scheduled",
                                             "message": "", "observedGeneration": 2,
                                             "lastTransitionTime": STAMP}]}},
                 id="new status: status, reason, message, generation, time"),
    pytest.param((cond(generation=3, at=EARLIER),), (cond(at=EARLIER),),
                 {"status": {"$setElementOrder/conditions": [{"type": "PodGroupScheduled"}],
                             "conditions": [{"type": "PodGroupScheduled", "observedGeneration": None}]}},
                 id="a field omitted now is deleted"),
    pytest.param((other(),), (other(), cond(at=STAMP)),
                 {"status": {"$setElementOrder/conditions": [{"type": "DisruptionTarget"}, {"type": "PodGroupScheduled"}],
                             "conditions": [as_json(cond(at=STAMP))]}},
                 id="added beside another: the new one whole, both in the order"),
    pytest.param((other(), cond(at=EARLIER)), (other(),),
                 {"status": {"$setElementOrder/conditions": [{"type": "DisruptionTarget"}],
                             "conditions": [{"$patch": "delete", "type": "PodGroupScheduled"}]}},
                 id="removed: a delete directive"),
    pytest.param((cond(at=EARLIER), other()), (other(), cond(at=EARLIER)),
                 {"status": {"$setElementOrder/conditions": [{"type": "DisruptionTarget"}, {"type": "PodGroupScheduled"}]}},
                 id="reordered only: the order directive alone"),
    pytest.param((cond(at=EARLIER),), (), {"status": {"conditions": None}}, id="all gone: the list deleted"),
    pytest.param((cond(at=EARLIER),), (cond(at=EARLIER),), None, id="unchanged: nothing to send"),
])
def test_the_patch_is_the_two_way_strategic_merge_patch_of_the_status(old: tuple[PodGroupCondition, ...],
                                                                       new: tuple[PodGroupCondition, ...],
                                                                       patch: dict[str, Any] | None) -> None:
    assert conditions_patch(old, new) == patch


# -- against the test API server ------------------------------------------------------------------
class NoEvents:
    def pod_event(self, pod: PodInfo, event_type: str, reason: str, action: str, note: str) -> None:
        pass


@pytest.fixture
def server() -> Any:
    srv = APIServer(bookmark_interval=5).start()
    try:
        yield srv
    finally:
        srv.stop()


def stored_group(server: APIServer, conditions: list[dict[str, Any]] | None = None) -> PodGroup:
    body: dict[str, Any] = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
                            "metadata": {"name": "train", "namespace": "default"},
                            "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}}
    if conditions is not None:
        body["status"] = {"conditions": conditions}
    return parse_pod_group(server.create(body), keep_raw=False)


def run(server: APIServer, use: Callable[[PodGroupStatusPatcher], Awaitable[T]],
        clock: Callable[[], float] = lambda: NOW) -> T:
    async def scenario() -> T:
        api = ApiClient(Connection(server=server.url, ssl=None, token=lambda: "", basic_auth=None))
        patcher = PodGroupStatusPatcher(api, asyncio.get_running_loop(), wall_clock=clock, backoff=FAST)
        try:
            return await use(patcher)
        finally:
            await patcher.close()
            await api.close()

    return asyncio.run(asyncio.wait_for(scenario(), 30))


async def settled(patcher: PodGroupStatusPatcher) -> PodGroupStatusPatcher:
    while patcher.pending:
        await asyncio.sleep(0.005)
    return patcher


def written(server: APIServer) -> list[dict[str, Any]]:
    obj = server.get("PodGroup", "default", "train")
    assert obj is not None
    return list((obj.get("status") or {}).get("conditions") or [])


def patches(server: APIServer) -> list[tuple[str, str]]:
    return [(m, p) for m, p in server.requests if m == "PATCH"]


def test_a_new_condition_is_patched_with_the_time_it_was_asked(server: APIServer) -> None:
    group = stored_group(server)

    async def use(p: PodGroupStatusPatcher) -> PodGroupStatusPatcher:
        p.submit(group, (cond(message="0/4 nodes are available"),))
        return await settled(p)

    patcher = run(server, use)
    assert patches(server) == [("PATCH", STATUS)]
    assert written(server) == [as_json(cond(message="0/4 nodes are available"), STAMP)]
    assert (patcher.sent, patcher.failed) == (1, 0)


def test_a_kept_transition_time_is_not_restamped(server: APIServer) -> None:
    group = stored_group(server, [as_json(cond(at=EARLIER))])

    async def use(p: PodGroupStatusPatcher) -> None:
        p.submit(group, (cond(message="new", at=EARLIER),))
        await settled(p)

    run(server, use)
    assert written(server) == [as_json(cond(message="new", at=EARLIER))]


def test_conditions_equal_to_the_stored_ones_are_not_sent(server: APIServer) -> None:
    group = stored_group(server, [as_json(cond(at=EARLIER))])

    async def use(p: PodGroupStatusPatcher) -> PodGroupStatusPatcher:
        p.submit(group, (cond(at=EARLIER),))
        return await settled(p)

    assert run(server, use).unchanged == 1
    assert patches(server) == []


def test_a_retry_decided_before_the_informer_caught_up_keeps_the_written_transition_time(server: APIServer) -> None:
    group = stored_group(server)  # the version the scheduler keeps deciding from
    now = [NOW]

    async def use(p: PodGroupStatusPatcher) -> PodGroupStatusPatcher:
        p.submit(group, (cond(message="first"),))
        await settled(p)
        now[0] = NOW + 60
        p.submit(group, (cond(message="first"),))  # the same decision again: nothing to write
        await settled(p)
        p.submit(group, (cond(message="second"),))  # a new message: the status did not change
        return await settled(p)

    patcher = run(server, use, clock=lambda: now[0])
    assert (patcher.sent, patcher.unchanged) == (2, 1)
    assert written(server) == [as_json(cond(message="second"), STAMP)]


def test_once_the_informer_reports_the_write_the_group_itself_is_the_base(server: APIServer) -> None:
    group = stored_group(server)
    now = [NOW]

    async def use(p: PodGroupStatusPatcher) -> None:
        p.submit(group, (cond(),))
        await settled(p)
        now[0] = NOW + 60
        seen = server.get("PodGroup", "default", "train")
        assert seen is not None
        newer = parse_pod_group(seen, keep_raw=False)  # as the informer reports it
        p.submit(newer, (cond("True", "Scheduled", ""),))
        await settled(p)

    run(server, use, clock=lambda: now[0])
    assert written(server) == [as_json(cond("True", "Scheduled", ""), "2026-05-28T20:27:40Z")]


@pytest.mark.parametrize("status", [500, 503, 409])
def test_retriable_failures_are_retried(server: APIServer, status: int) -> None:
    group = stored_group(server)
    server.faults.add(method="PATCH", path="/status$", status=status, times=2)

    async def use(p: PodGroupStatusPatcher) -> PodGroupStatusPatcher:
        p.submit(group, (cond(),))
        return await settled(p)

    assert run(server, use).sent == 1
    assert len(patches(server)) == 3
    assert written(server)[0]["reason"] == "Unschedulable"


def test_retries_stop_after_four_attempts_and_the_failure_is_logged(server: APIServer,
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    group = stored_group(server)
    server.faults.add(method="PATCH", path="/status$", status=500, times=None, message="etcd is down")

    async def use(p: PodGroupStatusPatcher) -> PodGroupStatusPatcher:
        p.submit(group, (cond(),))
        return await settled(p)

    with caplog.at_level(logging.WARNING, "kubesched.client"):
        patcher = run(server, use)
    assert (patcher.sent, patcher.failed) == (0, 1)
    assert len(patches(server)) == 4
    assert [r.getMessage() for r in caplog.records] == ["Failed to update PodGroup status: etcd is down"]


@pytest.mark.parametrize("status", [422, 404, 403])
def test_other_failures_are_not_retried(server: APIServer, status: int) -> None:
    group = stored_group(server)
    server.faults.add(method="PATCH", path="/status$", status=status, times=None)

    async def use(p: PodGroupStatusPatcher) -> PodGroupStatusPatcher:
        p.submit(group, (cond(),))
        return await settled(p)

    assert run(server, use).failed == 1
    assert len(patches(server)) == 1


def test_a_write_waiting_behind_one_under_way_is_replaced_by_a_newer_one(server: APIServer) -> None:
    group = stored_group(server)
    server.faults.add(method="PATCH", path="/status$", status=None, delay=0.3, times=1)  # the first is slow

    async def use(p: PodGroupStatusPatcher) -> PodGroupStatusPatcher:
        p.submit(group, (cond(message="first"),))
        await asyncio.sleep(0.1)  # under way now
        p.submit(group, (cond(message="second"),))
        p.submit(group, (cond(message="third"),))
        return await settled(p)

    patcher = run(server, use)
    assert (patcher.sent, patcher.coalesced) == (2, 1)
    assert written(server)[0]["message"] == "third"


def test_writes_of_different_groups_do_not_wait_for_each_other(server: APIServer) -> None:
    group = stored_group(server)
    body = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
            "metadata": {"name": "other", "namespace": "default"}, "spec": {"schedulingPolicy": {"basic": {}}}}
    second = parse_pod_group(server.create(body), keep_raw=False)
    server.faults.add(method="PATCH", path="/podgroups/train/status$", status=None, delay=1.0, times=1)

    async def use(p: PodGroupStatusPatcher) -> float:
        p.submit(group, (cond(),))
        started = asyncio.get_running_loop().time()
        p.submit(second, (cond("True", "Scheduled", ""),))
        while p.sent == 0:
            await asyncio.sleep(0.005)
        took = asyncio.get_running_loop().time() - started
        await settled(p)
        return took

    assert run(server, use) < 0.8


def test_kube_cluster_client_is_the_schedulers_pod_group_status_writer(server: APIServer) -> None:
    group = stored_group(server)

    async def use() -> None:
        api = ApiClient(Connection(server=server.url, ssl=None, token=lambda: "", basic_auth=None))
        client = KubeClusterClient(api, asyncio.get_running_loop(), NoEvents(), wall_clock=lambda: NOW)
        client.start()
        try:
            assert isinstance(client, PodGroupStatusWriter)
            client.patch_pod_group_conditions(group, (cond("True", "Scheduled", ""),))
            await settled(client.pod_group_status)
        finally:
            await client.stop()
            await api.close()

    asyncio.run(asyncio.wait_for(use(), 30))
    assert written(server) == [as_json(cond("True", "Scheduled", ""), STAMP)]
