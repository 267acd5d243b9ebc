"""A bound pod being resized in place counts the larger of its spec, actuated and allocated requests (upstream's PodRequests with status resources)."""

from __future__ import annotations

import pytest

from kubesched.objects.pod import parse_pod


def _pod(spec_cpu: str, actuated: str | None, allocated: str | None = None, infeasible: bool = False) -> dict:
    status: dict = {"phase": "Running"}
    cs: dict = {"name": "c"}
    if actuated is not None:
        cs["resources"] = {"requests": {"cpu": actuated}}
    if allocated is not None:
        cs["allocatedResources"] = {"cpu": allocated}
    status["containerStatuses"] = [cs]
    if infeasible:
        status["conditions"] = [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]
    return {"metadata": {"name": "p", "namespace": "default"},
            "spec": {"nodeName": "n1", "containers": [{"name": "c", "resources": {"requests": {"cpu": spec_cpu}}}]},
            "status": status}


@pytest.mark.parametrize("spec_cpu, actuated, allocated, infeasible, milli", [
    pytest.param("1", "1", "1", False, 1000, id="not resizing: the spec"),
    pytest.param("1", "2", "2", False, 2000, id="scaling down: still holds the actuated 2"),
    pytest.param("3", "2", "2", False, 3000, id="scaling up: the spec's 3 counts at once"),
    pytest.param("3", "1", "2", False, 3000, id="allocated but not actuated yet"),
    pytest.param("3", "2", "2", True, 2000, id="infeasible: the spec's new value does not count"),
    pytest.param("1", None, None, False, 1000, id="no status resources: the spec"),
])
def test_requests_of_a_pod_being_resized(spec_cpu, actuated, allocated, infeasible, milli):
    pod = parse_pod(_pod(spec_cpu, actuated, allocated, infeasible), keep_raw=False)
    assert pod.requests.requests.milli_cpu == milli


def test_a_pending_pod_counts_its_spec():
    doc = _pod("1", "2", "2")
    del doc["spec"]["nodeName"]
    assert parse_pod(doc).requests.requests.milli_cpu == 1000
