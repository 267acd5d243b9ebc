"""Volumes end to end in ``simulate``: StatefulSet claims on local PVs, zonal PVs, WaitForFirstConsumer
provisioning limited by allowedTopologies, ReadWriteOncePod conflicts and CSI attach limits, with
the simulated cluster playing the PV controller's part between pods."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from kubesched.cli.main import cli
from kubesched.cluster.simulated import Simulation
from kubesched.cluster.snapshot import snapshot_from_objects
from kubesched.framework.cycle_state import CycleState
from kubesched.objects.pod import parse_pod
from kubesched.plugins.registry import in_tree_registry

from ..helpers import config, framework, node, parse
from .test_volume_objects import StorageCluster, capacity, claim_pod, csi_driver, csi_node, pv, pvc, storage_class

ZONE = "topology.kubernetes.io/zone"
EBS = "ebs.csi.example.com"
NO_PREEMPTION = config({"plugins": {"postFilter": {"disabled": [{"name": "*"}]}}})  # messages end at the filters


def simulate(*objects):
    registry = in_tree_registry()
    kinds = frozenset(k for _, k in registry.object_kinds())
    snapshot = snapshot_from_objects([("test", o) for o in objects], plugin_kinds=kinds)
    sim = Simulation(snapshot, parse(NO_PREEMPTION), registry, tie_break="name")
    return sim, sim.run()


def placed(result):
    return dict(result.placements)


def stored(sim, kind, name, namespace=""):
    version = "v1"
    plural = {"PersistentVolume": "persistentvolumes", "PersistentVolumeClaim": "persistentvolumeclaims"}[kind]
    return sim.scheduler.hub.object_stores.get_or_create(version, kind, plural).get(namespace, name)


def statefulset(name, replicas, cls, request="10Gi"):
    pods = [claim_pod(f"{name}-{i}", f"data-{name}-{i}", cpu="100m") for i in range(replicas)]
    claims = [pvc(f"data-{name}-{i}", cls=cls, request=request) for i in range(replicas)]
    return pods + claims


def test_statefulset_claims_follow_their_local_pvs_and_stay_bound_for_later_pods():
    nodes = [node(f"n{i}") for i in range(1, 4)]
    pvs = [pv("pv-n3", cls="local", hosts=["n3"]), pv("pv-n2", cls="local", hosts=["n2"])]
    sim, result = simulate(*nodes, storage_class("local"), *pvs, *statefulset("db", 3, "local"),
                           claim_pod("db-reader", "data-db-0", cpu="100m"))
    where = placed(result)
    assert sorted([where["default/db-0"], where["default/db-1"]]) == ["n2", "n3"]
    assert "default/db-2" not in where  # two local PVs for three replicas
    assert where["default/db-reader"] == where["default/db-0"]  # the claim is bound now: its PV's node
    claim = stored(sim, "PersistentVolumeClaim", "data-db-0", "default")
    assert claim["spec"]["volumeName"] in ("pv-n2", "pv-n3") and claim["status"]["phase"] == "Bound"
    assert stored(sim, "PersistentVolume", claim["spec"]["volumeName"])["spec"]["claimRef"]["name"] == "data-db-0"
    failed = result.outcomes["default/db-2"].message
    assert failed == "0/3 nodes are available: 3 node(s) didn't find available persistent volumes to bind."


def test_a_zonal_pv_keeps_its_pod_in_the_zone():
    nodes = [node("a1", zone="a"), node("b1", zone="b"), node("b2", zone="b")]
    zonal = pv("pv-b", csi=(EBS, "vol-b"), labels={ZONE: "b"}, claim=("default", "data", "uid-default-data"), phase="Bound")
    _, result = simulate(*nodes, zonal, pvc("data", volume_name="pv-b", bound=True), claim_pod("app", "data", cpu="100m"))
    assert placed(result)["default/app"] == "b1"


def test_wait_for_first_consumer_provisioning_honours_allowed_topologies_and_pins_the_new_pv():
    nodes = [node("a1", zone="a"), node("b1", zone="b")]
    cls = storage_class("zonal", provisioner=EBS, allowed={ZONE: ["b"]})
    csi = [csi_node("a1", {EBS: (None, [ZONE])}), csi_node("b1", {EBS: (None, [ZONE])})]
    sim, result = simulate(*nodes, cls, *csi, *statefulset("web", 2, "zonal"))
    assert placed(result) == {"default/web-0": "b1", "default/web-1": "b1"}
    claim = stored(sim, "PersistentVolumeClaim", "data-web-0", "default")
    assert claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == "b1"
    new_pv = stored(sim, "PersistentVolume", claim["spec"]["volumeName"])
    assert new_pv["metadata"]["name"] == "pvc-uid-default-data-web-0"
    assert new_pv["spec"]["csi"] == {"driver": EBS, "volumeHandle": new_pv["metadata"]["name"]}
    assert new_pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"] == [
        {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["b"]}]}]


def test_storage_capacity_steers_provisioning():
    nodes = [node("n1"), node("n2")]
    objects = [storage_class("dyn", provisioner=EBS), csi_driver(EBS, storage_capacity=True),
               capacity("c1", "dyn", "1Gi", hostname="n1"), capacity("c2", "dyn", "100Gi", hostname="n2")]
    _, result = simulate(*nodes, *objects, *statefulset("big", 1, "dyn"))
    assert placed(result) == {"default/big-0": "n2"}


def test_a_read_write_once_pod_claim_admits_one_pod():
    objects = [node("n1"), node("n2"), storage_class("dyn", provisioner=EBS),
               pvc("solo", cls="dyn", modes=["ReadWriteOncePod"]),
               claim_pod("first", "solo", cpu="100m"), claim_pod("second", "solo", cpu="100m")]
    _, result = simulate(*objects)
    assert placed(result) == {"default/first": "n1"}
    assert result.outcomes["default/second"].message == (
        "0/2 nodes are available: 2 node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
        "already in-use by another pod.")


def test_csi_attach_limits_cap_the_volumes_per_node():
    nodes = [node("n1"), node("n2")]
    csi = [csi_node("n1", {EBS: (1, [])}), csi_node("n2", {EBS: (1, [])})]
    _, result = simulate(*nodes, *csi, storage_class("dyn", provisioner=EBS), *statefulset("q", 3, "dyn"))
    assert sorted(placed(result).values()) == ["n1", "n2"]
    assert result.outcomes["default/q-2"].message == "0/2 nodes are available: 2 node(s) exceed max volume count."


def test_a_bad_storage_object_is_one_line_and_exit_2(tmp_path: Path):
    items = [node("n1"), {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}},
             {**pv("pv"), "spec": {"accessModes": ["ReadWriteOnce"]}}, pv("pv2", modes=["Sometimes"]),
             pvc("data", namespace="ghost")]
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    result = CliRunner().invoke(cli, ["simulate", str(path)])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert any("PersistentVolume pv spec.capacity.storage: is required" in line for line in lines)
    assert any("PersistentVolume pv2 spec.accessModes[0]: unknown access mode 'Sometimes'" in line for line in lines)
    assert any("PersistentVolumeClaim ghost/data metadata.namespace: namespace 'ghost' does not exist" in line for line in lines)


def test_a_pod_without_volumes_leaves_no_per_node_filter_to_run():
    """The volume plugins Skip at PreFilter, so the search stays in batch form (SchedulingBasic's cost)."""
    c = StorageCluster([node("n1", zone="a")])
    c.add(pv("pv-a", labels={ZONE: "a"}), pvc("data", volume_name="pv-a", bound=True))
    fwk = framework(c)
    plain, state = parse_pod(claim_pod("plain")), CycleState()
    fwk.run_pre_filter(state, plain, c.snapshot)
    assert not fwk.has_node_filters(state)
    zonal, state = parse_pod(claim_pod("zonal", "data")), CycleState()
    fwk.run_pre_filter(state, zonal, c.snapshot)
    assert fwk.has_node_filters(state)  # VolumeZone filters this one node by node
