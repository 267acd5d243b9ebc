"""DRA-backed extended resources in NodeResourcesFit's and BalancedAllocation's scores (v1.36,
DRAExtendedResource on): a scored extended resource a node lacks but a DeviceClass backs counts
as the class's devices on the node (capacity) and those claims hold (allocated).

The tables carry over upstream's ``TestCalculateResourceAllocatableRequest``
(resource_allocation_test.go), the DRA cases of ``TestFitScore`` (fit_test.go) and of
``TestNodeResourcesBalancedAllocation`` (balanced_allocation_test.go).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.features import Features
from kubesched.plugins.dynamicresources.names import PLURALS
from kubesched.plugins import dynamicresources
from kubesched.plugins.noderesources import balanced_allocation, fit
from kubesched.plugins.noderesources.dra_totals import DraTotals, ManagerDraScorer, dra_manager_of
from kubesched.plugins.noderesources.resource_allocation import allocatable_and_requested

from ..helpers import Cluster, container, make_pod, node, pod, scores
from . import dra_helpers

API = "resource.k8s.io/v1"
DRIVER = "test-driver"
CLASS = "device-class-name"
EXTENDED = "extended.resource.dra.io/something"
IMPLICIT = "deviceclass.resource.kubernetes.io/" + CLASS
NODE = "resource-node"


def device_class(extended: str | None = EXTENDED, *selectors: str, name: str = CLASS) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if extended is not None:
        spec["extendedResourceName"] = extended
    if selectors:
        spec["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    return {"apiVersion": API, "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


def resource_slice(node_name: str, *devices: str, name: str | None = None, pool: str | None = None,
                   generation: int = 1, **spec: Any) -> dict[str, Any]:
    """``st.MakeResourceSlice(node, driver)``: the node's pool, named after the node."""
    body: dict[str, Any] = {"driver": DRIVER, "pool": {"name": pool or node_name, "generation": generation, "resourceSliceCount": 1},
                            "devices": [{"name": d} for d in devices]}
    body.update(spec)
    if not ({"allNodes", "nodeSelector", "perDeviceNodeSelection"} & spec.keys()):
        body["nodeName"] = node_name
    return {"apiVersion": API, "kind": "ResourceSlice", "metadata": {"name": name or f"{node_name}-{DRIVER}-{generation}"}, "spec": body}


def allocated_claim(name: str, *results: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": API, "kind": "ResourceClaim", "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"devices": {"requests": [{"name": "req-1", "exactly": {"deviceClassName": CLASS}}]}},
            "status": {"allocation": {"devices": {"results": [{"request": "req-1", "driver": DRIVER, **r} for r in results]}}}}


def add(cluster: Cluster, *objects: dict[str, Any]) -> None:
    for obj in objects:
        kind = obj["kind"]
        cluster.handle.object_store(API, kind, PLURALS[kind]).upsert(obj)


def totals(cluster: Cluster, resource: str, node_name: str = NODE) -> tuple[int, int]:
    """``calculateResourceAllocatableRequest`` for one extended resource on one node."""
    scorer = ManagerDraScorer(cluster.handle, (resource,))
    dra = scorer.gather(CycleState(), (resource,), [1])
    table = cluster.snapshot.table
    rows = np.asarray([table.name_rows()[node_name]], dtype=np.int64)
    found = allocatable_and_requested(table, rows, resource, 1, use_requested=True, dra=dra)
    assert found is not None
    return int(found[0][0]), int(found[1][0]) - 1


PER_DEVICE_CLASS = device_class(
    EXTENDED,
    f'device.driver == "{DRIVER}" && device.capacity["{DRIVER}"].memory.compareTo(quantity("8Gi")) >= 0'
    f' && device.attributes["{DRIVER}"].model.startsWith("SOME-")',
)


def _gpu(name: str, model: str, memory: str, **where: Any) -> dict[str, Any]:
    return {"name": name, "attributes": {"model": {"string": model}}, "capacity": {"memory": {"value": memory}}, **where}


