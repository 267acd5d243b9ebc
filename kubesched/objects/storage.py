"""Storage objects as the volume plugins read them: PersistentVolumes, claims, classes and CSI objects.

Each is parsed once from its document (the raw document is kept: the simulated PV
controller writes updated copies of it). ``validate_storage_object`` is the check a
snapshot runs on each of them, so a bad object is one clear line at load time
rather than a surprise mid-simulation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .errors import ObjectError
from .quantity import QuantityError, value
from .selectors import LabelSelector, NodeSelector, parse_label_selector, parse_node_selector

__all__ = [
    "ACCESS_MODES",
    "STORAGE_KINDS",
    "ClaimRef",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "StorageClass",
    "CSINodeInfo",
    "CSIDriverInfo",
    "CSIStorageCapacity",
    "parse_pv",
    "parse_pvc",
    "parse_storage_class",
    "parse_csi_node",
    "parse_csi_driver",
    "parse_capacity",
    "validate_storage_object",
    "BETA_STORAGE_CLASS_ANNOTATION",
    "WAIT_FOR_FIRST_CONSUMER",
]

ACCESS_MODES = frozenset({"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"})
BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"

# (apiVersion, kind, plural) of every storage kind the volume plugins read.
STORAGE_KINDS: tuple[tuple[str, str, str], ...] = (
    ("v1", "PersistentVolume", "persistentvolumes"),
    ("v1", "PersistentVolumeClaim", "persistentvolumeclaims"),
    ("storage.k8s.io/v1", "StorageClass", "storageclasses"),
    ("storage.k8s.io/v1", "CSINode", "csinodes"),
    ("storage.k8s.io/v1", "CSIDriver", "csidrivers"),
    ("storage.k8s.io/v1", "CSIStorageCapacity", "csistoragecapacities"),
)


def _map(raw: Any, path: str) -> Mapping[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ObjectError(path, "must be an object")
    return raw


def _str_map(raw: Any, path: str) -> dict[str, str]:
    return {str(k): str(v) for k, v in _map(raw, path).items()}


def _meta(raw: Mapping[str, Any]) -> tuple[Mapping[str, Any], str]:
    meta = _map(raw.get("metadata"), "metadata")
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise ObjectError("metadata.name", "is required")
    return meta, name


def _bytes(raw: Any, path: str) -> int:
    try:
        return value(raw)
    except (QuantityError, TypeError, ValueError):
        raise ObjectError(path, f"invalid quantity {raw!r}") from None


def _access_modes(raw: Any, path: str) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ObjectError(path, "must be a list")
    for i, mode in enumerate(raw):
        if mode not in ACCESS_MODES:
            raise ObjectError(f"{path}[{i}]", f"unknown access mode {mode!r}; want one of {', '.join(sorted(ACCESS_MODES))}")
    return tuple(raw)


@dataclass(slots=True, frozen=True)
class ClaimRef:
    namespace: str
    name: str
    uid: str


@dataclass(slots=True, frozen=True)
class PersistentVolume:
    """A PV. ``storage_class`` follows the beta annotation first, as upstream's ``GetPersistentVolumeClass``."""

    name: str
    labels: dict[str, str]
    annotations: dict[str, str]
    capacity: int
    access_modes: tuple[str, ...]
    volume_mode: str
    storage_class: str
    claim_ref: ClaimRef | None
    node_affinity: NodeSelector | None
    phase: str
    deleting: bool
    csi_driver: str  # spec.csi.driver ("" when not a CSI volume)
    csi_handle: str
    source: str  # the volume source's key: "csi", "local", "nfs", "gcePersistentDisk", ...
    raw: Mapping[str, Any]

    def node_affinity_matches(self, labels: Mapping[str, str]) -> bool:
        """``volume.CheckNodeAffinity``: only the node's labels are known to it (no name)."""
        return self.node_affinity is None or self.node_affinity.matches(labels, "")


@dataclass(slots=True, frozen=True)
class PersistentVolumeClaim:
    namespace: str
    name: str
    uid: str
    labels: dict[str, str]
    annotations: dict[str, str]
    access_modes: tuple[str, ...]
    request: int | None  # spec.resources.requests.storage in bytes
    storage_class: str  # "" when none
    volume_name: str
    volume_mode: str
    selector: LabelSelector | None
    phase: str
    deleting: bool
    controller_uid: str  # the controlling owner's uid ("" if none): generic ephemeral claims
    raw: Mapping[str, Any]

    @property
    def key(self) -> tuple[str, str]:
        return self.namespace, self.name


