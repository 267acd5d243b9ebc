"""The PV controller's and the external provisioner's part, for clusters that have none (``simulate``).

What VolumeBinding's PreBind hands to the API server is finished here at once, as the
controllers would: a PV matched to a claim is bound to it (``claimRef``, phase Bound)
and the claim to the PV (``volumeName``, bind-completed, Bound status); a claim to
provision gets a new CSI PV named ``pvc-<claim uid>``, sized to its request, pinned by
node affinity to the chosen node's topology as its CSINode publishes it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from ...framework.handle import JSONObject
from ...objects.node import Node
from ...objects.storage import CSINodeInfo, PersistentVolume, PersistentVolumeClaim, StorageClass
from .binder import ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER, ANN_SELECTED_NODE, PodVolumes

__all__ = ["StorageWriter", "completed_bindings", "ANN_PROVISIONED_BY", "ANN_STORAGE_PROVISIONER"]

ANN_PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"


@runtime_checkable
class StorageWriter(Protocol):
    """A cluster client that stores PVs and claims directly and plays the PV controller's part."""

    def write_storage_objects(self, objects: list[JSONObject]) -> None: ...


Doc = dict[str, object]


def _map(value: object) -> Doc:
    """A copy of a JSON object (an empty one for anything else)."""
    return {str(k): v for k, v in value.items()} if isinstance(value, Mapping) else {}


def _claim_ref(pvc: PersistentVolumeClaim) -> dict[str, str]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": pvc.namespace, "name": pvc.name, "uid": pvc.uid}


def _bound_claim(pvc: PersistentVolumeClaim, pv_name: str, access_modes: list[object], capacity: object,
                 extra_annotations: dict[str, str]) -> Doc:
    doc: Doc = copy.deepcopy(dict(pvc.raw))
    meta = _map(doc.get("metadata"))
    meta["annotations"] = {**_map(meta.get("annotations")), **extra_annotations,
                           ANN_BIND_COMPLETED: "yes", ANN_BOUND_BY_CONTROLLER: "yes"}
    doc["metadata"] = meta
    spec = _map(doc.get("spec"))
    spec["volumeName"] = pv_name
    doc["spec"] = spec
    doc["status"] = {**_map(doc.get("status")), "phase": "Bound", "accessModes": access_modes,
                     "capacity": {"storage": capacity}}
    return doc


def _static(pv: PersistentVolume, pvc: PersistentVolumeClaim) -> list[Doc]:
    doc: Doc = copy.deepcopy(dict(pv.raw))
    meta = _map(doc.get("metadata"))
    if pv.annotations:
        meta["annotations"] = dict(pv.annotations)
    doc["metadata"] = meta
    spec = _map(doc.get("spec"))
    spec["claimRef"] = _claim_ref(pvc)
    doc["spec"] = spec
    doc["status"] = {**_map(doc.get("status")), "phase": "Bound"}
    modes = spec.get("accessModes")
    capacity = _map(spec.get("capacity")).get("storage")
    return [doc, _bound_claim(pvc, pv.name, list(modes) if isinstance(modes, list) else [], capacity, {})]


def _topology(csi_node: CSINodeInfo | None, driver: str, node: Node) -> Doc | None:
    if csi_node is None or driver not in csi_node.drivers:
        return None
    expressions = [{"key": key, "operator": "In", "values": [node.labels[key]]}
                   for key in csi_node.topology_keys.get(driver, ()) if key in node.labels]
    if not expressions:
        return None
    return {"required": {"nodeSelectorTerms": [{"matchExpressions": expressions}]}}


def _provisioned(pvc: PersistentVolumeClaim, cls: StorageClass, node: Node, csi_node: CSINodeInfo | None) -> list[Doc]:
    name = f"pvc-{pvc.uid}"
    request = _map(_map(_map(pvc.raw.get("spec")).get("resources")).get("requests")).get("storage", "0")
    spec: Doc = {
        "accessModes": list(pvc.access_modes),
        "capacity": {"storage": request},
        "claimRef": _claim_ref(pvc),
        "csi": {"driver": cls.provisioner, "volumeHandle": name},
        "persistentVolumeReclaimPolicy": cls.reclaim_policy,
        "storageClassName": cls.name,
        "volumeMode": pvc.volume_mode,
    }
    if cls.mount_options:
        spec["mountOptions"] = list(cls.mount_options)
    affinity = _topology(csi_node, cls.provisioner, node)
    if affinity is not None:
        spec["nodeAffinity"] = affinity
    pv: Doc = {"apiVersion": "v1", "kind": "PersistentVolume",
          "metadata": {"name": name, "annotations": {ANN_PROVISIONED_BY: cls.provisioner}},
          "spec": spec, "status": {"phase": "Bound"}}
    claim = _bound_claim(pvc, name, list[object](pvc.access_modes), request, {
        ANN_SELECTED_NODE: node.name, ANN_STORAGE_PROVISIONER: cls.provisioner, ANN_BETA_STORAGE_PROVISIONER: cls.provisioner})
    return [pv, claim]


def completed_bindings(volumes: PodVolumes, node: Node, classes: dict[str, StorageClass],
                       csi_node: CSINodeInfo | None) -> list[Doc]:
    """The PVs and claims as the controllers would leave them once ``volumes`` (assumed for ``node``) are done."""
    out: list[Doc] = []
    for pv, pvc in volumes.static_bindings:
        out.extend(_static(pv, pvc))
    for pvc in volumes.provisions:
        cls = classes.get(pvc.storage_class)
        if cls is not None:
            out.extend(_provisioned(pvc, cls, node, csi_node))
    return out
