"""KubeClusterClient carries out preemptions: the DisruptionTarget condition, then a delete
with the victim's UID as precondition, in the background; clearing a nomination."""

from __future__ import annotations

import asyncio

from kubesched.cluster.kube.cluster_client import KubeClusterClient
from kubesched.cluster.kube.errors import ApiError
from kubesched.objects.pod import PodInfo, parse_pod


class Recorder:
    def __init__(self, fail_with: ApiError | None = None) -> None:
        self.calls: list[tuple[str, str, object, str]] = []
        self.fail_with = fail_with

    async def request(self, method: str, path: str, *, params: dict[str, str] | None = None,
                      body: object | bytes | None = None, content_type: str = "application/json",
                      timeout: float | None = None) -> dict[str, object]:
        self.calls.append((method, path, body, content_type))
        if self.fail_with is not None:
            raise self.fail_with
        return {}


class NoEvents:
    def pod_event(self, pod: PodInfo, event_type: str, reason: str, action: str, note: str) -> None:
        pass


def _pod(name: str, uid: str) -> PodInfo:
    return parse_pod({"metadata": {"name": name, "namespace": "ns", "uid": uid}, "spec": {"containers": []}})


async def _preempt(api: Recorder) -> list[bool]:
    client = KubeClusterClient(api, asyncio.get_running_loop(), NoEvents(), wall_clock=lambda: 0.0)
    client.start()
    outcome: list[bool] = []
    finished = asyncio.Event()

    def done(ok: bool) -> None:
        outcome.append(ok)
        finished.set()

    client.preempt_pod(_pod("victim", "uid-v"), _pod("preemptor", "uid-p"), "n1", done)
    await asyncio.wait_for(finished.wait(), 10)
    await client.stop()
    return outcome


def test_a_victim_gets_the_disruption_target_condition_then_is_deleted_with_its_uid() -> None:
    api = Recorder()
    assert asyncio.run(_preempt(api)) == [True]
    (patch, path, body, content_type), (delete, delete_path, options, _) = api.calls
    assert (patch, path, content_type) == ("PATCH", "/api/v1/namespaces/ns/pods/victim/status",
                                           "application/strategic-merge-patch+json")
    condition = body["status"]["conditions"][0]  # type: ignore[index]
    assert (condition["type"], condition["status"], condition["reason"]) == (
        "DisruptionTarget", "True", "PreemptionByScheduler")
    assert condition["message"] == "default-scheduler: preempting to accommodate a higher priority pod"
    assert (delete, delete_path) == ("DELETE", "/api/v1/namespaces/ns/pods/victim")
    assert options["preconditions"] == {"uid": "uid-v"}  # type: ignore[index]


def test_a_victim_already_gone_counts_as_preempted() -> None:
    gone = ApiError(404, "NotFound", "pods \"victim\" not found")
    assert asyncio.run(_preempt(Recorder(gone))) == [True]


def test_a_failed_eviction_is_reported() -> None:
    assert asyncio.run(_preempt(Recorder(ApiError(500, "InternalError", "boom")))) == [False]


def test_clearing_a_nomination_patches_it_to_null() -> None:
    async def scenario(api: Recorder) -> None:
        client = KubeClusterClient(api, asyncio.get_running_loop(), NoEvents())
        client.start()
        client.clear_nominated_node_name(_pod("p", "uid-p"))
        for _ in range(100):
            if api.calls:
                break
            await asyncio.sleep(0.01)
        await client.stop()

    api = Recorder()
    asyncio.run(scenario(api))
    assert api.calls == [("PATCH", "/api/v1/namespaces/ns/pods/p/status", {"status": {"nominatedNodeName": None}},
                          "application/strategic-merge-patch+json")]


def test_a_failed_preemption_clears_the_nomination_in_the_scheduled_condition_patch() -> None:
    async def scenario(api: Recorder) -> None:
        client = KubeClusterClient(api, asyncio.get_running_loop(), NoEvents(), wall_clock=lambda: 0.0)
        client.start()
        pod = _pod("p", "uid-p").copy_with(nominated_node_name="n1")
        client.update_pod_condition(pod, "Unschedulable", "0/1 nodes are available: ...", "")
        for _ in range(100):
            if api.calls:
                break
            await asyncio.sleep(0.01)
        await client.stop()

    api = Recorder()
    asyncio.run(scenario(api))
    (_, _, body, _), = api.calls
    assert body["status"]["nominatedNodeName"] is None  # type: ignore[index]
