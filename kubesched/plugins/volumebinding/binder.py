"""The scheduler's volume binder (upstream's ``volumebinding/binder.go``), without the API calls.

``claims_of`` sorts a pod's claims into bound ones, unbound ones whose class waits for
the first consumer, and unbound Immediate (or pre-bound) ones. ``find_pod_volumes``
answers for one node: bound claims need their PV's node affinity to match; unbound
ones need an available PV (``find_matching_volume``, the PV controller's matching
rules, smallest fit) or dynamic provisioning the class allows on this node, with
storage capacity where the CSI driver publishes it. The reasons are upstream's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from ...objects.node import Node
from ...objects.storage import (
    WAIT_FOR_FIRST_CONSUMER,
    ClaimRef,
    PersistentVolume,
    PersistentVolumeClaim,
)
from .assume import AssumeCache
from .index import StorageIndex

__all__ = [
    "ANN_BIND_COMPLETED",
    "ANN_BOUND_BY_CONTROLLER",
    "ANN_SELECTED_NODE",
    "ERR_REASON_BIND_CONFLICT",
    "ERR_REASON_NODE_CONFLICT",
    "ERR_REASON_NOT_ENOUGH_SPACE",
    "ERR_REASON_PV_NOT_EXIST",
    "NOT_SUPPORTED_PROVISIONER",
    "BinderError",
    "PodClaims",
    "PodVolumes",
    "VolumeBinder",
    "find_matching_volume",
    "claim_candidates",
    "match_on_node",
    "Candidates",
]

ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"

ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"


class BinderError(Exception):
    """Something upstream's binder returns as an error (the attempt fails with Error)."""


@dataclass(slots=True)
class PodClaims:
    bound: list[PersistentVolumeClaim] = field(default_factory=list)
    delayed: list[PersistentVolumeClaim] = field(default_factory=list)  # unbound, WaitForFirstConsumer
    immediate: list[PersistentVolumeClaim] = field(default_factory=list)  # unbound Immediate, or pre-bound
    # Per delayed claim (namespace, name): its PVs as of PreFilter (upstream lists them then too).
    candidates: dict[tuple[str, str], Candidates] = field(default_factory=dict)


@dataclass(slots=True)
class PodVolumes:
    """What one node needs done: PVs to bind to claims, claims to provision."""

    static_bindings: list[tuple[PersistentVolume, PersistentVolumeClaim]] = field(default_factory=list)
    provisions: list[PersistentVolumeClaim] = field(default_factory=list)


def is_fully_bound(pvc: PersistentVolumeClaim) -> bool:
    return bool(pvc.volume_name) and ANN_BIND_COMPLETED in pvc.annotations


def is_bound_to_claim(pv: PersistentVolume, pvc: PersistentVolumeClaim) -> bool:
    ref = pv.claim_ref
    if ref is None or ref.name != pvc.name or ref.namespace != pvc.namespace:
        return False
    return not ref.uid or ref.uid == pvc.uid


@dataclass(slots=True, frozen=True)
class Candidates:
    """A claim's PVs as far as the node does not matter, in the order matching tries them.

    ``bound_to_claim``: PVs pre-bound to the claim (the first one not taken decides, whatever
    its size). ``available``: available PVs that match, smallest first (name order among
    equals); ``rank`` is each one's place in that order. PVs pinned by one ``key In values``
    expression (local PVs on their host) are also indexed by ``pinned[key][value]``, so a
    node looks at its own PVs and the others' (``unpinned``) only.
    """

    bound_to_claim: tuple[PersistentVolume, ...]
    available: tuple[PersistentVolume, ...]
    rank: dict[str, int] = field(default_factory=dict)
    unpinned: tuple[PersistentVolume, ...] = ()
    pinned: dict[str, dict[str, list[PersistentVolume]]] = field(default_factory=dict)


def _pin(pv: PersistentVolume) -> tuple[str, frozenset[str]] | None:
    """(key, values) when the PV's node affinity is exactly one ``key In values`` expression."""
    affinity = pv.node_affinity
    if affinity is None or len(affinity.terms) != 1:
        return None
    term = affinity.terms[0]
    if term.fields or len(term.expressions) != 1 or term.expressions[0].operator != "In":
        return None
    return term.expressions[0].key, term.expressions[0].values


