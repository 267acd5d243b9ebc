"""NodeVolumeLimits (upstream's ``nodevolumelimits.CSILimits``).

A node's CSINode says how many volumes of each CSI driver it can attach
(``spec.drivers[].allocatable.count``). Filter counts the distinct volumes
(``<driver>/<handle>``) of the pods already on the node, adds the pod's new ones, and
fails the node (Unschedulable) if some driver would go over its limit. A claim's
driver comes from its bound PV (``spec.csi``, or a migrated in-tree source), or, for
a claim not bound yet, from its StorageClass's provisioner, with a handle unique to
the claim. Inline in-tree volumes count once their plugin is migrated on the node.
No VolumeAttachments are read: the pods on the node are what is attached.
"""

from __future__ import annotations

from collections.abc import Mapping

from ...framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Handle,
    PreFilterResult,
    QueueingHint,
    SnapshotView,
    Status,
)
from ...objects import NodeInfo, PodInfo
from ...objects.storage import CSINodeInfo, PersistentVolumeClaim
from ..volumebinding.index import StorageIndex, storage_index
from .migration import CSI_DRIVER_OF_PLUGIN, PLUGIN_OF_SOURCE, inline_csi_volume, migration_on

__all__ = ["NAME", "ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED", "CSILimits", "new"]

NAME = "NodeVolumeLimits"
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"
EXCEEDED = Status(Code.UNSCHEDULABLE, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
SKIP = Status(Code.SKIP)
# Upstream draws a random prefix per scheduler so that made-up handles never equal real ones.
SC_HANDLE_PREFIX = "kubesched-unbound"


class _MissingClaim(Exception):
    pass


class CSILimits:
    name = NAME

    def __init__(self, index: StorageIndex) -> None:
        self.index = index

    def pre_filter(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView) -> tuple[PreFilterResult | None, Status | None]:
        for volume in pod.volumes:
            if volume.claim or (volume.disk is not None and volume.disk.kind in PLUGIN_OF_SOURCE):
                return None, None
        return None, SKIP

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if not pod.volumes:
            return None
        csi_node = self.index.csi_node(node.node.name)
        new_volumes: dict[str, str] = {}
        try:
            self._attachable(pod, csi_node, True, new_volumes)
        except _MissingClaim as err:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(err))
        if not new_volumes:
            return None
        limits = csi_node.limits if csi_node is not None else {}
        if not limits:
            return None
        attached: dict[str, str] = {}
        for other in node.pods.values():
            if other.volumes:
                self._attachable(other, csi_node, False, attached)
        attached_count: dict[str, int] = {}
        for unique, driver in attached.items():
            new_volumes.pop(unique, None)  # a volume shared with a pod on the node is attached once
            attached_count[driver] = attached_count.get(driver, 0) + 1
        new_count: dict[str, int] = {}
        for driver in new_volumes.values():
            new_count[driver] = new_count.get(driver, 0) + 1
        for driver, count in new_count.items():
            limit = limits.get(driver)
            if limit is not None and attached_count.get(driver, 0) + count > limit:
                return EXCEEDED
        return None

    def _attachable(self, pod: PodInfo, csi_node: CSINodeInfo | None, new_pod: bool, out: dict[str, str]) -> None:
        """Add the pod's attachable volumes to ``out`` (unique name -> driver)."""
        for volume in pod.volumes:
            if not volume.claim:
                disk = volume.disk
                if disk is not None and migration_on(csi_node, PLUGIN_OF_SOURCE.get(disk.kind, "")):
                    translated = inline_csi_volume(disk)
                    if translated is not None:
                        out[f"{translated[0]}/{translated[1]}"] = translated[0]
                continue
            pvc = self.index.pvc(pod.namespace, volume.claim)
            if pvc is None:
                if new_pod:
                    raise _MissingClaim(
                        f'looking up PVC {pod.namespace}/{volume.claim}: persistentvolumeclaim "{volume.claim}" not found')
                continue
            if volume.ephemeral and pvc.controller_uid != pod.uid:
                if new_pod:
                    raise _MissingClaim(
                        f"PVC {pod.namespace}/{pvc.name} was not created for pod {pod.namespace}/{pod.name} (pod is not owner)")
                continue
            driver, handle = self._driver_of(csi_node, pvc)
            if driver and handle:
                out[f"{driver}/{handle}"] = driver

    def _driver_of(self, csi_node: CSINodeInfo | None, pvc: PersistentVolumeClaim) -> tuple[str, str]:
        if pvc.volume_name:
            pv = self.index.pv(pvc.volume_name)
            if pv is not None:
                if pv.csi_driver:
                    return pv.csi_driver, pv.csi_handle
                plugin = PLUGIN_OF_SOURCE.get(pv.source, "")
                if not plugin or not migration_on(csi_node, plugin):
                    return "", ""
                source = pv.raw.get("spec", {}).get(pv.source, {})
                ident = next((str(source[k]) for k in ("pdName", "volumeID", "diskURI", "volumePath", "shareName")
                              if isinstance(source, Mapping) and k in source), "")
                return CSI_DRIVER_OF_PLUGIN[plugin], ident
        return self._driver_from_class(csi_node, pvc)

    def _driver_from_class(self, csi_node: CSINodeInfo | None, pvc: PersistentVolumeClaim) -> tuple[str, str]:
        if not pvc.storage_class:
            return "", ""  # no class: an Immediate claim, bound before scheduling
        cls = self.index.storage_class(pvc.storage_class)
        if cls is None:
            return "", ""
        driver = cls.provisioner
        if driver in CSI_DRIVER_OF_PLUGIN:
            if not migration_on(csi_node, driver):
                return "", ""
            driver = CSI_DRIVER_OF_PLUGIN[driver]
        return driver, f"{SC_HANDLE_PREFIX}-{pvc.namespace}/{pvc.name}"

    # -- queueing hints -------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(self.index.resource("CSINode"), ActionType.ADD), None),
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE), self._hint_pod_deleted),
            ClusterEventWithHint(ClusterEvent(self.index.resource("PersistentVolumeClaim"), ActionType.ADD), self._hint_claim_added),
        ]

    def _hint_pod_deleted(self, pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
        if not isinstance(old, PodInfo) or not old.volumes or not old.node_name:
            return QueueingHint.SKIP
        for volume in old.volumes:
            if volume.claim or (volume.disk is not None and volume.disk.kind in PLUGIN_OF_SOURCE):
                return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def _hint_claim_added(self, pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
        if not isinstance(new, Mapping):
            return QueueingHint.QUEUE
        meta = new.get("metadata") or {}
        if not isinstance(meta, Mapping) or (meta.get("namespace") or "default") != pod.namespace:
            return QueueingHint.SKIP
        name = meta.get("name")
        return QueueingHint.QUEUE if any(v.claim == name for v in pod.volumes) else QueueingHint.SKIP


def new(args: None, handle: Handle) -> CSILimits:
    return CSILimits(storage_index(handle))
