"""DynamicResources' batch Filter keeps its verdicts across pods (``verdicts.py``): for
DRA-backed extended resources, pods whose classes select the same devices share them; a
change on a node forgets only what it can change; decisions stay those of the per-node
Filter."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kubesched.framework import CycleState
from kubesched.objects.pod import parse_pod
from kubesched.plugins.dynamicresources.state import STATE
from kubesched.plugins.dynamicresources.verdicts import DOES_NOT_FIT, FITS, UNKNOWN, VerdictRows

from .dra_helpers import API, DRIVER, claim, gpu_class, gpu_slice, node, pod, simulate

OTHER_DRIVER = "nic.example.com"


def _other_slice(node_name: str) -> dict[str, Any]:
    found = gpu_slice(node_name, 1)
    found["metadata"]["name"] = f"{node_name}-nics"
    found["spec"]["driver"] = OTHER_DRIVER
    return found


def _other_class(name: str, extended: str) -> dict[str, Any]:
    return {"apiVersion": API, "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{OTHER_DRIVER}"'}}], "extendedResourceName": extended}}


def _placed(sim, name: str) -> str | None:
    return sim.outcomes[f"default/{name}"].node


class _Counting:
    """The cycle's allocator, counting the nodes it is asked about."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.nodes: list[str] = []

    def allocate(self, node, claims, deadline=None):
        self.nodes.append(node.name)
        return self.real.allocate(node, claims, deadline)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def _batch_filter(sim, p: dict[str, Any]) -> tuple[_Counting, list[int]]:
    plugin = sim.scheduler.profiles["default-scheduler"].instances["DynamicResources"]
    snapshot = sim.scheduler.cache.snapshot()
    info = parse_pod(p)
    state = CycleState()
    plugin.pre_filter(state, info, snapshot)
    s = state.get(STATE)
    counting = _Counting(s.allocator)
    s.allocator = counting
    size = snapshot.table.size
    verdicts = plugin.filter_nodes(state, info, snapshot, np.ones(size, dtype=bool))
    return counting, [int(c) for c in verdicts.codes[:size]]


def test_classes_selecting_the_same_devices_share_verdicts():
    sim = simulate(node("n1"), node("n2"), gpu_slice("n1", 1), gpu_slice("n2", 1),
                   gpu_class("a", extended="example.com/a"), gpu_class("b", extended="example.com/b"))
    first, codes_a = _batch_filter(sim, pod("p1", requests={"example.com/a": "1"}))
    second, codes_b = _batch_filter(sim, pod("p2", requests={"example.com/b": "1"}))
    assert sorted(first.nodes) == ["n1", "n2"]
    assert second.nodes == []  # nothing changed on either node: the verdicts of class a's pod hold
    assert codes_a == codes_b == [0, 0]


def test_classes_selecting_different_devices_keep_their_own_verdicts():
    sim = simulate(node("n1"), node("n2"), gpu_slice("n1", 1), _other_slice("n2"),
                   gpu_class("a", extended="example.com/a"), _other_class("b", "example.com/b"))
    _, codes_a = _batch_filter(sim, pod("p1", requests={"example.com/a": "1"}))
    second, codes_b = _batch_filter(sim, pod("p2", requests={"example.com/b": "1"}))
    assert sorted(second.nodes) == ["n1", "n2"]
    assert codes_a[0] == 0 and codes_a[1] != 0
    assert codes_b[0] != 0 and codes_b[1] == 0


def test_pods_of_classes_with_the_same_selectors_take_distinct_devices():
    sim = simulate(node("n1"), node("n2"), gpu_slice("n1", 1), gpu_slice("n2", 1),
                   gpu_class("a", extended="example.com/a"), gpu_class("b", extended="example.com/b"),
                   pod("p1", requests={"example.com/a": "1"}), pod("p2", requests={"example.com/b": "1"}),
                   pod("p3", requests={"example.com/a": "1"}))
    assert sorted([_placed(sim, "p1"), _placed(sim, "p2")]) == ["n1", "n2"]
    assert _placed(sim, "p3") is None
    assert sim.outcomes["default/p3"].message == "0/2 nodes are available: 2 cannot allocate all claims."


def test_each_claim_is_allocated_for_its_own_class():
    sim = simulate(node("n1"), gpu_slice("n1", 2), gpu_class("a", extended="example.com/a"),
                   gpu_class("b", extended="example.com/b"),
                   pod("p1", requests={"example.com/a": "1"}), pod("p2", requests={"example.com/b": "1"}))
    store = sim.scheduler.hub.object_stores.find(API, "ResourceClaim")
    for name, cls in (("p1", "a"), ("p2", "b")):
        claim_name = sim.cluster.extended_claim_statuses[f"default/{name}"]["resourceClaimName"]
        stored = store.get("default", claim_name)
        assert [r["exactly"]["deviceClassName"] for r in stored["spec"]["devices"]["requests"]] == [cls]
        assert [r["driver"] for r in stored["status"]["allocation"]["devices"]["results"]] == [DRIVER]


