"""VolumeZone: the zone and region labels of a pod's bound PVs must match the node's."""

from __future__ import annotations

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code
from kubesched.objects.pod import parse_pod
from kubesched.plugins import volumezone

from ..helpers import node
from .test_volume_objects import StorageCluster, claim_pod, pv, pvc, storage_class

ZONE, REGION = "topology.kubernetes.io/zone", "topology.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
CONFLICT = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) had no available volume zone",))


def cluster(*objects):
    c = StorageCluster([
        node("a1", labels={ZONE: "a", REGION: "r1"}),
        node("b1", labels={ZONE: "b", REGION: "r1"}),
        node("c1", labels={BETA_ZONE: "c"}),
        node("plain"),
    ])
    c.add(*objects)
    return c


def verdicts(c, raw_pod):
    plugin = volumezone.new(None, c.handle)
    state, pod_info = CycleState(), parse_pod(raw_pod)
    _, status = plugin.pre_filter(state, pod_info, c.snapshot)
    if status is not None and not status.is_success():
        return status
    out = {}
    for name in c.names():
        s = plugin.filter(state, pod_info, c.info(name))
        out[name] = None if s is None else (s.code, s.reasons)
    return out


def test_a_pod_without_volumes_is_skipped():
    status = verdicts(cluster(), claim_pod("p"))
    assert status.code == Code.SKIP


def test_a_zonal_pv_keeps_the_pod_in_its_zone_and_nodes_without_zone_labels_pass():
    c = cluster(pv("pv-a", labels={ZONE: "a"}), pvc("data", volume_name="pv-a", bound=True))
    assert verdicts(c, claim_pod("p", "data")) == {"a1": None, "b1": CONFLICT, "c1": CONFLICT, "plain": None}


def test_a_pv_may_name_several_zones():
    c = cluster(pv("pv-ab", labels={ZONE: "a__b"}), pvc("data", volume_name="pv-ab", bound=True))
    assert verdicts(c, claim_pod("p", "data")) == {"a1": None, "b1": None, "c1": CONFLICT, "plain": None}


def test_a_beta_zone_label_on_the_pv_matches_the_nodes_ga_label():
    c = cluster(pv("pv-b", labels={BETA_ZONE: "b"}), pvc("data", volume_name="pv-b", bound=True))
    assert verdicts(c, claim_pod("p", "data"))["b1"] is None


def test_every_label_of_the_pv_must_match():
    c = cluster(pv("pv", labels={ZONE: "a", REGION: "r2"}), pvc("data", volume_name="pv", bound=True))
    assert verdicts(c, claim_pod("p", "data"))["a1"] == CONFLICT


def test_an_unbound_wait_for_first_consumer_claim_is_left_to_volume_binding():
    c = cluster(storage_class("local"), pvc("data", cls="local"))
    assert verdicts(c, claim_pod("p", "data")).code == Code.SKIP


@pytest.mark.parametrize(("objects", "message"), [
    ((), 'persistentvolumeclaim "data" not found'),
    ((pvc("data", volume_name="gone", bound=True),), 'persistentvolume "gone" not found'),
    ((pvc("data", cls="immediate"), storage_class("immediate", mode="Immediate")), "PersistentVolume had no name"),
    ((pvc("data"),), "PersistentVolumeClaim had no pv name and storageClass name"),
])
def test_prefilter_rejects_what_it_cannot_look_up(objects, message):
    status = verdicts(cluster(*objects), claim_pod("p", "data"))
    assert (status.code, status.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (message,))


def test_a_change_of_a_pvs_zone_label_queues_the_pod_and_other_changes_do_not():
    plugin = volumezone.new(None, cluster().handle)
    p = parse_pod(claim_pod("p", "data"))
    old = pv("pv", labels={ZONE: "a"})
    assert plugin._hint_pv_changed(p, old, pv("pv", labels={ZONE: "b"})).name == "QUEUE"
    assert plugin._hint_pv_changed(p, old, pv("pv", labels={ZONE: "a", "team": "x"})).name == "SKIP"
