"""NodeVolumeLimits: the attach limit per CSI driver a node's CSINode publishes."""

from __future__ import annotations

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code
from kubesched.objects.pod import parse_pod
from kubesched.plugins import nodevolumelimits

from ..helpers import batch_filter, node
from .test_volume_objects import StorageCluster, claim_pod, csi_node, gce_disk, pv, pvc, storage_class

EBS = "ebs.csi.example.com"
EXCEEDED = (Code.UNSCHEDULABLE, ("node(s) exceed max volume count",))
MIGRATED = {"storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/gce-pd"}


def bound_volume(name, driver=EBS):
    """A PV of ``driver`` and its bound claim, both named ``name``."""
    return [pv(name, csi=(driver, f"handle-{name}"), claim=("default", name, f"uid-default-{name}")),
            pvc(name, volume_name=name, bound=True)]


def run(incoming, pods=(), objects=(), limit=2):
    c = StorageCluster([node("n1")], pods)
    c.add(csi_node("n1", {EBS: (limit, ["topology.kubernetes.io/zone"])}, MIGRATED), *objects)
    plugin = nodevolumelimits.new(None, c.handle)
    state, p = CycleState(), parse_pod(incoming)
    _, status = plugin.pre_filter(state, p, c.snapshot)
    if status is not None:
        return status
    s = batch_filter(plugin, state, p, c)["n1"]
    return None if s is None else (s.code, s.reasons)


def test_a_pod_without_claims_or_migratable_disks_is_skipped():
    assert run(claim_pod("p")).code == Code.SKIP


def test_volumes_up_to_the_limit_fit():
    objects = bound_volume("a") + bound_volume("b")
    assert run(claim_pod("p", "a", "b"), objects=objects) is None


def test_volumes_of_pods_on_the_node_count_against_the_limit():
    objects = bound_volume("a") + bound_volume("b") + bound_volume("c")
    assert run(claim_pod("p", "c"), pods=[claim_pod("h", "a", "b", node_name="n1")], objects=objects) == EXCEEDED


def test_a_volume_shared_with_a_pod_on_the_node_counts_once():
    objects = bound_volume("a") + bound_volume("b")
    assert run(claim_pod("p", "a", "b"), pods=[claim_pod("h", "a", "b", node_name="n1")], objects=objects) is None


def test_other_drivers_and_nodes_without_a_limit_are_not_limited():
    objects = bound_volume("a", "other.csi") + bound_volume("b", "other.csi") + bound_volume("c", "other.csi")
    assert run(claim_pod("p", "a", "b", "c"), objects=objects) is None


def test_an_unbound_claim_counts_against_its_class_provisioner():
    objects = bound_volume("a") + bound_volume("b") + [storage_class("ebs", provisioner=EBS), pvc("new", cls="ebs")]
    assert run(claim_pod("p", "new"), pods=[claim_pod("h", "a", "b", node_name="n1")], objects=objects) == EXCEEDED


def test_an_inline_gce_disk_counts_only_once_its_plugin_is_migrated_on_the_node():
    disks = [gce_disk("d1"), gce_disk("d2"), gce_disk("d3")]
    c = StorageCluster([node("n1"), node("n2")])
    c.add(csi_node("n1", {"pd.csi.storage.gke.io": (2, [])}, MIGRATED), csi_node("n2", {"pd.csi.storage.gke.io": (2, [])}))
    plugin = nodevolumelimits.new(None, c.handle)
    state, p = CycleState(), parse_pod(claim_pod("p", volumes=disks))
    plugin.pre_filter(state, p, c.snapshot)
    got = batch_filter(plugin, state, p, c)
    assert got["n1"].reasons == EXCEEDED[1]
    assert got["n2"] is None


def test_pods_placed_and_removed_after_the_first_filter_are_counted_incrementally():
    objects = bound_volume("a") + bound_volume("b") + bound_volume("c")
    c = StorageCluster([node("n1")])
    c.add(csi_node("n1", {EBS: (2, [])}), *objects)
    plugin = nodevolumelimits.new(None, c.handle)
    incoming = parse_pod(claim_pod("p", "c"))

    def verdict():
        state = CycleState()
        plugin.pre_filter(state, incoming, c.snapshot)
        return batch_filter(plugin, state, incoming, c)["n1"]

    assert verdict() is None
    holder = c.add_pod(claim_pod("h", "a", "b", node_name="n1"))
    assert verdict().reasons == EXCEEDED[1]
    c.cache.remove_pod(holder)
    assert verdict() is None


def test_a_missing_claim_is_unresolvable():
    status = run(claim_pod("p", "gone"))
    assert status[0] == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status[1] == ('looking up PVC default/gone: persistentvolumeclaim "gone" not found',)
