"""VolumeRestrictions (upstream's ``volumerestrictions``).

* In-tree disks: a GCE PD, an AWS EBS volume, an iSCSI LUN or an RBD image already
  mounted by a pod on the node conflicts with the pod's (GCE PD, iSCSI and RBD allow
  it when both mounts are read-only; EBS never). Unschedulable: evicting the other pod
  would help.
* ReadWriteOncePod: a claim with that access mode used by any placed pod makes every
  node fail (Unschedulable). PreFilter looks the pod's claims up, so a missing claim
  rejects the pod here first (``persistentvolumeclaim "<name>" not found``).

Claims in use are counted incrementally from the placed pods (upstream's snapshot
``usedPVCSet``), so PreFilter does not walk the cluster. Upstream's set is the snapshot's,
which a pod-group cycle does not refresh as it assumes members: inside one, a claim counts
as used when it was in use as the cycle began (``PodGroupCycleLists``), so a member whose
ReadWriteOncePod claim an earlier member of the cycle took does not conflict.
"""

from __future__ import annotations

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
from ...objects.volumes import PodVolume
from ..volumebinding.index import StorageIndex, storage_index

__all__ = ["NAME", "ERR_REASON_DISK_CONFLICT", "ERR_REASON_RWOP_CONFLICT", "VolumeRestrictions", "new", "volume_conflict"]

NAME = "VolumeRestrictions"
ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_RWOP_CONFLICT = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"
)
DISK_CONFLICT = Status(Code.UNSCHEDULABLE, ERR_REASON_DISK_CONFLICT)
RWOP_CONFLICT = Status(Code.UNSCHEDULABLE, ERR_REASON_RWOP_CONFLICT)
SKIP = Status(Code.SKIP)
CHECKED_DISKS = frozenset({"gcePersistentDisk", "awsElasticBlockStore", "iscsi", "rbd"})


@dataclass(slots=True)
class _State:
    rwop_claims: frozenset[str]  # names of the pod's ReadWriteOncePod claims
    conflicts: int  # how many of them placed pods use
    check_disks: bool

    def clone(self) -> "_State":
        return _State(self.rwop_claims, self.conflicts, self.check_disks)


_STATE: StateKey[_State] = StateKey("PreFilter" + NAME)


def _needs_check(volume: PodVolume) -> bool:
    return volume.disk is not None and volume.disk.kind in CHECKED_DISKS


def volume_conflict(volume: PodVolume, other: PodInfo) -> bool:
    """Whether ``volume`` (of the pod to place) and a volume of ``other`` are one disk that cannot be shared."""
    disk = volume.disk
    if disk is None:
        return False
    for existing in other.volumes:
        theirs = existing.disk
        if theirs is None or theirs.kind != disk.kind:
            continue
        if disk.kind == "awsElasticBlockStore":
            if disk.ident == theirs.ident:
                return True
        elif disk.kind == "rbd":
            if disk.monitors & theirs.monitors and disk.ident == theirs.ident and not (disk.read_only and theirs.read_only):
                return True
        elif disk.kind in ("gcePersistentDisk", "iscsi"):
            if disk.ident == theirs.ident and not (disk.read_only and theirs.read_only):
                return True
    return False


