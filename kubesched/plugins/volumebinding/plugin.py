"""VolumeBinding (upstream's ``volumebinding``): a pod's claims decide where it can run.

* PreFilter: the pod's claims must exist and not be going away (``persistentvolumeclaim
  "<name>" is being deleted``); an unbound claim of an Immediate class makes the pod
  UnschedulableAndUnresolvable (the PV controller binds those, not the scheduler).
  A pod without claims is skipped.
* Filter: see ``binder.find_pod_volumes``; reasons are UnschedulableAndUnresolvable. In
  batch form: claims all bound make it one node-affinity mask (and PreFilter skips it
  when no PV has node affinity), so a pod with bound claims costs no per-node call.
* PreScore / Score: capacity scoring needs StorageCapacityScoring, off in v1.36: PreScore
  skips every pod, as upstream's does without a scorer.
* Reserve assumes the node's bindings (the next pods see them); Unreserve reverts them.
* PreBind: where the cluster client stores PVs and claims itself (``simulate``), the PV
  controller's work is done at once (``controller.completed_bindings``); a live cluster
  is not supported yet and the attempt fails with an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

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
    RowArray,
    SnapshotView,
    StateKey,
    Status,
)
from ..helper import claim_hint
from ...framework.signing import UNSIGNED_NAMESPACE, SignFragment, sign_volumes
from ...objects import NodeInfo, PodInfo
from ...objects.quantity import value as quantity_value
from ...objects.node import Node
from ...objects.storage import PersistentVolume, StorageClass
from .args import STORAGE_CAPACITY_SCORING, VolumeBindingArgs
from .binder import ANN_SELECTED_NODE, ERR_REASON_NODE_CONFLICT, BinderError, PodClaims, PodVolumes, VolumeBinder
from .live import StorageUpdater, api_updates, wait_for_bindings
from .controller import StorageWriter, completed_bindings
from .index import StorageIndex, storage_index

__all__ = ["NAME", "VolumeBinding", "new", "ERR_UNBOUND_IMMEDIATE"]

NAME = "VolumeBinding"
ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
SKIP = Status(Code.SKIP)
UNBOUND_IMMEDIATE = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_UNBOUND_IMMEDIATE)
NODE_CONFLICT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NODE_CONFLICT)


@dataclass(slots=True)
class _State:
    claim_names: list[str] = field(default_factory=list)
    claims: PodClaims | None = None
    by_node: dict[str, PodVolumes] = field(default_factory=dict)
    # The PVs of the bound claims when every one exists and only node labels decide its
    # affinity (then Filter is a mask); None otherwise.
    bound_pvs: list[PersistentVolume] | None = None
    all_bound: bool = False

    def clone(self) -> "_State":
        return self  # shared, as upstream's stateData: filled in by Filter, read by Reserve


_STATE: StateKey[_State] = StateKey(NAME)


def _unresolvable(message: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, message)


class VolumeBinding:
    name = NAME

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """OpportunisticBatching: PreFilter, Filter and Score read the volumes and, for
        their claims, the namespace; upstream signs the volumes' sources only."""
        return sign_volumes(pod)

    upstream_unsigned_reads = (UNSIGNED_NAMESPACE,)

    def __init__(self, index: StorageIndex, handle: Handle, args: VolumeBindingArgs) -> None:
        self.index = index
        self.handle = handle
        self.args = args
        self.binder = VolumeBinder(index)

    # -- PreFilter --------------------------------------------------------------------------
    def _check_claims(self, pod: PodInfo) -> tuple[list[str], Status | None]:
        """upstream's ``podHasPVCs``: the claims exist (lister, not assume cache) and are usable."""
        names = []
        for volume in pod.volumes:
            if not volume.claim:
                continue
            names.append(volume.claim)
            pvc = self.index.pvc(pod.namespace, volume.claim)
            if pvc is None:
                if volume.ephemeral:
                    return names, _unresolvable(
                        f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{volume.claim}"')
                return names, _unresolvable(f'persistentvolumeclaim "{volume.claim}" not found')
            if pvc.phase == "Lost":
                return names, _unresolvable(
                    f'persistentvolumeclaim "{pvc.name}" bound to non-existent persistentvolume "{pvc.volume_name}"')
            if pvc.deleting:
                return names, _unresolvable(f'persistentvolumeclaim "{pvc.name}" is being deleted')
            if volume.ephemeral and pvc.controller_uid != pod.uid:
                return names, _unresolvable(
                    f"PVC {pod.namespace}/{pvc.name} was not created for pod {pod.namespace}/{pod.name} (pod is not owner)")
        return names, None

    def pre_filter(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView) -> tuple[PreFilterResult | None, Status | None]:
        if not pod.volumes:
            return None, SKIP  # no state: Reserve and PreBind find nothing to do
        names, status = self._check_claims(pod)
        if status is not None:
            return None, status
        if not names:
            return None, SKIP
        try:
            claims = self.binder.claims_of(pod.namespace, names)
        except BinderError as err:
            return None, Status.as_error(err)
        if claims.immediate:
            return None, UNBOUND_IMMEDIATE
        s = _State(names, claims, bound_pvs=self._bound_pvs(claims))
        state.write(_STATE, s)
        if not claims.delayed and s.bound_pvs is not None and all(pv.node_affinity is None for pv in s.bound_pvs):
            return None, SKIP  # every claim bound to a PV any node reaches: no node to filter out
        return None, None

    def _bound_pvs(self, claims: PodClaims) -> list[PersistentVolume] | None:
        pvs = []
        for pvc in claims.bound:
            pv = self.binder.get_pv(pvc.volume_name)
            if pv is None or (pv.node_affinity is not None and any(t.fields for t in pv.node_affinity.terms)):
                return None
            pvs.append(pv)
        return pvs

    # -- Filter (batch form: one call per cycle) ----------------------------------------------
    def filter_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, candidates: BoolArray) -> NodeVerdicts:
        """Bound claims only: their PVs' node affinity as one mask over the table. Otherwise
        (claims to bind or provision) the binder answers for each candidate row."""
        size = snapshot.table.size
        s = state.get(_STATE)
        if s is None or s.claims is None:
            return NodeVerdicts.all_pass(size)
        if not s.claims.delayed and s.bound_pvs is not None:
            passed = np.ones(size, dtype=bool)
            for pv in s.bound_pvs:
                if pv.node_affinity is not None:
                    passed &= snapshot.table.selector_mask(pv.node_affinity)
            return NodeVerdicts.from_mask(passed, NODE_CONFLICT)
        rows = candidates[:size]
        found = self._pinned_rows(s, snapshot)
        if found is not None:
            rows = rows & ~found  # a PV of their own fits there: only the others need a look
        return NodeVerdicts.per_row(size, rows, snapshot.node_infos, lambda info: self.filter_node(s, info.node))

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        """The per-node form (preemption's dry run, a node with nominated pods added):
        upstream's Filter, ``filter_node``, which ``filter_nodes`` answers per row with."""
        s = state.get(_STATE)
        return None if s is None else self.filter_node(s, node.node)

    def _pinned_rows(self, s: _State, snapshot: SnapshotView) -> BoolArray | None:
        """One unbound claim and PVs each pinned to label values (local PVs on their hosts):
        the rows that have one, from the label columns at once. None: not that case."""
        claims = s.claims
        if claims is None or claims.bound or len(claims.delayed) != 1:
            return None
        pvc = claims.delayed[0]
        found_pvs = claims.candidates[pvc.key]
        if ANN_SELECTED_NODE in pvc.annotations or found_pvs.bound_to_claim or found_pvs.unpinned:
            return None
        table = snapshot.table
        found = np.zeros(table.size, dtype=bool)
        for key, by_value in found_pvs.pinned.items():
            ids, value_ids = table.label_column(key)
            wanted = [value_ids[v] for v in by_value if v in value_ids]
            if wanted:
                found |= np.isin(ids[: table.size], wanted)
        return found

    def _volumes_on(self, s: _State, node_name: str) -> PodVolumes | None:
        """The node's bindings when Filter did not record them (its rows were answered at once)."""
        info = self.handle.snapshot().get(node_name)
        if s.claims is None or info is None:
            return None
        volumes, reasons = self.binder.find_pod_volumes(s.claims, info.node)
        return None if reasons else volumes

    def filter_node(self, s: _State, node: Node) -> Status | None:
        """Upstream's per-node Filter: ``FindPodVolumes`` for this node; remembers its bindings."""
        if s.claims is None:
            return None
        try:
            volumes, reasons = self.binder.find_pod_volumes(s.claims, node)
        except BinderError as err:
            return Status.as_error(err)
        if reasons:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons)
        s.by_node[node.name] = volumes
        return None

    # -- Score: upstream's capacity scoring needs StorageCapacityScoring (off in v1.36) --------
    def pre_score(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> Status | None:
        """Skip: without the gate upstream has no scorer and skips every pod."""
        if not STORAGE_CAPACITY_SCORING:
            return SKIP
        s = state.get(_STATE)
        return None if s is not None and s.claims is not None else SKIP

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        """Not reached in v1.36 (PreScore skips); the capacity scorer is not carried over yet."""
        return 0

    # -- Reserve / Unreserve ----------------------------------------------------------------
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        s = state.get(_STATE)
        if s is None:
            return None  # the pod has no claims
        volumes = s.by_node.get(node_name)
        if volumes is None and s.claims is not None and s.claims.delayed:
            volumes = self._volumes_on(s, node_name)
        if volumes is None:
            s.all_bound = True
            return None
        if self.binder.all_bound(pod.namespace, s.claim_names):
            s.all_bound = True
            return None
        s.by_node[node_name] = self.binder.assume(node_name, volumes)
        s.all_bound = False
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        s = state.get(_STATE)
        if s is None:
            return
        volumes = s.by_node.get(node_name)
        if volumes is not None:
            self.binder.revert(volumes)

    # -- PreBind ------------------------------------------------------------------------------
    def pre_bind_pre_flight(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """Skip when PreFilter wrote no state (no claims) or every claim is bound: nothing to
        write through the API, as upstream's PreBindPreFlight."""
        s = state.get(_STATE)
        if s is None or s.all_bound:
            return SKIP
        return None

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        s = state.get(_STATE)
        if s is None or s.all_bound:
            return None
        volumes = s.by_node.get(node_name)
        if volumes is None:
            return Status(Code.ERROR, f'no pod volumes found for node "{node_name}"')
        client = self.handle.client
        if isinstance(client, StorageUpdater):  # run: write the decisions, the controllers bind
            try:
                for obj in api_updates(volumes):
                    client.update_storage_object(obj)
                wait_for_bindings(self.index, volumes, float(self.args.bind_timeout_seconds))
            except Exception as err:  # the API's refusal, a reset binding or the timeout
                return Status.as_error(err)
            return None
        if not isinstance(client, StorageWriter):
            return Status(Code.ERROR, "binding volumes: writing PV bindings through the API server is not supported yet")
        node = self.handle.snapshot().get(node_name)
        if node is None:
            return Status(Code.ERROR, f'failed to get node "{node_name}"')
        classes: dict[str, StorageClass] = {}
        for pvc in volumes.provisions:
            cls = self.index.storage_class(pvc.storage_class)
            if cls is not None:
                classes[cls.name] = cls
        client.write_storage_objects(completed_bindings(volumes, node.node, classes, self.index.csi_node(node_name)))
        return None

    # -- queueing hints -------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        r = self.index.resource
        add_update = ActionType.ADD | ActionType.UPDATE
        return [
            ClusterEventWithHint(ClusterEvent(r("StorageClass"), add_update), self._hint_class_changed),
            ClusterEventWithHint(ClusterEvent(r("PersistentVolumeClaim"), add_update), self._hint_claim_changed),
            ClusterEventWithHint(ClusterEvent(r("PersistentVolume"), add_update), None),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL), None),
            ClusterEventWithHint(ClusterEvent(r("CSINode"), add_update), self._hint_csi_node_changed),
            ClusterEventWithHint(ClusterEvent(r("CSIDriver"), ActionType.UPDATE), self._hint_csi_driver_changed),
            ClusterEventWithHint(ClusterEvent(r("CSIStorageCapacity"), add_update), self._hint_capacity_changed),
        ]

    def _hint_class_changed(self, pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
        """A new class, or a change of a class's allowedTopologies (its binding mode is immutable)."""
        if not isinstance(old, Mapping) or not isinstance(new, Mapping):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE if old.get("allowedTopologies") != new.get("allowedTopologies") else QueueingHint.SKIP

    def _hint_claim_changed(self, pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
        return claim_hint(pod, new)

    def _hint_csi_node_changed(self, pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
        """A new CSINode, or a change of the in-tree plugins migrated on it."""
        if not isinstance(old, Mapping) or not isinstance(new, Mapping):
            return QueueingHint.QUEUE
        key = "storage.alpha.kubernetes.io/migrated-plugins"
        before = ((old.get("metadata") or {}).get("annotations") or {}).get(key)
        after = ((new.get("metadata") or {}).get("annotations") or {}).get(key)
        return QueueingHint.QUEUE if before != after else QueueingHint.SKIP

    def _hint_csi_driver_changed(self, pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
        """Upstream looks for inline CSI volumes of the driver that stopped tracking capacity."""
        return QueueingHint.SKIP

    def _hint_capacity_changed(self, pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
        """A new capacity, or a larger volume limit (maximumVolumeSize, else capacity)."""
        if not isinstance(old, Mapping) or not isinstance(new, Mapping):
            return QueueingHint.QUEUE
        before, after = _limit(old), _limit(new)
        return QueueingHint.QUEUE if after is not None and (before is None or after > before) else QueueingHint.SKIP


def _limit(raw: Mapping[str, object]) -> int | None:
    try:
        return storage_limit(raw)
    except ValueError:
        return None


def storage_limit(raw: Mapping[str, object]) -> int | None:
    """A CSIStorageCapacity's volume limit in bytes."""
    value = raw.get("maximumVolumeSize")
    if value is None:
        value = raw.get("capacity")
    if not isinstance(value, (str, int, float)):
        return None
    return quantity_value(value)


def new(args: VolumeBindingArgs | None, handle: Handle) -> VolumeBinding:
    return VolumeBinding(storage_index(handle), handle, args or VolumeBindingArgs())
