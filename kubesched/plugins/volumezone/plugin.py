"""VolumeZone (upstream's ``volumezone``): a pod whose bound PVs carry zone or region labels
runs only on nodes in one of those zones (regions).

PreFilter collects the topology labels of the PVs bound to the pod's claims (claims of
WaitForFirstConsumer classes still unbound are skipped: VolumeBinding places them);
a claim or a PV that does not exist rejects the pod with the lister's not-found
message. Filter compares them with the node's labels; a node with none of the four
topology labels passes, and a PV's beta label matches the node's GA label too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

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
    StateKey,
    Status,
)
from ..helper import claim_hint
from ...framework.signing import UNSIGNED_NAMESPACE, SignFragment, sign_volumes
from ...objects import NodeInfo, PodInfo
from ...objects.storage import WAIT_FOR_FIRST_CONSUMER
from ..volumebinding.index import StorageIndex, storage_index

__all__ = ["NAME", "ERR_REASON_CONFLICT", "VolumeZone", "new", "TOPOLOGY_LABELS"]

NAME = "VolumeZone"
ERR_REASON_CONFLICT = "node(s) had no available volume zone"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
GA_ZONE = "topology.kubernetes.io/zone"
GA_REGION = "topology.kubernetes.io/region"
TOPOLOGY_LABELS = (BETA_ZONE, BETA_REGION, GA_ZONE, GA_REGION)
_TO_GA = {BETA_ZONE: GA_ZONE, BETA_REGION: GA_REGION}
MULTI_ZONE_DELIMITER = "__"

CONFLICT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)
SKIP = Status(Code.SKIP)


@dataclass(slots=True, frozen=True)
class PVTopology:
    """One topology label of a bound PV: the key and the zones (regions) it allows."""

    pv_name: str
    key: str
    values: frozenset[str]


_STATE: StateKey[tuple[PVTopology, ...]] = StateKey("PreFilter" + NAME)


def _unresolvable(message: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, message)


def pv_topologies(pv_name: str, labels: Mapping[str, str]) -> list[PVTopology]:
    """The PV's topology labels; a value may list several zones joined by ``__``."""
    out = []
    for key in TOPOLOGY_LABELS:
        value = labels.get(key)
        if value is not None:
            zones = frozenset(z.strip() for z in value.split(MULTI_ZONE_DELIMITER) if z.strip())
            if zones:
                out.append(PVTopology(pv_name, key, zones))
    return out


class VolumeZone:
    name = NAME

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """OpportunisticBatching: PreFilter and Filter read the volumes and, for
        their claims, the namespace; upstream signs the volumes' sources only."""
        return sign_volumes(pod)

    upstream_unsigned_reads = (UNSIGNED_NAMESPACE,)

    def __init__(self, index: StorageIndex) -> None:
        self.index = index

    def _topologies(self, pod: PodInfo) -> tuple[list[PVTopology], Status | None]:
        out: list[PVTopology] = []
        for volume in pod.volumes:
            if not volume.claim or volume.ephemeral:  # upstream looks at persistentVolumeClaim volumes only
                continue
            pvc = self.index.pvc(pod.namespace, volume.claim)
            if pvc is None:
                return [], _unresolvable(f'persistentvolumeclaim "{volume.claim}" not found')
            if not pvc.volume_name:
                if not pvc.storage_class:
                    return [], _unresolvable("PersistentVolumeClaim had no pv name and storageClass name")
                cls = self.index.storage_class(pvc.storage_class)
                if cls is None:
                    return [], _unresolvable(f'storageclass.storage.k8s.io "{pvc.storage_class}" not found')
                if cls.binding_mode == WAIT_FOR_FIRST_CONSUMER:
                    continue  # VolumeBinding places it
                return [], _unresolvable("PersistentVolume had no name")
            pv = self.index.pv(pvc.volume_name)
            if pv is None:
                return [], _unresolvable(f'persistentvolume "{pvc.volume_name}" not found')
            out.extend(pv_topologies(pv.name, pv.labels))
        return out, None

    def pre_filter(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView) -> tuple[PreFilterResult | None, Status | None]:
        if not pod.volumes:
            return None, SKIP
        topologies, status = self._topologies(pod)
        if status is not None:
            return None, status
        if not topologies:
            return None, SKIP
        state.write(_STATE, tuple(topologies))
        return None, None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        topologies = state.get(_STATE)
        if not topologies:
            return None
        labels = node.node.labels
        if not any(key in labels for key in TOPOLOGY_LABELS):
            return None  # a node without zone labels takes any volume
        for topology in topologies:
            value = labels.get(topology.key)
            if value is None:
                value = labels.get(_TO_GA.get(topology.key, topology.key))
            if value is None or value not in topology.values:
                return CONFLICT
        return None

    # -- queueing hints -------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(self.index.resource("StorageClass"), ActionType.ADD), self._hint_class_added),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL), None),
            ClusterEventWithHint(ClusterEvent(self.index.resource("PersistentVolumeClaim"), ActionType.ADD | ActionType.UPDATE),
                                 self._hint_claim_changed),
            ClusterEventWithHint(ClusterEvent(self.index.resource("PersistentVolume"), ActionType.ADD | ActionType.UPDATE),
                                 self._hint_pv_changed),
        ]

    def _hint_class_added(self, pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
        """A new WaitForFirstConsumer class may let an unbound claim of it be skipped."""
        if isinstance(new, Mapping) and new.get("volumeBindingMode") == WAIT_FOR_FIRST_CONSUMER:
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def _hint_claim_changed(self, pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
        return claim_hint(pod, new)

    def _hint_pv_changed(self, pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
        """A new PV, or a change of a PV's topology labels."""
        if old is None or not isinstance(old, Mapping) or not isinstance(new, Mapping):
            return QueueingHint.QUEUE
        old_labels = (old.get("metadata") or {}).get("labels") or {}
        new_labels = (new.get("metadata") or {}).get("labels") or {}
        changed = any(old_labels.get(k) != new_labels.get(k) for k in TOPOLOGY_LABELS)
        return QueueingHint.QUEUE if changed else QueueingHint.SKIP


def new(args: None, handle: Handle) -> VolumeZone:
    return VolumeZone(storage_index(handle))
