"""VolumeRestrictions: in-tree disks not shareable on a node, ReadWriteOncePod claims in use anywhere."""

from __future__ import annotations

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code
from kubesched.objects.pod import parse_pod
from kubesched.plugins import volumerestrictions

from ..helpers import node, pod
from .test_volume_objects import StorageCluster, claim_pod, gce_disk, pvc

DISK = (Code.UNSCHEDULABLE, ("node(s) had no available disk",))
RWOP = (Code.UNSCHEDULABLE, ("node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod",))


def run(pods=(), objects=(), incoming=None):
    c = StorageCluster([node("n1"), node("n2")], pods)
    c.add(*objects)
    plugin = volumerestrictions.new(None, c.handle)
    state, p = CycleState(), parse_pod(incoming)
    _, status = plugin.pre_filter(state, p, c.snapshot)
    if status is not None:
        return status
    return {n: (None if (s := plugin.filter(state, p, c.info(n))) is None else (s.code, s.reasons)) for n in c.names()}


def aws(volume_id):
    return {"name": f"ebs-{volume_id}", "awsElasticBlockStore": {"volumeID": volume_id}}


def iscsi(iqn, read_only=False):
    return {"name": f"iscsi-{iqn}", "iscsi": {"iqn": iqn, "targetPortal": "10.0.0.1", "lun": 0, "readOnly": read_only}}


def rbd(monitors, image, read_only=False):
    return {"name": f"rbd-{image}", "rbd": {"monitors": list(monitors), "image": image, "pool": "rbd", "readOnly": read_only}}


def test_a_pod_without_restricted_volumes_is_skipped():
    assert run(incoming=claim_pod("p")).code == Code.SKIP


@pytest.mark.parametrize(("mine", "theirs", "conflict"), [
    (gce_disk("d1"), gce_disk("d1"), True),
    (gce_disk("d1", read_only=True), gce_disk("d1", read_only=True), False),
    (gce_disk("d1", read_only=True), gce_disk("d1"), True),
    (gce_disk("d1"), gce_disk("d2"), False),
    (aws("vol-1"), aws("vol-1"), True),
    (aws("vol-1"), aws("vol-2"), False),
    (iscsi("iqn.a"), iscsi("iqn.a", read_only=True), True),
    (iscsi("iqn.a", True), iscsi("iqn.a", True), False),
    (rbd(["m1", "m2"], "img"), rbd(["m2"], "img"), True),
    (rbd(["m1"], "img"), rbd(["m3"], "img"), False),
    (rbd(["m1"], "img", True), rbd(["m1"], "img", True), False),
], ids=["gce-rw", "gce-both-ro", "gce-one-ro", "gce-other-disk", "ebs-same", "ebs-other", "iscsi-rw", "iscsi-ro",
        "rbd-shared-monitor", "rbd-no-shared-monitor", "rbd-ro"])
def test_in_tree_disk_conflicts(mine, theirs, conflict):
    bound = claim_pod("holder", volumes=[theirs], node_name="n1")
    got = run(pods=[bound], incoming=claim_pod("p", volumes=[mine]))
    assert got == {"n1": DISK if conflict else None, "n2": None}


def test_a_missing_claim_is_rejected_at_prefilter():
    status = run(incoming=claim_pod("p", "nope"))
    assert (status.code, status.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ('persistentvolumeclaim "nope" not found',))


def test_a_read_write_once_pod_claim_in_use_fails_every_node():
    holder = claim_pod("holder", "solo", node_name="n1")
    got = run(pods=[holder], objects=[pvc("solo", modes=["ReadWriteOncePod"])], incoming=claim_pod("p", "solo"))
    assert got == {"n1": RWOP, "n2": RWOP}


def test_a_read_write_once_claim_may_be_shared():
    holder = claim_pod("holder", "shared", node_name="n1")
    assert run(pods=[holder], objects=[pvc("shared")], incoming=claim_pod("p", "shared")).code == Code.SKIP


def test_a_claim_of_the_same_name_in_another_namespace_does_not_conflict():
    holder = claim_pod("holder", "solo", node_name="n1", namespace="other")
    objects = [pvc("solo", modes=["ReadWriteOncePod"]), pvc("solo", namespace="other", modes=["ReadWriteOncePod"])]
    assert run(pods=[holder], objects=objects, incoming=claim_pod("p", "solo")).code == Code.SKIP


def test_removing_the_holder_in_a_dry_run_clears_the_conflict():
    holder = parse_pod(claim_pod("holder", "solo", node_name="n1"))
    c = StorageCluster([node("n1")], [holder])
    c.add(pvc("solo", modes=["ReadWriteOncePod"]))
    plugin = volumerestrictions.new(None, c.handle)
    state, p = CycleState(), parse_pod(claim_pod("p", "solo"))
    plugin.pre_filter(state, p, c.snapshot)
    plugin.remove_pod(state, p, holder, c.info("n1"))
    assert plugin.filter(state, p, c.info("n1")) is None
    plugin.add_pod(state, p, holder, c.info("n1"))
    assert plugin.filter(state, p, c.info("n1")).reasons == RWOP[1]


def test_deleting_a_pod_that_shares_a_claim_queues_the_pod():
    plugin = volumerestrictions.new(None, StorageCluster([node("n1")]).handle)
    waiting = parse_pod(claim_pod("p", "solo"))
    assert plugin._hint_pod_deleted(waiting, parse_pod(claim_pod("h", "solo", node_name="n1")), None).name == "QUEUE"
    assert plugin._hint_pod_deleted(waiting, parse_pod(pod("other", node_name="n1")), None).name == "SKIP"
