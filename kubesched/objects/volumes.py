"""A pod's ``spec.volumes``, reduced to what the volume plugins read.

Bound pods are kept without their raw document, yet VolumeRestrictions and
NodeVolumeLimits look at the volumes of the pods already on a node (disk conflicts,
ReadWriteOncePod claims in use, attach counts), so the volumes are parsed with the
pod, once. Only the claim-backed sources and the in-tree types some plugin checks
are kept; every other source is just a name. A pod parsed to be scheduled also keeps
each source's text, which OpportunisticBatching signs (``PodVolume.source``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from .errors import ObjectError

__all__ = ["PodVolume", "InTreeDisk", "parse_pod_volumes", "ephemeral_claim_name", "IN_TREE_DISK_KINDS",
           "UNSIGNED_SOURCE"]

# In-tree sources that VolumeRestrictions checks for sharing conflicts, or that
# NodeVolumeLimits counts once migrated to CSI.
IN_TREE_DISK_KINDS = (
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "iscsi",
    "rbd",
    "azureDisk",
    "cinder",
    "azureFile",
    "vsphereVolume",
    "portworxVolume",
)


@dataclass(slots=True, frozen=True)
class InTreeDisk:
    """An in-tree volume source: its kind (``gcePersistentDisk``, ...) and identity.

    ``ident`` is what makes two volumes the same disk (the PD name, the EBS volume
    ID, the iSCSI IQN, the RBD pool/image); ``monitors`` are an RBD image's Ceph
    monitors (two RBD volumes are one image if they share one).
    """

    kind: str
    ident: str
    read_only: bool = False
    monitors: frozenset[str] = frozenset()


@dataclass(slots=True, frozen=True)
class PodVolume:
    """One entry of ``spec.volumes``.

    ``claim`` is the PersistentVolumeClaim's name for ``persistentVolumeClaim`` and
    generic ``ephemeral`` volumes (for those, ``<pod>-<volume>``); ``disk`` the in-tree
    source, if any.
    """

    name: str
    claim: str = ""
    ephemeral: bool = False
    disk: InTreeDisk | None = None
    # The entry without its name as JSON text, keys sorted: what upstream's VolumesSigner
    # signs (it marshals the VolumeSource). UNSIGNED_SOURCE for configMap and secret
    # volumes, which it leaves out; None when not kept (bound pods parsed compactly). Not
    # compared: the pending pod and its bound copy (parsed without it) are the same volumes.
    source: str | None = field(default=None, compare=False)


# A configMap or secret volume: upstream's signer skips it (its per-pod names would make
# every signature unique, and no plugin reads it).
UNSIGNED_SOURCE = ""
_SOURCES: dict[str, str] = {}  # one shared copy of each source text (pods of a template repeat them)


def _without_nulls(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _source_text(vol: Mapping[str, Any]) -> str:
    if vol.get("configMap") is not None or vol.get("secret") is not None:
        return UNSIGNED_SOURCE
    source = {k: v for k, v in vol.items() if k != "name"}
    try:
        text = orjson.dumps(source, option=orjson.OPT_SORT_KEYS).decode()
        if ":null" in text:  # a null is an absent field to Go's decoder, and so to its encoder
            text = orjson.dumps(_without_nulls(source), option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:  # keys that are not strings, values JSON cannot hold (hand-written YAML)
        text = repr(sorted(source.items(), key=repr))
    found = _SOURCES.get(text)
    if found is None:
        if len(_SOURCES) >= 1 << 14:
            _SOURCES.clear()
        found = _SOURCES[text] = text
    return found


def ephemeral_claim_name(pod_name: str, volume_name: str) -> str:
    """The claim a generic ephemeral volume uses (upstream's ``ephemeral.VolumeClaimName``)."""
    return f"{pod_name}-{volume_name}"


def _disk(kind: str, src: Mapping[str, Any]) -> InTreeDisk:
    read_only = bool(src.get("readOnly"))
    if kind == "gcePersistentDisk":
        return InTreeDisk(kind, str(src.get("pdName", "")), read_only)
    if kind == "awsElasticBlockStore":
        return InTreeDisk(kind, str(src.get("volumeID", "")), read_only)
    if kind == "iscsi":
        return InTreeDisk(kind, str(src.get("iqn", "")), read_only)
    if kind == "rbd":
        monitors = src.get("monitors") or []
        pool = src.get("pool") or "rbd"
        return InTreeDisk(kind, f"{pool}/{src.get('image', '')}", read_only,
                          frozenset(str(m) for m in monitors if isinstance(m, str)))
    if kind == "azureDisk":
        return InTreeDisk(kind, str(src.get("diskURI", "")), read_only)
    if kind == "cinder":
        return InTreeDisk(kind, str(src.get("volumeID", "")), read_only)
    if kind == "azureFile":
        return InTreeDisk(kind, str(src.get("shareName", "")), read_only)
    if kind == "vsphereVolume":
        return InTreeDisk(kind, str(src.get("volumePath", "")), read_only)
    return InTreeDisk(kind, str(src.get("volumeID", "")), read_only)


# The volume sources some plugin reads; a volume with none of them is just its name.
_READ_KEYS = frozenset({"persistentVolumeClaim", "ephemeral", *IN_TREE_DISK_KINDS})


def parse_pod_volumes(raw: Any, pod_name: str, path: str = "spec.volumes", sources: bool = True) -> tuple[PodVolume, ...]:
    """``spec.volumes`` of a pod named ``pod_name``; raises ``ObjectError`` on a malformed entry.
    ``sources``: keep each volume's source text (for signing; bound pods need none)."""
    if not raw:
        return ()
    if not isinstance(raw, list):
        raise ObjectError(path, "must be a list")
    out: list[PodVolume] = []
    for i, vol in enumerate(raw):
        where = f"{path}[{i}]"
        if not isinstance(vol, Mapping):
            raise ObjectError(where, "must be a volume")
        name = vol.get("name")
        if not isinstance(name, str) or not name:
            raise ObjectError(f"{where}.name", "is required")
        source = _source_text(vol) if sources else None
        if not _READ_KEYS.intersection(vol):  # a projected, configMap, secret, emptyDir ... volume
            out.append(PodVolume(name, source=source))
            continue
        pvc = vol.get("persistentVolumeClaim")
        if pvc is not None:
            if not isinstance(pvc, Mapping) or not isinstance(pvc.get("claimName"), str):
                raise ObjectError(f"{where}.persistentVolumeClaim.claimName", "is required")
            out.append(PodVolume(name, claim=pvc["claimName"], source=source))
            continue
        if vol.get("ephemeral") is not None:
            out.append(PodVolume(name, claim=ephemeral_claim_name(pod_name, name), ephemeral=True, source=source))
            continue
        disk = None
        for kind in IN_TREE_DISK_KINDS:
            src = vol.get(kind)
            if isinstance(src, Mapping):
                disk = _disk(kind, src)
                break
        out.append(PodVolume(name, disk=disk, source=source))
    return tuple(out)
