"""NodeVolumeLimits (upstream's ``nodevolumelimits.CSILimits``).

A node's CSINode says how many volumes of each CSI driver it can attach
(``spec.drivers[].allocatable.count``). Filter counts the distinct volumes
(``<driver>/<handle>``) of the pods already on the node, adds the pod's new ones, and
fails the node (Unschedulable) if some driver would go over its limit; in batch form,
from per-driver columns kept as pods are placed (``attached.AttachedVolumes``), in
per-node form (preemption's dry run) from the pods of the NodeInfo it is given; both
read a node and test the limit through the same helpers of ``attached``. A claim's
driver comes from its bound PV (``spec.csi``, or a migrated in-tree source), or, for
a claim not bound yet, from its StorageClass's provisioner, with a handle unique to
the claim. Inline in-tree volumes count once their plugin is migrated on the node.
No VolumeAttachments are read: the pods on the node are what is attached.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ...framework import (
    ActionType,
    BoolArray,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Handle,
    NodeVerdicts,
    PreFilterResult,
    QueueingHint,
    SnapshotView,
    StateKey,
    Status,
)
from ..helper import claim_hint
from ...framework.signing import UNSIGNED_NAMESPACE, SignFragment, sign_volumes
from ...objects import NodeInfo, PodInfo
from ...objects.storage import PersistentVolumeClaim
from ..volumebinding.index import StorageIndex, storage_index
from .attached import AttachedVolumes, Entry, counts_on, node_limits, over_limit
from .migration import CSI_DRIVER_OF_PLUGIN, IN_TREE_PLUGINS, PLUGIN_OF_SOURCE, inline_csi_volume

__all__ = ["NAME", "ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED", "CSILimits", "new"]

NAME = "NodeVolumeLimits"
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"
EXCEEDED = Status(Code.UNSCHEDULABLE, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
SKIP = Status(Code.SKIP)
# Upstream draws a random prefix per scheduler so that made-up handles never equal real ones.
SC_HANDLE_PREFIX = "kubesched-unbound"


class _MissingClaim(Exception):
    pass


@dataclass(slots=True)
class _State:
    by_driver: dict[str, list[tuple[str, str]]]  # driver -> the pod's (unique name, in-tree plugin or "")
    error: Status | None  # a claim of the pod cannot be looked up: every node fails with this


def _by_driver(entries: list[Entry]) -> dict[str, list[tuple[str, str]]]:
    """The pod's volumes per driver, each unique name once."""
    out: dict[str, dict[str, str]] = {}
    for plugin, unique, driver in entries:
        out.setdefault(driver, {})[unique] = plugin
    return {driver: list(found.items()) for driver, found in out.items()}


_STATE: StateKey[_State] = StateKey("PreFilter" + NAME)