PER_DEVICE_SLICE = {
    "apiVersion": API, "kind": "ResourceSlice", "metadata": {"name": "per-device-slice"},
    "spec": {"driver": DRIVER, "pool": {"name": "per-device-pool", "generation": 1, "resourceSliceCount": 1},
             "perDeviceNodeSelection": True,
             "devices": [
                 _gpu("device-1", "SOME-XYZ", "16Gi", nodeName=NODE),
                 _gpu("device-2", "SOME-ZYX", "12Gi", nodeName="other-node"),
                 _gpu("device-3", "SOME-XZY", "24Gi", nodeSelector={"nodeSelectorTerms": [
                     {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["us-east-1a"]}]}]}),
             ]},
}


@pytest.mark.parametrize(
    "node_extended, resource, objects, want",
    [
        pytest.param({EXTENDED: "4"}, EXTENDED, [], (4, 0), id="device-plugin-resource-feature-enabled"),
        pytest.param({}, EXTENDED, [device_class(), resource_slice(NODE, "device-1")], (1, 0), id="DRA-backed-resource-explicit"),
        pytest.param({}, IMPLICIT, [device_class(None), resource_slice(NODE, "device-1")], (1, 0), id="DRA-backed-resource-implicit"),
        pytest.param({}, EXTENDED, [device_class()], (0, 0), id="DRA-backed-resource-no-slices"),
        pytest.param(
            {}, EXTENDED,
            [device_class(), resource_slice(NODE, "device-1", "device-2"),
             allocated_claim("test-claim", {"pool": NODE, "device": "device-1"})],
            (2, 1), id="DRA-backed-resource-with-allocated-device"),
        pytest.param(
            {}, EXTENDED,
            [device_class(), resource_slice(NODE, "device-1", "device-2"),
             allocated_claim("test-claim", {"pool": NODE, "device": "device-1", "shareID": "6ba7b810-9dad-11d1-80b4-00c04fd430c8"})],
            (2, 1), id="DRA-backed-resource-with-shared-device-allocation"),
        pytest.param(
            {}, EXTENDED,
            [device_class(), resource_slice(NODE, "device-1", "device-2", "device-3"),
             allocated_claim("test-claim-1", {"pool": NODE, "device": "device-1"}),
             allocated_claim("test-claim-2", {"pool": NODE, "device": "device-2", "shareID": "6ba7b810-9dad-11d1-80b4-00c04fd430c9"})],
            (3, 2), id="DRA-backed-resource-multiple-devices-mixed-allocation"),
        pytest.param(
            {}, EXTENDED,
            [PER_DEVICE_CLASS, PER_DEVICE_SLICE, allocated_claim("test-claim", {"pool": "per-device-pool", "device": "device-1"})],
            (2, 1), id="DRA-backed-resource-with-per-device-node-selection"),
    ],
)
def test_calculate_resource_allocatable_request(node_extended, resource, objects, want):
    cluster = Cluster([node(NODE, extended=node_extended, labels={"zone": "us-east-1a"})])
    add(cluster, *objects)
    assert totals(cluster, resource) == want


def test_without_the_gate_a_plugin_never_reads_dra():
    cluster = Cluster([node(NODE)])
    args = fit.parse_args({"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": EXTENDED, "weight": 1}]}})
    handle = cluster.handle
    gated_off = replace(handle.features, enable_dra_extended_resource=False)
    assert gated_off != handle.features
    assert fit.NodeResourcesFit(args).dra is None
    assert fit.new(args, _with_features(handle, gated_off)).dra is None


def test_the_default_cpu_and_memory_profile_never_reads_dra():
    cluster = Cluster([node(NODE)])
    assert fit.new(fit.parse_args({}), cluster.handle).dra is None
    assert balanced_allocation.new(balanced_allocation.parse_args({}), cluster.handle).dra is None