def claim_candidates(pvc: PersistentVolumeClaim, volumes: list[PersistentVolume]) -> Candidates:
    """The node-independent half of upstream's ``FindMatchingVolume`` (scheduler path), once per cycle."""
    requested = pvc.request or 0
    bound: list[PersistentVolume] = []
    available: list[PersistentVolume] = []
    for pv in volumes:
        if pv.claim_ref is not None and not is_bound_to_claim(pv, pvc):
            continue
        if pv.capacity < requested or pv.volume_mode != pvc.volume_mode or pv.deleting:
            continue
        if is_bound_to_claim(pv, pvc):
            bound.append(pv)
            continue
        if pv.phase != "Available":
            continue
        if pvc.selector is not None and not pvc.selector.matches(pv.labels):
            continue
        if pv.storage_class != pvc.storage_class:
            continue
        if not all(mode in pv.access_modes for mode in pvc.access_modes):
            continue
        available.append(pv)
    available.sort(key=lambda pv: pv.capacity)  # stable: name order among PVs of one size
    unpinned: list[PersistentVolume] = []
    pinned: dict[str, dict[str, list[PersistentVolume]]] = {}
    for pv in available:
        pin = _pin(pv)
        if pin is None:
            unpinned.append(pv)
            continue
        by_value = pinned.setdefault(pin[0], {})
        for value in pin[1]:
            by_value.setdefault(value, []).append(pv)
    rank = {pv.name: i for i, pv in enumerate(available)}
    return Candidates(tuple(bound), tuple(available), rank, tuple(unpinned), pinned)


def match_on_node(candidates: Candidates, labels: Mapping[str, str], excluded: set[str]) -> PersistentVolume | None:
    """The node-dependent half: a pre-bound PV if one is left (None if the node cannot reach
    it), else the smallest available PV whose node affinity the node's labels satisfy."""
    for pv in candidates.bound_to_claim:
        if pv.name not in excluded:
            return pv if pv.node_affinity_matches(labels) else None
    rank = candidates.rank
    best: PersistentVolume | None = None
    for pv in candidates.unpinned:
        if pv.name not in excluded and pv.node_affinity_matches(labels):
            best = pv
            break
    for key, by_value in candidates.pinned.items():
        value = labels.get(key)
        if value is None:
            continue
        for pv in by_value.get(value, ()):
            if best is not None and rank[pv.name] >= rank[best.name]:
                break
            if pv.name not in excluded:
                best = pv
                break
    return best


def find_matching_volume(pvc: PersistentVolumeClaim, volumes: list[PersistentVolume], labels: Mapping[str, str],
                         excluded: set[str]) -> PersistentVolume | None:
    """The PV for an unbound claim on a node with ``labels`` (upstream's ``FindMatchingVolume``,
    scheduler path): one pre-bound to the claim if any, else the smallest available match."""
    return match_on_node(claim_candidates(pvc, volumes), labels, excluded)