class CSILimits:
    name = NAME

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """OpportunisticBatching: Filter reads the volumes and, for their claims, the
        namespace; upstream signs the volumes' sources only."""
        return sign_volumes(pod)

    upstream_unsigned_reads = (UNSIGNED_NAMESPACE,)

    def __init__(self, index: StorageIndex) -> None:
        self.index = index
        self.attached = AttachedVolumes(index, self.entries)

    def pre_filter(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView) -> tuple[PreFilterResult | None, Status | None]:
        if not pod.volumes or not any(v.claim or (v.disk is not None and v.disk.kind in PLUGIN_OF_SOURCE)
                                      for v in pod.volumes):
            return None, SKIP
        try:
            entries = self.entries(pod, new_pod=True)
        except _MissingClaim as err:
            state.write(_STATE, _State({}, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(err))))
            return None, None
        state.write(_STATE, _State(_by_driver(entries), None))
        return None, None

    def filter_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, candidates: BoolArray) -> NodeVerdicts:
        """For each driver of the pod's new volumes: the volumes the node does not have yet,
        plus those attached, against the node's limit, for all rows at once."""
        size = snapshot.table.size
        s = state.get(_STATE)
        if s is None:
            return NodeVerdicts.all_pass(size)
        if s.error is not None:
            return NodeVerdicts.from_mask(np.zeros(size, dtype=bool), s.error)
        attached = self.attached.current(snapshot)
        failed = np.zeros(size, dtype=bool)
        for driver, volumes in s.by_driver.items():
            limit = attached.limits.get(driver)
            if limit is None:
                continue  # no node limits this driver
            new = np.zeros(size, dtype=np.int64)
            for unique, plugin in volumes:
                counts = attached.migrated[plugin].astype(np.int64) if plugin else np.ones(size, dtype=np.int64)
                rows = attached.where.get(unique)
                if rows:
                    counts[list(rows)] = 0  # attached there already: counted once
                new += counts
            have = attached.counts.get(driver)
            failed |= over_limit(new, np.zeros(size, dtype=np.int64) if have is None else have, limit)
        return NodeVerdicts.from_mask(~failed, EXCEEDED)

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        """The per-node form, for what-if nodes (preemption's dry run without its victims,
        a node with its nominated pods added): the volumes of the pods ``node_info`` holds,
        not the columns of the table, with the same counting rules and limit test."""
        s = state.get(_STATE)
        if s is None:
            return None
        if s.error is not None:
            return s.error
        limits, migrated = node_limits(self.index.csi_node(node_info.node.name))
        if not any(driver in limits for driver in s.by_driver):
            return None
        attached: dict[str, set[str]] = {}
        for other in node_info.pods.values():
            if other.volumes:
                for plugin, unique, driver in self.entries(other):
                    if counts_on(plugin, migrated):
                        attached.setdefault(driver, set()).add(unique)
        for driver, volumes in s.by_driver.items():
            have = attached.get(driver, set())
            new = sum(1 for unique, plugin in volumes if counts_on(plugin, migrated) and unique not in have)
            if over_limit(new, len(have), limits.get(driver, -1)):
                return EXCEEDED
        return None

    def entries(self, pod: PodInfo, new_pod: bool = False) -> list[Entry]:
        """The pod's attachable volumes: (in-tree plugin or "", ``<driver>/<handle>``, driver).
        A volume of an in-tree plugin counts only on nodes that migrated it."""
        out: list[Entry] = []
        for volume in pod.volumes:
            if not volume.claim:
                disk = volume.disk
                plugin = PLUGIN_OF_SOURCE.get(disk.kind, "") if disk is not None else ""
                if disk is not None and plugin in IN_TREE_PLUGINS:
                    translated = inline_csi_volume(disk)
                    if translated is not None:
                        out.append((plugin, f"{translated[0]}/{translated[1]}", translated[0]))
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
            plugin, driver, handle = self._driver_of(pvc)
            if driver and handle:
                out.append((plugin, f"{driver}/{handle}", driver))
        return out

    def _driver_of(self, pvc: PersistentVolumeClaim) -> tuple[str, str, str]:
        """(in-tree plugin or "", driver, handle) of a claim: its PV's, or its class's provisioner's."""
        if pvc.volume_name:
            pv = self.index.pv(pvc.volume_name)
            if pv is not None:
                if pv.csi_driver:
                    return "", pv.csi_driver, pv.csi_handle
                plugin = PLUGIN_OF_SOURCE.get(pv.source, "")
                if plugin not in IN_TREE_PLUGINS:
                    return "", "", ""
                source = pv.raw.get("spec", {}).get(pv.source, {})
                ident = next((str(source[k]) for k in ("pdName", "volumeID", "diskURI", "volumePath", "shareName")
                              if isinstance(source, Mapping) and k in source), "")
                return plugin, CSI_DRIVER_OF_PLUGIN[plugin], ident
        if not pvc.storage_class:
            return "", "", ""  # no class: an Immediate claim, bound before scheduling
        cls = self.index.storage_class(pvc.storage_class)
        if cls is None:
            return "", "", ""
        handle = f"{SC_HANDLE_PREFIX}-{pvc.namespace}/{pvc.name}"
        if cls.provisioner in CSI_DRIVER_OF_PLUGIN:
            if cls.provisioner not in IN_TREE_PLUGINS:
                return "", "", ""
            return cls.provisioner, CSI_DRIVER_OF_PLUGIN[cls.provisioner], handle
        return "", cls.provisioner, handle

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
        return claim_hint(pod, new)


def new(args: None, handle: Handle) -> CSILimits:
    plugin = CSILimits(storage_index(handle))
    handle.add_pod_observer(plugin.attached)
    return plugin