@dataclass(slots=True, frozen=True)
class StorageClass:
    name: str
    provisioner: str
    binding_mode: str  # "Immediate" when unset, as the API server defaults it
    allowed_topologies: NodeSelector | None  # None: no restriction
    reclaim_policy: str
    mount_options: tuple[str, ...]
    raw: Mapping[str, Any]


@dataclass(slots=True, frozen=True)
class CSINodeInfo:
    """A CSINode: per driver, its attach limit (``allocatable.count``) and topology keys."""

    name: str
    annotations: dict[str, str]
    limits: dict[str, int]
    topology_keys: dict[str, tuple[str, ...]]
    drivers: tuple[str, ...]


@dataclass(slots=True, frozen=True)
class CSIDriverInfo:
    name: str
    storage_capacity: bool


@dataclass(slots=True, frozen=True)
class CSIStorageCapacity:
    namespace: str
    name: str
    storage_class: str
    node_topology: LabelSelector | None  # None: reachable from no node
    limit: int | None  # maximumVolumeSize if set, else capacity; None: neither

    def node_has_access(self, labels: Mapping[str, str]) -> bool:
        return self.node_topology is not None and self.node_topology.matches(labels)


def _class_of(meta: Mapping[str, Any], spec: Mapping[str, Any]) -> str:
    annotations = _map(meta.get("annotations"), "metadata.annotations")
    beta = annotations.get(BETA_STORAGE_CLASS_ANNOTATION)
    if isinstance(beta, str):
        return beta
    cls = spec.get("storageClassName")
    return cls if isinstance(cls, str) else ""


def parse_pv(raw: Mapping[str, Any]) -> PersistentVolume:
    meta, name = _meta(raw)
    spec = _map(raw.get("spec"), "spec")
    status = _map(raw.get("status"), "status")
    capacity = _map(spec.get("capacity"), "spec.capacity")
    if "storage" not in capacity:
        raise ObjectError("spec.capacity.storage", "is required")
    claim = spec.get("claimRef")
    claim_ref = None
    if isinstance(claim, Mapping):
        claim_ref = ClaimRef(str(claim.get("namespace") or ""), str(claim.get("name") or ""), str(claim.get("uid") or ""))
    affinity = _map(spec.get("nodeAffinity"), "spec.nodeAffinity").get("required")
    csi = _map(spec.get("csi"), "spec.csi")
    source = next((k for k in spec if isinstance(spec[k], Mapping) and k not in (
        "capacity", "claimRef", "nodeAffinity", "volumeAttributesClassName")), "")
    return PersistentVolume(
        name=name,
        labels=_str_map(meta.get("labels"), "metadata.labels"),
        annotations=_str_map(meta.get("annotations"), "metadata.annotations"),
        capacity=_bytes(capacity["storage"], "spec.capacity.storage"),
        access_modes=_access_modes(spec.get("accessModes"), "spec.accessModes"),
        volume_mode=str(spec.get("volumeMode") or "Filesystem"),
        storage_class=_class_of(meta, spec),
        claim_ref=claim_ref,
        node_affinity=parse_node_selector(affinity, "spec.nodeAffinity.required") if affinity is not None else None,
        phase=str(status.get("phase") or "Pending"),
        deleting=bool(meta.get("deletionTimestamp")),
        csi_driver=str(csi.get("driver") or ""),
        csi_handle=str(csi.get("volumeHandle") or ""),
        source=source,
        raw=raw,
    )


def parse_pvc(raw: Mapping[str, Any]) -> PersistentVolumeClaim:
    meta, name = _meta(raw)
    spec = _map(raw.get("spec"), "spec")
    status = _map(raw.get("status"), "status")
    requests = _map(_map(spec.get("resources"), "spec.resources").get("requests"), "spec.resources.requests")
    request = _bytes(requests["storage"], "spec.resources.requests.storage") if "storage" in requests else None
    selector_raw = spec.get("selector")
    owners = meta.get("ownerReferences") or []
    controller = next((o for o in owners if isinstance(o, Mapping) and o.get("controller")), None)
    return PersistentVolumeClaim(
        namespace=str(meta.get("namespace") or "default"),
        name=name,
        uid=str(meta.get("uid") or ""),
        labels=_str_map(meta.get("labels"), "metadata.labels"),
        annotations=_str_map(meta.get("annotations"), "metadata.annotations"),
        access_modes=_access_modes(spec.get("accessModes"), "spec.accessModes"),
        request=request,
        storage_class=_class_of(meta, spec),
        volume_name=str(spec.get("volumeName") or ""),
        volume_mode=str(spec.get("volumeMode") or "Filesystem"),
        selector=parse_label_selector(selector_raw, "spec.selector") if selector_raw is not None else None,
        phase=str(status.get("phase") or "Pending"),
        deleting=bool(meta.get("deletionTimestamp")),
        controller_uid=str(controller.get("uid") or "") if controller else "",
        raw=raw,
    )