class _ClaimUse:
    """Placed pods per claim (``(namespace, claim)``): upstream's ``IsPVCUsedByPods``."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, str], int] = {}

    def _apply(self, pod: PodInfo, delta: int) -> None:
        for volume in pod.volumes:
            if volume.claim and not volume.ephemeral:
                key = (pod.namespace, volume.claim)
                count = self.counts.get(key, 0) + delta
                if count > 0:
                    self.counts[key] = count
                else:
                    self.counts.pop(key, None)

    def pod_added(self, pod: PodInfo, node: NodeInfo) -> None:
        if pod.volumes:
            self._apply(pod, 1)

    def pod_removed(self, pod: PodInfo, node: NodeInfo) -> None:
        if pod.volumes:
            self._apply(pod, -1)

    def nodes_changed(self) -> None:
        pass


class VolumeRestrictions:
    name = NAME

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """OpportunisticBatching: PreFilter and Filter read the volumes and, for
        their claims, the namespace; upstream signs the volumes' sources only."""
        return sign_volumes(pod)

    upstream_unsigned_reads = (UNSIGNED_NAMESPACE,)

    def __init__(self, index: StorageIndex, use: _ClaimUse) -> None:
        self.index = index
        self.use = use

    def pre_filter(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView) -> tuple[PreFilterResult | None, Status | None]:
        if not pod.volumes:
            return None, SKIP
        check_disks = any(_needs_check(v) for v in pod.volumes)
        rwop: set[str] = set()
        for volume in pod.volumes:
            if not volume.claim or volume.ephemeral:
                continue
            pvc = self.index.pvc(pod.namespace, volume.claim)
            if pvc is None:
                return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f'persistentvolumeclaim "{volume.claim}" not found')
            if "ReadWriteOncePod" in pvc.access_modes:
                rwop.add(pvc.name)
        conflicts = sum(1 for claim in rwop if self._used(snapshot, pod.namespace, claim))
        if not check_disks and conflicts == 0:
            return None, SKIP
        state.write(_STATE, _State(frozenset(rwop), conflicts, check_disks))
        return None, None

    def _used(self, snapshot: SnapshotView, namespace: str, claim: str) -> bool:
        """upstream's ``IsPVCUsedByPods``: in a pod-group cycle, the claims in use when the
        cycle began (its snapshot's ``usedPVCSet`` is not refreshed as members are assumed)."""
        users = self.use.counts.get((namespace, claim), 0)
        lists = snapshot.pod_group_cycle_lists()
        if lists is not None:
            users -= lists.claim_users_added(namespace, claim)
        return users > 0

    def add_pod(self, state: CycleState, pod_to_schedule: PodInfo, pod_to_add: PodInfo, node: NodeInfo) -> Status | None:
        self._update(state, pod_to_add, 1)
        return None

    def remove_pod(self, state: CycleState, pod_to_schedule: PodInfo, pod_to_remove: PodInfo, node: NodeInfo) -> Status | None:
        self._update(state, pod_to_remove, -1)
        return None

    def _update(self, state: CycleState, pod: PodInfo, delta: int) -> None:
        s = state.get(_STATE)
        if s is None:
            return
        s.conflicts += delta * sum(1 for v in pod.volumes if v.claim and not v.ephemeral and v.claim in s.rwop_claims)

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        s = state.get(_STATE)
        if s is None:
            return None
        if s.check_disks:
            for volume in pod.volumes:
                if _needs_check(volume):
                    for other in node.pods.values():
                        if other.volumes and volume_conflict(volume, other):
                            return DISK_CONFLICT
        if s.conflicts > 0:
            return RWOP_CONFLICT
        return None

    # -- queueing hints -------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE), self._hint_pod_deleted),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD), None),
            ClusterEventWithHint(ClusterEvent(self.index.resource("PersistentVolumeClaim"), ActionType.ADD), self._hint_claim_added),
        ]

    def _hint_pod_deleted(self, pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
        """The deleted pod held a disk this pod wants, or used one of its claims."""
        if not isinstance(old, PodInfo) or old.namespace != pod.namespace:
            return QueueingHint.SKIP
        if any(volume_conflict(v, old) for v in pod.volumes if _needs_check(v)):
            return QueueingHint.QUEUE
        claims = {v.claim for v in pod.volumes if v.claim and not v.ephemeral}
        if any(v.claim in claims for v in old.volumes if v.claim and not v.ephemeral):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def _hint_claim_added(self, pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
        return claim_hint(pod, new, ephemeral=False)


def new(args: None, handle: Handle) -> VolumeRestrictions:
    use = _ClaimUse()
    handle.add_pod_observer(use)
    return VolumeRestrictions(storage_index(handle), use)
