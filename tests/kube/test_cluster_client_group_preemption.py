"""KubeClusterClient evicts for a pod group's preemption (WorkloadAwarePreemption) as upstream's
executor does for a ``podgroup`` preemptor: the DisruptionTarget condition says a higher
priority podgroup is to be accommodated, then the victim is deleted with its UID as precondition."""

from __future__ import annotations

import asyncio

from kubesched.cluster.kube.cluster_client import KubeClusterClient
from kubesched.objects.pod import PodInfo, parse_pod
from kubesched.objects.podgroup import PodGroup

from .test_cluster_client_preemption import NoEvents, Recorder


def _victim() -> PodInfo:
    return parse_pod({"metadata": {"name": "victim", "namespace": "ns", "uid": "uid-v"}, "spec": {"containers": []}})


async def _preempt_for_group(api: Recorder) -> list[bool]:
    client = KubeClusterClient(api, asyncio.get_running_loop(), NoEvents(), wall_clock=lambda: 0.0)
    client.start()
    outcome: list[bool] = []
    finished = asyncio.Event()

    def done(ok: bool) -> None:
        outcome.append(ok)
        finished.set()

    client.preempt_pod_for_group(_victim(), PodGroup("ns", "train", "uid-pg", 1, "1", 4), "gang-scheduler", done)
    await asyncio.wait_for(finished.wait(), 10)
    await client.stop()
    return outcome


def test_a_pod_group_s_victim_is_marked_for_a_podgroup_then_deleted_with_its_uid() -> None:
    api = Recorder()
    assert asyncio.run(_preempt_for_group(api)) == [True]
    (patch, path, body, _), (delete, delete_path, options, _) = api.calls
    assert (patch, path) == ("PATCH", "/api/v1/namespaces/ns/pods/victim/status")
    condition = body["status"]["conditions"][0]  # type: ignore[index]
    assert (condition["type"], condition["reason"], condition["message"]) == (
        "DisruptionTarget", "PreemptionByScheduler", "gang-scheduler: preempting to accommodate a higher priority podgroup")
    assert (delete, delete_path, options["preconditions"]) == (  # type: ignore[index]
        "DELETE", "/api/v1/namespaces/ns/pods/victim", {"uid": "uid-v"})
