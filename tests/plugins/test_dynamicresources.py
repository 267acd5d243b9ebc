"""DynamicResources: pods get the devices their ResourceClaims ask for, as upstream v1.36 decides."""

from __future__ import annotations

import pytest

from kubesched.framework import CycleState, QueueingHint
from kubesched.objects.dra import parse_device_class
from kubesched.objects.pod import parse_pod
from kubesched.plugins.dynamicresources.claims import deterministic_name, generate_name
from kubesched.plugins.dynamicresources.extended import requests_and_mappings
from kubesched.structured import AllocationTimeout

from .dra_helpers import claim, gpu_class, gpu_slice, node, pod, request, simulate, stored_claim, template


def _placed(sim, name: str) -> str | None:
    return sim.outcomes[f"default/{name}"].node


def test_a_pod_gets_a_device_of_its_class_and_the_claim_records_it():
    sim = simulate(node("n1"), gpu_slice("n1", 1), gpu_class(), claim("c"), pod("p", claims={"gpu": "c"}))
    assert _placed(sim, "p") == "n1"
    stored = stored_claim(sim, "c")
    assert stored is not None
    assert stored["status"]["allocation"]["devices"]["results"] == [
        {"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}]
    assert stored["status"]["reservedFor"] == [{"resource": "pods", "name": "p", "uid": "uid-p"}]
    assert "resource.kubernetes.io/delete-protection" in stored["metadata"]["finalizers"]


def test_two_pods_never_get_the_same_device():
    sim = simulate(node("n1"), gpu_slice("n1", 1), gpu_class(), claim("c1"), claim("c2"),
                   pod("a", claims={"gpu": "c1"}), pod("b", claims={"gpu": "c2"}))
    assert _placed(sim, "a") == "n1"
    assert _placed(sim, "b") is None
    assert sim.outcomes["default/b"].message == "0/1 nodes are available: 1 cannot allocate all claims."


def test_a_missing_device_class_rejects_the_pod_before_filtering():
    sim = simulate(node("n1"), gpu_slice("n1", 1), claim("c", request("tpu", "tpu")), pod("p", claims={"tpu": "c"}))
    assert _placed(sim, "p") is None
    assert sim.outcomes["default/p"].message == "0/1 nodes are available: request tpu: device class tpu does not exist."


def test_a_shared_claim_pins_its_later_pods_to_the_node_of_its_devices():
    sim = simulate(node("n1"), node("n2"), gpu_slice("n1", 1), gpu_slice("n2", 1), gpu_class(), claim("shared"),
                   pod("a", claims={"gpu": "shared"}), pod("b", claims={"gpu": "shared"}))
    first = _placed(sim, "a")
    assert first is not None and _placed(sim, "b") == first
    reserved = stored_claim(sim, "shared")["status"]["reservedFor"]
    assert [r["name"] for r in reserved] == ["a", "b"]


def test_a_claim_not_created_yet_keeps_the_pod_waiting():
    sim = simulate(node("n1"), gpu_slice("n1", 1), gpu_class(), pod("p", templates={"gpu": "missing-template"}))
    outcome = sim.outcomes["default/p"]
    assert outcome.node is None and outcome.gated
    assert outcome.message == 'pod "default/p": ResourceClaim not created yet'


def test_template_claims_are_made_for_the_pod_and_named_deterministically():
    sim = simulate(node("n1"), gpu_slice("n1", 2), gpu_class(), template("one-gpu"), pod("p", templates={"dev": "one-gpu"}))
    assert _placed(sim, "p") == "n1"
    name = deterministic_name("default", generate_name("p", "dev"), set())
    stored = stored_claim(sim, name)
    assert stored is not None and name.startswith("p-dev-")
    assert stored["metadata"]["annotations"] == {"resource.kubernetes.io/pod-claim-name": "dev"}
    assert stored["metadata"]["ownerReferences"][0]["uid"] == "uid-p"


@pytest.mark.parametrize("pod_name, entry, expected", [
    ("ml-q00-ef92", "dev", "ml-q00-ef92-dev-"),
    ("p" * 50, "claim" * 4, "p" * 39 + "-" + "claim" * 3),  # 72 characters: both parts cut to 57/72
])
def test_generate_name_is_the_controllers(pod_name, entry, expected):
    assert generate_name(pod_name, entry) == expected


def test_a_taken_name_moves_to_the_next_hash():
    first = deterministic_name("ml", "ml-q00-ef92-dev-", set())
    assert first == "ml-q00-ef92-dev-f9651"
    assert deterministic_name("ml", "ml-q00-ef92-dev-", {first}) != first


def test_prioritized_lists_score_the_subrequest_chosen_on_each_node():
    first_available = {"name": "gpu", "firstAvailable": [
        {"name": "big", "deviceClassName": "big"}, {"name": "small", "deviceClassName": "gpu"}]}
    big = gpu_class("big")
    big["spec"]["selectors"] = [{"cel": {"expression": 'device.attributes["gpu.example.com"].size == "big"'}}]
    slice_big = gpu_slice("n2", 1, attributes={"size": {"string": "big"}})
    slice_small = gpu_slice("n1", 1, attributes={"size": {"string": "small"}})
    sim = simulate(node("n1"), node("n2"), slice_small, slice_big, gpu_class(), big,
                   claim("c", first_available), pod("p", claims={"gpu": "c"}))
    assert _placed(sim, "p") == "n2"  # 8 for its first subrequest, 7 for the second: n2 scores higher
    results = stored_claim(sim, "c")["status"]["allocation"]["devices"]["results"]
    assert [r["request"] for r in results] == ["gpu/big"]


def test_a_dra_backed_extended_resource_gets_a_claim_on_a_node_without_it():
    sim = simulate(node("n1"), gpu_slice("n1", 2), gpu_class("gpu", extended="example.com/gpu"),
                   pod("p", requests={"example.com/gpu": "2"}))
    assert _placed(sim, "p") == "n1"
    status = sim.cluster.extended_claim_statuses["default/p"]
    assert status["requestMappings"] == [{"containerName": "c", "resourceName": "example.com/gpu", "requestName": "container-0-request-1"}]
    stored = stored_claim(sim, str(status["resourceClaimName"]))
    assert len(stored["status"]["allocation"]["devices"]["results"]) == 2


def test_a_node_listing_the_extended_resource_is_node_resources_fits():
    sim = simulate(node("n1", **{"example.com/gpu": "1"}), gpu_class("gpu", extended="example.com/gpu"),
                   pod("p", requests={"example.com/gpu": "2"}))
    assert _placed(sim, "p") is None
    assert sim.outcomes["default/p"].message == "0/1 nodes are available: 1 Insufficient example.com/gpu."


def test_init_containers_reuse_the_requests_of_containers_after_them():
    spec = {"initContainers": [{"name": "init", "resources": {"requests": {"example.com/gpu": "1"}}}],
            "containers": [{"name": "app", "resources": {"requests": {"cpu": "1", "example.com/gpu": "2"}}}]}
    gpu = parse_device_class(gpu_class("gpu", extended="example.com/gpu"))
    requests, mappings = requests_and_mappings(spec, {"example.com/gpu": 2}, lambda r: gpu)
    assert [(r.name, r.count) for r in requests] == [("container-1-request-1", 2)]
    assert [(m.container, m.request) for m in mappings] == [("app", "container-1-request-1"), ("init", "container-1-request-1")]


def test_without_claims_post_filter_says_there_is_nothing_to_deallocate():
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
              "profiles": [{"schedulerName": "default-scheduler"}]}
    big = pod("p", requests={"cpu": "100"})
    sim = simulate(node("n1"), big, config=config)
    assert sim.outcomes["default/p"].message.startswith(
        "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: ")


def test_pods_with_claims_are_not_signable():
    sim = simulate(node("n1"))
    plugin = sim.scheduler.profiles["default-scheduler"].instances["DynamicResources"]
    _, status = plugin.sign_pod(parse_pod(pod("p", claims={"gpu": "c"})))
    assert status is not None and status.message == "pods with dra resource claims are not signable"
    assert plugin.sign_pod(parse_pod(pod("q"))) == ([], None)


def test_reserve_takes_the_devices_until_unreserve_gives_them_back():
    sim = simulate(node("n1"), gpu_slice("n1", 1), gpu_class(), claim("c1"), claim("c2"))
    fwk = sim.scheduler.profiles["default-scheduler"]
    plugin = fwk.instances["DynamicResources"]
    snapshot = sim.scheduler.cache.snapshot()
    info = snapshot.get("n1")
    first, second = parse_pod(pod("a", claims={"gpu": "c1"})), parse_pod(pod("b", claims={"gpu": "c2"}))
    s1 = CycleState()
    plugin.pre_filter(s1, first, snapshot)
    assert plugin.filter(s1, first, info) is None
    assert plugin.reserve(s1, first, "n1") is None
    s2 = CycleState()
    plugin.pre_filter(s2, second, snapshot)
    assert plugin.filter(s2, second, info).message == "cannot allocate all claims"  # the device is in flight
    plugin.unreserve(s1, first, "n1")
    s3 = CycleState()
    plugin.pre_filter(s3, second, snapshot)
    assert plugin.filter(s3, second, info) is None


def test_claim_hint_queues_on_deallocation_and_skips_unrelated_claims():
    sim = simulate(node("n1"), gpu_class(), claim("mine"), claim("other"))
    plugin = sim.scheduler.profiles["default-scheduler"].instances["DynamicResources"]
    hint = next(r.hint for r in plugin.events_to_register() if r.event.resource.startswith("resourceclaims"))
    waiting = parse_pod(pod("p", claims={"gpu": "mine"}))
    other, mine = stored_claim(sim, "other"), stored_claim(sim, "mine")
    allocated = {**other, "status": {"allocation": {"devices": {"results": []}}}}
    assert hint(waiting, other, {**other, "metadata": {**other["metadata"], "labels": {"x": "y"}}}) == QueueingHint.SKIP
    assert hint(waiting, allocated, other) == QueueingHint.QUEUE  # devices freed
    assert hint(waiting, mine, {**mine, "status": {"reservedFor": []}}) == QueueingHint.QUEUE


def test_a_cel_runtime_error_is_an_error_not_unschedulable():
    picky = gpu_class("picky")
    picky["spec"]["selectors"] = [{"cel": {"expression": 'device.attributes["gpu.example.com"].size == "big"'}}]
    sim = simulate(node("n1"), gpu_slice("n1", 1), picky, claim("c", request("gpu", "picky")), pod("p", claims={"gpu": "c"}))
    message = sim.outcomes["default/p"].message
    assert message.startswith('running "DynamicResources" filter plugin: class picky: selector #0: CEL runtime error')


def test_the_binding_record_lists_the_devices_each_claim_got():
    from kubesched.cluster.simulated import Simulation
    from kubesched.cluster.snapshot import snapshot_from_objects
    from kubesched.framework.config import parse_config
    from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry

    from .dra_helpers import CONFIG

    registry = in_tree_registry()
    objects = [node("n1"), gpu_slice("n1", 1), gpu_class(), claim("c"), pod("p", claims={"gpu": "c"})]
    snapshot = snapshot_from_objects([("t", o) for o in objects], plugin_kinds=frozenset(k for _, k in registry.object_kinds()))
    attempts = []
    Simulation(snapshot, parse_config(CONFIG, registry, UPSTREAM_ONLY), registry, on_attempt=attempts.append).run()
    assert attempts[0].binding["devices"] == ["default/c gpu: gpu.example.com/n1/gpu-0"]
    assert attempts[0].binding["allocations"] == {"default/c": {
        "devices": [{"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}],
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}}


def test_an_older_informer_update_does_not_undo_an_assumed_allocation():
    """run: PreBind's status write is assumed at once; the informer still delivers the finalizer
    write before it, which must not make the devices look free (upstream's assume cache)."""
    from kubesched.objects.dra import parse_resource_claim

    sim = simulate(node("n1"), gpu_slice("n1", 1), gpu_class(), claim("c"))
    manager = sim.scheduler.profiles["default-scheduler"].instances["DynamicResources"].manager
    store = manager.claim_store
    base = stored_claim(sim, "c")
    allocated = {**base, "metadata": {**base["metadata"], "resourceVersion": "3"},
                 "status": {"allocation": {"devices": {"results": [
                     {"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}]}}}}
    manager.assume_claim(allocated, parse_resource_claim(allocated))
    store.upsert({**base, "metadata": {**base["metadata"], "resourceVersion": "2", "finalizers": ["x"]}})
    assert manager.get_claim("default", "c").allocation is not None
    assert manager.allocated_state().allocated_devices


def test_a_claim_whose_device_binding_failed_is_available_nowhere():
    """With DRADeviceBindingConditions, a driver reporting a binding failure condition makes the
    allocated claim unavailable on every node (PostFilter may then deallocate it)."""
    failed = claim("c")
    result = {"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0",
              "bindingConditions": ["attached"], "bindingFailureConditions": ["failed"]}
    failed["status"] = {
        "allocation": {"devices": {"results": [result]}, "allocationTimestamp": "2024-01-01T00:00:00Z",
                       "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                           {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}},
        "devices": [{"driver": "gpu.example.com", "pool": "n1", "device": "gpu-0",
                     "conditions": [{"type": "failed", "status": "True", "reason": "Broken", "message": "no link",
                                     "lastTransitionTime": "2024-01-01T00:00:00Z"}]}],
    }
    sim = simulate(node("n1"), gpu_slice("n1", 1), gpu_class(), failed, pod("p", claims={"gpu": "c"}))
    assert sim.outcomes["default/p"].message == "0/1 nodes are available: 1 resourceclaim not available on the node."


def test_an_allocation_past_the_filter_timeout_is_an_error_naming_the_node():
    sim = simulate(node("n1"), gpu_slice("n1", 1), gpu_class(), claim("c"))
    plugin = sim.scheduler.profiles["default-scheduler"].instances["DynamicResources"]
    snapshot = sim.scheduler.cache.snapshot()
    p = parse_pod(pod("p", claims={"gpu": "c"}))
    state = CycleState()
    plugin.pre_filter(state, p, snapshot)
    deadlines = []

    class Slow:  # the allocator's search, past its deadline
        def allocate(self, node, claims, deadline=None):
            deadlines.append(deadline)
            raise AllocationTimeout("filter operation aborted: context deadline exceeded")

    from kubesched.plugins.dynamicresources.state import STATE
    state.get(STATE).allocator = Slow()
    status = plugin.filter(state, p, snapshot.get("n1"))
    assert deadlines and deadlines[0] is not None  # the filter timeout, 10 s by default
    assert status is not None and status.code.name == "ERROR"
    assert status.message == "node n1: timed out trying to allocate devices"


@pytest.mark.parametrize("claims, requests", [
    pytest.param({"gpu": "free"}, None, id="a claim to allocate"),
    pytest.param({"gpu": "taken"}, None, id="a claim allocated on n1"),
    pytest.param(None, {"example.com/gpu": "1"}, id="a DRA-backed extended resource"),
])
def test_the_batch_and_per_node_filters_agree(claims, requests):
    taken = claim("taken")
    taken["status"] = {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}}
    sim = simulate(node("n1"), node("n2"), node("n3", **{"example.com/gpu": "1"}), gpu_slice("n1", 1), gpu_slice("n2", 1),
                   gpu_class("gpu", extended="example.com/gpu"), claim("free"), taken)
    plugin = sim.scheduler.profiles["default-scheduler"].instances["DynamicResources"]
    snapshot = sim.scheduler.cache.snapshot()
    p = parse_pod(pod("p", claims=claims, requests=requests))
    batch_state, node_state = CycleState(), CycleState()
    plugin.pre_filter(batch_state, p, snapshot)
    plugin.pre_filter(node_state, p, snapshot)
    import numpy as np
    size = snapshot.table.size
    verdicts = plugin.filter_nodes(batch_state, p, snapshot, np.ones(size, dtype=bool))
    for row, info in enumerate(snapshot.node_infos[:size]):
        single = plugin.filter(node_state, p, info)
        code = int(verdicts.codes[row])
        batch = verdicts.statuses[code - 1] if code else None
        assert (None if batch is None else (batch.code, batch.reasons)) == (
            None if single is None else (single.code, single.reasons)), info.node.name