def test_a_node_judged_for_another_class_gets_this_claims_class_config():
    """Reserve builds the chosen node's allocation from the devices kept with the verdict (found
    for a pod of another class selecting the same devices); its config is this claim's class's."""
    configured = gpu_class("a", extended="example.com/a")
    configured["spec"]["config"] = [{"opaque": {"driver": DRIVER, "parameters": {"mode": "a"}}}]
    nodes = [f"n{i}" for i in range(1, 6)]  # enough for the batch Filter (a few nodes go one by one)
    sim = simulate(*map(node, nodes), *(gpu_slice(n, 2) for n in nodes), configured,
                   gpu_class("b", extended="example.com/b"),
                   pod("p1", requests={"example.com/a": "1"}), pod("p2", requests={"example.com/b": "1"}),
                   pod("p3", requests={"example.com/a": "1"}))
    store = sim.scheduler.hub.object_stores.find(API, "ResourceClaim")
    configs = {}
    for name in ("p1", "p2", "p3"):
        claim_name = sim.cluster.extended_claim_statuses[f"default/{name}"]["resourceClaimName"]
        allocation = store.get("default", claim_name)["status"]["allocation"]
        configs[name] = [(c["source"], c["opaque"]["parameters"]) for c in allocation["devices"].get("config") or []]
    assert configs == {"p1": [("FromClass", {"mode": "a"})], "p2": [], "p3": [("FromClass", {"mode": "a"})]}
    assert len({_placed(sim, "p1"), _placed(sim, "p2"), _placed(sim, "p3")}) == 3  # p2, p3 on nodes p1 judged


def test_pods_asking_different_counts_get_claims_of_their_own_counts():
    sim = simulate(node("n1"), gpu_slice("n1", 4), gpu_class("a", extended="example.com/a"),
                   pod("p1", requests={"example.com/a": "1"}), pod("p2", requests={"example.com/a": "2"}),
                   pod("p3", requests={"example.com/a": "1"}))
    store = sim.scheduler.hub.object_stores.find(API, "ResourceClaim")
    counts = {}
    for name in ("p1", "p2", "p3"):
        claim_name = sim.cluster.extended_claim_statuses[f"default/{name}"]["resourceClaimName"]
        counts[name] = [r["exactly"]["count"] for r in store.get("default", claim_name)["spec"]["devices"]["requests"]]
    assert counts == {"p1": [1], "p2": [2], "p3": [1]}


@pytest.mark.parametrize("kept, freed, after", [
    pytest.param(FITS, False, UNKNOWN, id="devices taken where claims fit: asked again"),
    pytest.param(FITS, True, FITS, id="devices freed where claims fit: still fit"),
    pytest.param(DOES_NOT_FIT, False, DOES_NOT_FIT, id="devices taken where claims did not fit: still do not"),
    pytest.param(DOES_NOT_FIT, True, UNKNOWN, id="devices freed where claims did not fit: asked again"),
])
def test_a_kept_verdict_after_a_change_on_its_node(kept, freed, after):
    rows = VerdictRows(2, epoch=0, seen=0)
    rows.ok[:] = kept
    rows.score[:] = 5
    rows.catch_up(0, ["n1"], [freed], 1, {"n1": 0, "n2": 1})
    assert rows.ok.tolist() == [after, kept]
    assert rows.score.tolist() == [-1, 5]  # other devices may be chosen now: scored again


def test_kept_verdicts_are_all_forgotten_in_a_new_epoch():
    rows = VerdictRows(2, epoch=0, seen=0)
    rows.ok[:] = DOES_NOT_FIT
    rows.catch_up(1, [], [], 0, {})
    assert rows.ok.tolist() == [UNKNOWN, UNKNOWN]


def _network_slice(devices: int) -> dict[str, Any]:
    """One pool every node with ``rack: a`` sees (network-attached devices)."""
    selector = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "rack", "operator": "In", "values": ["a"]}]}]}
    return {"apiVersion": API, "kind": "ResourceSlice", "metadata": {"name": "rack-a"},
            "spec": {"driver": DRIVER, "nodeSelector": selector, "pool": {"name": "rack-a", "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{i}"} for i in range(devices)]}}


def test_nodes_that_see_the_same_pools_are_decided_by_one_allocation():
    nodes = [node(f"n{i:02d}") for i in range(12)]
    for n in nodes[:10]:
        n["metadata"]["labels"]["rack"] = "a"
    sim = simulate(*nodes, _network_slice(2), gpu_class("gpu"), claim("c"))
    counting, codes = _batch_filter(sim, pod("p", claims={"gpu": "c"}))
    assert sorted(counting.nodes) == ["n00", "n10"]  # one node of rack a, one of the two that see no pool
    assert codes[:10] == [0] * 10 and codes[10] != 0 and codes[11] != 0