class _Handle:
    """A handle with other feature gates."""

    def __init__(self, inner: Any, features: Features) -> None:
        self._inner = inner
        self.features = features

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _with_features(handle: Any, features: Features) -> Any:
    return _Handle(handle, features)


def _fit(cluster: Cluster, strategy: str, *resources: str, **extra: Any) -> fit.NodeResourcesFit:
    raw = {"scoringStrategy": {"type": strategy, "resources": [{"name": r, "weight": 1} for r in resources], **extra}}
    return fit.new(fit.parse_args(raw), cluster.handle)


def _gpu_pod(resource: str = EXTENDED, count: str = "1"):
    return make_pod("p", containers=[container(requests={resource: count})])


@pytest.mark.parametrize("pre_score", [True, False], ids=["with PreScore", "PreScore not called"])
def test_fit_least_allocated_counts_the_class_devices(pre_score):
    """``TestFitScore``: LeastAllocated with Extended resources (node1: 3 devices, node2: 2)."""
    cluster = Cluster([node("node1", cpu=None, memory=None), node("node2", cpu=None, memory=None)])
    add(cluster, device_class(), resource_slice("node1", "device-1", "device-2", "device-3"),
        resource_slice("node2", "device-1", "device-2"))
    plugin = _fit(cluster, "LeastAllocated", EXTENDED)
    assert scores(plugin, _gpu_pod(), cluster, pre_score=pre_score) == {"node1": 66, "node2": 50}


def test_fit_most_allocated_counts_allocated_devices():
    cluster = Cluster([node("node1"), node("node2")])
    add(cluster, device_class(), resource_slice("node1", "d1", "d2", "d3", "d4"), resource_slice("node2", "d1", "d2", "d3", "d4"),
        allocated_claim("held", {"pool": "node1", "device": "d1"}, {"pool": "node1", "device": "d2"}))
    plugin = _fit(cluster, "MostAllocated", EXTENDED)
    assert scores(plugin, _gpu_pod(), cluster) == {"node1": 75, "node2": 25}


def test_fit_requested_to_capacity_ratio_counts_the_class_devices():
    cluster = Cluster([node("node1"), node("node2")])
    add(cluster, device_class(), resource_slice("node1", "d1", "d2"), resource_slice("node2", "d1", "d2", "d3", "d4"))
    shape = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
    plugin = _fit(cluster, "RequestedToCapacityRatio", EXTENDED, requestedToCapacityRatio={"shape": shape})
    assert scores(plugin, _gpu_pod(), cluster) == {"node1": 50, "node2": 25}


def test_a_node_with_the_resource_in_its_allocatable_is_scored_on_it():
    cluster = Cluster([node("node1", extended={EXTENDED: "10"}), node("node2")])
    add(cluster, device_class(), resource_slice("node1", "d1"), resource_slice("node2", "d1", "d2"))
    plugin = _fit(cluster, "LeastAllocated", EXTENDED)
    assert scores(plugin, _gpu_pod(), cluster) == {"node1": 90, "node2": 50}


def test_an_extended_resource_without_a_backing_class_is_left_out():
    cluster = Cluster([node("node1")])
    add(cluster, device_class(None), resource_slice("node1", "d1", "d2"))  # backs only its implicit name
    plugin = _fit(cluster, "MostAllocated", "cpu", EXTENDED)
    assert plugin.dra is not None
    state = CycleState()
    plugin.pre_score(state, _gpu_pod(), cluster.snapshot, cluster.rows())
    assert state.get(fit._SCORE_KEY).dra is None


def test_a_pod_not_asking_for_the_resource_reads_no_dra():
    cluster = Cluster([node("node1")])
    add(cluster, device_class(), resource_slice("node1", "d1"))
    plugin = _fit(cluster, "LeastAllocated", "cpu", EXTENDED)
    state = CycleState()
    plugin.pre_score(state, make_pod("p", containers=[container(requests={"cpu": "1"})]), cluster.snapshot, cluster.rows())
    assert state.get(fit._SCORE_KEY).dra is None