class VolumeBinder:
    """Reads claims and PVs through the assume caches over the shared index."""

    def __init__(self, index: StorageIndex) -> None:
        self.index = index
        self.pv_cache: AssumeCache[PersistentVolume] = AssumeCache()
        self.pvc_cache: AssumeCache[PersistentVolumeClaim] = AssumeCache()
        index.stores["PersistentVolume"].add_handler(self.pv_cache)
        index.stores["PersistentVolumeClaim"].add_handler(self.pvc_cache)

    # -- reads through the assume caches ---------------------------------------------
    def get_pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return self.pvc_cache.get((namespace, name)) or self.index.pvc(namespace, name)

    def get_pv(self, name: str) -> PersistentVolume | None:
        return self.pv_cache.get(("", name)) or self.index.pv(name)

    def list_pvs(self, storage_class: str) -> list[PersistentVolume]:
        """The class's PVs, assumed versions first-class, by name (upstream's order is an index's)."""
        pvs = [self.pv_cache.get(("", pv.name)) or pv for pv in self.index.pvs_of_class(storage_class)]
        pvs.sort(key=lambda pv: pv.name)
        return pvs

    def is_delay_binding(self, pvc: PersistentVolumeClaim) -> bool:
        if not pvc.storage_class:
            return False
        cls = self.index.storage_class(pvc.storage_class)
        return cls is not None and cls.binding_mode == WAIT_FOR_FIRST_CONSUMER

    # -- PreFilter ----------------------------------------------------------------------
    def claims_of(self, namespace: str, claim_names: list[str]) -> PodClaims:
        out = PodClaims()
        for name in claim_names:
            pvc = self.get_pvc(namespace, name)
            if pvc is None:
                raise BinderError(f'error getting PVC "{namespace}/{name}": could not find v1/PersistentVolumeClaim "{namespace}/{name}"')
            if is_fully_bound(pvc):
                out.bound.append(pvc)
            elif self.is_delay_binding(pvc) and not pvc.volume_name:
                out.delayed.append(pvc)
            else:
                out.immediate.append(pvc)
        by_class: dict[str, list[PersistentVolume]] = {}
        for pvc in out.delayed:
            if pvc.storage_class not in by_class:
                by_class[pvc.storage_class] = self.list_pvs(pvc.storage_class)
            out.candidates[pvc.key] = claim_candidates(pvc, by_class[pvc.storage_class])
        return out

    # -- Filter ---------------------------------------------------------------------------
    def find_pod_volumes(self, claims: PodClaims, node: Node) -> tuple[PodVolumes, list[str]]:
        """The node's bindings and provisions, and the reasons it does not fit (none: it fits)."""
        volumes = PodVolumes()
        bound_ok = unbound_ok = storage_ok = pvs_found = True
        labels = node.labels
        for pvc in claims.bound:
            pv = self.get_pv(pvc.volume_name)
            if pv is None:
                pvs_found = False
                break
            if not pv.node_affinity_matches(labels):
                bound_ok = False
                break
        if claims.delayed:
            unbound_ok, storage_ok = self._unbound(claims, node, volumes)
        reasons = []
        if not bound_ok:
            reasons.append(ERR_REASON_NODE_CONFLICT)
        if not unbound_ok:
            reasons.append(ERR_REASON_BIND_CONFLICT)
        if not storage_ok:
            reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
        if not pvs_found:
            reasons.append(ERR_REASON_PV_NOT_EXIST)
        return volumes, reasons

    def _unbound(self, claims: PodClaims, node: Node, volumes: PodVolumes) -> tuple[bool, bool]:
        to_match, to_provision = [], []
        for pvc in claims.delayed:
            selected = pvc.annotations.get(ANN_SELECTED_NODE)
            if selected is not None:
                if selected != node.name:
                    return False, True  # provisioning already started for another node
                to_provision.append(pvc)
            else:
                to_match.append(pvc)
        satisfied = True
        if to_match:
            chosen: set[str] = set()
            for pvc in sorted(to_match, key=lambda c: c.request or 0):
                pv = match_on_node(claims.candidates[pvc.key], node.labels, chosen)
                if pv is None:
                    to_provision.append(pvc)
                    satisfied = False
                    continue
                chosen.add(pv.name)
                volumes.static_bindings.append((pv, pvc))
        if to_provision:
            return self._provisionable(to_provision, node, volumes)
        return satisfied, True

    def _provisionable(self, claims: list[PersistentVolumeClaim], node: Node, volumes: PodVolumes) -> tuple[bool, bool]:
        provisions = []
        for pvc in claims:
            if not pvc.storage_class:
                raise BinderError(f'no class for claim "{pvc.namespace}/{pvc.name}"')
            cls = self.index.storage_class(pvc.storage_class)
            if cls is None:
                raise BinderError(f'failed to find storage class "{pvc.storage_class}"')
            if not cls.provisioner or cls.provisioner == NOT_SUPPORTED_PROVISIONER:
                return False, True
            if cls.allowed_topologies is not None and not cls.allowed_topologies.matches(node.labels, node.name):
                return False, True
            if not self._has_capacity(cls.provisioner, pvc, cls.name, node):
                return True, False
            provisions.append(pvc)
        volumes.provisions = provisions
        return True, True

    def _has_capacity(self, provisioner: str, pvc: PersistentVolumeClaim, class_name: str, node: Node) -> bool:
        if pvc.request is None:
            return True
        driver = self.index.csi_driver(provisioner)
        if driver is None or not driver.storage_capacity:
            return True
        for capacity in self.index.capacities():
            if (capacity.storage_class == class_name and capacity.limit is not None
                    and capacity.limit >= pvc.request and capacity.node_has_access(node.labels)):
                return True
        return False

    # -- Reserve / Unreserve ----------------------------------------------------------------
    def all_bound(self, namespace: str, claim_names: list[str]) -> bool:
        for name in claim_names:
            pvc = self.get_pvc(namespace, name)
            if pvc is None or not is_fully_bound(pvc):
                return False
        return True

    def assume(self, node_name: str, volumes: PodVolumes) -> PodVolumes:
        """Assume the node's bindings; returns them as assumed (PVs pre-bound, claims annotated)."""
        out = PodVolumes()
        for pv, pvc in volumes.static_bindings:
            bound = pv
            if not is_bound_to_claim(pv, pvc) or pv.claim_ref is None or pv.claim_ref.uid != pvc.uid:
                annotations = dict(pv.annotations)
                if not is_bound_to_claim(pv, pvc):  # pre-bound by a user: not the controller's binding
                    annotations.setdefault(ANN_BOUND_BY_CONTROLLER, "yes")
                bound = replace(pv, claim_ref=ClaimRef(pvc.namespace, pvc.name, pvc.uid), annotations=annotations)
                self.pv_cache.assume(("", pv.name), bound)
            out.static_bindings.append((bound, pvc))
        for pvc in volumes.provisions:
            annotated = replace(pvc, annotations={**pvc.annotations, ANN_SELECTED_NODE: node_name})
            self.pvc_cache.assume(pvc.key, annotated)
            out.provisions.append(annotated)
        return out

    def revert(self, volumes: PodVolumes) -> None:
        for pv, _ in volumes.static_bindings:
            self.pv_cache.restore(("", pv.name))
        for pvc in volumes.provisions:
            self.pvc_cache.restore(pvc.key)
