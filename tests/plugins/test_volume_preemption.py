"""Preemption of pods with claims: the dry run filters what-if nodes through the storage
filters' per-node form. NodeVolumeLimits (upstream's CSILimits): a victim holding a volume of
the driver frees a slot on its node, a victim without one frees none, so only nodes where
removing lower-priority pods brings the count under the limit are candidates (no
VolumeAttachments here: upstream would also count those of victims). VolumeBinding: a
claim bound to a PV pinned to one node keeps the preemptor, and its victims, on that node."""

from __future__ import annotations

from kubesched.cluster.simulated import Simulation
from kubesched.cluster.snapshot import snapshot_from_objects
from kubesched.plugins.registry import in_tree_registry

from ..helpers import config, node, parse
from .test_volume_objects import claim_pod, csi_node, pv, pvc

EBS = "ebs.csi.example.com"


def simulate(*objects):
    registry = in_tree_registry()
    kinds = frozenset(k for _, k in registry.object_kinds())
    snapshot = snapshot_from_objects([("test", o) for o in objects], plugin_kinds=kinds)
    sim = Simulation(snapshot, parse(config({})), registry, tie_break="name")
    return sim.run()


def volume(name):
    """A bound claim ``data-<name>`` on the CSI volume ``vol-<name>`` of EBS."""
    return [pv(f"pv-{name}", csi=(EBS, f"vol-{name}"), claim=("default", f"data-{name}", f"uid-default-data-{name}"),
               phase="Bound"),
            pvc(f"data-{name}", cls="", volume_name=f"pv-{name}", bound=True)]


def nodes_with_one_attach_slot(*names):
    return [node(n) for n in names] + [csi_node(n, {EBS: (1, [])}) for n in names]


def test_a_pod_over_the_attach_limit_everywhere_preempts_the_lowest_priority_volume_holder():
    result = simulate(
        *nodes_with_one_attach_slot("n1", "n2"), *volume("a"), *volume("b"), *volume("h"),
        claim_pod("low-a", "data-a", cpu="100m", priority=1, node_name="n1"),
        claim_pod("low-b", "data-b", cpu="100m", priority=5, node_name="n2"),
        claim_pod("high", "data-h", cpu="100m", priority=100),
    )
    assert [(v, p, n) for v, p, n in result.preemptions] == [("default/low-a", "default/high", "n1")]
    assert dict(result.placements)["default/high"] == "n1"


def test_a_victim_without_a_volume_frees_no_slot_so_its_node_is_no_candidate():
    result = simulate(
        *nodes_with_one_attach_slot("n1", "n2"), *volume("v"), *volume("b"), *volume("h"),
        claim_pod("vip", "data-v", cpu="100m", priority=1000, node_name="n1"),
        claim_pod("low-x", cpu="100m", priority=1, node_name="n1"),
        claim_pod("low-b", "data-b", cpu="100m", priority=5, node_name="n2"),
        claim_pod("high", "data-h", cpu="100m", priority=100),
    )
    assert [(v, p, n) for v, p, n in result.preemptions] == [("default/low-b", "default/high", "n2")]
    assert dict(result.placements)["default/high"] == "n2"


def test_a_lower_priority_pod_sharing_the_preemptors_volume_is_reprieved():
    # Limit 2; high brings vol-a (already attached by low-a) and vol-h. Reprieving in priority
    # order: mid back leaves a, h new (3 > 2), so mid goes; low-a back counts a once (2): kept.
    result = simulate(
        node("n1"), csi_node("n1", {EBS: (2, [])}), *volume("a"), *volume("m"), *volume("h"),
        claim_pod("low-a", "data-a", cpu="100m", priority=1, node_name="n1"),
        claim_pod("mid", "data-m", cpu="100m", priority=50, node_name="n1"),
        claim_pod("high", "data-a", "data-h", cpu="100m", priority=100),
    )
    assert [(v, p, n) for v, p, n in result.preemptions] == [("default/mid", "default/high", "n1")]
    assert dict(result.placements)["default/high"] == "n1"


def test_a_pod_whose_pv_is_pinned_to_a_full_node_preempts_there_only():
    pinned = pv("pv-p", csi=(EBS, "vol-p"), claim=("default", "data-p", "uid-default-data-p"), phase="Bound",
                hosts=["n2"])
    result = simulate(
        node("n1", cpu="1"), node("n2", cpu="1"), pinned, pvc("data-p", cls="", volume_name="pv-p", bound=True),
        claim_pod("low-1", cpu="1", priority=1, node_name="n1"),
        claim_pod("low-2", cpu="1", priority=5, node_name="n2"),
        claim_pod("high", "data-p", cpu="1", priority=100),
    )
    assert [(v, p, n) for v, p, n in result.preemptions] == [("default/low-2", "default/high", "n2")]
    assert dict(result.placements)["default/high"] == "n2"