def test_class_selectors_choose_the_counted_devices():
    cluster = Cluster([node("node1")])
    selected = {"name": "a", "attributes": {"kind": {"string": "big"}}}
    other = {"name": "b", "attributes": {"kind": {"string": "small"}}}
    add(cluster, device_class(EXTENDED, f'device.attributes["{DRIVER}"].kind == "big"'),
        resource_slice("node1", name="s1") | {"spec": {**resource_slice("node1")["spec"], "devices": [selected, other, {**selected, "name": "c"}]}})
    assert totals(cluster, EXTENDED, "node1") == (2, 0)


def test_every_listed_slice_counts_older_pool_generations_too():
    """Upstream lists every slice (``ListWithDeviceTaintRules``), not the newest generation only."""
    cluster = Cluster([node("node1")])
    add(cluster, device_class(), resource_slice("node1", "d1", "d2", generation=1), resource_slice("node1", "d1", "d2", generation=2))
    assert totals(cluster, EXTENDED, "node1") == (4, 0)


@pytest.mark.parametrize(
    "spec, want",
    [
        pytest.param({"allNodes": True}, 1, id="all nodes"),
        pytest.param({"nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "zone", "operator": "In", "values": ["a"]}]}]}}, 1, id="a node selector that matches"),
        pytest.param({"nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "zone", "operator": "In", "values": ["b"]}]}]}}, 0, id="a node selector that does not match"),
    ],
)
def test_slice_level_node_selection(spec, want):
    cluster = Cluster([node("node1", labels={"zone": "a"})])
    add(cluster, device_class(), resource_slice("elsewhere", "d1", **spec))
    assert totals(cluster, EXTENDED, "node1") == (want, 0)


def test_a_slice_of_another_node_is_not_counted():
    cluster = Cluster([node("node1"), node("node2")])
    add(cluster, device_class(), resource_slice("node2", "d1"))
    assert totals(cluster, EXTENDED, "node1") == (0, 0)


def test_a_selector_that_fails_leaves_the_resource_out():
    """A CEL runtime error is logged and the node scored without the resource."""
    cluster = Cluster([node("node1")])
    add(cluster, device_class(EXTENDED, f'device.attributes["{DRIVER}"].missing == "x"'), resource_slice("node1", "d1"))
    assert totals(cluster, EXTENDED, "node1") == (0, 0)


def test_allow_multiple_allocations_reads_false_as_upstreams_scorer_passes_it():
    cluster = Cluster([node("node1")])
    add(cluster, device_class(EXTENDED, "!device.allowMultipleAllocations"),
        resource_slice("node1") | {"spec": {**resource_slice("node1")["spec"], "devices": [{"name": "d1", "allowMultipleAllocations": True}]}})
    assert totals(cluster, EXTENDED, "node1") == (1, 0)


def test_a_new_allocation_is_seen_by_the_next_cycle():
    cluster = Cluster([node("node1")])
    add(cluster, device_class(), resource_slice("node1", "d1", "d2"))
    plugin = _fit(cluster, "MostAllocated", EXTENDED)
    assert scores(plugin, _gpu_pod(), cluster) == {"node1": 50}
    add(cluster, allocated_claim("held", {"pool": "node1", "device": "d1"}))
    assert scores(plugin, _gpu_pod(), cluster) == {"node1": 100}


def test_a_changed_slice_is_seen_by_the_next_cycle():
    cluster = Cluster([node("node1")])
    add(cluster, device_class(), resource_slice("node1", "d1", "d2"))
    plugin = _fit(cluster, "LeastAllocated", EXTENDED)
    assert scores(plugin, _gpu_pod(), cluster) == {"node1": 50}
    add(cluster, resource_slice("node1", "d1", "d2", "d3", "d4"))
    assert scores(plugin, _gpu_pod(), cluster) == {"node1": 75}


BALANCED_NODES = [node("node1", cpu="3500m", memory="40000"), node("node2", cpu="3500m", memory="40000")]
BALANCED_PODS = [
    pod("e1", node_name="node1", containers=[container("a", requests={"cpu": "1000m"}), container("b", requests={"cpu": "2000m"})]),
    pod("e2", node_name="node2", containers=[container("a", requests={"cpu": "1000m", "memory": "2000"}),
                                            container("b", requests={"cpu": "2000m", "memory": "3000"})]),
]


@pytest.mark.parametrize("pre_score", [True, False], ids=["with PreScore", "PreScore not called"])
def test_balanced_allocation_includes_the_dra_resource(pre_score):
    """``TestNodeResourcesBalancedAllocation``: include DRA resource on a node (node1: 8 devices;
    node2 none, so the resource is left out there)."""
    cluster = Cluster(BALANCED_NODES, BALANCED_PODS)
    add(cluster, device_class(), resource_slice("node1", *(f"device-{i}" for i in range(1, 9))))
    args = balanced_allocation.parse_args({"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1},
                                                         {"name": EXTENDED, "weight": 1}]})
    plugin = balanced_allocation.new(args, cluster.handle)
    assert scores(plugin, _gpu_pod(), cluster, pre_score=pre_score) == {"node1": 76, "node2": 75}


def test_one_manager_per_cluster_stores():
    cluster = Cluster([node("node1")])
    assert dra_manager_of(cluster.handle) is dra_manager_of(cluster.handle)


def test_an_allocation_on_one_node_changes_only_its_score():
    cluster = Cluster([node("node1"), node("node2")])
    add(cluster, device_class(), resource_slice("node1", "d1", "d2"), resource_slice("node2", "d1", "d2"))
    plugin = _fit(cluster, "MostAllocated", EXTENDED)
    assert scores(plugin, _gpu_pod(), cluster) == {"node1": 50, "node2": 50}
    add(cluster, allocated_claim("held", {"pool": "node2", "device": "d1"}))
    assert scores(plugin, _gpu_pod(), cluster) == {"node1": 50, "node2": 100}


def test_an_allocation_in_flight_counts_as_allocated():
    """Upstream's GatherAllocatedState includes the allocations Reserve made and PreBind has not written."""
    cluster = Cluster([node("node1")])
    add(cluster, device_class(), resource_slice("node1", "d1", "d2", "d3", "d4"))
    plugin = _fit(cluster, "MostAllocated", EXTENDED)
    assert scores(plugin, _gpu_pod(), cluster) == {"node1": 25}
    manager = dra_manager_of(cluster.handle)
    reserved = manager.parse_claim(allocated_claim("reserved", {"pool": "node1", "device": "d2"}))
    manager.signal_pending_allocation("uid-reserved", reserved)
    assert scores(plugin, _gpu_pod(), cluster) == {"node1": 50}
    manager.remove_pending_allocation("uid-reserved")
    assert scores(plugin, _gpu_pod(), cluster) == {"node1": 25}


def test_fit_and_balanced_allocation_share_one_totals_cache():
    cluster = Cluster([node("node1")])
    add(cluster, device_class(), resource_slice("node1", "d1"))
    resources = [{"name": "cpu", "weight": 1}, {"name": EXTENDED, "weight": 1}]
    f = _fit(cluster, "LeastAllocated", "cpu", EXTENDED)
    b = balanced_allocation.new(balanced_allocation.parse_args({"resources": resources}), cluster.handle)
    assert f.dra is not None and b.dra is not None
    cycle = CycleState()
    first, second = f.dra.gather(cycle, f._scored_names, [0, 1]), b.dra.gather(cycle, b._scored_names, [0, 1])
    assert first is not None and second is not None
    assert first.totals is second.totals and first.state is second.state  # one listing per cycle


def test_cached_totals_follow_random_changes_as_a_fresh_count_does():
    """Differential: after each random change (claims allocated and deleted, allocations put in
    flight and taken back, slices republished), the per-row totals kept across cycles equal a
    fresh count over the manager's current state."""
    rng = np.random.default_rng(7)
    names = [f"node{i}" for i in range(6)]
    cluster = Cluster([node(n) for n in names])
    add(cluster, device_class(), *(resource_slice(n, *(f"d{j}" for j in range(4))) for n in names))
    plugin = _fit(cluster, "MostAllocated", EXTENDED)
    manager = dra_manager_of(cluster.handle)
    claims: list[dict[str, Any]] = []
    pending: list[str] = []
    for step in range(120):
        op = rng.integers(5)
        where = names[int(rng.integers(len(names)))]
        if op == 0:
            claims.append(allocated_claim(f"c{step}", {"pool": where, "device": f"d{int(rng.integers(4))}"}))
            add(cluster, claims[-1])
        elif op == 1 and claims:
            gone = claims.pop(int(rng.integers(len(claims))))
            cluster.handle.object_store(API, "ResourceClaim", PLURALS["ResourceClaim"]).delete(gone)
        elif op == 2:
            uid = f"uid-p{step}"
            manager.signal_pending_allocation(uid, manager.parse_claim(
                allocated_claim(f"p{step}", {"pool": where, "device": f"d{int(rng.integers(4))}"})))
            pending.append(uid)
        elif op == 3 and pending:
            manager.remove_pending_allocation(pending.pop(int(rng.integers(len(pending)))))
        else:
            add(cluster, resource_slice(where, *(f"d{j}" for j in range(int(rng.integers(1, 5))))))
        cycle = CycleState()
        dra = plugin.dra.gather(cycle, plugin._scored_names, [1])
        assert dra is not None
        table = cluster.snapshot.table
        rows = cluster.rows(names)
        got = allocatable_and_requested(table, rows, EXTENDED, 1, use_requested=False, dra=dra)
        fresh = DraTotals()
        cls = manager.device_class_for(EXTENDED)
        want = [fresh.totals(dra.state, cls, cluster.info(n).node) for n in names]
        assert got is not None
        assert list(zip(got[0].tolist(), (got[1] - 1).tolist())) == [w if w[0] > 0 else (0, 0) for w in want], step


def _simulation_config(strategy: str) -> dict[str, Any]:
    profile = {**dra_helpers.CONFIG["profiles"][0], "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
        "type": strategy, "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1},
                                        {"name": "example.com/gpu", "weight": 5}]}}}]}
    return {**dra_helpers.CONFIG, "profiles": [profile]}


