"""Property: NodeVolumeLimits and VolumeBinding give the same verdicts and messages from their
batch form (``filter_nodes``) as from their per-node form (``filter``, which preemption's dry
run uses), on random clusters holding CSINodes with attach limits, migrated in-tree plugins,
bound and unbound claims, PVs pinned to nodes and placed pods using them; and the per-node
form of a node with some pods taken off (a dry run's what-if copy) agrees with the batch
form over a cluster where those pods really left."""

from __future__ import annotations

import random

import pytest

from kubesched.framework.preemption import clone_node_info
from kubesched.objects.pod import parse_pod
from kubesched.plugins.registry import in_tree_registry
from kubesched.testing import RandomCluster, assert_forms_agree, assert_plugin_contract, random_cluster, random_clusters
from kubesched.testing._support import new_state, pre_filter, verdict

from .test_volume_objects import PLURALS, claim_pod, csi_node, gce_disk, pv, pvc, storage_class

EBS = "ebs.csi.example.com"
OTHER = "other.csi.example.com"
GCE_PD = "kubernetes.io/gce-pd"
GCE_PD_CSI = "pd.csi.storage.gke.io"  # where migrated gce-pd disks count
VOLUMES = 8
REGISTRY = in_tree_registry()


def store(cluster: RandomCluster, obj: dict) -> None:
    version, plural = PLURALS[str(obj["kind"])]
    cluster.handle.object_store(version, str(obj["kind"]), plural).upsert(obj)  # type: ignore[attr-defined]


def claims(rng: random.Random) -> list[str]:
    """Up to three random claim names for one pod (a name may repeat, or have no claim)."""
    return [f"data-{rng.randrange(VOLUMES)}" for _ in range(rng.randint(0, 3))]


def storage(cluster: RandomCluster, rng: random.Random) -> None:
    hosts = cluster.node_names()
    for name in hosts:
        if rng.random() < 0.8:
            drivers = {EBS: (rng.choice([None, 0, 1, 2, 3]), []), OTHER: (rng.choice([None, 1]), []),
                       GCE_PD_CSI: (rng.choice([None, 1, 2]), [])}
            annotations = {"storage.alpha.kubernetes.io/migrated-plugins": GCE_PD} if rng.random() < 0.5 else None
            store(cluster, csi_node(name, drivers, annotations))
    store(cluster, storage_class("dyn", provisioner=EBS))
    store(cluster, storage_class("local"))
    for i in range(VOLUMES):
        claim = ("default", f"data-{i}", f"uid-default-data-{i}")
        pinned = rng.sample(hosts, rng.randint(1, len(hosts))) if rng.random() < 0.4 else None
        kind = rng.random()
        if kind < 0.6:  # bound to a CSI volume, maybe pinned to some nodes
            store(cluster, pv(f"pv-{i}", csi=(rng.choice([EBS, EBS, OTHER]), f"vol-{i}"), claim=claim, phase="Bound",
                              hosts=pinned))
            store(cluster, pvc(f"data-{i}", cls="", volume_name=f"pv-{i}", bound=True))
        elif kind < 0.8:  # waits for its first consumer: a local PV pinned to one node may match it
            store(cluster, pv(f"pv-{i}", cls="local", hosts=[rng.choice(hosts)]))
            store(cluster, pvc(f"data-{i}", cls="local"))
        elif kind < 0.95:  # provisioned by EBS's class
            store(cluster, pvc(f"data-{i}", cls="dyn"))
        # else: the claim does not exist
    for j in range(rng.randint(0, 2 * len(hosts))):
        disks = [gce_disk(f"pd-{rng.randrange(3)}")] if rng.random() < 0.3 else []
        raw = claim_pod(f"user-{j}", *claims(rng), volumes=disks, cpu="10m", node_name=rng.choice(hosts))
        cluster.cache.add_pod(parse_pod(raw))
    pending = []
    for k in range(8):
        disks = [gce_disk(f"pd-{rng.randrange(3)}")] if rng.random() < 0.3 else []
        pending.append(parse_pod(claim_pod(f"new-{k}", *claims(rng), volumes=disks, cpu="10m")))
    cluster.pods = pending


CLUSTERS = random_clusters(40, seed=11, max_nodes=8, setup=storage)


@pytest.mark.parametrize("name", ["NodeVolumeLimits", "VolumeBinding"])
def test_batch_and_per_node_forms_agree_on_random_storage_clusters(name: str) -> None:
    """NodeVolumeLimits: the whole contract, its forms agreeing among it; VolumeBinding: the
    forms (its PreScore skips every pod in v1.36, so the score checks have nothing to see).
    tests/testing/test_in_tree_contract.py's clusters hold no claims, so these are checked here."""
    spec = REGISTRY.get(name)
    assert spec is not None
    if name == "VolumeBinding":
        report = assert_forms_agree(spec, None, CLUSTERS)
    else:
        report = assert_plugin_contract(spec, None, clusters=CLUSTERS)
    assert "filter forms agree" in report.checks
    assert report.filter_rows_compared >= 200 and report.filter_rows_rejected >= 20, report


def test_per_node_form_of_a_node_without_some_pods_agrees_with_the_batch_form_once_they_left() -> None:
    spec = REGISTRY.get("NodeVolumeLimits")
    assert spec is not None
    compared = changed = 0
    for index in range(40):
        before = random_cluster(11, index, max_nodes=8, setup=storage)
        after = random_cluster(11, index, max_nodes=8, setup=storage)
        rng = before.rng("leavers")
        leaving = {name: [p for p in info.pods.values() if rng.random() < 0.5]
                   for name, info in ((i.name, i) for i in before.cache.by_row if i is not None)}
        single, batch = spec.build(None, before.handle), spec.build(None, after.handle)
        for info in after.cache.by_row:
            if info is not None:
                for pod in list(info.pods.values()):
                    if any(p.key == pod.key for p in leaving[info.name]):
                        after.cache.remove_pod(pod)
        assert [p.key for p in before.pods] == [p.key for p in after.pods]
        for pod in before.pods:
            state_n, state_b = new_state(), new_state()
            runs_n, _ = pre_filter(single, state_n, pod, before)
            runs_b, candidates = pre_filter(batch, state_b, pod, after)
            if not (runs_n and runs_b):
                continue
            verdicts = batch.filter_nodes(state_b, pod, after.snapshot, candidates)
            for row in [int(r) for r in after.rows()]:
                info = before.node_info(row)
                what_if = clone_node_info(info)
                for gone in leaving[info.name]:
                    del what_if.pods[gone.uid]
                code = int(verdicts.codes[row])
                expected = verdict(verdicts.statuses[code - 1] if code else None)
                got = verdict(single.filter(state_n, pod, what_if))
                assert got == expected, (before.describe(), pod.key, info.name)
                untouched = verdict(single.filter(state_n, pod, info))
                compared += 1
                changed += got != untouched
    assert compared >= 200 and changed >= 5, (compared, changed)
