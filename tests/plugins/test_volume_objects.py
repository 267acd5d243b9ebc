"""Storage objects as kubesched reads them, and the builders the volume plugin tests share.

The builders make API-server-shaped documents (PVs, claims, classes, CSI objects, pods
with volumes); ``StorageCluster`` is the tests' cluster with the objects in its stores,
as a snapshot or an informer would put them there.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

import pytest

from kubesched.objects.errors import ObjectError
from kubesched.objects.pod import parse_pod
from kubesched.objects.storage import STORAGE_KINDS, parse_capacity, parse_pv, parse_pvc, parse_storage_class, validate_storage_object
from kubesched.objects.volumes import InTreeDisk, PodVolume

from ..helpers import Cluster, pod

PLURALS = {kind: (version, plural) for version, kind, plural in STORAGE_KINDS}


# -- builders --------------------------------------------------------------------------------
def pv(name: str, *, capacity: str = "10Gi", modes: Iterable[str] = ("ReadWriteOnce",), cls: str = "",
       phase: str = "Available", claim: tuple[str, str, str] | None = None, hosts: Iterable[str] | None = None,
       labels: Mapping[str, str] | None = None, csi: tuple[str, str] | None = None, volume_mode: str = "Filesystem",
       deleting: bool = False) -> dict:
    """A PV; ``hosts`` pins it by node affinity to those hostnames; ``claim`` is (namespace, name, uid)."""
    spec: dict[str, Any] = {"accessModes": list(modes), "capacity": {"storage": capacity}, "storageClassName": cls,
                            "volumeMode": volume_mode}
    if csi is not None:
        spec["csi"] = {"driver": csi[0], "volumeHandle": csi[1]}
    else:
        spec["local"] = {"path": f"/mnt/{name}"}
    if claim is not None:
        spec["claimRef"] = {"namespace": claim[0], "name": claim[1], "uid": claim[2]}
    if hosts is not None:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": list(hosts)}]}]}}
    meta: dict[str, Any] = {"name": name}
    if labels:
        meta["labels"] = dict(labels)
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta, "spec": spec, "status": {"phase": phase}}


def pvc(name: str, *, namespace: str = "default", request: str | None = "10Gi", modes: Iterable[str] = ("ReadWriteOnce",),
        cls: str | None = None, volume_name: str = "", bound: bool = False, deleting: bool = False, phase: str | None = None,
        uid: str | None = None, selector: Mapping[str, Any] | None = None, annotations: Mapping[str, str] | None = None) -> dict:
    """A claim; ``bound`` marks the binding complete (``volume_name`` must be set)."""
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": uid or f"uid-{namespace}-{name}"}
    notes = dict(annotations or {})
    if bound:
        notes["pv.kubernetes.io/bind-completed"] = "yes"
    if notes:
        meta["annotations"] = notes
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    spec: dict[str, Any] = {"accessModes": list(modes), "volumeMode": "Filesystem"}
    if request is not None:
        spec["resources"] = {"requests": {"storage": request}}
    if cls is not None:
        spec["storageClassName"] = cls
    if volume_name:
        spec["volumeName"] = volume_name
    if selector is not None:
        spec["selector"] = dict(selector)
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec,
            "status": {"phase": phase or ("Bound" if bound else "Pending")}}


def storage_class(name: str, *, provisioner: str = "kubernetes.io/no-provisioner", mode: str | None = "WaitForFirstConsumer",
                  allowed: Mapping[str, Iterable[str]] | None = None) -> dict:
    out: dict[str, Any] = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
                           "provisioner": provisioner, "reclaimPolicy": "Delete"}
    if mode is not None:
        out["volumeBindingMode"] = mode
    if allowed is not None:
        out["allowedTopologies"] = [{"matchLabelExpressions": [{"key": k, "values": list(v)} for k, v in allowed.items()]}]
    return out


def csi_node(name: str, drivers: Mapping[str, tuple[int | None, Iterable[str]]], annotations: Mapping[str, str] | None = None) -> dict:
    """A CSINode: driver -> (allocatable count or None, topology keys)."""
    specs = []
    for driver, (count, keys) in drivers.items():
        entry: dict[str, Any] = {"name": driver, "nodeID": name, "topologyKeys": list(keys)}
        if count is not None:
            entry["allocatable"] = {"count": count}
        specs.append(entry)
    meta: dict[str, Any] = {"name": name}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": meta, "spec": {"drivers": specs}}


def csi_driver(name: str, *, storage_capacity: bool = False) -> dict:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": name},
            "spec": {"storageCapacity": storage_capacity}}


def capacity(name: str, cls: str, size: str, *, hostname: str | None = None, maximum: str | None = None) -> dict:
    out: dict[str, Any] = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
                           "metadata": {"name": name, "namespace": "kube-system"}, "storageClassName": cls, "capacity": size}
    if hostname is not None:
        out["nodeTopology"] = {"matchLabels": {"kubernetes.io/hostname": hostname}}
    if maximum is not None:
        out["maximumVolumeSize"] = maximum
    return out


def claim_pod(name: str, *claims: str, volumes: Iterable[Mapping[str, Any]] = (), **kwargs: Any) -> dict:
    """A pod mounting the named claims (and any other ``volumes``)."""
    out = pod(name, **kwargs)
    out["spec"]["volumes"] = [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)]
    out["spec"]["volumes"] += [dict(v) for v in volumes]
    return out


def gce_disk(pd_name: str, read_only: bool = False) -> dict:
    return {"name": f"pd-{pd_name}", "gcePersistentDisk": {"pdName": pd_name, "readOnly": read_only}}


class StorageCluster(Cluster):
    """A test cluster whose object stores hold storage objects."""

    def add(self, *objects: Mapping[str, Any]) -> None:
        for obj in objects:
            version, plural = PLURALS[str(obj["kind"])]
            self.handle.object_store(version, str(obj["kind"]), plural).upsert(obj)  # type: ignore[attr-defined]


# -- parsing -----------------------------------------------------------------------------------
def test_pod_volumes_keep_claims_ephemeral_claims_and_in_tree_disks():
    raw = claim_pod("web-0", "data", volumes=[
        gce_disk("disk-1", read_only=True),
        {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
        {"name": "cfg", "configMap": {"name": "cfg"}},
    ])
    assert parse_pod(raw).volumes == (
        PodVolume("v0", claim="data"),
        PodVolume("pd-disk-1", disk=InTreeDisk("gcePersistentDisk", "disk-1", True)),
        PodVolume("scratch", claim="web-0-scratch", ephemeral=True),
        PodVolume("cfg"),
    )


def test_a_pod_without_volumes_has_an_empty_tuple():
    assert parse_pod(pod("p")).volumes == ()


def test_a_pv_reads_capacity_class_claim_and_affinity():
    parsed = parse_pv(pv("pv-1", capacity="1Gi", cls="fast", claim=("ns", "c", "u1"), hosts=["n1"]))
    assert (parsed.capacity, parsed.storage_class, parsed.claim_ref.name, parsed.source) == (1 << 30, "fast", "c", "local")
    assert parsed.node_affinity_matches({"kubernetes.io/hostname": "n1"})
    assert not parsed.node_affinity_matches({"kubernetes.io/hostname": "n2"})


def test_the_beta_class_annotation_wins_over_the_field():
    raw = pvc("c", cls="field")
    raw["metadata"]["annotations"] = {"volume.beta.kubernetes.io/storage-class": "annotated"}
    assert parse_pvc(raw).storage_class == "annotated"


def test_a_class_without_binding_mode_is_immediate():
    assert parse_storage_class(storage_class("sc", mode=None)).binding_mode == "Immediate"


def test_a_capacity_prefers_maximum_volume_size():
    assert parse_capacity(capacity("c", "sc", "100Gi", hostname="n1", maximum="5Gi")).limit == 5 << 30
    assert parse_capacity(capacity("c", "sc", "100Gi")).node_topology is None


@pytest.mark.parametrize(("kind", "raw", "field", "message"), [
    ("PersistentVolume", {**pv("x"), "spec": {"accessModes": ["ReadWriteOnce"]}}, "spec.capacity.storage", "is required"),
    ("PersistentVolume", pv("x", modes=["ReadWriteSometimes"]), "spec.accessModes[0]", "unknown access mode 'ReadWriteSometimes'"),
    ("PersistentVolumeClaim", pvc("x", request="lots"), "spec.resources.requests.storage", "invalid quantity 'lots'"),
    ("StorageClass", storage_class("x", mode="Eventually"), "volumeBindingMode", "unknown binding mode 'Eventually'"),
])
def test_a_bad_storage_object_names_its_field(kind, raw, field, message):
    with pytest.raises(ObjectError) as err:
        validate_storage_object(kind, raw)
    assert err.value.field == field
    assert err.value.message.startswith(message)