def _held(name: str, node_name: str, device: int) -> dict[str, Any]:
    held = dra_helpers.claim(name)
    held["status"] = {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": dra_helpers.DRIVER, "pool": node_name, "device": f"gpu-{device}"}]}}}
    return held


@pytest.mark.parametrize("strategy, chosen", [("MostAllocated", "n2"), ("LeastAllocated", "n1")])
def test_simulate_places_by_the_class_devices_in_use(strategy, chosen):
    """End to end: n2 has 3 of its 4 GPUs held, n1 none; the scored GPU resource decides (the
    name tie-break alone would pick n1)."""
    sim = dra_helpers.simulate(
        dra_helpers.node("n1"), dra_helpers.node("n2"),
        dra_helpers.gpu_slice("n1", 4), dra_helpers.gpu_slice("n2", 4), dra_helpers.gpu_class("gpu", "example.com/gpu"),
        _held("h0", "n2", 0), _held("h1", "n2", 1), _held("h2", "n2", 2),
        dra_helpers.pod("p", requests={"example.com/gpu": "1"}),
        config=_simulation_config(strategy))
    assert sim.outcomes["default/p"].node == chosen


def test_the_scorers_read_the_manager_dynamic_resources_keeps():
    """Upstream's SharedDRAManager: the allocations DynamicResources' Reserve puts in flight count."""
    cluster = Cluster([node("node1")])
    plugin = dynamicresources.new(None, cluster.handle)
    assert dra_manager_of(cluster.handle) is plugin.manager