def _topology_selector(raw: Any, path: str) -> NodeSelector | None:
    """``allowedTopologies``: terms ORed, each ``matchLabelExpressions`` (key In values) ANDed."""
    if not raw:
        return None
    if not isinstance(raw, list):
        raise ObjectError(path, "must be a list")
    terms = []
    for i, term in enumerate(raw):
        exprs = _map(term, f"{path}[{i}]").get("matchLabelExpressions") or []
        terms.append({"matchExpressions": [
            {"key": e.get("key"), "operator": "In", "values": e.get("values") or []} for e in exprs if isinstance(e, Mapping)
        ]})
    return parse_node_selector({"nodeSelectorTerms": terms}, path)


def parse_storage_class(raw: Mapping[str, Any]) -> StorageClass:
    meta, name = _meta(raw)
    mode = raw.get("volumeBindingMode") or "Immediate"
    if mode not in ("Immediate", WAIT_FOR_FIRST_CONSUMER):
        raise ObjectError("volumeBindingMode", f"unknown binding mode {mode!r}; want Immediate or WaitForFirstConsumer")
    return StorageClass(
        name=name,
        provisioner=str(raw.get("provisioner") or ""),
        binding_mode=str(mode),
        allowed_topologies=_topology_selector(raw.get("allowedTopologies"), "allowedTopologies"),
        reclaim_policy=str(raw.get("reclaimPolicy") or "Delete"),
        mount_options=tuple(str(o) for o in raw.get("mountOptions") or ()),
        raw=raw,
    )


def parse_csi_node(raw: Mapping[str, Any]) -> CSINodeInfo:
    meta, name = _meta(raw)
    limits: dict[str, int] = {}
    keys: dict[str, tuple[str, ...]] = {}
    drivers = []
    for i, d in enumerate(_map(raw.get("spec"), "spec").get("drivers") or []):
        d = _map(d, f"spec.drivers[{i}]")
        driver = str(d.get("name") or "")
        drivers.append(driver)
        count = _map(d.get("allocatable"), f"spec.drivers[{i}].allocatable").get("count")
        if count is not None:
            if not isinstance(count, int) or isinstance(count, bool) or count < 0:
                raise ObjectError(f"spec.drivers[{i}].allocatable.count", "must be a non-negative integer")
            limits[driver] = count
        keys[driver] = tuple(str(k) for k in d.get("topologyKeys") or ())
    return CSINodeInfo(name, _str_map(meta.get("annotations"), "metadata.annotations"), limits, keys, tuple(drivers))


def parse_csi_driver(raw: Mapping[str, Any]) -> CSIDriverInfo:
    _, name = _meta(raw)
    return CSIDriverInfo(name, bool(_map(raw.get("spec"), "spec").get("storageCapacity")))


def parse_capacity(raw: Mapping[str, Any]) -> CSIStorageCapacity:
    meta, name = _meta(raw)
    topology = raw.get("nodeTopology")
    limit_raw = raw.get("maximumVolumeSize")
    path = "maximumVolumeSize"
    if limit_raw is None:
        limit_raw, path = raw.get("capacity"), "capacity"
    return CSIStorageCapacity(
        namespace=str(meta.get("namespace") or ""),
        name=name,
        storage_class=str(raw.get("storageClassName") or ""),
        node_topology=parse_label_selector(topology, "nodeTopology") if topology is not None else None,
        limit=_bytes(limit_raw, path) if limit_raw is not None else None,
    )


_PARSERS = {
    "PersistentVolume": parse_pv,
    "PersistentVolumeClaim": parse_pvc,
    "StorageClass": parse_storage_class,
    "CSINode": parse_csi_node,
    "CSIDriver": parse_csi_driver,
    "CSIStorageCapacity": parse_capacity,
}


def validate_storage_object(kind: str, raw: Mapping[str, Any]) -> None:
    """Raise ``ObjectError`` (field, message) if a storage object cannot be read; other kinds pass."""
    parser = _PARSERS.get(kind)
    if parser is not None:
        parser(raw)

